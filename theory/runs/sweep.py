"""Seed sweeps: one document across seeds, and what it shows (issue 16; issue 15's seeds × checks table).

A sweep document is a results document whose ``run.seeds`` lists several seeds; ``run.runs[str(seed)]`` is
each seed's (merged) run metadata, ``records`` holds every seed's records (each carries its ``seed``).
:func:`split` gives back one ordinary run document per seed, so every per-seed figure comes from the same
verdict model as a single run (:func:`theory.analysis.verdicts.build_rows`). :func:`analyse` gives:

- per claim: its verdict at each seed, the counts ("holds 20/20"; "expected failure 19/20, holds 1/20"),
  whether it is the same at every seed, and its headline tightness figure at each seed;
- per measurement (claim, role, test, configuration, and its rank among equal keys): the spread (min,
  median, max) of its comparable tightness figure (:mod:`theory.analysis.tightness`) over the seeds;
- the seeds × checks table: per test and seed, the test's outcome and its headline figure.
"""
from __future__ import annotations

import datetime as _dt
import json
import statistics
from collections import Counter
from dataclasses import dataclass, field

from ..records import SCHEMA_VERSION

COMMON = ("profile", "commit", "tree_clean", "code_digest", "registry_digest", "registries")


def seeds(doc: dict) -> list:
    run = doc.get("run") or {}
    return list(run.get("seeds") or [run.get("seed")])


def is_sweep(doc: dict) -> bool:
    return len((doc.get("run") or {}).get("seeds") or []) > 1


def combine(by_seed: dict) -> dict:
    """A sweep document from one merged run document per seed."""
    order = sorted(by_seed, key=lambda s: (s is None, s))
    first = by_seed[order[0]]
    run = {k: (first.get("run") or {}).get(k) for k in COMMON if k in (first.get("run") or {})}
    run["seeds"] = order
    run["runs"] = {str(s): by_seed[s].get("run") or {} for s in order}
    run["seconds"] = round(sum(float(r.get("seconds") or 0) for r in run["runs"].values()), 1)
    codes = [r.get("exitstatus") for r in run["runs"].values()]
    from .merge import exit_status

    run["exitstatus"] = exit_status(codes)
    records = []
    for s in order:
        records += [dict(r, seed=r.get("seed", s)) for r in by_seed[s]["records"]]
    out = {"schema": first.get("schema", SCHEMA_VERSION), "run": run, "records": records,
           "generated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    if first.get("registry"):
        out["registry"] = first["registry"]
    return out


def split(doc: dict) -> dict:
    """``{seed: run document}``; a single run gives itself under its seed."""
    if not is_sweep(doc):
        return {seeds(doc)[0]: doc}
    run = doc["run"]
    out = {}
    for s in run["seeds"]:
        one = {"schema": doc.get("schema"), "generated": doc.get("generated"),
               "run": run["runs"].get(str(s)) or {"seed": s},
               "records": [r for r in doc["records"] if r.get("seed") == s]}
        if doc.get("registry"):
            one["registry"] = doc["registry"]
        out[s] = one
    return out


def verdict_counts(verdicts: list[str]) -> str:
    """``holds 20/20`` or ``expected failure 19/20, holds 1/20`` (most frequent first)."""
    from ..analysis.verdicts import LABELS

    n = len(verdicts)
    c = Counter(verdicts)
    return ", ".join(f"{LABELS.get(v, v)} {k}/{n}" for v, k in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass
class ClaimSweep:
    claim: str
    paper: str
    title: str
    verdicts: dict = field(default_factory=dict)   # seed -> verdict
    figures: dict = field(default_factory=dict)    # seed -> Figure | None (headline)

    @property
    def stable(self) -> bool:
        return len(set(self.verdicts.values())) <= 1

    @property
    def counts(self) -> str:
        return verdict_counts(list(self.verdicts.values()))


@dataclass
class Spread:
    claim: str
    role: str
    test: str
    config: dict
    kind: str
    values: dict = field(default_factory=dict)     # seed -> figure value
    verdicts: dict = field(default_factory=dict)   # seed -> record verdict

    @property
    def stats(self) -> tuple:
        v = [x for x in self.values.values() if x is not None]
        return (min(v), statistics.median(v), max(v)) if v else (None, None, None)


@dataclass
class FalseAlarms:
    """Declared false-alarm rates of a run or sweep (issue 15): per test, the union bound Σ of its records'
    ``false_alarm`` (capped at 1); per seed, the sum over tests; over the sweep, the expected number of chance
    failures E = Σ over seeds (also a union bound on the probability that any chance failure occurs)."""
    tests: dict                       # nodeid -> per-seed rate
    per_seed: float
    seeds: int

    @property
    def expected(self) -> float:
        return self.per_seed * self.seeds

    def text(self, failed: int | None = None) -> str:
        if not self.tests:
            return "No record declares a false-alarm rate."
        out = (f"{len(self.tests)} tests carry a statistical decision with a declared false-alarm rate "
               f"(Σα = {self.per_seed:.2g} per seed, the largest {max(self.tests.values()):.2g}); over "
               f"{self.seeds} seed{'s' if self.seeds != 1 else ''} the expected number of failures of a true claim "
               f"by chance is ≤ {self.expected:.2g} (union bound, so P(any such failure) ≤ {min(1.0, self.expected):.2g})")
        return out + (f"; failed tests observed: {failed}." if failed is not None else ".")


def false_alarms(records: list[dict], seeds: int = 1) -> FalseAlarms:
    """:class:`FalseAlarms` of one seed's records (their declared rates do not depend on the seed)."""
    per_test: dict[str, float] = {}
    for r in records:
        a = r.get("false_alarm")
        if a:
            t = r.get("test", "") or r.get("claim", "")
            per_test[t] = min(1.0, per_test.get(t, 0.0) + float(a))
    return FalseAlarms(per_test, sum(per_test.values()), seeds)


@dataclass
class Analysis:
    seeds: list
    claims: list                      # ClaimSweep, registry order
    spreads: list                     # Spread
    table: list                       # {"test", "claims", "cells": {seed: {"outcome", "verdicts", "figure"}}}
    rows_by_seed: dict                # seed -> summary rows
    alarms: FalseAlarms | None = None

    @property
    def failed(self) -> int:
        return sum(c["outcome"] in ("failed", "error") for row in self.table for c in row["cells"].values())

    @property
    def unstable(self) -> list:
        return [c for c in self.claims if not c.stable]


def _measurement_keys(records: list[dict]) -> list[tuple]:
    seen: Counter = Counter()
    out = []
    for r in records:
        k = (r.get("claim", ""), r.get("role", "check"), r.get("test", ""), json.dumps(r.get("config") or {}, sort_keys=True))
        out.append(k + (seen[k],))
        seen[k] += 1
    return out


def test_headline(records: list[dict], kind_of_claim) -> dict | None:
    """The record that stands for one test in the seeds × checks table (not a verdict): its worst as-stated check
    record inside the hypotheses, preferring one with a figure."""
    from ..analysis.tightness import figure
    from ..analysis.verdicts import SEVERITY, inside

    checks = [r for r in records if r.get("role", "check") == "check"]
    as_stated = [r for r in checks if r.get("reading", "as-stated") == "as-stated"]
    stated = [r for r in as_stated if inside(r) is True] or as_stated or checks
    if not stated:
        return None
    return max(stated, key=lambda r: (SEVERITY.get(r.get("verdict"), 0),
                                      figure(r, kind_of_claim(r.get("claim", ""))) is not None))


def analyse(doc: dict) -> Analysis:
    from ..analysis.verdicts import build_rows
    from ..analysis.tightness import figure

    per_seed = split(doc)
    rows_by_seed = {s: build_rows(d) for s, d in per_seed.items()}
    claims: dict[str, ClaimSweep] = {}
    for s, rows in rows_by_seed.items():
        for r in rows:
            c = claims.setdefault(r.id, ClaimSweep(r.id, r.info.paper, r.info.title))
            c.verdicts[s] = r.verdict
            c.figures[s] = figure(r.headline, r.info.kind) if r.headline else None
    kinds = {r.id: r.info.kind for rows in rows_by_seed.values() for r in rows}
    spreads: dict[tuple, Spread] = {}
    for s, d in per_seed.items():
        for key, rec in zip(_measurement_keys(d["records"]), d["records"]):
            f = figure(rec, kinds.get(rec.get("claim"), ""))
            sp = spreads.setdefault(key, Spread(key[0], key[1], key[2], rec.get("config") or {},
                                                f.kind if f else ""))
            sp.values[s] = f.value if f is not None and (not sp.kind or f.kind == sp.kind) else None
            sp.verdicts[s] = rec.get("verdict")
    table: dict[str, dict] = {}
    for s, d in per_seed.items():
        by_test: dict[str, list] = {}
        for rec in d["records"]:
            by_test.setdefault(rec.get("test", ""), []).append(rec)
        tests = (d.get("run") or {}).get("tests") or {}
        for nodeid in sorted(set(tests) | set(by_test) - {""}):
            t = tests.get(nodeid, {})
            recs = by_test.get(nodeid, [])
            head = test_headline(recs, lambda c: kinds.get(c, ""))
            f = figure(head, kinds.get(head.get("claim"), "")) if head else None
            row = table.setdefault(nodeid, {"test": nodeid, "claims": t.get("claims") or sorted(
                {r.get("claim", "") for r in recs}), "cells": {}})
            row["cells"][s] = {"outcome": t.get("outcome", "recorded"),
                               "verdicts": sorted({r.get("verdict", "") for r in recs if r.get("role", "check") == "check"}),
                               "figure": f}
    order = {cid: i for i, cid in enumerate(claims)}
    first = next(iter(per_seed.values()), {"records": []})
    return Analysis(list(per_seed), list(claims.values()),
                    sorted(spreads.values(), key=lambda sp: (order.get(sp.claim, 1e9), sp.test, sp.role)),
                    [table[k] for k in sorted(table)], rows_by_seed,
                    false_alarms(first["records"], len(per_seed)))
