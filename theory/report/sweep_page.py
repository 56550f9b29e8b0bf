"""The page of a seed sweep (a results document with several ``run.seeds``; see :mod:`theory.runs.sweep`).

Top to bottom: the run, the overview figure with ranges across seeds, the claims whose verdict is not the
same at every seed (listed first), the verdict of every claim at each seed ("holds 20/20"), one section per
claim with the spread (min, median, max) of each measurement's comparable tightness figure, and the
seeds × checks table (outcome and figure). Each seed's own report is linked (``seed-<s>/index.html``).
Self-contained like the single-run page: inline CSS and SVG, no script.
"""
from __future__ import annotations

from . import overview
from .fmt import fmt, kv
from .page import CSS, anchor, badge
from ..analysis.verdicts import LABELS
from .text import esc, md_inline
from ..analysis.tightness import AXES


def _g(x) -> str:
    return "—" if x is None else fmt(float(x))


def render(doc: dict) -> str:
    from ..runs import sweep, tables

    a = sweep.analyse(doc)
    run = doc.get("run") or {}
    infos = {r.id: r.info for r in a.rows_by_seed[a.seeds[0]]}
    out = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>Theory harness — seed sweep ({len(a.seeds)} seeds)</title>", f"<style>{CSS}</style></head><body>"]
    out.append(f'<header><h1>Seed sweep: {len(a.seeds)} seeds</h1><p>Profile <strong>{esc(run.get("profile", "?"))}'
               f'</strong>; seeds {esc(", ".join(map(str, a.seeds)))}; {len(a.claims)} claims; '
               f'{len(a.unstable)} with a verdict that is not the same at every seed; '
               f'code {esc(str(run.get("commit"))[:12]) if run.get("commit") else "outside a git checkout"}'
               f'{"" if run.get("tree_clean") in (True, None) else " (with uncommitted changes)"}.</p>')
    out.append('<p class="small">Per seed: ' + " ".join(
        f'<a href="seed-{esc(s)}/index.html">seed {esc(s)}</a>' for s in a.seeds)
        + ' (each seed\'s own report). Also <a href="sweep.md">sweep.md</a> and <a href="sweep.csv">sweep.csv</a> '
        '(the seeds × checks table).</p>')
    out.append(f'<p class="small">{esc(a.alarms.text(a.failed))}</p>')
    out.append('<nav><a href="#unstable">Differs across seeds</a><a href="#verdicts">Verdicts</a>'
               '<a href="#claims">Claims</a><a href="#seeds-by-checks">Seeds × checks</a></nav></header>')
    out.append(overview.section([a.rows_by_seed[s] for s in a.seeds], anchor, "One mark per claim at the median of its headline tightness figure over the "
                                   "seeds, the bar spanning min to max; colour: the worst verdict over the seeds; "
                                   "black ring: the verdict is not the same at every seed. Click a mark for the "
                                   "claim's section."))
    out.append(f'<h2 id="unstable">Claims whose verdict is not the same at every seed ({len(a.unstable)})</h2>')
    out.append("<ul>" + "".join(f'<li><a href="#{anchor(c.claim)}">{esc(c.claim)}</a>: {esc(c.counts)}</li>'
                                for c in a.unstable) + "</ul>" if a.unstable else
               "<p>Every claim has the same verdict at every seed.</p>")
    out.append(_verdicts(a))
    out.append('<h2 id="claims">Claims</h2>')
    spreads: dict = {}
    for sp in a.spreads:
        spreads.setdefault(sp.claim, []).append(sp)
    for c in a.unstable + [c for c in a.claims if c.stable]:
        out.append(_claim(c, infos.get(c.claim), spreads.get(c.claim, []), a.seeds))
    out.append(_seeds_by_checks(a, tables))
    out.append(f'<footer class="small"><p>results.json schema {esc(doc.get("schema", "?"))}, generated '
               f'{esc(doc.get("generated", ""))}.</p></footer></body></html>\n')
    return "\n".join(out)


def _strip(c, seeds) -> str:
    return "".join(f'<span class="v v-{esc(c.verdicts.get(s, "not-encoded"))}" title="seed {esc(s)}: '
                   f'{esc(LABELS.get(c.verdicts.get(s), c.verdicts.get(s)))}">{esc(s)}</span>' for s in seeds)


def _verdicts(a) -> str:
    rows = []
    for c in a.unstable + [c for c in a.claims if c.stable]:
        vals = [f.value for f in c.figures.values() if f is not None and f.value is not None]
        kinds = {f.kind for f in c.figures.values() if f is not None}
        spread = (f'{esc("/".join(sorted(kinds)))} {_g(min(vals))} … {_g(max(vals))}' if vals else "")
        rows.append(f'<tr class="row" data-claim="{esc(c.claim)}"><td><a href="#{anchor(c.claim)}">{esc(c.claim)}</a>'
                    f'</td><td>{esc(c.paper)}</td><td>{esc(c.counts)}</td><td>{_strip(c, a.seeds)}</td>'
                    f'<td>{spread}</td></tr>')
    return (f'<h2 id="verdicts">Verdict of every claim at each seed</h2><p class="small">Claims whose verdict differs '
            f'come first. Headline figure: min … max over the seeds ({esc("; ".join(f"{k}: {v}" for k, v in AXES.items()))}).'
            '</p><div class="scroll"><table id="sweep-verdicts"><thead><tr><th>Claim</th><th>Paper</th><th>Verdicts'
            '</th><th>Per seed</th><th>Headline figure</th></tr></thead><tbody>' + "".join(rows)
            + "</tbody></table></div>")


def _claim(c, info, spreads, seeds) -> str:
    from ..analysis.verdicts import worst

    v = worst(c.verdicts.values())
    out = [f'<section class="claim" id="{anchor(c.claim)}"><h4>{badge(v)} <code>{esc(c.claim)}</code> — '
           f'{md_inline(c.title)}</h4><p class="sub">{esc(c.counts)} · '
           + " ".join(f'<a href="seed-{esc(s)}/index.html#{anchor(c.claim)}">seed {esc(s)}</a>' for s in seeds)
           + ' · <a href="#verdicts">verdicts ↑</a></p>']
    if info is not None and info.kind:
        out.append(f'<p class="small">kind: {esc(info.kind)}</p>')
    if spreads:
        body = "".join(
            f'<tr><td>{esc(sp.role)}</td><td><code>{esc(sp.test)}</code></td><td class="small">{esc(fmt(kv(sp.config, 30), 120))}'
            f'</td><td>{esc(sp.kind or "—")}</td>' + "".join(f"<td>{_g(x)}</td>" for x in sp.stats)
            + f'<td class="small">{esc(sweep_counts(sp.verdicts))}</td></tr>' for sp in spreads)
        out.append('<div class="scroll"><table class="spread"><thead><tr><th>Role</th><th>Test</th><th>Configuration'
                   '</th><th>Figure</th><th>min</th><th>median</th><th>max</th><th>Record verdicts</th></tr></thead>'
                   f"<tbody>{body}</tbody></table></div>")
    out.append("</section>")
    return "\n".join(out)


def sweep_counts(verdicts: dict) -> str:
    from ..runs.sweep import verdict_counts

    return verdict_counts(list(verdicts.values()))


def _seeds_by_checks(a, tables) -> str:
    head = "".join(f"<th>seed {esc(s)}</th>" for s in a.seeds)
    body = "".join(
        f'<tr><td><code>{esc(row["test"])}</code></td><td class="small">{esc(" ".join(row["claims"]))}</td>'
        + "".join(f'<td class="small">{esc(tables.cell_text(row["cells"].get(s)))}</td>' for s in a.seeds) + "</tr>"
        for row in a.table)
    return ('<h2 id="seeds-by-checks">Seeds × checks</h2><p class="small">Each cell: the test\'s outcome · the '
            'comparable tightness figure of its headline record (its worst as-stated check record). The same table '
            'is in sweep.md and sweep.csv.</p><div class="scroll"><table id="seeds-by-checks-table"><thead><tr>'
            f"<th>Check</th><th>Claims</th>{head}</tr></thead><tbody>{body}</tbody></table></div>")
