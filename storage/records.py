"""Plain, immutable data that crosses threads; ORM objects never leave a session."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, Protocol


class RunStatus(str, Enum):
    """A stored run's status; equal to its stored text, and printed as it (str, format and JSON)."""

    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"   # its workbench went away and the host no longer had the run to collect
    # the link to its host was given up while the run went on there: collected later (runs attach, the next
    # start of the window or the command line, the open window) until the host's deadline; not final
    LOST_LINK = "lost link"

    # enum.StrEnum does this from Python 3.11 on; Benchbay also runs on 3.10
    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


# a tuple, not a set: messages list them in this order
FINAL_STATUSES = (RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.INTERRUPTED)


# The workbench's own computer: never stored in the inventory, so the name is not free to take.
RESERVED_HOST_NAME = "local"


PRICE_MONTHLY = "month"   # a rent: per month
PRICE_ONCE = "once"       # a purchase: once
PRICE_PERIODS = (PRICE_MONTHLY, PRICE_ONCE)


@dataclass(frozen=True)
class HostPrice:
    """What a host costs, as the user found it: a comparison shows figures per price unit with it."""

    amount: float                 # > 0
    currency: str                 # "EUR", "USD" ... as the user writes it, at most 10 characters
    period: str = PRICE_MONTHLY   # one of PRICE_PERIODS
    date: str = ""                # when the price was seen, ISO "YYYY-MM-DD"; "" = not said
    source: str = ""              # where it was seen: "Hetzner price list", a URL ...


@dataclass(frozen=True)
class HostRecord:
    """A host of the inventory as stored; the workbench turns it into what a connection needs."""

    name: str
    address: str = ""
    port: int | None = None
    user: str = ""
    auth: str = "auto"              # the workbench knows the methods; the store keeps the word
    key_path: str = ""
    jump: str = ""
    keyring: bool = False
    test_dir: str = ""
    run_dir: str = ""
    notes: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)
    # last, with a default: read from the store; add() stores it, update() keeps the stored one (set_price changes it)
    price: HostPrice | None = None


@dataclass(frozen=True)
class RunRecord:
    id: int
    host_name: str
    test: str
    status: str
    parameters: dict[str, Any]
    started_at: datetime
    finished_at: datetime | None
    agent_version: str
    engine: str
    engine_version: str
    error: str
    tags: tuple[str, ...]
    notes: str
    uid: str = ""   # 32 hex digits, the same in every store the run is exported to; last so old call sites work
    repeat_group: str = ""            # the runs repeating one test on one host share it; "" = not repeated
    repeat_index: int | None = None   # 1, 2 ... within the group


@dataclass(frozen=True)
class RunOwner:
    """Which workbench process drives a running run: it holds an flock on `lock` while it does."""

    machine: str   # socket.gethostname() of the workbench
    pid: int
    lock: str      # the lock file's path on that machine


@dataclass(frozen=True)
class RemoteRunState:
    """What a workbench needs to find a run again on its host after the workbench itself went away."""

    run_dir: str
    agent_pid: int | None = None
    deadline: float = 0.0          # host uptime (s) at which the host side removes the run by itself
    expected_end: float = 0.0      # host uptime (s) at which the test should be over
    interval: float = 1.0
    boot_id: str = ""              # the host's boot id when the run began: a re-attach tells a reboot by it
    # No read offsets: nothing read from the run's files is stored before the run ends, so a re-attach
    # reads events.jsonl and samples.raw again from offset 0, and no sample is stored twice or missed.


@dataclass(frozen=True)
class AttachableRun:
    """A run stored as running (or lost link), with what is known of where it runs and who drives it."""

    id: int
    uid: str
    host_name: str
    test: str
    parameters: dict[str, Any]
    started_at: datetime
    remote: RemoteRunState | None
    owner: RunOwner | None
    status: str = RunStatus.RUNNING.value   # or RunStatus.LOST_LINK


SPREAD_WITHIN_RUN = "within run"      # per-interval rates over one run's measured window
SPREAD_ACROSS_RUNS = "across runs"    # one figure per repeat of the same test on the same host
SPREAD_KINDS = (SPREAD_WITHIN_RUN, SPREAD_ACROSS_RUNS)


@dataclass(frozen=True)
class Spread:
    """How much a figure varied: statistics of its samples, in the figure's own unit.

    Within a run the samples are per-interval rates (`interval_s` long each); across runs they
    are the figures of the repeats (`interval_s` is 0).
    """

    n: int                 # how many samples (intervals or repeats)
    mean: float
    sd: float              # sample standard deviation (n - 1); 0 when n < 2
    min: float
    max: float
    p5: float
    p50: float
    p95: float
    interval_s: float = 0.0
    kind: str = SPREAD_WITHIN_RUN

    @property
    def cv_percent(self) -> float | None:
        """Coefficient of variation, % of the mean; None when the mean is 0."""
        return 100.0 * self.sd / abs(self.mean) if self.mean else None

    @property
    def sem_percent(self) -> float | None:
        """Relative standard error of the mean, %; None when it cannot be known (n < 2 or mean 0)."""
        if self.n < 2 or not self.mean:
            return None
        return 100.0 * self.sd / (self.n ** 0.5) / abs(self.mean)


@dataclass(frozen=True)
class ResultSample:
    """One measured figure, PerfKit style: (test, metric, value, unit, metadata)."""

    test: str
    metric: str
    value: float
    unit: str
    metadata: dict[str, Any] = field(default_factory=dict)
    spread: Spread | None = None   # last, with a default, so old call sites work


class SeriesInput(Protocol):
    """What the store reads of a curve it is given: any record with these fields will do."""

    @property
    def name(self) -> str: ...

    @property
    def device(self) -> str: ...

    @property
    def unit(self) -> str: ...

    @property
    def t(self) -> Sequence[float]: ...

    @property
    def values(self) -> Sequence[float]: ...


@dataclass(frozen=True)
class SeriesData:
    """A telemetry curve: sysstat-style name, device ("" = host-wide), t in seconds since run start."""

    name: str
    device: str
    unit: str
    t: list[float]
    values: list[float]


@dataclass(frozen=True)
class RunDetail:
    run: RunRecord
    facts: dict[str, Any] | None
    results: list[ResultSample]
    series_names: list[tuple[str, str]]   # (name, device), in the order they were stored


@dataclass(frozen=True)
class SavedComparison:
    """A comparison someone saved to reopen it: runs by uid, in display order."""

    id: int
    title: str
    customer: str
    author: str
    notes: str
    run_uids: tuple[str, ...]
    baseline_uid: str | None
    options: dict[str, Any]
    created_at: datetime
    updated_at: datetime
