"""Seeds derived from (claim ID, configuration, global offset).

A check gets the same numbers in any xdist worker and in any order, because its
seed depends only on what it is, never on what ran before it.
"""
from __future__ import annotations

import hashlib
import json


def derive_seed(claim_id: str, config: object = None, offset: int = 0) -> int:
    """A 63-bit seed from a claim ID, a JSON-able configuration and the ``--seed`` offset."""
    if not isinstance(claim_id, str) or not claim_id:
        raise ValueError(f"claim_id must be a non-empty string, got {claim_id!r}")
    blob = json.dumps([claim_id, config, int(offset)], sort_keys=True, default=repr)
    return int.from_bytes(hashlib.sha256(blob.encode()).digest()[:8], "little") >> 1
