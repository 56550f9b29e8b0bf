"""Exact (classical) escape directions of width-one networks and the flow along them.

``bantzis2025/def-2.1``, ``prop-2.2``, ``prop-A.2``, ``eq-escape-time``: for an activation pattern
S ⊆ [N] let m_S = Σ_{j∈S} G_j x_j (d_out = 1) and w = −c·m_S/‖m_S‖ (c = ±1). If
{j : wᵀx_j > 0} = S with a margin, ρ = (wᵀ, [1], …, [1], [c]) is an escape direction at any depth L:
∇L0(ρ) = −sρ with s = ‖m_S‖ and every ‖W_ℓ‖_F = 1 (so ‖ρ‖² = L), away from any kink.
"""
from __future__ import annotations

import itertools

import torch

from . import localized as loc
from ...device import draw


def interior_escape_directions(X: torch.Tensor, G: torch.Tensor, margin: float = 1e-6):
    """All self-consistent (w, c, s) over the 2^N patterns (N ≤ 16), sorted by decreasing speed."""
    N = X.shape[0]
    if N > 16:
        raise ValueError(f"pattern enumeration needs N <= 16, got {N}")
    g = G.reshape(-1)
    pats = torch.tensor(list(itertools.product([0.0, 1.0], repeat=N)), dtype=X.dtype, device=X.device)[1:]
    m = (pats * g) @ X                                      # (P, d)
    nm = m.norm(dim=1)
    out = []
    for c in (1.0, -1.0):
        w = -c * m / nm.clamp_min(1e-300).unsqueeze(1)
        pre = w @ X.T                                       # (P, N)
        ok = (((pre > 0).to(X.dtype) == pats).all(1)) & (pre.abs().amin(1) > margin) & (nm > 0)
        for i in ok.nonzero().flatten().tolist():
            out.append((w[i], c, float(nm[i])))
    out.sort(key=lambda t: -t[2])
    return out


def direction_params(w: torch.Tensor, c: float, L: int):
    """ρ = (wᵀ, 1, …, 1, c) as batched params (E = 1) of depth L ≥ 2."""
    if L < 2:
        raise ValueError(f"depth must be >= 2, got {L}")
    one = torch.ones(1, 1, 1, dtype=w.dtype, device=w.device)
    return [w.reshape(1, 1, -1).clone()] + [one.clone() for _ in range(L - 2)] + [c * one]


def flow(params, X, G, t_eval, *, max_norm=None, rtol=1e-11, atol=1e-12):
    """GF-INTEGRATE: θ̇ = −∇L0(θ) with the core's DOP853 integrator (theory.sim.train.gradient_flow)."""
    from theory.sim.train import gradient_flow

    return gradient_flow(lambda ps: loc.localized_loss(ps, X, G), params, t_eval, max_norm=max_norm,
                         rtol=rtol, atol=atol)


def gaussian_with_interior_direction(N: int, d: int, *, generator, dtype=torch.float64, device=None,
                                     max_draws: int = 100):
    """Draw (X (N, d), G (N,)) i.i.d. N(0, 1) until ``interior_escape_directions`` finds one; return
    (X, G, dirs, draws).

    The paper does not guarantee an interior width-one escape direction: the width-one speed
    |Σ_{j∈S} G_j wᵀx_j| may be maximal on a ReLU kink (wᵀx_j = 0 for some j), where ∇L0(ρ) = −sρ holds
    only in a Clarke sense (cf. Example 1), and a random (X, G) can have no self-consistent pattern at
    all. Checks that need a classical escape direction therefore condition on it: the draws are seeded
    and counted, and the first draw is kept whenever it qualifies (same data as an unconditioned draw)."""
    for draws in range(1, max_draws + 1):
        X = draw(torch.randn, N, d, generator=generator, dtype=dtype, device=device)
        G = draw(torch.randn, N, generator=generator, dtype=dtype, device=device)
        dirs = interior_escape_directions(X, G)
        if dirs:
            return X, G, dirs, draws
    raise RuntimeError(f"no (X, G) with an interior width-one escape direction in {max_draws} draws (N={N}, d={d})")
