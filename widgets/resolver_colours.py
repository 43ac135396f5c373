"""One colour per resolver, the same in the live charts, the Compare tab's latency distribution and the PDF.

A resolver's colour comes from its own name ("10.0.0.2:53"), not from the order resolvers arrived in or a
host's place in the inventory: the palette slot of a hash of the name. Two names of one view whose slots
meet: the one already coloured (live: the one that came first) keeps it, then the one whose name sorts first;
the other takes the next free slot, so no two lines of a view share a colour while the palette lasts.

Qt-free ("#rrggbb" strings): the report uses it too.
"""
from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping

from widgets.host_colours import HOST_PALETTE, host_order

# the host palette without its grey, which would read as the charts' muted ink
PALETTE = tuple(colour for colour in HOST_PALETTE if colour != "#7d7d7d")


def preferred_slot(name: str) -> int:
    return zlib.crc32(name.encode("utf-8")) % len(PALETTE)


def resolver_colours(names: Iterable[str], kept: Mapping[str, str] | None = None) -> dict[str, str]:
    """{name: "#rrggbb"} for the names of one view; kept: colours already on screen, which stay."""
    out = {name: colour for name, colour in (kept or {}).items()}
    used = set(out.values())
    for name in host_order(n for n in names if n not in out):
        slot = preferred_slot(name)
        for step in range(len(PALETTE)):
            colour = PALETTE[(slot + step) % len(PALETTE)]
            if colour not in used:
                break
        else:   # more names than colours: the name's own slot again
            colour = PALETTE[slot]
        out[name] = colour
        used.add(colour)
    return out
