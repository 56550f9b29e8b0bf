"""Issue 16 (and issue 15's table): ``python -m theory report --seeds 0-4`` runs the checks at five seeds and
writes one report across them — per-claim verdict counts, the claims whose verdict differs first, tightness
spreads, the seeds × checks table (page, sweep.md, sweep.csv) — and ``merge`` of per-seed runs gives the same.
"""
from __future__ import annotations

import csv
import io
import json

import pytest

from theory import cli
from theory.cli import run_report
from theory.runs import seeds as seedlist

from . import _runs_project as P
from ._html import Page

pytestmark = pytest.mark.e2e  # subprocess runs of pytest / the CLI: deselected unless --e2e


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    tmp = P.make(tmp_path_factory.mktemp("sweep"))
    mp = pytest.MonkeyPatch()
    try:
        mp.chdir(tmp)
        mp.setenv("PYTHONPATH", str(tmp))
        mp.setattr(run_report, "_checks_dir", lambda: "checks")
        rc = cli.main(["report", "--seeds", "0-4", "-n", "0", "--out", "out", "--claims", str(tmp / "reg"),
                       "-p", "no:cacheprovider", "-q"])
    finally:
        mp.undo()
    assert rc == 0
    return tmp / "out"


def test_seed_lists():
    assert seedlist.parse("0-4") == [0, 1, 2, 3, 4]
    assert seedlist.parse("0,3,5-7,3") == [0, 3, 5, 6, 7]
    for bad in ("", "a", "5-3", "1-2-3"):
        with pytest.raises(ValueError):
            seedlist.parse(bad)


def test_one_report_across_five_seeds(sweep):
    doc = json.loads((sweep / "results.json").read_text())
    assert doc["run"]["seeds"] == [0, 1, 2, 3, 4] and {r["seed"] for r in doc["records"]} == {0, 1, 2, 3, 4}
    assert all((sweep / f"seed-{s}" / "index.html").exists() for s in range(5))
    claims = doc["claims"]
    assert claims["demo2026/lem-1"]["counts"] == "holds 5/5" and claims["demo2026/lem-1"]["stable"]
    assert claims["demo2026/lem-4"]["counts"] == "expected failure 5/5"
    assert claims["demo2026/rem-5"]["counts"] == "holds 3/5, inconclusive 2/5"
    assert not claims["demo2026/rem-5"]["stable"]
    text = (sweep / "index.html").read_text(encoding="utf-8")
    page = Page(text)
    assert page.errors == []
    assert "Seed sweep: 5 seeds" in text and 'id="overview"' in text
    unstable = text[text.index('id="unstable"'):text.index('id="verdicts"')]
    assert "demo2026/rem-5" in unstable and "demo2026/lem-1" not in unstable
    table = text[text.index('id="sweep-verdicts"'):]
    rows = [t.split('"')[0] for t in table.split('<tr class="row" data-claim="')[1:]]
    assert rows[0] == "demo2026/rem-5"  # the claim whose verdict differs comes first
    assert "holds 5/5" in table and "holds 3/5, inconclusive 2/5" in table


def test_tightness_spread_per_measurement(sweep):
    from theory.runs.load import load
    from theory.runs.sweep import analyse

    a = analyse(load(sweep))
    sp = [s for s in a.spreads if s.claim == "demo2026/lem-1" and s.role == "check"]
    assert len(sp) == 4 and all(len(s.values) == 5 for s in sp)
    for s in sp:
        lo, med, hi = s.stats
        recs = [r for r in load(sweep)["records"] if r["claim"] == "demo2026/lem-1" and r["role"] == "check"
                and r["config"] == s.config]
        slacks = sorted(r["bound"] / r["observed"] for r in recs)  # upper bound that holds: bound ÷ observed
        assert (lo, med, hi) == pytest.approx((slacks[0], slacks[2], slacks[4]), rel=1e-12)


def test_seeds_by_checks_table(sweep):
    rows = list(csv.DictReader(io.StringIO((sweep / "sweep.csv").read_text())))
    assert len(rows) == 5 * 9 and {r["seed"] for r in rows} == {"0", "1", "2", "3", "4"}
    coin = [r for r in rows if r["test"].endswith("test_coin")]
    assert [r["verdicts"] for r in sorted(coin, key=lambda r: r["seed"])] == \
        ["holds", "inconclusive", "holds", "inconclusive", "holds"]
    printed = [r for r in rows if r["test"].endswith("test_printed_constant")]
    assert {r["outcome"] for r in printed} == {"xfailed"} and {r["figure_kind"] for r in printed} == {"discrepancy"}
    md = (sweep / "sweep.md").read_text()
    assert "| check | claims | seed 0 | seed 1 | seed 2 | seed 3 | seed 4 |" in md
    assert "`demo2026/rem-5`: holds 3/5, inconclusive 2/5" in md
    assert 'id="seeds-by-checks"' in (sweep / "index.html").read_text(encoding="utf-8")


def test_merge_of_per_seed_runs_is_the_same_report(sweep, tmp_path, capsys):
    assert cli.main(["merge", str(tmp_path / "m"), *[str(sweep / f"seed-{s}") for s in range(5)]]) == 0
    assert "5 seeds" in capsys.readouterr().out
    a, b = (json.loads((d / "results.json").read_text()) for d in (sweep, tmp_path / "m"))
    assert P.strip(a["records"]) == P.strip(b["records"]) and a["claims"] == b["claims"]
    assert (tmp_path / "m" / "sweep.csv").read_text() == (sweep / "sweep.csv").read_text()
