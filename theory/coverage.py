"""Which registry claims have checks: claim markers found in check files, and entries without one.

A check names its claim with ``@pytest.mark.claim("<id>")`` (or ``record(..., claim="<id>")`` for a
second claim it records); :func:`references` finds those IDs as quoted strings in the ``.py`` files under
the given folders, with file and line. An entry without any check must say why in the registry
(``checkable = "no"`` and ``why``); :func:`problems` lists the entries that do not, and the IDs that
checks name but no registry holds.
"""
from __future__ import annotations

import pathlib
import re
from collections import defaultdict

from . import claims as _claims

QUOTED_ID = re.compile(r"""["']([a-z]+[0-9]{4}/[a-z]+-[A-Za-z0-9.\-]+)["']""")
NO_CLAIM_DIRS = ("core", "report")  # checks/ folders that test the harness itself, not a paper


def paper_check_dirs(checks: pathlib.Path) -> list[pathlib.Path]:
    """The folders of ``checks`` that hold checks of papers (not the harness's own tests)."""
    return sorted(p for p in checks.iterdir() if p.is_dir() and p.name not in NO_CLAIM_DIRS
                  and not p.name.startswith(("_", ".")))


def default_dirs() -> list[pathlib.Path]:
    """The repository's ``checks/`` folder (when installed from a clone), and each extra registry's folder."""
    repo_checks = pathlib.Path(__file__).resolve().parent.parent / "checks"
    dirs = paper_check_dirs(repo_checks) if repo_checks.is_dir() else []
    packaged = _claims.PACKAGED.resolve()
    for f in _claims.sources():
        folder = pathlib.Path(f).parent
        if packaged not in folder.parents:
            dirs.append(folder)
    return list(dict.fromkeys(dirs))


def references(dirs=None) -> dict[str, list[str]]:
    """claim ID -> ``["path:line", ...]`` of the check files that name it."""
    found: dict[str, list[str]] = defaultdict(list)
    for d in dirs if dirs is not None else default_dirs():
        for py in sorted(pathlib.Path(d).rglob("*.py")):
            for n, line in enumerate(py.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                for cid in QUOTED_ID.findall(line):
                    found[cid].append(f"{py}:{n}")
    return dict(found)


def problems(dirs=None) -> list[str]:
    """Registry entries with no check and no recorded reason; IDs named by checks that no registry holds."""
    refs = references(dirs)
    cat = _claims.catalog()
    out = [f"{cid}: no check names it, and its registry entry does not say why (checkable = \"no\" and why)"
           for cid, c in cat.items() if cid not in refs and not (c.checkable == "no" and c.why)]
    out += [f"{cid}: named by {where[0]} but held by no registry" for cid, where in sorted(refs.items())
            if cid not in cat]
    return out
