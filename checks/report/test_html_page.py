"""Issue 3: the report page parses, lists every catalog claim once, is self-contained and deterministic."""
from __future__ import annotations

import collections
import html
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from theory.analysis import verdicts
import theory.report as report
from theory import claims
from theory.records import atomic_write
from theory.report import page as page_mod

from . import _synthetic
from ._html import Page, external_references

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("rep")
    out = report.build(_synthetic.doc(), d)
    text = out.read_text(encoding="utf-8")
    return text, Page(text)


def test_page_parses_with_balanced_tags(built):
    text, page = built
    assert text.startswith("<!doctype html>")
    assert page.errors == []


def test_every_registry_claim_exactly_once_in_summary(built):
    _, page = built
    ids = list(claims.catalog())
    assert len(ids) > 50
    c = collections.Counter(page.summary_claims)
    assert {k for k, n in c.items() if n != 1} == set()
    assert set(c) == set(ids)


def test_no_external_resource(built):
    text, page = built
    assert external_references(page, text) == []
    # the checker itself catches what it should (so the assertion above can fail)
    bad = text.replace("</body>", '<img src="https://example.org/x.png"><script src="a.js"></script></body>')
    found = external_references(Page(bad), bad)
    assert any("example.org" in f for f in found) and any("a.js" in f for f in found)


def test_element_ids_are_unique_across_figures(built):
    _, page = built
    dup = [k for k, n in collections.Counter(page.ids).items() if n > 1]
    assert dup == []
    assert sum(1 for i in page.ids if i.endswith("box")) >= 4  # several SVG figures share the page


def _section(text: str, claim_id: str) -> str:
    start = text.index(f'id="{page_mod.anchor(claim_id)}"')
    return text[start:text.index("</section>", start)]


def _summary_row(text: str, claim_id: str) -> str:
    start = text.index(f'data-claim="{claim_id}"', text.index('id="summary-table"'))
    return text[start:text.index("</tr>", start)]


def test_verdicts_are_the_worst_record_and_rule_is_on_the_page(built):
    text, _ = built
    assert verdicts.VERDICT_RULE in html.unescape(text)
    expect = {"wang2024/thm-4.5": "violated", "kou2023/lem-5.3": "expected failure",
              "bantzis2025/prop-3.2": "vacuous", "kou2023/lem-C.3": "holds", "zhu2022/rem-D.2": "not applicable",
              "bantzis2025/ex-1": "error", "wang2024/fig-2": "not encoded",
              "zhu2022/lem-5": "error",     # a failed check overrides the "holds" it recorded first
              "zhu2022/lem-3": "error"}     # a wrong version the check did not reject
    for cid, label in expect.items():
        assert f">{label}</span>" in _summary_row(text, cid), cid


def test_worst_order():
    assert verdicts.worst(["holds", "violated", "expected-failure"]) == "violated"
    assert verdicts.worst(["holds", "vacuous", "not-applicable"]) == "vacuous"
    assert verdicts.worst(["not-applicable", "holds"]) == "holds"
    assert verdicts.worst(["holds", "expected-failure", "vacuous"]) == "expected-failure"
    assert verdicts.worst([]) == "not-encoded"


def test_counts_reasons_findings_and_metadata(built):
    text, _ = built
    rows = verdicts.build_rows(_synthetic.doc())
    c = verdicts.counts(rows)
    assert c["not-encoded"] == len(claims.catalog()) - 9
    assert f'v-not-encoded">not encoded</span> {c["not-encoded"]}<' in text
    assert "A remark with no checkable content." in _section(text, "zhu2022/rem-D.2")
    # a claim the registry calls not (fully) checkable shows that reason when no check covers it
    info = rows[[r.id for r in rows].index("wang2024/fig-2")].info
    assert info.checkable != "fully" and html.escape(" ".join(info.why.split())[:60]) in " ".join(
        _section(text, "wang2024/fig-2").split())
    findings = text[text.index('id="findings"'):text.index('id="claims"')]
    assert "exp(-x0) instead of exp(x0)" in findings and "trivial one on the plateau" in findings
    assert "RuntimeError: boom" in _section(text, "bantzis2025/ex-1")
    for v in ("testbox", "2.x", "quick", "2026-01-01T00:00:00+00:00", "12.5", "some tests failed"):
        assert v in text[:text.index('id="summary"')], v
    assert "effective C_orth=0.37" in _section(text, "kou2023/lem-C.3")  # hypotheses and their values
    assert "x&lt;y&amp;z" in _section(text, "kou2023/lem-5.2")  # table cells escaped
    assert "observed vs bound across c" in _section(text, "zhu2022/lem-3")  # sweep plot


def test_companions_listed_apart_and_counted(built):
    text, _ = built
    rows = {r.id: r for r in verdicts.build_rows(_synthetic.doc())}
    assert rows["kou2023/lem-C.3"].rejected == (1, 1) and rows["zhu2022/lem-3"].rejected == (0, 1)
    assert len(rows["kou2023/lem-C.3"].records) == 1          # the companion is not a measurement
    assert rows["kou2023/lem-C.3"].headline["role"] == "check"
    assert "1/1 wrong versions rejected" in _summary_row(text, "kou2023/lem-C.3")
    assert "0/1 wrong versions rejected" in _summary_row(text, "zhu2022/lem-3")
    sec = _section(text, "zhu2022/lem-3")
    assert "0 of 1 rejected" in sec and "NOT rejected</span>" in sec and "learning rate eta/c passes too" in sec
    assert "1 of 2 deliberately wrong versions rejected" in text[:text.index('id="summary"')]


def test_companion_verdict_must_say_rejected_or_not():
    from theory.records import Measurement
    with pytest.raises(ValueError, match="companion"):
        Measurement(claim="kou2023/lem-C.3", verdict="vacuous", role="companion")
    with pytest.raises(ValueError, match="role"):
        Measurement(claim="kou2023/lem-C.3", verdict="holds", role="mutation")


def test_statement_latex_is_rendered_as_mathml():
    """Issue 34: formulas render as MathML (offline, native in Chromium and Firefox); a formula may span lines;
    LaTeX the converter cannot read is shown as source, and markup in a statement is never injected."""
    stmt = "For $t\\ge0$ and $\\|\\theta\\|^2\n = L$: $$\\log\\big(e^{x_0}+C_1t\\big)$$ <b>x</b> $\\frac{$"
    text = report.render(_synthetic.doc(registry_entries={"kou2023/lem-5.3": {"statement": stmt}}))
    sec = _section(text, "kou2023/lem-5.3")
    assert '<span class="math display" title="\\log\\big(e^{x_0}+C_1t\\big)"><math ' in sec
    assert 'display="block"' in sec and '<span class="math" title="\\|\\theta\\|^2 = L"><math' in sec
    assert "<msup>" in sec and "&#x003B8;" in sec  # θ, squared
    assert '<span class="math src">\\frac{</span>' in sec and "&lt;b&gt;x&lt;/b&gt;" in sec
    assert "<b>x</b>" not in sec and "$" not in sec.split("Statement.")[1].split("</div>")[0]


def test_render_is_deterministic_and_hash_seed_independent(tmp_path):
    a = report.render(_synthetic.doc())
    assert a == report.render(_synthetic.doc())
    src = ("import sys; sys.path.insert(0, %r); from checks.report import _synthetic; import theory.report as r;"
           "sys.stdout.write(r.render(_synthetic.doc()))" % str(ROOT))
    for seed in ("12345",):  # another process, another hash seed (this one's is random)
        p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=300, cwd=ROOT,
                           env={**os.environ, "PYTHONHASHSEED": seed})
        assert p.returncode == 0, p.stderr[-3000:]
        if p.stdout != a:
            i = next(k for k, (x, y) in enumerate(zip(p.stdout + "\0", a + "\1")) if x != y)
            raise AssertionError(f"PYTHONHASHSEED={seed}: page differs at {i}: {p.stdout[i - 200:i + 200]!r} "
                                 f"vs in-process {a[i - 200:i + 200]!r}")


def test_different_data_gives_different_plot(tmp_path):
    d = _synthetic.doc()
    svg = re.findall(r"<svg.*?</svg>", report.render(d), re.S)
    for r in d["records"]:
        if r["claim"] == "kou2023/lem-C.3" and r["role"] == "check":
            r["series"]["stable rank - 1"]["y"][3] *= 2
    svg2 = re.findall(r"<svg.*?</svg>", report.render(d), re.S)
    assert len(svg) == len(svg2) and sum(a != b for a, b in zip(svg, svg2)) == 1


def test_bad_plot_data_does_not_cost_the_page(tmp_path):
    bad = _synthetic._rec("kou2023/lem-A.1", "holds", observed=1, bound=2,
                          series={"broken": {"x": [1, 2, 3], "y": [1, 2]}, "empty": {"x": [], "y": []}})
    text = report.render(_synthetic.doc([bad]))
    sec = _section(text, "kou2023/lem-A.1")
    assert "could not be drawn" in sec and "len(x)=3 != len(y)=2" in sec
    assert Page(text).errors == []


def test_write_is_atomic(tmp_path, monkeypatch):
    out = report.build(_synthetic.doc(), tmp_path)
    before = out.read_bytes()
    monkeypatch.setattr(page_mod, "_summary", lambda rows: 1 / 0)  # crash while rendering
    with pytest.raises(ZeroDivisionError):
        report.build(_synthetic.doc(), tmp_path)
    assert out.read_bytes() == before

    def crash_mid_write(fd):  # crash after part of the new page reached the disk
        raise OSError("disk full")

    monkeypatch.undo()
    monkeypatch.setattr(os, "fsync", crash_mid_write)
    with pytest.raises(OSError):
        atomic_write(out, "<html>trunc")
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html"]


def test_rebuild_from_results_json(tmp_path):
    p = tmp_path / "results.json"
    p.write_text(json.dumps(_synthetic.doc()))
    out = report.build_from_json(p)
    assert out == tmp_path / "index.html" and out.read_text() == report.render(_synthetic.doc())


def test_series_of_several_records_with_one_plot_key_share_one_figure():
    """Issue 34: three records whose series name the same ``plot`` give one overlaid figure, not three."""
    cid = "kou2023/lem-5.2"
    extra = [_synthetic._rec(cid, "holds", observed=1.0, bound=2.0, config={"eta": eta},
                             series={"balance": {"x": [1, 2, 3], "y": [eta, 2 * eta, 3 * eta], "plot": "drift"}})
             for eta in (0.1, 0.2, 0.4)]
    sec = _section(report.render(_synthetic.doc(extra)), cid)
    assert sec.count('class="fig"') == 1  # one figure box
    assert sec.count("its series are in the plot drift above") == 3
    assert all(f"balance (eta={eta})" in sec for eta in (0.1, 0.2, 0.4))
