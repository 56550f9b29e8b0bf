"""``diff OLD NEW``: what moved between two runs (each a results.json or a report folder).

Per pair of runs at one seed (two single runs are compared whatever their seeds; two sweeps seed by seed;
a run and a sweep at the run's seed):

- claims added or removed: encoded (verdict other than "not encoded") in one run and not in the other;
- verdict changes, per claim (the verdict model of :func:`theory.analysis.verdicts.build_rows`);
- companions (wrong versions run through a check) that were rejected in OLD and are not in NEW, and
  companions that are gone;
- measurements whose comparable tightness figure (:mod:`theory.analysis.tightness`) moved by more than
  ``threshold`` (relative; default 10%): slack, err/tol and discrepancy by their value, a rate by its fitted
  value (the figure's observed).

A regression — the exit status of ``python -m theory diff`` is then 1 — is: holds (any "holds" verdict) →
violated or error; expected failure → holds; a companion rejected → not rejected.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from .load import RunsError, source
from .sweep import is_sweep, seeds, split

REG = '<span class="v v-violated">regression</span>'
HOLDS = ("holds", "holds-identity", "holds-in-part", "consistency")
BROKEN = ("violated", "error")


def is_regression(old: str, new: str) -> bool:
    return (old in HOLDS and new in BROKEN) or (old == "expected-failure" and new in HOLDS)


@dataclass
class Change:
    kind: str          # added | removed | verdict | companion | companion-gone | tightness
    claim: str
    old: str = ""
    new: str = ""
    detail: str = ""
    seed: str = ""
    regression: bool = False


@dataclass
class Diff:
    old: str
    new: str
    threshold: float
    changes: list = field(default_factory=list)

    @property
    def regressions(self) -> list:
        return [c for c in self.changes if c.regression]

    def of(self, kind: str) -> list:
        return [c for c in self.changes if c.kind == kind]


def _pairs(old: dict, new: dict) -> list[tuple[str, dict, dict]]:
    so, sn = split(old), split(new)
    if not is_sweep(old) and not is_sweep(new):
        (a, o), (b, n) = next(iter(so.items())), next(iter(sn.items()))
        return [("" if a == b else f"{a}→{b}", o, n)]
    common = [s for s in seeds(old) if s in sn]
    if not common:
        raise RunsError(f"cannot diff: no seed in common between {source(old)} (seeds {seeds(old)}) and "
                        f"{source(new)} (seeds {seeds(new)})")
    return [(str(s), so[s], sn[s]) for s in common]


def _keyed(records: list[dict], role: str) -> dict:
    from .sweep import _measurement_keys

    recs = [r for r in records if r.get("role", "check") == role]
    return dict(zip(_measurement_keys(recs), recs))


def _label(key: tuple) -> str:
    claim, _, test, cfg, k = key
    cfg = json.loads(cfg)
    bits = [test.split("::")[-1] or test]
    if cfg:
        bits.append(", ".join(f"{a}={b}" for a, b in sorted(cfg.items()))[:80])
    if k:
        bits.append(f"#{k + 1}")
    return " ".join(bits)


def _moved(o: dict, n: dict, kinds: dict, threshold: float) -> str | None:
    from ..analysis.tightness import figure

    fo, fn = figure(o, kinds.get(o.get("claim"), "")), figure(n, kinds.get(n.get("claim"), ""))
    if fo is None or fn is None or fo.kind != fn.kind:
        return None
    if fo.kind == "exponent":
        a, b = float(o["observed"]), float(n["observed"])
    else:
        a, b = fo.value, fn.value
    if a is None or b is None:
        return None
    rel = abs(b - a) / abs(a) if a else (float("inf") if b else 0.0)
    if rel <= threshold:
        return None
    what = f"{fo.text} → {fn.text}" if fo.text.startswith(fo.kind) else f"{fo.kind}: {fo.text} → {fn.text}"
    return what + (f" ({'+' if b >= a else '−'}{rel:.0%})" if rel != float("inf") else "")


def diff(old: dict, new: dict, threshold: float = 0.10) -> Diff:
    from ..analysis.verdicts import LABELS, build_rows

    out = Diff(source(old), source(new), threshold)
    for seed, o, n in _pairs(old, new):
        ro, rn = {r.id: r for r in build_rows(o)}, {r.id: r for r in build_rows(n)}
        eo = {c for c, r in ro.items() if r.verdict != "not-encoded"}
        en = {c for c, r in rn.items() if r.verdict != "not-encoded"}
        for c in sorted(en - eo):
            out.changes.append(Change("added", c, "", LABELS.get(rn[c].verdict, rn[c].verdict), seed=seed))
        for c in sorted(eo - en):
            out.changes.append(Change("removed", c, LABELS.get(ro[c].verdict, ro[c].verdict), "", seed=seed))
        for c in [c for c in ro if c in eo & en]:
            a, b = ro[c].verdict, rn[c].verdict
            if a != b:
                out.changes.append(Change("verdict", c, LABELS.get(a, a), LABELS.get(b, b), seed=seed,
                                          regression=is_regression(a, b)))
        co, cn = _keyed(o["records"], "companion"), _keyed(n["records"], "companion")
        for key, rec in co.items():
            if rec.get("verdict") != "holds":
                continue
            if key not in cn:
                out.changes.append(Change("companion-gone", key[0], "rejected", "absent", _label(key), seed))
            elif cn[key].get("verdict") != "holds":
                out.changes.append(Change("companion", key[0], "rejected", "not rejected", _label(key), seed,
                                          regression=True))
        kinds = {r.id: r.info.kind for r in list(ro.values()) + list(rn.values())}
        mo, mn = _keyed(o["records"], "check"), _keyed(n["records"], "check")
        for key in [k for k in mo if k in mn]:
            moved = _moved(mo[key], mn[key], kinds, threshold)
            if moved:
                out.changes.append(Change("tightness", key[0], "", "", f"{_label(key)} — {moved}", seed))
    return out


SECTIONS = (("added", "Claims added (encoded in NEW only)"), ("removed", "Claims removed (encoded in OLD only)"),
            ("verdict", "Verdict changes"), ("companion", "Companions that stopped rejecting their wrong version"),
            ("companion-gone", "Companions that are gone"), ("tightness", "Tightness figures that moved by more than {t}"))


def text(d: Diff) -> str:
    lines = [f"theory diff: {d.old} → {d.new}"]
    for kind, title in SECTIONS:
        cs = d.of(kind)
        if not cs:
            continue
        lines.append(f"{title.format(t=f'{d.threshold:.0%}')} ({len(cs)}):")
        for c in cs:
            what = f"{c.old} → {c.new}" if kind in ("verdict", "companion", "companion-gone") else (c.new or c.old)
            lines.append(f"  {'REGRESSION ' if c.regression else ''}{c.claim}"
                         f"{' [seed ' + c.seed + ']' if c.seed else ''}: "
                         + "; ".join(x for x in (what if kind != "tightness" else "", c.detail) if x))
    if len(lines) == 1:
        lines.append("no change in claims, verdicts, companions or tightness figures")
    lines.append(f"{len(d.regressions)} regression(s)")
    return "\n".join(lines) + "\n"


def html(d: Diff) -> str:
    from ..report.page import CSS, anchor
    from ..report.text import esc

    parts = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
             "<title>Theory harness — diff</title>", f"<style>{CSS}</style></head><body>",
             f"<h1>Diff of two runs</h1><p>OLD <code>{esc(d.old)}</code><br>NEW <code>{esc(d.new)}</code></p>",
             f'<p><strong class="{"err" if d.regressions else ""}">{len(d.regressions)} regression(s)</strong> '
             f'(holds → violated or error, expected failure → holds, a wrong version no longer rejected); '
             f"tightness threshold {d.threshold:.0%} relative.</p>"]
    for kind, title in SECTIONS:
        cs = d.of(kind)
        parts.append(f'<h2 id="{esc(kind)}">{esc(title.format(t=f"{d.threshold:.0%}"))} ({len(cs)})</h2>')
        if not cs:
            parts.append("<p>None.</p>")
            continue
        parts.append("<table><thead><tr><th></th><th>Claim</th><th>Seed</th><th>Old</th><th>New</th><th>Detail</th>"
                     "</tr></thead><tbody>" + "".join(
                         f'<tr class="{"regression" if c.regression else ""}"><td>'
                         f'{REG if c.regression else ""}</td>'
                         f'<td><code id="{anchor(c.claim)}-{i}">{esc(c.claim)}</code></td><td>{esc(c.seed)}</td>'
                         f"<td>{esc(c.old)}</td><td>{esc(c.new)}</td><td>{esc(c.detail)}</td></tr>"
                         for i, c in enumerate(cs)) + "</tbody></table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
