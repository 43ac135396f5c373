"""Floats in a run document: strict JSON has no NaN or infinity, so they travel as the names "NaN",
"Infinity" and "-Infinity", read back by storage.run_import and storage.spread."""
from __future__ import annotations

import math

NON_FINITE_NAMES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def encode_float(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value
