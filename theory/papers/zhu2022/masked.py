"""Masked Gaussian laws of Lemma 1 and Lemma 2 (catalog ``zhu2022/lem-1``, ``zhu2022/lem-2``).

Lemma 1: w ~ N(0, σ² I_p), X = (wᵀh₁ 1{wᵀh₂ > 0})², Y = s (wᵀh₁)², s ~ Ber(1/2):
X =d Y; atom 1/2 at 0; X | X>0 ~ σ²‖h₁‖² χ²(1).
Lemma 2: W (q×p) i.i.d. N(0, 2/q), v = diag(1{Wh₂ > 0}) W h₁:
T = q‖v‖²/(2‖h₁‖²) ~ χ²(ρ), ρ ~ Bin(q, 1/2) (χ²(0) = δ₀).
"""
from __future__ import annotations

import numpy as np
import torch
from scipy import stats as st
from ...device import draw


def lemma1_samples(N: int, h1: torch.Tensor, h2: torch.Tensor, sigma: float, *, generator=None):
    """(X, Y) with N samples each (independent draws of w for X and for Y)."""
    if float(h1.norm()) == 0 or float(h2.norm()) == 0:
        raise ValueError("Lemma 1 needs non-zero h1 and h2")
    p = h1.numel()
    w = draw(torch.randn, N, p, generator=generator, dtype=h1.dtype, device=h1.device) * sigma
    X = (w @ h1 * (w @ h2 > 0)) ** 2
    w2 = draw(torch.randn, N, p, generator=generator, dtype=h1.dtype, device=h1.device) * sigma
    s = draw(torch.randint, 0, 2, (N,), generator=generator, device=h1.device).to(h1.dtype)
    return X, s * (w2 @ h1) ** 2


def lemma2_samples(N: int, q: int, h1: torch.Tensor, h2: torch.Tensor, *, var: float | None = None,
                   generator=None) -> torch.Tensor:
    """T = ‖v‖² / (β² ‖h₁‖²) with β² = ``var`` (default 2/q, then T = q‖v‖²/(2‖h₁‖²)), N samples."""
    var = 2.0 / q if var is None else var
    W = draw(torch.randn, N, q, h1.numel(), generator=generator, dtype=h1.dtype, device=h1.device) * var ** 0.5
    v = (W @ h1) * (W @ h2 > 0)
    return (v ** 2).sum(-1) / (var * float(h1 @ h1))


def mixture_cdf_positive(t, q: int, p_on: float = 0.5) -> np.ndarray:
    """CDF of χ²(ρ) | (χ²(ρ) > 0), ρ ~ Bin(q, p_on): Σ_{k≥1} Bin(k) F_{χ²_k}(t) / (1 − P(ρ=0))."""
    t = np.asarray(t, float)
    k = np.arange(1, q + 1)
    w = st.binom.pmf(k, q, p_on)
    return (w[None, :] * st.chi2.cdf(t[:, None], k[None, :])).sum(1) / (1 - st.binom.pmf(0, q, p_on))
