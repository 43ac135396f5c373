"""A host's facts in the main window: gathered on demand (each host in its own worker), looked up in the store
once per host, shown in the Facts tab as the selection moves (a part of MainWindow)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.gui.host_actions import FactsFlow
from app.workbench import Workbench
from widgets.facts_view import FactsView
from widgets.host_list import STATUS_ERROR, HostList

if TYPE_CHECKING:
    from collections.abc import Callable

    from app.gui.workers import Worker


class FactsShown:
    """Mixed into MainWindow: what it uses of the window is declared here."""

    bench: Workbench
    flow: FactsFlow
    host_list: HostList
    facts_view: FactsView
    _facts: dict[str, tuple[Any, dict]]       # host -> (collected_at, facts)
    _facts_loaded: set[str]                   # hosts whose stored facts were looked up

    if TYPE_CHECKING:   # MainWindow's own
        def show_status(self, text: str) -> None: ...
        def reload_runs(self) -> None: ...
        def _update_actions(self) -> None: ...
        def run_job(self, fn: Callable[..., Any], *args: Any, on_done: Callable[[Any], None] | None = None,
                    what: str = "", key: str | None = None) -> Worker: ...

    def gather_facts(self, name: str | None = None) -> bool:
        """Gather the facts of `name`, else of every selected host (each in its own worker)."""
        names = [name] if name else self.host_list.selected_hosts()
        started = [host for host in names if self.flow.gather(host)]
        if len(started) > 1:
            self.show_status(f"Gathering facts of {len(started)} hosts: {', '.join(started)}")
        self._update_actions()
        return bool(started)

    def _on_host_state(self, name: str, status: str, message: str) -> None:
        self.host_list.set_status(name, status, message)
        self._update_actions()
        if status == STATUS_ERROR and name == self.host_list.current_host() and name not in self._facts:
            self.facts_view.show_message(name, f"Could not gather facts: {message}")

    def _on_facts(self, outcome: Any) -> None:
        facts = outcome.facts
        self._facts[outcome.host] = (facts.get("collected_at"), facts)
        if self.host_list.current_host() == outcome.host:
            self._show_facts(outcome.host)
        self.reload_runs()

    def _on_current_host(self, name: str) -> None:
        self._update_actions()
        if name:
            self._show_facts(name)
        else:
            self.facts_view.show_message("", "Select a host.")

    def _show_facts(self, name: str) -> None:
        if name in self._facts:
            when, facts = self._facts[name]
            self.facts_view.set_facts(name, facts, when)
            return
        if name in self._facts_loaded:
            self._show_no_facts(name)
            return
        self.facts_view.show_message(name, "Loading stored facts…")
        bench = self.bench
        self.run_job(lambda: (name, bench.latest_facts_taken(name)), on_done=self._on_stored_facts,
                     what=f"Loading facts of {name}")

    def _on_stored_facts(self, data: tuple[str, Any]) -> None:
        name, found = data
        self._facts_loaded.add(name)
        if found is not None and name not in self._facts:
            self._facts[name] = found
        if self.host_list.current_host() == name:
            if name in self._facts:
                self._show_facts(name)
            else:
                self._show_no_facts(name)

    def _show_no_facts(self, name: str) -> None:
        if self.flow.is_busy(name):
            self.facts_view.show_message(name, "Gathering facts…")
        else:
            self.facts_view.show_message(
                name, "No facts stored for this host yet.\nClick “Gather facts” (or double-click the host).")
