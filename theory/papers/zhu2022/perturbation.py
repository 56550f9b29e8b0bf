"""Perturbation stability (catalog ``zhu2022/def-1``) and the Lemma-5 / Theorem-1 init term.

P(f, ε) = E_{x, x̂, W} ‖∇_x f(x)ᵀ (x − x̂)‖₂, x̂ uniform in the closed ε-ball around x.
For u = x − x̂ (uniform in the ε-ball of R^d): E‖u‖² = d/(d+2) ε², E‖u‖ = d/(d+1) ε and
E|gᵀu| = c_d ε ‖g‖ with c_d = d/(d+1) · Γ(d/2)/(√π Γ((d+1)/2)); so for scalar output
P(f, ε) = c_d ε E_{x,W} ‖∇_x f(x)‖ exactly.
"""
from __future__ import annotations

import math

import torch
from torch.func import jvp

from theory.sim.ball import sample_ball  # noqa: F401  (x̂ − x uniform in the ε-ball; re-exported for the checks)


def ball_sq_norm(d: int, eps: float = 1.0) -> float:
    """E‖u‖² = d/(d+2) ε²."""
    return d / (d + 2) * eps ** 2


def ball_norm(d: int, eps: float = 1.0) -> float:
    """E‖u‖ = d/(d+1) ε."""
    return d / (d + 1) * eps


def c_d(d: int) -> float:
    """E|gᵀu| / (ε‖g‖) for u uniform in the ε-ball of R^d."""
    return d / (d + 1) * math.exp(math.lgamma(d / 2) - math.lgamma((d + 1) / 2)) / math.sqrt(math.pi)


GRAD_CHUNK_BYTES = 2 ** 30  # input_grads: the activations autograd keeps for one chunk of rows


def grad_chunk_rows(E: int, width: int, layers: int, N: int, itemsize: int,
                    max_bytes: float = GRAD_CHUNK_BYTES) -> tuple[int, int]:
    """The rows of one :func:`input_grads` pass (at most N) and the elements its activations keep per row,
    3·E·width·layers: the chunk rule, shared with the shape estimates of the zhu2022 checks that call it.

    >>> grad_chunk_rows(400, 1024, 10, 1000, 8)
    (10, 12288000)
    """
    per_row = 3 * E * width * layers
    return min(N, max(1, int(max_bytes // (per_row * itemsize)))), per_row


def input_grads(model, X: torch.Tensor, params=None, *, max_bytes: int = GRAD_CHUNK_BYTES) -> torch.Tensor:
    """∇_x f(x) at each row, (E, N, d), for a scalar-output model (exact, by autograd).

    Rows are independent, so they are taken in chunks whose kept activations (about 3 tensors of (E, rows,
    width) per layer) stay under ``max_bytes``: the full profile's E = 400, N = 1000, m = 1024, L = 10 cell of
    Thm 1 at t = 0 needed 47 GiB in one pass on an H100. Below the budget it is one pass, as before."""
    ps = [p.detach() for p in (model.params if params is None else params)]
    E = ps[0].shape[0]
    Xe = (X.expand(E, *X.shape[-2:]) if X.dim() == 2 else X).detach()
    N = Xe.shape[1]
    rows, _ = grad_chunk_rows(E, max(max(p.shape[-2:]) for p in ps), len(ps), N, Xe.element_size(), max_bytes)
    if rows >= N:
        return _input_grads_pass(model, Xe, ps)
    return torch.cat([_input_grads_pass(model, Xe[:, i:i + rows], ps) for i in range(0, N, rows)], dim=1)


def _input_grads_pass(model, Xe: torch.Tensor, ps) -> torch.Tensor:
    Xe = Xe.clone().requires_grad_(True)
    with torch.enable_grad():
        out = model.forward(Xe, ps)
        if out.dim() != 2:
            raise ValueError("input_grads needs a scalar-output model")
        (g,) = torch.autograd.grad(out.sum(), Xe)
    return g


def jacobian_apply(model, X: torch.Tensor, U: torch.Tensor, params=None) -> torch.Tensor:
    """∇_x f(x)ᵀ u for each row pair (x_n, u_n): (E, N, o) — a forward-mode JVP.

    At initial weights this is W_L D_{L-1} W_{L-1} ⋯ D_1 W_1 u with the patterns D_l(x).
    """
    ps = [p.detach() for p in (model.params if params is None else params)]
    E = ps[0].shape[0]
    Xe = X.expand(E, *X.shape[-2:]) if X.dim() == 2 else X
    Ue = U.expand(E, *U.shape[-2:]) if U.dim() == 2 else U

    def f(x):
        return model.layers(x, ps)[1][-1] * model.alpha

    return jvp(f, (Xe,), (Ue,))[1]


def stability_scalar(grads: torch.Tensor, eps: float) -> torch.Tensor:
    """P(f, ε) per ensemble member for scalar output: c_d ε mean_x ‖∇_x f(x)‖, (E,)."""
    return c_d(grads.shape[-1]) * eps * grads.norm(dim=-1).mean(-1)


def init_second_moment(m: int, o: int, beta1: float, betaL: float, gam: float, L: int) -> float:
    """Lemma 5 constant: m o β_1² β_L² γ^{2(L-2)} / 2, so that
    E‖W_L D_{L-1}⋯D_1W_1 u‖² = const · E‖u‖² (≤ const · ε², the stated form)."""
    if L < 2:
        raise ValueError(f"depth L must be at least 2, got {L}")
    return m * o * beta1 ** 2 * betaL ** 2 * gam ** (2 * (L - 2)) / 2


def init_term(m: int, o: int, beta1: float, betaL: float, gam: float, L: int) -> float:
    """Theorem 1's initialisation term per unit ε: T_init = (m o β_1² β_L² γ^{2(L-2)}/2)^{1/2}."""
    return math.sqrt(init_second_moment(m, o, beta1, betaL, gam, L))


def masked_products(model, X: torch.Tensor, U: torch.Tensor) -> list[torch.Tensor]:
    """t_l = D_l W_l ⋯ D_1 W_1 u for l = 1..L−1 and W_L t_{L−1} last (proof of Lemma 5), each (E, N, ·).

    D_l = diag(σ'(z_l(x))) are the activation patterns at x (σ' of the model's activation).
    """
    Z, _ = model.layers(X)
    mult = model.multipliers or [1.0] * model.depth
    t = U.expand(Z[0].shape[0], *U.shape[-2:]) if U.dim() == 2 else U
    out = []
    for l, w in enumerate(model.weights):
        t = (t @ w.transpose(-1, -2)) * mult[l]
        if l < model.depth - 1:
            t = t * model.act.slope(Z[l])
        out.append(t)
    out[-1] = out[-1] * model.alpha
    return out
