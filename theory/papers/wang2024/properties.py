"""Properties 1–2 of Wang et al. §5.1 (catalog `prop-1`, `prop-2`): trajectory-shape statistics of ϱ(τ),
the (F1) reduction of the linear model to logistic-regression GD on w = Wᵀa, its converged limit, and a
Spearman rank test with a permutation p-value.

(F1): w(k+1) = w(k) + η‖a‖²x̃(k) and W(k) = W(0) + a(w(k) − w(0))ᵀ exactly (Lemma B.1), so
ϱ(k) = ‖w(k)‖ / ‖W(0) + a(w(k) − w(0))ᵀ‖₂ needs only W(0)ᵀW(0) (d×d) and w(0). The GD step on w uses the
paper's own increment (:func:`theory.papers.wang2024.dynamics.error_weights`, Eq. 17).
"""
from __future__ import annotations

import numpy as np
import torch

from theory.errors import DivergenceError

from . import dynamics as dyn


def f1_varrho(G0: torch.Tensor, w0: torch.Tensor, a2: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """ϱ = ‖w‖/‖W(0) + a(w − w(0))ᵀ‖₂ from G0 = W(0)ᵀW(0) (E,d,d), w0 = W(0)ᵀa (E,d), a2 = ‖a‖² (E,), w (..., E, d).

    Gram: (W0 + aΔᵀ)ᵀ(W0 + aΔᵀ) = G0 + w0Δᵀ + Δw0ᵀ + ‖a‖²ΔΔᵀ, Δ = w − w0.
    """
    D = w - w0
    G = G0 + w0.unsqueeze(-1) * D.unsqueeze(-2) + D.unsqueeze(-1) * w0.unsqueeze(-2) \
        + a2.unsqueeze(-1).unsqueeze(-1) * D.unsqueeze(-1) * D.unsqueeze(-2)
    top = torch.linalg.eigvalsh(G)[..., -1].clamp_min(0).sqrt()
    return w.norm(dim=-1) / top


def f1_state(W0: torch.Tensor, a: torch.Tensor):
    """(G0 = W(0)ᵀW(0) (E,d,d), w0 = W(0)ᵀa (E,d), ‖a‖² (E,)): all (F1) needs; cells of different widths m
    can be concatenated along E."""
    return W0.transpose(-1, -2) @ W0, (a.unsqueeze(-1) * W0).sum(-2), a.pow(2).sum(-1)


def f1_trajectory(state, X: torch.Tensor, y: torch.Tensor, *, eta: float, record: list[int]):
    """Linear-model GD through (F1): returns (steps, ϱ (T, E), w (T, E, d)) at the ``record`` steps.

    ``state`` from :func:`f1_state`. Exact replica of GD on W (checked against :func:`dynamics.run_linear`
    in `prop-1`); cost O(nd) per step, independent of m.
    """
    if not record or min(record) < 0:
        raise ValueError(f"record must be a non-empty list of steps ≥ 0, got {record!r}")
    G0, w0, a2 = state
    rec = sorted(set(int(k) for k in record))
    w = w0.clone()
    ws = []
    j = 0
    for k in range(rec[-1] + 1):
        if k == rec[j]:
            ws.append(w.clone())
            j += 1
            if j == len(rec):
                break
        u = w @ X.T  # (E, n)
        w = w + eta * a2.unsqueeze(-1) * (dyn.error_weights(u, y) @ X)
        if not bool(torch.isfinite(w).all()):
            raise DivergenceError(f"(F1) logistic GD diverged at step {k}")
    W = torch.stack(ws)
    return rec, f1_varrho(G0, w0, a2, W), W


def is_separable(X: torch.Tensor, y: torch.Tensor) -> bool:
    """Linear separability through the origin: is there w with s_i x_iᵀw ≥ 1 for all i (s = 2y − 1)? (LP feasibility)."""
    from scipy.optimize import linprog

    A = -((2 * y - 1).unsqueeze(-1) * X).cpu().numpy()
    res = linprog(np.zeros(X.shape[1]), A_ub=A, b_ub=-np.ones(X.shape[0]), bounds=[(None, None)] * X.shape[1],
                  method="highs")
    return res.status == 0


def logistic_optimum(X: torch.Tensor, y: torch.Tensor, *, iters: int = 100, gtol: float = 1e-13):
    """Minimiser w* of the mean BCE of sig(wᵀx) (damped Newton). Raises ValueError on linearly separable data
    (no finite minimiser: ‖w(k)‖ → ∞ under GD) or if Newton does not converge. Returns (w*, final gradient norm)."""
    if is_separable(X, y):
        raise ValueError("the data are linearly separable: logistic regression has no finite minimiser w*")
    n, d = X.shape
    w = torch.zeros(d, dtype=X.dtype, device=X.device)

    def loss(v):
        return torch.nn.functional.softplus(-(2 * y - 1) * (X @ v)).mean()

    for _ in range(iters):
        p = torch.sigmoid(X @ w)
        g = X.T @ (p - y) / n
        if float(g.norm()) < gtol:
            return w, float(g.norm())
        H = (X.T * (p * (1 - p))) @ X / n
        step = torch.linalg.solve(H, g)
        t, f0 = 1.0, loss(w)
        while loss(w - t * step) > f0 and t > 1e-8:
            t /= 2
        w = w - t * step
    g = X.T @ (torch.sigmoid(X @ w) - y) / n
    if float(g.norm()) >= 1e3 * gtol:
        raise ValueError(f"logistic regression did not converge (|grad| = {float(g.norm()):.2e}, |w| = "
                         f"{float(w.norm()):.2e})")
    return w, float(g.norm())


def shape_stats(varrho: torch.Tensor, eta: float, *, tau0: float = 0.5, late: float = 0.2) -> dict:
    """Property 1 shape statistics of per-step trajectories ϱ (T, E) (every GD step recorded).

    frac_up: fraction of steps k ≥ τ0/η with ϱ(k+1) ≥ ϱ(k); max_slope: max_k (ϱ(k+1)−ϱ(k))/η;
    late_slope: mean slope over the last ``late`` fraction of the steps; slope_ratio = late/max.
    """
    inc = (varrho[1:] - varrho[:-1]) / eta  # (T-1, E)
    k0 = int(round(tau0 / eta))
    if k0 >= inc.shape[0]:
        raise ValueError(f"trajectory of {inc.shape[0]} steps is shorter than τ0/η = {k0}")
    frac_up = (inc[k0:] >= 0).double().mean(0)
    max_slope = inc.max(0).values
    nl = max(1, int(late * inc.shape[0]))
    late_slope = inc[-nl:].mean(0)
    return dict(frac_up=frac_up, max_slope=max_slope, late_slope=late_slope, slope_ratio=late_slope / max_slope,
                argmax_tau=inc.argmax(0).double() * eta)


MOSTLY_UP = 0.25   # "(mostly) non-decreasing": downward variation during the rise ≤ this fraction of the rise
SATURATED = 0.1    # late mean slope ≤ this fraction of the max slope
DECLINE = 0.05     # post-peak decline ≤ this fraction of the rise
EARLY = 0.5        # 95 % of the rise reached within this fraction of the run ("during the initial stages")


def rise_shape(v: torch.Tensor, eta: float, *, tau0: float = 0.5, late: float = 0.2) -> dict:
    """Property 1 reading of one per-step trajectory ϱ(k) (T,): "develops during the initial stages of
    training and becomes saturated", the catalog's "(mostly) non-decreasing".

    The rise runs from τ0 to the first step where ϱ reaches 95 % of its total rise (peak − ϱ(0)). Within it,
    ``down`` = Σ of the decreases of ϱ ÷ rise (a variation, not a count of down-steps: ReLU pattern flips give
    a few small dips whose number carries no information). ``ok`` iff rise > 0, down ≤ MOSTLY_UP (at least
    four fifths of the variation during the rise is upward), 95 % of the rise is reached within the first
    EARLY fraction of the run, the late/max slope ratio ≤ SATURATED and the post-peak decline ≤ DECLINE of
    the rise."""
    v = torch.as_tensor(v, dtype=torch.float64).reshape(-1)
    k0 = int(round(tau0 / eta))
    if v.numel() < k0 + 3:
        raise ValueError(f"trajectory of {v.numel()} points is too short for τ0/η = {k0}")
    peak = float(v.max())
    rise = peak - float(v[0])
    k95 = int((v >= v[0] + 0.95 * rise).nonzero()[0]) if rise > 0 else k0
    inc = v[k0 + 1:k95 + 1] - v[k0:k95]
    down = float((-inc.clamp(max=0)).sum()) / rise if rise > 0 else float("inf")
    frac = float((inc >= 0).double().mean()) if inc.numel() else 1.0
    st = shape_stats(v.reshape(-1, 1), eta, tau0=tau0, late=late)
    ratio = float(st["slope_ratio"][0])
    decline = (peak - float(v[-1])) / rise if rise > 0 else float("inf")
    early = k95 / (v.numel() - 1)
    ok = rise > 0 and down <= MOSTLY_UP and early <= EARLY and abs(ratio) <= SATURATED and decline <= DECLINE
    return dict(ok=bool(ok), rise=rise, k95=k95, early=early, down=down, frac_up_rise=frac, slope_ratio=ratio, decline=decline,
                tau_peak=int(v.argmax()) * eta, frac_up_after_tau0=float(st["frac_up"][0]))
