"""Empirical neural tangent kernels of a :class:`~theory.sim.models.DeepMLP`, per layer, batched.

For an MLP, the gradient of output k at x with respect to W_l is the outer product
b_l(x) h_{l-1}(x)ᵀ (times the forward multiplier s_l in the NTK parameterisation),
with b_l = ∂f/∂z_l the back-propagated vector and h_{l-1} the layer input. Hence the
contribution of layer l to the tangent kernel is exactly

    Θ_l(x_i, x_j) = s_l² · ⟨b_l(x_i), b_l(x_j)⟩ · ⟨h_{l-1}(x_i), h_{l-1}(x_j)⟩

(scalar output). :func:`layer_kernels` returns these (E, N, N) matrices; their sum is
the NTK, and for a two-layer net the layer-1 term is Du et al.'s H and the layer-2
term their G (Zhu et al. Appendix D). Costs one forward and one backward pass.
"""
from __future__ import annotations

from typing import Sequence

import torch


def layer_kernels(model, X: torch.Tensor, params: Sequence[torch.Tensor] | None = None) -> list[torch.Tensor]:
    """Per-layer tangent kernels Θ_l, each (E, N, N), of a scalar-output DeepMLP at inputs X.

    Args:
        model: a :class:`~theory.sim.models.DeepMLP` with one output.
        X: inputs (N, d) or (E, N, d).
        params: weights to use instead of the model's.

    Their sum is the empirical NTK J Jᵀ (J: the Jacobian of the outputs in all weights):

    >>> import torch
    >>> from theory.sim.models import DeepMLP
    >>> net = DeepMLP.init(1, [3, 8, 1], act="tanh", generator=torch.Generator().manual_seed(0), device="cpu")
    >>> X = torch.eye(3, dtype=torch.float64)
    >>> K = sum(layer_kernels(net, X))
    >>> J = torch.cat([g.reshape(3, -1) for g in torch.autograd.functional.jacobian(
    ...     lambda *ws: net.forward(X, list(ws))[0], tuple(net.params))], 1)
    >>> bool(torch.allclose(K[0], J @ J.T))
    True
    """
    ws = [p.detach().requires_grad_(True) for p in (model.params if params is None else params)]
    if ws[-1].shape[1] != 1:
        raise ValueError(f"layer_kernels needs a scalar-output model, output layer has shape {tuple(ws[-1].shape)}")
    with torch.enable_grad():
        Z, H = model.layers(X, ws)
        out = H[-1].squeeze(-1) * model.alpha  # (E, N)
        B = torch.autograd.grad(out.sum(), Z)  # b_l(x_n) = ∂f(x_n)/∂z_l: (E, N, d_l)
    E = ws[0].shape[0]
    inputs = [X.expand(E, *X.shape[-2:]) if X.dim() == 2 else X] + [h.detach() for h in H[:-1]]
    mult = model.multipliers or [1.0] * len(ws)
    return [(s ** 2) * (b @ b.transpose(-1, -2)) * (h @ h.transpose(-1, -2))
            for s, b, h in zip(mult, B, inputs)]


def row_angles(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Angles θ_ij ∈ [0, π] between the rows of A (N, d) and B (M, d), shape (N, M), accurate near 0 and π.

    θ = 2·atan2(‖â − b̂‖, ‖â + b̂‖) on unit rows, with the differences formed explicitly: arccos of an
    inner product loses half the digits at θ ≈ 0 (arccos(1 − ε) ≈ √(2ε): 1.5e-8 for ε = 1e-16), so two
    identical inputs would get an angle of ~1e-8 instead of 0. Used by the closed-form ReLU kernels
    (π − θ)/(2π) (Zhu et al. App. D, Wang et al. Eq. 21).

    Args:
        A: rows (N, d); B: rows (M, d).

    >>> import math, torch
    >>> A = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    >>> row_angles(A, A[:1]).flatten().tolist() == [0.0, math.pi / 4]
    True
    """
    if A.dim() != 2 or B.dim() != 2 or A.shape[1] != B.shape[1]:
        raise ValueError(f"row_angles needs (N, d) and (M, d) tensors, got {tuple(A.shape)} and {tuple(B.shape)}")
    a = A / A.norm(dim=1, keepdim=True)
    b = B / B.norm(dim=1, keepdim=True)
    diff = torch.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist")
    summ = torch.cdist(a, -b, compute_mode="donot_use_mm_for_euclid_dist")
    return 2 * torch.atan2(diff, summ)
