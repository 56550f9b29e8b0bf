"""Adversarial risk (Wang et al. Def. 3.1, Eqs. 5–6) and the Theorem 4.1 quantities (Eq. 8, App. A).

Loss: BCE with labels y ∈ {0,1}, ℓ(u, y) = softplus(−s u), s = 2y − 1 (Eq. 2).

- Linear model f(x) = wᵀx: sup_{‖ε‖≤r} ℓ(f(x+ε), y) = softplus(−s wᵀx + r‖w‖) exactly (convex, monotone).
- General f: L2 PGD (ascent or descent) with restarts, batched over samples × radii × restarts.
"""
from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F

from theory.sim.ball import sample_ball


def signed(y: torch.Tensor) -> torch.Tensor:
    return 2 * y - 1


def linear_robust_loss(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor, r, *, sign: int = 1) -> torch.Tensor:
    """Per-sample sup (sign=+1) or inf (sign=−1) over ‖ε‖≤r of ℓ(wᵀ(x+ε), y): (R, N) for radii r (R,)."""
    r = torch.as_tensor(r, dtype=X.dtype, device=X.device).reshape(-1, 1)
    return F.softplus(-signed(y) * (X @ w) + sign * r * w.norm())


def grad_norm_loss(f: Callable, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """G(x, y) = ‖∇ₓℓ(f(x), y)‖ per sample (autograd; samples are independent, so one backward)."""
    Xr = X.clone().requires_grad_(True)
    l = F.softplus(-signed(y) * f(Xr)).sum()
    (g,) = torch.autograd.grad(l, Xr)
    return g.norm(dim=-1)


def energy_terms(G: torch.Tensor) -> dict:
    """𝔖(ℓ∘f) = (E G²)^{1/2} and the first-order limit κ = E G / (E G²)^{1/2} (Cauchy–Schwarz, ≤ 1)."""
    S = G.pow(2).mean().sqrt()
    return dict(S_loss=S, kappa=G.mean() / S)


def pgd_l2(f: Callable, X: torch.Tensor, y: torch.Tensor, radii, *, steps: int = 100, restarts: int = 3,
           sign: int = 1, generator: torch.Generator | None = None) -> torch.Tensor:
    """Per-sample best ℓ(f(x+ε), y) over ‖ε‖₂ ≤ r found by L2 PGD: (R, N).

    sign=+1 maximizes (adversarial risk, a lower estimate of the sup), −1 minimizes. Restart 0 starts at
    r·∇ℓ/‖∇ℓ‖ (the first-order optimum), restart 1 at 0, the others uniformly in the ball. Step 2.5r/K
    along the normalized gradient, projection onto the ball, per-sample best kept over all iterates.
    """
    if steps < 1 or restarts < 1:
        raise ValueError("pgd_l2 needs steps ≥ 1 and restarts ≥ 1")
    radii = torch.as_tensor(radii, dtype=X.dtype, device=X.device).reshape(-1)
    if bool((radii < 0).any()):
        raise ValueError("radii must be non-negative")
    R, (N, d) = radii.numel(), X.shape
    s = signed(y)

    def lossf(Z):  # Z (..., N, d)
        return F.softplus(-s * f(Z.reshape(-1, d)).reshape(Z.shape[:-1]))

    Xr = X.clone().requires_grad_(True)
    (g0,) = torch.autograd.grad(lossf(Xr).sum(), Xr)
    g0 = sign * g0 / g0.norm(dim=-1, keepdim=True).clamp_min(1e-300)
    starts = []
    for k in range(restarts):
        if k == 0:
            e = g0.expand(R, N, d)
        elif k == 1:
            e = torch.zeros(R, N, d, dtype=X.dtype, device=X.device)
        else:
            e = sample_ball((R, N), d, 1.0, generator=generator, dtype=X.dtype, device=X.device)
        starts.append(e)
    rr = radii.view(1, R, 1, 1)
    eps = torch.stack(starts) * rr  # (K, R, N, d)
    best = (sign * lossf(X + eps)).detach().amax(0)
    alpha = 2.5 * rr / steps
    for _ in range(steps):
        eps.requires_grad_(True)
        val = lossf(X + eps)
        (g,) = torch.autograd.grad(val.sum(), eps)
        with torch.no_grad():
            best = torch.maximum(best, (sign * val).amax(0))
            g = sign * g / g.norm(dim=-1, keepdim=True).clamp_min(1e-300)
            eps = eps + alpha * g
            n = eps.norm(dim=-1, keepdim=True)
            eps = eps * torch.clamp(rr / n.clamp_min(1e-300), max=1.0)
    with torch.no_grad():
        best = torch.maximum(best, (sign * lossf(X + eps)).amax(0))
    return sign * best


def ratio_table(radii, R_nat, R_rob, S_loss) -> list:
    """(R_rob − R)/(r·𝔖(ℓ∘f)) per radius."""
    return [float((rb - R_nat) / (r * S_loss)) for r, rb in zip(radii, R_rob)]


def crossover(radii, ratios) -> float:
    """Smallest grid radius where R_rob > R + r𝔖 (ratio > 1); inf if none."""
    for r, q in zip(radii, ratios):
        if q > 1:
            return float(r)
    return math.inf
