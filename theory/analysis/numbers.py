"""Numbers as a results document stores them (JSON, with NaN/inf as strings)."""
from __future__ import annotations


def num(x) -> float | None:
    """``x`` as a finite-or-not float, or None when it is not a number (JSON 'nan'/'inf' strings count)."""
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str) and x.strip().lower() in ("nan", "inf", "-inf", "+inf"):
        return float(x)
    return None
