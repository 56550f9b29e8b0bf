"""Localized loss L0 and the sphere geometry of Bantzis, Simon & Jacot (2025), Sec. 2.

- ``bantzis2025/def-network``: bias-free ReLU net, no ReLU on the output (core
  :class:`theory.sim.models.DeepMLP` with σ'(0) = 0), θ = (W_1, …, W_L), W_ℓ: n_ℓ × n_{ℓ−1}.
- ``bantzis2025/eq-1``: L0(θ) = Tr[Gᵀ Y_θ] = Σ_j g_jᵀ f_θ(x_j) (no 1/N).
- ``bantzis2025/def-2.1``: on the sphere ‖θ‖² = L the escape speed is s = −L0(θ); the
  Def-2.1 residual is ‖∇L0(θ) + sθ‖/(s√L).

Conventions of the core: X is (N, d) (rows are samples, the paper's columns); G is (N,)
for d_out = 1 or (N, d_out). Every weight has a leading ensemble axis E (restarts).
"""
from __future__ import annotations

import math
from typing import Sequence

import torch

from theory.sim import activations, models
from ...device import draw

RELU0 = activations.get("relu", grad_at_zero=0.0)


def net(params: Sequence[torch.Tensor]) -> models.DeepMLP:
    """A DeepMLP view of the weights (bias-free, ReLU with σ'(0)=0, linear output)."""
    return models.DeepMLP(list(params), RELU0)


def check_data(X: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
    """Validate X (N, d) and G (N,) or (N, o); return G as (N, o)."""
    if X.dim() != 2:
        raise ValueError(f"X must be (N, d), got shape {tuple(X.shape)}")
    Gm = G.unsqueeze(-1) if G.dim() == 1 else G
    if Gm.dim() != 2 or Gm.shape[0] != X.shape[0]:
        raise ValueError(f"G must be (N,) or (N, o) with N = {X.shape[0]}, got shape {tuple(G.shape)}")
    return Gm


def layers(params, X):
    """(Z, Zσ): pre-activations Z_ℓ and post-activations Zσ_ℓ, ℓ = 1..L, each (E, N, n_ℓ)."""
    return net(params).layers(X, params)


def output(params, X) -> torch.Tensor:
    """Y_θ as (E, N, o) (Z_L, no ReLU)."""
    return layers(params, X)[0][-1]


def localized_loss(params, X, G) -> torch.Tensor:
    """L0(θ) = Σ_{j,o} G_{j,o} f_θ(x_j)_o per ensemble member, shape (E,)."""
    Gm = check_data(X, G)
    return (output(params, X) * Gm).sum((-1, -2))


def sq_norm(params) -> torch.Tensor:
    """‖θ‖² = Σ_ℓ ‖W_ℓ‖_F², shape (E,)."""
    return sum((w.reshape(w.shape[0], -1) ** 2).sum(1) for w in params)


def layer_sq_norms(params) -> torch.Tensor:
    """‖W_ℓ‖_F² per layer, shape (E, L)."""
    return torch.stack([(w.reshape(w.shape[0], -1) ** 2).sum(1) for w in params], 1)


def _bcast(v, w):
    return v.to(w.device).view(-1, *([1] * (w.dim() - 1)))


def scale(params, lam: torch.Tensor):
    """λθ for a per-member factor λ (E,)."""
    return [w * _bcast(lam, w) for w in params]


def to_sphere(params, radius2: float | None = None):
    """θ·√(r²/‖θ‖²) with r² = L (the depth) unless given."""
    L = len(params)
    r2 = float(L if radius2 is None else radius2)
    return scale(params, torch.sqrt(r2 / sq_norm(params)))


def random_sphere(E: int, dims: Sequence[int], *, balanced: bool = True, generator=None, dtype=torch.float64,
                  device=None):
    """Random θ on ‖θ‖² = L: i.i.d. N(0,1) weights, each layer scaled to ‖W_ℓ‖_F = 1
    (``balanced``, OPT-SPEED's default) or the whole θ rescaled."""
    L = len(dims) - 1
    ws = [draw(torch.randn, E, dims[l + 1], dims[l], generator=generator, dtype=dtype, device=device) for l in range(L)]
    if balanced:
        return [w / _bcast(w.reshape(E, -1).norm(dim=1), w) for w in ws]
    return to_sphere(ws)


def gradient(params, X, G):
    """(L0 (E,), [∇_{W_ℓ} L0]) by autograd (σ'(0) = 0)."""
    ps = [p.detach().requires_grad_(True) for p in params]
    val = localized_loss(ps, X, G)
    gs = torch.autograd.grad(val.sum(), ps)
    return val.detach(), [g.detach() for g in gs]


def inner(a, b) -> torch.Tensor:
    """Σ_ℓ ⟨a_ℓ, b_ℓ⟩ per member, shape (E,)."""
    return sum((x * y).reshape(x.shape[0], -1).sum(1) for x, y in zip(a, b))


def def21_residual(params, X, G) -> tuple[torch.Tensor, torch.Tensor]:
    """(speed s = −L0(θ), ‖∇L0(θ) + sθ‖/(s·‖θ‖)) per member; NaN residual where s ≤ 0.

    On ‖θ‖² = L this is the Def-2.1 residual ‖∇L0 + sρ‖/(s√L)."""
    val, gs = gradient(params, X, G)
    s = -val
    r = torch.sqrt(sum(((g + _bcast(s, g) * w) ** 2).reshape(w.shape[0], -1).sum(1) for g, w in zip(gs, params)))
    res = r / (s * torch.sqrt(sq_norm(params)))
    return s, torch.where(s > 0, res, torch.full_like(res, math.nan))


def neuron_balance_error(params) -> torch.Tensor:
    """max over hidden neurons of |‖W_{ℓ,i·}‖² − ‖W_{ℓ+1,·i}‖²| (def-2.1 (c)), shape (E,)."""
    errs = [((params[l] ** 2).sum(-1) - (params[l + 1] ** 2).sum(-2)).abs().amax(-1) for l in range(len(params) - 1)]
    return torch.stack(errs, 1).amax(1)


def embed(params, dims: Sequence[int]):
    """Zero-pad each W_ℓ to the widths ``dims`` (the function and norms are unchanged)."""
    out = []
    for l, w in enumerate(params):
        z = torch.zeros(w.shape[0], dims[l + 1], dims[l], dtype=w.dtype, device=w.device)
        if w.shape[1] > dims[l + 1] or w.shape[2] > dims[l]:
            raise ValueError(f"layer {l + 1} of shape {tuple(w.shape[1:])} does not fit in {dims[l + 1]}x{dims[l]}")
        z[:, : w.shape[1], : w.shape[2]] = w
        out.append(z)
    return out
