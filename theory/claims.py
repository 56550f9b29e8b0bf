"""Claim registries: one ``claims.toml`` per paper, parsed into :class:`Paper` and :class:`Claim` entries.

The packaged registries are ``theory/papers/<paper>/claims.toml`` (format: ``theory/papers/README.md``).
A researcher's own registry is added with ``--claims PATH`` (pytest, ``python -m theory report``) or
``THEORY_CLAIMS_PATH`` (paths separated by ``os.pathsep``); PATH is a ``claims.toml`` or a folder searched
for them. Every check carries ``@pytest.mark.claim("<paper>/<id>")``; an ID that no registry holds is an
:class:`UnknownClaimError`, a malformed registry a :class:`RegistryError` naming the file and the entry.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pathlib
import re
from dataclasses import dataclass, field

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from .errors import RegistryError, UnknownClaimError

ID_SHAPE = re.compile(r"^[a-z]+[0-9]{4}/[a-z]+-[A-Za-z0-9.\-]+$")
PAPER_SHAPE = re.compile(r"^[a-z]+[0-9]{4}$")
PACKAGED = pathlib.Path(__file__).resolve().parent / "papers"
ENV = "THEORY_CLAIMS_PATH"
CHECKABLE = ("fully", "partly", "no")
READINGS = ("as-stated", "strict", "abstract", "proof-step", "reconstructed", "outside-hypotheses")
FINDING_TYPES = ("typo", "false-as-stated", "proof-gap", "missing-hypothesis", "loose", "vacuous", "inconclusive",
                 "outside-hypotheses")
REQUIRED = ("id", "title", "kind", "where", "statement", "hypotheses", "measures", "checkable")
REVIEW_KEYS = ("verdict", "type", "reading", "quote", "referee", "size")


@dataclass(frozen=True)
class Paper:
    """The bibliographic entry that opens a registry."""

    id: str
    authors: tuple
    title: str
    venue: str
    year: int
    arxiv: str = ""
    doi: str = ""
    url: str = ""
    source: str = ""
    notation: str = ""
    path: str = ""

    def citation(self) -> str:
        """``Authors (year). Title. Venue. arXiv:… / doi:…``"""
        who = ", ".join(self.authors[:-1]) + (" and " if len(self.authors) > 1 else "") + self.authors[-1]
        ids = "; ".join(x for x in (f"arXiv:{self.arxiv}" if self.arxiv else "",
                                     f"doi:{self.doi}" if self.doi else "", self.url) if x)
        return f"{who} ({self.year}). {self.title}. {self.venue}." + (f" {ids}." if ids else "")


@dataclass(frozen=True)
class Claim:
    """One registry entry (field meanings: ``theory/papers/README.md``)."""

    id: str
    title: str
    paper: str
    kind: str
    where: str
    statement: str
    hypotheses: str
    measures: str
    checkable: str
    why: str = ""
    identity: bool = False
    forall: bool = False
    parts: tuple = ()
    reading: str = "as-stated"
    reading_of: str = ""
    quote: str = ""
    review: dict = field(default_factory=dict)
    order: int = 0
    path: str = ""

    def to_json(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def _fail(path, entry, msg) -> RegistryError:
    return RegistryError(f"claim registry {path}" + (f", entry {entry!r}" if entry else "") + f": {msg}")


def _text(d: dict, key: str, path, entry, required=True) -> str:
    v = d.get(key, "")
    if not isinstance(v, str) or (required and not v.strip()):
        raise _fail(path, entry, f"{key!r} must be a non-empty string")
    return v.strip()


def _paper(d, path) -> Paper:
    if not isinstance(d, dict):
        raise _fail(path, None, "the registry must open with a [paper] table")
    pid = _text(d, "id", path, "[paper]")
    if not PAPER_SHAPE.match(pid):
        raise _fail(path, "[paper]", f"paper id {pid!r} must be letters then a 4-digit year, e.g. 'smith2026'")
    authors = d.get("authors")
    if not isinstance(authors, list) or not authors or not all(isinstance(a, str) and a for a in authors):
        raise _fail(path, "[paper]", "'authors' must be a non-empty list of names")
    year = d.get("year")
    if not isinstance(year, int):
        raise _fail(path, "[paper]", "'year' must be an integer")
    return Paper(pid, tuple(authors), _text(d, "title", path, "[paper]"), _text(d, "venue", path, "[paper]"),
                 year, *(_text(d, k, path, "[paper]", required=False) for k in ("arxiv", "doi", "url", "source",
                                                                                  "notation")),
                 path=str(path))


def _claim(d: dict, paper: Paper, order: int, path) -> Claim:
    cid = d.get("id") if isinstance(d, dict) else None
    if not isinstance(cid, str) or not ID_SHAPE.match(cid):
        raise _fail(path, cid, "'id' must look like '<paper><year>/<kind>-<number>'")
    if cid.split("/")[0] != paper.id:
        raise _fail(path, cid, f"the ID's paper prefix is not the registry's paper id {paper.id!r}")
    vals = {k: _text(d, k, path, cid) for k in REQUIRED[1:]}
    if vals["checkable"] not in CHECKABLE:
        raise _fail(path, cid, f"'checkable' must be one of {CHECKABLE}")
    why = _text(d, "why", path, cid, required=vals["checkable"] != "fully")
    parts = d.get("parts", [])
    if not isinstance(parts, list) or not all(isinstance(p, str) and p for p in parts) or len(set(parts)) < len(parts):
        raise _fail(path, cid, "'parts' must be a list of distinct non-empty strings")
    reading = d.get("reading", "as-stated")
    if reading not in READINGS:
        raise _fail(path, cid, f"'reading' must be one of {READINGS}")
    if reading != "as-stated" and not (d.get("reading_of") and d.get("quote")):
        raise _fail(path, cid, "an entry for another reading needs 'reading_of' and 'quote'")
    review = d.get("review", {})
    if not isinstance(review, dict) or set(review) - set(REVIEW_KEYS):
        raise _fail(path, cid, f"[claim.review] takes only {REVIEW_KEYS}")
    if review and review.get("type") not in FINDING_TYPES:
        raise _fail(path, cid, f"review type must be one of {FINDING_TYPES}")
    for flag in ("identity", "forall"):
        if not isinstance(d.get(flag, False), bool):
            raise _fail(path, cid, f"{flag!r} must be true or false")
    return Claim(cid, paper=paper.id, why=why, identity=d.get("identity", False), forall=d.get("forall", False),
                 parts=tuple(parts),
                 reading=reading, reading_of=str(d.get("reading_of", "")), quote=str(d.get("quote", "")).strip(),
                 review={k: str(v).strip() for k, v in review.items()}, order=order, path=str(path), **vals)


def parse(path: os.PathLike | str) -> tuple[Paper, list[Claim]]:
    """One registry file: its paper and its claims, validated."""
    path = pathlib.Path(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise _fail(path, None, f"cannot be read ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise _fail(path, None, f"is not valid TOML ({e})") from None
    paper = _paper(doc.get("paper"), path)
    entries = doc.get("claim", [])
    if not isinstance(entries, list) or not entries:
        raise _fail(path, None, "holds no [[claim]] entry")
    return paper, [_claim(d, paper, i, path) for i, d in enumerate(entries)]


def registry_files(path: os.PathLike | str) -> list[pathlib.Path]:
    """``path`` itself when it is a file, else every ``claims.toml`` under it (sorted)."""
    p = pathlib.Path(path).expanduser()
    if p.is_file():
        return [p.resolve()]
    if p.is_dir():
        found = sorted(q.resolve() for q in p.rglob("claims.toml"))
        if found:
            return found
    raise RegistryError(f"no claim registry at {p}: expected a claims.toml file or a folder that holds one")


_extra: list[str] = []


def add_registries(paths) -> None:
    """Use extra registries (files or folders) besides the packaged ones, for the rest of the process."""
    for p in paths or []:
        for f in registry_files(p):
            if str(f) not in _extra:
                _extra.append(str(f))


def sources() -> tuple[str, ...]:
    """Every registry file in use: packaged, then ``$THEORY_CLAIMS_PATH``, then :func:`add_registries`."""
    files = [str(f) for f in sorted(PACKAGED.glob("*/claims.toml"))]
    for p in filter(None, os.environ.get(ENV, "").split(os.pathsep)):
        files += [str(f) for f in registry_files(p)]
    files += _extra
    return tuple(dict.fromkeys(files))


@functools.lru_cache(maxsize=8)
def _load(files: tuple[str, ...]) -> tuple[dict, dict]:
    papers: dict[str, Paper] = {}
    cat: dict[str, Claim] = {}
    for f in files:
        paper, claims = parse(f)
        if paper.id in papers:
            raise RegistryError(f"paper {paper.id!r} has two registries: {papers[paper.id].path} and {f}")
        papers[paper.id] = paper
        for c in claims:
            if c.id in cat:
                raise _fail(f, c.id, "duplicate claim ID")
            cat[c.id] = c
    for c in cat.values():
        if c.reading_of and c.reading_of not in cat:
            raise _fail(c.path, c.id, f"'reading_of' names {c.reading_of!r}, which no registry holds")
    return papers, cat


def catalog() -> dict[str, Claim]:
    """All registered claims by ID, papers in registry order, claims in file order."""
    return _load(sources())[1]


def papers() -> dict[str, Paper]:
    """The bibliographic entry of every registered paper, by paper id."""
    return _load(sources())[0]


def digest() -> str:
    """sha256 over the registry files in use (tells whether two runs judged against the same registries)."""
    h = hashlib.sha256()
    for f in sources():
        h.update(pathlib.Path(f).read_bytes())
    return h.hexdigest()


def get(claim_id: str) -> Claim:
    """The registry entry for ``claim_id``; a clear error when no registry holds it."""
    if not isinstance(claim_id, str) or not ID_SHAPE.match(claim_id):
        raise UnknownClaimError(f"malformed claim ID {claim_id!r}: expected '<paper><year>/<kind>-<number>'")
    cat = catalog()
    if claim_id not in cat:
        paper = claim_id.split("/")[0]
        near = [c for c in cat if c.startswith(paper + "/")][:5]
        where = ("registries: " + ", ".join(sources())) if near else (
            f"no registry of paper {paper!r} is loaded (pass --claims PATH or set {ENV})")
        raise UnknownClaimError(f"unknown claim ID {claim_id!r}: {where}"
                                + (f" (IDs of {paper} include {near})" if near else ""))
    return cat[claim_id]
