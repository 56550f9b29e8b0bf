"""Compact, deterministic text for numbers and JSON values on the page."""
from __future__ import annotations

import json
import math

from ..analysis.numbers import num  # noqa: F401  (one reading of JSON numbers, shared)


def fmt(x, limit: int = 120) -> str:
    """Numbers to 4 significant digits, containers as compact JSON, all cut to ``limit`` characters."""
    if isinstance(x, bool):
        s = "true" if x else "false"
    elif isinstance(x, int):
        s = str(x)
    elif isinstance(x, float):
        s = _float(x)
    elif x is None:
        s = "—"
    elif isinstance(x, str):
        s = x
    elif isinstance(x, (list, tuple)) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x):
        s = "[" + ", ".join(fmt(v) for v in x) + "]"
    else:
        s = json.dumps(x, sort_keys=True, ensure_ascii=False, default=str)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    return f"{x:.4g}"


def kv(d: dict, limit: int = 60) -> str:
    """``k=v, k=v`` for a config dict (keys sorted)."""
    return ", ".join(f"{k}={fmt(v, limit)}" for k, v in sorted((d or {}).items()))
