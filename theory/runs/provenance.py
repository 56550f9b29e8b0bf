"""The code version of a run, for ``run_metadata`` and for refusing to merge runs of different code.

``commit``: the git commit of the working tree (None outside a git checkout); ``tree_clean``: whether
``git status`` showed no change to tracked files and no untracked file; ``code_digest``: sha256 over the
Python sources of the ``theory`` package and of ``checks/`` (the code that produces the records), so two
shards of one run agree on it even when the tree is dirty or git is absent.
"""
from __future__ import annotations

import functools
import hashlib
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _git(*args: str) -> str | None:
    try:
        r = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


def code_files(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """The sources whose content defines a run's records: theory/**/*.py and checks/**/*.py."""
    out = []
    for sub in ("theory", "checks"):
        d = root / sub
        if d.is_dir():
            out += [p for p in d.rglob("*.py") if "__pycache__" not in p.parts]
    return sorted(out)


def code_digest(root: pathlib.Path = ROOT) -> str:
    h = hashlib.sha256()
    for p in code_files(root):
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def provenance() -> dict:
    """``{"commit", "tree_clean", "code_digest"}`` of this checkout (computed once per process)."""
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain") if commit else None
    return {"commit": commit.strip() if commit else None,
            "tree_clean": None if status is None else status.strip() == "",
            "code_digest": code_digest()}
