"""zhu2022/lem-1 and zhu2022/lem-2: masked-Gaussian laws, by exact binomial, one-sample KS and
two-sample KS tests (scipy.stats) at declared false-alarm rates, with the power of the same tests
against nearby wrong laws shown by mutation (rejection rate over independent repeats)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats as st

from theory.papers.zhu2022 import masked
from theory.device import draw

# False-alarm rate per claim family (Bonferroni-split below). Issue 35: 1e-4 (was 1e-3). For the decision "some test of
# the family rejects" Holm rejects exactly when Bonferroni does, so the split costs nothing; the wrong laws of the power
# tests stay rejected in every repeat: over 20 repeats the largest p-value was 3e-10 (χ²(1) scale ×1.1), 9e-14 (atom
# 0.48), 3e-46 (Lemma 2's wrong mixtures), against levels 6.7e-6 (Lemma 1) and 1.1e-5 (Lemma 2).
FAMILY_ALPHA = 1e-4
P_DIM, SIGMA, N1 = 10, 0.7, 50_000


def _geometries(gen, dtype, device):
    h1 = draw(torch.randn, P_DIM, generator=gen, dtype=dtype, device=device)
    r = draw(torch.randn, P_DIM, generator=gen, dtype=dtype, device=device)
    perp = r - (r @ h1) / (h1 @ h1) * h1
    return h1, {"random": r, "h1": h1.clone(), "-h1": -h1, "perp": perp,
                "h1+tiny": h1 + 1e-6 * draw(torch.randn, P_DIM, generator=gen, dtype=dtype, device=device)}


# Lemma 1: per geometry three tests are asserted (atom binomial, χ²(1) KS, two-sample KS): Bonferroni over 5 × 3 = 15.
LEM1_LEVEL = FAMILY_ALPHA / 15


def lemma1_tests(X: np.ndarray, Y: np.ndarray, scale: float) -> dict:
    """(i) exact binomial test of P(X=0)=1/2; (ii) KS of X|X>0 / scale vs χ²(1); (iii) two-sample KS X vs Y."""
    zero = int((X == 0).sum())
    return {"atom": zero / len(X), "p_atom": float(st.binomtest(zero, len(X), 0.5).pvalue),
            "p_chi2": float(st.kstest(X[X > 0] / scale, "chi2", args=(1,)).pvalue),
            "p_2s": float(st.ks_2samp(X, Y).pvalue)}


@pytest.mark.claim("zhu2022/lem-1")
def test_lemma1_equal_in_law(ctx, record):
    gen = record.generator({"t": "lem1"})
    h1, geos = _geometries(gen, ctx.dtype, ctx.device)
    level = LEM1_LEVEL
    assert len(geos) * 3 == 15
    rows = []
    for name, h2 in geos.items():
        X, Y = masked.lemma1_samples(N1, h1, h2, SIGMA, generator=gen)
        r = lemma1_tests(X.cpu().numpy(), Y.cpu().numpy(), SIGMA ** 2 * float(h1 @ h1))
        rows.append({"h2": name, **r})
    pmin = min(min(r["p_atom"], r["p_chi2"], r["p_2s"]) for r in rows)
    ok = pmin > level
    record("holds" if ok else "violated", observed=pmin, bound=level, ratio=None, false_alarm=FAMILY_ALPHA,
           covers=["atom at 0", "positive part law", "equal in law", "all h2 geometries"], evidence="test",
           rejects="the laws 'atom 0.48' and 'χ²(1) scale ×1.1', rejected by the same tests in ≥ 90 % of repeats "
                   "(test_lemma1_tests_have_power)",
           inside=True, inside_reason="h₁, h₂ ≠ 0 for every geometry (h₂ = h₁, −h₁, ⊥h₁, h₁ + 1e-6 noise, random); "
                                      "Lemma 1 has no other hypothesis",
           config={"p": P_DIM, "sigma": SIGMA, "N": N1, "family-wise alpha": FAMILY_ALPHA, "level per test": level},
           table=rows, tightness="smallest p-value of the 15 tests (5 geometries × atom, χ²(1) KS, two-sample KS) vs the "
                                 f"Bonferroni level {FAMILY_ALPHA:g}/15",
           note="two-sample KS (iii) is conservative with the atom; (i)+(ii) are the primary tests")
    assert ok, rows


@pytest.mark.claim("zhu2022/lem-1")
@pytest.mark.parametrize("wrong", ["atom 0.48", "scale x1.1"])
def test_lemma1_tests_have_power(ctx, record, wrong):
    """Mutation: the same tests, at the same level and N, reject nearby wrong laws in ≥ 90% of 20 repeats."""
    gen = record.generator({"wrong": wrong})
    h1, geos = _geometries(gen, ctx.dtype, ctx.device)
    level = LEM1_LEVEL
    scale = SIGMA ** 2 * float(h1 @ h1)
    rejected = 0
    for _ in range(20):
        X, _Y = masked.lemma1_samples(N1, h1, geos["random"], SIGMA, generator=gen)
        X = X.cpu().numpy()
        if wrong == "atom 0.48":  # the law with Bernoulli(0.52) thinning, s (w'h1)^2: atom 0.48
            w = draw(torch.randn, N1, P_DIM, generator=gen, dtype=ctx.dtype, device=ctx.device) * SIGMA
            s = (draw(torch.rand, N1, generator=gen, dtype=ctx.dtype, device=ctx.device) < 0.52).to(ctx.dtype)
            X = (s * (w @ h1) ** 2).cpu().numpy()
            r = lemma1_tests(X, X, scale)
        else:  # the claimed χ²(1) scale is σ²‖h1‖²; test against a 10% wrong scale
            r = lemma1_tests(X, X, scale * 1.1)
        rejected += min(r["p_atom"], r["p_chi2"]) < level
    ok = rejected / 20 >= 0.9
    record("holds" if ok else "violated", role="companion", observed=rejected / 20, bound=0.9, ratio=None,
           config={"mutation": wrong, "N": N1, "repeats": 20, "level": level},
           note=f"wrong law '{wrong}': rejected by the primary tests in {rejected}/20 repeats (power; ≥ 0.9 required)")
    assert ok, rejected


LEM2_CASES = [(3, 5), (8, 20), (64, 10)]


def lemma2_tests(T: np.ndarray, q: int, p_on: float = 0.5) -> dict:
    zero = int((T == 0).sum())
    pos = T[T > 0]
    mean_exact = q * p_on  # E χ²(ρ) = E ρ = q p
    var_exact = 2 * q * p_on + q * p_on * (1 - p_on)  # E[2ρ] + Var ρ
    zmean = (T.mean() - mean_exact) / math.sqrt(var_exact / len(T))
    return {"atom": zero / len(T), "atom_exact": 2.0 ** -q,
            "p_atom": float(st.binomtest(zero, len(T), 2.0 ** -q).pvalue),
            "p_ks": float(st.kstest(pos, lambda t: masked.mixture_cdf_positive(t, q)).pvalue),
            "mean": float(T.mean()), "z_mean": float(zmean),
            "p_mean": float(2 * st.norm.sf(abs(zmean)))}


@pytest.mark.claim("zhu2022/lem-2")
def test_lemma2_chi2_binomial_mixture(ctx, record):
    N = 20_000
    level = FAMILY_ALPHA / (3 * len(LEM2_CASES))
    rows = []
    for q, p in LEM2_CASES:
        gen = record.generator({"q": q, "p": p})
        h1 = draw(torch.randn, p, generator=gen, dtype=ctx.dtype, device=ctx.device)
        h2 = draw(torch.randn, p, generator=gen, dtype=ctx.dtype, device=ctx.device)
        T = masked.lemma2_samples(N, q, h1, h2, generator=gen).cpu().numpy()
        rows.append({"q": q, "p": p, **lemma2_tests(T, q)})
    pmin = min(min(r["p_atom"], r["p_ks"], r["p_mean"]) for r in rows)
    ok = pmin > level
    record("holds" if ok else "violated", observed=pmin, bound=level, ratio=None, config={"N": N, "cases": LEM2_CASES}, table=rows,
           false_alarm=FAMILY_ALPHA,
           covers=["atom", "mixture law", "mean"], evidence="test",
           rejects="the mixtures ρ ~ Bin(q, 0.45) and a fixed χ²(q/2), rejected by the same tests in ≥ 90 % of repeats "
                   "(test_lemma2_tests_have_power)",
           inside=True, inside_reason="W with i.i.d. N(0, 2/q) entries, h₁, h₂ ≠ 0 (drawn Gaussian) in every case; no other "
                                      "hypothesis",
           tightness="smallest p-value (atom binomial, KS vs conditional mixture CDF, mean z) vs Bonferroni level")
    assert ok, rows


@pytest.mark.claim("zhu2022/lem-2")
@pytest.mark.parametrize("wrong", ["Bin(q,0.45)", "fixed dof q/2"])
def test_lemma2_tests_have_power(ctx, record, wrong):
    """Mutation: samples from a nearby wrong law (ρ ~ Bin(q, 0.45), or a fixed χ²(q/2)) tested against the
    claimed law with the same N and level: rejected in ≥ 90% of 20 repeats (q = 8)."""
    N, q, reps = 20_000, 8, 20
    level = FAMILY_ALPHA / (3 * len(LEM2_CASES))
    rng = np.random.default_rng(int(torch.randint(0, 2**31, (1,), generator=(g := record.generator({"w": wrong})), device=g.device)))
    rejected = 0
    for _ in range(reps):
        if wrong == "Bin(q,0.45)":
            rho = rng.binomial(q, 0.45, N)
        else:
            rho = np.full(N, q // 2)
        T = np.where(rho > 0, rng.chisquare(np.maximum(rho, 1)), 0.0)
        r = lemma2_tests(T, q)
        rejected += min(r["p_atom"], r["p_ks"], r["p_mean"]) < level
    ok = rejected / reps >= 0.9
    record("holds" if ok else "violated", role="companion", observed=rejected / reps, bound=0.9, ratio=None,
           config={"mutation": wrong, "q": q, "N": N, "level": level},
           note=f"wrong law '{wrong}': rejected in {rejected}/{reps} repeats (power; ≥ 0.9 required)")
    assert ok, rejected
