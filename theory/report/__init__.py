"""HTML tightness report built from the run's ``Measurement`` records only (issue 3).

``build(doc, outdir)`` writes ``outdir/index.html`` (atomically: a crash never leaves
a truncated page in place of the previous one) from a merged ``results.json``
document. Modules: :mod:`.catalog_info` (catalog fields per claim), :mod:`.summary`
(per-claim verdict and headline figure), :mod:`.plots` (deterministic inline SVG),
:mod:`.text` (catalog markdown to HTML), :mod:`.page` (the document).
"""
from __future__ import annotations

import json
import pathlib

from ..records import atomic_write
from . import page, summary


def render(doc: dict) -> str:
    """The page's HTML for a results document (deterministic in ``doc``)."""
    return page.render(doc, summary.build_rows(doc))


def build(doc: dict, outdir) -> pathlib.Path:
    """Write ``outdir/index.html`` from a merged results document; returns its path."""
    out = pathlib.Path(outdir) / "index.html"
    atomic_write(out, render(doc))
    return out


def build_from_json(results_json, outdir=None) -> pathlib.Path:
    """Rebuild ``index.html`` from an existing ``results.json`` (beside it unless ``outdir``)."""
    p = pathlib.Path(results_json)
    return build(json.loads(p.read_text(encoding="utf-8")), outdir or p.parent)
