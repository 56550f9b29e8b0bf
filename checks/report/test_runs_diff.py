"""Issue 16: ``python -m theory diff OLD NEW`` — claims added/removed, verdict changes, companions that
stopped rejecting, tightness moves over a threshold; exit status 1 on a regression, ``--html`` writes a page.

End to end, a deliberately changed bound (lem-1's bound scaled by 0.8 through ``$DEMO_BOUND_SCALE``) is
flagged as a regression; the other rules are checked on edited copies of one results document.
"""
from __future__ import annotations

import copy
import json

import pytest

from theory import cli
from theory.runs import diff as D

from . import _runs_project as P
from ._html import Page

pytestmark = pytest.mark.e2e  # subprocess runs of pytest / the CLI: deselected unless --e2e


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = P.make(tmp_path_factory.mktemp("diff"))
    for name, scale in (("old", "1"), ("new", "0.8")):
        r = P.pytest(tmp, "--report", name, env={"DEMO_BOUND_SCALE": scale})
        assert r.returncode == 0, r.stdout + r.stderr
    return tmp


def test_changed_bound_is_a_regression(runs, tmp_path, capsys):
    rc = cli.main(["diff", str(runs / "old"), str(runs / "new" / "results.json"), "--html", str(tmp_path / "d.html")])
    out = capsys.readouterr().out
    assert rc == 1, out
    assert "REGRESSION demo2026/lem-1: holds → violated" in out
    assert "Tightness figures that moved by more than 10% (4):" in out
    for n in (100, 400, 1600, 6400):  # each slack shrank by 20%: bound ÷ observed with the bound × 0.8
        assert f"demo2026/lem-1: test_mean_bound[{n}] n={n} — slack " in out
    assert out.count("(−20%)") == 4
    assert "1 regression(s)" in out
    page = (tmp_path / "d.html").read_text(encoding="utf-8")
    assert Page(page).errors == [] and "1 regression(s)" in page and "demo2026/lem-1" in page


def test_same_run_is_no_change(runs, capsys):
    assert cli.main(["diff", str(runs / "old"), str(runs / "old")]) == 0
    assert "no change in claims, verdicts, companions or tightness figures" in capsys.readouterr().out


def _doc(runs):
    d = json.loads((runs / "old" / "results.json").read_text())
    d["_source"] = "old"
    return d


def _edit(doc, claim, role="check", **fields):
    new = copy.deepcopy(doc)
    new["_source"] = "new"
    for r in new["records"]:
        if r["claim"] == claim and r.get("role", "check") == role:
            r.update(fields)
    return new


def test_expected_failure_that_holds_is_a_regression(runs):
    old = _doc(runs)
    d = D.diff(old, _edit(old, "demo2026/lem-4", verdict="holds", finding="", finding_type=""))
    assert [(c.claim, c.old, c.new, c.regression) for c in d.of("verdict")] == \
        [("demo2026/lem-4", "expected failure", "holds", True)]


def test_holds_to_vacuous_is_a_change_not_a_regression(runs):
    old = _doc(runs)
    d = D.diff(old, _edit(old, "demo2026/eq-3", verdict="vacuous", finding_type="vacuous"))
    assert [(c.old, c.new) for c in d.of("verdict")] == [("holds", "vacuous")] and d.regressions == []


def test_companion_that_stopped_rejecting(runs):
    old = _doc(runs)
    d = D.diff(old, _edit(old, "demo2026/lem-1", role="companion", verdict="violated"))
    comp = d.of("companion")
    assert len(comp) == 4 and all(c.regression and c.new == "not rejected" for c in comp)
    gone = copy.deepcopy(old)
    gone["records"] = [r for r in gone["records"] if r.get("role") != "companion"]
    d = D.diff(old, gone)
    assert len(d.of("companion-gone")) == 4 and d.regressions == []


def test_claims_added_and_removed(runs):
    old = _doc(runs)
    fewer = copy.deepcopy(old)
    fewer["records"] = [r for r in fewer["records"] if r["claim"] != "demo2026/thm-2"]
    fewer["run"]["tests"] = {k: t for k, t in fewer["run"]["tests"].items() if "test_rate" not in k}
    assert [c.claim for c in D.diff(old, fewer).of("removed")] == ["demo2026/thm-2"]
    assert [c.claim for c in D.diff(fewer, old).of("added")] == ["demo2026/thm-2"]


def test_threshold_is_configurable(runs):
    old = _doc(runs)
    rec = next(r for r in old["records"] if r["claim"] == "demo2026/eq-3" and r["config"] == {"d": 30})
    tol = rec["bound"]
    # err/tol moves from its old value to 1.15× and to 1.05× of it (an error that grew by 15% and 5%)
    for factor, t, moved in ((1.15, 0.10, True), (1.05, 0.10, False), (1.15, 0.20, False)):
        new = copy.deepcopy(old)
        r = next(x for x in new["records"] if x["claim"] == "demo2026/eq-3" and x["config"] == {"d": 30})
        r["observed"] = rec["observed"] * factor if rec["observed"] else tol * 0.5 * factor
        base = copy.deepcopy(old)
        b = next(x for x in base["records"] if x["claim"] == "demo2026/eq-3" and x["config"] == {"d": 30})
        b["observed"] = rec["observed"] or tol * 0.5
        hits = [c for c in D.diff(base, new, threshold=t).of("tightness") if c.claim == "demo2026/eq-3"]
        assert bool(hits) == moved, (factor, t)


def test_unreadable_input_is_status_2(tmp_path, capsys):
    assert cli.main(["diff", str(tmp_path), str(tmp_path)]) == 2
    assert "no results at" in capsys.readouterr().err
