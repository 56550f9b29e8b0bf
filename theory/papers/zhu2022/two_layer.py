"""Appendix D (catalog ``zhu2022/def-D`` … ``zhu2022/thm-3``): two-layer nets, both layers trained.

f(x) = (1/α) Σ_r a_r φ(w_r ᵀx), a_r(0) ~ N(0, β₂²), w_r(0) ~ N(0, β₁² I_d), ‖x_i‖ = 1,
𝓛 = ½ Σ_i (f(x_i) − y_i)² (a sum). As a DeepMLP: dims [d, m, 1], stds [β₁, β₂], alpha = 1/α;
the core's squared loss is a mean, so GD with core rate n·η is GD on the sum with rate η and
physical time t = η k. H (first layer) and G (second layer) are the per-layer tangent kernels
(:func:`theory.sim.ntk.layer_kernels`).
"""
from __future__ import annotations

import math

import torch

from theory.sim.models import DeepMLP
from theory.sim.ntk import row_angles


def build(E: int, d: int, m: int, *, alpha: float, beta1: float, beta2: float, generator=None,
          dtype=torch.float64, device=None) -> DeepMLP:
    """E two-layer nets of Eq. (16) (scalar output)."""
    if not alpha > 0:
        raise ValueError(f"output scale alpha must be positive, got {alpha!r}")
    return DeepMLP.init(E, [d, m, 1], stds=[beta1, beta2], alpha=1.0 / alpha, generator=generator,
                        dtype=dtype, device=device)


def K_matrix(X: torch.Tensor) -> torch.Tensor:
    """K_ij = x_iᵀx_j (π − θ_ij)/(2π): H^∞ = (m β₂²/α²) K (closed form of the Appendix-D expectation)."""
    return (X @ X.T) * (math.pi - row_angles(X, X)) / (2 * math.pi)


def kappa0(X: torch.Tensor) -> float:
    """κ₀ = λ_min(K); λ₀ = m β₂² κ₀ / α²."""
    return float(torch.linalg.eigvalsh(K_matrix(X))[0])


def lambda0(X: torch.Tensor, m: int, alpha: float, beta2: float) -> float:
    return m * beta2 ** 2 * kappa0(X) / alpha ** 2


def R_w(lam0: float, alpha: float, n: int, m: int, beta1: float, beta2: float, Ra: float) -> float:
    """R_w = α² λ₀ √(2π) β₁ / (32 n³ m (R_a(R_a + √(8/π)β₂) + β₂²)) (legible in the OCR)."""
    return alpha ** 2 * lam0 * math.sqrt(2 * math.pi) * beta1 / (
        32 * n ** 3 * m * (Ra * (Ra + math.sqrt(8 / math.pi) * beta2) + beta2 ** 2))


def R_a_legible(lam0: float, alpha: float, n: int, m: int) -> float:
    """The legible part of R_a, α√(λ₀/(8nm)); the rest is illegible, so R_a is a free radius."""
    return alpha * math.sqrt(lam0 / (8 * n * m))


def Rp_w(t, lam0: float, alpha: float, n: int, beta2: float, Ra, r0: float):
    """R'_w(t) = 2√n/(αλ₀) (√n β₂ + R_a) ‖y − f(0)‖ (1 − e^{−λ₀t/2})  (Lemma 9, Eq. 22)."""
    t = torch.as_tensor(t, dtype=torch.float64)
    return 2 * math.sqrt(n) / (alpha * lam0) * (math.sqrt(n) * beta2 + Ra) * r0 * (-torch.expm1(-lam0 * t / 2))


def Rp_a(t, lam0: float, alpha: float, n: int, m: int, beta1: float, Rw, r0: float):
    """R'_a(t) = 2√n/(αλ₀) (3β₁√(log(m n²)) + R_w) ‖y − f(0)‖ (1 − e^{−λ₀t/2})  (Lemma 10, Eq. 23)."""
    t = torch.as_tensor(t, dtype=torch.float64)
    return (2 * math.sqrt(n) / (alpha * lam0) * (3 * beta1 * math.sqrt(math.log(m * n * n)) + Rw) * r0
            * (-torch.expm1(-lam0 * t / 2)))


def t_cross(R: float, lam0: float, coef: float) -> float:
    """Solve coef·(1 − e^{−λ₀t/2}) = R: t = −(2/λ₀) log(1 − R/coef) (+∞ if R ≥ coef)."""
    if R >= coef:
        return math.inf
    return -2 / lam0 * math.log1p(-R / coef)  # log1p/expm1: accurate for the tiny t of Appendix D


def t1(lam0, alpha, n, beta2, Ra, Rw, r0) -> float:
    """t₁: R'_w(t₁) = R_w."""
    return t_cross(Rw, lam0, 2 * math.sqrt(n) / (alpha * lam0) * (math.sqrt(n) * beta2 + Ra) * r0)


def t2(lam0, alpha, n, m, beta1, Ra, Rw, r0) -> float:
    """t₂: R'_a(t₂) = R_a."""
    return t_cross(Ra, lam0, 2 * math.sqrt(n) / (alpha * lam0) * (3 * beta1 * math.sqrt(math.log(m * n * n)) + Rw) * r0)


def eq24_bound(a: torch.Tensor, W: torch.Tensor, alpha: float, eps: float) -> torch.Tensor:
    """(ε/α) Σ_r |a_r| ‖w_r‖ per member; a (E, m), W (E, m, d)."""
    return eps / alpha * (a.abs() * W.norm(dim=-1)).sum(-1)


def eq25_bound(eps, m, alpha, n, d, beta1, beta2, Rpa, Rpw) -> float:
    """(εm/α)(R'_a + √(2/π) n β₂)(R'_w + 4β₁√d + 2β₁√(log n))  (Eq. 25)."""
    return eps * m / alpha * (Rpa + math.sqrt(2 / math.pi) * n * beta2) * (
        Rpw + 4 * beta1 * math.sqrt(d) + 2 * beta1 * math.sqrt(math.log(n)))
