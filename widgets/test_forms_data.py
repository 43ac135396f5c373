"""What the run dialog reads of a test, and what it hands back: the application passes the tests (its
catalogue's records satisfy these Protocols) and a validate callable; the dialog emits a RunChoice.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class ParamView(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def default(self) -> Any: ...
    @property
    def low(self) -> float | None: ...
    @property
    def high(self) -> float | None: ...


class PresetView(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def values(self) -> Mapping[str, Any]: ...
    @property
    def summary(self) -> str: ...


class JobView(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def presets(self) -> Sequence[str]: ...
    @property
    def help(self) -> str: ...


class TestForm(Protocol):
    """One test the dialog offers: presets exactly when the agent takes one."""

    @property
    def name(self) -> str: ...
    @property
    def menu_label(self) -> str: ...
    @property
    def presets(self) -> Sequence[PresetView]: ...
    @property
    def jobs(self) -> Sequence[JobView]: ...
    def param(self, name: str) -> ParamView: ...


@dataclass(frozen=True)
class RunChoice:
    """What Start asks for: one test with its parameters, on each of the hosts."""

    test: str
    params: dict[str, Any]
    hosts: list[str] = field(default_factory=list)
    repeat: int = 1              # runs per host; with until_stable, the most runs
    until_stable: bool = False   # run again until the test's figure is stable (at least 3 runs)
