"""One colour per host, the same in every view: live Overlay and Grid, Compare and the PDF report.

Qt-free (plain "#rrggbb" strings) so the report can use it too. A host's colour is picked by its
position in the sorted list of the hosts shown together, so it does not depend on the order the
hosts were added or connected in: hand every view the same names and it gets the same colours.

Every colour has a contrast of at least 3.5:1 against white and against a dark background
(#1e2126), so curves read in the light and the dark theme alike.
"""
from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence

HOST_PALETTE: tuple[str, ...] = (
    "#3b7dd8",   # blue
    "#c76a12",   # orange
    "#23955a",   # green
    "#d9483b",   # red
    "#9467d0",   # purple
    "#0f95a8",   # teal
    "#c9509f",   # pink
    "#8f8a14",   # olive
    "#a0703a",   # brown
    "#7d7d7d",   # grey
)


def host_order(names: Iterable[str]) -> list[str]:
    """The hosts in the order their colours are given: sorted, each once."""
    return sorted(set(names), key=lambda name: (name.casefold(), name))


def host_colour(name: str, names: Sequence[str]) -> str:
    """The colour of host `name` among the hosts `names` shown together.

    A name missing from `names` still gets a stable colour (from a hash of the name)."""
    order = host_order(names)
    if name in order:
        return HOST_PALETTE[order.index(name) % len(HOST_PALETTE)]
    return HOST_PALETTE[zlib.crc32(name.encode("utf-8")) % len(HOST_PALETTE)]


def host_colours(names: Iterable[str]) -> dict[str, str]:
    """Every host's colour at once: {name: "#rrggbb"}."""
    order = host_order(names)
    return {name: HOST_PALETTE[index % len(HOST_PALETTE)] for index, name in enumerate(order)}
