"""Wang et al. Lemma B.2 (Eqs. 36–57), Lemma C.2 (Eqs. 91–99), Eq. (110): Monte-Carlo failure rates vs δ.

Each statement "w.p. ≥ 1−δ the deviation is ≤ b(δ)" is tested by R independent draws and a one-sided exact
binomial test (theory.stats.failure_rate_test) of H0: P(fail) ≤ δ. Every check asserts a family of such tests
(configurations × items, or widths × inputs x_i); the family-wise false-alarm rate is FAMILY_ALPHA = 1e-3, by
Bonferroni: each of the k tests of a family runs at FAMILY_ALPHA/k (valid whatever the dependence between the
tests, e.g. the five x_i of Eq. (110) share one W per draw). Draws within one test are independent.
"""
from __future__ import annotations

import math

import pytest
import torch

from theory import ClaimViolation, assert_claim
from theory.papers.wang2024 import concentration as conc
from theory.papers.wang2024 import dynamics as dyn
from theory.stats import failure_rate_test

FAMILY_ALPHA = 1e-3
DELTA = 0.05
ITEMS = ("item1", "item2", "item3")
LEMB2_CONFIGS = [(4, 1, 0.0), (16, 4, 0.25), (64, 16, 0.25), (256, 8, 0.0), (1024, 8, 0.5)]


def _lemB2_table(gen, R, configs, alpha, delta=DELTA, maker=None):
    rows, rejected = [], []
    for (m, n, q) in configs:
        Z = maker(R, n, m) if maker else torch.randn(R, n, m, generator=gen, dtype=torch.float64) * m ** (-(0.5 + q))
        dev = conc.lemB2_deviations(Z, q)
        b = conc.lemB2_bounds(m, n, q, delta)
        for item in ITEMS:
            fails = int((dev[item] > b[item]).sum())
            t = failure_rate_test(fails, R, delta, alpha)
            rows.append({"m": m, "n": n, "q": q, "item": item, "failures": fails, "R": R, "rate": t.rate,
                         "p-value": t.p_value, "rejects at alpha/k": t.rejects,
                         "95% quantile/bound": float(dev[item].quantile(0.95) / b[item])})
            if t.rejects:
                rejected.append(rows[-1])
    return rows, rejected


def _cfg(R, k, **kw):
    return {"delta": DELTA, "R": R, "family-wise alpha": FAMILY_ALPHA, "tests in family": k,
            "per-test alpha (Bonferroni)": FAMILY_ALPHA / k} | kw


@pytest.mark.claim("wang2024/lem-B.2")
def test_gaussian_norm_averages_iid(record, ctx):
    """Items 1–3 with i.i.d. z_i ~ N(0, m^{-(1+2q)} I_m): failure rate ≤ δ (binomial tests, 5 configs × 3 items,
    family-wise α = 1e-3)."""
    gen = record.generator({"R": 2000})
    R = ctx.pick(quick=2000, full=20000)
    k = len(LEMB2_CONFIGS) * len(ITEMS)
    rows, rej = _lemB2_table(gen, R, LEMB2_CONFIGS, FAMILY_ALPHA / k)
    record("holds" if not rej else "violated", observed=max(r["rate"] for r in rows), bound=DELTA, table=rows,
           tightness="max failure rate over items/configs vs δ", config=_cfg(R, k),
           note="95% deviation quantile / bound in the table (bound 1 loose by the union bound over n).")
    assert not rej, rej


@pytest.mark.claim("wang2024/lem-B.2")
def test_gaussian_norm_rejects_tightened(record, ctx):
    """Companion: item 3 with its constant 8 replaced by 1/8 (a 64× tighter variance proxy, below the CLT scale) is
    rejected by the binomial test at the main check's per-test level."""
    gen = record.generator({"R": 2000})
    R, m, n, q = 2000, 64, 16, 0.25
    k = len(LEMB2_CONFIGS) * len(ITEMS)
    Z = torch.randn(R, n, m, generator=gen, dtype=torch.float64) * m ** (-(0.5 + q))
    dev = conc.lemB2_deviations(Z, q)["item3"]
    wrong = m ** -q * math.sqrt(0.125 * math.log(2 / DELTA) / (m * n))
    t = failure_rate_test(int((dev > wrong).sum()), R, DELTA, FAMILY_ALPHA / k)
    record("holds" if t.rejects else "violated", role="companion", observed=t.rate, bound=DELTA,
           config=_cfg(R, k, m=m, n=n, q=q), tightness="failure rate of the tightened item-3 bound (rejected when p < α/k)",
           note=f"tightened item-3 bound: failure rate {t.rate:.3f}, p = {t.p_value:.1e} (per-test α = {FAMILY_ALPHA / k:.1e})")
    assert t.rejects


@pytest.mark.claim("wang2024/lem-B.2")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="Eq. (143) applies items 2–3 to z_i = W(0)x_i with one shared W(0): dependent samples, "
                          "failure rate far above δ")
def test_gaussian_norm_shared_W0(record, ctx):
    """Misuse in the proof of Thm 5.5: z_i = W(0)x_i (shared W(0)) with identical / random-in-d=8 / orthonormal x_i
    (3 input kinds × 3 items, family-wise α = 1e-3)."""
    gen = record.generator({"shared": 1})
    R, m, n, q = ctx.pick(quick=2000, full=20000), 64, 32, 0.25
    kinds = ("identical", "random unit, d=8", "orthonormal")
    k = len(kinds) * len(ITEMS)

    def shared(kind):
        def make(R_, n_, m_):
            d = {"identical": 1, "random unit, d=8": 8, "orthonormal": n_}[kind]
            W = torch.randn(R_, m_, d, generator=gen, dtype=torch.float64) * m_ ** (-(0.5 + q))
            if kind == "identical":
                Xs = torch.ones(n_, 1, dtype=torch.float64)
            elif kind == "orthonormal":
                Xs = torch.eye(n_, dtype=torch.float64)
            else:
                Xs = torch.randn(n_, d, generator=gen, dtype=torch.float64)
                Xs = Xs / Xs.norm(dim=-1, keepdim=True)
            return (W @ Xs.T).transpose(-1, -2)  # (R, n, m)
        return make

    rows, rej = [], []
    for kind in kinds:
        r, j = _lemB2_table(gen, R, [(m, n, q)], FAMILY_ALPHA / k, maker=shared(kind))
        for x in r:
            x["inputs"] = kind
        rows += r
        rej += j
    worst = max(rows, key=lambda r: r["rate"])
    failing = sorted({(r["inputs"], r["item"]) for r in rej})
    record("holds" if not rej else "expected-failure", observed=worst["rate"], bound=DELTA, table=rows,
           config=_cfg(R, k, m=m, n=n, q=q), tightness="max failure rate over input kinds and items vs δ",
           finding="" if not rej else
           (f"With a shared W(0) (as in Eq. 143) the failure rate reaches {worst['rate']:.1%} at δ = {DELTA} "
            f"({worst['inputs']} inputs, {worst['item']}); the binomial test rejects for {failing}. Items 2–3 pool "
            "n·m χ² variables and need independence across i, which W(0)x_i lacks."))
    assert_claim(not rej, f"shared-W(0) failure rates exceed δ: {failing}")


@pytest.mark.claim("wang2024/lem-C.2")
def test_signed_weighted_hoeffding(record, ctx):
    """X_r ~ Bernoulli(p), fixed a ∈ {±1}^m, ‖v‖=1: failure rate of the printed ε(δ) ≤ δ (3 widths × 2 p, family-wise
    α = 1e-3); tail curve vs bounds."""
    gen = record.generator({"lemC2": 1})
    R = ctx.pick(quick=10000, full=50000)
    widths, ps = (16, 128, 1024), (0.5, 0.1)
    k = len(widths) * len(ps)
    rows, rej, series = [], [], {}
    ts = [0.5, 1.0, 2.0, 3.0]
    for m in widths:
        for p in ps:
            a = torch.randint(0, 2, (m,), generator=gen).double() * 2 - 1
            v = torch.randn(m, generator=gen, dtype=torch.float64)
            v = v / v.norm()
            Xs = (torch.rand(R, m, generator=gen, dtype=torch.float64) < p).double()
            stat = conc.lemC2_statistic(Xs, a, v, p)
            eps = conc.lemC2_epsilon(m, DELTA)
            t = failure_rate_test(int((stat >= eps).sum()), R, DELTA, FAMILY_ALPHA / k)
            rows.append({"m": m, "p": p, "eps": eps, "failures": int((stat >= eps).sum()), "rate": t.rate, "p-value": t.p_value})
            rej += [rows[-1]] if t.rejects else []
            if p == 0.5:
                series[f"tail m={m}"] = {"x": ts, "y": [max(float((stat * math.sqrt(m) >= s).double().mean()), 1e-6) for s in ts],
                                         "xlabel": "ε√m", "ylabel": "P(dev ≥ ε)", "logy": True, "plot": "lemC2 tails"}
    series["stated bound 2exp(-t²/2)"] = {"x": ts, "y": [min(1.0, 2 * math.exp(-s * s / 2)) for s in ts], "plot": "lemC2 tails",
                                          "xlabel": "ε√m", "ylabel": "P"}
    record("holds" if not rej else "violated", observed=max(r["rate"] for r in rows), bound=DELTA, table=rows,
           series=series, config=_cfg(R, k), tightness="max failure rate over (m, p) vs δ",
           note="The printed bound 2exp(−mε²/(2(u−l)²)) is valid but 4× weaker in the exponent than Hoeffding's.")
    assert not rej, rej


@pytest.mark.claim("wang2024/lem-C.2")
def test_signed_hoeffding_rejects_tightened(record, ctx):
    """Companion: exponent factor 1/8 instead of 2 (a bound stronger than Hoeffding's factor 1/2) is rejected at the
    main check's per-test level."""
    gen = record.generator({"lemC2": 2})
    m, R, p = 128, 10000, 0.5
    k = 6
    a = torch.randint(0, 2, (m,), generator=gen).double() * 2 - 1
    v = torch.randn(m, generator=gen, dtype=torch.float64)
    v = v / v.norm()
    Xs = (torch.rand(R, m, generator=gen, dtype=torch.float64) < p).double()
    stat = conc.lemC2_statistic(Xs, a, v, p)
    t = failure_rate_test(int((stat >= conc.lemC2_epsilon(m, DELTA, factor=1 / 8)).sum()), R, DELTA, FAMILY_ALPHA / k)
    record("holds" if t.rejects else "violated", role="companion", observed=t.rate, bound=DELTA, config=_cfg(R, k, m=m),
           tightness="failure rate of the over-tight ε (rejected when p < α/k)",
           note=f"over-tight variant: failure rate {t.rate:.3f}, p = {t.p_value:.1e}")
    assert t.rejects


EQ110_WIDTHS = (64, 512)
EQ110_POINTS = 5  # x_i, i = 1..5, against one fixed x


def _eq110_rates(gen, R, factor):
    """Eq. (110) at t = 0 for each width and each x_i separately: R independent draws of W (rows i.i.d. Gaussian);
    the event for x_i is |(1/m)Σ_r σ'(w_rᵀx)σ'(w_rᵀx_i) − α_i| > ε. The 2 × 5 tests share draws across i, so they
    run at FAMILY_ALPHA/10 each (Bonferroni, valid under any dependence)."""
    rows, rej = [], []
    d = 30
    k = len(EQ110_WIDTHS) * EQ110_POINTS
    X = torch.randn(EQ110_POINTS + 1, d, generator=gen, dtype=torch.float64)
    X = X / X.norm(dim=-1, keepdim=True)
    x = X[0]
    alpha = dyn.alpha_closed_form(x, X[1:])
    for m in EQ110_WIDTHS:
        W = torch.randn(R, m, d, generator=gen, dtype=torch.float64)
        act = (W @ X.T >= 0).double()  # (R, m, 6)
        emp = (act[..., :1] * act[..., 1:]).mean(1)  # (R, 5)
        eps = conc.eq110_epsilon(m, DELTA, factor=factor)
        dev = (emp - alpha).abs()  # (R, 5)
        for i in range(EQ110_POINTS):
            fails = int((dev[:, i] > eps).sum())
            t = failure_rate_test(fails, R, DELTA, FAMILY_ALPHA / k)
            rows.append({"m": m, "i": i + 1, "alpha_i": float(alpha[i]), "eps": eps, "failures": fails, "R": R,
                         "rate": t.rate, "p-value": t.p_value, "95% quantile/eps": float(dev[:, i].quantile(0.95) / eps)})
            rej += [rows[-1]] if t.rejects else []
    return rows, rej, k


@pytest.mark.claim("wang2024/eq-110")
def test_coactivation_concentration_t0(record, ctx):
    """t = 0 (independent rows): |(1/m)Σσ'(w_rᵀx)σ'(w_rᵀx_i) − α_i| ≤ √(2log(2/δ)/m) w.p. ≥ 1−δ, for each x_i
    (2 widths × 5 inputs, family-wise α = 1e-3)."""
    gen = record.generator({"eq110": 1})
    R = ctx.pick(quick=3000, full=20000)
    rows, rej, k = _eq110_rates(gen, R, 2.0)
    record("holds" if not rej else "violated", observed=max(r["rate"] for r in rows), bound=DELTA, table=rows,
           config=_cfg(R, k, factor=2.0), tightness="max failure rate over widths and x_i vs δ",
           note="Valid at t = 0 only: for t > 0 the rows are coupled through u_i(t), so the independence the "
                "Hoeffding step needs is not available (not checked as a pass/fail claim).")
    assert not rej, rej


@pytest.mark.claim("wang2024/eq-110")
def test_coactivation_rejects_tightened(record, ctx):
    """Companion: factor 1/32 instead of 2, i.e. ε = √(log(2/δ)/(16m)), a quarter of Hoeffding's √(log(2/δ)/(2m)),
    is rejected by the same family of tests (at factor 1/8, ε = half of Hoeffding's, the failure rate is ≈ δ or
    below and would not be rejected: that version is not wrong enough to test)."""
    gen = record.generator({"eq110": 2})
    rows, rej, k = _eq110_rates(gen, 3000, 1 / 32)
    record("holds" if rej else "violated", role="companion", observed=max(r["rate"] for r in rows), bound=DELTA,
           table=rows, config=_cfg(3000, k, factor=1 / 32),
           tightness="max failure rate of the over-tight ε (rejected when some test has p < α/k)",
           note=f"{len(rej)}/{len(rows)} (width, x_i) tests reject the over-tight variant")
    assert rej
