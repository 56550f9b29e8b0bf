"""Appendix C (catalog ``zhu2022/eq-balance``, ``zhu2022/thm-2``): layer balance and the
sufficient condition on the output scale α for non-lazy training.

f(x) = (1/α) W_L φ(⋯φ(W_1 x)). Balance: ⟨W_l, ∇_{W_l}𝓛⟩ is the same for all l (Euler), so under
GD ‖W_l‖_F² changes by −2η⟨W_l,G_l⟩ + η²‖G_l‖_F² and the difference of two layers drifts by
exactly η²(‖G_{l+1}‖² − ‖G_l‖²) per step.
Chain (13)–(15) with c₀ = 1/4 and B_l = √(3/2) m^{3/2} β_l (as read).
"""
from __future__ import annotations

import math

import torch

C0 = 0.25  # f_1(T*) ≥ c₀ (Appendix C, as the OCR reads)


def inner_products(params, grads) -> torch.Tensor:
    """⟨W_l, G_l⟩ per layer and member, (L, E)."""
    return torch.stack([(w * g).flatten(1).sum(1) for w, g in zip(params, grads)])


def sq_norms(tensors) -> torch.Tensor:
    """‖·‖_F² per layer and member, (L, E)."""
    return torch.stack([(t * t).flatten(1).sum(1) for t in tensors])


def B_l(m: int, beta: float) -> float:
    """High-probability bound on ‖W_l(0)‖_F used in Appendix C: √(3/2) m^{3/2} β_l."""
    return math.sqrt(1.5) * m ** 1.5 * beta


def alpha_threshold(m: int, betas, factor: float = 1.0) -> float:
    """Stated sufficient output scale: α > (K m^{3/2} Σ_l β_l)^L. The factor K between m^{3/2} and Σ is illegible in the
    OCR ("(m3/2 325 | B;)E"); ``factor`` is a reading of it (1: the factor dropped)."""
    if not factor > 0:
        raise ValueError(f"the threshold's factor must be positive, got {factor!r}")
    return (factor * m ** 1.5 * sum(betas)) ** len(betas)


def item5_lower_bound(alpha: float, Bs, l_star: int, c0: float = C0) -> float:
    """((α c₀)^{1/L} − (1/L)Σ_l B_l) / B_{l*} − 1: the proof's lower bound on sup_t rel. change of W_{l*}."""
    L = len(Bs)
    return ((alpha * c0) ** (1 / L) - sum(Bs) / L) / Bs[l_star] - 1


def item5_at_threshold_equal_betas(L: int, c0: float = C0, factor: float = 1.0) -> float:
    """Item-5 bound at α = α_thr (threshold factor K = ``factor``) with equal β_l: K L c₀^{1/L}/√(3/2) − 2 (m and β
    cancel). Increasing in L, so it is ≥ 1 for every L ≥ 2 iff it is at L = 2, i.e. iff K ≥ 3√(3/2)/(2 c₀^{1/2})."""
    return factor * L * c0 ** (1 / L) / math.sqrt(1.5) - 2


def threshold_factor_closing(c0: float = C0) -> float:
    """The smallest threshold factor K for which the item-5 bound at α_thr is ≥ 1 at every L ≥ 2 (equal β_l):
    3√(3/2)/(2 c₀^{1/2}) (= 3√(3/2) at c₀ = 1/4)."""
    return 3 * math.sqrt(1.5) / (2 * math.sqrt(c0))
