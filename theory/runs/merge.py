"""Merge shard folders (and runs at several seeds) into one results document.

Shards of one run (same seed, profile, code and registries, as pytest-split's ``--splits/--group`` makes
them) merge into the document one process would have written: the same records in the same order
(:func:`theory.records.read_records`'s order: claim, test, configuration; a test's records in the order it
wrote them), ``run.tests`` and ``run.collect_errors`` united, and the shards' own metadata (machine, time,
arguments, exit status) under ``run.shards``. A test that ran in two shards is refused (the shards
overlap). Runs at several seeds give a sweep document (:mod:`.sweep`): every record, ``run.seeds`` and one
merged ``run.runs[seed]`` per seed. Mixed code, profiles or registries are refused (:mod:`.compat`).
"""
from __future__ import annotations

import datetime as _dt
import json

from ..records import SCHEMA_VERSION
from . import compat
from .load import RunsError, source

# Run metadata that differs between shards of one run: kept per shard under run["shards"].
PER_SHARD = ("machine", "platform", "cpus", "workers", "args", "date", "seconds", "exitstatus", "device",
             "device_name", "torch", "python", "resumed")


def record_key(r: dict):
    """The order of records in results.json (as :func:`theory.records.read_records` sorts them)."""
    return r.get("claim", ""), r.get("test", ""), json.dumps(r.get("config", {}), sort_keys=True)


def seed_of(doc: dict):
    return (doc.get("run") or {}).get("seed")


def exit_status(codes: list) -> int | None:
    """One status for several shards: the worst failure; 5 (no tests collected) only if every shard had none."""
    codes = [c for c in codes if isinstance(c, int)]
    if not codes:
        return None
    bad = [c for c in codes if c not in (0, 5)]
    if bad:
        return max(bad)
    return 5 if all(c == 5 for c in codes) else 0


def merge_shards(docs: list[dict]) -> dict:
    """One run's shards (one seed) into one document."""
    if not docs:
        raise RunsError("nothing to merge")
    seeds = {seed_of(d) for d in docs}
    if len(seeds) > 1:
        raise RunsError(f"merge_shards got several seeds {sorted(seeds, key=str)}: use merge()")
    tests, errors, owner, records = {}, {}, {}, []
    for d in docs:
        run = d.get("run") or {}
        mine = set(run.get("tests") or {}) | {r.get("test", "") for r in d["records"]}
        for nodeid in sorted(mine - {""}):
            if nodeid in owner:
                raise RunsError(f"cannot merge: test {nodeid} ran in both {owner[nodeid]} and {source(d)} "
                                f"(shards of one run must not overlap; was a folder given twice?)")
            owner[nodeid] = source(d)
        tests.update(run.get("tests") or {})
        errors.update(run.get("collect_errors") or {})
        records += d["records"]
    records.sort(key=record_key)  # stable: a test's records keep their order (they come from one shard)
    first = docs[0].get("run") or {}
    run = {k: v for k, v in first.items() if k not in PER_SHARD}
    if len(docs) > 1:
        run["shards"] = [dict({k: (d.get("run") or {}).get(k) for k in PER_SHARD if k in (d.get("run") or {})},
                              source=source(d), tests=len((d.get("run") or {}).get("tests") or {}))
                         for d in docs]
        run["machine"] = ", ".join(dict.fromkeys(str(s.get("machine")) for s in run["shards"] if s.get("machine")))
        run["seconds"] = round(sum(float(s.get("seconds") or 0) for s in run["shards"]), 1)
        run["exitstatus"] = exit_status([s.get("exitstatus") for s in run["shards"]])
        for k in ("device", "device_name", "torch", "python"):
            vals = list(dict.fromkeys(str(s[k]) for s in run["shards"] if s.get(k) is not None))
            if vals:
                run[k] = vals[0] if len(vals) == 1 else ", ".join(vals)
    else:
        run = dict(first)
    run["tests"], run["collect_errors"] = tests, errors
    out = {"schema": docs[0].get("schema", SCHEMA_VERSION), "run": run, "records": records,
           "generated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    if docs[0].get("registry"):
        out["registry"] = docs[0]["registry"]
    return out


def merge(docs: list[dict]) -> dict:
    """Shards and/or seeds into one document: a run document for one seed, a sweep document for several."""
    compat.check(docs, "merge")
    by_seed: dict = {}
    for d in docs:
        by_seed.setdefault(seed_of(d), []).append(d)
    merged = {s: merge_shards(ds) for s, ds in by_seed.items()}
    if len(merged) == 1:
        return next(iter(merged.values()))
    from .sweep import combine

    return combine(merged)
