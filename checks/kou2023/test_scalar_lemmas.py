"""Kou et al. (2023) scalar lemmas as hypothesis property tests.

Claims: kou2023/lem-5.3 (eqs. (5.6)–(5.7), corrected and as printed), kou2023/lem-H.1 (upper bound),
kou2023/lem-H.2 (lower bound), kou2023/lem-H.4 (monotonicity of log(1+at)/log(1+bt)).

Sequences satisfying each hypothesis are built by :func:`theory.papers.kou2023.scalar_lemmas.sequence`
from parameters drawn by hypothesis strategies; the profile is derandomized (fixed examples, no
flakiness). Each property collects its slacks (it does not assert, so every drawn example is kept); the
test computes its verdict from them, records it, then asserts it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from theory import ClaimViolation, assert_claim
from theory.papers.kou2023 import scalar_lemmas as sl

PROFILE = dict(derandomize=True, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
T_SEQ = 3000  # steps per sequence: the sandwich gap settles within ~1/C steps; C ≥ 1e-3 ⇒ 1e3 s.t.u.

log_C1 = st.floats(min_value=math.log(1e-3), max_value=math.log(5.0))
ratio = st.floats(min_value=1.0, max_value=10.0)
x0_pos = st.one_of(st.just(0.0), st.floats(min_value=0.0, max_value=5.0))
laws = st.sampled_from(["lower", "upper", "uniform"])
seeds = st.integers(min_value=0, max_value=2 ** 31 - 1)


def _sandwich(x0, C1, C2, law, seed):
    x = sl.sequence(x0, C1, C2, T_SEQ, law, seed=seed)
    lo, up = sl.lower_h2(x0, C1, T_SEQ), sl.upper_h1(x0, C2, T_SEQ)
    return x, lo, up, sl.tolerance(x)


MATERIAL = 0.25  # issue 19: a term is tested where it is at least this share of the bound's sum

# Worst-case grid (issue 32, "for every" statements): x0 and C over the lemmas' ranges, the proof's equality cases
# included — t = 0 (x_0 = log e^{x0}: slack exactly 0) and C → 0 (the sequence follows the ODE ẋ = Ce^{−x}, whose
# solution log(e^{x0} + Ct) the bounds approach).
WC_X0 = (0.0, 0.5, 1.6, 3.0, 5.0)
WC_C = (1e-4, 1e-3, 1e-2, 0.1, 1.0, 3.0, 5.0)
INSIDE_SCALAR = "a deterministic lemma: its hypothesis holds for every sequence by construction"


def _material(first: float, second: np.ndarray) -> np.ndarray:
    """Steps t where each of the two terms inside the log, first (e^{x0}) and second (the growth term, by t), is
    ≥ MATERIAL of their sum. The terms are written out by the caller with math/numpy, not taken from scalar_lemmas."""
    tot = first + second
    return (first / tot >= MATERIAL) & (second / tot >= MATERIAL)


def _term_summary(rows: list, first: str, second: str) -> dict:
    """Record fields for the material-share steps of every sequence: how many sequences have such steps, the minimal
    slack there, and the two shares at the step where that minimum is reached."""
    mat = [r for r in rows if r["material steps"] > 0]
    if not mat:
        return {"sequences with both terms >= 25%": 0}
    w = min(mat, key=lambda r: r["slack (material steps)"])
    return {"sequences with both terms >= 25%": len(mat), "material steps (all sequences)": sum(r["material steps"] for r in mat),
            "min slack over material steps": w["slack (material steps)"],
            f"share of term {first} (at that step)": w["share first"], f"share of term {second} (at that step)": 1 - w["share first"]}


@pytest.mark.claim("kou2023/lem-5.3")
def test_lemma_5_3_corrected_sandwich(record):
    """Corrected Lemma 5.3: log(e^{x0}+C1 t) ≤ x_t ≤ log(e^{x0}+C2 e^{C2} t) for x_t ≥ 0 and
    C1 e^{−x_t} ≤ x_{t+1} − x_t ≤ C2 e^{−x_t} (the form proved by H.1 and H.2)."""
    rows = []

    @settings(max_examples=120, **PROFILE)
    @given(x0=x0_pos, lc1=log_C1, k=ratio, law=laws, seed=seeds)
    def prop(x0, lc1, k, law, seed):
        C1 = math.exp(lc1)
        C2 = C1 * k
        x, lo, up, tol = _sandwich(x0, C1, C2, law, seed)
        s_lo, s_up = float(np.min(x - lo)), float(np.min(up - x))
        rows.append({"x0": x0, "C1": C1, "C2": C2, "law": law, "slack_lower": s_lo, "slack_upper": s_up,
                     "gap_upper_at_T": float(up[-1] - x[-1]), "gap_lower_at_T": float(x[-1] - lo[-1]),
                     "ok": s_lo >= -tol and s_up >= -tol})

    prop()
    worst = min(min(r["slack_lower"], r["slack_upper"]) for r in rows)
    bad = [r for r in rows if not r["ok"]]
    ok = not bad
    record("holds" if ok else "violated", observed=worst, bound=0.0, reading="reconstructed", evidence="test",
           inside=True, inside_reason=INSIDE_SCALAR,
           config={"sequences": len(rows), "T": T_SEQ, "C1": "log-uniform [1e-3, 5]", "C2/C1": "[1, 10]",
                   "x0": "{0} ∪ U(0,5)", "increments": "C·e^{-x_t}, C ∈ {C1, C2, U(C1,C2)}"},
           tightness=(f"minimal slack {worst:.2e} (0 at t=0 by construction); median end gap of the upper "
                      f"bound {np.median([r['gap_upper_at_T'] for r in rows]):.3f}, of the lower "
                      f"{np.median([r['gap_lower_at_T'] for r in rows]):.3f}; {len(bad)} violations (tolerance: "
                      "4u·max(1,|x|)·(T+4), rounding of T sums)"),
           table=(bad + rows)[:40],
           note="the corrected form (e^{x0}, as in H.1/H.2 that prove it), not the printed one: a reconstructed "
                "reading recorded beside the verdict, which the as-printed test gives")
    assert ok, bad[:3]


_PIN_T = (0, 1, 7, 100, T_SEQ)


def _pin_formulas(x0: float, C1: float, C2: float) -> None:
    """The four bounds of scalar_lemmas at a few t, against Lemma 5.3 (5.7) as printed and Lemmas H.1/H.2, evaluated
    here term by term with math (not with the module): printed log(e^{−x0} + C1 t), log(e^{−x0} + C2 e^{C2} t);
    corrected (H.2, H.1) the same with e^{x0}. A constant changed in the module (C2 for C2e^{C2}, 2C1, …) changes
    the finding's size, so it must fail here (AssertionError, not the expected ClaimViolation). Tolerance: a few
    ulps of each log (logaddexp vs log of a sum), relative 1e-12."""
    lo_p, up_p = sl.printed_53(x0, C1, C2, T_SEQ)
    lo_c, up_c = sl.lower_h2(x0, C1, T_SEQ), sl.upper_h1(x0, C2, T_SEQ)
    for t in _PIN_T:
        ref = {"printed lower": (lo_p[t], math.exp(-x0) + C1 * t), "printed upper": (up_p[t], math.exp(-x0) + C2 * math.exp(C2) * t),
               "H.2 lower": (lo_c[t], math.exp(x0) + C1 * t), "H.1 upper": (up_c[t], math.exp(x0) + C2 * math.exp(C2) * t)}
        for name, (got, arg) in ref.items():
            want = math.log(arg)
            assert abs(got - want) <= 1e-12 * max(1.0, abs(want)), (name, x0, C1, C2, t, got, want)


@pytest.mark.claim("kou2023/lem-5.3")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="Lemma 5.3 prints exp(-x0) where H.1/H.2 have e^{x0}: the printed upper bound "
                          "x_t <= log(e^{-x0} + C2 e^{C2} t) fails for x0 > 0 at t=0")
def test_lemma_5_3_as_printed(record):
    """Lemma 5.3 exactly as printed (exp(−x_0) in both bounds): false for every x_0 > 0. A deterministic
    census of 60 sequences, then a hypothesis search over sequences satisfying the hypothesis; the
    printed statement is asserted (ClaimViolation) after the record.

    The size of the finding is pinned so that another wrong statement cannot pass as this one: every
    violating sequence exceeds the printed upper bound by exactly 2x_0 at its worst (t = 0, where the bound
    reads x_0 ≤ −x_0; later the excess log(e^{x0}+Kt) − log(e^{−x0}+Kt) is smaller), sequences with x_0 = 0
    never violate, and the corrected bound with the same C₂e^{C₂} holds on every one of the same sequences —
    so the discrepancy is the sign of x_0, not the constant C₂e^{C₂} (a wrong C₂ would fail at x_0 = 0 too). The bounds'
    constants themselves are pinned against the printed formulas evaluated independently (_pin_formulas), so a
    looser wrong constant, which no sequence would reveal, cannot pass as this finding either."""
    counts = {"x0=0": [0, 0], "x0>0": [0, 0]}  # [violations, sequences]
    first = None
    size_dev = []  # |max excess over the printed upper bound − 2x0| of every sequence with x0 > 0
    corrected_viol = 0  # violations of the corrected bounds (e^{x0}, same C1, C2) on the same sequences

    def _pin(x, x0, C1, C2, up):
        nonlocal corrected_viol
        tol = sl.tolerance(x)
        _pin_formulas(x0, C1, C2)  # the bounds' constants, against their printed formulas (independent evaluation)
        if x0 > 0:
            size_dev.append(abs(float(np.max(x - up)) - 2 * x0) / max(1.0, x0))
        lo_c, up_c = sl.lower_h2(x0, C1, T_SEQ), sl.upper_h1(x0, C2, T_SEQ)
        corrected_viol += int(sl.slack(x, lo_c, up_c) < -tol)

    for s in range(60):  # deterministic census
        rng = np.random.default_rng(s)
        x0 = 0.0 if s % 2 == 0 else float(rng.uniform(0.01, 5.0))
        C1 = float(np.exp(rng.uniform(np.log(1e-3), np.log(5.0))))
        C2 = C1 * float(rng.uniform(1, 10))
        x = sl.sequence(x0, C1, C2, T_SEQ, "uniform", seed=s)
        lo, up = sl.printed_53(x0, C1, C2, T_SEQ)
        bad = sl.slack(x, lo, up) < -sl.tolerance(x)
        _pin(x, x0, C1, C2, up)
        key = "x0=0" if x0 == 0 else "x0>0"
        counts[key][0] += int(bad)
        counts[key][1] += 1
        if bad and first is None:
            first = {"x0": x0, "C1": C1, "C2": C2, "printed_upper_at_0": float(up[0]), "x_0": x0}
    found = []

    @settings(max_examples=60, **PROFILE)
    @given(x0=st.floats(min_value=0.0, max_value=5.0), lc1=log_C1, k=ratio, law=laws, seed=seeds)
    def prop(x0, lc1, k, law, seed):
        C1 = math.exp(lc1)
        x = sl.sequence(x0, C1, C1 * k, T_SEQ, law, seed=seed)
        lo, up = sl.printed_53(x0, C1, C1 * k, T_SEQ)
        _pin(x, x0, C1, C1 * k, up)
        # x0 below the rounding allowance counts as x0 = 0 (a violation of size 2x0 < tolerance is invisible)
        found.append((x0, bool(sl.slack(x, lo, up) < -sl.tolerance(x)), sl.tolerance(x)))

    prop()
    hv = [x0 for x0, b, _ in found if b]
    # every drawn x0 whose violation 2x0 clears the rounding allowance violates; none below half of it does
    hit = all(b for x0, b, tol in found if 2 * x0 > 2 * tol) and not any(b for x0, b, tol in found if 2 * x0 < tol / 2)
    # control: the census and the search only violate at x0 > 0 (at x0 = 0 printed = corrected form), and
    # every sequence with x0 above rounding violates
    assert counts["x0=0"][0] == 0 and all(x0 > 0 for x0 in hv)
    assert counts["x0>0"][0] == counts["x0>0"][1] and hit
    # size: the worst excess over the printed upper bound is 2x0 (relative 1e-9: rounding of ≤ 3000 steps);
    # the corrected bounds (same constants) are never violated on the same sequences
    size_ok = max(size_dev) <= 1e-9 and corrected_viol == 0
    assert size_ok, (max(size_dev), corrected_viol)
    # worst case of the printed upper bound over the census, the search and the t = 0 equality case: the largest
    # violation is 2·x0 at t = 0 for the largest x0 drawn (x0 ≤ 5: at most 10)
    x0_max = max([x0 for x0, _, _ in found] + [0.0])
    record("expected-failure", observed=2 * x0_max, bound=0, finding_type="typo", evidence="test", inside=True,
           inside_reason=INSIDE_SCALAR, worst_case=True,
           config={"sequences": 60 + len(found), "T": T_SEQ, "violating sequences": counts["x0>0"][0] + len(hv)},
           tightness=(f"every violating sequence exceeds the printed upper bound by exactly 2·x0 at its worst "
                      f"(max |excess − 2x0|/max(1,x0) = {max(size_dev):.1e} over {len(size_dev)} sequences with x0 > 0); "
                      f"the corrected bound with the same C2·e^C2 has {corrected_viol} violations on the same sequences"),
           table=[{"x0": k, "violations": v[0], "sequences": v[1]} for k, v in counts.items()]
           + [{"x0": "hypothesis search, x0 in [0, 5]", "violations": len(hv), "sequences": len(found)}],
           finding=(f"Lemma 5.3 as printed (exp(-x0) in place of e^{{x0}}) fails in {counts['x0>0'][0]}/"
                    f"{counts['x0>0'][1]} census sequences with x0>0 ({counts['x0=0'][0]}/{counts['x0=0'][1]} with "
                    f"x0=0) and in {len(hv)}/{len(found)} hypothesis-drawn sequences (all with x0 > 0); at t=0 it "
                    f"asserts x0 <= -x0 (e.g. {first}). Harmless in the paper, where x0=0."))
    assert_claim(counts["x0>0"][0] == 0 and not hv,
                 f"printed Lemma 5.3 violated by {counts['x0>0'][0] + len(hv)} sequences with x0 > 0")


@pytest.mark.claim("kou2023/lem-H.1")
def test_h1_upper_bound_nonmonotone(record):
    """H.1: x_t ≥ 0, x_{t+1} − x_t ≤ C e^{−x_t} ⇒ x_t ≤ log(e^{x0} + C e^{C} t), also for sequences
    that sometimes decrease (increments U(−1,1)·C e^{−x_t}, clipped at 0) and for x_{t+1}−x_t = C e^{−x_t}."""
    rows = []

    @settings(max_examples=120, **PROFILE)
    @given(x0=x0_pos, lc=st.floats(min_value=math.log(1e-3), max_value=math.log(5.0)),
           law=st.sampled_from(["signed", "upper"]), seed=seeds)
    def prop(x0, lc, law, seed):
        C = math.exp(lc)
        x = sl.sequence(x0, C, C, T_SEQ, law, seed=seed, floor=0.0)
        up = sl.upper_h1(x0, C, T_SEQ)
        s = float(np.min(up - x))
        growth = C * math.exp(C) * np.arange(T_SEQ + 1, dtype=float)  # the term C e^C t, written here
        mat = _material(math.exp(x0), growth)
        k = int(np.argmin(np.where(mat, up - x, np.inf))) if mat.any() else 0
        rows.append({"x0": x0, "C": C, "law": law, "slack": s, "decreasing_steps": int((np.diff(x) < 0).sum()),
                     "material steps": int(mat.sum()), "slack (material steps)": float((up - x)[k]) if mat.any() else math.inf,
                     "share first": math.exp(x0) / (math.exp(x0) + growth[k]), "ok": s >= -sl.tolerance(x)})

    prop()
    # the adversarial worst case: the exact supremum of x_t over every sequence the hypothesis allows (sl.sup_h1; for
    # C > 1 above the sequence of exact increments), on the grid WC_X0 × WC_C, the t = 0 equality case included
    wc = []
    for x0 in WC_X0:
        for C in WC_C:
            M = sl.sup_h1(x0, C, T_SEQ)
            up = sl.upper_h1(x0, C, T_SEQ)
            wc.append({"x0": x0, "C": C, "law": "supremum (adversarial)", "slack": float(np.min(up - M)),
                       "slack t >= 1": float(np.min(up[1:] - M[1:])),
                       "above exact increments": float(np.max(M - sl.sequence(x0, C, C, T_SEQ, "upper"))),
                       "ok": float(np.min(up - M)) >= -sl.tolerance(M)})
    worst = min([r["slack"] for r in rows] + [r["slack"] for r in wc])
    closest = min(wc, key=lambda r: r["slack t >= 1"])
    bad = [r for r in rows + wc if not r["ok"]]
    terms = _term_summary(rows, "e^{x0}", "C e^{C} t")
    # issue 19: both terms of the bound are tested where each is ≥ 25 % of their sum (asserted: the draws reach it)
    material = terms["sequences with both terms >= 25%"] >= 10
    record("holds" if not bad else "violated", observed=worst, bound=0.0, evidence="test", inside=True,
           inside_reason=INSIDE_SCALAR, worst_case=True,
           config={"sequences": len(rows), "T": T_SEQ, "worst-case grid": {"x0": WC_X0, "C": WC_C}, **terms},
           covers=["term: e^{x0}", "term: C e^{C} t"] if material else [],
           tightness=(f"minimal slack {worst:.2e} over {len(rows)} drawn sequences and the exact supremum on "
                      f"{len(wc)} (x0, C) ({len(bad)} violations; 0 is the t = 0 equality case); over t ≥ 1 the "
                      f"adversary comes closest at x0 = {closest['x0']}, C = {closest['C']:g} (slack "
                      f"{closest['slack t >= 1']:.2e}: the C → 0 equality case); the supremum exceeds the exact-increment "
                      f"sequence by up to {max(r['above exact increments'] for r in wc):.3f}; "
                      f"{sum(r['decreasing_steps'] > 0 for r in rows)} drawn sequences had decreasing steps"),
           table=(bad + wc + rows)[:60])
    assert not bad, bad[:3]
    assert material, terms
    assert max(r["above exact increments"] for r in wc) > 0.1  # the search goes beyond the laws of sl.sequence


@pytest.mark.claim("kou2023/lem-H.1")
def test_h1_rejects_bound_without_exp_factor(record):
    """Mutation: dropping the e^{C} factor (x_t ≤ log(e^{x0} + C t)) is false for x_{t+1}−x_t = C e^{−x_t};
    the check must reject it (the e^{C} factor of H.1 is needed)."""
    excess = {}
    for C in (0.1, 1.0, 3.0):
        x = sl.sequence(0.0, C, C, T_SEQ, "upper")
        excess[C] = float(np.max(x - sl.upper_h1(0.0, C, T_SEQ, with_exp_factor=False)))
        assert sl.slack(x, upper=sl.upper_h1(0.0, C, T_SEQ)) >= -sl.tolerance(x)  # control: H.1 itself holds
    rejected = all(e > 1e-3 for e in excess.values())
    record("holds" if rejected else "violated", role="companion", observed=min(excess.values()), bound=0.0,
           table=[{"C": c, "max excess over log(1+Ct)": e} for c, e in excess.items()],
           note=f"mutation x_t ≤ log(e^x0 + Ct) (no e^C) exceeded by ≥ {min(excess.values()):.3g} (rejected: {rejected}); "
                "with e^C it holds")
    assert rejected


@pytest.mark.claim("kou2023/lem-H.2")
def test_h2_lower_bound(record):
    """H.2: x_{t+1} − x_t ≥ C e^{−x_t} ⇒ x_t ≥ log(e^{x0} + C t); no sign condition (x0 < 0 included)."""
    rows = []

    @settings(max_examples=120, **PROFILE)
    @given(x0=st.floats(min_value=-5.0, max_value=5.0), lc=st.floats(min_value=math.log(1e-3), max_value=math.log(5.0)),
           k=st.floats(min_value=1.0, max_value=2.0), law=laws, seed=seeds)
    def prop(x0, lc, k, law, seed):
        C = math.exp(lc)
        x = sl.sequence(x0, C, C * k, T_SEQ, law, seed=seed)
        lo = sl.lower_h2(x0, C, T_SEQ)
        s = float(np.min(x - lo))
        growth = C * np.arange(T_SEQ + 1, dtype=float)  # the term C t, written here
        mat = _material(math.exp(x0), growth)
        j = int(np.argmin(np.where(mat, x - lo, np.inf))) if mat.any() else 0
        rows.append({"x0": x0, "C": C, "C_max/C": k, "law": law, "slack": s,
                     "gap_at_T": float(x[-1] - lo[-1]), "material steps": int(mat.sum()),
                     "slack (material steps)": float((x - lo)[j]) if mat.any() else math.inf,
                     "share first": math.exp(x0) / (math.exp(x0) + growth[j]), "ok": s >= -sl.tolerance(x)})

    prop()
    # the adversarial worst case: the infimum of x_t over every sequence the hypothesis allows is the sequence with
    # increments exactly C e^{−x_t} (x_1 ≥ f(x0) ≥ log C + 1 and f(x) = x + Ce^{−x} is increasing above log C), on the
    # grid (−WC_X0 ∪ WC_X0) × WC_C, the t = 0 equality case included
    wc = []
    for x0 in sorted({-x for x in WC_X0} | set(WC_X0)):
        for C in WC_C:
            x = sl.sequence(x0, C, C, T_SEQ, "lower")
            lo = sl.lower_h2(x0, C, T_SEQ)
            wc.append({"x0": x0, "C": C, "law": "infimum (exact increments)", "slack": float(np.min(x - lo)),
                       "slack t >= 1": float(np.min(x[1:] - lo[1:])), "ok": float(np.min(x - lo)) >= -sl.tolerance(x)})
    worst = min([r["slack"] for r in rows] + [r["slack"] for r in wc])
    closest = min(wc, key=lambda r: r["slack t >= 1"])
    bad = [r for r in rows + wc if not r["ok"]]
    eq = [r["gap_at_T"] for r in rows if r["law"] == "lower"]
    terms = _term_summary(rows, "e^{x0}", "C t")
    material = terms["sequences with both terms >= 25%"] >= 10  # issue 19 (asserted below)
    record("holds" if not bad else "violated", observed=worst, bound=0.0, evidence="test", inside=True,
           inside_reason=INSIDE_SCALAR, worst_case=True,
           config={"sequences": len(rows), "T": T_SEQ, "worst-case grid": {"x0": "±" + str(WC_X0), "C": WC_C}, **terms},
           covers=["term: e^{x0}", "term: C t"] if material else [],
           tightness=(f"minimal slack {worst:.2e} over {len(rows)} drawn sequences and the exact infimum on {len(wc)} "
                      f"(x0, C) ({len(bad)} violations; 0 is the t = 0 equality case); over t ≥ 1 closest at x0 = "
                      f"{closest['x0']}, C = {closest['C']:g} (slack {closest['slack t >= 1']:.2e}); end gap when "
                      f"increments equal C e^(-x): median {np.median(eq) if eq else float('nan'):.3g} (nearly attained)"),
           table=(bad + wc + rows)[:60])
    assert not bad, bad[:3]
    assert material, terms


@pytest.mark.claim("kou2023/lem-H.2")
def test_h2_rejects_doubled_constant(record):
    """Mutation: x_t ≥ log(e^{x0} + 2C t) is false for x_{t+1}−x_t = C e^{−x_t}; the check rejects it."""
    found = []
    for C in (1e-2, 0.3, 2.0):
        x = sl.sequence(0.0, C, C, T_SEQ, "lower")
        found.append(sl.slack(x, lower=sl.lower_h2(0.0, 2 * C, T_SEQ)))
        assert sl.slack(x, lower=sl.lower_h2(0.0, C, T_SEQ)) >= -sl.tolerance(x)  # control: H.2 itself holds
    rejected = all(f < -1e-3 for f in found)
    record("holds" if rejected else "violated", role="companion", observed=max(found), bound=0.0,
           note=f"mutation x_t ≥ log(e^x0 + 2Ct): violated by {[round(-f, 4) for f in found]} (rejected: {rejected})")
    assert rejected


@pytest.mark.claim("kou2023/lem-H.4")
def test_h4_log_ratio_monotone(record):
    """H.4: for b ≥ a > 0, t ↦ log(1+at)/log(1+bt) is non-decreasing (from a/b to 1): property test
    over (a, b=ka) and 400 log-spaced t in [1e-6, 1e8], plus the catalog's 30×30 grid."""
    t = np.geomspace(1e-6, 1e8, 400)
    worst = []

    @settings(max_examples=300, **PROFILE)
    @given(la=st.floats(min_value=math.log(1e-4), max_value=math.log(1e3)),
           lk=st.floats(min_value=0.0, max_value=math.log(1e7)))
    def prop(la, lk):
        a = math.exp(la)
        b = a * math.exp(lk)
        r = sl.log_ratio(a, b, t)
        d = float(np.min(np.diff(r)))
        # rounding: each ratio carries a few ulps of relative error (log1p is correctly rounded to ~1 ulp)
        worst.append((d, bool(r[0] >= a / b * (1 - 1e-6) - 1e-12 and r[-1] <= 1 + 1e-12)))

    prop()
    grid = np.geomspace(1e-4, 1e3, 30)
    pairs = [(a, b) for a in grid for b in grid if b >= a]
    gd = min(float(np.min(np.diff(sl.log_ratio(a, b, t)))) for a, b in pairs)
    # adversarial search: the ratio depends on (u = at, k = b/a) only, so an exhaustive log grid of u ∈ [1e-8, 1e12]
    # (2000 points) against k from the equality case k = 1 (ratio ≡ 1, differences exactly 0) through 1 + 1e-9 … 1e8
    u = np.geomspace(1e-8, 1e12, 2000)
    ks_ = np.concatenate([[1.0, 1 + 1e-9, 1 + 1e-6, 1 + 1e-3], np.geomspace(1.01, 1e8, 36)])
    adv = {float(k): float(np.min(np.diff(sl.log_ratio(1.0, k, u)))) for k in ks_}
    k_worst = min(adv, key=adv.get)
    eq_case = adv[1.0]
    dmin = min(min(d for d, _ in worst), gd, min(adv.values()))
    ends_ok = all(e for _, e in worst)
    ok = dmin >= -1e-12 and ends_ok and eq_case == 0.0
    record("holds" if ok else "violated", observed=dmin, bound=-1e-12, evidence="test", inside=True,
           inside_reason="a deterministic lemma: b ≥ a > 0 by construction of every example", worst_case=True,
           covers=["every b ≥ a > 0", "every t ≥ s > 0", "ratio within [a/b, 1]"],
           config={"examples": len(worst), "grid_pairs": len(pairs), "t": "400 log-spaced in [1e-6, 1e8]",
                   "adversarial grid": "u = at: 2000 log-spaced in [1e-8, 1e12], k = b/a: 1 (equality), 1+1e-9 … 1e8"},
           tightness=(f"most negative successive difference over property examples, the (a, b) grid and the (u, k) "
                      f"search (must be ≥ −1e-12): {dmin:.2e}; the equality case k = 1 gives exactly {eq_case}; the "
                      f"search's worst k = {k_worst:.6g}"),
           note=f"end values within [a/b, 1] for every example: {ends_ok}")
    assert ok


@pytest.mark.claim("kou2023/lem-H.4")
def test_h4_needs_b_ge_a(record):
    """Mutation: with b < a the ratio is decreasing, so the hypothesis b ≥ a is needed; the check
    must reject the statement for (a, b) = (2, 1)."""
    t = np.geomspace(1e-6, 1e8, 400)
    r = sl.log_ratio(2.0, 1.0, t)
    d = float(np.min(np.diff(r)))
    rejected = d < -1e-3
    record("holds" if rejected else "violated", role="companion", observed=d, bound=-1e-12,
           note=f"mutation (a,b)=(2,1): ratio decreases from 2 to 1, most negative step {d:.3g} (rejected: {rejected})")
    assert rejected


@pytest.mark.claim("kou2023/lem-H.1")
def test_rounding_allowance_matches_its_derivation(record):
    """The slack the H.1–H.3 and Lemma 5.3 checks forgive (``sl.tolerance``) is the rounding bound derived here, not a
    free constant: x_t accumulates at most one rounding of relative size u = 2⁻⁵³ per step on values ≤ max|x| (T
    steps), and log/exp add a few ulps (4 more steps' worth), with a margin of 8: 8u·max(1, max|x|)·(T + 4) (= 4 eps,
    eps = 2u being numpy's). A larger allowance would hide violations the arithmetic cannot explain."""
    rows, worst = [], 0.0
    for T, scale in ((10, 1.0), (3000, 1.0), (3000, 40.0), (1, 1e-3)):
        x = scale * np.linspace(0.1, 1.0, T)
        ref = 8 * 2.0 ** -53 * max(1.0, scale) * (T + 4)
        got = sl.tolerance(x)
        worst = max(worst, abs(got / ref - 1))
        rows.append({"T": T, "max |x|": float(np.abs(x).max()), "allowance": got, "derived here": ref})
    record("holds" if worst <= 1e-12 else "violated", evidence="consistency", observed=worst, bound=1e-12, table=rows,
           inside=True, inside_reason="a check of the rounding allowance against its derivation: no hypotheses",
           tightness="relative difference between the checks' rounding allowance and its derivation")
    assert worst <= 1e-12, rows
