"""Which hosts are doing worst: the order of the many-hosts overview and the hosts the overlay shows.

Qt-free. A host's state comes first (failed, then reconnecting, then working, then finished), then
how busy it is: the larger of its mean %util and CPU busy over the last RANK_SECONDS.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np

from widgets.run_data import RunState

RANK_SECONDS = 10.0      # the span the ranking averages over


class Buffer(Protocol):
    """What a sparkline reads of a ring buffer."""

    version: int

    @property
    def last_t(self) -> float | None: ...
    @property
    def last_value(self) -> float | None: ...
    def window(self, t_from: float, t_to: float | None = None) -> tuple[np.ndarray, np.ndarray]: ...


class HostSource(Protocol):
    """What the overview reads of a host's live data (widgets.host_series.HostSeries fits)."""

    name: str
    state: str
    samples: int

    def buffer(self, key: str, device: str | None = None) -> Buffer: ...
    def status_text(self) -> str: ...


# failed first, then the ones that lost their connection, then those still working; the finished last
_STATE_RANK = {RunState.ERROR: 0, RunState.FAILED: 0, RunState.INTERRUPTED: 0, RunState.RECONNECTING: 1,
               RunState.RUNNING: 2, "": 2, RunState.CONNECTING: 3, RunState.CANCELLED: 4, RunState.STOPPED: 4,
               RunState.DONE: 5}


def state_rank(state: str) -> int:
    return _STATE_RANK.get(state, 2)


def recent_mean(buffer: Buffer, seconds: float = RANK_SECONDS) -> float:
    """Mean of the newest `seconds` of a buffer (0 when empty)."""
    last = buffer.last_t
    if last is None:
        return 0.0
    _t, values = buffer.window(last - seconds)
    return float(np.mean(values)) if len(values) else 0.0


def stress(source: HostSource) -> float:
    """How busy a host is now: the larger of its recent mean %util and CPU busy (both 0-100)."""
    return max(recent_mean(source.buffer("disk.util")), recent_mean(source.buffer("cpu.busy")))


def worst_first(sources: Iterable[HostSource]) -> list[str]:
    """Host names, the worst first: by state (failed, reconnecting, working, finished), then by stress."""
    ranked = sorted(sources, key=lambda s: (state_rank(s.state), -stress(s), s.name.lower()))
    return [source.name for source in ranked]
