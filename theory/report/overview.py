"""The overview figure at the top of the page: one mark per claim, grouped by paper, coloured by verdict.

Static inline SVG (no script, nothing external). One column per figure kind of
:mod:`theory.analysis.tightness` — inequalities (slack, log axis, 1 = tight, the side where the bound is
crossed shaded, vacuous claims in their own shaded band), identities (|error| ÷ tolerance), rates and limits
(fitted − claimed, with the CI as a bar), expected failures (factor off) — plus a strip for claims without a
comparable figure. One row per paper. Across seeds (a sweep), a mark sits at the median and a bar spans the
range; a black ring says the verdict is not the same at every seed. Every mark is a link to its claim's
section (``page.anchor``) with a tooltip (``<title>``): claim, verdict(s), figure.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from .text import esc
from ..analysis.tightness import KINDS, Figure, figure

COLOURS = {"holds": "#2e7d32", "holds-identity": "#66bb6a", "holds-in-part": "#9ccc65", "consistency": "#c0ca33",
           "violated": "#d32f2f", "error": "#5d0000", "expected-failure": "#7b1fa2", "vacuous": "#f9a825",
           "inconclusive": "#78909c", "not-applicable": "#90a4ae", "not-encoded": "#d0d0d0"}
TITLES = {"slack": ("Inequalities", "slack = bound ÷ observed"), "err/tol": ("Identities", "|error| ÷ tolerance"),
          "exponent": ("Rates and limits", "fitted − claimed (bar: CI or seeds)"),
          "discrepancy": ("Expected failures", "factor the printed form is off"), None: ("No comparable figure", "")}
# Axis ranges (log10 for the log kinds); values outside are drawn at the edge as a triangle.
RANGES = {"slack": (-2.0, 6.0), "err/tol": (-8.0, 2.0), "discrepancy": (0.0, 12.0)}
TICKS = {"slack": (-2, 0, 2, 4, 6), "err/tol": (-8, -6, -4, -2, 0, 2), "discrepancy": (0, 3, 6, 9, 12)}
COLS = list(KINDS) + [None]
LEFT, COLW, GAP, NONEW, R, TOP = 90, 206, 22, 214, 4.5, 50


@dataclass
class Mark:
    """One claim on the overview: verdicts and figures at one or several seeds."""

    claim: str
    paper: str
    anchor: str
    verdicts: list = field(default_factory=list)
    figures: list = field(default_factory=list)   # Figure or None, one per seed

    @property
    def verdict(self) -> str:
        from ..analysis.verdicts import worst

        return worst(self.verdicts)

    @property
    def varies(self) -> bool:
        return len(set(self.verdicts)) > 1

    @property
    def kind(self) -> str | None:
        kinds = [f.kind for f in self.figures if f is not None and f.position is not None]
        return max(set(kinds), key=kinds.count) if kinds else None

    def positions(self) -> list[float]:
        return [f.position for f in self.figures if f is not None and f.kind == self.kind and f.position is not None]


def marks(rows_by_seed: list, anchor) -> list[Mark]:
    """Marks from one list of summary rows per seed (a single run: one list)."""
    out: dict[str, Mark] = {}
    for rows in rows_by_seed:
        for r in rows:
            m = out.setdefault(r.id, Mark(r.id, r.info.paper, anchor(r.id)))
            m.verdicts.append(r.verdict)
            m.figures.append(figure(r.headline, r.info.kind) if r.headline else None)
    return list(out.values())


def _x(kind, pos: float, x0: float, lo: float, hi: float) -> tuple[float, bool]:
    clamped = pos < lo or pos > hi
    pos = min(max(pos, lo), hi)
    return x0 + 8 + (pos - lo) / (hi - lo) * (COLW - 16), clamped


def _range(kind, ms: list[Mark]) -> tuple[float, float]:
    if kind in RANGES:
        return RANGES[kind]
    vals = [abs(p) for m in ms for p in m.positions()]
    vals += [abs(c) for m in ms for f in m.figures if f is not None and f.ci for c in f.ci if math.isfinite(c)]
    r = min(max([0.5] + [v * 1.1 for v in vals]), 5.0)
    return -r, r


def _tick_label(kind, t: float) -> str:
    if kind in ("slack", "err/tol", "discrepancy"):
        return {0: "1", 1: "10", -1: "0.1", 2: "100", -2: "0.01"}.get(t, f"1e{t:g}")
    return f"{t:.2g}"


def _tooltip(m: Mark) -> str:
    from ..analysis.verdicts import LABELS

    vs = [LABELS.get(v, v) for v in m.verdicts]
    verdict = vs[0] if len(set(vs)) == 1 else ", ".join(f"{v} {vs.count(v)}/{len(vs)}" for v in dict.fromkeys(vs))
    figs = [f.text for f in m.figures if f is not None]
    fig = figs[0] if len(set(figs)) == 1 else (f"{len(figs)} seeds; median position {_median(m.positions()):.3g}"
                                              if m.positions() else "")
    return f"{m.claim}: {verdict}" + (f" — {fig}" if fig else "")


def _median(xs):
    return statistics.median(xs) if xs else float("nan")


def _place(items: list[tuple[float, Mark]], gap: float) -> list[tuple[float, int, Mark]]:
    """Stack marks so none overlaps: the lowest free lane for each x, left to right."""
    lanes: list[float] = []
    out = []
    for x, m in sorted(items, key=lambda t: (t[0], t[1].claim)):
        k = next((i for i, last in enumerate(lanes) if x - last >= gap), None)
        if k is None:
            lanes.append(x)
            k = len(lanes) - 1
        lanes[k] = x
        out.append((x, k, m))
    return out


def _mark_svg(m: Mark, x: float, y: float, clamped: bool, span: tuple | None) -> str:
    col = COLOURS.get(m.verdict, "#999")
    parts = [f'<a href="#{esc(m.anchor)}" class="ov-mark" data-mark="{esc(m.claim)}" '
             f'data-verdict="{esc(m.verdict)}"><title>{esc(_tooltip(m))}</title>']
    if span:
        parts.append(f'<line x1="{span[0]:.1f}" x2="{span[1]:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{col}" '
                     f'stroke-width="2" opacity="0.7"/>')
    ring = ' stroke="#000" stroke-width="1.6"' if m.varies else ' stroke="#fff" stroke-width="0.8"'
    if clamped:
        parts.append(f'<path d="M{x - R:.1f},{y + R:.1f} L{x + R:.1f},{y + R:.1f} L{x:.1f},{y - R:.1f} Z" '
                     f'fill="{col}"{ring}/>')
    else:
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{R}" fill="{col}"{ring}/>')
    parts.append("</a>")
    return "".join(parts)


def render(ms: list[Mark], caption: str = "") -> str:
    """The overview as a ``<figure>`` holding one inline SVG (empty string when there is no claim)."""
    if not ms:
        return ""
    papers = list(dict.fromkeys(m.paper for m in ms))
    by_col = {c: [m for m in ms if m.kind == c] for c in COLS}
    ranges = {c: _range(c, by_col[c]) for c in KINDS}
    x0s, x = {}, LEFT
    for c in COLS:
        x0s[c] = x
        x += COLW + GAP if c is not None else NONEW
    width = x + 10
    body, y = [], TOP
    lane_h = 2 * R + 3
    for p in papers:
        cells, height, slack_vac = {}, 0, 0
        for c in COLS:
            pm = [m for m in by_col[c] if m.paper == p]
            if c is None:
                per = max(1, int((NONEW - 12) // lane_h))
                placed = [(x0s[c] + 8 + (i % per) * lane_h, i // per, m, False, None) for i, m in enumerate(pm)]
            else:
                lo, hi = ranges[c]
                items, vac = [], []
                for m in pm:
                    pos = m.positions()
                    xm, cl = _x(c, _median(pos), x0s[c], lo, hi)
                    span = None
                    cis = [f.ci for f in m.figures if f is not None and f.ci] if len(pos) == 1 else []
                    ends = [min(pos), max(pos)] if len(pos) > 1 else (list(cis[0]) if cis else [])
                    if ends and all(math.isfinite(e) for e in ends):
                        span = (_x(c, ends[0], x0s[c], lo, hi)[0], _x(c, ends[1], x0s[c], lo, hi)[0])
                    (vac if c == "slack" and m.verdict == "vacuous" else items).append((xm, m, cl, span))
                placed, nv = [], 0
                for group in (vac, items):  # vacuous marks in their own lanes on top
                    info = {id(m): (cl, span) for _, m, cl, span in group}
                    lanes = _place([(xm, m) for xm, m, _, _ in group], 2 * R + 1)
                    placed += [(xm, k + nv, m, *info[id(m)]) for xm, k, m in lanes]
                    if group is vac:
                        nv = max((k for _, k, _ in lanes), default=-1) + 1
                if c == "slack":
                    slack_vac = nv
            cells[c] = placed
            height = max(height, max((k for _, k, *_ in placed), default=-1) + 1)
        row_h = max(height, 1) * lane_h + 10
        body.append(f'<text x="6" y="{y + row_h / 2 + 4:.1f}" class="ov-paper">{esc(p)}</text>')
        body.append(f'<line x1="{LEFT}" x2="{width - 10}" y1="{y + row_h:.1f}" y2="{y + row_h:.1f}" stroke="#ddd"/>')
        for c in KINDS:
            lo, hi = ranges[c]
            xa = x0s[c]
            if c == "slack":  # the side where the bound is crossed, and the band of vacuous claims
                xt = _x(c, 0.0, xa, lo, hi)[0]
                body.append(f'<rect x="{xa + 8}" y="{y + 2}" width="{xt - xa - 8:.1f}" height="{row_h - 4}" '
                            f'fill="#fdecea"/>')
                if slack_vac:
                    body.append(f'<rect x="{xa + 8}" y="{y + 3}" width="{COLW - 16}" height="{slack_vac * lane_h + 2:.1f}" '
                                f'fill="#fff3c4" class="ov-vacuous"><title>vacuous: no better than a trivial bound '
                                f'(certified by the check)</title></rect>')
            ref = 0.0 if c != "discrepancy" else None
            if ref is not None:
                xr = _x(c, ref, xa, lo, hi)[0]
                body.append(f'<line x1="{xr:.1f}" x2="{xr:.1f}" y1="{y + 2}" y2="{y + row_h - 2}" stroke="#888" '
                            f'stroke-dasharray="3,2"/>')
        for c in COLS:
            for xm, k, m, cl, span in cells[c]:
                body.append(_mark_svg(m, xm, y + 7 + k * lane_h, cl, span))
        y += row_h
    head = []
    for c in COLS:
        t1, t2 = TITLES[c]
        xa = x0s[c]
        head.append(f'<text x="{xa + 8}" y="16" class="ov-h">{esc(t1)} ({len(by_col[c])})</text>'
                    f'<text x="{xa + 8}" y="30" class="ov-s">{esc(t2)}</text>')
        if c is not None:
            lo, hi = ranges[c]
            ticks = TICKS.get(c) or (lo, 0.0, hi)
            for t in ticks:
                xt = _x(c, t, xa, lo, hi)[0]
                label = _tick_label(c, t) + (" tight" if c == "slack" and t == 0 else "") + \
                    (" tol" if c == "err/tol" and t == 0 else "")
                head.append(f'<line x1="{xt:.1f}" x2="{xt:.1f}" y1="{TOP - 6}" y2="{y}" stroke="#eee"/>'
                            f'<text x="{xt:.1f}" y="{TOP - 9}" class="ov-t" text-anchor="middle">{esc(label)}</text>')
    legend, lx = [], LEFT
    y += 16
    present = [v for v in COLOURS if any(m.verdict == v for m in ms)]
    from ..analysis.verdicts import LABELS

    for v in present:
        legend.append(f'<circle cx="{lx}" cy="{y}" r="{R}" fill="{COLOURS[v]}"/>'
                      f'<text x="{lx + 8}" y="{y + 4}" class="ov-t">{esc(LABELS.get(v, v))}</text>')
        lx += 14 + 6.2 * len(LABELS.get(v, v))
    if any(m.varies for m in ms):
        legend.append(f'<circle cx="{lx}" cy="{y}" r="{R}" fill="#fff" stroke="#000" stroke-width="1.6"/>'
                      f'<text x="{lx + 8}" y="{y + 4}" class="ov-t">verdict differs across seeds</text>')
    legend.append(f'<path d="M{lx + 190 - R},{y + R} L{lx + 190 + R},{y + R} L{lx + 190},{y - R} Z" fill="#777"/>'
                  f'<text x="{lx + 198}" y="{y + 4}" class="ov-t">beyond the axis</text>')
    height = y + 12
    style = ("<style>.ov-h{font:600 12px sans-serif}.ov-s,.ov-t{font:10px sans-serif;fill:#444}"
             ".ov-paper{font:600 11px sans-serif}a.ov-mark:hover circle,a.ov-mark:hover path{stroke:#000;"
             "stroke-width:2}</style>")
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" id="overview-svg" width="{width}" height="{height:.0f}" '
           f'viewBox="0 0 {width} {height:.0f}" role="img" aria-label="Tightness overview">{style}'
           + "".join(head) + "".join(body) + "".join(legend) + "</svg>")
    cap = caption or ("One mark per claim (its headline record), grouped by paper, coloured by verdict; click a mark "
                      "for the claim's section. Slack: 1 = tight, the pink side is where a bound is crossed, the "
                      "yellow band holds claims certified vacuous. Marks beyond an axis sit at its edge as triangles.")
    return (f'<figure id="overview" class="overview"><div class="scroll">{svg}</div>'
            f'<figcaption class="small">{esc(cap)}</figcaption></figure>')


def section(rows_by_seed: list, anchor, caption: str = "") -> str:
    """:func:`render` of :func:`marks`, never raising: a figure that cannot be drawn must not cost the page."""
    try:
        return render(marks(rows_by_seed, anchor), caption)
    except Exception as e:  # noqa: BLE001 - the page is written at the end of a run, whatever the records hold
        return f'<p class="err">the overview figure could not be drawn: {esc(type(e).__name__)}: {esc(e)}</p>'
