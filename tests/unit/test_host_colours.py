"""A host keeps one colour whichever view shows it, and every colour reads on light and dark backgrounds."""
from __future__ import annotations

from widgets.host_colours import HOST_PALETTE, host_colour, host_colours


def _contrast(a: str, b: str) -> float:
    def luminance(colour: str) -> float:
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_colour_does_not_depend_on_the_order_hosts_arrive_in() -> None:
    assert host_colour("db2", ["db2", "db1", "mail"]) == host_colour("db2", ["mail", "db1", "db2"])
    assert host_colours(["b", "a"]) == host_colours(["a", "b"]) == {"a": HOST_PALETTE[0], "b": HOST_PALETTE[1]}


def test_hosts_shown_together_get_different_colours() -> None:
    names = [f"host{i}" for i in range(len(HOST_PALETTE))]
    assert len({host_colour(name, names) for name in names}) == len(names)


def test_a_host_not_in_the_list_still_gets_a_stable_palette_colour() -> None:
    assert host_colour("other", ["a"]) == host_colour("other", ["b", "c"])
    assert host_colour("other", []) in HOST_PALETTE


def test_every_colour_reads_on_white_and_on_a_dark_background() -> None:
    for colour in HOST_PALETTE:
        assert _contrast(colour, "#ffffff") >= 3.5, colour
        assert _contrast(colour, "#1e2126") >= 3.5, colour
