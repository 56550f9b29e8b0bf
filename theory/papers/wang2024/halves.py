"""Co-correlation between the two halves of a deep network (Wang et al. Fig. 2 / §6.1, claim `wang2024/fig-2`).

A bias-free ReLU MLP f = W_L σ(…σ(W₁x)) split after layer ``k`` into the inner module ϕ = σ∘W_k∘…∘σ∘W₁ and
the non-linear outer module φ = W_L σ(…σ(W_{k+1} z)). Per-sample Jacobian norms A = ‖J_φ(ϕ(x))‖₂,
B = ‖J_ϕ(x)‖₂, C = ‖J_f(x)‖₂ come from the core engine (:func:`cocorrelation.composition_norms`), and
the Thm 4.5 statistics from :func:`cocorrelation.population` — here φ is non-linear, so the identity's
extra factors (ρ, (1+var/μ²)^{1/2}) are non-trivial.
"""
from __future__ import annotations

import torch

from . import cocorrelation as cc


def split_maps(weights, act, k: int):
    """(inner, outer) maps of one network (weights without the ensemble axis), split after layer ``k``."""
    L = len(weights)
    if not 1 <= k < L:
        raise ValueError(f"split point k must be in 1..{L - 1} for a depth-{L} network, got {k}")

    def inner(x):
        for W in weights[:k]:
            x = act(W @ x)
        return x

    def outer(z):
        for W in weights[k:-1]:
            z = act(W @ z)
        return weights[-1] @ z

    return inner, outer


def halves_statistics(weights, act, X: torch.Tensor, k: int) -> list[dict]:
    """Thm 4.5 statistics (population moments) of every ensemble member split after layer ``k``."""
    out = []
    for e in range(weights[0].shape[0]):
        inner, outer = split_maps([w[e].detach() for w in weights], act, k)
        A, B, C = cc.composition_norms(inner, outer, X)
        out.append({key: float(v) for key, v in cc.population(A, B, C).items()})
    return out
