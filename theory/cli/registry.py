"""``claims``: the claim registries and their checks.

    python -m theory claims                 every claim: ID, checks (count), title
    python -m theory claims --missing       claims that no check names (with the registry's reason)
    python -m theory claims --json          the same as JSON
    python -m theory claims <ID>            one entry in full, with the tests that carry its claim marker
                                            (pytest node IDs and the file:line of each test function)

``--claims PATH`` adds a registry (also ``$THEORY_CLAIMS_PATH``). Exit status 1 when a registry entry has
no check and no recorded reason, or a check names an ID that no registry holds.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import io
import json
import os
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


def _rel(path) -> str:
    """``path`` relative to the current folder when it lies below it, else absolute."""
    p = os.path.abspath(str(path))
    r = os.path.relpath(p)
    return p if r.startswith("..") else r


@functools.lru_cache(maxsize=64)
def _def_lines(path: str) -> dict:
    """(function name, line of its first decorator or def) -> line of its ``def`` in the file at ``path``."""
    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except (OSError, SyntaxError, ValueError):
        return {}
    return {(n.name, min([n.lineno] + [d.lineno for d in n.decorator_list])): n.lineno for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


class _Marked:
    """pytest plugin: the collected items that carry ``@pytest.mark.claim(cid)``."""

    def __init__(self, cid: str):
        self.cid, self.tests = cid, []

    def pytest_collection_finish(self, session):
        for item in session.items:
            if self.cid in [m.args[0] for m in item.iter_markers("claim") if m.args]:
                fn = getattr(item, "function", None)
                line = (item.location[1] or 0) + 1
                if fn is not None:
                    code = fn.__code__
                    line = _def_lines(code.co_filename).get((fn.__name__, code.co_firstlineno), code.co_firstlineno)
                self.tests.append({"nodeid": item.nodeid, "file": _rel(item.path), "line": line})


def marked_tests(cid: str, files, claims_paths=()) -> tuple[list[dict], str]:
    """The tests that carry the claim marker ``cid`` among ``files``, by pytest's own collection (nothing runs).

    Args:
        cid: the claim ID.
        files: the check files to collect (those that name the ID, :func:`theory.coverage.references`).
        claims_paths: extra registries (``--claims``) the collection needs.

    Returns ``(tests, problem)``: each test as ``{"nodeid", "file", "line"}`` (the line of its function's ``def``),
    and "" or why the collection failed (then ``tests`` is empty).

    >>> tests, problem = marked_tests("zhu2022/lem-1", [])
    >>> tests, problem
    ([], '')
    """
    files = sorted(dict.fromkeys(str(f) for f in files))
    if not files:
        return [], ""
    import pytest

    grab = _Marked(cid)
    args = [*files, "--collect-only", "-q", "--e2e", "--report", "none", "-p", "no:cacheprovider", "-p", "no:xdist"]
    for c in claims_paths:
        args += ["--claims", str(c)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = pytest.main(args, plugins=[grab])
    if int(rc) not in (0, 5):
        tail = " | ".join(ln for ln in out.getvalue().strip().splitlines()[-3:])
        return [], f"pytest could not collect {len(files)} file(s) (exit {int(rc)}): {tail}"
    return grab.tests, ""


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
    lines += refs
    return "\n".join(lines)


def _tests_block(tests: list[dict], refs: list[str], problem: str) -> list[str]:
    """The entry's lines about its checks: the tests with the claim marker, else the plain references."""
    if tests:
        nfun = len({(t["file"], t["line"]) for t in tests})
        w = max(len(t["nodeid"]) for t in tests)
        return [f"  tests with its claim marker ({len(tests)} in {nfun} test function{'s' * (nfun > 1)}):"] + \
               [f"    {t['nodeid']:{w}s}  {t['file']}:{t['line']}" for t in tests]
    head = "  tests with its claim marker: none" + (f" ({problem})" if problem else "")
    return [head] + ([f"  named at ({len(refs)}):"] + [f"    {r}" for r in refs] if refs else [])


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
        where = refs.get(c.id, [])
        tests, problem = marked_tests(c.id, [r.rsplit(":", 1)[0] for r in where], ns.claims)
        if ns.json:
            print(json.dumps({**c.to_json(), "tests": tests, "checks": [f"{t['file']}:{t['line']}" for t in tests],
                              "named_at": where, **({"problem": problem} if problem else {})}, indent=1))
        else:
            print(_entry(c, _tests_block(tests, where, problem)))
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
