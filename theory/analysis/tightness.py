"""One comparable tightness figure per record (issue 16, "tightness at a glance").

A record's ``ratio`` means different things in different checks (observed ÷ bound, a fitted exponent ÷ the
stated one, a discrepancy factor). :func:`figure` maps a record to one figure of one of four kinds, so a
reader can compare claims of one kind at a glance:

- ``slack`` (an inequality): bound ÷ observed for an upper bound, observed ÷ bound for a lower bound, on a
  log axis; 1 = tight, > 1 = room to spare, < 1 = the bound is crossed. Which side is the bound's is the
  side the check's verdict states (holds / vacuous: the observation is on the bound's side, so the slack
  is ≥ 1; violated: it is not, so < 1).
- ``err/tol`` (an identity): |error| ÷ tolerance (≤ 1: within the tolerance the arithmetic justifies).
- ``exponent`` (a rate or a limit): fitted − claimed value (0 = exactly the claimed rate), with the fitted
  value's confidence interval when the record states one (a ``hypotheses`` entry named "… CI …").
- ``discrepancy`` (an expected failure): the factor by which the printed statement is off, max(r, 1/r)
  of r = |observed ÷ bound|; when the bound is 0 there is no factor and the text gives observed vs bound.

Which kind, first rule that applies: an expected failure is a discrepancy; a record that declares its
``figure_kind`` has that kind; a record whose tightness text
speaks of an exponent, slope, rate or limit is an exponent; a record marked ``evidence="consistency"`` or whose
tightness text speaks of an error, residual, gap, deviation or tolerance is err/tol; a claim whose registry
kind speaks of an inequality, a bound or a sandwich gives a slack; a claim whose kind is a rate or a limit
an exponent; an identity, definition, algorithm or characterization err/tol; anything else a slack. An
err/tol that contradicts the verdict (a "holds" above the tolerance: the record bounds from below, like a
p-value against its level) is read as a slack. Companions, inconclusive and not-applicable records, and
records without a numeric observed value and bound, have no figure.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..records import FIGURE_KINDS
from .numbers import num

KINDS = FIGURE_KINDS
AXES = {"slack": "slack = bound ÷ observed (log; 1 = tight, < 1 crossed)",
        "err/tol": "|error| ÷ tolerance (log; ≤ 1 within tolerance)",
        "exponent": "fitted − claimed exponent or limit (0 = as claimed; bar: CI)",
        "discrepancy": "expected failure: factor off (log)"}
LOG = {"slack": True, "err/tol": True, "exponent": False, "discrepancy": True}
_RATE_TEXT = re.compile(r"expon|slope|\brate\b|\blimit\b|extrapolat", re.I)
_RATE_KIND = re.compile(r"\brate|asymptotic rate|\blimit\b", re.I)
_IDENTITY_KIND = re.compile(r"identit|definition|algorithm|characteri[sz]ation", re.I)
_BOUND_KIND = re.compile(r"inequalit|\bbound|sandwich", re.I)
_IDENTITY_TEXT = re.compile(r"\berr(or)?\b|residual|tolerance|deviation|\bgap\b", re.I)
_CI_KEY = re.compile(r"(^|[^a-z])ci([^a-z]|$)", re.I)


@dataclass(frozen=True)
class Figure:
    """A record's comparable figure: ``value`` is None when the kind has no number for this record."""

    kind: str
    value: float | None
    text: str
    ci: tuple | None = None

    @property
    def position(self) -> float | None:
        """Where the figure sits on its kind's axis (log10 for the log kinds)."""
        if self.value is None or not math.isfinite(self.value):
            return None
        if LOG[self.kind]:
            return math.log10(self.value) if self.value > 0 else None
        return self.value


def _g(x: float) -> str:
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    return f"{x:.3g}" if 1e-3 <= abs(x) < 1e5 else f"{x:.2e}"


def _claim_kind(claim_id: str) -> str:
    try:
        from ..claims import catalog

        c = catalog().get(claim_id)
        return c.kind if c else ""
    except Exception:  # a registry problem must not cost the page
        return ""


def _ci(rec: dict) -> tuple | None:
    for key, v in (rec.get("hypotheses") or {}).items():
        if _CI_KEY.search(str(key)) and "limit" not in str(key).lower() and isinstance(v, (list, tuple)) \
                and len(v) == 2 and all(num(a) is not None for a in v):
            return float(v[0]), float(v[1])
    return None


def kind_of(rec: dict, claim_kind: str | None = None) -> str | None:
    """The figure kind of a record (see the module docstring), or None when it has none."""
    if not rec or rec.get("role") == "companion" or rec.get("verdict") in ("inconclusive", "not-applicable"):
        return None
    if rec.get("verdict") == "expected-failure":
        return "discrepancy"
    if num(rec.get("observed")) is None or num(rec.get("bound")) is None:
        return None
    if rec.get("figure_kind") in KINDS:
        return rec["figure_kind"]
    ck = _claim_kind(rec.get("claim", "")) if claim_kind is None else claim_kind
    text = str(rec.get("tightness") or "")
    if _RATE_TEXT.search(text):
        return "exponent"
    if rec.get("evidence") in ("consistency", "identity") or _IDENTITY_TEXT.search(text):
        return "err/tol"
    if _BOUND_KIND.search(ck):
        return "slack"
    if _RATE_KIND.search(ck):
        return "exponent"
    if _IDENTITY_KIND.search(ck):
        return "err/tol"
    return "slack"


def figure(rec: dict | None, claim_kind: str | None = None) -> Figure | None:
    """The comparable figure of one record, or None (companions, records without numbers)."""
    kind = kind_of(rec or {}, claim_kind)
    if kind is None:
        return None
    o, b, r = num(rec.get("observed")), num(rec.get("bound")), num(rec.get("ratio"))
    if r is None and o is not None and b:
        r = o / b
    if kind == "discrepancy":
        if r is not None and math.isfinite(r) and r != 0:
            f = max(abs(r), 1 / abs(r))
            return Figure(kind, f, f"off by ×{_g(f)}")
        if o is not None and b is not None:
            return Figure(kind, None, f"{_g(o)} vs {_g(b)}")
        return Figure(kind, None, "see the finding")
    if kind == "exponent":
        d = o - b
        ci = _ci(rec)
        dci = (ci[0] - b, ci[1] - b) if ci else None
        return Figure(kind, d, f"{_g(o)} vs {_g(b)}" + (f" (CI {_g(ci[0])}..{_g(ci[1])})" if ci else ""), dci)
    if kind == "err/tol":
        if b is None or b <= 0 or o is None:
            return Figure(kind, None, f"{_g(o)} vs {_g(b)}")
        v = abs(o) / b
        if (v <= 1) == (rec.get("verdict") in ("holds", "vacuous")):
            return Figure(kind, v, f"err/tol {_g(v)}")
        kind = "slack"  # not an error below a tolerance (e.g. a p-value above its level): a slack
    if r is None or not math.isfinite(r) or r <= 0:  # slack needs a positive ratio
        return Figure(kind, None, f"{_g(o)} vs {_g(b)}")
    held = rec.get("verdict") in ("holds", "vacuous")
    s = max(r, 1 / r) if held else min(r, 1 / r)
    return Figure(kind, s, f"slack {_g(s)}" + (" (vacuous)" if rec.get("verdict") == "vacuous" else ""))
