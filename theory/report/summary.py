"""Per-claim aggregation of the run's records: verdict, headline tightness figure, time.

Rule (stated on the page): a claim's verdict is the *worst* verdict among its check records that read the
statement as printed (``reading == "as-stated"``), in the order violated > expected-failure > vacuous >
holds > inconclusive > not-applicable. Records of other readings (a strict reading of "≲", the abstract, a
proof step, a reconstruction, runs outside the hypotheses) are shown beside the verdict, never as it.
A "holds" certifies only what its records test:

- every as-stated "holds" record is ``evidence="identity"`` (true for any numbers): "holds (identity)" when
  the registry says the claim itself is an identity, else "consistency only";
- a part of the statement (registry ``parts``) that no as-stated test record covers: "holds in part".

A registry claim without any record is "not encoded". "Error" when a check of the claim failed or
crashed (whatever it recorded before, unless that says violated) or a companion record says a wrong
version was not rejected. Companion records (``role="companion"``) are listed apart. The headline
tightness figure is taken from the first as-stated record that carries the claim's verdict, preferring
records with a numeric ratio, a tightness description, a table or series and a configuration.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ..claims import Claim
from .fmt import num
from .registry_info import claims_of, not_checkable_reason, placeholder

SEVERITY = {"violated": 9, "error": 8, "expected-failure": 7, "vacuous": 6, "consistency": 5,
            "holds-in-part": 4, "holds": 3, "holds-identity": 3, "inconclusive": 2, "not-applicable": 1,
            "not-encoded": 0}
LABELS = {"violated": "violated", "error": "error", "expected-failure": "expected failure", "vacuous": "vacuous",
          "consistency": "consistency only", "holds-in-part": "holds in part", "holds": "holds",
          "holds-identity": "holds (identity)", "inconclusive": "inconclusive", "not-applicable": "not applicable",
          "not-encoded": "not encoded"}
VERDICT_RULE = ("A claim's verdict is the worst verdict among its records of the statement as printed: violated > "
                "expected failure > vacuous > holds > inconclusive > not applicable. Other readings (strict, "
                "abstract, proof step, reconstructed, outside the hypotheses) are shown beside it, never as it. "
                "\"Holds (identity)\": the claim is itself an identity. \"Consistency only\": every record "
                "holds for any numbers (not evidence). \"Holds in part\": some part of the statement is tested by "
                "no record. \"Not encoded\": no check of this run covered the claim. \"Error\": a check of the "
                "claim failed or crashed (this overrides what it recorded before, unless that says violated), or "
                "the check did not reject a deliberately wrong version of the claim. Wrong-version (companion) "
                "tests are listed per claim and never set its verdict.")


def worst(verdicts) -> str:
    """The most severe verdict (order :data:`SEVERITY`)."""
    vs = list(verdicts)
    return max(vs, key=lambda v: SEVERITY.get(v, 0)) if vs else "not-encoded"


def reads(r: dict, entry: Claim) -> bool:
    """Whether record ``r`` reads the statement of registry ``entry`` (its own reading, "as-stated" for a
    printed claim; an entry that encodes another reading, e.g. ``…-strict``, is judged by records of it)."""
    return r.get("reading", "as-stated") == entry.reading


@dataclass
class ClaimRow:
    """Everything the page shows about one claim."""

    info: Claim
    records: list = field(default_factory=list)     # role "check", every reading
    companions: list = field(default_factory=list)  # role "companion": wrong versions run through the check
    verdict: str = "not-encoded"
    headline: dict | None = None
    seconds: float | None = None
    tests: list = field(default_factory=list)      # {"nodeid","outcome","seconds"} from run metadata
    failed_tests: list = field(default_factory=list)
    reason: str = ""                                # why not encoded / not applicable
    untested: list = field(default_factory=list)    # registry parts that no as-stated test record covers

    @property
    def stated(self) -> list[dict]:
        """The records that read the entry's statement (as printed, or the entry's own reading): the verdict."""
        return [r for r in self.records if reads(r, self.info)]

    @property
    def other_readings(self) -> list[dict]:
        return [r for r in self.records if not reads(r, self.info)]

    @property
    def finding_types(self) -> list[str]:
        return list(dict.fromkeys(r["finding_type"] for r in self.stated if r.get("finding_type")))

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def findings(self) -> list[dict]:
        return [r for r in self.records + self.companions if r.get("finding")]

    @property
    def rejected(self) -> tuple[int, int]:
        """(wrong versions rejected, wrong versions tried) by this claim's companion tests."""
        return sum(r.get("verdict") == "holds" for r in self.companions), len(self.companions)

    @property
    def label(self) -> str:
        return LABELS.get(self.verdict, self.verdict)


def _headline(records: list[dict], verdict: str) -> dict | None:
    cands = [r for r in records if r.get("verdict") == verdict] or records
    if not cands:
        return None

    def score(r):
        ratio = num(r.get("ratio"))
        return ((ratio is not None and math.isfinite(ratio)) + bool(r.get("tightness"))
                + bool(r.get("table") or r.get("series")) + 0.5 * bool(r.get("config")))

    best = max(score(r) for r in cands)
    return next(r for r in cands if score(r) == best)


def _claims_of_test(t: dict) -> list[str]:
    return list(t.get("claims") or [])


def judge(info: Claim, stated: list[dict], broken: bool) -> tuple[str, list[str]]:
    """(verdict, untested parts) of one claim from its as-stated records (see the module docstring)."""
    verdict = worst([r.get("verdict") for r in stated] + ["error"] * broken)
    tests = [r for r in stated if r.get("evidence", "test") == "test"]
    covered = {p for r in tests for p in r.get("covers") or ()}
    untested = [p for p in info.parts if p not in covered] if stated else []
    if verdict == "holds":
        if info.identity:
            verdict = "holds-identity"
        elif not any(r.get("verdict") == "holds" for r in tests):
            verdict = "consistency"
        elif untested:
            verdict = "holds-in-part"
    return verdict, untested


def build_rows(doc: dict, catalog: dict[str, Claim] | None = None) -> list[ClaimRow]:
    """One row per registry claim (plus any recorded claim missing from the registry), in registry order."""
    catalog = claims_of(doc) if catalog is None else catalog
    by_claim: dict[str, list[dict]] = defaultdict(list)
    companions: dict[str, list[dict]] = defaultdict(list)
    for r in doc.get("records", []):
        (companions if r.get("role") == "companion" else by_claim)[r.get("claim", "?")].append(r)
    tests_by_claim: dict[str, list[dict]] = defaultdict(list)
    for nodeid, t in sorted((doc.get("run", {}).get("tests") or {}).items()):
        for cid in _claims_of_test(t):
            tests_by_claim[cid].append(dict(t, nodeid=nodeid))
    infos = dict(catalog)
    for i, cid in enumerate(sorted(set(by_claim) | set(companions) | set(tests_by_claim))):
        if cid not in infos:  # recorded but not in this registry: still shown
            infos[cid] = placeholder(cid, 10_000 + i)
    papers = list(dict.fromkeys(c.paper for c in infos.values()))
    rows = []
    for cid, ci in sorted(infos.items(), key=lambda kv: (papers.index(kv[1].paper), kv[1].order)):
        recs, comp = by_claim.get(cid, []), companions.get(cid, [])
        tests = tests_by_claim.get(cid, [])
        failed = [t for t in tests if t.get("outcome") in ("failed", "error")]
        weak = any(r.get("verdict") != "holds" for r in comp)
        stated = [r for r in recs if reads(r, ci)]
        verdict, untested = judge(ci, stated, bool(failed or weak))
        head = "holds" if verdict in ("holds-identity", "consistency", "holds-in-part") else verdict
        row = ClaimRow(ci, recs, comp, verdict, _headline(stated or recs, head), tests=tests, failed_tests=failed,
                       untested=untested)
        row.seconds = _seconds(recs + comp, tests)
        if verdict == "not-encoded":
            why = not_checkable_reason(ci)
            row.reason = ("no check of this run reads this claim as printed"
                          + (f" (other readings were recorded: {', '.join(sorted({r['reading'] for r in recs}))})"
                             if recs else "") + (f"; registry: numerically checkable? {why}" if why else ""))
        elif verdict == "not-applicable":
            row.reason = "; ".join(dict.fromkeys(r.get("note", "") for r in stated if r.get("note"))) or \
                not_checkable_reason(ci)
        rows.append(row)
    return rows


def claims_section(rows: list[ClaimRow]) -> dict:
    """``results.json``'s ``claims`` section: per claim its verdict, readings, finding types and parts."""
    out = {}
    for r in rows:
        ev = Counter(x.get("evidence", "test") for x in r.stated)
        ok, tried = r.rejected
        out[r.id] = {
            "verdict": r.verdict, "label": r.label, "reading": r.info.reading,
            "finding_types": r.finding_types,
            "review": dict(r.info.review),
            "other_readings": [{"reading": x.get("reading"), "verdict": x.get("verdict"),
                                "finding_type": x.get("finding_type", ""), "test": x.get("test", "")}
                               for x in r.other_readings],
            "parts": list(r.info.parts), "untested": list(r.untested),
            "evidence": dict(sorted(ev.items())), "companions": {"rejected": ok, "tried": tried},
            "failed_tests": [t["nodeid"] for t in r.failed_tests],
        }
    return out


def _seconds(records: list[dict], tests: list[dict]) -> float | None:
    if tests:
        return round(sum(float(t.get("seconds") or 0.0) for t in tests), 3)
    per_test: dict[str, float] = {}
    for r in records:
        s = num(r.get("seconds"))
        if s is not None and math.isfinite(s):
            per_test[r.get("test", "")] = max(per_test.get(r.get("test", ""), 0.0), s)
    return round(sum(per_test.values()), 3) if per_test else None


def counts(rows: list[ClaimRow]) -> Counter:
    return Counter(r.verdict for r in rows)


def tightness_text(r: dict | None) -> str:
    """The headline figure of one record: its comparable figure (:mod:`.tightness`: slack, err/tol, fitted vs
    claimed exponent, discrepancy), else the ratio or observed vs bound."""
    from .fmt import fmt
    from .tightness import figure

    if not r:
        return ""
    f = figure(r)
    if f is not None:
        return f.text
    ratio = num(r.get("ratio"))
    if ratio is not None:
        return f"{fmt(ratio)}"
    o, b = r.get("observed"), r.get("bound")
    if o is not None and b is not None:
        return f"{fmt(o, 40)} vs {fmt(b, 40)}"
    if o is not None:
        return fmt(o, 40)
    return ""
