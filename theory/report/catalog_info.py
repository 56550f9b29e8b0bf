"""What the report needs from the claims catalog beyond :mod:`theory.claims`.

The catalog entries label their fields inconsistently (``Kind`` / ``Kind.`` /
``Statement (corrected)`` ...), and each catalog opens with an index table whose
columns give every claim's kind and whether it is numerically checkable. This
module normalises both, read-only, so every claim gets a statement, a kind and a
"checkable" note for its row (the reason shown when no check covers it).
"""
from __future__ import annotations

import functools
import pathlib
import re
from dataclasses import dataclass

from .. import claims as _claims

_ROW_ID = re.compile(r"`([a-z]+[0-9]{4}/[a-z]+-[A-Za-z0-9.\-]+)`")


@dataclass(frozen=True)
class ClaimInfo:
    """Display data of one catalog claim."""

    id: str
    paper: str
    title: str
    kind: str
    checkable: str
    statement: str
    statement_label: str
    hypotheses: str
    order: int  # position in the catalog (file order)


def _norm(label: str) -> str:
    return label.strip().rstrip(".:").strip()


def _pick(fields: dict, *prefixes: str) -> tuple[str, str]:
    """First field whose normalised label equals, then starts with, one of ``prefixes``."""
    normed = [(_norm(k), v) for k, v in fields.items()]
    for p in prefixes:
        for k, v in normed:
            if k.lower() == p.lower() and v.strip():
                return k, v.strip()
    for p in prefixes:
        for k, v in normed:
            if k.lower().startswith(p.lower()) and v.strip():
                return k, v.strip()
    return "", ""


def _strip_md(s: str) -> str:
    return re.sub(r"\*\*(.*?)\*\*", r"\1", s).strip()


@functools.lru_cache(maxsize=4)
def _index_tables(directory: str) -> dict[str, tuple[str, str]]:
    """claim ID -> (kind, checkable) from the index tables of the catalog files."""
    out: dict[str, tuple[str, str]] = {}
    for md in sorted(pathlib.Path(directory).glob("*.md")):
        header: list[str] | None = None
        for line in md.read_text(encoding="utf-8").splitlines():
            if not line.startswith("|"):
                header = None
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = [c.lower() for c in cells]
                continue
            m = _ROW_ID.search(line)
            if not m:
                continue
            row = dict(zip(header, cells))
            kind = next((v for k, v in row.items() if k.startswith("kind")), "")
            chk = next((v for k, v in row.items() if k.startswith("checkable")), "")
            out.setdefault(m.group(1), (_strip_md(kind), _strip_md(chk)))
    return out


def info(claim: "_claims.Claim", order: int = 0) -> ClaimInfo:
    """Normalised display data for one catalog claim."""
    tables = _index_tables(str(_claims.claims_dir()))
    t_kind, t_chk = tables.get(claim.id, ("", ""))
    _, kind = _pick(claim.fields, "Kind")
    label, statement = _pick(claim.fields, "Statement", "Statement (corrected)", "Correct statement",
                             "Statements", "As printed")
    _, hyp = _pick(claim.fields, "Hypotheses and constants", "Hypotheses/constants", "Hypotheses / constants",
                   "Hypotheses")
    _, chk = _pick(claim.fields, "Checkable")
    if not statement:  # entries that run several labels together on one bullet line
        m = re.search(r"\*\*Statements?[^*]*\*\*\s*(.+)", claim.body)
        if m:
            label, statement = "Statement", m.group(1).strip()
    return ClaimInfo(
        id=claim.id, paper=claim.paper, title=claim.title,
        kind=(t_kind or kind.rstrip(".")).strip(), checkable=(t_chk or chk).strip(),
        statement=statement or claim.body[:2000], statement_label=label or "Catalog entry",
        hypotheses=hyp, order=order)


def all_claims() -> dict[str, ClaimInfo]:
    """Every catalog claim, in catalog order; empty when the catalog is not found."""
    try:
        cat = _claims.catalog()
    except FileNotFoundError:
        return {}
    return {cid: info(c, i) for i, (cid, c) in enumerate(cat.items())}


def not_checkable_reason(ci: ClaimInfo) -> str:
    """The catalog's reason when it says the claim is not (fully) numerically checkable, else ''."""
    c = ci.checkable
    low = c.lower()
    if low.startswith(("no", "n/a", "not")) or "not numerically" in low or low.startswith("partly"):
        return c
    return ""
