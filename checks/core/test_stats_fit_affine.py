"""Core: theory.stats.fit_affine (OLS with standard errors) recovers known lines and rejects bad input."""
import numpy as np
import pytest

from theory.stats import fit_affine


def test_fit_affine_recovers_line_and_limit():
    t = np.geomspace(1e2, 1e5, 30)
    f = fit_affine(np.log(t), 2.0 * np.log(t) - 3.0)
    assert abs(f.slope - 2.0) < 1e-12 and abs(f.intercept + 3.0) < 1e-11
    g = fit_affine(1 / np.log(t), 1.5 + 0.7 / np.log(t))  # a limit extrapolated in 1/log t
    assert abs(g.intercept - 1.5) < 1e-12
    rng = np.random.default_rng(0)
    h = fit_affine(np.arange(50.0), 1.0 + 0.5 * np.arange(50.0) + rng.normal(0, 0.1, 50))
    assert h.slope_se > 0 and abs(h.slope - 0.5) < 5 * h.slope_se and h.slope_ci[0] < h.slope < h.slope_ci[1]


def test_fit_affine_bad_input():
    with pytest.raises(ValueError):
        fit_affine([1, 2], [1, 2])
    with pytest.raises(ValueError):
        fit_affine([1, 1, 1], [1, 2, 3])
    with pytest.raises(ValueError):
        fit_affine([1, 2, np.nan], [1, 2, 3])


def test_mean_ci_is_the_normal_interval_of_the_mean():
    """mean_ci against the interval written here: mean ± z_{1−α/2}·s/√n (s with ddof 1)."""
    import math

    import numpy as np
    from scipy import stats as st

    from theory.stats import mean_ci

    x = np.random.default_rng(3).normal(2.0, 3.0, size=50)
    m, (lo, hi) = mean_ci(x, alpha=0.05)
    half = st.norm.ppf(0.975) * x.std(ddof=1) / math.sqrt(len(x))
    assert m == pytest.approx(x.mean(), rel=1e-15)
    assert (lo, hi) == pytest.approx((x.mean() - half, x.mean() + half), rel=1e-12)
