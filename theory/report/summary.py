"""Text of a claim's headline figure for the page and the sweep (rendering only: verdicts are decided in
:mod:`theory.analysis.verdicts`)."""
from __future__ import annotations

from ..analysis.numbers import num


def tightness_text(r: dict | None) -> str:
    """The headline figure of one record: its comparable figure (:mod:`theory.analysis.tightness`: slack, err/tol,
    fitted vs claimed exponent, discrepancy), else the ratio or observed vs bound."""
    from ..analysis.tightness import figure
    from .fmt import fmt

    if not r:
        return ""
    f = figure(r)
    if f is not None:
        return f.text
    ratio = num(r.get("ratio"))
    if ratio is not None:
        return f"{fmt(ratio)}"
    o, b = r.get("observed"), r.get("bound")
    if o is not None and b is not None:
        return f"{fmt(o, 40)} vs {fmt(b, 40)}"
    if o is not None:
        return fmt(o, 40)
    return ""
