"""Light and dark themes on the Fusion style, following the desktop's colour scheme.

The stylesheet is written in the light colours; the dark theme swaps each of them for its
counterpart, so the look is described once. Widgets that draw their own colours read the palette
(is_dark) instead of fixed values.
"""
from __future__ import annotations

import re

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

LIGHT = "light"
DARK = "dark"

# the stylesheet's light colours -> the dark theme's (surface, base, lines, ink, muted, accent...)
DARK_SWAPS = {
    "#f6f7f9": "#1e2227",   # window surface
    "#ffffff": "#262b31",   # base: lists, tables, fields, buttons
    "#f8f9fb": "#2b3037",   # alternate rows
    "#1f2933": "#e3e7ec",   # ink
    "#4a5561": "#c3cad3",   # header and status text
    "#6b7785": "#98a3b0",   # muted
    "#a3abb5": "#6e7883",   # disabled
    "#d9dee4": "#3a414a",   # lines
    "#e3e7ec": "#363d45",
    "#eef0f3": "#30363e",
    "#f1f3f6": "#2e343b",   # header sections
    "#f4f5f7": "#2a2f35",
    "#dde1e6": "#3a414a",
    "#c9d0d8": "#4a525c",   # field borders
    "#eef3fa": "#2f3a48",   # hover
    "#f1f5fb": "#2c3540",
    "#c9d8ec": "#44618a",
    "#dde8f6": "#34465e",
    "#9db8dc": "#5a7fb0",
    "#2f6db5": "#4d8ad6",   # accent: lighter so it reads on dark
}

_PALETTES = {
    LIGHT: {"window": "#f6f7f9", "base": "#ffffff", "alternate": "#f8f9fb", "text": "#1f2933",
            "button": "#ffffff", "highlight": "#2f6db5", "highlighted_text": "#ffffff", "muted": "#6b7785",
            "disabled": "#a3abb5", "link": "#2f6db5", "tooltip": "#ffffdc", "tooltip_text": "#1f2933",
            "mid": "#c9d0d8", "dark": "#8a949f", "light": "#ffffff"},
    DARK: {"window": "#1e2227", "base": "#262b31", "alternate": "#2b3037", "text": "#e3e7ec",
           "button": "#2c3138", "highlight": "#4d8ad6", "highlighted_text": "#ffffff", "muted": "#98a3b0",
           "disabled": "#6e7883", "link": "#7fb0ee", "tooltip": "#2c3138", "tooltip_text": "#e3e7ec",
           "mid": "#4a525c", "dark": "#15181c", "light": "#3a414a"},
}


def palette_for(scheme: str) -> QPalette:
    """A complete Fusion palette for the light or the dark theme."""
    c = {key: QColor(value) for key, value in _PALETTES[DARK if scheme == DARK else LIGHT].items()}
    role = QPalette.ColorRole
    palette = QPalette()
    for r, colour in ((role.Window, c["window"]), (role.WindowText, c["text"]), (role.Base, c["base"]),
                      (role.AlternateBase, c["alternate"]), (role.Text, c["text"]), (role.Button, c["button"]),
                      (role.ButtonText, c["text"]), (role.BrightText, QColor("#ff5a4f")),
                      (role.Highlight, c["highlight"]), (role.HighlightedText, c["highlighted_text"]),
                      (role.Link, c["link"]), (role.LinkVisited, c["link"]), (role.ToolTipBase, c["tooltip"]),
                      (role.ToolTipText, c["tooltip_text"]), (role.PlaceholderText, c["muted"]),
                      (role.Mid, c["mid"]), (role.Dark, c["dark"]), (role.Light, c["light"]),
                      (role.Midlight, c["mid"]), (role.Shadow, c["dark"])):
        palette.setColor(r, colour)
    disabled = QPalette.ColorGroup.Disabled
    for r in (role.WindowText, role.Text, role.ButtonText):
        palette.setColor(disabled, r, c["disabled"])
    return palette


def stylesheet_for(light_qss: str, scheme: str) -> str:
    """The stylesheet in the scheme's colours (the light one as written)."""
    if scheme != DARK:
        return light_qss
    pattern = re.compile("|".join(re.escape(k) for k in DARK_SWAPS), re.IGNORECASE)
    return pattern.sub(lambda m: DARK_SWAPS[m.group(0).lower()], light_qss)


def desktop_scheme() -> str:
    """What the desktop asks for (Qt 6.5+ reads it from the platform); light when it does not say."""
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is not None and scheme() == Qt.ColorScheme.Dark:
        return DARK
    return LIGHT


def is_dark(widget: QWidget | None = None) -> bool:
    """Whether the widget (or the application) is drawn on a dark base."""
    palette = widget.palette() if widget is not None else QApplication.palette()
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


class ThemeFollower(QObject):
    """Applies a theme now and again whenever the desktop's colour scheme changes.

    A forced scheme (BENCHBAY_THEME=light|dark, or the constructor's argument) wins over the desktop.
    """

    def __init__(self, app: QApplication, light_qss: str, forced: str | None = None) -> None:
        super().__init__(app)
        self._app = app
        self._qss = light_qss
        self._forced = forced if forced in (LIGHT, DARK) else None
        self.scheme = ""
        hints = QGuiApplication.styleHints()
        changed = getattr(hints, "colorSchemeChanged", None)
        if changed is not None:
            changed.connect(lambda _scheme: self.apply())
        self.apply()

    def apply(self, scheme: str | None = None) -> str:
        """Apply the given scheme, or the forced one, or the desktop's; the scheme applied."""
        chosen = scheme or self._forced or desktop_scheme()
        if chosen == self.scheme:
            return chosen
        self.scheme = chosen
        self._app.setPalette(palette_for(chosen))
        self._app.setStyleSheet(stylesheet_for(self._qss, chosen))
        return chosen
