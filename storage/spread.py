"""A result's spread: computed from its samples, and written as JSON (the `results.spread` column and the
run document) and read back without loss.

JSON has no number for NaN or infinity (and PostgreSQL refuses them in a JSON column): such a statistic is
written as "NaN", "Infinity" or "-Infinity", as the run document writes non-finite values.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from storage.records import SPREAD_KINDS, SPREAD_WITHIN_RUN, Spread
from storage.run_document_floats import NON_FINITE_NAMES, encode_float

_FLOAT_FIELDS = ("mean", "sd", "min", "max", "p5", "p50", "p95", "interval_s")
MAX_SAMPLES = 2**31 - 1


def percentile(ordered: Sequence[float], pct: float) -> float:
    """Linear interpolation between closest ranks (numpy's default) of values sorted ascending."""
    if not ordered:
        return math.nan
    position = (len(ordered) - 1) * pct / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def spread_of(values: Sequence[float], interval_s: float = 0.0, kind: str = SPREAD_WITHIN_RUN) -> Spread | None:
    """The spread of the samples (non-finite ones left out); None when there is none to measure."""
    finite = sorted(float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v))
    if not finite:
        return None
    if kind not in SPREAD_KINDS:
        raise ValueError(f"a spread is {' or '.join(SPREAD_KINDS)}, not {kind!r}")
    n = len(finite)
    mean = math.fsum(finite) / n
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in finite) / (n - 1)) if n > 1 else 0.0
    return Spread(n=n, mean=mean, sd=sd, min=finite[0], max=finite[-1], p5=percentile(finite, 5),
                  p50=percentile(finite, 50), p95=percentile(finite, 95), interval_s=float(interval_s), kind=kind)


def spread_to_json(spread: Spread) -> dict[str, Any]:
    """The spread as a JSON object; spread_from_json(spread_to_json(s)) == s, NaN aside (NaN != NaN)."""
    out: dict[str, Any] = {"n": int(spread.n)}
    out.update({name: encode_float(float(getattr(spread, name))) for name in _FLOAT_FIELDS})
    out["kind"] = spread.kind
    return out


def spread_from_json(data: Any) -> Spread:
    """A Spread from its JSON object; ValueError naming the field that is wrong."""
    if not isinstance(data, Mapping):
        raise ValueError(f"a spread is an object, not {type(data).__name__}")
    n = data.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_SAMPLES:
        raise ValueError(f"spread n must be a whole number 0-{MAX_SAMPLES}, not {n!r}"[:200])
    numbers = {}
    for name in _FLOAT_FIELDS:
        value = data.get(name)
        if isinstance(value, str) and value in NON_FINITE_NAMES:
            numbers[name] = NON_FINITE_NAMES[value]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                numbers[name] = float(value)
            except OverflowError:
                raise ValueError(f"spread {name} is too large") from None
        else:
            raise ValueError(f"spread {name} must be a number, not {value!r}"[:200])
    kind = data.get("kind")
    if kind not in SPREAD_KINDS:
        raise ValueError(f"spread kind must be {' or '.join(repr(k) for k in SPREAD_KINDS)}, not {kind!r}"[:200])
    return Spread(n=n, kind=kind, **numbers)
