"""``claims``: the claim registries and their checks.

    python -m theory claims                 every claim: ID, checks (count), title
    python -m theory claims --missing       claims that no check names (with the registry's reason)
    python -m theory claims --json          the same as JSON
    python -m theory claims <ID>            one entry in full, with the files and lines of its checks

``--claims PATH`` adds a registry (also ``$THEORY_CLAIMS_PATH``). Exit status 1 when a registry entry has
no check and no recorded reason, or a check names an ID that no registry holds.
"""
from __future__ import annotations

import json
import textwrap

from .. import claims as _claims
from .. import coverage


def register(sub) -> None:
    c = sub.add_parser("claims", help="list the claim registries' entries and which checks cover them")
    c.add_argument("id", nargs="?", help="print this claim's entry and its checks")
    c.add_argument("--missing", action="store_true", help="only the claims that no check names")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.add_argument("--claims", action="append", default=[], metavar="PATH", help="an extra registry (repeatable)")
    c.add_argument("--checks", action="append", default=None, metavar="DIR",
                   help="folders to search for checks (default: the repository's checks/ and each extra registry's folder)")
    c.set_defaults(func=run)


def _entry(c: _claims.Claim, refs: list[str]) -> str:
    paper = _claims.papers()[c.paper]
    lines = [f"{c.id} — {c.title}", f"  paper: {paper.citation()}", f"  where: {c.where}", f"  kind: {c.kind}"]
    if c.reading != "as-stated":
        lines.append(f"  reading: {c.reading} of {c.reading_of}")
    for label, text in (("statement", c.statement), ("hypotheses", c.hypotheses), ("measures", c.measures),
                        ("quote", c.quote)):
        if text:
            lines.append(f"  {label}:")
            lines += ["    " + ln for ln in textwrap.wrap(" ".join(text.split()), 100)]
    lines.append(f"  checkable: {c.checkable}" + (f" — {' '.join(c.why.split())}" if c.why else ""))
    if c.identity:
        lines.append("  identity: the claim holds for any numbers; its verdict reads 'holds (identity)'")
    if c.parts:
        lines.append("  parts: " + "; ".join(c.parts))
    for k, v in c.review.items():
        lines.append(f"  review {k}: {' '.join(v.split())}")
    lines.append(f"  checks ({len(refs)}):" + ("".join(f"\n    {r}" for r in refs) if refs else " none"))
    return "\n".join(lines)


def run(ns, extra) -> int:
    try:
        _claims.add_registries(ns.claims)
        cat = _claims.catalog()
    except _claims.RegistryError as e:
        print(f"theory claims: {e}")
        return 2
    refs = coverage.references(ns.checks)
    if ns.id:
        try:
            c = _claims.get(ns.id)
        except _claims.UnknownClaimError as e:
            print(f"theory claims: {e}")
            return 2
        print(json.dumps({**c.to_json(), "checks": refs.get(c.id, [])}, indent=1) if ns.json
              else _entry(c, refs.get(c.id, [])))
        return 0
    rows = [(cid, c) for cid, c in cat.items() if not (ns.missing and cid in refs)]
    probs = coverage.problems(ns.checks)
    if ns.json:
        print(json.dumps({"claims": [{"id": cid, "title": c.title, "checks": len(refs.get(cid, [])),
                                      "checkable": c.checkable, "why": c.why} for cid, c in rows],
                          "problems": probs}, indent=1))
    else:
        for cid, c in rows:
            n = len(refs.get(cid, []))
            why = f"  [{c.checkable}: {' '.join(c.why.split())[:90]}]" if not n and c.why else ""
            print(f"{'MISS' if not n else f'{n:4d}'} {cid:30s} {c.title}{why}")
        per = {}
        for cid, c in cat.items():
            per.setdefault(c.paper, [0, 0])
            per[c.paper][0] += cid in refs
            per[c.paper][1] += 1
        for p, (h, n) in per.items():
            print(f"{p}: {h}/{n} claims named by checks")
        for pr in probs:
            print(f"problem: {pr}")
    return 1 if probs else 0
