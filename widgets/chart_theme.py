"""Chart colours taken from the widget's palette, so the live charts follow the light or dark theme."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette

# the light theme's chart colours, also the muted grey of hints beside the charts; here, not with the plot
# items, so a view that only needs a colour does not load the charting library
BACKGROUND = "#ffffff"
INK = "#1f2933"
MUTED = "#6b7785"
GRID = "#eceef1"


@dataclass(frozen=True)
class ChartColours:
    background: str
    ink: str          # titles, marker labels
    muted: str        # axes, legend names
    grid: str         # horizontal grid lines
    dark: bool

    def companion(self, colour: str) -> str:
        """A second shade of a host's colour (w/s beside r/s): towards the text colour, so it keeps its
        contrast with the background in both themes. The live charts also dash it, so the shade stays
        close enough to the host's colour to read as that host."""
        return mix(colour, self.ink, 0.3)


def mix(a: str, b: str, share_of_b: float) -> str:
    ca, cb = QColor(a), QColor(b)
    share = min(1.0, max(0.0, share_of_b))
    parts = [round(x * (1 - share) + y * share) for x, y in zip(ca.getRgb()[:3], cb.getRgb()[:3], strict=True)]
    return QColor(*parts).name()


def chart_colours(palette: QPalette) -> ChartColours:
    background = palette.color(QPalette.ColorRole.Base).name()
    ink = palette.color(QPalette.ColorRole.Text).name()
    dark = QColor(background).lightnessF() < 0.5
    return ChartColours(background=background, ink=ink, muted=mix(ink, background, 0.4),
                        grid=mix(ink, background, 0.88), dark=dark)
