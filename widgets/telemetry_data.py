"""What the live views read of one telemetry interval.

The engine owns the sample type; this Protocol names the fields the charts read (read-only
properties, so a frozen or a mutable dataclass fits), with sysstat's key names inside the mappings.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol


class TelemetryPoint(Protocol):
    @property
    def t(self) -> float: ...            # host epoch seconds at the end of the interval
    @property
    def interval(self) -> float: ...     # seconds the interval lasted
    @property
    def cpu(self) -> Mapping[str, float]: ...
    @property
    def load(self) -> tuple[float, float, float]: ...
    @property
    def tasks(self) -> Mapping[str, int]: ...
    @property
    def disks(self) -> Mapping[str, Mapping[str, float]]: ...
    @property
    def mem(self) -> Mapping[str, float]: ...
    @property
    def psi(self) -> Mapping[str, float]: ...
