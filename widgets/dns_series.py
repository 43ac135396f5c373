"""A dns run's live seconds as ring buffers (Qt-free): what widgets.dns_live draws.

Each "dns_tick" event (one per resolver, pass and second) becomes points at x (the end of that second on the
host's time axis) in the buffers "<figure>|<resolver>|<pass>" for the figures qps, p50, p99 and timeouts. A
figure the tick leaves null (dnsperf's maximum-throughput mode says no latencies, no timeouts) adds no point.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from widgets.ring_buffer import RingBuffer

TICK = "dns_tick"
FIGURES = ("qps", "p50", "p99", "timeouts")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def key(figure: str, resolver: str, pass_name: str) -> str:
    return f"{figure}|{resolver}|{pass_name}"


class DnsSeries:
    """One host's dns ticks: a buffer per figure, resolver and pass; resolvers and lanes in the order they came."""

    def __init__(self, capacity: int | None = None) -> None:
        self._capacity = capacity
        self.buffers: dict[str, RingBuffer] = {}
        self.resolvers: list[str] = []                 # as they came
        self.listed: list[str] = []                    # all the run's resolvers, as its ticks name them
        self.lanes: list[tuple[str, str]] = []         # (resolver, pass) as they came
        self.last: dict[tuple[str, str], dict[str, float | None]] = {}   # each lane's newest second
        self.timeouts: dict[tuple[str, str], float] = {}                  # each lane's timeouts so far
        self.ticks = 0
        self.version = 0                               # grows when a lane or a figure first appears

    def buffer(self, name: str) -> RingBuffer:
        if name not in self.buffers:
            self.buffers[name] = RingBuffer(self._capacity) if self._capacity else RingBuffer()
        return self.buffers[name]

    @property
    def active(self) -> bool:
        return self.ticks > 0

    def add_tick(self, event: Mapping[str, Any], x: float) -> None:
        """One second of one resolver's pass, drawn at x (its end on the host's time axis)."""
        resolver = str(event.get("resolver") or "?")
        pass_name = str(event.get("pass") or "")
        lane = (resolver, pass_name)
        if resolver not in self.resolvers:
            self.resolvers.append(resolver)
        listed = event.get("resolvers")
        if not self.listed and isinstance(listed, list):
            self.listed = [str(name) for name in listed]
        if lane not in self.lanes:
            self.lanes.append(lane)
            self.version += 1
        lat = event.get("lat_ms") if isinstance(event.get("lat_ms"), Mapping) else {}
        qps = _number(event.get("qps"))
        if qps is None:
            qps = _number(event.get("answered"))
        values = {"qps": qps, "p50": _number(lat.get("p50")), "p99": _number(lat.get("p99")),
                  "timeouts": _number(event.get("timeouts"))}
        for figure, value in values.items():
            if value is None:
                continue
            buffer = self.buffer(key(figure, resolver, pass_name))
            if not len(buffer):
                self.version += 1      # its first point: the panel adds the curve
            buffer.append(x, value)
        if values["timeouts"] is not None:
            self.timeouts[lane] = self.timeouts.get(lane, 0.0) + values["timeouts"]
        self.last[lane] = values
        self.ticks += 1

    def has(self, figure: str, resolver: str, pass_name: str) -> bool:
        buffer = self.buffers.get(key(figure, resolver, pass_name))
        return buffer is not None and len(buffer) > 0

    def now_words(self, lane: tuple[str, str]) -> list[str]:
        """A lane's newest second, most telling first: "812 q/s", "p50 1.2 ms", "p99 9.8 ms", "3 timeouts so far"."""
        last = self.last.get(lane, {})
        words = [f"{_plain(last.get('qps'))} q/s"]
        for figure in ("p50", "p99"):
            value = last.get(figure)
            if value is not None:
                words.append(f"{figure} {_ms(value)} ms")
        if lane in self.timeouts:
            count = self.timeouts[lane]
            words.append(f"{count:,.0f} timeout{'s' if count != 1 else ''} so far")
        return words

    def now_text_of(self, lane: tuple[str, str]) -> str:
        """ "cold: 812 q/s, p50 1.2 ms, p99 9.8 ms, 3 timeouts so far"."""
        words = ", ".join(self.now_words(lane))
        return f"{lane[1]}: {words}" if lane[1] else words

def _plain(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _ms(value: float) -> str:
    return f"{value:,.2f}" if value < 10 else f"{value:,.1f}" if value < 100 else f"{value:,.0f}"
