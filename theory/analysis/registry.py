"""The registry as the report sees it: a snapshot stored in ``results.json`` (``doc["registry"]``).

``snapshot()`` is taken when a run writes its results, so ``render``, ``merge`` and ``diff`` show the
titles, statements, sources and bibliographic entries that the run was judged against, also for a
researcher's own registry that is not installed where the page is rebuilt. A document without a
snapshot (schema 1) is shown against the registries loaded now.
"""
from __future__ import annotations

from .. import claims as _claims
from ..claims import Claim, Paper


def snapshot() -> dict:
    """``{"papers": {id: entry}, "claims": {id: entry}, "digest": sha256}`` of the registries in use."""
    return {"papers": {p.id: {**p.__dict__, "authors": list(p.authors)} for p in _claims.papers().values()},
            "claims": {c.id: c.to_json() for c in _claims.catalog().values()},
            "digest": _claims.digest()}


def _registry(doc: dict | None) -> dict:
    reg = (doc or {}).get("registry")
    return reg if reg and reg.get("claims") else snapshot()


def claims_of(doc: dict | None) -> dict[str, Claim]:
    """Every claim of the document's registry snapshot, in registry order."""
    return {cid: Claim(**{**d, "parts": tuple(d.get("parts") or ())}) for cid, d in _registry(doc)["claims"].items()}


def papers_of(doc: dict | None) -> dict[str, Paper]:
    """The bibliographic entries of the document's registry snapshot."""
    return {pid: Paper(**{**d, "authors": tuple(d["authors"])}) for pid, d in _registry(doc)["papers"].items()}


def placeholder(claim_id: str, order: int) -> Claim:
    """A row for a recorded claim that the snapshot does not hold (shown, never dropped)."""
    return Claim(claim_id, "(not in the registry)", claim_id.split("/")[0], "", "", "", "", "", "no",
                 why="no registry entry", order=order)


def not_checkable_reason(c: Claim) -> str:
    """The registry's reason when the claim is not, or only partly, numerically checkable, else ''."""
    return f"{c.checkable}: {c.why}" if c.checkable != "fully" and c.why else ""
