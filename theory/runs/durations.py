"""pytest-split's durations file from results documents: ``{node id: seconds}``.

``run.tests[nodeid].seconds`` (setup + call + teardown) of every test; over several documents (shards of one
run, or runs at several seeds) a test's seconds are averaged, so a sweep balances by typical time.
"""
from __future__ import annotations

import json
from collections import defaultdict

from .sweep import split


def durations(docs: list[dict]) -> dict[str, float]:
    acc: dict[str, list[float]] = defaultdict(list)
    for doc in docs:
        for one in split(doc).values():
            for nodeid, t in ((one.get("run") or {}).get("tests") or {}).items():
                s = t.get("seconds")
                if isinstance(s, (int, float)) and t.get("outcome") not in (None, "deselected"):
                    acc[nodeid].append(float(s))
    return {k: round(sum(v) / len(v), 3) for k, v in sorted(acc.items())}


def text(docs: list[dict]) -> str:
    return json.dumps(durations(docs), indent=1, sort_keys=True) + "\n"
