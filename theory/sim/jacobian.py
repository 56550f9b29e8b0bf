"""Input-Jacobian spectral norms, per sample, batched.

:func:`opnorm` returns ‖J_f(x_n)‖₂ for every row x_n of X, where f maps one input
vector to a vector (or scalar). Methods:

- ``"lanczos"`` (default): batched Lanczos with full reorthogonalisation on
  JᵀJ (or JJᵀ, whichever side is smaller); matrix-vector products via
  ``torch.func.vjp`` of ``vmap(f)`` and the vjp of that linear map (Jv),
  linearized once per active set. Stops per sample when the Ritz residual
  r puts an eigenvalue within ``tol`` (relative) of the top Ritz value, or
  when the Krylov space is the whole space (then exact).
- ``"power"``: the per-sample power iteration of Wang et al., Algorithm 2
  (relative change < ``tol``, default 1e-6), kept as the paper's reference.
- ``"exact"``: dense Jacobian (``jacrev``) and SVD; for small cases.

Closed forms for the two-layer models (Wang et al. §Jacobians) are in
:func:`two_layer_hidden_opnorm_exact` and :func:`two_layer_output_grad_norm`.
"""
from __future__ import annotations

from typing import Callable

import torch
from torch.func import jacrev, jvp, vjp, vmap
from ..device import draw

METHODS = ("lanczos", "power", "exact")


def _check_X(X: torch.Tensor) -> None:
    if not isinstance(X, torch.Tensor) or X.dim() != 2:
        raise ValueError(f"X must be an (N, d) tensor of inputs, got {getattr(X, 'shape', type(X))}")
    if not bool(torch.isfinite(X).all()):
        raise ValueError("X contains NaN or inf")


def _out_dim(f: Callable, x: torch.Tensor) -> int:
    with torch.no_grad():
        return int(f(x).numel())


def _matvec(f: Callable, X: torch.Tensor, side: str) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """Batched v ↦ JᵀJ v (side 'in') or u ↦ JJᵀu (side 'out') at the rows ``X[idx]``.

    The Jacobians are linearized once per active set ``idx`` (it changes only when samples converge):
    ``vjp`` of ``vmap(f)`` at X[idx] gives u ↦ Jᵀu for every row at once (the Jacobian of the vmapped map
    is block diagonal), and the ``vjp`` of that linear map gives v ↦ Jv (the double-vjp trick). Each
    product then costs two Jacobian applications and no re-evaluation of f (jvp + vjp per product
    evaluate f twice more: about 3× slower).
    """
    F = vmap(f)
    cache: dict = {}

    def ops(idx):
        if "idx" not in cache or not torch.equal(cache["idx"], idx):
            out, pull = vjp(F, X[idx])
            shape = out.shape

            def jt(U):
                return pull(U.reshape(shape))[0]

            _, pull2 = vjp(jt, torch.zeros_like(out))
            cache.update(idx=idx.clone(), jt=jt, j=lambda V: pull2(V)[0].reshape(len(idx), -1))
        return cache["j"], cache["jt"]

    def mv(idx, V):
        j, jt = ops(idx)
        return jt(j(V)) if side == "in" else j(jt(V))

    return mv


def lanczos_top_eig(matvec: Callable[[torch.Tensor], torch.Tensor], n: int, N: int, *, tol: float,
                    max_iter: int | None, dtype, device, generator: torch.Generator | None = None,
                    check_every: int = 3):
    """Top eigenvalue of N symmetric PSD n×n operators given ``matvec(idx, V)``.

    Args:
        matvec: ``matvec(idx, V)`` applies operators ``idx`` (a LongTensor of sample indices) to the rows
            of V; only samples not yet converged are multiplied.
        n: the operators' size; N: how many.
        tol: stop a sample when its Ritz residual is within ``tol`` (relative) of the top Ritz value.
        max_iter: at most this many iterations (None: n, the exact answer).
        dtype, device: of the iteration; generator: draws the start vectors.
        check_every: solve the tridiagonal problem every this many iterations.

    Returns (eigenvalues (N,), iterations used (N,)).

    >>> import torch
    >>> A = torch.diag(torch.tensor([1.0, 4.0, 2.0], dtype=torch.float64)).expand(2, 3, 3)
    >>> lam, it = lanczos_top_eig(lambda idx, V: (A[idx] @ V.unsqueeze(-1)).squeeze(-1), 3, 2, tol=1e-12,
    ...                           max_iter=None, dtype=torch.float64, device="cpu",
    ...                           generator=torch.Generator().manual_seed(0))
    >>> [round(v, 10) for v in lam.tolist()]
    [4.0, 4.0]
    """
    k_max = n if max_iter is None else min(n, max_iter)
    q = draw(torch.randn, N, n, dtype=dtype, generator=generator, device=device)
    q = q / q.norm(dim=-1, keepdim=True)
    cap = min(k_max + 1, 64)  # Krylov basis storage grows by doubling (k_max + 1 rows can be GBs)
    Q = torch.empty(N, cap, n, dtype=dtype, device=device)
    Q[:, 0] = q
    alphas = torch.zeros(N, k_max, dtype=dtype, device=device)
    betas = torch.zeros(N, k_max, dtype=dtype, device=device)
    done = torch.zeros(N, dtype=torch.bool, device=device)
    iters = torch.full((N,), k_max, dtype=torch.long, device=device)
    theta = torch.zeros(N, dtype=dtype, device=device)
    w = torch.zeros(N, n, dtype=dtype, device=device)
    for k in range(k_max):
        act = (~done).nonzero().squeeze(-1)
        w[act] = matvec(act, Q[act, k])
        a = (w * Q[:, k]).sum(-1)
        alphas[:, k] = a
        w = w - a[:, None] * Q[:, k]
        if k > 0:
            w = w - betas[:, k - 1, None] * Q[:, k - 1]
        # full reorthogonalisation: one classical Gram–Schmidt pass against the whole basis (after the
        # three-term recurrence above, a second pass changed neither iterations nor error in the bench)
        w = w - torch.einsum("bk,bkn->bn", torch.einsum("bkn,bn->bk", Q[:, : k + 1], w), Q[:, : k + 1])
        b = w.norm(dim=-1)
        betas[:, k] = b
        if k % check_every == check_every - 1 or k == k_max - 1 or bool((b[act] <= 0).any()):
            a_, b_ = alphas[act, : k + 1], betas[act, :k]
            T = torch.diag_embed(a_) + torch.diag_embed(b_, 1) + torch.diag_embed(b_, -1)
            ev, evec = torch.linalg.eigh(T)
            th = ev[:, -1]
            res = (b[act] * evec[:, -1, -1]).abs()
            # stop on the Ritz residual: some eigenvalue lies within res of θ (and θ ≤ λ_max). The Kato–Temple
            # estimate res²/(θ − θ₂) was used before; it needs θ₂ ≥ λ₂, but the second Ritz value is a lower bound
            # on λ₂, so an unresolved cluster at the top (σ₁ ≈ σ₂ within 1e-6) faked a wide gap and stopped with
            # θ a mixture of the cluster, wrong by up to its width (5 of 40 starts in checks/core/test_jacobian.py)
            scale = th.abs().clamp_min(torch.finfo(dtype).tiny)
            conv = (res <= tol * scale) | (b[act] <= 1e3 * torch.finfo(dtype).eps * scale) | (k == k_max - 1)
            fin = act[conv]
            theta[fin] = th[conv]
            iters[fin] = k + 1
            done[fin] = True
            if bool(done.all()):
                break
        if k + 1 == Q.shape[1]:
            Q = torch.cat([Q, torch.empty(N, min(Q.shape[1], k_max + 1 - Q.shape[1]), n, dtype=dtype, device=device)], 1)
        Q[:, k + 1] = w / b.clamp_min(torch.finfo(dtype).tiny)[:, None]
    return theta, iters


def opnorm(f: Callable[[torch.Tensor], torch.Tensor], X: torch.Tensor, *, method: str = "lanczos",
           tol: float | None = None, max_iter: int | None = None, generator: torch.Generator | None = None,
           return_iters: bool = False):
    """Spectral norm of the Jacobian of ``f`` (one input vector → output) at each row of ``X``.

    Args:
        f: a function of one input vector (d,) to a vector or scalar, written with torch ops (it is vmapped).
        X: inputs (N, d).
        method: ``"lanczos"`` (default), ``"power"`` (Wang et al. Algorithm 2) or ``"exact"`` (dense SVD).
        tol: the stopping tolerance (default 1e-10 for Lanczos, 1e-6 for power).
        max_iter: an iteration cap; generator: draws the start vectors.
        return_iters: also return the iterations used per row.

    Returns the norms (N,) (and the iterations (N,) with ``return_iters``).

    >>> import torch
    >>> W = torch.tensor([[3.0, 0.0], [0.0, -1.0], [0.0, 0.0]], dtype=torch.float64)
    >>> X = torch.tensor([[1.0, 1.0], [-1.0, -2.0]], dtype=torch.float64)
    >>> [round(s, 9) for s in opnorm(lambda x: W @ x, X).tolist()]        # Lanczos: to its tolerance
    [3.0, 3.0]
    >>> opnorm(lambda x: torch.relu(W @ x), X, method="exact").tolist()   # the ReLU masks a row of W at x₂
    [3.0, 1.0]
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}: choose one of {METHODS}")
    _check_X(X)
    N, d = X.shape
    k = _out_dim(f, X[0])
    if method == "exact":
        J = vmap(jacrev(f))(X).reshape(N, k, d)
        s = torch.linalg.matrix_norm(J, ord=2)
        return (s, torch.ones(N, dtype=torch.long, device=X.device)) if return_iters else s
    if method == "power":
        s, it = _power(f, X, tol=1e-6 if tol is None else tol, max_iter=max_iter or 10_000, generator=generator)
        return (s, it) if return_iters else s
    side, n = ("in", d) if d <= k else ("out", k)
    lam, it = lanczos_top_eig(_matvec(f, X, side), n, N, tol=1e-10 if tol is None else tol, max_iter=max_iter,
                              dtype=X.dtype, device=X.device, generator=generator)
    s = lam.clamp_min(0).sqrt()
    return (s, it) if return_iters else s


def _power(f, X, *, tol: float, max_iter: int, generator):
    """Wang et al. Algorithm 2: per-sample power iteration with jvp/vjp, stop on relative change < tol."""
    out, iters = [], []
    for x in X:
        u = draw(torch.rand, x.shape, dtype=X.dtype, generator=generator, device=X.device)
        u = u / u.norm()
        old = None
        for i in range(1, max_iter + 1):
            v = jvp(f, (x,), (u,))[1]
            fx, pull = vjp(f, x)
            w = pull(v.reshape(fx.shape))[0]
            new = (w.norm() / v.norm()).item() if v.norm() > 0 else 0.0
            u = w / w.norm() if w.norm() > 0 else w
            if old is not None and (old == 0 or abs(new - old) / old < tol):
                break
            old = new
        out.append(new)
        iters.append(i)
    return torch.tensor(out, dtype=X.dtype, device=X.device), torch.tensor(iters, device=X.device)


def two_layer_hidden_opnorm_exact(W: torch.Tensor, X: torch.Tensor, act) -> torch.Tensor:
    """‖D(x)W‖₂ for x ↦ σ(Wx), W (m, d), by dense SVD of the masked matrix: (N,).

    Args:
        W: (m, d); X: inputs (N, d); act: an :class:`~theory.sim.activations.Activation` (its ``slope`` gives D).

    >>> import torch
    >>> from theory.sim.activations import get
    >>> W = torch.tensor([[3.0, 0.0], [0.0, -1.0]], dtype=torch.float64)
    >>> two_layer_hidden_opnorm_exact(W, torch.tensor([[1.0, 1.0]], dtype=torch.float64), get("relu")).tolist()
    [3.0]
    """
    D = act.slope(X @ W.T)  # (N, m)
    return torch.linalg.matrix_norm(D[:, :, None] * W[None], ord=2)


def two_layer_output_grad_norm(W: torch.Tensor, a: torch.Tensor, X: torch.Tensor, act) -> torch.Tensor:
    """‖J_f(x)‖₂ = ‖Wᵀ D(x) a‖₂ for f(x) = aᵀσ(Wx) (a 1×d Jacobian, closed form): (N,).

    Args:
        W: (m, d); a: (m,); X: inputs (N, d); act: an Activation.

    >>> import torch
    >>> from theory.sim.activations import get
    >>> W, a = torch.eye(2, dtype=torch.float64), torch.tensor([3.0, 4.0], dtype=torch.float64)
    >>> two_layer_output_grad_norm(W, a, torch.tensor([[1.0, 1.0], [1.0, -1.0]], dtype=torch.float64),
    ...                            get("relu")).tolist()
    [5.0, 3.0]
    """
    D = act.slope(X @ W.T)
    return ((D * a) @ W).norm(dim=-1)


def input_jacobian(model, X: torch.Tensor) -> torch.Tensor:
    """Closed-form input Jacobian ∂f/∂x of a batched model at every row of X.

    TwoLayerNet: (a ⊙ σ'(Wx))ᵀW; TwoClassNet: Σ_j j·(1/m)σ'(W_j x)ᵀW_j  → (E, N, d).
    DeepMLP: α·W_L D_{L-1}W_{L-1}⋯D_1W_1 (D_l = diag σ'(Z_l))              → (E, N, o, d).

    Args:
        model: a model of :mod:`theory.sim.models`; X: inputs (N, d) or (E, N, d).

    >>> import torch
    >>> from theory.sim.models import DeepMLP
    >>> net = DeepMLP.init(2, [4, 6, 1], act="linear", generator=torch.Generator().manual_seed(0), device="cpu")
    >>> J = input_jacobian(net, torch.ones(3, 4, dtype=torch.float64))
    >>> tuple(J.shape), bool(torch.allclose(J[:, 0, 0], (net.weights[1] @ net.weights[0])[:, 0]))
    ((2, 3, 1, 4), True)
    """
    from .models import DeepMLP, TwoClassNet, TwoLayerNet

    if isinstance(model, TwoLayerNet):
        D = model.act.slope(model.hidden(X))  # (E, N, m)
        return (D * model.a.unsqueeze(1)) @ model.W
    if isinstance(model, TwoClassNet):
        D = model.act.slope(model.preact(X))  # (E, 2, m, N)
        m = model.W.shape[2]
        J = D.transpose(-1, -2) @ model.W / m  # (E, 2, N, d)
        return J[:, 0] - J[:, 1]
    if isinstance(model, DeepMLP):
        Z, _ = model.layers(X)
        mult = model.multipliers or [1.0] * model.depth
        J = (model.weights[0] * mult[0]).unsqueeze(1)  # (E, 1, d1, d)
        for l in range(1, model.depth):
            J = model.act.slope(Z[l - 1]).unsqueeze(-1) * J  # (E, N, d_l, d)
            J = (model.weights[l] * mult[l]).unsqueeze(1) @ J
        return model.alpha * J.expand(-1, Z[0].shape[1], -1, -1)
    raise ValueError(f"input_jacobian supports TwoLayerNet, TwoClassNet, DeepMLP, not {type(model).__name__}")
