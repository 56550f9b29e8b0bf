"""Which paper checks exercise a function of ``theory/`` (so a mutant there is run against those checks only).

A name graph is built with :mod:`ast` over ``theory/`` and ``fixtures/``: for every function (or method, or
class), the names its body mentions. From the mutated function, callers are followed upwards (by name, within
``depth`` levels), and every check file under ``checks/<paper>/`` that mentions one of the names is selected.
Selection by name over-approximates (two functions of the same name are one node): a mutant is then run against
more checks than strictly needed, never fewer.
"""
from __future__ import annotations

import ast
import functools
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


def name_levels(function: str, graph: dict[str, set[str]], depth: int = 3) -> dict[str, int]:
    """The function's own names (``Class.method`` gives both) at level 0 and its callers up to ``depth`` levels, each
    name at the first level it is reached."""
    frontier = {p for p in function.split(".") if p}
    levels = dict.fromkeys(frontier, 0)
    for k in range(1, depth + 1):
        frontier = {c for n in frontier for c in graph.get(n, ())} - set(levels)
        levels.update(dict.fromkeys(frontier, k))
    return levels


def names_reaching(function: str, graph: dict[str, set[str]], depth: int = 3) -> set[str]:
    """The names of :func:`name_levels` as a set."""
    return set(name_levels(function, graph, depth))


def ranked_check_files(root: pathlib.Path, levels: dict[str, int], seconds: dict[str, float] | None = None) -> list[str]:
    """:func:`check_files` of ``levels``' names, the files that mention the mutated function itself first, then its
    direct callers, …; fastest first within a level (``seconds`` per file, 60 s when unknown). A caught mutant then
    stops (``-x``) on a check close to it instead of after every fast check that only shares a name far up."""
    files = check_files(root, set(levels))

    def level(f: str) -> int:
        names = set(levels) & _file_names(root / f)
        return min((levels[n] for n in names), default=len(levels))

    return sorted(files, key=lambda f: (level(f), (seconds or {}).get(f, 60.0), f))


@functools.lru_cache(maxsize=None)
def _file_names(path: pathlib.Path) -> frozenset:
    """The names a source file mentions (parsed once per audit, however many mutants select it)."""
    return frozenset(_mentions(ast.parse(path.read_text(encoding="utf-8"))))


def check_files(root: pathlib.Path, names: set[str]) -> list[str]:
    """Paper check files (``checks/<paper>/*.py``, helpers included through the tests that import them) that
    mention one of ``names``; helper modules (``_x.py``) count for every test file of their folder."""
    out = []
    for d in paper_check_dirs(root / "checks"):
        files = sorted(d.glob("*.py"))
        hit_helpers = any(f.name.startswith("_") and f.name != "__init__.py" and names & _file_names(f) for f in files)
        for f in files:
            if not f.name.startswith("test_"):
                continue
            if hit_helpers or names & _file_names(f):
                out.append(str(f.relative_to(root)))
    return out
