"""Every statistical procedure of theory.stats and of the paper modules, pinned to a null written here, apart from the
code under test: exact laws enumerated with itertools / integer arithmetic / math.comb, independent closed forms, and
scipy.stats where it has the procedure. For each: the p-value (or interval) itself, its extremes (the most extreme
statistic gives the smallest attainable p, never 0) and the size of the test (rejection rate under H0 at α, by
enumeration where small, else from the exact law of the Monte Carlo p-value).

Procedures: theory.stats.{failure_rate_test, fit_power, fit_affine, mean_ci, rank_trend, spearman_permutation};
wang2024.figures.{kendall_trend, kendall_S, stratified_kendall, kendall_permutation}; zhu2022.masked.
mixture_cdf_positive (the law the Lemma-2 KS test uses). Page's L and the paired sign flip of kou2023 are in
checks/kou2023/test_empirical_nulls.py.
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import special
from scipy import stats as st

from theory import stats
from theory.papers.wang2024 import figures as F
from theory.papers.zhu2022 import masked

# ---- helpers written here (no call into the code under test) -----------------------------------


def _binom_pmf(k: int, n: int, p: float) -> float:
    return math.comb(n, k) * p ** k * (1 - p) ** (n - k)


def _binom_tail(k: int, n: int, p: float) -> float:
    """P(X ≥ k), X ~ Bin(n, p), summed term by term (math.comb, correctly rounded sum)."""
    return math.fsum(_binom_pmf(j, n, p) for j in range(k, n + 1))


def _avg_ranks2(v) -> list[int]:
    """Twice the average ranks (1-based; tied values share the mean of their positions), by counting: integers."""
    return [2 * sum(1 for w in v if w < a) + sum(1 for w in v if w == a) + 1 for a in v]


def _rank_product_tail(x, y, alternative: str) -> Fraction:
    """Exact permutation p of Σ r_x·r_y over all n! orders of y (ties exact: doubled ranks are integers)."""
    rx, ry = _avg_ranks2(x), _avg_ranks2(y)
    obs = sum(a * b for a, b in zip(rx, ry))
    null = [sum(a * ry[j] for a, j in zip(rx, p)) for p in itertools.permutations(range(len(y)))]
    mean = Fraction(sum(rx) * sum(ry), len(rx))
    hit = {"greater": lambda s: s >= obs, "less": lambda s: s <= obs,
           "two-sided": lambda s: abs(s - mean) >= abs(obs - mean)}[alternative]
    return Fraction(sum(map(hit, null)), len(null))


def _all_perms(n: int) -> np.ndarray:
    """The n! permutations of range(n) as rows (itertools order)."""
    flat = np.fromiter(itertools.chain.from_iterable(itertools.permutations(range(n))), dtype=np.int8,
                       count=n * math.factorial(n))
    return flat.reshape(-1, n)


def _sum_i_pi(n: int) -> tuple[Counter, dict]:
    """Law of Σ_i i·π(i) over the n! permutations (counts) and one representative permutation per value."""
    P = _all_perms(n)
    s = P.astype(np.int64) @ np.arange(n)
    vals, first, cnt = np.unique(s, return_index=True, return_counts=True)
    return Counter(dict(zip(vals.tolist(), cnt.tolist()))), {v: tuple(P[i].tolist()) for v, i in zip(vals.tolist(), first)}


def _kendall_S(x, y) -> int:
    return sum(int(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])) for i, j in itertools.combinations(range(len(x)), 2))


def _kendall_law(x) -> tuple[Counter, dict]:
    """The exact null law of S over all orders of ``range(len(x))`` (counts), and one order attaining each value."""
    law, rep = Counter(), {}
    for p in itertools.permutations(range(len(x))):
        s = _kendall_S(x, p)
        law[s] += 1
        rep.setdefault(s, p)
    return law, rep


def _mc_size(weights: dict, tails: dict, B: int, alpha: float, seeds: int) -> tuple[float, float]:
    """Exact size of a Monte Carlo permutation test p = (1 + hits)/(1 + B), hits ~ Bin(B, q_v) at statistic value v
    with exact tail q_v = P(T ≥ v): Σ_v w_v · P(1 + Bin(B, q_v) < α(1 + B)); and the standard deviation of the
    rejection rate measured with one call per value and seed, averaged over ``seeds`` seeds."""
    h = math.ceil(alpha * (1 + B)) - 2  # largest hits with (1 + hits)/(1 + B) < α
    r = {v: float(st.binom.cdf(h, B, tails[v])) if h >= 0 else 0.0 for v in weights}
    size = sum(w * r[v] for v, w in weights.items())
    return size, math.sqrt(sum(w * w * r[v] * (1 - r[v]) for v, w in weights.items()) / seeds)


# ---- theory.stats.failure_rate_test: exact one-sided binomial test + Clopper–Pearson upper bound ----


@pytest.mark.parametrize("n,delta", [(10, 0.1), (25, 0.05), (40, 0.3)])
def test_failure_rate_p_value_is_the_binomial_tail(n, delta):
    """p = P(X ≥ k), X ~ Bin(n, δ), by math.comb in exact fractions; extremes k = 0 → 1 and k = n → δⁿ (> 0)."""
    for k in range(n + 1):
        exact = _binom_tail(k, n, delta)
        assert stats.failure_rate_test(k, n, delta).p_value == pytest.approx(exact, rel=1e-10, abs=1e-300), k
    assert stats.failure_rate_test(0, n, delta).p_value == pytest.approx(1.0)
    top = stats.failure_rate_test(n, n, delta).p_value
    assert top > 0 and top == pytest.approx(delta ** n, rel=1e-10)


@pytest.mark.parametrize("n,delta,alpha", [(10, 0.1, 0.01), (25, 0.05, 1e-3), (40, 0.3, 0.05), (200, 0.02, 1e-3)])
def test_failure_rate_size_by_enumeration(n, delta, alpha):
    """Size: Σ_{k rejected} P(X = k) ≤ α at the boundary rate δ (the worst case of H0: rate ≤ δ) and below it."""
    rej = [k for k in range(n + 1) if stats.failure_rate_test(k, n, delta, alpha).rejects]
    for rate in (delta, delta / 2):
        size = math.fsum(_binom_pmf(k, n, rate) for k in rej)
        assert size <= alpha, (rate, size)
    # the rejection region is the upper tail from the first k whose exact tail is < α (nothing conservative dropped)
    kstar = min(k for k in range(n + 2) if _binom_tail(k, n, delta) < alpha)
    assert rej == list(range(kstar, n + 1)), (rej, kstar)


@pytest.mark.parametrize("n,alpha", [(10, 0.01), (30, 1e-3), (50, 0.05)])
def test_failure_rate_upper_bound_is_clopper_pearson(n, alpha):
    """The upper bound u(k) solves P(X ≤ k | u) = α (k < n; u(n) = 1), and covers: P_p(u(X) < p) ≤ α for every p."""
    ups = [stats.failure_rate_test(k, n, 0.5, alpha).upper for k in range(n + 1)]
    for k, u in enumerate(ups[:-1]):
        assert math.fsum(_binom_pmf(j, n, u) for j in range(k + 1)) == pytest.approx(alpha, rel=1e-8), k
    assert ups[-1] == 1.0 and all(a < b for a, b in zip(ups, ups[1:]))
    for p in np.linspace(0.005, 0.995, 67):
        miss = math.fsum(_binom_pmf(k, n, p) for k, u in enumerate(ups) if u < p)
        assert miss <= alpha * (1 + 1e-9), (p, miss)


# ---- fitted intervals: fit_affine, fit_power, mean_ci ----------------------------------------------


def _ols(x, y, alpha):
    """Closed-form OLS with the t_{n−2} intervals: slope, intercept, their standard errors and half-widths."""
    n = len(x)
    xb, yb = x.mean(), y.mean()
    sxx = ((x - xb) ** 2).sum()
    b = ((x - xb) * (y - yb)).sum() / sxx
    a = yb - b * xb
    s2 = ((y - a - b * x) ** 2).sum() / (n - 2)
    sb, sa = math.sqrt(s2 / sxx), math.sqrt(s2 * (1 / n + xb ** 2 / sxx))
    t = st.t.isf(alpha / 2, n - 2)
    return b, a, sb, sa, t * sb, t * sa


@pytest.mark.parametrize("n,alpha,seed", [(4, 0.01, 0), (7, 0.05, 1), (30, 1e-3, 2)])
def test_fit_affine_and_fit_power_intervals_match_the_closed_form(n, alpha, seed):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.5, 5.0, n))
    y = 1.0 - 0.7 * x + rng.normal(0, 0.3, n)
    b, a, sb, sa, hb, ha = _ols(x, y, alpha)
    f = stats.fit_affine(x, y, alpha=alpha)
    assert (f.slope, f.intercept, f.slope_se, f.intercept_se) == pytest.approx((b, a, sb, sa), rel=1e-10)
    assert f.slope_ci == pytest.approx((b - hb, b + hb), rel=1e-10) and f.n == n
    assert f.intercept_ci == pytest.approx((a - ha, a + ha), rel=1e-10)
    X, Y = np.exp(x), np.exp(y)  # y = log C + k log x on log axes
    g = stats.fit_power(X, Y, alpha=alpha)
    r2 = 1 - ((y - a - b * x) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    assert (g.exponent, g.constant, g.r2) == pytest.approx((b, math.exp(a), r2), rel=1e-10)
    assert g.ci == pytest.approx((b - hb, b + hb), rel=1e-10)


def test_fitted_intervals_cover_at_their_level():
    """Size under the model (Gaussian errors, n = 4: t with 2 d.o.f.): misses of fit_affine's 90% intervals of slope
    and intercept in 300 seeded fits; exact miss rate 0.1 (a z or n−1 d.o.f. interval would miss 0.18 or 0.15).
    fit_power's interval is the same closed form on log axes (pinned above)."""
    rng = np.random.default_rng(7)
    x = np.array([1.0, 2.0, 3.0, 5.0])
    R, alpha = 300, 0.1
    miss = np.zeros(2)
    for _ in range(R):
        y = 0.5 + 2.0 * x + rng.normal(size=4)
        f = stats.fit_affine(x, y, alpha=alpha)
        miss += [not f.slope_ci[0] < 2.0 < f.slope_ci[1], not f.intercept_ci[0] < 0.5 < f.intercept_ci[1]]
    se = math.sqrt(alpha * (1 - alpha) / R)
    assert np.all(np.abs(miss / R - alpha) <= 3 * se), miss / R


def test_mean_ci_is_the_normal_interval_and_its_size_is_the_t_law():
    """mean_ci is the z interval m ± z_{1−α/2} s/√n. Its exact size for Gaussian data is P(|t_{n−1}| > z): 0.0616 at
    n = 5, α = 0.01 (anti-conservative at small n), 1.037α at n = 2400, α = 2.5e-5 (the smallest n a check uses it
    at: zhu2022 lem-5). Monte Carlo of the function itself (1500 seeded samples of n = 5) against that law."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=5)
    m, (lo, hi) = stats.mean_ci(x, alpha=0.01)
    half = st.norm.isf(0.005) * x.std(ddof=1) / math.sqrt(5)
    assert (m, lo, hi) == pytest.approx((x.mean(), x.mean() - half, x.mean() + half), rel=1e-12)
    R = 1500
    miss = sum(not (lambda ci: ci[0] < 0 < ci[1])(stats.mean_ci(rng.normal(size=5), alpha=0.01)[1]) for _ in range(R))
    law = 2 * st.t.sf(st.norm.isf(0.005), 4)
    assert law == pytest.approx(0.0616, abs=5e-4)
    assert abs(miss / R - law) <= 4 * math.sqrt(law * (1 - law) / R), (miss / R, law)
    assert 2 * st.t.sf(st.norm.isf(2.5e-5 / 2), 2399) <= 1.04 * 2.5e-5


# ---- theory.stats.rank_trend: Spearman, exact permutation p for n ≤ 8 -----------------------------


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8])
def test_rank_trend_is_exact_for_small_n(n):
    """Tie-free, every attainable statistic: p = P(Σ i·π(i) ≥ s) exactly (both tails), the perfect ordering gives
    1/n! (not 0), and the size over the n! equally likely orders is ≤ α at α = 0.01 and 0.05."""
    counts, rep = _sum_i_pi(n)
    total = math.factorial(n)
    x = np.arange(n, dtype=float)
    sizes = {0.01: 0.0, 0.05: 0.0}
    for s, perm in rep.items():
        y = np.array(perm, float)
        rho, p, _ = stats.rank_trend(x, y, alternative="greater")
        _, pl, _ = stats.rank_trend(x, y, alternative="less")
        assert p == pytest.approx(sum(c for v, c in counts.items() if v >= s) / total, rel=1e-12), s
        assert pl == pytest.approx(sum(c for v, c in counts.items() if v <= s) / total, rel=1e-12), s
        assert rho == pytest.approx(st.spearmanr(x, y).statistic, abs=1e-12)
        for a in sizes:
            sizes[a] += counts[s] / total * (p < a)
    assert stats.rank_trend(x, x)[1] == pytest.approx(1 / total, rel=1e-12)
    assert stats.rank_trend(x, -x, alternative="less")[1] == pytest.approx(1 / total, rel=1e-12)
    assert sizes[0.01] <= 0.01 and sizes[0.05] <= 0.05, sizes


@pytest.mark.parametrize("x,y", [([1, 1, 2, 2, 3, 3], [1, 2, 2, 3, 4, 5]), ([1, 2, 3, 4, 5, 6, 7], [2, 1, 1, 4, 3, 3, 9]),
                                 ([0, 0, 0, 1, 1, 1], [5, 4, 6, 7, 9, 8])])
def test_rank_trend_ties_exact(x, y):
    """With ties (average ranks), the p-value is the exact conditional permutation tail, enumerated here (one-sided
    tails; two-sided: |Σ r_x·r_y − its null mean| at least the observed)."""
    for alt in ("greater", "less", "two-sided"):
        assert stats.rank_trend(x, y, alternative=alt)[1] == pytest.approx(float(_rank_product_tail(x, y, alt)),
                                                                           rel=1e-12), alt


def test_rank_trend_large_n_is_the_t_approximation_with_a_floor_and_measured_size():
    """n = 9 (t-approximation branch): p is scipy's spearmanr p, floored at 1/9! at the perfect ordering (scipy: 0);
    its size over all 9! orders (enumerated: one call per attainable statistic) is 0.01275 at α = 0.01 and 0.0540
    at α = 0.05, i.e. within 1.3α (documented: the approximation is slightly anti-conservative at small n)."""
    n = 9
    x = np.arange(n, dtype=float)
    P = _all_perms(n)
    s = P.astype(np.int32) @ np.arange(n, dtype=np.int32)
    vals, first, cnt = np.unique(s, return_index=True, return_counts=True)
    ps = np.array([stats.rank_trend(x, P[i].astype(float))[1] for i in first])
    ref = np.array([max(st.spearmanr(x, P[i], alternative="greater").pvalue, 1 / math.factorial(n)) for i in first])
    assert np.allclose(ps, ref, rtol=1e-12, atol=0)
    assert ps[-1] == pytest.approx(1 / math.factorial(n)) and ps[-1] > 0
    size = {a: float(cnt[ps < a].sum() / cnt.sum()) for a in (0.01, 0.05)}
    assert size[0.01] == pytest.approx(0.01275, abs=5e-5) and size[0.05] == pytest.approx(0.0540, abs=5e-4), size
    assert size[0.01] <= 1.3 * 0.01 and size[0.05] <= 1.3 * 0.05


# ---- theory.stats.spearman_permutation (Monte Carlo permutation p) ---------------------------------


def test_spearman_permutation_size_from_the_exact_law():
    """n = 5, B = 99, α = 0.05: the function's rejection rate over every attainable statistic (weighted by its exact
    null count) and 10 seeds, against the exact size of the MC p = (1 + hits)/(1 + B) (hits ~ Bin(B, exact tail)):
    ≤ α by construction; the perfect ordering gives p ≥ 1/(B + 1)."""
    n, B, alpha = 5, 99, 0.05
    counts, rep = _sum_i_pi(n)
    total = math.factorial(n)
    w = {s: c / total for s, c in counts.items()}
    tails = {s: sum(c for v, c in counts.items() if v >= s) / total for s in counts}
    x = np.arange(n, dtype=float)
    seeds = range(10)
    rate = sum(w[s] * np.mean([stats.spearman_permutation(x, np.array(rep[s], float), n_perm=B, seed=k)[1] < alpha
                                for k in seeds]) for s in rep)
    size, sd = _mc_size(w, tails, B, alpha, len(seeds))
    assert size <= alpha and abs(rate - size) <= 4 * sd + 1e-12, (rate, size, sd)
    # extremes: at n = 10 the identity's exact tail is 1/10! ≪ 1/B, so no draw reaches it and p is exactly 1/(B + 1)
    # (never 0); the reversed order is never significant for 'greater'
    x10 = np.arange(10.0)
    assert stats.spearman_permutation(x10, x10, n_perm=B, seed=0)[1] == pytest.approx(1 / (B + 1), rel=1e-12)
    assert stats.spearman_permutation(x10, -x10, n_perm=B, seed=0)[1] == pytest.approx(1.0)


# ---- wang2024.figures: Kendall procedures ----------------------------------------------------------


@pytest.mark.parametrize("n", [4, 5, 6, 7])
def test_kendall_trend_exact_small_n(n):
    """Tie-free: scipy's exact Kendall p equals the tail of S over all n! orders (both alternatives); the perfect
    ordering gives 1/n!, and the size at α = 0.01, 0.05 is ≤ α."""
    x = np.arange(n, dtype=float)
    law, rep = _kendall_law(x)
    total = math.factorial(n)
    sizes = {0.01: 0.0, 0.05: 0.0}
    for s, p in rep.items():
        tau, pv, sig = F.kendall_trend(x, np.array(p, float), alpha=0.05)
        assert tau == pytest.approx(s / math.comb(n, 2), abs=1e-12)
        assert pv == pytest.approx(sum(c for v, c in law.items() if v >= s) / total, rel=1e-9), s
        pl = F.kendall_trend(x, np.array(p, float), alternative="less")[1]
        assert pl == pytest.approx(sum(c for v, c in law.items() if v <= s) / total, rel=1e-9), s
        assert sig == (pv < 0.05)
        for a in sizes:
            sizes[a] += law[s] / total * (pv < a)
    assert F.kendall_trend(x, x)[1] == pytest.approx(1 / total, rel=1e-9)
    assert sizes[0.01] <= 0.01 and sizes[0.05] <= 0.05, sizes


def test_kendall_S_is_the_pairwise_sign_sum_within_strata():
    rng = np.random.default_rng(5)
    x, y = rng.integers(0, 4, 14).astype(float), rng.integers(0, 5, 14).astype(float)  # ties in both
    g = np.repeat([0, 1, 2], [5, 4, 5])
    want = sum(_kendall_S(x[g == s], y[g == s]) for s in (0, 1, 2))
    assert F.kendall_S(x, y, g) == want


def _strat_law(sizes):
    """Law of the pooled within-stratum S over the product of within-stratum permutations (x = 0..n_s−1 per stratum)."""
    law = Counter({0: 1})
    for n in sizes:
        one = Counter(_kendall_S(np.arange(n), p) for p in itertools.permutations(range(n)))
        nxt = Counter()
        for a, ca in law.items():
            for b, cb in one.items():
                nxt[a + b] += ca * cb
        law = nxt
    return law


def _strat_data(p1, p2):
    x = np.r_[np.arange(3.0), np.arange(4.0)]
    return x, np.r_[np.array(p1, float), np.array(p2, float)], np.r_[[0] * 3, [7] * 4]


def test_stratified_kendall_against_the_exact_stratified_null():
    """Strata of 3 and 4 points: the MC p (B = 2000) within 4.5 s.e. of the exact tail over the 3!·4! = 144
    within-stratum orders; the perfect ordering's exact p is 1/144 (not 0); size at α = 0.05 (B = 99, 4 seeds, every
    attainable S weighted by its exact count) against the exact law of the MC p."""
    law = _strat_law([3, 4])
    total = sum(law.values())
    assert total == 144
    tail = {v: sum(c for u, c in law.items() if u >= v) / total for v in law}
    x, y, g = _strat_data((0, 2, 1), (1, 0, 3, 2))
    obs = _kendall_S(x[:3], y[:3]) + _kendall_S(x[3:], y[3:])
    res = F.stratified_kendall(x, y, g, n_perm=2000, seed=0)
    assert res["S"] == obs and res["per"][0] == pytest.approx(st.kendalltau(x[:3], y[:3]).statistic)
    assert abs(res["p"] - tail[obs]) <= 4.5 * math.sqrt(tail[obs] * (1 - tail[obs]) / 2000) + 1 / 2001, (res, tail[obs])
    best = F.stratified_kendall(*_strat_data((0, 1, 2), (0, 1, 2, 3)), n_perm=2000, seed=1)
    assert tail[max(law)] == pytest.approx(1 / 144)
    assert abs(best["p"] - 1 / 144) <= 4.5 * math.sqrt(1 / 144 / 2000) + 1 / 2001 and best["p"] > 0
    # size: one representative per attainable S
    rep = {}
    for p1 in itertools.permutations(range(3)):
        for p2 in itertools.permutations(range(4)):
            rep.setdefault(_kendall_S(np.arange(3), p1) + _kendall_S(np.arange(4), p2), (p1, p2))
    B, alpha, seeds = 99, 0.05, range(4)
    w = {v: c / total for v, c in law.items()}
    rate = sum(w[v] * np.mean([F.stratified_kendall(*_strat_data(*rep[v]), n_perm=B, seed=k)["significant"]
                               for k in seeds]) for v in rep)
    size, sd = _mc_size(w, tail, B, alpha, len(seeds))
    assert size <= alpha and abs(rate - size) <= 4 * sd + 1e-12, (rate, size, sd)
    # extremes: strata of 6 and 6 perfectly ordered, exact tail 1/720² ≪ 1/B: p is exactly 1/(B + 1), never 0
    x12, g12 = np.r_[np.arange(6.0), np.arange(6.0)], np.r_[[0] * 6, [1] * 6]
    top = F.stratified_kendall(x12, x12 + 0.5, g12, n_perm=B, seed=0, alpha=alpha)
    assert top["p"] == pytest.approx(1 / (B + 1), rel=1e-12) and top["significant"]
    assert F.stratified_kendall(x12, -x12, g12, n_perm=B, seed=0)["p"] == pytest.approx(1.0)


def test_kendall_permutation_with_ties_extremes_and_size():
    """One line of 6 with ties in y: MC p (B = 20000) within 4.5 s.e. of the exact tail over 6! orders (both
    alternatives); the perfect ordering's p is (1 + hits)/(1 + B) ≈ 1/720; size at α = 0.05 (B = 199, 10 seeds)
    against the exact law of the MC p, tie-free n = 5."""
    x = np.arange(6.0)
    y = np.array([0.0, 1.0, 1.0, 3.0, 2.0, 5.0])
    law = [_kendall_S(x, y[list(p)]) for p in itertools.permutations(range(6))]
    obs = _kendall_S(x, y)
    for alt, ex in (("greater", np.mean([s >= obs for s in law])), ("less", np.mean([s <= obs for s in law]))):
        tau, p = F.kendall_permutation(x, y, n_perm=20000, seed=0, alternative=alt)
        assert tau == pytest.approx(st.kendalltau(x, y).statistic)
        assert abs(p - ex) <= 4.5 * math.sqrt(ex * (1 - ex) / 20000) + 1 / 20001, (alt, p, ex)
    _, pbest = F.kendall_permutation(x, x, n_perm=20000, seed=0)
    assert pbest > 0 and abs(pbest - 1 / 720) <= 4.5 * math.sqrt(1 / 720 / 20000) + 1 / 20001
    n, B, alpha = 5, 199, 0.05
    xs = np.arange(n, dtype=float)
    lawn, rep = _kendall_law(xs)
    w = {s: c / 120 for s, c in lawn.items()}
    tails = {s: sum(c for v, c in lawn.items() if v >= s) / 120 for s in lawn}
    seeds = range(10)
    rate = sum(w[s] * np.mean([F.kendall_permutation(xs, np.array(rep[s], float), n_perm=B, seed=k)[1] < alpha
                               for k in seeds]) for s in rep)
    size, sd = _mc_size(w, tails, B, alpha, len(seeds))
    assert size <= alpha and abs(rate - size) <= 4 * sd + 1e-12, (rate, size, sd)
    x9 = np.arange(9.0)  # exact tail 1/9! ≪ 1/B: p is exactly 1/(B + 1) (never 0), both alternatives
    assert F.kendall_permutation(x9, x9, n_perm=B, seed=0)[1] == pytest.approx(1 / (B + 1), rel=1e-12)
    assert F.kendall_permutation(x9, -x9, n_perm=B, seed=0, alternative="less")[1] == pytest.approx(1 / (B + 1))


# ---- zhu2022.masked.mixture_cdf_positive: the law of χ²(ρ) | > 0, ρ ~ Bin(q, p) -------------------


@pytest.mark.parametrize("q,p_on", [(1, 0.5), (3, 0.5), (8, 0.5), (5, 0.2)])
def test_mixture_cdf_positive_against_closed_form_and_simulation(q, p_on):
    """Against Σ_{k≥1} C(q,k)p^k(1−p)^{q−k} P(k/2, t/2) / (1 − (1−p)^q) (math.comb, regularized gamma), at its
    extremes (0 at t = 0, → 1), for q = 1 the χ²₁ law, and against 40 000 draws of the mixture itself."""
    t = np.array([0.0, 0.05, 0.5, 1.0, 2.0, 5.0, 10.0, 40.0, 200.0])
    pz = (1 - p_on) ** q
    want = sum(math.comb(q, k) * p_on ** k * (1 - p_on) ** (q - k) * special.gammainc(k / 2, t / 2)
               for k in range(1, q + 1)) / (1 - pz)
    got = masked.mixture_cdf_positive(t, q, p_on)
    assert np.allclose(got, want, rtol=1e-12, atol=1e-15)
    assert got[0] == 0 and got[-1] == pytest.approx(1.0, abs=1e-12) and np.all(np.diff(got) >= 0)
    if q == 1:
        assert np.allclose(got, st.chi2.cdf(t, 1), rtol=1e-12, atol=1e-15)
    rng = np.random.default_rng(q)
    rho = rng.binomial(q, p_on, size=120_000)
    rho = rho[rho > 0][:40_000]
    z2 = rng.standard_normal((rho.size, q)) ** 2
    draws = (z2 * (np.arange(q)[None, :] < rho[:, None])).sum(1)  # χ²(ρ): the first ρ squared normals
    emp_cdf = (draws[:, None] <= t[None, 1:-1]).mean(0)
    se = np.sqrt(got[1:-1] * (1 - got[1:-1]) / draws.size) + 1e-12
    assert np.all(np.abs(emp_cdf - got[1:-1]) <= 4.5 * se), (emp_cdf, got[1:-1])


def test_holm_against_its_definition_by_enumeration():
    """theory.stats.holm (shared by kou and wang families) against Holm's rule written out: reject H_i iff every
    p-value no larger than p_i (ties included) is below α/(k − its rank) — on every pattern of a small grid."""
    import itertools

    from theory.stats import holm

    grid = [0.0, 0.004, 0.01, 0.0125, 0.02, 0.03, 0.05, 0.2]
    for k in (1, 2, 3):
        for ps in itertools.product(grid, repeat=k):
            order = sorted(range(k), key=lambda i: ps[i])
            rank = {i: r for r, i in enumerate(order)}
            want = [all(ps[j] < 0.05 / (k - rank[j]) for j in order[:rank[i] + 1]) for i in range(k)]
            assert holm(list(ps), 0.05) == want, ps
    with pytest.raises(ValueError):
        holm([0.5], 1.0)
