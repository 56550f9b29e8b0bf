"""Per-claim aggregation of the run's records: verdict, headline tightness figure, time.

Rule (stated on the page): a claim's verdict is the *worst* verdict among its
check records, in the order violated > expected-failure > vacuous > holds >
not-applicable. A catalog claim without any record is "not encoded". "Error" when
a check of the claim failed or crashed (whatever it recorded before, unless that
says violated) or a companion record says a wrong version was not rejected.
Companion records (``role="companion"``) are listed apart. The headline tightness figure
is taken from the first record (results.json order) that carries the claim's
verdict, preferring records with a numeric ratio, a tightness description, a
table or series and a configuration (the main measurement over its controls).
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from .catalog_info import ClaimInfo, all_claims, not_checkable_reason

SEVERITY = {"violated": 6, "error": 5, "expected-failure": 4, "vacuous": 3, "holds": 2, "not-applicable": 1,
            "not-encoded": 0}
LABELS = {"violated": "violated", "error": "error", "expected-failure": "expected failure", "vacuous": "vacuous",
          "holds": "holds", "not-applicable": "not applicable", "not-encoded": "not encoded"}
VERDICT_RULE = ("A claim's verdict is the worst verdict among its records: violated > expected failure > "
                "vacuous > holds > not applicable. \"Not encoded\": no check of this run covered the claim. "
                "\"Error\": a check of the claim failed or crashed (this overrides what it recorded before, "
                "unless that says violated), or the check did not reject a deliberately wrong version of the "
                "claim. Wrong-version (companion) tests are listed per claim and never set its verdict.")


def num(x) -> float | None:
    """``x`` as a finite-or-not float, or None when it is not a number (JSON 'nan'/'inf' strings count)."""
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str) and x.strip().lower() in ("nan", "inf", "-inf", "+inf"):
        return float(x)
    return None


def worst(verdicts) -> str:
    vs = list(verdicts)
    return max(vs, key=lambda v: SEVERITY.get(v, 0)) if vs else "not-encoded"


@dataclass
class ClaimRow:
    """Everything the page shows about one claim."""

    info: ClaimInfo
    records: list = field(default_factory=list)     # role "check"
    companions: list = field(default_factory=list)  # role "companion": wrong versions run through the check
    verdict: str = "not-encoded"
    headline: dict | None = None
    seconds: float | None = None
    tests: list = field(default_factory=list)      # {"nodeid","outcome","seconds"} from run metadata
    failed_tests: list = field(default_factory=list)
    reason: str = ""                                # why not encoded / not applicable

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


def build_rows(doc: dict, catalog: dict[str, ClaimInfo] | None = None) -> list[ClaimRow]:
    """One row per catalog claim (plus any recorded claim missing from the catalog), in catalog order."""
    catalog = all_claims() if catalog is None else catalog
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
        if cid not in infos:  # recorded but not in this catalog: still shown
            paper = cid.split("/")[0]
            infos[cid] = ClaimInfo(cid, paper, "(not in the catalog)", "", "", "", "", "", 10_000 + i)
    rows = []
    for cid, ci in sorted(infos.items(), key=lambda kv: (kv[1].paper, kv[1].order)):
        recs, comp = by_claim.get(cid, []), companions.get(cid, [])
        tests = tests_by_claim.get(cid, [])
        failed = [t for t in tests if t.get("outcome") in ("failed", "error")]
        weak = any(r.get("verdict") != "holds" for r in comp)
        verdict = worst([r.get("verdict") for r in recs] + ["error"] * bool(failed or weak))
        row = ClaimRow(ci, recs, comp, verdict, _headline(recs, verdict), tests=tests, failed_tests=failed)
        row.seconds = _seconds(recs + comp, tests)
        if verdict == "not-encoded":
            why = not_checkable_reason(ci)
            row.reason = ("no check of this run covers this claim"
                          + (f"; catalog: numerically checkable? {why}" if why else ""))
        elif verdict == "not-applicable":
            row.reason = "; ".join(dict.fromkeys(r.get("note", "") for r in recs if r.get("note"))) or \
                not_checkable_reason(ci)
        rows.append(row)
    return rows


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
    """The headline figure of one record: ratio (observed ÷ bound) or observed vs bound."""
    from .fmt import fmt

    if not r:
        return ""
    ratio = num(r.get("ratio"))
    if ratio is not None:
        return f"{fmt(ratio)}"
    o, b = r.get("observed"), r.get("bound")
    if o is not None and b is not None:
        return f"{fmt(o, 40)} vs {fmt(b, 40)}"
    if o is not None:
        return fmt(o, 40)
    return ""
