"""Tabs whose page is made the first time it is shown or asked for.

The main window opens on one tab; the charts of the others (each a pyqtgraph scene) would cost the
window a second or more before anyone looks at them. A lazy tab holds an empty placeholder page until
then; its page is then made and takes the placeholder's place, with the same title.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QTabWidget, QWidget


class LazyTabs:
    """Pages of a QTabWidget made on first show (the tab chosen) or on first use (page())."""

    def __init__(self, tabs: QTabWidget) -> None:
        self.tabs = tabs
        self._factories: dict[str, Callable[[], QWidget]] = {}
        self._placeholders: dict[str, QWidget] = {}
        self._pages: dict[str, QWidget] = {}
        self._built: list[Callable[[str, QWidget], None]] = []
        tabs.currentChanged.connect(self._shown)

    def add(self, key: str, title: str, factory: Callable[[], QWidget]) -> None:
        placeholder = QWidget()
        placeholder.setObjectName(f"lazyTab_{key}")
        self._factories[key] = factory
        self._placeholders[key] = placeholder
        self.tabs.addTab(placeholder, title)

    def on_built(self, callback: Callable[[str, QWidget], None]) -> None:
        """callback(key, page) once a page is made: to connect it and hand it what came meanwhile."""
        self._built.append(callback)

    def is_built(self, key: str) -> bool:
        return key in self._pages

    def page(self, key: str) -> QWidget:
        """The tab's page, made now if it was not yet."""
        if key not in self._pages:
            self._build(key)
        return self._pages[key]

    def _shown(self, index: int) -> None:
        widget = self.tabs.widget(index)
        for key, placeholder in list(self._placeholders.items()):
            if placeholder is widget:
                self._build(key)

    def _build(self, key: str) -> None:
        page = self._factories.pop(key)()
        self._pages[key] = page
        placeholder = self._placeholders.pop(key)
        index = self.tabs.indexOf(placeholder)
        current = self.tabs.currentIndex()
        # the swap itself is no change of tab for the window's listeners: the same tab stays chosen
        blocked = self.tabs.blockSignals(True)
        try:
            self.tabs.insertTab(index, page, self.tabs.tabText(index))
            self.tabs.setTabToolTip(index, self.tabs.tabToolTip(index + 1))
            self.tabs.removeTab(index + 1)
            self.tabs.setCurrentIndex(current)
        finally:
            self.tabs.blockSignals(blocked)
        placeholder.deleteLater()
        for callback in self._built:
            callback(key, page)
