"""Adding, editing, removing and importing hosts from the main window (a part of MainWindow).

The editor and the import dialog are window-modal (open(), not exec()); the store is written in the
window's workers, then the host list is loaded again.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt

from app.engine.host_prices import host_prices, set_host_price
from app.engine.hosts_map import connection_problem, tag_problem
from app.gui.host_actions import AUTH_CHOICES, FactsFlow
from app.gui.import_dialog import ImportDialog
from app.gui.workers import Worker
from app.workbench import Workbench
from remote.hostspec import LOCAL_HOST_NAME, HostSpec
from storage.records import HostPrice
from widgets.host_data import HostFields
from widgets.host_editor import HostEditor
from widgets.host_list import HostList
from widgets.price_group import PriceFields


class HostInventory:
    """Mixed into MainWindow: what it uses of the window is declared here."""

    bench: Workbench
    flow: FactsFlow
    host_list: HostList
    host_editor: HostEditor | None
    import_dialog: ImportDialog | None
    _aliases: list[str]
    _facts: dict[str, tuple[Any, dict]]
    _select_after_refresh: str | None

    if TYPE_CHECKING:   # MainWindow's own
        def show_status(self, text: str) -> None: ...
        def refresh(self) -> None: ...
        def confirm(self, title: str, text: str) -> bool: ...
        def run_job(self, fn: Callable[..., Any], *args: Any, on_done: Callable[[Any], None] | None = None,
                    what: str = "", key: str | None = None) -> Worker: ...

    def add_host(self) -> HostEditor:
        return self._open_editor(None)

    def edit_host(self) -> HostEditor | None:
        name = self.host_list.current_host()
        spec = self.host_list.spec(name) if name else None
        if spec is None or spec.is_local:
            return None
        return self._open_editor(spec)

    def _open_editor(self, spec: HostSpec | None) -> HostEditor:
        names = self.host_list.host_names()
        # the editor has its own record of a host: the same fields as HostSpec
        price = host_prices(self.bench, [spec.name]).get(spec.name) if spec else None   # one row by name
        editor = HostEditor(existing_names=set(names), ssh_aliases=self._aliases, jump_hosts=names,
                            spec=HostFields(**asdict(spec)) if spec else None, parent=self,
                            auth_choices=AUTH_CHOICES, reserved_names={LOCAL_HOST_NAME},
                            price=PriceFields(**asdict(price)) if price else None, tag_problem=tag_problem,
                            connection_problem=connection_problem)
        editor.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        editor.accepted.connect(lambda: self._save_host(spec.name if spec else None,
                                                        HostSpec(**asdict(editor.fields())), editor.price()))
        editor.destroyed.connect(lambda: setattr(self, "host_editor", None))
        self.host_editor = editor
        editor.open()   # window-modal, not a nested event loop
        return editor

    def _save_host(self, old_name: str | None, spec: HostSpec, price: PriceFields | None = None) -> None:
        """Store the host and its price (None: none, a stored one is forgotten)."""
        bench = self.bench
        record = HostPrice(**asdict(price)) if price else None
        if old_name is None:
            def job() -> str:
                bench.add_host(spec)
                if record is not None:
                    set_host_price(bench, spec.name, record)
                return spec.name
            what = f"Adding {spec.name}"
        else:
            def job() -> str:
                bench.update_host(old_name, spec)
                set_host_price(bench, spec.name, record)
                return spec.name
            what = f"Saving {spec.name}"
            if old_name != spec.name:
                self._facts.pop(old_name, None)
        self.run_job(job, on_done=self._host_saved, what=what)

    def _host_saved(self, name: str) -> None:
        self.show_status(f"{name}: saved")
        self._facts.pop(name, None)
        self._select_after_refresh = name
        self.refresh()

    def remove_host(self) -> None:
        name = self.host_list.current_host()
        if not name or name == LOCAL_HOST_NAME or self.flow.is_busy(name):
            return
        if not self.confirm(f"Remove {name}?",
                            f"Remove “{name}” from the host list? Its stored runs are kept."):
            return
        bench = self.bench
        self.run_job(lambda: bench.remove_host(name) or name, on_done=self._host_removed, what=f"Removing {name}")

    def _host_removed(self, name: str) -> None:
        self._facts.pop(name, None)
        self.show_status(f"{name}: removed")
        self.refresh()

    def import_hosts(self) -> ImportDialog:
        dialog = ImportDialog(self._aliases, set(self.host_list.host_names()), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._import(dialog.chosen()))
        dialog.destroyed.connect(lambda: setattr(self, "import_dialog", None))
        self.import_dialog = dialog
        dialog.open()
        return dialog

    def _import(self, aliases: list[str]) -> None:
        if not aliases:
            return
        bench = self.bench

        def job() -> list[str]:
            added = []
            for alias in aliases:
                bench.add_host(HostSpec(name=alias))
                added.append(alias)
            return added

        self.run_job(job, on_done=lambda added: (self.show_status(f"Imported {len(added)} host(s) from "
                                                                  "~/.ssh/config"), self.refresh()),
                     what="Importing hosts")
