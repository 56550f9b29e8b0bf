"""Issues 14 and 19: one verdict per statement as printed; readings beside it; typed findings; what a
"holds" certifies (identity records, untested parts); the ``claims`` section of results.json."""
from __future__ import annotations

import pytest

from theory.analysis import verdicts
import theory.report as report
from theory.records import Measurement

from . import _synthetic
from .test_html_page import _section, _summary_row

CID = "kou2023/lem-A.1"


def _rows(extra, **entry):
    d = _synthetic.doc(extra, registry_entries={CID: entry} if entry else None)
    return {r.id: r for r in verdicts.build_rows(d)}, d


def _r(verdict, covers=(), **kw):
    """A record of CID; ``covers`` is set on the written record, since the parts live in the doc's own
    registry snapshot (the live registry validates covers at record time, see the last test)."""
    kw.setdefault("test", "checks/kou2023/test_synth.py::test_model")
    if "observed" not in kw and "bound" not in kw and kw.get("evidence", "test") == "test":
        kw.update(observed=1.0, bound=2.0)  # a test record: some data could fail it
    return dict(_synthetic._rec(CID, verdict, **kw), covers=list(covers))


def test_other_readings_never_give_the_verdict():
    strict = _r("expected-failure", reading="strict", finding="fails at large radius", finding_type="false-as-stated")
    rows, d = _rows([_r("holds", observed=1, bound=2), strict])
    row = rows[CID]
    assert row.verdict == "holds" and row.other_readings == [strict] and row.headline["reading"] == "as-stated"
    text = report.render(d)
    assert "strict expected failure" in _summary_row(text, CID)
    sec = _section(text, CID)
    assert "Beside the verdict — strict reading" in sec
    findings = text[text.index('id="findings"'):text.index('id="claims"')]
    other = findings[findings.index('id="findings-other-readings"'):]
    assert "fails at large radius" in other
    # with only another reading, the claim is not judged at all
    rows, _ = _rows([strict])
    assert rows[CID].verdict == "not-encoded" and "other readings were recorded: strict" in rows[CID].reason


def test_inconclusive_does_not_override_a_holds():
    inc = _r("inconclusive", finding="flat on this data: no power", finding_type="inconclusive")
    assert _rows([_r("holds", observed=1, bound=2), inc])[0][CID].verdict == "holds"
    assert _rows([inc])[0][CID].verdict == "inconclusive"
    assert verdicts.worst(["inconclusive", "vacuous"]) == "vacuous"


def test_identity_records_alone_are_consistency_not_evidence():
    ident = _r("holds", evidence="consistency", observed=0.3, bound=1.0)
    assert _rows([ident])[0][CID].verdict == "consistency"
    assert _rows([ident], identity=True)[0][CID].verdict == "holds-identity"  # the claim itself is an identity
    assert _rows([ident, _r("holds", observed=1, bound=2)])[0][CID].verdict == "holds"
    text = report.render(_rows([ident])[1])
    assert ">consistency only</span>" in _summary_row(text, CID)
    assert "consistency: holds for any numbers" in _section(text, CID)


def test_untested_parts_make_holds_in_part():
    parts = ["t = 0", "t > 0"]
    rows, d = _rows([_r("holds", covers=["t = 0"])], parts=parts)
    assert rows[CID].verdict == "holds-in-part" and rows[CID].untested == ["t > 0"]
    # an identity record does not test a part; a record of another reading does not either
    rows, _ = _rows([_r("holds", covers=["t = 0"]), _r("holds", covers=["t > 0"], evidence="consistency"),
                     _r("holds", covers=["t > 0"], reading="proof-step")], parts=parts)
    assert rows[CID].untested == ["t > 0"]
    rows, _ = _rows([_r("holds", covers=parts)], parts=parts)
    assert rows[CID].verdict == "holds" and rows[CID].untested == []
    text = report.render(d)
    assert ">holds in part</span>" in _summary_row(text, CID) and "untested: t &gt; 0" in _summary_row(text, CID)


def test_findings_are_grouped_by_type_and_quote_the_registry():
    ef = _r("expected-failure", finding="constant off by L^(L/2)", finding_type="typo", hypotheses={"q": 0.2})
    rows, d = _rows([ef], review={"type": "typo", "quote": "the printed Eq. (7)", "verdict": "expected-failure",
                                  "reading": "as-stated", "referee": "r", "size": "s"})
    text = report.render(d)
    findings = text[text.index('id="findings"'):text.index('id="claims"')]
    typo = findings[findings.index('id="findings-typo"'):]
    assert "constant off by L^(L/2)" in typo and "Tested: the printed Eq. (7)" in typo and "q=0.2" in typo
    assert "Review of the verdict: Typo" in _section(text, CID)


def test_claims_section_in_results():
    d = report.complete(_synthetic.doc([_r("holds", covers=["a"])], registry_entries={CID: {"parts": ["a", "b"]}}))
    c = d["claims"][CID]
    assert c["verdict"] == "holds-in-part" and c["untested"] == ["b"] and c["parts"] == ["a", "b"]
    assert c["evidence"] == {"test": 1} and c["label"] == "holds in part"
    assert d["claims"]["kou2023/lem-5.3"]["finding_types"] == ["typo"]


BASE = {"evidence": "test", "inside": True, "inside_reason": "unit test", "observed": 1.0, "bound": 2.0}


@pytest.mark.parametrize("kw,msg", [
    ({"verdict": "expected-failure", "finding": "x"}, "needs finding_type"),
    ({"verdict": "vacuous"}, "needs finding_type"),
    ({"verdict": "holds", "reading": "loose"}, "reading 'loose'"),
    ({"verdict": "holds", "evidence": "proof"}, "evidence= is required"),
    ({"verdict": "holds", "evidence": ""}, "evidence= is required"),
    ({"verdict": "holds", "evidence": "identity"}, "now 'consistency'"),
    ({"verdict": "holds", "inside": None}, "inside= is required"),
    ({"verdict": "holds", "inside": 1}, "inside= is required"),
    ({"verdict": "holds", "inside_reason": " "}, "inside_reason= is required"),
    ({"verdict": "holds", "reading": "outside-hypotheses"}, "cannot say inside=True"),
    ({"verdict": "holds", "observed": None, "bound": None}, "needs a finite observed and bound"),
    ({"verdict": "holds", "observed": "nan"}, "needs a finite observed and bound"),
    ({"verdict": "holds", "finding_type": "wrong"}, "finding_type 'wrong'"),
    ({"verdict": "holds", "covers": ["no such part"]}, "not parts of its registry entry"),
])
def test_record_fields_are_validated(kw, msg):
    with pytest.raises(ValueError, match=msg):
        Measurement(claim=CID, **{**BASE, **kw})


def test_evidence_is_stated_and_a_test_names_what_could_fail():
    """Issue 32: no default evidence; a test with no numbers names the wrong version it rejects."""
    m = Measurement(claim=CID, verdict="holds", evidence="test", inside="unknown", inside_reason="not checked",
                    rejects="the sign-flipped statement fails at 40/40 points")
    assert m.rejects and not m.falsifiable
    c = Measurement(claim=CID, verdict="holds", evidence="consistency", inside=False, inside_reason="m < L^3")
    assert c.to_json()["inside"] is False
    o = Measurement(claim=CID, verdict="holds", evidence="test", reading="outside-hypotheses", observed=1, bound=2)
    assert o.inside is False and o.inside_reason
    comp = Measurement(claim=CID, verdict="holds", role="companion", observed=1, bound=2)
    assert comp.inside == "unknown"


def test_only_records_inside_the_hypotheses_judge():
    """An as-stated record whose run is outside (or not known inside) is shown beside the verdict, never as it."""
    bad = _r("violated", observed=3, bound=1, inside=False, inside_reason="Lemma A.2's width condition fails (m=20)")
    unk = _r("violated", observed=3, bound=1, inside="unknown", inside_reason="event not checked")
    rows, d = _rows([_r("holds", observed=1, bound=2), bad, unk])
    assert rows[CID].verdict == "holds" and rows[CID].other_readings == [bad, unk]
    sec = _section(report.render(d), CID)
    assert "Beside the verdict — outside-hypotheses reading" in sec and "width condition fails" in sec
    assert "outside-hypotheses violated" in _summary_row(report.render(d), CID)
    rows, d = _rows([bad])
    assert rows[CID].verdict == "outside" and "width condition fails" in rows[CID].reason
    assert ">outside the hypotheses</span>" in _summary_row(report.render(d), CID)
    # a failed test still reads error, inside or not
    doc = _synthetic.doc([bad])
    doc["run"]["tests"]["checks/kou2023/test_synth.py::test_model"] = {"outcome": "failed", "claims": [CID]}
    assert {r.id: r for r in verdicts.build_rows(doc)}[CID].verdict == "error"
    # a finding of an outside record is listed with the other readings, not as a finding against the paper
    ef = _r("expected-failure", observed=9, bound=1, finding="fails on the stand-in", finding_type="false-as-stated",
            inside=False, inside_reason="a stand-in setting, never the paper's experiment")
    text = report.render(_rows([_r("holds", observed=1, bound=2), ef])[1])
    findings = text[text.index('id="findings"'):text.index('id="claims"')]
    assert "fails on the stand-in" in findings[findings.index('id="findings-other-readings"'):]


def test_identity_label_only_for_identities_with_every_part_tested():
    """"holds (identity)" needs the registry's identity flag and no untested part (bantzis prop-3.2 read
    "holds (identity), 0/5 parts tested")."""
    parts = ["L = 2", "L = 3"]
    rows, _ = _rows([_r("holds", covers=["L = 2"], observed=0, bound=1)], identity=True, parts=parts)
    assert rows[CID].verdict == "holds-in-part" and rows[CID].untested == ["L = 3"]
    rows, _ = _rows([_r("holds", covers=parts, observed=0, bound=1)], identity=True, parts=parts)
    assert rows[CID].verdict == "holds-identity"
    rows, _ = _rows([_r("holds", covers=parts, evidence="consistency", observed=0, bound=1)], identity=True,
                    parts=parts)  # the claim is an identity: its numeric check tests it
    assert rows[CID].verdict == "holds-identity"
    rows, _ = _rows([_r("holds", covers=parts, evidence="consistency", observed=0, bound=1)], parts=parts)
    assert rows[CID].verdict == "consistency"


def test_a_forall_claim_needs_its_worst_case():
    """A statement for every θ reads "holds" only with an inside test record at its adversarial worst case."""
    rows, d = _rows([_r("holds", observed=1, bound=2)], forall=True)
    assert rows[CID].verdict == "holds-in-part" and rows[CID].untested == [verdicts.WORST_CASE_PART]
    rows, _ = _rows([_r("holds", observed=1, bound=2), _r("holds", observed=1.9, bound=2, worst_case=True)],
                    forall=True)
    assert rows[CID].verdict == "holds" and rows[CID].headline["worst_case"]
    # the worst case of an outside run does not count
    rows, _ = _rows([_r("holds", observed=1, bound=2),
                     _r("holds", observed=1.9, bound=2, worst_case=True, inside=False, inside_reason="x")],
                    forall=True)
    assert rows[CID].verdict == "holds-in-part"


def test_headline_is_the_worst_record_not_the_one_with_a_plot():
    plotted = _r("holds", observed=1, bound=10, series={"s": {"x": [1, 2], "y": [1, 2]}}, config={"a": 1})
    tight = _r("holds", observed=9, bound=10)
    loose_lower = _r("holds", observed=50, bound=10, tightness="lower bound")
    rows, _ = _rows([plotted, tight, loose_lower])
    assert rows[CID].headline is tight
    err = _r("holds", observed=1e-13, bound=1e-12, evidence="consistency")
    rows, _ = _rows([err, _r("holds", observed=2e-13, bound=1e-12, evidence="consistency")])
    assert rows[CID].headline["observed"] == 2e-13
    assert verdicts.badness(tight) == pytest.approx(0.9)
    # a consistency record (true for any numbers) never stands for the claim beside a test
    ident = _r("holds", observed=0.999, bound=1.0, evidence="consistency")
    assert _rows([ident, tight])[0][CID].headline is tight


def test_claims_section_states_headline_outside_and_forall():
    bad = _r("violated", observed=3, bound=1, inside=False, inside_reason="off the event")
    rows, d = _rows([_r("holds", observed=1, bound=2, worst_case=True), bad], forall=True)
    sec = verdicts.claims_section(rows.values())[CID]
    assert sec["verdict"] == "holds" and sec["forall"] and sec["outside"] == 1
    assert sec["headline"]["worst_case"] and sec["headline"]["badness"] == pytest.approx(0.5)
    assert sec["other_readings"][0]["reading"] == "outside-hypotheses" and sec["other_readings"][0]["inside"] is False


def test_records_of_schema_2_read_as_inside_with_stated_default():
    old = {"claim": CID, "verdict": "holds", "observed": 1, "bound": 2, "test": "t", "reading": "as-stated"}
    assert verdicts.inside(old) is True and verdicts.evidence(old) == "test"
    assert verdicts.evidence(dict(old, evidence="identity")) == "consistency"


def test_the_report_covers_the_papers_whose_checks_ran():
    """Issue 34: a run of one paper's checks reports that paper, not every registry claim as "not encoded";
    ``--all-papers`` (``run.all_papers``) lists them all."""
    rec = _synthetic._rec("kou2023/lem-5.2", "holds", observed=1, bound=2)
    d = _synthetic.doc()
    d["records"] = [rec]
    d["run"]["tests"] = {}
    papers = {r.info.paper for r in verdicts.build_rows(d)}
    assert papers == {"kou2023"}
    d["run"]["all_papers"] = True
    assert {r.info.paper for r in verdicts.build_rows(d)} >= {"kou2023", "wang2024", "zhu2022", "bantzis2025"}
    d["records"], d["run"]["all_papers"] = [], False
    assert len({r.info.paper for r in verdicts.build_rows(d)}) >= 4  # nothing ran: the whole registry


def test_a_typed_review_verdict_that_drifts_from_the_run_is_flagged():
    """The registry's review is text typed by hand; the verdict is derived. A disagreement is shown, not hidden."""
    review = {"type": "typo", "quote": "q", "verdict": "expected-failure", "reading": "as-stated",
              "referee": "r", "size": "s"}
    rows, d = _rows([_r("holds", observed=1, bound=2)], review=review)
    assert verdicts.review_drift(rows[CID]) == "expected-failure"
    assert 'was written for the verdict "expected-failure"' in _section(report.render(d), CID)
    rows, _ = _rows([_r("holds", observed=1, bound=2)], review=dict(review, verdict="holds"))
    assert verdicts.review_drift(rows[CID]) == ""
