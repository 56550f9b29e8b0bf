"""The analysis of a run: the one place that decides verdicts (issue 32).

Shaped like coverage.py's ``results.py``: raw data (the records of :mod:`theory.records`), one analysis computed
once per results document (:func:`rows`: a :class:`~.verdicts.ClaimRow` per claim with its verdict, the records
that judge it, those shown beside it, untested parts and headline record), and reporters that only read it
(:mod:`theory.report` for the page, :mod:`theory.runs` for merge, sweep and diff).

- :mod:`.verdicts` — the verdict rules, per claim.
- :mod:`.tightness` — one comparable tightness figure per record (slack, err/tol, exponent, discrepancy).
- :mod:`.registry` — the registry snapshot a run is judged against.
- :mod:`.numbers` — numbers as a results document stores them.
"""
from .verdicts import (HOLDS, LABELS, SEVERITY, VERDICT_RULE, ClaimRow, build_rows, claims_section,  # noqa: F401
                       complete, counts, worst)


def rows(doc: dict) -> list:
    """The claim rows of a results document (registry order)."""
    return build_rows(doc)
