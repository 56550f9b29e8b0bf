"""Statistical tools for checks: failure-rate tests, rate fits, rank correlations.

Every test states its false-alarm rate; checks use fixed seeds, so a verdict is
reproducible, and the false-alarm rate bounds how often a *true* claim would be
reported violated under fresh seeds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as st


@dataclass(frozen=True)
class RateTest:
    """One-sided binomial test of H0: failure probability ≤ δ."""

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
    """Exact one-sided binomial test that failures/trials is consistent with rate ≤ δ."""
    if trials <= 0 or not (0 <= failures <= trials):
        raise ValueError(f"need 0 <= failures <= trials and trials > 0, got {failures}/{trials}")
    if not (0 < delta < 1) or not (0 < alpha < 1):
        raise ValueError(f"delta and alpha must lie in (0, 1), got {delta}, {alpha}")
    p = float(st.binomtest(failures, trials, delta, alternative="greater").pvalue)
    upper = 1.0 if failures == trials else float(st.beta.ppf(1 - alpha, failures + 1, trials - failures))
    return RateTest(failures, trials, delta, alpha, p, failures / trials, upper)


@dataclass(frozen=True)
class PowerFit:
    """Least-squares fit log y = log C + k log x, with a (1-alpha) CI on k."""

    exponent: float
    constant: float
    ci: tuple
    r2: float
    n: int


def fit_power(x, y, alpha: float = 0.01) -> PowerFit:
    """Fit y ≈ C·x^k on log axes (x, y > 0)."""
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


def rank_trend(x, y, alpha: float = 0.01, alternative: str = "greater"):
    """Spearman rank correlation of y with x and its one-sided p-value: (rho, p, significant)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size < 3:
        raise ValueError("rank_trend needs at least 3 points")
    r = st.spearmanr(x, y, alternative=alternative)
    return float(r.statistic), float(r.pvalue), bool(r.pvalue < alpha)


def spearman_permutation(x, y, *, n_perm: int, seed: int, alternative: str = "greater"):
    """Spearman r_s of (x, y) and its one-sided permutation p-value (``greater``: H1 r_s > 0; ``less``: H1 r_s < 0).

    scipy.stats.permutation_test over pairings (y's order permuted against x), ``n_perm`` seeded draws, so
    p = (1 + #{perm: r_s(perm) as extreme}) / (1 + n_perm) ≥ 1/(n_perm + 1): the declared level must exceed it.
    Ties get average ranks; r_s is the correlation of the ranks. Returns (r_s, p).
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
    """Mean and a (1-alpha) normal-approximation confidence interval."""
    s = np.asarray(samples, float)
    if s.size < 2:
        raise ValueError("mean_ci needs at least 2 samples")
    m, se = float(s.mean()), float(s.std(ddof=1) / math.sqrt(s.size))
    z = st.norm.ppf(1 - alpha / 2)
    return m, (m - z * se, m + z * se)


@dataclass(frozen=True)
class AffineFit:
    """Least-squares fit y = intercept + slope·x with standard errors and (1-alpha) CIs."""

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
