"""kou2023/rem-6 (§6 / App. I): the two tests that judge the empirical observations, pinned to exact nulls written here.

- ``empirical.ordering`` (Page's L, exact null by enumeration and convolution) against the brute-force null: every
  one of the (k!)^S within-block rank patterns enumerated with itertools, L = Σ_blocks Σ_j j·r_j counted in integers.
  Its p-value at the extremes (the perfect ordering gives (1/k!)^S, not 0; the reversed one gives 1), its size at α
  (exact rejection rate over all patterns: k = 3, S = 3, α = 0.01 must be ≤ 0.01; the tail mutant ``>`` gives 7/216 = 0.0324)
  and scipy.stats.page_trend_test (method="exact").
- ``empirical.paired_shift`` (exact sign-flip test of mean log b/a) against the brute-force null over all 2^S sign
  patterns (itertools.product, ties counted in integer arithmetic), its extremes (all seeds up: 2^−S; a zero
  difference doubles it), its size at α over all sign patterns, and scipy.stats.permutation_test (exact, one sample
  sign-flipped).
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as st

from theory.papers.kou2023 import empirical as emp

# the tools of rem-6's verdicts (plain pins of the statistics, no records of their own)
pytestmark = pytest.mark.claim("kou2023/rem-6")

# ---- Page's L ------------------------------------------------------------------------------------


def _page_counts(k: int, S: int) -> Counter:
    """Brute force: L = Σ_blocks Σ_j j·r_j over every S-tuple of permutations r of 1..k, counted (exact integers)."""
    perms = list(itertools.permutations(range(1, k + 1)))
    one = Counter(sum(j * r for j, r in zip(range(1, k + 1), p)) for p in perms)
    out = Counter({0: 1})
    for _ in range(S):  # S-fold product of the per-block law, by enumeration of pairs (no convolution routine)
        nxt = Counter()
        for a, ca in out.items():
            for b, cb in one.items():
                nxt[a + b] += ca * cb
        out = nxt
    assert sum(out.values()) == math.factorial(k) ** S
    return out


def _page_tail(counts: Counter, L: int) -> Fraction:
    """P(L' ≥ L) under the null, as an exact fraction."""
    return Fraction(sum(c for v, c in counts.items() if v >= L), sum(counts.values()))


def _patterns(k: int, S: int):
    """Every (S, k) array of within-block value ranks: the (k!)^S equally likely patterns under H0."""
    perms = list(itertools.permutations(range(1, k + 1)))
    for combo in itertools.product(perms, repeat=S):
        yield np.array(combo, float)


@pytest.mark.parametrize("k,S", [(3, 3), (3, 2), (2, 5)])
def test_page_p_equals_the_enumerated_null_for_every_pattern(k, S):
    """Every rank pattern: p = P(L' ≥ L) of the enumerated null (1e-12 relative), up and down, levels in any order."""
    counts = _page_counts(k, S)
    lev = np.tile(np.arange(1.0, k + 1), (S, 1))
    rng = np.random.default_rng(0)
    worst = 0.0
    for i, r in enumerate(_patterns(k, S)):
        L = int((lev * r).sum())
        exact = float(_page_tail(counts, L))
        res = emp.ordering(lev, r, direction="up")
        assert res["L"] == L
        worst = max(worst, abs(res["p"] / exact - 1))
        if i % 7:
            continue
        # every 7th pattern: 'down' on the negated values is the same test; values as arbitrary reals with the same ranks
        down = emp.ordering(lev * 10.0, -np.exp(r) + 3.0, direction="down")
        assert down["L"] == L and down["p"] == pytest.approx(exact, rel=1e-12)
        # levels listed in a different order in every block (values carried along): L and p unchanged
        perm = np.array([rng.permutation(k) for _ in range(S)])
        shuf = emp.ordering(np.take_along_axis(lev, perm, 1), np.take_along_axis(r, perm, 1), direction="up")
        assert shuf["L"] == L and shuf["p"] == pytest.approx(exact, rel=1e-12)
    assert worst <= 1e-12, worst


def _page_size(k: int, S: int, alpha: float, p_of) -> float:
    """Exact size: the null probability that p_of(L) < alpha, summed over L's enumerated law."""
    counts = _page_counts(k, S)
    return sum(c for v, c in counts.items() if p_of(v) < alpha) / sum(counts.values())


def _p_at(k: int, S: int):
    """The module's p-value at each attainable L (one representative pattern per L value)."""
    lev = np.tile(np.arange(1.0, k + 1), (S, 1))
    out = {}
    for r in _patterns(k, S):
        L = int((lev * r).sum())
        if L not in out:
            out[L] = emp.ordering(lev, r, direction="up")["p"]
    return out


@pytest.mark.parametrize("k,S,alpha,bound", [(3, 3, 0.01, 0.01), (3, 3, 0.05, 0.05), (4, 2, 0.01, 0.01),
                                             (3, 4, 0.01, 0.01)])
def test_page_size_at_alpha_by_enumeration(k, S, alpha, bound):
    """The false-alarm rate under H0 (all patterns equally likely) is ≤ α: k = 3, S = 3 at α = 0.01 gives 1/216 =
    0.00463 (only the perfect ordering, L = 42, rejects); the tail mutant ``support > L`` also rejects L = 41 and
    gives 7/216 = 0.0324."""
    p = _p_at(k, S)
    size = _page_size(k, S, alpha, lambda L: p[L])
    exact = _page_size(k, S, alpha, lambda L: float(_page_tail(_page_counts(k, S), L)))
    assert size == pytest.approx(exact, abs=1e-15) and size <= bound, (size, exact)
    if (k, S, alpha) == (3, 3, 0.01):
        assert size == pytest.approx(1 / 216), size  # only the perfect ordering rejects


@pytest.mark.parametrize("k,S", [(4, 5), (3, 3), (5, 2)])
def test_page_extremes_are_the_attainable_minimum_and_one(k, S):
    """The perfect ordering gives p = (1/k!)^S (min_p), never 0; the reversed ordering gives p = 1."""
    lev = np.tile(np.arange(k, dtype=float), (S, 1))
    best = emp.ordering(lev, lev + np.arange(S)[:, None], direction="up")
    assert best["p"] > 0 and best["p"] == pytest.approx(math.factorial(k) ** -float(S), rel=1e-12)
    assert best["p"] == pytest.approx(emp.min_p(k, S), rel=1e-12)
    assert best["rho"] == pytest.approx(1.0) and best["holds"] == (best["p"] < 0.01)
    worst = emp.ordering(lev, -lev, direction="up")
    assert worst["p"] == pytest.approx(1.0, abs=1e-12) and worst["rho"] == pytest.approx(-1.0)


@pytest.mark.parametrize("k,S,seed", [(3, 3, 0), (4, 5, 1), (5, 3, 2), (3, 8, 3)])
def test_page_matches_scipy_page_trend_test_exact(k, S, seed):
    """scipy.stats.page_trend_test(method='exact') on the values ordered by level: same L and p (1e-10)."""
    rng = np.random.default_rng(seed)
    lev = np.array([rng.permutation(k) for _ in range(S)], float)
    val = 0.4 * lev + rng.normal(size=(S, k))
    res = emp.ordering(lev, val, direction="up")
    by_level = np.take_along_axis(val, np.argsort(lev, 1), 1)
    ref = st.page_trend_test(by_level, method="exact")
    assert res["L"] == pytest.approx(ref.statistic) and res["p"] == pytest.approx(ref.pvalue, rel=1e-10)
    # rho: the mean within-block Spearman correlation
    rho = np.mean([st.spearmanr(lev[s], val[s]).statistic for s in range(S)])
    assert res["rho"] == pytest.approx(rho, abs=1e-12)


# ---- paired sign-flip ----------------------------------------------------------------------------


def _flip_tail(units) -> Fraction:
    """Brute force over all 2^S sign patterns: P(Σ ±u ≥ Σ u) for integer differences u (ties are exact)."""
    obs = sum(units)
    pats = list(itertools.product((1, -1), repeat=len(units)))
    return Fraction(sum(sum(s * u for s, u in zip(pat, units)) >= obs for pat in pats), len(pats))


@pytest.mark.parametrize("units", [(1, 2, 4, -1, 8), (1, 1, -2, 4, 2, -1), (2, 2, 2, 2), (1, -1, 2, -2, 4, 8, -4),
                                   (8, 4, 2, 1, 1, 2, -4, -8, 1)])
def test_paired_shift_equals_brute_force_with_exact_ties(units):
    """d = u·log 2 exactly (b = 2^u, a = 1 and a = 2^−u, b = 1): many sign patterns tie with the observed mean in exact
    arithmetic, and the p-value must count them all (the enumerated tail in integers)."""
    u = np.array(units)
    b = np.where(u > 0, 2.0 ** np.abs(u), 1.0)
    a = np.where(u > 0, 1.0, 2.0 ** np.abs(u))
    res = emp.paired_shift(a, b)
    assert res["p"] == pytest.approx(float(_flip_tail(units)), rel=1e-12), (res["p"], _flip_tail(units))
    assert res["up_seeds"] == int((u > 0).sum()) and res["seeds"] == len(units)
    assert res["mean_log_ratio"] == pytest.approx(np.mean(u) * math.log(2), rel=1e-12)


@pytest.mark.parametrize("S,seed", [(5, 0), (9, 1), (12, 2)])
def test_paired_shift_matches_scipy_permutation_test(S, seed):
    """Generic (tie-free) log ratios: the enumerated tail and scipy's exact one-sample sign-flip permutation_test."""
    rng = np.random.default_rng(seed)
    a = np.exp(rng.normal(size=S))
    b = a * np.exp(0.5 + rng.normal(size=S))
    res = emp.paired_shift(a, b)
    d = np.log(b) - np.log(a)
    brute = np.mean([np.dot(s, d) >= d.sum() - 1e-12 for s in itertools.product((1, -1), repeat=S)])
    ref = st.permutation_test((d,), np.mean, permutation_type="samples", alternative="greater", n_resamples=np.inf)
    assert res["p"] == pytest.approx(brute, rel=1e-12) and res["p"] == pytest.approx(ref.pvalue, rel=1e-12)


def test_paired_shift_extremes():
    """All seeds up: p = 2^−S (the attainable minimum, not 0); all down: p = 1; one zero difference: p = 2^−(S−1)."""
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    up = emp.paired_shift(a, a * np.array([1.5, 2, 1.1, 3, 1.2, 1.01]))
    assert up["p"] == pytest.approx(2.0 ** -6) and up["p"] > 0 and up["up_seeds"] == 6
    down = emp.paired_shift(a, a / np.array([1.5, 2, 1.1, 3, 1.2, 1.01]))
    assert down["p"] == pytest.approx(1.0) and not down["holds"]
    zero = emp.paired_shift(a, a * np.array([1.5, 2, 1.0, 3, 1.2, 1.01]))
    assert zero["p"] == pytest.approx(2.0 ** -5)


@pytest.mark.parametrize("S,alpha", [(10, 0.01), (8, 0.05), (10, 0.002)])
def test_paired_shift_size_by_enumeration(S, alpha):
    """Under H0 the signs of d are fair coins: over all 2^S sign patterns of fixed |d| the rejection rate is
    ⌊α·2^S⌋/2^S-ish and ≤ α (S = 10, α = 0.01: 10/1024; the mutant ``>`` instead of ``≥`` rejects 11/1024 > α)."""
    mag = np.exp(np.random.default_rng(S).normal(size=S))  # generic magnitudes: no exact ties
    a = np.ones(S)
    rej = 0
    for pat in itertools.product((1, -1), repeat=S):
        rej += emp.paired_shift(a, np.exp(np.array(pat) * mag), alpha=alpha)["holds"]
    size = rej / 2 ** S
    assert size <= alpha and size == math.ceil(alpha * 2 ** S - 1) / 2 ** S, size
