"""Issue 16, tightness at a glance: one comparable figure per record kind, and the overview figure.

Expected figures are worked out by hand here (bound ÷ observed, |error| ÷ tolerance, fitted − claimed,
max(r, 1/r)), not with the code under test.
"""
from __future__ import annotations

import copy
import math
import re

import pytest

from theory.analysis import verdicts
from theory.report import overview, page, summary
from theory.analysis.tightness import figure

from . import _synthetic
from ._html import Page


def rec(verdict, observed, bound, **kw):
    return dict(claim="kou2023/lem-5.2", verdict=verdict, observed=observed, bound=bound, role="check", **kw)


@pytest.mark.parametrize("r, kind, expected", [
    (rec("holds", 0.25, 1.0), "slack", 4.0),                     # upper bound with room: 1 / 0.25
    (rec("holds", 3.0, 1.0), "slack", 3.0),                      # lower bound with room: 3 / 1
    (rec("violated", 2.0, 1.0), "slack", 0.5),                   # crossed: 1 / 2 < 1
    (rec("violated", 0.5, 1.0), "slack", 0.5),                   # a lower bound crossed
    (rec("vacuous", 0.99, 1.0, finding_type="vacuous"), "slack", 1 / 0.99),
    (rec("holds", 1e-13, 1e-10, evidence="consistency"), "err/tol", 1e-3),
    (rec("holds", -2e-13, 1e-10, tightness="max rel err / tolerance"), "err/tol", 2e-3),
    (rec("holds", -1.98, -1.0, tightness="fitted exponent vs stated"), "exponent", -0.98),
    (rec("expected-failure", 1.9e10, 1.0, finding="x"), "discrepancy", 1.9e10),
    (rec("expected-failure", 0.25, 1.0, finding="x"), "discrepancy", 4.0),
])
def test_figure_per_kind(r, kind, expected):
    f = figure(r, "inequality")
    assert f.kind == kind and f.value == pytest.approx(expected, rel=1e-12)


def test_kind_from_the_claim():
    assert figure(rec("holds", 1e-13, 1e-10), "exact identity").kind == "err/tol"
    assert figure(rec("holds", 0.4, 0.5), "asymptotic rate").kind == "exponent"
    assert figure(rec("holds", 0.4, 0.5), "deterministic inequality").kind == "slack"


def test_rate_with_its_ci():
    f = figure(rec("holds", -1.98, -1.0, tightness="fitted exponent vs stated",
                   hypotheses={"99% CI": [-2.1, -1.9], "99% CI of limit": [5, 6]}), "")
    assert f.ci == pytest.approx((-1.1, -0.9)) and "CI -2.1..-1.9" in f.text


def test_no_figure():
    assert figure(rec("holds", 1.0, 2.0, ), "")  # a plain record has one
    assert figure(dict(rec("holds", 1.0, 2.0), role="companion"), "") is None
    assert figure(rec("not-applicable", None, None), "") is None
    assert figure(rec("inconclusive", 0.3, 0.5, finding_type="inconclusive"), "") is None
    f = figure(rec("expected-failure", 35, 0, finding="x"), "")
    assert f.kind == "discrepancy" and f.value is None and f.text == "35 vs 0"
    assert figure(rec("holds", -1e-16, 0.0), "").value is None  # no positive ratio: no slack


def test_kind_rules_in_order():
    # a compound kind with an inequality gives a slack; the record's own text decides first
    assert figure(rec("holds", 0.5, 1.0), "definition + deterministic inequality").kind == "slack"
    assert figure(rec("holds", 1e-14, 1e-12, tightness="max relative error"), "deterministic inequality").kind \
        == "err/tol"
    # a p-value above its level under an identity claim is not an error below a tolerance: a slack of 0.3/0.001
    f = figure(rec("holds", 0.3, 0.001, tightness="smallest p-value vs the Bonferroni level"), "distributional identity")
    assert f.kind == "slack" and f.value == pytest.approx(300.0)


def test_declared_figure_kind_wins_over_the_inference():
    # the text alone would say "exponent" (it mentions a rate); the check declares a slack
    r = rec("holds", 0.25, 1.0, tightness="rate of the observed loss vs the bound", figure_kind="slack")
    assert figure(r, "asymptotic rate").kind == "slack" and figure(r, "").value == pytest.approx(4.0)
    assert figure(dict(r, figure_kind=""), "asymptotic rate").kind == "exponent"
    # an expected failure stays a discrepancy, a companion has no figure, whatever is declared
    assert figure(rec("expected-failure", 4.0, 1.0, finding="x", figure_kind="slack"), "").kind == "discrepancy"
    assert figure(dict(r, role="companion"), "") is None


def test_a_figure_kind_outside_the_list_is_an_error():
    from theory.records import Measurement

    Measurement(claim="kou2023/lem-5.2", verdict="holds", evidence="test", inside=True, inside_reason="unit test", observed=1, bound=2, figure_kind="err/tol")
    with pytest.raises(ValueError, match="figure_kind 'tightness' is not one of"):
        Measurement(claim="kou2023/lem-5.2", verdict="holds", evidence="test", inside=True, inside_reason="unit test", observed=1, bound=2, figure_kind="tightness")


def test_summary_table_shows_the_figure():
    ineq = dict(rec("holds", 0.25, 1.0), claim="kou2023/lem-H.1", tightness="observed / bound")  # registry: inequality
    assert summary.tightness_text(ineq) == "slack 4"
    assert summary.tightness_text(dict(rec("expected-failure", 1.9e10, 1.0, finding="x"))) == "off by ×1.90e+10"


def _marks(text):
    return re.findall(r'<a href="#([^"]+)" class="ov-mark" data-mark="([^"]+)"', text)


def test_overview_on_the_page_one_mark_per_claim_each_linking_its_section():
    doc = _synthetic.doc()
    text = page.render(doc, verdicts.build_rows(doc))
    assert text.index('id="overview"') < text.index('id="summary"')  # at the top of the page
    p = Page(text)
    assert p.errors == []
    marks = _marks(text)
    rows = verdicts.build_rows(doc)
    assert sorted(c for _, c in marks) == sorted(r.id for r in rows)
    sections = set(re.findall(r'<section class="claim" id="([^"]+)"', text))
    assert all(a == page.anchor(c) and a in sections for a, c in marks)
    assert 'class="ov-vacuous"' in text  # the vacuous band (bantzis2025/prop-3.2 is vacuous)


def test_overview_ranges_and_rings_across_seeds():
    docs = []
    for s, obs in ((0, 0.25), (1, 0.5), (2, 2.0)):  # slack 4, 2, then crossed (0.5): the verdict differs
        d = copy.deepcopy(_synthetic.doc())
        for r in d["records"]:
            if r["claim"] == "zhu2022/lem-5":
                r.update(observed=obs, bound=1.0, ratio=obs, verdict="holds" if obs <= 1 else "violated")
        docs.append(verdicts.build_rows(d))
    ms = {m.claim: m for m in overview.marks(docs, page.anchor)}
    m = ms["zhu2022/lem-5"]
    assert m.varies and m.kind == "slack"
    assert sorted(m.positions()) == pytest.approx([math.log10(0.5), math.log10(2), math.log10(4)])
    svg = overview.render(list(ms.values()))
    assert 'stroke="#000" stroke-width="1.6"' in svg and "verdict differs across seeds" in svg
