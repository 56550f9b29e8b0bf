"""Wang et al. Lemma B.2 (Eqs. 36–57), Lemma C.2 (Eqs. 91–99), Eq. (110): Monte-Carlo failure rates vs δ.

Each statement "w.p. ≥ 1−δ the deviation is ≤ b(δ)" is tested by R independent draws and a one-sided exact
binomial test (theory.stats.failure_rate_test) of H0: P(fail) ≤ δ. Every check asserts a family of such tests
(configurations × items, or widths × inputs x_i); the family-wise false-alarm rate is FAMILY_ALPHA, by Holm's
step-down procedure over the k tests of the family (concentration.holm; valid whatever the dependence between the
tests, e.g. the five x_i of Eq. (110) share one W per draw). A check fails when anything is rejected, which happens
under Holm exactly when it happens under Bonferroni (smallest p < FAMILY_ALPHA/k), so the false alarm is FAMILY_ALPHA
either way; Holm rejects more of a wrong version (companions, the pinned pattern of eq-143). Draws within one test
are independent. FAMILY_ALPHA = 1e-4 per check (issue 35: the suite's Σα ≤ 0.01, this paper's share ≤ 0.0025).
"""
from __future__ import annotations

import math

import pytest
import torch

from fixtures import wang2024 as fw
from theory import ClaimViolation, assert_claim
from theory.papers.wang2024 import concentration as conc
from theory.papers.wang2024 import dynamics as dyn
from theory.stats import failure_rate_test

FAMILY_ALPHA = 1e-4
DELTA = 0.05
ITEMS = ("item1", "item2", "item3")
LEMB2_CONFIGS = [(4, 1, 0.0), (16, 4, 0.25), (64, 16, 0.25), (256, 8, 0.0), (1024, 8, 0.5)]
# issue 19: the share of the deviation term b in the bound centre + b (centre m^{-q}, m^{-2q} in item 2); (16, 4, 0.25)
# has both terms ≥ 25 % in every item (deviation 0.61, 0.40, 0.40), (4, 1, 0) and (1024, 8, 0.5) the extremes.
MATERIAL = 0.25
LEMB2_TERMS = {"centre": "term: m^-q main term (m^-2q in item 2)", "deviation": "term: deviation bound O(sqrt(8 log(.)/.))"}


def _holm_mark(rows, alpha=None):
    """Mark each row's test "rejects (Holm)" over the family ``rows`` at family-wise ``alpha``; the rejected rows."""
    alpha = FAMILY_ALPHA if alpha is None else alpha
    for r, rej in zip(rows, conc.holm([r["p-value"] for r in rows], alpha)):
        r["rejects (Holm)"] = rej
    return [r for r in rows if r["rejects (Holm)"]]


def _lemB2_table(gen, R, configs, delta=DELTA, maker=None):
    """One row per (configuration, item) with its failure count, rate and binomial p-value (the family's Holm
    procedure is applied by the caller, :func:`_holm_mark`)."""
    rows = []
    for (m, n, q) in configs:
        Z = maker(R, n, m) if maker else torch.randn(R, n, m, generator=gen, dtype=torch.float64, device=gen.device) * m ** (-(0.5 + q))
        dev = conc.lemB2_deviations(Z, q)
        b = conc.lemB2_bounds(m, n, q, delta)
        for item in ITEMS:
            fails = int((dev[item] > b[item]).sum())
            t = failure_rate_test(fails, R, delta, FAMILY_ALPHA)
            centre = m ** (-2 * q) if item == "item2" else m ** -q
            rows.append({"m": m, "n": n, "q": q, "item": item, "failures": fails, "R": R, "rate": t.rate,
                         "p-value": t.p_value,
                         "share of deviation in centre + deviation": b[item] / (centre + b[item]),
                         "95% quantile/bound": float(dev[item].quantile(0.95) / b[item])})
    return rows


def _cfg(R, k, **kw):
    return {"delta": DELTA, "R": R, "family-wise alpha": FAMILY_ALPHA, "tests in family": k,
            "multiple testing": "Holm step-down (first step alpha/k)"} | kw


@pytest.mark.claim("wang2024/lem-B.2")
def test_gaussian_norm_averages_iid(record, ctx):
    """Items 1–3 with i.i.d. z_i ~ N(0, m^{-(1+2q)} I_m): failure rate ≤ δ (binomial tests, 5 configs × 3 items,
    family-wise α = 1e-3)."""
    gen = record.generator({"R": 2000})
    R = ctx.pick(quick=2000, full=20000)
    k = len(LEMB2_CONFIGS) * len(ITEMS)
    rows = _lemB2_table(gen, R, LEMB2_CONFIGS)
    rej = _holm_mark(rows)
    pin = _lemB2_pin()
    sh = {i: [r["share of deviation in centre + deviation"] for r in rows if r["item"] == i] for i in ITEMS}
    bal = {i: max((r for r in rows if r["item"] == i),
                  key=lambda r: min(r["share of deviation in centre + deviation"], 1 - r["share of deviation in centre + deviation"]))
           for i in ITEMS}
    shares = {i: {"max share of deviation": max(v), "max share of centre": 1 - min(v),
                  "most balanced (m, n, q)": [bal[i]["m"], bal[i]["n"], bal[i]["q"]],
                  "its deviation share": bal[i]["share of deviation in centre + deviation"]} for i, v in sh.items()}
    terms = [LEMB2_TERMS[t] for t in ("centre", "deviation")
             if all(s_[f"max share of {t}"] >= MATERIAL for s_ in shares.values())]  # reached in every item
    record("holds" if not rej else "violated", observed=max(r["rate"] for r in rows), bound=DELTA, table=rows,
           covers=["item 1", "item 2", "item 3"] + terms, false_alarm=FAMILY_ALPHA, evidence="test",
           **fw.inside({"z_i i.i.d. N(0, m^-(1+2q) I_m)": ("drawn so, independent across i and draws", True),
                        "delta in (0, 1)": (DELTA, 0 < DELTA < 1),
                        "q > 0 (stated, not invoked by the proof)": ([c[2] for c in LEMB2_CONFIGS], True)}),
           tightness="max failure rate over items/configs vs δ", config=_cfg(R, k),
           hypotheses={"bounds vs the printed formulas (max rel)": pin, "term shares per item": shares},
           note="95% deviation quantile / bound in the table (bound 1 loose by the union bound over n). The bounds are "
                "loose (a failure rate far below δ cannot see a constant made smaller), so their values are pinned to "
                "the printed formulas (36)–(57), evaluated apart in the test.")
    assert not rej, rej
    assert pin < 1e-14, pin


def _lemB2_pin() -> float:
    """Largest relative gap between conc.lemB2_bounds and the printed bounds written here: item 1
    m^{-q}√(8 ln(2n/δ)/m), item 2 m^{-2q}·max(ε, √ε), item 3 m^{-q}√ε, ε = 8 ln(2/δ)/(mn) (a few ulps)."""
    gap = 0.0
    for (m, n, q) in LEMB2_CONFIGS:
        eps = 8.0 * math.log(2.0 / DELTA) / (m * n)
        want = {"item1": math.pow(m, -q) * math.sqrt(8.0 * math.log(2.0 * n / DELTA) / m),
                "item2": math.pow(m, -2.0 * q) * max(eps, math.sqrt(eps)), "item3": math.pow(m, -q) * math.sqrt(eps)}
        got = conc.lemB2_bounds(m, n, q, DELTA)
        gap = max(gap, *(abs(got[i] / want[i] - 1) for i in ITEMS))
    return gap


@pytest.mark.claim("wang2024/lem-B.2")
def test_gaussian_norm_rejects_tightened(record, ctx):
    """Companion: item 3 with its constant 8 replaced by 1/8 (a 64× tighter variance proxy, below the CLT scale) is
    rejected by the binomial test at the main check's per-test level."""
    gen = record.generator({"R": 2000})
    R, m, n, q = 2000, 64, 16, 0.25
    k = len(LEMB2_CONFIGS) * len(ITEMS)
    Z = torch.randn(R, n, m, generator=gen, dtype=torch.float64, device=gen.device) * m ** (-(0.5 + q))
    dev = conc.lemB2_deviations(Z, q)["item3"]
    wrong = m ** -q * math.sqrt(0.125 * math.log(2 / DELTA) / (m * n))
    t = failure_rate_test(int((dev > wrong).sum()), R, DELTA, FAMILY_ALPHA / k)
    record("holds" if t.rejects else "violated", role="companion", observed=t.rate, bound=DELTA,
           config=_cfg(R, k, m=m, n=n, q=q),
           tightness="failure rate of the tightened item-3 bound (rejected when p < α/k, Holm's strictest step)",
           note=f"tightened item-3 bound: failure rate {t.rate:.3f}, p = {t.p_value:.1e} (per-test α = {FAMILY_ALPHA / k:.1e})")
    assert t.rejects


def _chi2_identical_rates(m: int, n: int, q: float, delta: float = DELTA) -> dict:
    """Exact failure probabilities of Lemma B.2's three bounds when all z_i are one vector z ~ N(0, m^{-(1+2q)} I_m)
    (identical inputs x_i, shared W(0)): then every average is a function of ‖z‖² = m^{-(1+2q)}·χ²_m, so with
    c₁ = √(8 log(2n/δ)/m), e = 8 log(2/δ)/(mn), c₂ = max(e, √e), c₃ = √e:
    item 1 fails iff |√(χ²_m/m) − 1| > c₁, item 2 iff |χ²_m/m − 1| > c₂, item 3 iff |√(χ²_m/m) − 1| > c₃.
    Written from the χ² law (scipy), independently of conc.lemB2_bounds / lemB2_deviations."""
    from scipy.stats import chi2

    e = 8 * math.log(2 / delta) / (m * n)
    c1, c2, c3 = math.sqrt(8 * math.log(2 * n / delta) / m), max(e, math.sqrt(e)), math.sqrt(e)

    def outside(lo, hi):  # P(χ²_m/m ∉ [lo, hi])
        return float(chi2.sf(m * hi, m) + chi2.cdf(m * max(lo, 0.0), m))

    return {"item1": outside((1 - c1) ** 2 if c1 < 1 else 0.0, (1 + c1) ** 2), "item2": outside(1 - c2, 1 + c2),
            "item3": outside((1 - c3) ** 2, (1 + c3) ** 2)}


EQ143_KINDS = ("identical", "random unit, d=8", "orthonormal")
# the pattern of the finding: the pairs (inputs, item) that must be rejected, and those that must not be (the controls:
# item 1 is a union bound, valid under dependence; orthonormal inputs give independent z_i). The 8-direction inputs
# are reported, not pinned: their failure rates depend on the drawn directions' Gram matrix (seed 5 draws one whose
# item-2 rate is not separable from δ with 2000 replicates), so either outcome is this finding.
EQ143_PATTERN = {("identical", "item2"), ("identical", "item3")}
EQ143_NEVER = {(k, "item1") for k in ("identical", "random unit, d=8", "orthonormal")} | {
    ("orthonormal", i) for i in ("item1", "item2", "item3")}
EQ143_Z = 4.5  # |observed − exact χ² rate| ≤ 4.5 binomial s.e. (two-sided false alarm 7e-6 per rate)
EQ143_Z_ALARM = math.erfc(EQ143_Z / math.sqrt(2))  # P(|N(0,1)| > EQ143_Z), the normal approximation of one size test


@pytest.mark.claim("wang2024/eq-143")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="proof of Thm 5.5, Eq. (143): Lemma B.2 items 2–3 need i.i.d. z_i, but z_i = W(0)x_i share one "
                          "W(0); with fewer input directions than n their failure rates far exceed δ")
def test_gaussian_norm_shared_W0(record, ctx):
    """wang2024/eq-143 (reading: proof step of Thm 5.5): Lemma B.2 applied to z_i = W(0)x_i with one shared W(0), for
    identical / random-in-d=8 / orthonormal unit x_i (3 input kinds × 3 items, family-wise α = 1e-3).

    Size and pattern pinned (so that a different wrong constant would not pass as this finding): the rejected pairs
    include EQ143_PATTERN (items 2–3 for identical inputs) and none of EQ143_NEVER (orthonormal inputs, i.e.
    independent z_i, and item 1, a union bound valid under dependence: the controls) — and the
    identical-input failure rates of items 2 and 3 equal their exact χ²_m values (:func:`_chi2_identical_rates`)
    within EQ143_Z binomial standard errors."""
    gen = record.generator({"shared": 1})
    R, m, n, q = ctx.pick(quick=2000, full=20000), 64, 32, 0.25
    k = len(EQ143_KINDS) * len(ITEMS)

    def shared(kind):
        def make(R_, n_, m_):
            d = {"identical": 1, "random unit, d=8": 8, "orthonormal": n_}[kind]
            W = torch.randn(R_, m_, d, generator=gen, dtype=torch.float64, device=gen.device) * m_ ** (-(0.5 + q))
            if kind == "identical":
                Xs = torch.ones(n_, 1, dtype=torch.float64, device=gen.device)
            elif kind == "orthonormal":
                Xs = torch.eye(n_, dtype=torch.float64, device=gen.device)
            else:
                Xs = torch.randn(n_, d, generator=gen, dtype=torch.float64, device=gen.device)
                Xs = Xs / Xs.norm(dim=-1, keepdim=True)
            return (W @ Xs.T).transpose(-1, -2)  # (R, n, m)
        return make

    rows = []
    for kind in EQ143_KINDS:
        r = _lemB2_table(gen, R, [(m, n, q)], maker=shared(kind))
        for x in r:
            x["inputs"] = kind
        rows += r
    rej = _holm_mark(rows)
    exact = _chi2_identical_rates(m, n, q)
    size_rows = []
    for r in rows:
        if r["inputs"] == "identical":
            p = exact[r["item"]]
            se = math.sqrt(max(p * (1 - p), 1e-12) / R)
            r["exact chi2 rate"], r["|obs - exact| / s.e."] = p, abs(r["rate"] - p) / se
            size_rows.append(r)
    worst = max(rows, key=lambda r: r["rate"])
    obs23 = "/".join(f"{r['rate']:.3f}" for r in size_rows if r["item"] != "item1")
    failing = {(r["inputs"], r["item"]) for r in rej}
    pattern_ok = EQ143_PATTERN <= failing and not failing & EQ143_NEVER
    size_ok = all(r["|obs - exact| / s.e."] <= EQ143_Z for r in size_rows if r["item"] in ("item2", "item3"))
    # chance failure of this test when its reading holds (union bound): a control pair of EQ143_NEVER rejected (Holm
    # keeps the family-wise error on the true nulls ≤ FAMILY_ALPHA) or one of the two size comparisons outside EQ143_Z
    # s.e.; the rejections that ARE the finding fail only by lack of power (not declared)
    false_alarm = FAMILY_ALPHA + 2 * EQ143_Z_ALARM
    record("holds" if not rej else "expected-failure", observed=worst["rate"], bound=DELTA, table=rows,
           reading="proof-step", finding_type="" if not rej else "proof-gap", false_alarm=false_alarm,
           evidence="test",
           **fw.inside({"Assumption 5.1 (one shared W(0) per draw, q > 0)": (q, q > 0),
                        "Assumption 5.2 unit-norm x_i": ("identical / random unit / orthonormal rows", True),
                        "delta in (0, 1)": (DELTA, 0 < DELTA < 1)}),
           config=_cfg(R, k, m=m, n=n, q=q), tightness="max failure rate over input kinds and items vs δ",
           finding="" if not rej else
           (f"Eq. (143) applies Lemma B.2 item 3 to z_i = W(0)x_i with one shared W(0): the failure rate reaches "
            f"{worst['rate']:.1%} at δ = {DELTA} ({worst['inputs']} inputs, {worst['item']}); the binomial tests reject "
            f"exactly {sorted(failing)}. Identical inputs fail items 2/3 at "
            f"{obs23} "
            f"vs exact χ²_{m} rates {exact['item2']:.3f}/{exact['item3']:.3f}. Items 2–3 pool n·m χ² variables and need "
            "independence across i; item 1 (a union bound) and orthonormal inputs (independent z_i) never fail, so the "
            "step, not the lemma, is at fault, and (146) still follows from item 1 up to a log factor."))
    # controls and size: the finding is this dependence pattern at these rates, not any failure
    assert pattern_ok, (sorted(failing), sorted(EQ143_PATTERN), sorted(EQ143_NEVER))
    assert size_ok, size_rows
    assert_claim(not rej, f"shared-W(0) failure rates exceed δ: {sorted(failing)}")


@pytest.mark.claim("wang2024/lem-C.2")
def test_signed_weighted_hoeffding(record, ctx):
    """X_r ~ Bernoulli(p), fixed a ∈ {±1}^m, ‖v‖=1: failure rate of the printed ε(δ) ≤ δ (3 widths × 2 p, family-wise
    α = 1e-3); tail curve vs bounds."""
    gen = record.generator({"lemC2": 1})
    R = ctx.pick(quick=10000, full=50000)
    widths, ps = (16, 128, 1024), (0.5, 0.1)
    k = len(widths) * len(ps)
    rows, series = [], {}
    ts = [0.5, 1.0, 2.0, 3.0]
    for m in widths:
        for p in ps:
            a = torch.randint(0, 2, (m,), generator=gen, device=gen.device).double() * 2 - 1
            v = torch.randn(m, generator=gen, dtype=torch.float64, device=gen.device)
            v = v / v.norm()
            Xs = (torch.rand(R, m, generator=gen, dtype=torch.float64, device=gen.device) < p).double()
            stat = conc.lemC2_statistic(Xs, a, v, p)
            eps = conc.lemC2_epsilon(m, DELTA)
            # ε of the printed bound, written here: 2exp(−mε²/(2(u − l)²)) = δ with u − l = 1
            assert abs(eps / math.sqrt(2 * math.log(2 / DELTA) / m) - 1) <= 1e-12, (m, eps)
            t = failure_rate_test(int((stat >= eps).sum()), R, DELTA, FAMILY_ALPHA)
            rows.append({"m": m, "p": p, "eps": eps, "failures": int((stat >= eps).sum()), "rate": t.rate, "p-value": t.p_value})
            if p == 0.5:
                series[f"tail m={m}"] = {"x": ts, "y": [max(float((stat * math.sqrt(m) >= s).double().mean()), 1e-6) for s in ts],
                                         "xlabel": "ε√m", "ylabel": "P(dev ≥ ε)", "logy": True, "plot": "lemC2 tails"}
    rej = _holm_mark(rows)
    series["stated bound 2exp(-t²/2)"] = {"x": ts, "y": [min(1.0, 2 * math.exp(-s * s / 2)) for s in ts], "plot": "lemC2 tails",
                                          "xlabel": "ε√m", "ylabel": "P"}
    record("holds" if not rej else "violated", observed=max(r["rate"] for r in rows), bound=DELTA, table=rows,
           series=series, config=_cfg(R, k), tightness="max failure rate over (m, p) vs δ", false_alarm=FAMILY_ALPHA,
           evidence="test",
           **fw.inside({"X_r i.i.d. bounded (Bernoulli(p), u - l = 1)": (list(ps), True),
                        "v unit, a in {±1}^m": ("drawn so, ‖v‖ = 1", True), "delta in (0, 1)": (DELTA, True)}),
           note="The printed bound 2exp(−mε²/(2(u−l)²)) is valid but 4× weaker in the exponent than Hoeffding's.")
    assert not rej, rej


@pytest.mark.claim("wang2024/lem-C.2")
def test_signed_hoeffding_rejects_tightened(record, ctx):
    """Companion: exponent factor 1/8 instead of 2 (a bound stronger than Hoeffding's factor 1/2) is rejected at the
    main check's per-test level."""
    gen = record.generator({"lemC2": 2})
    m, R, p = 128, 10000, 0.5
    k = 6
    a = torch.randint(0, 2, (m,), generator=gen, device=gen.device).double() * 2 - 1
    v = torch.randn(m, generator=gen, dtype=torch.float64, device=gen.device)
    v = v / v.norm()
    Xs = (torch.rand(R, m, generator=gen, dtype=torch.float64, device=gen.device) < p).double()
    stat = conc.lemC2_statistic(Xs, a, v, p)
    # the wrong version written out here, not through conc.lemC2_epsilon: 2exp(−8mε²) = δ (u − l = 1)
    eps_wrong = math.sqrt(math.log(2 / DELTA) / (8 * m))
    t = failure_rate_test(int((stat >= eps_wrong).sum()), R, DELTA, FAMILY_ALPHA / k)
    record("holds" if t.rejects else "violated", role="companion", observed=t.rate, bound=DELTA, config=_cfg(R, k, m=m),
           tightness="failure rate of the over-tight ε (rejected when p < α/k, Holm's strictest step)",
           note=f"over-tight variant: failure rate {t.rate:.3f}, p = {t.p_value:.1e}")
    assert t.rejects


EQ110_WIDTHS = (64, 512)
EQ110_POINTS = 5  # x_i, i = 1..5, against one fixed x


def _eq110_wrong_epsilon(m: int) -> float:
    """The over-tight companion ε = √(log(2/δ)/(32m)) (a quarter of Hoeffding's √(log(2/δ)/(2m))), written out here
    rather than through conc.eq110_epsilon."""
    return math.sqrt(math.log(2 / DELTA) / (32 * m))


def _eq110_rates(gen, R, factor):
    """Eq. (110) at t = 0 for each width and each x_i separately: R independent draws of W (rows i.i.d. Gaussian);
    the event for x_i is |(1/m)Σ_r σ'(w_rᵀx)σ'(w_rᵀx_i) − α_i| > ε. The 2 × 5 tests share draws across i: Holm over
    the family at FAMILY_ALPHA (valid under any dependence)."""
    rows = []
    d = 30
    k = len(EQ110_WIDTHS) * EQ110_POINTS
    X = torch.randn(EQ110_POINTS + 1, d, generator=gen, dtype=torch.float64, device=gen.device)
    X = X / X.norm(dim=-1, keepdim=True)
    x = X[0]
    alpha = dyn.alpha_closed_form(x, X[1:])
    # Eq. (110)'s deviation at a bound M ≠ 1 against √(2M⁴ log(2/δ)/m) written here (the indicators have M = 1,
    # where a wrong power of M would be invisible)
    assert math.isclose(conc.eq110_epsilon(64, DELTA, M=1.5), math.sqrt(2 * 1.5 ** 4 * math.log(2 / DELTA) / 64),
                        rel_tol=1e-12), "conc.eq110_epsilon is not √(2M⁴ log(2/δ)/m)"
    for m in EQ110_WIDTHS:
        W = torch.randn(R, m, d, generator=gen, dtype=torch.float64, device=gen.device)
        act = (W @ X.T >= 0).double()  # (R, m, 6)
        emp = (act[..., :1] * act[..., 1:]).mean(1)  # (R, 5)
        eps = conc.eq110_epsilon(m, DELTA) if factor == 2.0 else _eq110_wrong_epsilon(m)
        dev = (emp - alpha).abs()  # (R, 5)
        for i in range(EQ110_POINTS):
            fails = int((dev[:, i] > eps).sum())
            t = failure_rate_test(fails, R, DELTA, FAMILY_ALPHA)
            rows.append({"m": m, "i": i + 1, "alpha_i": float(alpha[i]), "eps": eps, "failures": fails, "R": R,
                         "rate": t.rate, "p-value": t.p_value, "95% quantile/eps": float(dev[:, i].quantile(0.95) / eps)})
    return rows, _holm_mark(rows), k


@pytest.mark.claim("wang2024/eq-110")
def test_coactivation_concentration_t0(record, ctx):
    """t = 0 (independent rows): |(1/m)Σσ'(w_rᵀx)σ'(w_rᵀx_i) − α_i| ≤ √(2log(2/δ)/m) w.p. ≥ 1−δ, for each x_i
    (2 widths × 5 inputs, family-wise α = 1e-3)."""
    gen = record.generator({"eq110": 1})
    R = ctx.pick(quick=3000, full=20000)
    rows, rej, k = _eq110_rates(gen, R, 2.0)
    record("holds" if not rej else "violated", observed=max(r["rate"] for r in rows), bound=DELTA, table=rows,
           config=_cfg(R, k, factor=2.0), tightness="max failure rate over widths and x_i vs δ", covers=["t = 0"],
           false_alarm=FAMILY_ALPHA, evidence="test",
           **fw.inside({"t = 0: rows of W i.i.d. Gaussian (Assumption 5.1)": ("drawn so", True),
                        "Assumption 5.2 unit-norm x, x_i": ("normalized", True), "Assumption 5.4 M (ReLU)": (1, True)}),
           note="At t = 0 the rows are independent and this is Hoeffding's inequality (with a 4× weaker exponent); "
                "the proof of Thm 5.5 uses Eq. (110) at t > 0, where the rows are coupled through u_i(t): tested "
                "along training in test_coactivation_concentration_along_training.")
    assert not rej, rej


@pytest.mark.claim("wang2024/eq-110")
def test_coactivation_rejects_tightened(record, ctx):
    """Companion: factor 1/32 instead of 2, i.e. ε = √(log(2/δ)/(32m)), a quarter of Hoeffding's √(log(2/δ)/(2m)),
    is rejected by the same family of tests (at factor 1/8, ε = half of Hoeffding's, the failure rate is ≈ δ or
    below and would not be rejected: that version is not wrong enough to test)."""
    gen = record.generator({"eq110": 2})
    rows, rej, k = _eq110_rates(gen, 3000, 1 / 32)
    record("holds" if rej else "violated", role="companion", observed=max(r["rate"] for r in rows), bound=DELTA,
           table=rows, config=_cfg(3000, k, factor=1 / 32),
           tightness="max failure rate of the over-tight ε (rejected when Holm rejects some test at the family level)",
           note=f"{len(rej)}/{len(rows)} (width, x_i) tests reject the over-tight variant")
    assert rej


EQ110T_WIDTHS = (64, 256)
EQ110T_STEPS = (10, 40)  # GD steps t at which Eq. (110) is evaluated (τ = ηt = 5 and 20 at η = 0.5)
EQ110T_ETA = 0.5


def _eq110_training_activity(gen, R, m, d, n, steps, X, y, Xq):
    """R independent draws of (W(0), a) (Assumption 5.1, q = 0.25), each trained by full-batch GD on the same data
    (theory.sim.train.gd, BCE, η = EQ110T_ETA); at each t in ``steps``: the row average
    (1/m)Σ_r σ'(w_r(t)ᵀx)σ'(w_r(t)ᵀx_i) for the query x = Xq[0] and x_i = Xq[1:]: {t: (R, P)}."""
    from fixtures import wang2024 as fw
    from theory.sim import models, train

    net = models.TwoLayerNet.init(R, m, d, q=0.25, act=fw.RELU, generator=gen)

    def obs(t, params, u):
        act = fw.RELU.slope(Xq @ params[0].detach().transpose(-1, -2))  # (R, P+1, m)
        # the BCE the trainer records, written here: mean_i log(1 + e^{−(2y_i − 1)u_i}) with labels y ∈ {0, 1}
        bce = torch.log1p(torch.exp(-(2 * y - 1) * u.detach().reshape(R, -1))).mean(-1)
        return {"co": (act[:, :1] * act[:, 1:]).mean(-1), "bce": bce}  # (R, P), (R,)

    tr = train.gd(net, X, y, loss="bce", lr=EQ110T_ETA, steps=max(steps), record=list(steps), observe=obs)
    rec = tr.loss_tensor().reshape(len(tr.steps), R)
    assert torch.allclose(rec, tr.stacked("bce"), rtol=1e-12, atol=0), "recorded BCE differs from its formula"
    return {t: tr.obs["co"][i] for i, t in enumerate(tr.steps)}


@pytest.mark.claim("wang2024/eq-110")
def test_coactivation_concentration_along_training(record, ctx):
    """Eq. (110) at t > 0, as the proof of Thm 5.5 uses it (Eqs. 115–122): P_{W(0)}(|(1/m)Σ_r σ'(w_r(t)ᵀx)σ'(w_r(t)ᵀx_i)
    − α_i(t, x)| ≥ ε) ≤ δ with ε = √(2 log(2/δ)/m), for fixed x, x_i along full-batch GD (d = 20, n = 100, q = 0.25,
    η = 0.5, t ∈ {10, 40} steps, m ∈ {64, 256}, 4 inputs x_i: x itself and three training inputs).

    α_i(t, x) = E_{W(0)}[σ'(w(t)ᵀx)σ'(w(t)ᵀx_i)] for a row of W(t) as a function of the random initialization: with a
    drawn at random too (Assumption 5.1) the rows are exchangeable, so α_i(t, x) is the expectation of the row
    average. It is estimated from a second, independent set of R trained draws; its Monte-Carlo error (s.e. s/√R) is
    granted to the paper: a draw fails when its deviation exceeds ε + 3 s.e. Each (m, t, x_i) failure count is a
    one-sided binomial test of P(fail) ≤ δ at FAMILY_ALPHA/k (Bonferroni over the k tests)."""
    gen = record.generator({"eq110": "training"})
    from fixtures import wang2024 as fw

    R, d, n, P = ctx.pick(quick=600, full=3000), 20, 100, 4
    X, y, Xe, _ = fw.mixture(n, P + 1, d, generator=gen)
    # x held out; x_1 = x itself (σ'(wᵀx)² = σ'(wᵀx): a Bernoulli(p) row average with p near ½, where Hoeffding's scale
    # is nearly attained, so the over-tight companion has power at every draw; with training inputs only, a draw whose
    # x_i co-activate with x at p far from ½ (seed 8) concentrates 10× inside ε and no test can reject ε/4), then
    # three x_i from the training set
    Xq = torch.cat([Xe[:1], Xe[:1], X[:P - 1]])
    k = len(EQ110T_WIDTHS) * len(EQ110T_STEPS) * P
    rows, p_tight = [], []
    for m in EQ110T_WIDTHS:
        test = _eq110_training_activity(gen, R, m, d, n, EQ110T_STEPS, X, y, Xq)
        ref = _eq110_training_activity(gen, R, m, d, n, EQ110T_STEPS, X, y, Xq)
        eps = conc.eq110_epsilon(m, DELTA)
        for t in EQ110T_STEPS:
            alpha, se = ref[t].mean(0), ref[t].std(0) / math.sqrt(R)  # (P,)
            dev = (test[t] - alpha).abs()  # (R, P)
            for i in range(P):
                fails = int((dev[:, i] > eps + 3 * se[i]).sum())
                tt = failure_rate_test(fails, R, DELTA, FAMILY_ALPHA)
                rows.append({"m": m, "t (steps)": t, "i": i + 1, "alpha_i(t,x) (MC)": float(alpha[i]),
                             "MC s.e.": float(se[i]), "eps": eps, "sd of row average over draws": float(test[t][:, i].std()),
                             "Hoeffding-scale sd bound 1/(2 sqrt m)": 0.5 / math.sqrt(m), "failures": fails, "R": R,
                             "rate": tt.rate, "p-value": tt.p_value,
                             "95% quantile/eps": float(dev[:, i].quantile(0.95) / eps)})
                # companion on the same draws: ε with factor 1/32 (a quarter of Hoeffding's) must be rejected
                eps_w = _eq110_wrong_epsilon(m)
                p_tight.append(failure_rate_test(int((dev[:, i] > eps_w + 3 * se[i]).sum()), R, DELTA, FAMILY_ALPHA).p_value)
    rej = _holm_mark(rows)
    tight_rej = sum(conc.holm(p_tight, FAMILY_ALPHA))
    gap = fw.unit_norm_gap(torch.cat([X, Xq]))
    ok = not rej
    worst_q = max(r["95% quantile/eps"] for r in rows)
    record("holds" if ok else "violated", observed=max(r["rate"] for r in rows), bound=DELTA, table=rows,
           covers=["t > 0 (along training)"], false_alarm=FAMILY_ALPHA, evidence="test",
           **fw.inside({**fw.assumption_51([0.25]), **fw.assumption_52(X, Xq),
                        "Assumption 5.4 M (ReLU)": (1, True)}),
           config=_cfg(R, k, d=d, n=n, q=0.25, eta=EQ110T_ETA, steps=list(EQ110T_STEPS), widths=list(EQ110T_WIDTHS)),
           tightness="max failure rate over (m, t, x_i) vs δ along training",
           note=f"The rows are coupled through u_i(t) for t > 0, yet the row average still concentrates at the "
                f"printed rate here: 95 % deviation quantile ≤ {worst_q:.2f}·ε. α_i(t, x) estimated from {R} independent "
                "trained draws (MC error granted to the paper).")
    record("holds" if tight_rej else "violated", role="companion", observed=tight_rej, bound=k,
           tightness="# (m, t, x_i) tests rejecting (Holm) the over-tight ε = √(log(2/δ)/(32m)) along training (> 0 needed)",
           note="the same draws and the same test reject a bound a quarter of Hoeffding's")
    assert ok, rej
    assert tight_rej > 0
