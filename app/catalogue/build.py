"""The catalogue built from the agent's description of each test and the human side; it raises when
the two disagree, so a renamed job, metric or preset cannot go unnoticed.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from app.catalogue import presentation
from app.catalogue.model import Catalogue, JobSpec, MetricSpec, ParamSpec, Preset, TestKind
from remote.agent import benches


class CatalogueError(ValueError):
    """The presentation names something the agent does not define, or the other way round."""


def _check(name: str, params: Mapping[str, Any]) -> dict:
    return benches.validate(name, dict(params))   # looked up at call time: tests may replace it


def _estimate(name: str, params: Mapping[str, Any]) -> float:
    return benches.expected_seconds(name, dict(params))


def _param(raw: Mapping[str, Any]) -> ParamSpec:
    return ParamSpec(name=str(raw["name"]), kind=str(raw["kind"]), default=raw.get("default"),
                     low=raw.get("low"), high=raw.get("high"), choices=tuple(raw.get("choices") or ()),
                     unit=str(raw.get("unit") or ""))


def _presets(test: str, raw: Mapping[str, Mapping[str, Any]]) -> tuple[Preset, ...]:
    summaries = presentation.PRESET_SUMMARIES.get(test, {})
    unknown = sorted(set(summaries) - set(raw))
    if unknown:
        raise CatalogueError(f"{test}: presets {', '.join(unknown)} are described but the agent has none such")
    return tuple(Preset(name, MappingProxyType(dict(values)), summaries[name](values) if name in summaries else "")
                 for name, values in raw.items())


def _jobs(test: str, raw: Sequence[Mapping[str, Any]]) -> tuple[JobSpec, ...]:
    jobs = []
    for job in raw:
        key, name = str(job["key"]), str(job["job"])
        label = presentation.SERIES_LABELS.get(key) if job.get("series") else presentation.JOB_LABELS.get(name)
        if not label:
            raise CatalogueError(f"{test}: the agent's job {key} ({name}) has no label")
        jobs.append(JobSpec(key, name, label, tuple(job.get("presets") or ()), bool(job.get("needs_root")),
                            bool(job.get("series")), presentation.JOB_HELP.get(key, "")))
    return tuple(jobs)


def _pattern(template: str) -> re.Pattern[str]:
    """ "{job}.lat_{latency}" -> a regex where each {placeholder} is any text."""
    parts = re.split(r"\{[a-z_]+\}", template)
    return re.compile(".+".join(re.escape(part) for part in parts) + "$")


def _metrics(test: str, results: Sequence[tuple[str, str]], jobs: Sequence[JobSpec]) -> tuple[MetricSpec, ...]:
    compared = tuple(m for m in presentation.COMPARED if m.test == test)
    for item in compared:
        if item.derived:
            continue
        units = [unit for template, unit in results if _pattern(template).match(item.metric)]
        if not units:
            raise CatalogueError(f"{test}: the comparison reads {item.metric}, which the agent does not report")
        if item.unit not in units:
            raise CatalogueError(f"{test}: {item.metric} is in {units[0]} for the agent, not {item.unit}")
        job = item.metric.partition(".")[0]
        if jobs and "." in item.metric and job not in {j.job for j in jobs}:
            raise CatalogueError(f"{test}: the comparison reads job {job}, which the agent does not run")
    return compared


def _consistency(tests: Mapping[str, TestKind]) -> tuple[MetricSpec, ...]:
    """The consistency figures, each checked against the results its test stores."""
    for item in presentation.CONSISTENCY:
        units = [unit for template, unit in tests[item.test].results if _pattern(template).match(item.metric)]
        if item.unit not in units:
            raise CatalogueError(f"{item.test}: the consistency figure {item.metric} is not a result in {item.unit}")
    return presentation.CONSISTENCY


def build_catalogue() -> Catalogue:
    agent = set(benches.names())
    shown = {name for name in presentation.MENU_LABELS
             if name in agent or name not in presentation.AGENT_OPTIONAL}
    if agent != shown:
        raise CatalogueError(f"the agent's tests ({', '.join(sorted(agent))}) are not the ones described "
                             f"({', '.join(sorted(shown))})")
    tests = {}
    for name, menu_label in presentation.MENU_LABELS.items():
        if name not in shown:
            continue
        described = benches.describe(name)
        jobs = _jobs(name, described["jobs"])
        results = tuple((str(t), str(u)) for t, u in described["metrics"]) + presentation.WORKBENCH_RESULTS.get(
            name, ())
        tests[name] = TestKind(name=name, label=presentation.TEST_LABELS.get(name, name), menu_label=menu_label,
                               params=tuple(_param(p) for p in described["params"]),
                               presets=_presets(name, described["presets"]), jobs=jobs, results=results,
                               metrics=_metrics(name, results, jobs), check=_check,
                               estimate=_estimate)
    known_jobs = {job.job for test in tests.values() for job in test.jobs if not job.series}
    unknown = sorted(set(presentation.JOB_LABELS) - known_jobs)
    if unknown:
        raise CatalogueError(f"labels for jobs the agent does not run: {', '.join(unknown)}")
    stray = sorted({m.test for m in presentation.COMPARED} - set(tests) - presentation.AGENT_OPTIONAL)
    if stray:
        raise CatalogueError(f"comparison metrics for tests the agent does not have: {', '.join(stray)}")
    return Catalogue(tests=MappingProxyType(tests), labels=MappingProxyType(dict(presentation.TEST_LABELS)),
                     job_labels=MappingProxyType(dict(presentation.JOB_LABELS)),
                     compared=presentation.COMPARED, consistency=_consistency(tests))
