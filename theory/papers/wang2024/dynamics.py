"""GD dynamics of the co-correlation (Wang et al. Lemma B.1 Eq. 16–17, Thm 5.3 Eqs. 18–19 / (58)–(83),
Lemma C.1 Eq. 20 / (84)–(90), Thm 5.5 and Eq. 21).

Time convention: W(k+1) = W(k) + η·Ẇ with Ẇ = a x̃ᵀ (linear) — "˙" is d/dτ, τ = ηk — and C is *defined*
by ϱ̇ = ηCϱ, i.e. C = (d ln ϱ/dτ)/η. Everything is batched over an ensemble axis E.
"""
from __future__ import annotations

import torch

from theory.errors import DivergenceError
from theory.sim.ntk import row_angles


def error_weights(u: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """e_i = (y_i − sig(u_i))/n, so that x̃ = Xᵀe (Eq. 17). u (E, n) → (E, n)."""
    return (y - torch.sigmoid(u)) / u.shape[-1]


def linear_increment(W, a, X, y):
    """Lemma B.1: Ẇ = a x̃ᵀ with x̃ = (1/n)Σ(y_i − sig(u_i))x_i (Eq. 16–17). Returns (Ẇ, x̃)."""
    u = X @ (a.unsqueeze(-1) * W).sum(-2).unsqueeze(-1)  # (E, n, 1)
    xt = error_weights(u.squeeze(-1), y) @ X  # (E, d)
    return a.unsqueeze(-1) * xt.unsqueeze(-2), xt


def relu_increment(W, a, X, y, act):
    """Lemma C.1 (main-text definition, no extra a_r): Δw_r = a_r x̃_r, x̃_r = (1/n)Σ(y_i−sig(u_i))σ'(w_rᵀx_i)x_i."""
    Z = X @ W.transpose(-1, -2)  # (E, n, m)
    u = (act(Z) * a.unsqueeze(1)).sum(-1)
    e = error_weights(u, y)  # (E, n)
    S = act.slope(Z) * e.unsqueeze(-1)  # (E, n, m)
    xr = S.transpose(-1, -2) @ X  # (E, m, d): rows x̃_r
    return a.unsqueeze(-1) * xr, xr


def top_pair(W):
    """σ₁², top left-singular vector v (E, m) and right u of W (E, m, d), via the d×d Gram."""
    ev, V = torch.linalg.eigh(W.transpose(-1, -2) @ W)
    Q, u = ev[..., -1], V[..., -1]
    v = (W @ u.unsqueeze(-1)).squeeze(-1) / Q.clamp_min(1e-300).sqrt().unsqueeze(-1)
    return Q, v, u, ev


def linear_rates(W, a, xt):
    """Thm 5.3 exact first-order quantities at W: N, Q, Ṅ = 2aᵀWx̃, Q̇ = 2(aᵀv)(vᵀWx̃), d ln ϱ/dτ, gap ratio."""
    w = (a.unsqueeze(-1) * W).sum(-2)
    N = w.pow(2).sum(-1)
    Q, v, _, ev = top_pair(W)
    av = (a * v).sum(-1)
    Wx = (W @ xt.unsqueeze(-1)).squeeze(-1)
    Nd = 2 * (w * xt).sum(-1)
    Qd = 2 * av * (v * Wx).sum(-1)
    return dict(N=N, Q=Q, Nd=Nd, Qd=Qd, av=av, v=v, dlog=0.5 * (Nd / N - Qd / Q),
                gap=ev[..., -2] / ev[..., -1])


def linear_varrho_at(W, a):
    w = (a.unsqueeze(-1) * W).sum(-2)
    return w.norm(dim=-1) / (a.norm(dim=-1) * torch.linalg.matrix_norm(W, ord=2))


def run_linear(W0, a, X, y, *, eta: float, steps: int, every: int = 1):
    """Full-batch GD on the linear model with the Thm 5.3 bookkeeping at every ``every``-th step.

    Returns a dict of (T, E) tensors: k, varrho, C_true = dlog/η, M = S_k(1−(aᵀv)²)/Q, R2 = ②/(ηQ),
    half_gap = ½(Ṅ−Q̇), main = ηS_k(1−(aᵀv)²), rem = (a−(aᵀv)v)ᵀW(0)x̃, Nd, S_k, xt2 = ‖x̃(k)‖²,
    aW0x = aᵀW(0)x̃(k), av = aᵀv (the last three for wrong-version companions), plus W(T).
    S_k = Σ_{τ<k} x̃(τ)ᵀx̃(k) accumulates from W(k) = W(0) + η a Σ_{τ<k} x̃(τ)ᵀ (Lemma B.1).
    """
    W = W0.clone()
    acc = torch.zeros_like(X[:1, :]).expand(W.shape[0], -1).clone()  # Σ_{τ<k} x̃(τ)
    out = {k: [] for k in ("k", "varrho", "C_true", "M", "R2", "half_gap", "main", "rem", "Nd", "S", "gap", "xt2", "aW0x",
                           "av")}
    for k in range(steps + 1):
        dW, xt = linear_increment(W, a, X, y)
        if k % every == 0 or k == steps:
            r = linear_rates(W, a, xt)
            S = (acc * xt).sum(-1)
            main = eta * S * (1 - r["av"] ** 2)
            proj = a - r["av"].unsqueeze(-1) * r["v"]
            rem = (proj * (W0 @ xt.unsqueeze(-1)).squeeze(-1)).sum(-1)
            vals = dict(k=torch.full_like(S, k), varrho=(r["N"] / r["Q"]).sqrt(), C_true=r["dlog"] / eta,
                        M=S * (1 - r["av"] ** 2) / r["Q"], R2=rem / (eta * r["Q"]), half_gap=0.5 * (r["Nd"] - r["Qd"]),
                        main=main, rem=rem, Nd=r["Nd"], S=S, gap=r["gap"], xt2=xt.pow(2).sum(-1),
                        aW0x=(a * (W0 @ xt.unsqueeze(-1)).squeeze(-1)).sum(-1), av=r["av"])
            for key, v in vals.items():
                out[key].append(v)
        if k == steps:
            break
        W = W + eta * dW
        acc = acc + xt
        if not bool(torch.isfinite(W).all()):
            raise DivergenceError(f"linear GD diverged at step {k}")
    res = {k: torch.stack(v) for k, v in out.items()}
    res["W"] = W
    return res


def fd_log_rate(varrho_fn, W, dW, h: float):
    """One-sided finite difference of ln ϱ along Ẇ: (ϱ(W + hẆ) − ϱ(W))/(h ϱ(W))."""
    r0 = varrho_fn(W)
    return (varrho_fn(W + h * dW) - r0) / (h * r0)


def jvp_log_rate(varrho_fn, W, dW):
    """Exact directional derivative d ln ϱ(W + tẆ)/dt at t=0 (activation patterns locally fixed a.e.)."""
    r0, dr = torch.func.jvp(varrho_fn, (W,), (dW,))
    return dr / r0


def relu_alpha_rows(W, Xe, X, act):
    """Row-average estimate of α_i(t, x) (Eq. 21/110): (1/m)Σ_r σ'(w_rᵀx)σ'(w_rᵀx_i): (E, N_eval, n)."""
    De = act.slope(Xe @ W.transpose(-1, -2))  # (E, Ne, m)
    Dx = act.slope(X @ W.transpose(-1, -2))  # (E, n, m)
    return De @ Dx.transpose(-1, -2) / W.shape[-2]


def alpha_closed_form(x: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """ReLU at t=0 (Gaussian rows): α_i(0, x) = (π − θ(x, x_i))/(2π) (σ'(0) on a null set)."""
    return (torch.pi - row_angles(X, x.reshape(1, -1)).squeeze(-1)) / (2 * torch.pi)


def relu_rates(W, a, dW, Xe, act):
    """Thm 5.5 proof, Eqs. (102)–(105) and the two displays after them, with D frozen (Ḋ = 0):

    N(x) = ‖aᵀD(x)W‖², Q(x) = ‖D(x)W‖₂², ϱ² = E_x N / E_x Q (‖a‖ = 1), and along Ẇ = ``dW``
      Ṅ(x) = aᵀ(DẆWᵀD + DWẆᵀD)a = 2 (WᵀDa)ᵀ(ẆᵀDa),
      Q̇(x) = vᵀ(DẆWᵀD + DWẆᵀD)v = 2 (WᵀDv)ᵀ(ẆᵀDv),
    where the derivative of λ_max(DWWᵀD) needs v = v(x), the top eigenvector of D(x)WWᵀD(x) (x-dependent);
    the theorem states v(t) = top eigenvector of W(t)W(t)ᵀ instead (``Qd_WWt``). Returns (E,) tensors:
    N, Q (x-means), Nd, Qd, Qd_WWt (x-means) and dlog = ½(Ṅ/N − Q̇/Q) = d ln ϱ/dτ, dlog_WWt (printed v).
    W (E, m, d), a (E, m), dW (E, m, d), Xe (Ne, d).
    """
    D = act.slope(Xe @ W.transpose(-1, -2))  # (E, Ne, m)
    Da = D * a.unsqueeze(1)  # (E, Ne, m)
    g, gd = Da @ W, Da @ dW  # WᵀDa, ẆᵀDa: (E, Ne, d)
    N, Nd = g.pow(2).sum(-1), 2 * (g * gd).sum(-1)
    G = torch.einsum("enm,emd,emk->endk", D, W, W)  # WᵀDW (d×d per x): top eigenpair gives ‖DW‖₂², u(x)
    ev, U = torch.linalg.eigh(G)
    Q, u = ev[..., -1], U[..., -1]  # (E, Ne), (E, Ne, d)
    DWu = D * (W.unsqueeze(1) @ u.unsqueeze(-1)).squeeze(-1)  # D W u = σ₁ v(x): (E, Ne, m)
    v = DWu / Q.clamp_min(1e-300).sqrt().unsqueeze(-1)
    Dv = D * v  # = v (D is a 0/1 diagonal)
    Qd = 2 * ((Dv @ W) * (Dv @ dW)).sum(-1)
    _, vg, _, _ = top_pair(W)  # top eigenvector of WWᵀ (x-independent), as printed in Thm 5.5
    Dvg = D * vg.unsqueeze(1)
    Qd_g = 2 * ((Dvg @ W) * (Dvg @ dW)).sum(-1)
    Nm, Qm = N.mean(-1), Q.mean(-1)
    out = dict(N=Nm, Q=Qm, Nd=Nd.mean(-1), Qd=Qd.mean(-1), Qd_WWt=Qd_g.mean(-1))
    out["dlog"] = 0.5 * (out["Nd"] / Nm - out["Qd"] / Qm)
    out["dlog_WWt"] = 0.5 * (out["Nd"] / Nm - out["Qd_WWt"] / Qm)
    return out
