"""Which paper checks exercise a function of ``theory/`` (so a mutant there is run against those checks only).

A name graph is built with :mod:`ast` over ``theory/`` and ``fixtures/``: for every function (or method, or
class), the names its body mentions. From the mutated function, callers are followed upwards (by name, within
``depth`` levels), and every check file under ``checks/<paper>/`` that mentions one of the names is selected.
Selection by name over-approximates (two functions of the same name are one node): a mutant is then run against
more checks than strictly needed, never fewer.
"""
from __future__ import annotations

import ast
import pathlib

from ..coverage import paper_check_dirs

SOURCE_DIRS = ("theory", "fixtures")


def _mentions(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def name_graph(root: pathlib.Path) -> dict[str, set[str]]:
    """callee name → names of the functions/classes whose bodies mention it."""
    callers: dict[str, set[str]] = {}
    for d in SOURCE_DIRS:
        for f in sorted((root / d).rglob("*.py")):
            if "mutants" in f.parts:
                continue
            tree = ast.parse(f.read_text(encoding="utf-8"))
            for n in ast.walk(tree):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    for used in _mentions(n) - {n.name}:
                        callers.setdefault(used, set()).add(n.name)
    return callers


def names_reaching(function: str, graph: dict[str, set[str]], depth: int = 3) -> set[str]:
    """The function's own names (``Class.method`` gives both) and its callers up to ``depth`` levels."""
    frontier = {p for p in function.split(".") if p}
    seen = set(frontier)
    for _ in range(depth):
        frontier = {c for n in frontier for c in graph.get(n, ())} - seen
        seen |= frontier
    return seen


def check_files(root: pathlib.Path, names: set[str]) -> list[str]:
    """Paper check files (``checks/<paper>/*.py``, helpers included through the tests that import them) that
    mention one of ``names``; helper modules (``_x.py``) count for every test file of their folder."""
    out = []
    for d in paper_check_dirs(root / "checks"):
        files = sorted(d.glob("*.py"))
        hit_helpers = any(f.name.startswith("_") and f.name != "__init__.py" and names & _mentions(ast.parse(f.read_text()))
                          for f in files)
        for f in files:
            if not f.name.startswith("test_"):
                continue
            if hit_helpers or names & _mentions(ast.parse(f.read_text(encoding="utf-8"))):
                out.append(str(f.relative_to(root)))
    return out
