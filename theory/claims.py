"""The claims catalog: ``../shared/claims/<paper>.md`` parsed into entries.

Every check carries ``@pytest.mark.claim("<paper>/<id>")``; the ID must be a
heading ``### `<id>` — title`` of the catalog, else :class:`UnknownClaimError`.
The catalog is found at ``$THEORY_CLAIMS_DIR``, else ``<repo>/../shared/claims``.
"""
from __future__ import annotations

import functools
import os
import pathlib
import re
from dataclasses import dataclass, field

from .errors import UnknownClaimError

HEAD = re.compile(r"^###\s+`([a-z]+[0-9]{4}/[a-z]+-[A-Za-z0-9.\-]+)`\s*[—-]+\s*(.*)$")
FIELD = re.compile(r"^-\s+\*\*([^*]+?):?\*\*:?\s*(.*)$")
ID_SHAPE = re.compile(r"^[a-z]+[0-9]{4}/[a-z]+-[A-Za-z0-9.\-]+$")


@dataclass(frozen=True)
class Claim:
    """One catalog entry: its ID, title, paper, and the labelled fields of its body."""

    id: str
    title: str
    paper: str
    body: str
    fields: dict = field(default_factory=dict)

    @property
    def statement(self) -> str:
        return self.fields.get("Statement", "")

    @property
    def kind(self) -> str:
        return self.fields.get("Kind", "")


def claims_dir() -> pathlib.Path:
    """Where the catalog lives (env override, else beside the repository)."""
    env = os.environ.get("THEORY_CLAIMS_DIR")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parent.parent.parent / "shared" / "claims"


def _parse(md: pathlib.Path) -> list[Claim]:
    out: list[Claim] = []
    cur = None
    for line in md.read_text(encoding="utf-8").splitlines() + ["## end"]:
        m = HEAD.match(line.strip())
        if m or line.startswith("## ") or (line.startswith("### ") and cur):
            if cur:
                out.append(_finish(*cur))
                cur = None
        if m:
            cur = (m.group(1), m.group(2).strip(), [])
        elif cur:
            cur[2].append(line)
    return out


def _finish(cid: str, title: str, lines: list[str]) -> Claim:
    fields: dict[str, str] = {}
    label = None
    for line in lines:
        m = FIELD.match(line)
        if m:
            label = m.group(1).strip()
            fields[label] = m.group(2).strip()
        elif label and line.strip():
            fields[label] += "\n" + line.rstrip()
    return Claim(cid, title, cid.split("/")[0], "\n".join(lines).strip(), fields)


@functools.lru_cache(maxsize=4)
def _load(directory: str) -> dict[str, Claim]:
    d = pathlib.Path(directory)
    if not d.is_dir():
        raise FileNotFoundError(
            f"claims catalog not found at {d}: set THEORY_CLAIMS_DIR or keep ../shared/claims beside the repo")
    cat: dict[str, Claim] = {}
    for md in sorted(d.glob("*.md")):
        for c in _parse(md):
            cat.setdefault(c.id, c)
    return cat


def catalog(directory: str | os.PathLike | None = None) -> dict[str, Claim]:
    """All catalog claims by ID, in file order."""
    return _load(str(directory or claims_dir()))


def get(claim_id: str, directory: str | os.PathLike | None = None) -> Claim:
    """The catalog entry for ``claim_id``; a clear error when it does not exist."""
    if not isinstance(claim_id, str) or not ID_SHAPE.match(claim_id):
        raise UnknownClaimError(f"malformed claim ID {claim_id!r}: expected '<paper><year>/<kind>-<number>'")
    cat = catalog(directory)
    if claim_id not in cat:
        paper = claim_id.split("/")[0]
        near = [c for c in cat if c.startswith(paper + "/")][:5]
        raise UnknownClaimError(f"unknown claim ID {claim_id!r}: not a heading of the catalog in {claims_dir()}"
                                + (f" (IDs of {paper} include {near})" if near else ""))
    return cat[claim_id]
