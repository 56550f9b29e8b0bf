"""Every claim's verdict, parts, untested parts and headline record, derived from its records and the registry.

This is the one place that decides a verdict (issue 32). The report, the seed sweep, ``merge`` and ``diff`` read
the rows built here; none of them judges.

Rules (stated on the page, :data:`VERDICT_RULE`):

- A record *judges* a claim when it reads the entry's statement (``reading`` equal to the entry's own, "as-stated"
  for a printed claim) **and** its run is inside the paper's hypotheses (``inside is True``). An as-stated record
  whose ``inside`` is False or "unknown" is an outside-the-hypotheses reading: shown beside the verdict, never as
  it, like a strict reading or a proof step.
- The verdict is the worst verdict among the judging records, in the order violated > error > expected-failure >
  vacuous > holds > inconclusive > not-applicable; "error" when a test of the claim failed or crashed or a
  companion did not reject its wrong version. Records of the statement exist but none is inside: "outside the
  hypotheses". No record of the statement: "not encoded".
- A "holds" says what it certifies. "Consistency only": no judging ``evidence="test"`` record holds (every one
  would hold for any numbers); for a claim that is itself an identity (registry ``identity``), its numeric
  check is the test of the claim, whatever its evidence label. "Holds in part": a registry part is covered by no judging test record, or the
  entry is a ``forall`` statement and no judging test record is its worst case (``worst_case=True``: the
  maximum of observed/bound over random points, optima and an adversarial search). "Holds (identity)": the
  entry says the claim is itself an identity and every part is tested. Else "holds".
- The headline record is the *worst* judging test record that carries the verdict (a consistency record only
  when no test carries it): the smallest slack, the largest
  err/tol, the largest |fitted − claimed| per CI half-width, the largest discrepancy (:mod:`.tightness`).

Records written before schema 3 carry no ``inside``: they are read as inside (the harness did not yet report
hypotheses per record), and their ``evidence`` defaults to "test" as it did then ("identity" reads "consistency").
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ..claims import Claim
from .numbers import num
from .registry import claims_of, not_checkable_reason, placeholder

SEVERITY = {"violated": 11, "error": 10, "expected-failure": 9, "vacuous": 8, "consistency": 7,
            "holds-in-part": 6, "holds": 5, "holds-identity": 5, "inconclusive": 4, "outside": 3,
            "not-applicable": 2, "not-encoded": 0}
LABELS = {"violated": "violated", "error": "error", "expected-failure": "expected failure", "vacuous": "vacuous",
          "consistency": "consistency only", "holds-in-part": "holds in part", "holds": "holds",
          "holds-identity": "holds (identity)", "inconclusive": "inconclusive",
          "outside": "outside the hypotheses", "not-applicable": "not applicable", "not-encoded": "not encoded"}
HOLDS = ("holds", "holds-identity", "holds-in-part", "consistency")
WORST_CASE_PART = "worst case (adversarial search)"
VERDICT_RULE = ("A claim's verdict is the worst verdict among its records of the statement as printed whose run is "
                "inside the paper's hypotheses: violated > error > expected failure > vacuous > holds > inconclusive > "
                "not applicable. Records outside the hypotheses (inside false or unknown) and other readings (strict, "
                "abstract, proof step, reconstructed) are shown beside it, never as it; \"outside the hypotheses\" "
                "when every record of the statement is. \"Holds (identity)\": the claim is itself an identity. "
                "\"Consistency only\": every record holds for any numbers (not evidence). \"Holds in part\": some part "
                "of the statement is tested by no record, or a statement for every θ has no worst-case search. "
                "\"Not encoded\": no check of this run covered the claim. \"Error\": a check of the claim failed or "
                "crashed (this overrides what it recorded before, unless that says violated), or the check did not "
                "reject a deliberately wrong version of the claim. Wrong-version (companion) tests are listed per "
                "claim and never set its verdict. The headline figure is the worst judging record's.")


def worst(verdicts) -> str:
    """The most severe verdict (order :data:`SEVERITY`)."""
    vs = list(verdicts)
    return max(vs, key=lambda v: SEVERITY.get(v, 0)) if vs else "not-encoded"


def evidence(r: dict) -> str:
    """A record's evidence: "test" or "consistency" (schema ≤ 2: "test" unless it said "identity")."""
    e = r.get("evidence") or "test"
    return "consistency" if e == "identity" else e


def inside(r: dict):
    """True, False or "unknown"; a record of schema ≤ 2 (no ``inside`` key) is read as inside."""
    if "inside" not in r:
        return True
    v = r["inside"]
    return v if v in (True, False) else "unknown"


def reads(r: dict, entry: Claim) -> bool:
    """Whether record ``r`` reads the statement of registry ``entry`` (its own reading, "as-stated" for a
    printed claim; an entry that encodes another reading, e.g. ``…-strict``, is judged by records of it)."""
    return r.get("reading", "as-stated") == entry.reading


def judges(r: dict, entry: Claim) -> bool:
    """Whether ``r`` sets the verdict of ``entry``: it reads the statement and its run is inside the hypotheses."""
    return reads(r, entry) and inside(r) is True


def reading_shown(r: dict, entry: Claim) -> str:
    """How a record that does not judge is labelled beside the verdict: its reading, or "outside-hypotheses"."""
    return r.get("reading", "as-stated") if not reads(r, entry) else "outside-hypotheses"


def badness(r: dict) -> float | None:
    """How close a record is to failing, on one scale (1 = at the edge, larger = worse); None without a figure."""
    from .tightness import figure

    f = figure(r)
    if f is None or f.value is None or not math.isfinite(f.value):
        return None
    if f.kind == "slack":
        return 1.0 / f.value if f.value > 0 else math.inf
    if f.kind == "exponent":
        half = (f.ci[1] - f.ci[0]) / 2 if f.ci else 0.0
        return abs(f.value) / half if half > 0 else abs(f.value)
    return f.value  # err/tol, discrepancy


def headline(records: list[dict], verdict: str) -> dict | None:
    """The worst test record among those carrying ``verdict`` (consistency records only when no test carries it;
    all records when none carries it); ties and records without a figure fall back to the most informative one (a
    ratio, a tightness text, a table or plot, a configuration)."""
    cands = [r for r in records if r.get("verdict") == verdict] or records
    if not cands:
        return None
    cands = [r for r in cands if evidence(r) == "test"] or cands  # evidence first: a consistency record
    # (true for any numbers) stands for the claim only when no test carries the verdict

    def info(r):
        ratio = num(r.get("ratio"))
        return ((ratio is not None and math.isfinite(ratio)) + bool(r.get("tightness"))
                + bool(r.get("table") or r.get("series")) + 0.5 * bool(r.get("config")))

    def key(r):
        b = badness(r)
        return (b is not None, b if b is not None else 0.0, bool(r.get("worst_case")), info(r))

    best = max(key(r) for r in cands)
    return next(r for r in cands if key(r) == best)


@dataclass
class ClaimRow:
    """Everything a reporter shows about one claim, decided here."""

    info: Claim
    records: list = field(default_factory=list)     # role "check", every reading
    companions: list = field(default_factory=list)  # role "companion": wrong versions run through the check
    verdict: str = "not-encoded"
    headline: dict | None = None
    seconds: float | None = None
    tests: list = field(default_factory=list)      # {"nodeid","outcome","seconds"} from run metadata
    failed_tests: list = field(default_factory=list)
    reason: str = ""                                # why not encoded / not applicable / outside
    untested: list = field(default_factory=list)    # registry parts (and the worst case) no judging test covers

    @property
    def stated(self) -> list[dict]:
        """The records that read the entry's statement (as printed, or the entry's own reading), inside or not."""
        return [r for r in self.records if reads(r, self.info)]

    @property
    def judged(self) -> list[dict]:
        """The records that set the verdict: the statement's, inside the paper's hypotheses."""
        return [r for r in self.records if judges(r, self.info)]

    @property
    def other_readings(self) -> list[dict]:
        """Shown beside the verdict: other readings, and the statement's records outside the hypotheses."""
        return [r for r in self.records if not judges(r, self.info)]

    @property
    def finding_types(self) -> list[str]:
        return list(dict.fromkeys(r["finding_type"] for r in self.judged if r.get("finding_type")))

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


def judge(info: Claim, stated: list[dict], broken: bool) -> tuple[str, list[str]]:
    """(verdict, untested parts) of one claim from the records of its statement (see the module docstring)."""
    judged = [r for r in stated if inside(r) is True]
    if stated and not judged:
        return ("error" if broken else "outside"), []
    verdict = worst([r.get("verdict") for r in judged] + ["error"] * broken)
    # a claim that is itself an identity is checked by records that hold for any correct numbers: they test it
    tests = judged if info.identity else [r for r in judged if evidence(r) == "test"]
    covered = {p for r in tests for p in r.get("covers") or ()}
    untested = [p for p in info.parts if p not in covered] if judged else []
    if judged and info.forall and not any(r.get("worst_case") for r in tests):
        untested.append(WORST_CASE_PART)
    if verdict == "holds":
        if not any(r.get("verdict") == "holds" for r in tests):
            verdict = "consistency"
        elif untested:
            verdict = "holds-in-part"
        elif info.identity:
            verdict = "holds-identity"
    return verdict, untested


def review_drift(row: ClaimRow) -> str:
    """The registry review's typed verdict when it disagrees with the verdict this run derives, else "" (a review
    is referee text written by hand; the verdict is computed here, so a typed one can drift)."""
    typed = str(row.info.review.get("verdict", "")).strip().lower().replace(" ", "-")
    if not typed or row.verdict in ("not-encoded",):
        return ""
    aliases = {"holds": HOLDS, "outside-the-hypotheses": ("outside",), "outside-hypotheses": ("outside",),
               "holds-in-part": ("holds-in-part",), "consistency-only": ("consistency",)}
    ok = aliases.get(typed, (typed,))
    return "" if row.verdict in ok else typed


def _reason(row: ClaimRow) -> str:
    ci, recs = row.info, row.records
    if row.verdict == "not-encoded":
        why = not_checkable_reason(ci)
        return ("no check of this run reads this claim as printed"
                + (f" (other readings were recorded: {', '.join(sorted({r['reading'] for r in recs}))})"
                   if recs else "") + (f"; registry: numerically checkable? {why}" if why else ""))
    if row.verdict == "outside":
        why = "; ".join(dict.fromkeys(str(r.get("inside_reason") or "no hypothesis report") for r in row.stated))
        return f"no run of this check is inside the paper's hypotheses: {why}"
    if row.verdict == "not-applicable":
        return "; ".join(dict.fromkeys(r.get("note", "") for r in row.judged if r.get("note"))) or \
            not_checkable_reason(ci)
    return ""


def _papers_run(doc: dict, catalog: dict[str, Claim], seen: set) -> dict[str, Claim]:
    """The registry claims a report covers: those of the papers whose checks ran (a researcher's run of their own
    checks is about their paper, not 120 built-in claims "not encoded"); every paper with ``run.all_papers``
    (``--all-papers``) or when nothing ran at all."""
    papers = {cid.split("/")[0] for cid in seen}
    if not papers or (doc.get("run") or {}).get("all_papers"):
        return dict(catalog)
    return {cid: c for cid, c in catalog.items() if c.paper in papers}


def build_rows(doc: dict, catalog: dict[str, Claim] | None = None) -> list[ClaimRow]:
    """One row per registry claim (plus any recorded claim missing from the registry), in registry order."""
    catalog = claims_of(doc) if catalog is None else catalog
    by_claim: dict[str, list[dict]] = defaultdict(list)
    companions: dict[str, list[dict]] = defaultdict(list)
    for r in doc.get("records", []):
        (companions if r.get("role") == "companion" else by_claim)[r.get("claim", "?")].append(r)
    tests_by_claim: dict[str, list[dict]] = defaultdict(list)
    for nodeid, t in sorted((doc.get("run", {}).get("tests") or {}).items()):
        for cid in t.get("claims") or []:
            tests_by_claim[cid].append(dict(t, nodeid=nodeid))
    infos = _papers_run(doc, catalog, set(by_claim) | set(companions) | set(tests_by_claim))
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
        row = ClaimRow(ci, recs, comp, tests=tests, failed_tests=failed)
        row.verdict, row.untested = judge(ci, row.stated, bool(failed or weak))
        head = "holds" if row.verdict in HOLDS else row.verdict
        row.headline = headline(row.judged or row.stated or recs, head)
        row.seconds = _seconds(recs + comp, tests)
        row.reason = _reason(row)
        rows.append(row)
    return rows


def claims_section(rows: list[ClaimRow]) -> dict:
    """``results.json``'s ``claims`` section: per claim its verdict, readings, finding types, parts, headline."""
    out = {}
    for r in rows:
        ev = Counter(evidence(x) for x in r.judged)
        ok, tried = r.rejected
        h = r.headline or {}
        out[r.id] = {
            "verdict": r.verdict, "label": r.label, "reading": r.info.reading,
            "finding_types": r.finding_types,
            "review": dict(r.info.review),
            "other_readings": [{"reading": reading_shown(x, r.info), "verdict": x.get("verdict"),
                                "finding_type": x.get("finding_type", ""), "test": x.get("test", ""),
                                "inside": inside(x), "inside_reason": x.get("inside_reason", "")}
                               for x in r.other_readings],
            "parts": list(r.info.parts), "untested": list(r.untested), "forall": r.info.forall,
            "evidence": dict(sorted(ev.items())), "companions": {"rejected": ok, "tried": tried},
            "failed_tests": [t["nodeid"] for t in r.failed_tests],
            "outside": sum(inside(x) is not True for x in r.stated),
            "headline": {"test": h.get("test", ""), "ratio": h.get("ratio"), "badness": badness(h) if h else None,
                         "worst_case": bool(h.get("worst_case"))} if h else None,
            "reason": r.reason,
            "review_drift": review_drift(r),   # the registry review's typed verdict, when the run derives another
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


def complete(doc: dict) -> dict:
    """Add the registry snapshot (when absent) and the per-claim ``claims`` section to a results document."""
    from .registry import snapshot

    doc.setdefault("registry", snapshot())
    doc["claims"] = claims_section(build_rows(doc))
    return doc
