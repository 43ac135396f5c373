"""The "idle" test: phases that only wait. For the run engine's own tests and for demos."""
import time
from typing import Any, Dict, List  # noqa: F401 - List in a type comment

DEFAULT_PHASES = [["warmup", "Warm-up", 2.0], ["measure", "Measure", 5.0]]
PROGRESS_EVERY = 0.5  # seconds
MAX_SECONDS = 24 * 3600.0
# the one parameter validate() takes: a list of [id, label, seconds], each 0-MAX_SECONDS
PARAMS = ({"name": "phases", "kind": "list", "default": DEFAULT_PHASES, "low": 0.0, "high": MAX_SECONDS,
           "unit": "s"},)
KNOWN = tuple(param["name"] for param in PARAMS)
METRICS = (("elapsed", "s"),)


def describe() -> Dict[str, Any]:
    """The parameters and metrics, as data (no presets: validate() refuses one)."""
    return {"params": PARAMS, "presets": {}, "jobs": (), "metrics": METRICS}


def validate(params: Dict[str, Any]) -> Dict[str, Any]:
    phases = params.get("phases", DEFAULT_PHASES)
    if not isinstance(phases, list) or not phases:
        raise ValueError("idle: phases must be a non-empty list of [id, label, seconds]")
    clean = []  # type: List[List[Any]]
    for phase in phases:
        if not isinstance(phase, (list, tuple)) or len(phase) != 3:
            raise ValueError("idle: each phase is [id, label, seconds], not {!r}".format(phase))
        phase_id, label, seconds = phase
        try:
            seconds = float(seconds)
        except (TypeError, ValueError):
            raise ValueError("idle: phase {!r}: seconds must be a number".format(phase_id)) from None
        if not 0 <= seconds <= MAX_SECONDS:
            raise ValueError("idle: phase {!r}: seconds must be 0-{:g}".format(phase_id, MAX_SECONDS))
        clean.append([str(phase_id), str(label), seconds])
    unknown = sorted(set(params) - set(KNOWN))
    if unknown:
        raise ValueError("idle: unknown parameter(s) {}".format(", ".join(unknown)))
    return {"phases": clean}


def expected_seconds(params: Dict[str, Any]) -> float:
    return sum(seconds for _, _, seconds in params["phases"])


def run(ctx: Any, params: Dict[str, Any]) -> None:
    started = time.monotonic()
    ctx.emit("plan", phases=[{"phase": phase_id, "label": label, "seconds": seconds, "timed": True}
                             for phase_id, label, seconds in params["phases"]])
    for phase_id, label, seconds in params["phases"]:
        with ctx.phase(phase_id, label):
            phase_start = time.monotonic()
            while True:
                left = seconds - (time.monotonic() - phase_start)
                if left <= 0:
                    break
                ctx.sleep(min(PROGRESS_EVERY, left))
                elapsed = time.monotonic() - phase_start
                fraction = elapsed / seconds if seconds else 1.0
                ctx.progress(phase_id, fraction, eta_s=seconds - elapsed)
    ctx.result("idle", "elapsed", round(time.monotonic() - started, 3), "s")
