"""RATIOS: per-layer low-rank and linearity measures (``bantzis2025/thm-3.1``, ``prop-3.3``, ``prop-3.4``).

tail(M) = Σ_{i≥2}s_i²/Σ s_i² (core :func:`theory.sim.spectra.tail_energy`), srank = ‖M‖_F²/‖M‖_op²,
ν_ℓ = ‖Zσ_ℓ − Z_ℓ‖_F²/‖Z_ℓ‖_F² (1 ≤ ℓ ≤ L−1). Exact SVDs in float64. Zero matrices (dead
layers) get NaN ratios rather than an error, so a batch of restarts can be summarized.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from theory.sim import spectra

from . import localized as loc


def _safe(fn, M):
    s2 = (M.reshape(*M.shape[:-2], -1) ** 2).sum(-1)
    out = torch.full(M.shape[:-2], float("nan"), dtype=M.dtype, device=M.device)
    ok = s2 > 0
    if bool(ok.any()):
        out[ok] = fn(M[ok])
    return out


@dataclass
class Ratios:
    tail_W: torch.Tensor    # (E, L): ℓ = 1..L
    tail_Z: torch.Tensor    # (E, L): Zσ_ℓ, ℓ = 0..L−1 (Zσ_0 = X)
    srank_Z: torch.Tensor   # (E, L): ℓ = 0..L−1
    nu: torch.Tensor        # (E, L−1): ℓ = 1..L−1
    top_W: list             # per layer, (E, ≤10) singular values
    top_Z: list             # per layer ℓ = 0..L−1, (E, ≤10)


def ratios(params, X) -> Ratios:
    """RATIOS(θ, X) for every member."""
    E = params[0].shape[0]
    Z, H = loc.layers(params, X)
    Zs = [X.expand(E, *X.shape)] + H[:-1]
    tail_W = torch.stack([_safe(spectra.tail_energy, w) for w in params], 1)
    tail_Z = torch.stack([_safe(spectra.tail_energy, z) for z in Zs], 1)
    srank_Z = torch.stack([_safe(spectra.stable_rank, z) for z in Zs], 1)
    nus = []
    for z, h in zip(Z[:-1], H[:-1]):
        den = (z ** 2).sum((-1, -2))
        nus.append(torch.where(den > 0, ((h - z) ** 2).sum((-1, -2)) / den.clamp_min(1e-300),
                               torch.full_like(den, float("nan"))))
    nu = torch.stack(nus, 1) if nus else torch.zeros(E, 0, dtype=X.dtype, device=X.device)
    top_W = [spectra.singular_values(w)[:, :10] for w in params]
    top_Z = [spectra.singular_values(z)[:, :10] for z in Zs]
    return Ratios(tail_W, tail_Z, srank_Z, nu, top_W, top_Z)
