"""The test catalogue: what each test is — label, presets, parameters and limits, jobs, metrics with
units and which way is better — built once from the agent's own definitions (remote/agent/benches.py)
and read as data by the run dialog, the command line, the summaries, the comparison and the report.
"""
from __future__ import annotations

from app.catalogue.build import CatalogueError, build_catalogue
from app.catalogue.model import (
    HIGHER,
    LOWER,
    READAHEAD_JOB,
    SWEEP_JOB,
    Catalogue,
    JobSpec,
    MetricSpec,
    ParamSpec,
    Preset,
    TestKind,
)

CATALOGUE: Catalogue = build_catalogue()

__all__ = ["CATALOGUE", "HIGHER", "LOWER", "READAHEAD_JOB", "SWEEP_JOB", "Catalogue", "CatalogueError", "JobSpec",
           "MetricSpec", "ParamSpec", "Preset", "TestKind", "build_catalogue"]
