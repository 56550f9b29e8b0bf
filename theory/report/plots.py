"""Inline SVG plots of record series, deterministic and with page-unique element IDs.

``series`` (see :class:`theory.records.Measurement`) is ``{name: {"x", "y", "xlabel",
"ylabel", "logx", "logy", "plot"}}``; series sharing a ``"plot"`` key share axes,
others get a figure each. Determinism: a fixed ``svg.hashsalt``, no date metadata,
the ``<metadata>`` block removed; every ``id`` / ``url(#…)`` / ``href="#…"`` of a
figure is prefixed with that figure's page-unique prefix, so many SVGs never
collide on one page.
"""
from __future__ import annotations

import io
import math
import re
from collections import OrderedDict

from .fmt import num

MAX_POINTS = 1500
_ID = re.compile(r'\bid="([^"]+)"')
_URL = re.compile(r"url\(#([^)]+)\)")
_HREF = re.compile(r'href="#([^"]+)"')


def group_series(series: dict) -> "OrderedDict[str, list[tuple[str, dict]]]":
    """Plots of one record: plot name -> [(series name, series)], in name order."""
    groups: "OrderedDict[str, list]" = OrderedDict()
    for name in sorted(series or {}):
        s = series[name]
        if not isinstance(s, dict) or "y" not in s:
            continue
        groups.setdefault(str(s.get("plot") or name), []).append((name, s))
    return groups


def shared_plots(records: list[dict]) -> "OrderedDict[str, list[tuple[str, dict]]]":
    """Plots that several records of one claim name by the same ``"plot"`` key: one figure each, overlaying
    every record's series (a series name seen twice gets the record's number)."""
    owners: dict[str, set] = {}
    for k, rec in enumerate(records):
        for s in (rec.get("series") or {}).values():
            if isinstance(s, dict) and "y" in s and s.get("plot"):
                owners.setdefault(str(s["plot"]), set()).add(k)
    shared = {key for key, ks in owners.items() if len(ks) > 1}
    names: dict[str, int] = {}
    for rec in records:
        for name, s in group_series(rec.get("series") or {}).items():
            for n, _ in s if name in shared else ():
                names[n] = names.get(n, 0) + 1
    out: "OrderedDict[str, list]" = OrderedDict()
    for k, rec in enumerate(records, 1):
        cfg = ", ".join(f"{a}={b}" for a, b in sorted((rec.get("config") or {}).items())) or f"record {k}"
        for name, s in group_series(rec.get("series") or {}).items():
            if name in shared:  # a name that several records use gets its record's configuration
                out.setdefault(name, []).extend((n if names[n] == 1 else f"{n} ({cfg})", m) for n, m in s)
    return out


def _floats(v) -> list[float]:
    out = []
    for a in v if isinstance(v, (list, tuple)) else [v]:
        f = num(a)
        out.append(float("nan") if f is None else f)
    return out


def _thin(x: list, y: list, logx: bool) -> tuple[list, list]:
    n = len(y)
    if n <= MAX_POINTS:
        return x, y
    if logx:  # keep log-spaced indices so the early part is not lost
        idx = sorted({min(n - 1, int(round(math.exp(i * math.log(n) / MAX_POINTS)) - 1)) for i in range(MAX_POINTS + 1)})
    else:
        step = n / MAX_POINTS
        idx = sorted({min(n - 1, int(i * step)) for i in range(MAX_POINTS)} | {n - 1})
    return [x[i] for i in idx], [y[i] for i in idx]


def _prefix_ids(svg: str, prefix: str) -> str:
    svg = _ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = _URL.sub(lambda m: f"url(#{prefix}{m.group(1)})", svg)
    return _HREF.sub(lambda m: f'href="#{prefix}{m.group(1)}"', svg)


def _clean(svg: str) -> str:
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    return svg.strip()


def render(title: str, members: list[tuple[str, dict]], prefix: str) -> str:
    """One figure as an inline ``<svg>`` string (raises on unusable data)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    rc = {"svg.hashsalt": prefix, "svg.fonttype": "none", "font.size": 9, "axes.titlesize": 9,
          "figure.dpi": 72, "lines.linewidth": 1.4, "lines.markersize": 3.5}
    with matplotlib.rc_context():
        matplotlib.rcdefaults()  # independent of whatever style a check set in this process
        matplotlib.rcParams.update(rc)
        fig, ax = plt.subplots(figsize=(6.2, 3.4))
        try:
            logx = any(bool(s.get("logx")) for _, s in members)
            logy = any(bool(s.get("logy")) for _, s in members)
            drawn = 0
            all_y: list[float] = []
            for name, s in members:
                y = _floats(s["y"])
                xr = s.get("x")
                if xr is None:
                    x = [float(i) for i in range(len(y))]
                else:
                    x = _floats(xr)
                if len(x) != len(y):
                    raise ValueError(f"series {name!r}: len(x)={len(x)} != len(y)={len(y)}")
                x, y = _thin(x, y, logx)
                ok = [(a, b) for a, b in zip(x, y) if math.isfinite(a) and math.isfinite(b)
                      and (not logx or a > 0) and (not logy or b > 0)]
                if not ok:
                    continue
                xs, ys = zip(*ok)
                all_y += ys
                ax.plot(xs, ys, marker="o" if len(xs) <= 40 else None, label=name)
                drawn += 1
            if not drawn:
                raise ValueError("no finite points to plot")
            if logx:
                ax.set_xscale("log")
            if logy and min(all_y) < max(all_y):
                ax.set_yscale("log")
            first = members[0][1]
            ax.set_xlabel(str(first.get("xlabel", "")))
            ax.set_ylabel(str(first.get("ylabel", "")))
            ax.set_title(title)
            ax.grid(True, which="major", alpha=0.3)
            if len(members) > 1:
                ax.legend(fontsize=7, loc="best", frameon=False)
            fig.subplots_adjust(left=0.14, right=0.98, bottom=0.15, top=0.9)
            buf = io.StringIO()
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        finally:
            plt.close(fig)
    return _prefix_ids(_clean(buf.getvalue()), prefix)


def sweep(records: list[dict]) -> tuple[str, list[tuple[str, dict]]] | None:
    """Observed and bound across a one-parameter sweep of a claim's records, when there is one.

    Applies when >= 2 records (not 'not-applicable') have numeric observed and bound and
    their configs differ in exactly one numeric key.
    """
    rs = [r for r in records if r.get("verdict") != "not-applicable"
          and num(r.get("observed")) is not None and num(r.get("bound")) is not None]
    if len(rs) < 2:
        return None
    keys = set.intersection(*(set(r.get("config") or {}) for r in rs))
    varying = [k for k in sorted(keys)
               if len({repr(r["config"][k]) for r in rs}) > 1]
    if len(varying) != 1 or any(set(r.get("config") or {}) != keys for r in rs):
        return None
    k = varying[0]
    if any(num(r["config"][k]) is None for r in rs):
        return None
    if len({repr({kk: v for kk, v in r["config"].items() if kk != k}) for r in rs}) != 1:
        return None
    if len({(r.get("tightness") or "") for r in rs}) != 1:
        return None
    rs = sorted(rs, key=lambda r: num(r["config"][k]))
    xs = [num(r["config"][k]) for r in rs]
    obs = [num(r["observed"]) for r in rs]
    bnd = [num(r["bound"]) for r in rs]
    pos = all(v > 0 for v in obs + bnd if math.isfinite(v))
    spread = max(abs(v) for v in obs + bnd if math.isfinite(v) and v != 0) / \
        max(min(abs(v) for v in obs + bnd if math.isfinite(v) and v != 0), 1e-300) if pos else 1
    logy = pos and spread > 50
    logx = all(x > 0 for x in xs) and max(xs) / min(xs) > 50
    base = {"x": xs, "xlabel": k, "ylabel": "value", "logx": logx, "logy": logy}
    return f"observed vs bound across {k}", [("observed", dict(base, y=obs)), ("bound", dict(base, y=bnd))]
