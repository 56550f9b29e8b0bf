"""Issues 14 and 19: one verdict per statement as printed; readings beside it; typed findings; what a
"holds" certifies (identity records, untested parts); the ``claims`` section of results.json."""
from __future__ import annotations

import pytest

import theory.report as report
from theory.records import Measurement
from theory.report import summary

from . import _synthetic
from .test_html_page import _section, _summary_row

CID = "kou2023/lem-A.1"


def _rows(extra, **entry):
    d = _synthetic.doc(extra, registry_entries={CID: entry} if entry else None)
    return {r.id: r for r in summary.build_rows(d)}, d


def _r(verdict, covers=(), **kw):
    """A record of CID; ``covers`` is set on the written record, since the parts live in the doc's own
    registry snapshot (the live registry validates covers at record time, see the last test)."""
    kw.setdefault("test", "checks/kou2023/test_synth.py::test_model")
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
    assert summary.worst(["inconclusive", "vacuous"]) == "vacuous"


def test_identity_records_alone_are_consistency_not_evidence():
    ident = _r("holds", evidence="identity", observed=0.3, bound=1.0)
    assert _rows([ident])[0][CID].verdict == "consistency"
    assert _rows([ident], identity=True)[0][CID].verdict == "holds-identity"
    assert _rows([ident, _r("holds", observed=1, bound=2)])[0][CID].verdict == "holds"
    text = report.render(_rows([ident])[1])
    assert ">consistency only</span>" in _summary_row(text, CID)
    assert "identity: holds for any numbers" in _section(text, CID)


def test_untested_parts_make_holds_in_part():
    parts = ["t = 0", "t > 0"]
    rows, d = _rows([_r("holds", covers=["t = 0"])], parts=parts)
    assert rows[CID].verdict == "holds-in-part" and rows[CID].untested == ["t > 0"]
    # an identity record does not test a part; a record of another reading does not either
    rows, _ = _rows([_r("holds", covers=["t = 0"]), _r("holds", covers=["t > 0"], evidence="identity"),
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


@pytest.mark.parametrize("kw,msg", [
    ({"verdict": "expected-failure", "finding": "x"}, "needs finding_type"),
    ({"verdict": "vacuous"}, "needs finding_type"),
    ({"verdict": "holds", "reading": "loose"}, "reading 'loose'"),
    ({"verdict": "holds", "evidence": "proof"}, "evidence 'proof'"),
    ({"verdict": "holds", "finding_type": "wrong"}, "finding_type 'wrong'"),
    ({"verdict": "holds", "covers": ["no such part"]}, "not parts of its registry entry"),
])
def test_record_fields_are_validated(kw, msg):
    with pytest.raises(ValueError, match=msg):
        Measurement(claim=CID, **kw)
