"""What a test is, as typed records: its parameters, presets, jobs and metrics, and their labels.

Built once from the agent's own description of each test (remote/agent/benches.describe) and the
human side (app/catalogue/presentation.py) by app/catalogue/build.py. Qt-free; the run dialog, the
command line, the summaries, the comparison and the report read these records.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

HIGHER, LOWER = "higher", "lower"   # which way a metric is better


@dataclass(frozen=True)
class ParamSpec:
    """One parameter the agent's validate() takes, with its limits (None: no limit)."""

    name: str
    kind: str                 # int | float | bool | size | text | path | choice | list | secret
    default: Any = None       # None: the preset's value, or the host decides
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""

    @property
    def secret(self) -> bool:
        """Sent to the agent but never shown, logged or stored."""
        return self.kind == "secret"


@dataclass(frozen=True)
class Preset:
    name: str
    values: Mapping[str, Any]   # parameter -> value, as the agent fills them in
    summary: str = ""           # what a user gets from it, in a few words


@dataclass(frozen=True)
class JobSpec:
    """One job a user can tick (a disk test): what the agent calls it and what a reader calls it."""

    key: str                  # the value in the "tests" parameter: "seqread"
    job: str                  # the job (metric prefix) it runs: "seqread_1m", or a pattern for a series
    label: str
    presets: tuple[str, ...]  # the presets that run it
    needs_root: bool = False
    series: bool = False      # several jobs, one per point (the concurrency or read-ahead sweep)
    help: str = ""


@dataclass(frozen=True)
class MetricSpec:
    """A figure the comparison puts side by side: which result it reads and which way is better."""

    key: str            # "disk:randread_4k.iops": test, a colon, the stored metric name
    test: str
    label: str          # what a reader calls it, without the unit
    unit: str
    better: str         # HIGHER or LOWER
    headline: bool = False   # the figure that decides "the winner" of its test in the summary
    derived: bool = False    # computed from several results (the best point of the sweep), not stored as is
    qualifies: str = ""      # a consistency figure: the key of the figure it stands beside

    @property
    def metric(self) -> str:
        return self.key.partition(":")[2]

    @property
    def higher_is_better(self) -> bool:
        return self.better == HIGHER

    def header(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label


@dataclass(frozen=True)
class TestKind:
    """One test: what the run dialog offers, the command line accepts and the agent validates."""

    __test__ = False    # not a pytest test class

    name: str
    label: str                           # in tables: "Restore"
    menu_label: str                      # in the run dialog: "Restore (PostgreSQL)"
    params: tuple[ParamSpec, ...]
    presets: tuple[Preset, ...]
    jobs: tuple[JobSpec, ...]
    results: tuple[tuple[str, str], ...]   # the agent's metric names (patterns) and units
    metrics: tuple[MetricSpec, ...]      # the ones a comparison shows
    check: Callable[[str, Mapping[str, Any]], dict]   # the agent's validate(name, params)
    estimate: Callable[[str, Mapping[str, Any]], float]   # the agent's expected_seconds(name, params)

    @property
    def has_presets(self) -> bool:
        return bool(self.presets)

    @property
    def preset_names(self) -> tuple[str, ...]:
        return tuple(preset.name for preset in self.presets)

    def param(self, name: str) -> ParamSpec:
        for param in self.params:
            if param.name == name:
                return param
        raise KeyError(f"the {self.name} test has no parameter {name!r}")

    def preset(self, name: str) -> Preset:
        for preset in self.presets:
            if preset.name == name:
                return preset
        raise KeyError(f"the {self.name} test has no preset {name!r}")

    def validate(self, params: Mapping[str, Any]) -> dict:
        """The parameters with the agent's defaults filled in; ValueError naming what is wrong."""
        return self.check(self.name, params)

    def expected_seconds(self, params: Mapping[str, Any]) -> float:
        """How long the agent expects the run to take with these parameters (its deadline's base)."""
        return self.estimate(self.name, params)


SWEEP_JOB = re.compile(r"^sweep_(?P<kind>.+)_w(?P<workers>\d+)$")
READAHEAD_JOB = re.compile(r"^readahead_(?P<kind>.+)_ra(?P<kb>\d+)$")


@dataclass(frozen=True)
class Catalogue:
    """Every test, in the order the run dialog lists them, and the labels shared by all views."""

    tests: Mapping[str, TestKind]
    labels: Mapping[str, str]        # test -> its name in tables, also for "monitor" (not a test to run)
    job_labels: Mapping[str, str]    # agent job name -> label, in the order a reader expects the jobs
    compared: tuple[MetricSpec, ...]
    # how steady each compared figure was (variation, latency tail, CPU steal), stored by the workbench
    consistency: tuple[MetricSpec, ...] = ()

    def test(self, name: str) -> TestKind:
        if name not in self.tests:
            raise KeyError(f"unknown test {name!r} (known: {', '.join(sorted(self.tests))})")
        return self.tests[name]

    def runnable(self) -> tuple[TestKind, ...]:
        return tuple(self.tests.values())

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.tests))

    def label(self, test: str) -> str:
        return self.labels.get(test, test)

    def compared_metrics(self) -> tuple[MetricSpec, ...]:
        return self.compared

    def consistency_for(self, key: str) -> tuple[MetricSpec, ...]:
        """The consistency figures shown beside the compared figure `key`, e.g. for "disk:randread_4k.iops"
        its variation (%), its job's p99/p50 latency ratio and the CPU steal while it ran."""
        return tuple(item for item in self.consistency if item.qualifies == key)

    def metric(self, key: str) -> MetricSpec:
        for item in self.compared:
            if item.key == key:
                return item
        raise KeyError(f"no comparison metric {key!r}")

    def secret_params(self) -> tuple[str, ...]:
        return tuple(sorted({p.name for test in self.tests.values() for p in test.params if p.secret}))

    def validate(self, test: str, params: Mapping[str, Any]) -> dict:
        """The agent's check of a test's parameters; ValueError naming what is wrong."""
        if test not in self.tests:
            raise ValueError(f"the {test} test is not available in this version of the agent")
        return self.tests[test].validate(params)

    def job_label(self, job: str) -> str:
        """ "randread_4k" -> "Random read 4 KiB", "sweep_randread_4k_w4" -> "Sweep: random read 4 KiB, 4 workers"."""
        sweep = SWEEP_JOB.match(job)
        if sweep:
            base = self.job_labels.get(sweep["kind"], sweep["kind"])
            count = int(sweep["workers"])
            return f"Sweep: {base[:1].lower()}{base[1:]}, {count} worker{'s' if count != 1 else ''}"
        readahead = READAHEAD_JOB.match(job)
        if readahead:
            return f"Read-ahead {readahead['kb']} KiB: sequential read"
        return self.job_labels.get(job, job)

    def job_order(self, job: str) -> tuple[int, int, str]:
        """Sort key: the main jobs in reading order, then the sweep by workers, then the rest."""
        order = list(self.job_labels)
        if job in order:
            return (0, order.index(job), job)
        numbers = re.findall(r"\d+$", job)
        return (1 if job.startswith("sweep_") else 2, int(numbers[0]) if numbers else 0, job)
