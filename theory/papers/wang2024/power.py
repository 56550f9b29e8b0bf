"""Algorithm 2 (Wang et al. App. E): power iteration for ‖J‖₂, batched over samples, with its history.

Corrected reading (catalog `alg-2`): u ← u/‖u‖ (u₀ ~ Unif[0,1]^d); v = Ju; u' = Jᵀv; s = ‖u'‖/‖v‖;
u ← u'/‖u'‖; stop when |s_new − s_old|/s_old < tol (per sample) or after ``max_iter``. The printed line 13
divides two normalized vectors and is meaningless; the ratio of norms is taken before normalizing.
Works on explicit Jacobians J (N, k, d) — the core's jvp/vjp version is
:func:`theory.sim.jacobian.opnorm` (method="power").
"""
from __future__ import annotations

import torch
from ...device import draw


def power_iteration(J: torch.Tensor, *, tol: float = 1e-6, max_iter: int = 10_000,
                    generator: torch.Generator | None = None, history: bool = False):
    """Returns (s (N,), iterations (N,)[, history list of (N,) estimates])."""
    if J.dim() != 3:
        raise ValueError(f"J must be (N, k, d), got {tuple(J.shape)}")
    N, k, d = J.shape
    u = draw(torch.rand, N, d, dtype=J.dtype, generator=generator, device=J.device)
    u = u / u.norm(dim=-1, keepdim=True)
    s_old = torch.zeros(N, dtype=J.dtype, device=J.device)
    s = torch.zeros(N, dtype=J.dtype, device=J.device)
    iters = torch.zeros(N, dtype=torch.long, device=J.device)
    done = torch.zeros(N, dtype=torch.bool, device=J.device)
    hist = []
    for i in range(1, max_iter + 1):
        v = (J @ u.unsqueeze(-1)).squeeze(-1)
        up = (J.transpose(-1, -2) @ v.unsqueeze(-1)).squeeze(-1)
        vn = v.norm(dim=-1)
        new = torch.where(vn > 0, up.norm(dim=-1) / vn.clamp_min(1e-300), torch.zeros_like(vn))
        s = torch.where(done, s, new)
        if history:
            hist.append(s.clone())
        u = torch.where(done.unsqueeze(-1), u, up / up.norm(dim=-1, keepdim=True).clamp_min(1e-300))
        conv = (i > 1) & ((s - s_old).abs() <= tol * s_old.abs())
        iters = torch.where(done, iters, torch.full_like(iters, i))
        done = done | conv | (vn == 0)
        s_old = s.clone()
        if bool(done.all()):
            break
    return (s, iters, hist) if history else (s, iters)
