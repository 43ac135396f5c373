"""Right-click menus of the host list and the runs table, and what the runs' menu does beyond the
Runs tab's buttons: export the selected runs to JSON and delete them (after asking).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu, QTabWidget, QWidget

from app.gui.runs_pane import RunsPane
from app.gui.workers import Worker
from app.workbench import Workbench
from storage.records import RunStatus


class MenuHost(Protocol):
    """What the menus use of the main window (which imports this module)."""

    bench: Workbench
    tabs: QTabWidget
    edit_action: QAction
    remove_action: QAction
    gather_action: QAction

    def show_status(self, text: str) -> None: ...
    def reload_runs(self) -> None: ...
    def confirm(self, title: str, text: str) -> bool: ...
    def run_job(self, fn: Callable[..., Any], *args: Any, on_done: Callable[[Any], None] | None = None,
                what: str = "", key: str | None = None) -> Worker: ...


def host_menu(parent: QWidget, run_action: QAction, monitor_action: QAction, window: MenuHost) -> QMenu:
    """Run test, Monitor, Gather facts, Edit, Remove: the toolbar's actions, so their state is shared."""
    menu = QMenu(parent)
    menu.setObjectName("hostMenu")
    for action in (run_action, monitor_action, window.gather_action):
        menu.addAction(action)
    menu.addSeparator()
    menu.addAction(window.edit_action)
    menu.addAction(window.remove_action)
    return menu


def runs_menu(pane: RunsPane, on_export: Callable[[list[int]], None],
              on_delete: Callable[[list[int]], None]) -> QMenu:
    """Show results, Open graphs, Replay, Compare selected, Export, Delete for the selected runs."""
    ids = pane.selected_ids()
    runs = pane.table.selected_runs()
    menu = QMenu(pane)
    menu.setObjectName("runsMenu")

    def add(text: str, enabled: bool, slot: Callable[[], None]) -> QAction:
        action = menu.addAction(text)
        action.setEnabled(enabled)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    one_finished = len(runs) == 1 and runs[0].status != RunStatus.RUNNING
    add("Show results", one_finished, lambda: pane.run_chosen.emit(ids[0]))
    add("Open graphs", bool(ids), lambda: pane.open_graphs.emit(ids))
    add("Replay", bool(ids), lambda: pane.replay.emit(ids))
    add("Compare selected", len(ids) >= 2, lambda: pane.compare.emit(ids))
    menu.addSeparator()
    add("Export to JSON…", bool(ids), lambda: on_export(ids))
    running = any(run.status == RunStatus.RUNNING for run in runs)
    delete = add("Delete…", bool(ids) and not running, lambda: on_delete(ids))
    if running:
        delete.setToolTip("A run still running cannot be deleted")
    menu.setToolTipsVisible(True)
    return menu


def _names(ids: list[int]) -> str:
    return ", ".join(f"#{i}" for i in ids[:6]) + (", …" if len(ids) > 6 else "")


class RunsMenuActions:
    """Export and delete, in the window's workers; the file and the confirmation are asked first."""

    def __init__(self, window: MenuHost, parent: QWidget) -> None:
        self.window = window
        self.parent = parent

    def ask_export(self, ids: list[int]) -> None:
        default = str(Path.home() / f"benchbay-runs-{'-'.join(str(i) for i in ids[:4])}.json")
        path, _filter = QFileDialog.getSaveFileName(self.parent, "Export the runs as JSON", default,
                                                    "JSON (*.json)")
        if path:
            self.export(ids, path if path.endswith(".json") else path + ".json")

    def export(self, ids: list[int], path: str) -> None:
        from app.gui.compare_exports import export_runs_file  # with the comparison's statistics: when used

        def done(result: tuple[str, int]) -> None:
            written, count = result
            self.window.show_status(f"Exported {count} run{'s' if count != 1 else ''} to {written}")

        self.window.run_job(export_runs_file, self.window.bench, ids, None, path, on_done=done,
                            what="Runs not exported")

    def ask_delete(self, ids: list[int]) -> None:
        many = len(ids) != 1
        if self.window.confirm(f"Delete run{'s' if many else ''} {_names(ids)}?",
                               f"Delete run{'s' if many else ''} {_names(ids)} with {'their' if many else 'its'} "
                               "results and graphs? This cannot be undone; export them first to keep a copy."):
            self.delete(ids)

    def delete(self, ids: list[int]) -> None:
        bench = self.window.bench

        def job() -> int:
            return sum(1 for run_id in ids if bench.delete_run(run_id))

        def done(count: int) -> None:
            self.window.show_status(f"Deleted {count} run{'s' if count != 1 else ''}")
            self.window.reload_runs()

        self.window.run_job(job, on_done=done, what="Runs not deleted")


def popup(menu: QMenu, widget: QWidget, pos: QPoint) -> None:
    """Show a menu at a point of a scrolled view (its viewport's coordinates); it deletes itself."""
    menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    viewport = getattr(widget, "viewport", None)
    origin = viewport() if viewport is not None else widget
    menu.popup(origin.mapToGlobal(pos))
