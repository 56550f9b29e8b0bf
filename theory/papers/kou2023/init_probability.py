"""Kou et al. (2023) initialization events (Appendix A) and the random-matrix lemma H.3, as
Monte-Carlo samplers batched over draws.

- :func:`a1_failures` — Lemma A.1: per draw, does some neuron violate
  ½σ₀²d ≤ ‖w_{j,r}(0)‖² ≤ 3/2·σ₀²d (norm part), and does some pair violate
  |⟨w_{j,r}(0), x_i⟩| ≤ √(2 log(8mn/δ))·σ₀R_max (inner-product part)?
- :func:`a1_norm_d_sufficient` — the d above which Laurent–Massart guarantees the norm part
  (derived here; the paper's Bernstein constant is unspecified).
- :func:`a2_failures` — Lemma A.2: does some i have |S_i^(0)| ∉ [0.4m, 0.6m]?
  (Hoeffding bound on the failure probability: 2n·e^{−m/50}, from 2·e^{−2m(0.1)²} per sample.)
- :func:`holm`, :func:`hoeffding_p` — the multiple-testing rule (Holm) and a Hoeffding p-value the checks judge by.
- :func:`h3_norms` — Lemma H.3: spectral norms of m×n matrices with i.i.d. ±½ entries (the centred
  indicator matrices of Lemma F.3) and their ψ₂ norm K = ½/√(ln 2).

Draws are generated in chunks on the ensemble axis (no Python loop over single networks).
"""
from __future__ import annotations

import math

import torch

from theory.device import DEFAULT_DTYPE
from ...device import draw
from ...stats import holm  # noqa: F401  (Holm's procedure, one copy for every paper)

PSI2_HALF = 0.5 / math.sqrt(math.log(2.0))  # ‖±½‖_{ψ₂}: E exp(¼/t²) = 2 ⇔ t = ½/√ln 2


def a1_threshold(m: int, n: int, delta: float, sigma0: float, R_max: float) -> float:
    """√(2 log(8mn/δ))·σ₀·R_max (Lemma A.1, inner-product part)."""
    return math.sqrt(2 * math.log(8 * m * n / delta)) * sigma0 * R_max


def a1_norm_d_sufficient(m: int, delta: float) -> float:
    """d ≥ k·log(8m/δ) with k = (2+√8)² ≈ 23.3 makes both Laurent–Massart tails
    (χ²_d − d ≥ 2√(dx)+2x and d − χ²_d ≥ 2√(dx), x = log(8m/δ), union over 2m neurons)
    fit inside [d/2, 3d/2], so the norm part fails with probability ≤ δ/2."""
    return (2 + math.sqrt(8)) ** 2 * math.log(8 * m / delta)


def a1_failures(X: torch.Tensor, m: int, draws: int, delta: float, sigma0: float = 1.0, *,
                generator=None, chunk: int = 256, norm_interval=(0.5, 1.5), ip_scale: float = 1.0):
    """Per-draw failure indicators (norm part, inner-product part), worst ratios, for W(0) ~ N(0, σ₀²I).

    ``norm_interval`` and ``ip_scale`` exist to evaluate deliberately wrong (tightened) versions.
    Returns dict with boolean tensors ``norm_fail``, ``ip_fail`` (draws,), and the ranges of
    ‖w‖²/(σ₀²d) and max|⟨w,x⟩|/threshold.
    """
    n, d = X.shape
    Rmax = float(X.norm(dim=1).max())
    thr = ip_scale * a1_threshold(m, n, delta, sigma0, Rmax)
    lo, hi = norm_interval
    nf, ipf, rmin, rmax, ipr = [], [], [], [], []
    done = 0
    while done < draws:
        E = min(chunk, draws - done)
        W = sigma0 * draw(torch.randn, E, 2 * m, d, generator=generator, dtype=X.dtype, device=X.device)
        q = (W * W).sum(-1) / (sigma0 ** 2 * d)  # (E, 2m)
        ip = (W @ X.T).abs().flatten(1).max(1).values / thr
        nf.append(((q < lo) | (q > hi)).any(1))
        ipf.append(ip > 1)
        rmin.append(q.min(1).values)
        rmax.append(q.max(1).values)
        ipr.append(ip)
        done += E
    return {"norm_fail": torch.cat(nf), "ip_fail": torch.cat(ipf), "q_min": float(torch.cat(rmin).min()),
            "q_max": float(torch.cat(rmax).max()), "ip_ratio_max": float(torch.cat(ipr).max())}


def a2_failures(G: torch.Tensor, y: torch.Tensor, m: int, draws: int, *, generator=None, chunk: int = 1024,
                lo: float = 0.4, hi: float = 0.6) -> torch.Tensor:
    """Per-draw indicator that some |S_i^(0)| ∉ [lo·m, hi·m].

    The pre-activations ⟨w_{j,r}(0), x_i⟩ of one neuron are jointly N(0, σ₀²G) over i, so they are
    drawn exactly as ξ Lᵀ with G = LLᵀ (σ₀ is irrelevant to signs); S_i^(0) uses class y_i's neurons.
    """
    n = G.shape[0]
    L = torch.linalg.cholesky(G)
    out = []
    done = 0
    while done < draws:
        E = min(chunk, draws - done)
        Z = draw(torch.randn, E, 2, m, n, generator=generator, dtype=G.dtype, device=G.device) @ L.T
        own = torch.where(y > 0, Z[:, 0], Z[:, 1])  # (E, m, n)
        S = (own > 0).sum(1)  # (E, n)
        out.append(((S < lo * m) | (S > hi * m)).any(1))
        done += E
    return torch.cat(out)


def a2_hoeffding(m: int, n: int) -> float:
    """2n·exp(−m/50): Hoeffding bound on P(some |S_i^(0)| ∉ [0.4m, 0.6m])."""
    return min(1.0, 2 * n * math.exp(-m / 50))


def h3_norms(m: int, n: int, draws: int, *, generator=None, dtype=DEFAULT_DTYPE, device=None,
             chunk: int = 64) -> torch.Tensor:
    """‖A‖₂ for ``draws`` m×n matrices with i.i.d. ±½ entries (largest eigenvalue of AᵀA)."""
    out = []
    done = 0
    while done < draws:
        E = min(chunk, draws - done)
        A = (draw(torch.randint, 0, 2, (E, m, n), generator=generator, device=device).to(dtype) - 0.5)
        small = A.transpose(-1, -2) @ A if n <= m else A @ A.transpose(-1, -2)
        out.append(torch.linalg.eigvalsh(small)[..., -1].clamp_min(0).sqrt())
        done += E
    return torch.cat(out)


def hoeffding_p(mean: float, mu: float, n: int, value_range: float) -> float:
    """Two-sided Hoeffding p-value of a sample mean of ``n`` i.i.d. values in an interval of length ``value_range``
    against the exact mean ``mu``: min(1, 2 exp(−2n(mean − μ)²/range²)) (a valid, conservative p-value)."""
    if n <= 0 or value_range <= 0:
        raise ValueError(f"need n > 0 and value_range > 0, got {n}, {value_range}")
    return min(1.0, 2.0 * math.exp(-2.0 * n * (mean - mu) ** 2 / value_range ** 2))
