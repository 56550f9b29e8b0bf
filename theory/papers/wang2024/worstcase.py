"""Adversarial searches for the worst case of Wang et al.'s pointwise ("for every θ / x") inequalities (issue 32).

Each search is batched gradient ascent (Adam) on the ratio observed/bound of one statement over the free inputs or
weights, from several starts; it returns the largest ratio met along every trajectory (the search's worst case) and
the point where it was met. The proofs' equality cases are built by the checks themselves, beside these searches.

- :func:`ascend_varrho`: Def. 4.2's ϱ_{a,σ∘W} (bound 1) over W of f = aᵀσ(Wx).
- :func:`ascend_rho`: Def. 4.3's ρ (bound 1) over the three weight matrices of a 3-module ReLU composition.
- :func:`ascend_xstar`: Eq. (120)'s ‖x̃_*(t)‖ / M² over W of the ReLU model (row-average α_i, Eq. 110).
- :func:`ascend_kappa`: Thm 4.1's first-order ratio κ = E G/(E G²)^{1/2} (bound 1) over w of a linear classifier.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def _adam(params, objective, steps: int, lr: float, betas=(0.9, 0.999), eps: float = 1e-8):
    """Maximize ``objective(*params)`` (a tensor of per-start values, summed for the gradient) with Adam (written out:
    torch.optim's first use imports its compiler stack, seconds for a search of milliseconds); returns the running
    best value per start and the parameters where each start met it."""
    params = [p.detach().clone() for p in params]
    m1 = [torch.zeros_like(p) for p in params]
    m2 = [torch.zeros_like(p) for p in params]
    best, arg = None, None
    for k in range(steps + 1):
        ps = [p.requires_grad_(True) for p in params]
        val = objective(*ps)
        grads = torch.autograd.grad(val.sum(), ps)
        v = val.detach()
        if best is None:
            best, arg = v.clone(), [p.detach().clone() for p in params]
        else:
            better = v > best
            best = torch.where(better, v, best)
            for a_, p in zip(arg, params):
                a_[better] = p.detach()[better]
        if k == steps:
            break
        with torch.no_grad():
            new = []
            for p, g, a1, a2 in zip(params, grads, m1, m2):
                a1.mul_(betas[0]).add_(g, alpha=1 - betas[0])
                a2.mul_(betas[1]).addcmul_(g, g, value=1 - betas[1])
                hat1, hat2 = a1 / (1 - betas[0] ** (k + 1)), a2 / (1 - betas[1] ** (k + 1))
                new.append(p.detach() + lr * hat1 / (hat2.sqrt() + eps))  # ascent
            params = new
    return best, arg


def _check_steps(steps: int, lr: float):
    if steps < 1 or not lr > 0:
        raise ValueError(f"an adversarial search needs steps ≥ 1 and lr > 0, got steps={steps}, lr={lr}")


def varrho_relu(W: torch.Tensor, a: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """Differentiable Def. 4.2 ϱ of f = aᵀReLU(Wx) (σ'(z) = 1{z ≥ 0}) per member: W (E,m,d), a (E,m), X (N,d)."""
    D = (torch.einsum("emd,nd->enm", W, X) >= 0).to(W.dtype)  # (E, N, m), the slope held fixed (a.e. exact)
    B = torch.linalg.matrix_norm(D.unsqueeze(-1) * W.unsqueeze(1), ord=2)  # ‖D(x)W‖₂ (E, N)
    C = torch.einsum("enm,emd->end", D * a.unsqueeze(1), W).norm(dim=-1)  # ‖WᵀD(x)a‖ (E, N)
    A = a.norm(dim=-1, keepdim=True)  # ‖aᵀ‖ (E, 1)
    return C.pow(2).mean(-1).sqrt() / (A * B).pow(2).mean(-1).sqrt()


def ascend_varrho(W0: torch.Tensor, a: torch.Tensor, X: torch.Tensor, *, steps: int = 60, lr: float = 0.05):
    """Gradient ascent of ϱ_{a,σ∘W} over W (a, X fixed), one start per member of W0: (best ϱ per start, its W)."""
    _check_steps(steps, lr)
    best, (W,) = _adam([W0], lambda W: varrho_relu(W, a, X), steps, lr)
    return best, W


def rho_three_module(W1, W2, W3, X):
    """Differentiable Def. 4.3 ρ of φ∘ϕ, ϕ(x) = ReLU(W1 x), φ(z) = W3 ReLU(W2 z), per start: W1 (E,h,d),
    W2 (E,k,h), W3 (E,o,k), X (N,d). A = ‖J_φ(ϕ(x))‖₂, B = ‖J_ϕ(x)‖₂."""
    Z1 = torch.einsum("ehd,nd->enh", W1, X)
    D1 = (Z1 >= 0).to(W1.dtype)
    Z2 = torch.einsum("ekh,enh->enk", W2, F.relu(Z1))
    D2 = (Z2 >= 0).to(W1.dtype)
    B = torch.linalg.matrix_norm(D1.unsqueeze(-1) * W1.unsqueeze(1), ord=2)  # (E, N)
    Jo = torch.einsum("eok,enk,ekh->enoh", W3, D2, W2)
    A = torch.linalg.matrix_norm(Jo, ord=2)
    return (A * B).mean(-1) / (A.pow(2).mean(-1).sqrt() * B.pow(2).mean(-1).sqrt())


def ascend_rho(W1, W2, W3, X, *, steps: int = 60, lr: float = 0.05):
    """Gradient ascent of ρ over the three matrices: (best ρ per start, the matrices where it was met)."""
    _check_steps(steps, lr)
    return _adam([W1, W2, W3], lambda a_, b_, c_: rho_three_module(a_, b_, c_, X), steps, lr)


def xstar_norm(W: torch.Tensor, a: torch.Tensor, X: torch.Tensor, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """‖x̃_*(x)‖ of Eq. (21) with the row-average α_i (Eq. 110) for the ReLU model, per member: W (E,m,d), a (E,m),
    X (n,d), y (n,), x (d,). α_i = (1/m)Σ_r σ'(w_rᵀx)σ'(w_rᵀx_i) with σ'(z) = 1{z ≥ 0} (held fixed: a.e. exact)."""
    Z = torch.einsum("emd,nd->enm", W, X)
    u = (F.relu(Z) * a.unsqueeze(1)).sum(-1)  # (E, n)
    s = (torch.einsum("emd,d->em", W, x) >= 0).to(W.dtype)  # (E, m)
    alpha = torch.einsum("em,enm->en", s, (Z >= 0).to(W.dtype)) / W.shape[1]
    return ((alpha * (y - torch.sigmoid(u))) @ X / X.shape[0]).norm(dim=-1)


def ascend_xstar(W0, a, X, y, x, *, steps: int = 60, lr: float = 0.05):
    """Gradient ascent of ‖x̃_*(x)‖ over W: (best norm per start, its W)."""
    _check_steps(steps, lr)
    best, (W,) = _adam([W0], lambda W: xstar_norm(W, a, X, y, x), steps, lr)
    return best, W


def kappa_linear(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """κ = E G/(E G²)^{1/2} of f(x) = wᵀx under ℓ = softplus(−s f): G = sig(−s wᵀx)‖w‖, per row of w (E, d)."""
    g = torch.sigmoid(-(2 * y - 1) * (w @ X.T))  # (E, N); ‖w‖ cancels
    return g.mean(-1) / g.pow(2).mean(-1).sqrt()


def ascend_kappa(w0: torch.Tensor, X: torch.Tensor, y: torch.Tensor, *, steps: int = 100, lr: float = 0.05):
    """Gradient ascent of κ over w (E starts): (best κ per start, its w)."""
    _check_steps(steps, lr)
    best, (w,) = _adam([w0], lambda w: kappa_linear(w, X, y), steps, lr)
    return best, w
