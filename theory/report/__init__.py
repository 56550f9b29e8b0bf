"""HTML tightness report built from results.json records only (placeholder; see issue 3)."""
from __future__ import annotations

import html
import pathlib

from ..records import atomic_write


def build(doc: dict, outdir) -> pathlib.Path:
    """Write ``outdir/index.html`` from a merged results document."""
    rows = "".join(f"<tr><td>{html.escape(r['claim'])}</td><td>{html.escape(r['verdict'])}</td>"
                   f"<td>{html.escape(str(r.get('ratio')))}</td></tr>" for r in doc["records"])
    out = pathlib.Path(outdir) / "index.html"
    atomic_write(out, f"<!doctype html><html><head><meta charset='utf-8'><title>theory report</title></head>"
                      f"<body><table>{rows}</table></body></html>")
    return out
