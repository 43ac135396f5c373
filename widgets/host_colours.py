"""One colour per host, the same in every view: live Grid, Overlay and Overview, Graphs, Compare, the
results and the PDF report.

Qt-free (plain "#rrggbb" strings) so the report can use it too. A host the workbench knows (its
inventory, set_known_hosts) keeps the palette slot of its place in the sorted inventory, whichever
other hosts a view shows with it; a view's other names (hosts not in the inventory, a host's second
run) take the colours left free, so no two names of one view share a colour while the palette lasts.
Without an inventory the names shown are coloured by their sorted order.

Every colour has a contrast of at least 3.5:1 against white and against a dark background
(#1e2126), so curves read in the light and the dark theme alike.
"""
from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence

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


_known: tuple[str, ...] = ()


def set_known_hosts(names: Iterable[str]) -> None:
    """The hosts the workbench knows: each keeps its palette slot in every view."""
    global _known
    _known = tuple(host_order(names))


def known_hosts() -> tuple[str, ...]:
    return _known


def colours_by_host(hosts: Mapping[str, str], known: Iterable[str] | None = None) -> dict[str, str]:
    """{name shown: colour} for names that stand for hosts ({"db-beta #5": "db-beta"}): a name gets its
    host's colour when its host is known and no other name of the view took that colour first."""
    inventory = host_order(known) if known is not None else list(_known)
    slots = {host: HOST_PALETTE[index % len(HOST_PALETTE)] for index, host in enumerate(inventory)}
    order = host_order(hosts)
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in order:
        colour = slots.get(hosts[name])
        if colour is not None and colour not in used:
            out[name] = colour
            used.add(colour)
    free = [colour for colour in HOST_PALETTE if colour not in used]
    for index, name in enumerate(n for n in order if n not in out):
        out[name] = free[index] if index < len(free) else HOST_PALETTE[order.index(name) % len(HOST_PALETTE)]
    return out


def host_colours(names: Iterable[str], known: Iterable[str] | None = None) -> dict[str, str]:
    """Every host's colour at once: {name: "#rrggbb"}."""
    return colours_by_host({name: name for name in names}, known)


def host_colour(name: str, names: Sequence[str], known: Iterable[str] | None = None) -> str:
    """The colour of host `name` among the hosts `names` shown together.

    A name missing from `names` still gets a stable colour (its inventory slot, else a hash of the name)."""
    if name in names:
        return host_colours(names, known)[name]
    inventory = host_order(known) if known is not None else list(_known)
    if name in inventory:
        return HOST_PALETTE[inventory.index(name) % len(HOST_PALETTE)]
    return HOST_PALETTE[zlib.crc32(name.encode("utf-8")) % len(HOST_PALETTE)]
