"""theory.stats.spearman_permutation: the statistic against scipy's Spearman, the Monte Carlo p-value against the
exact permutation distribution enumerated here, and its input errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as st

from theory import stats


def _exact_p(x, y, alternative):
    """All n! orderings of y against x: the exact one-sided permutation p-value of Spearman's r_s."""
    obs = st.spearmanr(x, y).statistic
    null = np.array([st.spearmanr(x, np.asarray(p)).statistic for p in itertools.permutations(y)])
    return float(np.mean(null >= obs - 1e-12) if alternative == "greater" else np.mean(null <= obs + 1e-12))


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_spearman_permutation_matches_exact_enumeration(alternative):
    rng = np.random.default_rng(3)
    x = rng.random(7)
    y = x + 0.6 * rng.random(7)  # positively associated; ties-free
    rs, p = stats.spearman_permutation(x, y, n_perm=20000, seed=0, alternative=alternative)
    assert abs(rs - st.spearmanr(x, y).statistic) <= 1e-12
    exact = _exact_p(x, y, alternative)
    # Monte Carlo error of a proportion from 20000 draws: 5 standard errors, plus the +1 of (1 + hits)/(1 + n)
    se = np.sqrt(max(exact * (1 - exact), 1e-4) / 20000)
    assert abs(p - exact) <= 5 * se + 1 / 20001, (p, exact)


def test_spearman_permutation_is_seeded_and_bounded_below():
    x = np.arange(10.0)
    a = stats.spearman_permutation(x, x, n_perm=500, seed=4)
    assert a == stats.spearman_permutation(x, x, n_perm=500, seed=4)
    assert a[0] == pytest.approx(1.0) and a[1] == pytest.approx(1 / 501)  # no permutation beats the identity


def test_spearman_permutation_rejects_bad_input():
    with pytest.raises(ValueError, match="paired"):
        stats.spearman_permutation([1, 2, 3], [1, 2, 3], n_perm=10, seed=0)
    with pytest.raises(ValueError, match="alternative"):
        stats.spearman_permutation(range(5), range(5), n_perm=10, seed=0, alternative="two-sided")
