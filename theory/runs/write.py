"""Write a merged document: ``results.json`` and ``index.html`` (and, for a sweep, ``sweep.md``, ``sweep.csv``
and one folder per seed, ``seed-<s>/``, with that seed's own report)."""
from __future__ import annotations

import pathlib

from ..records import atomic_write, write_results
from . import sweep, tables


def sweep_claims(a: sweep.Analysis) -> dict:
    """The ``claims`` section of a sweep document: per claim its verdict at each seed, counts, stability."""
    from ..analysis.verdicts import LABELS, worst

    return {c.claim: {"verdict": worst(c.verdicts.values()), "label": LABELS.get(worst(c.verdicts.values()), ""),
                      "verdicts": {str(s): v for s, v in c.verdicts.items()}, "counts": c.counts,
                      "stable": c.stable} for c in a.claims}


def write(doc: dict, outdir, inputs=()) -> pathlib.Path:
    """Write ``doc`` (completed with the registry snapshot and claims section) and its page into ``outdir``.

    For a sweep, each seed's report goes to ``outdir/seed-<s>/`` unless that folder is one of ``inputs``
    (``report --seeds`` runs each seed there first)."""
    from ..analysis import complete
    from ..report import build
    from ..analysis.registry import snapshot

    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    doc.pop("_source", None)
    if not sweep.is_sweep(doc):
        doc = complete(doc)
        write_results(doc, out / "results.json")
        return build(doc, out)
    given = {pathlib.Path(p).resolve() for p in inputs}
    given |= {q.parent for q in given if q.name == "results.json"}
    for s, one in sweep.split(doc).items():
        d = (out / f"seed-{s}").resolve()
        if d not in given:
            one = complete(one)
            write_results(one, d / "results.json")
            build(one, d)
    doc.setdefault("registry", snapshot())
    a = sweep.analyse(doc)
    doc["claims"] = sweep_claims(a)
    atomic_write(out / "sweep.csv", tables.csv_text(a))
    atomic_write(out / "sweep.md", tables.markdown(a))
    write_results(doc, out / "results.json")
    return build(doc, out)
