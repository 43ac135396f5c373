"""The comparison view, made with the telemetry app can overlay."""
from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.compare.overlay import OVERLAYS
from widgets.compare_data import OverlayChoice
from widgets.compare_view import ComparisonView


def overlay_choices() -> tuple[OverlayChoice, ...]:
    return tuple(OverlayChoice(name, title, unit) for name, title, unit in OVERLAYS)


def comparison_view(parent: QWidget | None = None) -> ComparisonView:
    return ComparisonView(overlay_choices(), parent)
