"""HTML tightness report built from the run's ``Measurement`` records only (issue 3).

``build(doc, outdir)`` writes ``outdir/index.html`` (atomically: a crash never leaves
a truncated page in place of the previous one) from a merged ``results.json``
document. The page only renders: every verdict, headline record and untested part comes from
:mod:`theory.analysis` (the one place that decides them). Modules: :mod:`.summary` (a headline figure's text),
:mod:`.plots` (deterministic inline SVG),
:mod:`.text` (registry markdown to HTML), :mod:`.page` (the document).
"""
from __future__ import annotations

import pathlib

from ..records import atomic_write
from ..analysis import build_rows, complete  # noqa: F401  (complete: kept importable from here)
from . import page


def render(doc: dict) -> str:
    """The page's HTML for a results document (deterministic in ``doc``); a seed sweep gets the sweep page."""
    if len((doc.get("run") or {}).get("seeds") or []) > 1:
        from . import sweep_page

        return sweep_page.render(doc)
    return page.render(doc, build_rows(doc))


def build(doc: dict, outdir) -> pathlib.Path:
    """Write ``outdir/index.html`` from a merged results document; returns its path."""
    out = pathlib.Path(outdir) / "index.html"
    atomic_write(out, render(doc))
    return out


def build_from_json(results_json, outdir=None) -> pathlib.Path:
    """Rebuild ``index.html`` from an existing ``results.json`` (or ``results.json.gz``, or a folder holding one;
    beside it unless ``outdir``)."""
    from ..runs.load import load

    doc = load(results_json)
    return build(doc, outdir or pathlib.Path(doc.pop("_source")).parent)
