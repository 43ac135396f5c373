"""The tests the agent can run. Adding one: a module with validate/expected_seconds/run, and a line here.

A test module provides:
  describe() -> dict                    its parameters, presets, jobs and metrics as data (the
                                        workbench's test catalogue is built from it)
  validate(params: dict) -> dict        the parameters with defaults filled in; ValueError when wrong
  expected_seconds(params: dict) -> float   how long it should take (the workbench's orphan deadline)
  run(ctx: RunContext, params: dict) -> None   emits phases, progress and results through ctx

This module is imported by the agent on the host and by the workbench (to validate and to compute
deadlines before uploading anything), so it stays standard library only.
"""
import importlib
from typing import Any, Dict

BENCHES = {
    "cpu": "bench_cpu",
    "idle": "bench_idle",
    "disk": "bench_disk",
    "dns": "bench_dns",
    "mailstorm": "bench_mailstorm",
    "restore": "bench_restore",
    "shared-storage": "bench_shared",
}


SECRET_PARAMS = ("password",)   # sent to the agent in spec.json, never echoed in events or stored


def redact(params: Dict[str, Any]) -> Dict[str, Any]:
    return {k: ("***" if k in SECRET_PARAMS and v else v) for k, v in (params or {}).items()}


def names() -> list:
    return sorted(BENCHES)


def load(name: str) -> Any:
    if name not in BENCHES:
        raise ValueError("unknown test {!r} (known: {})".format(name, ", ".join(names())))
    return importlib.import_module("." + BENCHES[name], __package__)


def validate(name: str, params: Dict[str, Any]) -> Dict[str, Any]:
    return load(name).validate(dict(params or {}))


def expected_seconds(name: str, params: Dict[str, Any]) -> float:
    module = load(name)
    return float(module.expected_seconds(module.validate(dict(params or {}))))


def describe(name: str) -> Dict[str, Any]:
    """params (dicts: name, kind, default, low, high, choices, unit), presets (name -> values), jobs, metrics."""
    return load(name).describe()


def accepts_preset(name: str) -> bool:
    """Whether the test takes a "preset" parameter at all (cpu and disk do; the others refuse one)."""
    return bool(describe(name)["presets"])
