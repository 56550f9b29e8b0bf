"""The HTML page: header with run metadata and verdict counts, summary table, findings, claim sections.

One self-contained document: inline CSS, inline SVG, one small inline script
(table sorting); no external resource of any kind. Output depends only on the
results document, so the same records give the same bytes.
"""
from __future__ import annotations

import re
from collections import Counter

from . import overview, plots
from .fmt import fmt, kv, num
from ..analysis.registry import papers_of
from ..analysis.tightness import figure
from ..analysis.verdicts import (LABELS, SEVERITY, VERDICT_RULE, ClaimRow, counts, judges, reading_shown,
                                 review_drift)
from .summary import tightness_text
from .text import esc, md, md_inline

MAX_TABLE_ROWS = 120
MAX_FIGURES_PER_CLAIM = 24
ORDER = ("holds", "holds-identity", "holds-in-part", "consistency", "violated", "vacuous", "expected-failure",
         "inconclusive", "not-applicable", "error", "not-encoded")
# Finding types in the order the Findings section lists them (theory.claims.FINDING_TYPES).
TYPE_LABELS = {"false-as-stated": "False as stated", "typo": "Typo", "missing-hypothesis": "Missing hypothesis",
               "proof-gap": "Proof gap", "loose": "Loose", "vacuous": "Vacuous", "inconclusive": "Inconclusive",
               "outside-hypotheses": "Outside the hypotheses", "": "Untyped"}
RUN_LABELS = {"date": "run date (UTC)", "seconds": "total time (s)", "device_name": "device name",
              "exitstatus": "pytest exit status", "args": "pytest arguments"}
EXIT = {0: "all tests passed", 1: "some tests failed", 2: "interrupted", 3: "internal error",
        4: "usage error", 5: "no tests collected"}
RUN_KEYS = ("date", "seconds", "profile", "seed", "device", "device_name", "torch", "python", "machine",
            "platform", "cpus", "workers", "args", "exitstatus")

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0 auto;max-width:1280px;
padding:1em 1.5em;color:#1d1d1f;background:#fff;line-height:1.4}
h1{font-size:1.6em;margin:.2em 0}h2{border-bottom:2px solid #ddd;margin-top:1.6em}h3{margin-top:1.4em}
table{border-collapse:collapse;font-size:.86em}td,th{border:1px solid #ddd;padding:3px 6px;vertical-align:top;text-align:left}
th{background:#f3f3f5}table.sortable th{cursor:pointer;user-select:none}table.sortable th:hover{background:#e6e6ea}
tr.paper-sep td{background:#fafafa;font-weight:bold}
.v{display:inline-block;padding:1px 7px;border-radius:9px;font-size:.85em;white-space:nowrap;font-weight:600}
.v-holds{background:#d8f3dc;color:#1b5e20}.v-violated{background:#ffd6d6;color:#8b0000}
.v-vacuous{background:#fff1c2;color:#6d5200}.v-expected-failure{background:#e8dcff;color:#4a148c}
.v-not-applicable{background:#e6eef7;color:#234}.v-not-encoded{background:#eee;color:#555}
.v-error{background:#ff9e9e;color:#5a0000}.v-holds-identity{background:#e3f1e5;color:#2e6b35}
.v-holds-in-part{background:#eef7d8;color:#44600f}.v-consistency{background:#f0f0e4;color:#555522}
.v-inconclusive{background:#eef0f3;color:#445}.reading{border-left:4px solid #90a4ae;background:#f5f7f8;padding:.3em .8em;margin:.4em 0}
.quote{font-style:italic;color:#333}
.counts span{margin-right:.6em}.meta td:first-child{font-weight:600;white-space:nowrap}
.math math{font-size:1.05em}.math.display{display:block;margin:.4em 0;overflow-x:auto}
.math.src{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.9em;color:#0b3d6e;background:#f4f8fc;
padding:0 2px;border-radius:3px;white-space:pre-wrap}
.claim{border:1px solid #ddd;border-radius:6px;padding:.4em 1em 1em;margin:1em 0}
.claim h4{margin:.4em 0;font-size:1.08em}.claim .sub{color:#555;font-size:.88em}
.record{border-top:1px dashed #ccc;margin-top:.8em;padding-top:.4em}
.finding{background:#f6f0ff;border-left:4px solid #7e57c2;padding:.4em .8em;margin:.5em 0}
.finding.vacuous{background:#fffbea;border-left-color:#e0a800}.note{color:#333;background:#f7f7f7;padding:.3em .6em}
.reason{color:#555;font-style:italic}.fig{display:inline-block;vertical-align:top;margin:.5em 1em .5em 0;max-width:100%;overflow-x:auto}.fig svg{max-width:100%;height:auto}
.scroll{overflow-x:auto;max-width:100%}code{font-size:.92em}.err{color:#8b0000}
.tests{font-size:.85em;color:#444}details summary{cursor:pointer;color:#234}
.small{font-size:.85em;color:#555}nav a{margin-right:1em}
"""

JS = """
(function(){
  function key(td){var s=td.getAttribute('data-sort');if(s===null){s=td.textContent.trim();}
    var n=parseFloat(s);return (s!==''&&!isNaN(n)&&isFinite(n)&&/^[-+0-9.eE]+$/.test(s))?[0,n]:[1,s.toLowerCase()];}
  function cmp(a,b){if(a[0]!==b[0]){return a[0]-b[0];}return a[1]<b[1]?-1:(a[1]>b[1]?1:0);}
  var tables=document.querySelectorAll('table.sortable');
  for(var t=0;t<tables.length;t++){(function(table){
    var ths=table.querySelectorAll('thead th');
    for(var i=0;i<ths.length;i++){(function(th,col){
      th.addEventListener('click',function(){
        var body=table.tBodies[0];var rows=Array.prototype.slice.call(body.querySelectorAll('tr.row'));
        var dir=th.getAttribute('data-dir')==='asc'?-1:1;th.setAttribute('data-dir',dir===1?'asc':'desc');
        var seps=body.querySelectorAll('tr.paper-sep');for(var s=0;s<seps.length;s++){seps[s].style.display=col===0||col===1?'':'none';}
        rows.sort(function(a,b){return dir*cmp(key(a.cells[col]),key(b.cells[col]));});
        for(var r=0;r<rows.length;r++){body.appendChild(rows[r]);}
      });})(ths[i],i);}
  })(tables[t]);}
})();
"""


def anchor(claim_id: str) -> str:
    return "c-" + re.sub(r"[^A-Za-z0-9_-]", "-", claim_id.replace("/", "--"))


def badge(verdict: str) -> str:
    return f'<span class="v v-{esc(verdict)}">{esc(LABELS.get(verdict, verdict))}</span>'


class Figures:
    """Hands out page-unique figure prefixes in document order."""

    def __init__(self):
        self.n = 0

    def svg(self, title: str, members) -> str:
        self.n += 1
        prefix = f"fig{self.n}-"
        try:
            return f'<div class="fig" id="{prefix}box">{plots.render(title, members, prefix)}</div>'
        except Exception as e:  # bad plot data must not cost the page
            return f'<p class="err">plot {esc(title)!s} could not be drawn: {esc(type(e).__name__)}: {esc(e)}</p>'


def render(doc: dict, rows: list[ClaimRow]) -> str:
    figs = Figures()
    papers = list(dict.fromkeys(r.info.paper for r in rows))
    parts = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<title>Theory harness — tightness report</title>", f"<style>{CSS}</style></head><body>"]
    parts.append(_header(doc, rows, papers))
    parts.append(overview.section([rows], anchor))  # issue 16: tightness at a glance
    parts.append(_summary(rows))
    parts.append(_findings(rows))
    parts.append('<h2 id="claims">Claims</h2>')
    bib = papers_of(doc)
    for p in papers:
        parts.append(f'<h3 id="paper-{esc(p)}">{esc(p)}</h3>')
        if p in bib:
            parts.append(f'<p class="small">{md_inline(bib[p].citation())}</p>'
                         + (f'<details><summary>Source text</summary>{md(bib[p].source)}</details>' if bib[p].source else ""))
        for r in rows:
            if r.info.paper == p:
                parts.append(_claim(r, figs))
    parts.append(f'<footer class="small"><p>results.json schema {esc(doc.get("schema", "?"))}, generated '
                 f'{esc(doc.get("generated", ""))}. Formulas of the claim registries are rendered as MathML (LaTeX the converter cannot read is shown as source).</p></footer>')
    parts.append(f"<script>{JS}</script></body></html>\n")
    return "\n".join(parts)


def _header(doc, rows, papers) -> str:
    run = doc.get("run") or {}
    c = counts(rows)
    status = run.get("exitstatus")
    st = EXIT.get(status, f"exit status {status}") if status is not None else "run status unknown"
    recorded = sum(len(r.records) for r in rows)
    rej = [sum(v) for v in zip(*(r.rejected for r in rows))] or [0, 0]
    out = ['<header><h1>Tightness report</h1>',
           f'<p>{len(rows)} claims of {len(papers)} papers; {recorded} measurements; '
           f'{rej[0]} of {rej[1]} deliberately wrong versions rejected by the checks; '
           f'run: <strong>{esc(st)}</strong>.</p>']
    if run.get("profile") == "smoke":  # issue 17: a reduced-size run of the full profile is not a finding
        sm = run.get("smoke") or {}
        out.append(f'<div class="finding vacuous" id="smoke-run"><strong>Smoke run (scale {esc(sm.get("scale", "?"))}): '
                   f'verdicts are not compared with the papers.</strong> {esc(sm.get("note", ""))}</div>')
    out.append('<p class="counts">' + "".join(
        f'<span>{badge(v)} {c.get(v, 0)}</span>' for v in ORDER if c.get(v, 0) or v != "error") + "</p>")
    errs = run.get("collect_errors") or {}
    if errs:
        out.append('<div class="finding vacuous"><strong class="err">Collection errors</strong> (the checks of these '
                   'files did not run; their claims show as not encoded):<ul>' + "".join(
                       f"<li><code>{esc(k)}</code>: {esc(v)}</li>" for k, v in sorted(errs.items())) + "</ul></div>")
    tests = run.get("tests") or {}
    if tests:
        tc = Counter(t.get("outcome", "?") for t in tests.values())
        out.append('<p class="small">Tests: ' + ", ".join(f"{n} {esc(k)}" for k, n in sorted(tc.items())) + "</p>")
    from ..runs.sweep import false_alarms
    out.append(f'<p class="small" id="false-alarms">False alarms: {esc(false_alarms(doc.get("records") or []).text())}</p>')
    out.append(f'<p class="small">{esc(VERDICT_RULE)} Tightness: the headline record\'s comparable figure — '
               f'inequality: slack = bound ÷ observed (1 = tight, &lt; 1 crossed); identity: |error| ÷ tolerance; '
               f'rate or limit: fitted vs claimed (with its CI); expected failure: the factor the printed form is off '
               f'— else observed vs bound.</p>')
    meta = [(k, run[k]) for k in RUN_KEYS if k in run] + \
           [(k, v) for k, v in sorted(run.items()) if k not in RUN_KEYS and k not in ("tests", "collect_errors")]
    out.append('<details open><summary>Run</summary><table class="meta">' + "".join(
        f"<tr><td>{esc(RUN_LABELS.get(k, k))}</td><td>{esc(fmt(v, 400))}</td></tr>" for k, v in meta) + "</table></details>")
    out.append('<nav><a href="#summary">Summary</a><a href="#findings">Findings</a>' + "".join(
        f'<a href="#paper-{esc(p)}">{esc(p)}</a>' for p in papers) + "</nav></header>")
    return "\n".join(out)


def _summary(rows) -> str:
    head = ["Claim", "Paper", "Title", "Kind", "Verdict", "Tightness", "Configuration", "Time (s)"]
    out = ['<h2 id="summary">Summary</h2><p class="small">Grouped by paper in registry order; '
           'click a column header to sort.</p><div class="scroll">',
           '<table id="summary-table" class="sortable"><thead><tr>'
           + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>"]
    paper = None
    for i, r in enumerate(rows):
        if r.info.paper != paper:
            paper = r.info.paper
            out.append(f'<tr class="paper-sep"><td colspan="{len(head)}">{esc(paper)}</td></tr>')
        h = r.headline
        tight = tightness_text(h)
        desc = (h or {}).get("tightness", "")
        more = f" (+{len(r.records) - 1} more)" if len(r.records) > 1 else ""
        cfg = kv((h or {}).get("config") or {}, 30)
        secs = "" if r.seconds is None else f"{r.seconds:.2f}"
        flag = ' <span class="err" title="a test of this claim failed">⚠ test failed</span>' if r.failed_tests \
            and r.verdict != "error" else ""
        ok, tried = r.rejected
        if tried:
            flag += (f'<br><span class="small{"" if ok == tried else " err"}" title="companion tests: wrong versions '
                     f'of the claim run through the same check">{ok}/{tried} wrong versions rejected</span>')
        if r.finding_types:
            flag += f'<br><span class="small">{esc(", ".join(TYPE_LABELS.get(t, t) for t in r.finding_types))}</span>'
        if r.untested:
            flag += f'<br><span class="small">untested: {esc(", ".join(r.untested))}</span>'
        if r.other_readings:
            flag += (f'<br><span class="small">beside: ' + esc(", ".join(sorted(
                f'{reading_shown(x, r.info)} {LABELS.get(x.get("verdict"), x.get("verdict"))}' for x in r.other_readings)))
                + "</span>")
        sort_t = num((h or {}).get("ratio"))
        out.append(
            f'<tr class="row" data-claim="{esc(r.id)}"><td data-sort="{i:05d}"><a href="#{anchor(r.id)}">{esc(r.id)}</a></td>'
            f'<td data-sort="{i:05d}">{esc(r.info.paper)}</td><td>{md_inline(r.info.title)}'
            f'{"<br><span class=small>" + md_inline(r.info.where) + "</span>" if r.info.where else ""}'
            f'{"<br><span class=small>" + esc(r.info.reading) + " reading of " + esc(r.info.reading_of) + "</span>" if r.info.reading != "as-stated" else ""}</td>'
            f'<td>{esc(r.info.kind)}</td>'
            f'<td data-sort="{SEVERITY.get(r.verdict, 0)}">{badge(r.verdict)}{flag}</td>'
            f'<td data-sort="{"" if sort_t is None else repr(sort_t)}" title="{esc(desc)}">{esc(tight)}'
            f'{"<br><span class=small>" + esc(fmt(desc, 90)) + "</span>" if desc else ""}'
            f'{"<span class=small>" + esc(more) + "</span>" if more else ""}</td>'
            f'<td class="small">{esc(fmt(cfg, 140))}</td><td data-sort="{secs}">{secs}</td></tr>')
    out.append("</tbody></table></div>")
    return "\n".join(out)


def _findings(rows) -> str:
    """Findings grouped by type; each quotes what it tests (from the registry) and where it stands."""
    groups: dict[str, list[str]] = {}
    beside: list[str] = []
    for r in rows:
        seen = set()
        for rec in r.findings:
            if rec.get("role") == "companion" or rec["finding"] in seen:
                continue
            seen.add(rec["finding"])
            item = _finding_item(r, rec)
            if rec.get("role") != "companion" and judges(rec, r.info):
                groups.setdefault(rec.get("finding_type", ""), []).append(item)
            else:
                beside.append(item)
    out = ['<h2 id="findings">Findings</h2><p class="small">What the checks found wrong, loose, vacuous or '
           'untestable in the papers, grouped by type. Each finding quotes the sentence it tests and where it '
           'stands in the paper. Only readings of the statement as printed, from runs inside its hypotheses, count; '
           'other readings and runs outside the hypotheses are listed last and never counted against the paper.</p>']
    order = list(TYPE_LABELS)
    for t in sorted(groups, key=lambda t: order.index(t) if t in order else len(order)):
        out.append(f'<h3 id="findings-{esc(t or "untyped")}">{esc(TYPE_LABELS.get(t, t))} ({len(groups[t])})</h3>'
                   "<ul>" + "\n".join(groups[t]) + "</ul>")
    if beside:
        out.append(f'<h3 id="findings-other-readings">Other readings, shown beside the verdicts ({len(beside)})</h3>'
                   "<ul>" + "\n".join(beside) + "</ul>")
    if not groups and not beside:
        out.append("<p>No findings in this run.</p>")
    return "\n".join(out)


def _finding_item(r: ClaimRow, rec: dict) -> str:
    quote = r.info.review.get("quote") or r.info.quote
    reading = "as-stated" if judges(rec, r.info) else reading_shown(rec, r.info)
    hyp = rec.get("hypotheses") or {}
    return (f'<li>{badge(rec.get("verdict", ""))} <a href="#{anchor(r.id)}">{esc(r.id)}</a>'
            f'{" <span class=small>(" + esc(r.info.where) + ")</span>" if r.info.where else ""}'
            f'{" <span class=small>reading: " + esc(reading) + "</span>" if reading != "as-stated" else ""} — '
            f'{_short(rec["finding"])}'
            f'{"<div class=quote>Tested: " + md_inline(quote) + "</div>" if quote else ""}'
            f'{"<span class=small> Hypotheses in the runs: " + esc(kv(hyp, 40)) + ".</span>" if hyp else ""}'
            f'<span class="small"> Evidence: {esc(_evidence(rec))}</span></li>')


def _short(text: str) -> str:
    """A finding or note: inline when it is one line, paragraphs otherwise."""
    return md(text) if "\n" in text.strip() else md_inline(text)


def _evidence(rec: dict) -> str:
    bits = []
    for k in ("observed", "bound", "ratio"):
        if rec.get(k) is not None:
            bits.append(f"{k} {fmt(rec[k], 60)}")
    if rec.get("tightness"):
        bits.append(f"({rec['tightness']})")
    if rec.get("config"):
        bits.append(f"config {kv(rec['config'], 30)}")
    return fmt("; ".join(bits), 300) if bits else "see the claim's section"


def _claim(r: ClaimRow, figs: Figures) -> str:
    ci = r.info
    out = [f'<section class="claim" id="{anchor(r.id)}"><h4>{badge(r.verdict)} <code>{esc(r.id)}</code> — '
           f'{md_inline(ci.title)}</h4>']
    sub = [f"where: {md_inline(ci.where)}" if ci.where else "", f"kind: {esc(ci.kind or '—')}",
           f"numerically checkable: {esc(ci.checkable)}" if ci.checkable else ""]
    if ci.reading != "as-stated":
        sub.append(f"a {esc(ci.reading)} reading of <code>{esc(ci.reading_of)}</code>")
    if r.seconds is not None:
        sub.append(f"time {r.seconds:.2f} s")
    out.append('<p class="sub">' + " · ".join(x for x in sub if x) + ' · <a href="#summary">summary ↑</a></p>')
    if r.reason:
        out.append(f'<p class="reason">{ {"not-encoded": "Not encoded", "outside": "Outside the hypotheses"}.get(r.verdict, "Not applicable")}: '
                   f'{esc(r.reason)}</p>')
    stmt = md(ci.statement)
    if r.verdict == "not-encoded":
        out.append(f"<details><summary>Statement</summary>{stmt}</details>")
    else:
        out.append(f'<div class="statement"><strong>Statement.</strong> {stmt}</div>')
        if ci.quote:
            out.append(f'<div class="quote">Sentence tested: {md_inline(ci.quote)}</div>')
        for label, text in (("Hypotheses", ci.hypotheses), ("What the check measures", ci.measures),
                            ("Why not (fully) checkable", ci.why)):
            if text:
                out.append(f"<details><summary>{label}</summary>{md(text)}</details>")
    if ci.parts:
        out.append('<p class="small">Parts of the statement: ' + ", ".join(
            f'{esc(p)}{" <span class=err>(untested)</span>" if p in r.untested else ""}' for p in ci.parts) + "</p>")
    if ci.review:
        rv = ci.review
        out.append('<details class="reading"><summary>Review of the verdict: '
                   f'{esc(TYPE_LABELS.get(rv.get("type", ""), rv.get("type", "")))}, reading '
                   f'{esc(rv.get("reading", "as-stated"))}</summary>'
                   + "".join(f"<p><strong>{esc(k)}.</strong> {md_inline(rv[k])}</p>"
                             for k in ("quote", "referee", "size") if rv.get(k)) + "</details>")
        drift = review_drift(r)
        if drift:
            out.append(f'<p class="err small">The registry\'s review was written for the verdict "{esc(drift)}"; this '
                       f'run derives "{esc(r.label)}": the review text may be out of date.</p>')
    for rec in r.other_readings:
        shown = reading_shown(rec, r.info)
        out.append(f'<div class="reading">Beside the verdict — {esc(shown)} reading: '
                   f'{badge(rec.get("verdict", ""))}{" " + esc(rec.get("finding_type")) if rec.get("finding_type") else ""}'
                   f'{" (" + esc(rec.get("inside_reason")) + ")" if shown == "outside-hypotheses" and rec.get("inside_reason") else ""}'
                   f' <span class="small"><code>{esc(rec.get("test", ""))}</code></span></div>')
    if r.tests:
        out.append('<details class="tests"><summary>Tests (' + str(len(r.tests)) + ")</summary><ul>" + "".join(
            f"<li><code>{esc(t['nodeid'])}</code>: {esc(t.get('outcome', '?'))}"
            f"{' — ' + esc(fmt(t.get('message', ''), 300)) if t.get('message') else ''}</li>"
            for t in r.tests) + "</ul></details>")
    for rec in r.findings:
        cls = "finding vacuous" if rec.get("verdict") == "vacuous" else "finding"
        kind = TYPE_LABELS.get(rec.get("finding_type", ""), rec.get("finding_type", ""))
        out.append(f'<div class="{cls}"><strong>Finding ({esc(kind)}).</strong> {_short(rec["finding"])}</div>')
    try:
        sw = plots.sweep(r.records)
        if sw:
            out.append(figs.svg(*sw))
        nfig = [0]
        shared = plots.shared_plots(r.records + r.companions)  # one figure per "plot" key across records
        for title, members in shared.items():
            nfig[0] += 1
            out.append(figs.svg(title, members))
        for k, rec in enumerate(r.records, 1):
            out.append(_record(rec, k, len(r.records), figs, nfig, set(shared)))
        if r.companions:
            ok, tried = r.rejected
            out.append(f'<h5>Wrong versions run through the check: {ok} of {tried} rejected</h5>')
            for k, rec in enumerate(r.companions, 1):
                out.append(_record(rec, k, tried, figs, nfig, set(shared)))
    except Exception as e:  # keep the page whole whatever a record holds
        out.append(f'<p class="err">could not render the records: {esc(type(e).__name__)}: {esc(e)}</p>')
    out.append("</section>")
    return "\n".join(out)


def _record(rec: dict, k: int, n: int, figs: Figures, nfig: list, shown: set = frozenset()) -> str:
    if rec.get("role") == "companion":
        ok = rec.get("verdict") == "holds"
        head = (f'<span class="v v-{"holds" if ok else "error"}">{"rejected" if ok else "NOT rejected"}</span> '
                f'<strong>wrong version {k}/{n}</strong> ')
    else:
        head = f'{badge(rec.get("verdict", ""))} <strong>measurement {k}/{n}</strong> '
    out = [f'<div class="record"><p>{head}'
           f'<span class="small"><code>{esc(rec.get("test", ""))}</code>'
           f'{" · " + esc(fmt(rec.get("seconds"))) + " s" if rec.get("seconds") is not None else ""}'
           f'{" · " + esc(rec.get("device")) if rec.get("device") else ""}</span></p>']
    rows = []
    for key in ("observed", "bound", "ratio", "tightness", "units", "finding_type"):
        v = rec.get(key)
        if v not in (None, "", [], {}):
            rows.append((key, fmt(v, 300)))
    if rec.get("reading", "as-stated") != "as-stated":
        rows.append(("reading", rec["reading"] + " (beside the verdict, not counted)"))
    if rec.get("role") != "companion":
        rows += _evidence_rows(rec)
    if rec.get("covers"):
        rows.append(("parts tested", ", ".join(rec["covers"])))
    if rec.get("config"):
        rows.append(("configuration", kv(rec["config"], 80)))
    if rec.get("hypotheses"):
        rows.append(("hypotheses (values in this run)", kv(rec["hypotheses"], 80)))
    if rows:
        out.append('<table class="meta">' + "".join(f"<tr><td>{esc(a)}</td><td>{esc(b)}</td></tr>"
                                                     for a, b in rows) + "</table>")
    if rec.get("note"):
        out.append(f'<div class="note">{_short(rec["note"])}</div>')
    if rec.get("table"):
        out.append(_table(rec["table"]))
    for title, members in plots.group_series(rec.get("series") or {}).items():
        if title in shown:  # drawn once above, with the other records' series of the same plot
            out.append(f'<p class="small">its series are in the plot {esc(title)} above</p>')
            continue
        nfig[0] += 1
        if nfig[0] > MAX_FIGURES_PER_CLAIM:
            out.append(f'<p class="small">plot {esc(title)} left out (more than {MAX_FIGURES_PER_CLAIM} '
                       f'figures for this claim; its data is in results.json)</p>')
            continue
        out.append(figs.svg(title, members))
    out.append("</div>")
    return "\n".join(out)


def _evidence_rows(rec: dict) -> list[tuple[str, str]]:
    """What makes a record evidence (or not), and whether its run is inside the paper's hypotheses."""
    ev = rec.get("evidence") or "test"
    if ev in ("consistency", "identity"):
        rows = [("evidence", "consistency: holds for any numbers (a check of the code, not evidence)")]
    else:
        f = figure(rec)
        how = []
        if rec.get("rejects"):
            how.append(f"rejects the wrong version: {rec['rejects']}")
        if f is not None and f.value is not None and f.kind == "slack" and rec.get("verdict") == "holds":
            how.append(f"its bound could be tightened ×{fmt(f.value)} before it fails")
        elif f is not None and f.value is not None and f.kind == "err/tol" and rec.get("verdict") == "holds":
            how.append(f"fails if the error grows ×{fmt(1 / f.value) if f.value > 0 else '∞'}")
        rows = [("evidence", "test" + (": " + "; ".join(how) if how else ": observed vs bound could cross"))]
    if rec.get("worst_case"):
        rows.append(("worst case", "the maximum over random points, optima and an adversarial search"))
    if "inside" in rec:
        v = rec["inside"]
        rows.append(("inside the hypotheses", {True: "yes", False: "no"}.get(v, "unknown")
                     + (f" — {rec['inside_reason']}" if rec.get("inside_reason") else "")))
    return rows


def _table(rows: list) -> str:
    dict_rows = [r if isinstance(r, dict) else {"value": r} for r in rows]
    cols = list(dict.fromkeys(k for r in dict_rows for k in r))
    shown = dict_rows[:MAX_TABLE_ROWS]
    body = "".join("<tr>" + "".join(f"<td>{esc(fmt(r.get(c, ''), 80))}</td>" for c in cols) + "</tr>"
                   for r in shown)
    more = (f'<p class="small">… {len(dict_rows) - MAX_TABLE_ROWS} more rows in results.json</p>'
            if len(dict_rows) > MAX_TABLE_ROWS else "")
    return ('<div class="scroll"><table><thead><tr>' + "".join(f"<th>{esc(c)}</th>" for c in cols)
            + f"</tr></thead><tbody>{body}</tbody></table></div>{more}")
