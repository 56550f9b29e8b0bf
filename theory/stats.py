"""Statistical tools for checks: failure-rate tests, rate fits, rank correlations.

Every test states its false-alarm rate; checks use fixed seeds, so a verdict is
reproducible, and the false-alarm rate bounds how often a *true* claim would be
reported violated under fresh seeds.
"""
from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as st


@dataclass(frozen=True)
class RateTest:
    """One-sided binomial test of H0: failure probability ≤ δ (made by :func:`failure_rate_test`): the counts, δ,
    the level α, the p-value, the observed rate and the (1−α) Clopper–Pearson upper bound; ``rejects`` is p < α.

    >>> t = failure_rate_test(20, 100, delta=0.05, alpha=1e-3)
    >>> t.rejects, t.rate, round(t.upper, 3)
    (True, 0.2, 0.346)
    """

    failures: int
    trials: int
    delta: float
    alpha: float
    p_value: float
    rate: float
    upper: float  # one-sided (1-alpha) Clopper–Pearson upper bound on the failure probability

    @property
    def rejects(self) -> bool:
        """True when the observed failures are too many for a claim with probability 1−δ."""
        return self.p_value < self.alpha


def failure_rate_test(failures: int, trials: int, delta: float, alpha: float = 1e-3) -> RateTest:
    """Exact one-sided binomial test that failures/trials is consistent with rate ≤ δ.

    Args:
        failures, trials: the counts (0 ≤ failures ≤ trials, trials > 0).
        delta: the claimed failure probability δ ∈ (0, 1) (a "with probability ≥ 1 − δ" statement).
        alpha: the test's level, its false-alarm rate (a record's ``false_alarm``).

    Returns a :class:`RateTest`.

    >>> failure_rate_test(3, 100, delta=0.05).rejects
    False
    """
    if trials <= 0 or not (0 <= failures <= trials):
        raise ValueError(f"need 0 <= failures <= trials and trials > 0, got {failures}/{trials}")
    if not (0 < delta < 1) or not (0 < alpha < 1):
        raise ValueError(f"delta and alpha must lie in (0, 1), got {delta}, {alpha}")
    p = float(st.binomtest(failures, trials, delta, alternative="greater").pvalue)
    upper = 1.0 if failures == trials else float(st.beta.ppf(1 - alpha, failures + 1, trials - failures))
    return RateTest(failures, trials, delta, alpha, p, failures / trials, upper)


@dataclass(frozen=True)
class PowerFit:
    """Least-squares fit log y = log C + k log x, with a (1-alpha) CI on k (made by :func:`fit_power`): the
    ``exponent`` k, the ``constant`` C, the interval ``ci`` = (lo, hi), ``r2`` and the number of points ``n``.

    >>> fit = fit_power([1, 2, 4, 8], [3.0, 12.0, 48.0, 192.0])
    >>> round(fit.exponent, 12), round(fit.constant, 12), fit.n
    (2.0, 3.0, 4)
    """

    exponent: float
    constant: float
    ci: tuple
    r2: float
    n: int


def fit_power(x, y, alpha: float = 0.01) -> PowerFit:
    """Fit y ≈ C·x^k on log axes (x, y > 0): a rate with its confidence interval.

    Args:
        x, y: paired positive finite values (at least 3).
        alpha: the CI's level: ``fit.ci`` is the (1 − alpha) t-interval of the exponent (a record that judges a rate
            by it declares ``false_alarm=alpha`` and passes the interval as ``hypotheses={"exponent CI": list(ci)}``).

    Returns a :class:`PowerFit`.

    The interval's width is t·stderr, the slope's standard error from the residuals: on data exactly on a power
    law (no noise) the residuals are zero up to rounding, so the CI has zero width (stderr 0) or a rounding-sized
    one, and it sits on the exponent as computed, which carries the float64 rounding of the logs (about 1e-16 to
    1e-15). A check ``lo <= claimed <= hi`` can then fail on rounding alone; compare with a tolerance far above
    that rounding and far below any deviation the check must detect (e.g. ``lo - 1e-9 <= claimed <= hi + 1e-9``,
    as the scaffold's training template does), and widen the interval the same way for a companion that must
    reject a wrong exponent.

    >>> fit = fit_power([0.1, 0.05, 0.025, 0.0125], [0.21, 0.1, 0.051, 0.0249])
    >>> round(fit.exponent, 2), fit.ci[0] < 1 < fit.ci[1]
    (1.02, True)
    >>> exact = fit_power([0.2, 0.1, 0.05, 0.025], [0.0006, 0.0003, 0.00015, 0.000075])  # y = 0.003·x exactly
    >>> exact.ci[1] - exact.ci[0] < 1e-12, abs(exact.exponent - 1.0) < 1e-14  # here 1 − 2.2e-16: 1 is outside the CI
    (True, True)
    >>> exact.ci[0] - 1e-9 <= 1.0 <= exact.ci[1] + 1e-9
    True
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"fit_power needs ≥3 paired points, got shapes {x.shape}, {y.shape}")
    if np.any(x <= 0) or np.any(y <= 0) or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("fit_power needs finite positive x and y")
    lx, ly = np.log(x), np.log(y)
    res = st.linregress(lx, ly)
    t = st.t.ppf(1 - alpha / 2, x.size - 2)
    return PowerFit(float(res.slope), float(math.exp(res.intercept)),
                    (float(res.slope - t * res.stderr), float(res.slope + t * res.stderr)), float(res.rvalue ** 2), x.size)


# rank_trend's p-value is exact (all n! pairings enumerated) up to this many points; above it, scipy's t-approximation
_RANK_EXACT_MAX_N = 8


@functools.lru_cache(maxsize=64)
def _rank_product_null(rx: tuple, ry: tuple) -> np.ndarray:
    """Sorted Σ_i rx_i·ry_π(i) over all n! permutations π (n ≤ 8: at most 40320 values). Its law depends only on the
    two multisets of ranks, so the sorted tuples key a cache: tie-free data of one n share one enumeration."""
    n = len(rx)
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.intp).reshape(-1, n)
    return np.sort(np.asarray(ry)[perms] @ np.asarray(rx))


def rank_trend(x, y, alpha: float = 0.01, alternative: str = "greater"):
    """Spearman rank correlation of y with x and its one-sided p-value: (rho, p, significant = p < alpha).

    n ≤ 8 points: the exact permutation p-value, all n! pairings of y's (average) ranks with x's enumerated, ties
    included: p = P(Σ r_x·r_y(π) ≥ observed) for ``greater`` (≤ for ``less``, |centred| ≥ for ``two-sided``), so the
    perfect ordering of tie-free data gives the smallest attainable p, 1/n!, and the false-alarm rate is ≤ alpha.
    n > 8: scipy's t-approximation, floored at 1/n! (no permutation p-value on n pairs is smaller, so a perfect
    ordering never reads p = 0); it is slightly anti-conservative at small n: size 0.0128 at alpha = 0.01 for
    tie-free n = 9 (all 9! orders, checks/core/test_stats_exact_nulls.py), 0.011–0.012 for n = 10…13 (exact law of
    Σ i·π(i)), tending to alpha as n grows.

    Args:
        x, y: paired values (at least 3); alpha: the level; alternative: ``greater`` (y rises with x), ``less``
            or ``two-sided``.

    >>> rank_trend([1, 2, 3, 4, 5], [0.1, 0.3, 0.2, 0.6, 0.9], alpha=0.05)[2]
    True
    """
    x, y = np.asarray(x, float).ravel(), np.asarray(y, float).ravel()
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"rank_trend needs ≥ 3 paired points, got shapes {x.shape}, {y.shape}")
    if alternative not in ("greater", "less", "two-sided"):
        raise ValueError(f"alternative must be 'greater', 'less' or 'two-sided', got {alternative!r}")
    n = x.size
    r = st.spearmanr(x, y, alternative=alternative)
    rho = float(r.statistic)
    if not np.isfinite(rho):  # a constant x or y: no correlation is defined
        return rho, float("nan"), False
    if n <= _RANK_EXACT_MAX_N:
        # doubled average ranks are integers, so every Σ r_x·r_y(π) is an exact integer in float64: ties are exact
        rx, ry = 2 * st.rankdata(x), 2 * st.rankdata(y)
        null = _rank_product_null(tuple(np.sort(rx)), tuple(np.sort(ry)))
        obs = float(ry @ rx)
        if alternative == "greater":
            p = float(null.size - np.searchsorted(null, obs, side="left")) / null.size
        elif alternative == "less":
            p = float(np.searchsorted(null, obs, side="right")) / null.size
        else:
            centre = rx.sum() * ry.sum() / n  # E Σ r_x·r_y(π), an integer here (n(n+1)² untied)
            p = float(np.mean(np.abs(null - centre) >= abs(obs - centre)))
    else:
        p = max(float(r.pvalue), 1.0 / math.factorial(n))
    return rho, p, bool(p < alpha)


def spearman_permutation(x, y, *, n_perm: int, seed: int, alternative: str = "greater"):
    """Spearman r_s of (x, y) and its one-sided permutation p-value (``greater``: H1 r_s > 0; ``less``: H1 r_s < 0).

    scipy.stats.permutation_test over pairings (y's order permuted against x), ``n_perm`` seeded draws, so
    p = (1 + #{perm: r_s(perm) as extreme}) / (1 + n_perm) ≥ 1/(n_perm + 1): the declared level must exceed it.
    Ties get average ranks; r_s is the correlation of the ranks. Returns (r_s, p).

    Args:
        x, y: paired values (at least 4); n_perm: permutations drawn; seed: their seed (use the run's, ``ctx.seed``);
        alternative: ``greater`` or ``less``.

    >>> rs, p = spearman_permutation([1, 2, 3, 4, 5, 6], [1, 3, 2, 4, 6, 5], n_perm=999, seed=0)
    >>> round(rs, 4), p < 0.05
    (0.8857, True)
    """
    x, y = np.asarray(x, float).ravel(), np.asarray(y, float).ravel()
    if x.shape != y.shape or x.size < 4 or n_perm < 1:
        raise ValueError(f"spearman_permutation needs ≥4 paired values and n_perm ≥ 1, got {x.shape}, {y.shape}, {n_perm}")
    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative must be 'greater' or 'less', got {alternative!r}")

    def unit(r):
        r = r - r.mean()
        return r / np.linalg.norm(r)

    rx, ry = unit(st.rankdata(x)), unit(st.rankdata(y))
    res = st.permutation_test((ry,), lambda v, axis=-1: (v * rx).sum(axis), permutation_type="pairings",
                              n_resamples=n_perm, alternative=alternative, vectorized=True,
                              random_state=np.random.default_rng(seed))
    return float(res.statistic), float(res.pvalue)


def mean_ci(samples, alpha: float = 0.01):
    """Mean and a (1-alpha) normal-approximation confidence interval: ``(mean, (lo, hi))``.

    Args:
        samples: at least 2 values (a Monte Carlo sample); alpha: the interval's miss probability (a record's
            ``false_alarm``).

    >>> m, (lo, hi) = mean_ci([1.0, 2.0, 3.0, 4.0], alpha=0.05)
    >>> m, round(float(lo), 3), round(float(hi), 3)
    (2.5, 1.235, 3.765)
    """
    s = np.asarray(samples, float)
    if s.size < 2:
        raise ValueError("mean_ci needs at least 2 samples")
    m, se = float(s.mean()), float(s.std(ddof=1) / math.sqrt(s.size))
    z = st.norm.ppf(1 - alpha / 2)
    return m, (m - z * se, m + z * se)


@dataclass(frozen=True)
class AffineFit:
    """Least-squares fit y = intercept + slope·x with standard errors and (1-alpha) CIs (made by :func:`fit_affine`):
    ``slope``, ``intercept``, ``slope_se``, ``intercept_se``, ``slope_ci``, ``intercept_ci``, ``n``.

    >>> f = fit_affine([0, 1, 2, 3], [1.0, 3.0, 5.0, 7.0])
    >>> round(f.slope, 12), round(f.intercept, 12)
    (2.0, 1.0)
    """

    slope: float
    intercept: float
    slope_se: float
    intercept_se: float
    slope_ci: tuple
    intercept_ci: tuple
    n: int


def fit_affine(x, y, alpha: float = 0.01) -> AffineFit:
    """OLS fit y ≈ a + b·x (x, y finite, ≥ 3 points).

    Typical uses: logarithmic rates (x = log t: ‖w(t)‖ ≈ a log t + b) and limits extrapolated in a
    transformed time (x = 1/log t: y(t) ≈ L∞ + b/log t, the intercept is L∞).

    Args:
        x, y: paired finite values (at least 3, two distinct x); alpha: the CIs' level.

    Returns an :class:`AffineFit`.

    >>> f = fit_affine([1.0, 0.5, 0.25, 0.125], [2.1, 2.05, 2.02, 2.013])   # a limit as x -> 0: the intercept
    >>> f.intercept_ci[0] < 2.0 < f.intercept_ci[1]
    True
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"fit_affine needs ≥3 paired points, got shapes {x.shape}, {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("fit_affine needs finite x and y")
    if np.ptp(x) == 0:
        raise ValueError("fit_affine needs at least two distinct x values")
    res = st.linregress(x, y)
    t = st.t.ppf(1 - alpha / 2, x.size - 2)
    b, a, sb, sa = float(res.slope), float(res.intercept), float(res.stderr), float(res.intercept_stderr)
    return AffineFit(b, a, sb, sa, (float(b - t * sb), float(b + t * sb)), (float(a - t * sa), float(a + t * sa)), x.size)


def holm(p_values, alpha: float) -> list[bool]:
    """Holm's step-down procedure at family-wise level ``alpha``: which hypotheses (``p_values``, in any order) are
    rejected.

    Sort the k p-values ascending; reject p_(j) while p_(j) < α/(k − j) (j = 0, 1, …) and stop at the first that is not.
    The family-wise error rate is ≤ α under any dependence (as for Bonferroni, whose rejections are a subset of Holm's:
    the same first step), so a check that fails when anything is rejected has the same false-alarm rate either way,
    while a companion whose wrong versions must all be rejected gains power.

    >>> holm([0.001, 0.04, 0.02], alpha=0.05)   # 0.001 < 0.05/3, 0.02 < 0.05/2, 0.04 < 0.05/1
    [True, True, True]
    >>> holm([0.001, 0.04, 0.03], alpha=0.05)   # 0.03 >= 0.025: stop
    [True, False, False]
    """
    ps = [float(p) for p in p_values]
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if any(not 0 <= p <= 1 for p in ps):
        raise ValueError(f"p-values must lie in [0, 1], got {ps}")
    k, out = len(ps), [False] * len(ps)
    for j, i in enumerate(sorted(range(k), key=lambda i: ps[i])):
        if not ps[i] < alpha / (k - j):
            break
        out[i] = True
    return out
