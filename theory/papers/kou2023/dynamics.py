"""Kou et al. (2023) coefficient dynamics: the decomposition, its recursion, and the balance /
pattern quantities the lemmas of §5 and Appendices A–E are about.

All functions take tensors with an ensemble axis E and the class axis (index 0: j=+1) in the
layout of :mod:`theory.papers.kou2023.setup`: ρ, Z of shape (..., 2, m, n).

- :func:`recover_coefficients` / :func:`reconstruct_weights` — Def. 5.1 (eq. (5.1)); unique for
  linearly independent data.
- :func:`recursion_step` — Lemma 5.2 (eqs. (5.3)–(5.5)) written as the paper prints it, with the
  ρ̄ / ρ̲ split and the indicators 1[y_i = ±j].
- :func:`balance_sum_ratio` — Lemma 5.4/B.1 (B.8); :func:`neuron_ratio` — Lemma B.4;
  :func:`relu_balance_ratio` — Lemma 5.5/E.1(1); :func:`gamma_sandwich` — the exact per-sample
  bracket behind B.2–B.4; :func:`neuron_spread` — Lemma C.1.
"""
from __future__ import annotations

import torch

from ...sim.trajectory import RowBuffer


def _check_independent(X: torch.Tensor) -> None:
    n, d = X.shape
    if n > d:
        raise ValueError(f"n={n} > d={d}: the data are linearly dependent, so the coefficients of "
                         "Def. 5.1 are not unique")
    s = torch.linalg.svdvals(X)
    if not bool(s.min() > s.max() * max(n, d) * torch.finfo(X.dtype).eps):
        raise ValueError("the data are (numerically) linearly dependent: Def. 5.1 coefficients are not unique")


def _batched(X: torch.Tensor) -> torch.Tensor:
    """X as (n, d) (shared) or (E, n, d) → broadcastable against (E, 2, m, ·)."""
    if X.dim() == 2:
        return X
    if X.dim() == 3:
        return X.unsqueeze(1)
    raise ValueError(f"X must be (n, d) or (E, n, d), got {tuple(X.shape)}")


def recover_coefficients(W: torch.Tensor, W0: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """ρ = (W − W0) Xᵀ G⁻¹ diag(G), shape (E, 2, m, n) (Def. 5.1); X (n, d) or (E, n, d).

    ValueError when the data are linearly dependent (the coefficients are then not unique).
    """
    for Xe in (X if X.dim() == 3 else X.unsqueeze(0)):
        _check_independent(Xe)
    Xb = _batched(X)
    G = Xb @ Xb.transpose(-1, -2)
    B = torch.linalg.solve(G, Xb @ (W - W0).transpose(-1, -2)).transpose(-1, -2)  # (W−W0) Xᵀ G⁻¹
    return B * G.diagonal(dim1=-2, dim2=-1).unsqueeze(-2)


def reconstruct_weights(W0: torch.Tensor, rho: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """W0 + Σ_i ρ_{j,r,i} ‖x_i‖⁻² x_i (eq. (5.1)); X (n, d) or (E, n, d)."""
    Xb = _batched(X)
    return W0 + (rho / (Xb * Xb).sum(-1).unsqueeze(-2)) @ Xb


def split(rho: torch.Tensor):
    """(ρ̄, ρ̲) = (ρ·1[ρ ≥ 0], ρ·1[ρ ≤ 0]) (Def. 5.1, eq. (5.2))."""
    return rho.clamp_min(0), rho.clamp_max(0)


def recursion_step(rho_bar: torch.Tensor, rho_under: torch.Tensor, slope: torch.Tensor, dl: torch.Tensor,
                   y: torch.Tensor, norms2: torch.Tensor, eta, n: int, m: int):
    """One step of Lemma 5.2, eqs. (5.4)–(5.5), as printed:

    ρ̄⁺ = ρ̄ − η/(nm)·ℓ'_i·σ'(⟨w_{j,r},x_i⟩)·‖x_i‖²·1[y_i = j],
    ρ̲⁺ = ρ̲ + η/(nm)·ℓ'_i·σ'(⟨w_{j,r},x_i⟩)·‖x_i‖²·1[y_i = −j].

    ``slope`` = σ'(Z) (..., 2, m, n); ``dl`` = ℓ'_i (..., n); ``eta`` scalar or (E,) broadcastable.
    """
    jsign = torch.tensor([1.0, -1.0], dtype=rho_bar.dtype, device=rho_bar.device).view(2, 1, 1)
    own = (y.view(1, 1, -1) == jsign).to(rho_bar.dtype)  # 1[y_i = j]
    opp = (y.view(1, 1, -1) == -jsign).to(rho_bar.dtype)  # 1[y_i = −j]
    eta = torch.as_tensor(eta, dtype=rho_bar.dtype, device=rho_bar.device)
    eta = eta.view(*eta.shape, *([1] * 3)) if eta.dim() else eta
    inc = eta / (n * m) * dl.unsqueeze(-2).unsqueeze(-2) * slope * norms2
    return rho_bar - inc * own, rho_under + inc * opp


def balance_sum_ratio(rho: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Lemma 5.4 / B.1: min_i Σ_r ρ̄_{y_i,r,i} / max_{j,i'} Σ_r |ρ_{j,r,i'}|, shape (...)."""
    own = torch.where(y > 0, rho[..., 0, :, :], rho[..., 1, :, :]).clamp_min(0).sum(-2)  # (..., n)
    tot = rho.abs().sum(-2)  # (..., 2, n)
    return own.min(-1).values / tot.flatten(-2).max(-1).values


def neuron_ratio(rho: torch.Tensor) -> torch.Tensor:
    """Lemma B.4 (ii): κ = min_{j,r,i}|ρ_{j,r,i}| / max_{j',r',i'}|ρ_{j',r',i'}|, shape (...)."""
    a = rho.abs().flatten(-3)
    return a.min(-1).values / a.max(-1).values


def b4_sum_form(rho: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Lemma B.4 (i), first inequality, as a ratio: min_{j,r,i} m|ρ_{j,r,i}| / Σ_r ρ̄_{y_i,r,i} (≥ γ)."""
    m = rho.shape[-2]
    own = torch.where(y > 0, rho[..., 0, :, :], rho[..., 1, :, :]).clamp_min(0).sum(-2)  # (..., n)
    return (m * rho.abs().min(-2).values / own.unsqueeze(-2)).flatten(-2).min(-1).values


def relu_balance_ratio(rho: torch.Tensor, y: torch.Tensor, S0: torch.Tensor) -> torch.Tensor:
    """Lemma 5.5: min_i min_{r∈S_i^(0)} ρ̄_{y_i,r,i} / max_{j,r',i'}|ρ_{j,r',i'}|; S0 (E, m, n)."""
    own = torch.where(y > 0, rho[..., 0, :, :], rho[..., 1, :, :])  # (..., m, n)
    big = torch.finfo(rho.dtype).max
    num = torch.where(S0, own, torch.full_like(own, big)).flatten(-2).min(-1).values
    return num / rho.abs().flatten(-3).max(-1).values


def own_coeffs(rho: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """ρ_{y_i,r,i} (..., m, n)."""
    return torch.where(y > 0, rho[..., 0, :, :], rho[..., 1, :, :])


def gamma_sandwich(rho: torch.Tensor, S_acc: torch.Tensor, norms2: torch.Tensor, eta, n: int, m: int,
                   gamma: float):
    """Exact bracket γ S_i(t) ≤ |ρ_{j,r,i}(t)| ≤ S_i(t), S_i(t) = η‖x_i‖²/(nm) Σ_{s<t}|ℓ'_i(s)|.

    Returns (lower slack, upper slack) = (min (|ρ| − γS)/S, min (S − |ρ|)/S) over valid entries
    (S > 0), shape (...). Both must be ≥ −(rounding).
    """
    eta = torch.as_tensor(eta, dtype=rho.dtype, device=rho.device).view(-1, 1)
    S = eta * norms2 * S_acc / (n * m)  # (..., E, n)
    S = S.unsqueeze(-2).unsqueeze(-2)
    a = rho.abs()
    safe = torch.where(S > 0, S, torch.ones_like(S))
    lo = torch.where(S > 0, (a - gamma * S) / safe, torch.zeros_like(a)).flatten(-3).min(-1).values
    hi = torch.where(S > 0, (S - a) / safe, torch.zeros_like(a)).flatten(-3).min(-1).values
    return lo, hi


def neuron_spread(rho: torch.Tensor) -> torch.Tensor:
    """Lemma C.1: max_{r,r'}|ρ_{j,r,i} − ρ_{j,r',i}| per (j, i), shape (..., 2, n)."""
    return rho.max(-2).values - rho.min(-2).values


class RunningMin:
    """Running minimum over steps of a per-member statistic (E,), with the step where it occurred."""

    def __init__(self, E: int, dtype, device):
        self.value = torch.full((E,), float("inf"), dtype=dtype, device=device)
        self.step = torch.full((E,), -1, dtype=torch.long, device=device)

    def update(self, t: int, v: torch.Tensor) -> None:
        better = v < self.value
        self.value = torch.where(better, v, self.value)
        self.step = torch.where(better, torch.full_like(self.step, t), self.step)


class StepBounds:
    """``every_step`` hook for :func:`theory.papers.kou2023.setup.simulate`: evaluates at *every*
    step t ≥ 1 the explicit forms of Lemma C.1 and Lemma B.2 (both hold for any data):

    - C.1: max_{r,r'}|ρ_{j,r,i} − ρ_{j,r',i}| ≤ (1−γ) S_i(t), S_i(t) = η‖x_i‖²/(nm) Σ_{s<t}|ℓ'_i(s)|;
      ``c1_ratio`` (E,) is the max over t, j, i of the left side over the right side (≤ 1).
    - B.2: min|ρ|/max|ρ| ≥ γ R_min²/R_max² · min_{s<t,i}|ℓ'_i(s)|; ``b2_ratio`` (E,) is the min over
      t of left/right (≥ 1), ``b2_ratio_until(T)`` the same restricted to t ≤ T (kept per step).

    With ``y`` given it also keeps, over every step t ≥ 1, the running minima (value and step, per member)
    of the balance ratios — the whole-trajectory figures of Lemmas 5.4/B.1 and B.4 (leaky: ``bal_sum`` of
    :func:`balance_sum_ratio`, ``bal_neuron`` = κ of :func:`neuron_ratio`) or, with ``S0`` (ReLU), of Lemma 5.5
    (``bal_relu`` of :func:`relu_balance_ratio`).
    """

    def __init__(self, norms2: torch.Tensor, eta: torch.Tensor, n: int, m: int, gamma: float,
                 R_min: float, R_max: float, *, y: torch.Tensor | None = None, S0: torch.Tensor | None = None):
        E = eta.shape[0]
        self.k = (eta.view(E, 1) * norms2 / (n * m))
        self.g, self.rr = gamma, R_min ** 2 / R_max ** 2
        self.acc = torch.zeros(E, n, dtype=norms2.dtype, device=norms2.device)
        self.min_dl = torch.full((E,), float("inf"), dtype=norms2.dtype, device=norms2.device)
        self.c1_ratio = torch.zeros(E, dtype=norms2.dtype, device=norms2.device)
        self._b2 = RowBuffer()  # per-step B.2 ratios (steps, E): no allocation per step (see RowBuffer)
        self.y, self.S0 = y, S0
        mk = lambda: RunningMin(E, norms2.dtype, norms2.device)  # noqa: E731
        self.bal_sum, self.bal_neuron, self.bal_relu = mk(), mk(), mk()

    def __call__(self, t, rho, Z, dl):
        if t >= 1:
            S = (self.k * self.acc).unsqueeze(1)  # (E, 1, n)
            spread = neuron_spread(rho)  # (E, 2, n)
            self.c1_ratio = torch.maximum(self.c1_ratio, (spread / ((1 - self.g) * S)).flatten(1).max(1).values)
            if self.g > 0:
                a = rho.abs().flatten(1)
                lhs = a.min(1).values / a.max(1).values
                self._b2.append(lhs / (self.g * self.rr * self.min_dl))
            if self.y is not None and self.S0 is None:
                self.bal_sum.update(t, balance_sum_ratio(rho, self.y))
                self.bal_neuron.update(t, neuron_ratio(rho))
            elif self.y is not None:
                self.bal_relu.update(t, relu_balance_ratio(rho, self.y, self.S0))
        self.acc += dl.abs()
        self.min_dl = torch.minimum(self.min_dl, dl.abs().min(1).values)

    def b2_ratio_until(self, T=None) -> torch.Tensor:
        if self._b2.n == 0:
            raise ValueError("no B.2 ratio was evaluated (needs γ > 0 and a step t ≥ 1)")
        tr = self._b2.tensor()  # (steps, E), row k is t = k+1
        return (tr if T is None else tr[:T]).min(0).values

    def finish(self):
        return self


def e24_sides(rho: torch.Tensor, Z0: torch.Tensor, G: torch.Tensor, norms2: torch.Tensor, y: torch.Tensor,
              eta: torch.Tensor, n: int, m: int):
    """The derived constant-free form of (E.24) (catalog lem-E.2), on off-class entries j = −y_{i'}:

    |ρ_{j,r,i'}| ≤ [⟨w_{j,r}(0), x_{i'}⟩]_+ + η‖x_{i'}‖²/(nm) + Σ_{k≠i'} |ρ_{j,r,k}||⟨x_k, x_{i'}⟩|/‖x_k‖².

    ``rho`` (..., E, 2, m, n), ``Z0`` (E, 2, m, n), ``eta`` (E,). Returns (lhs, rhs, rhs without the
    η‖x‖²/(nm) step term, off-class mask broadcastable to lhs)."""
    jy = torch.stack([y, -y])  # (2, n)
    off = (jy < 0).view(2, 1, -1)
    Gabs = (G.abs() / norms2.view(-1, 1)).clone()
    Gabs.fill_diagonal_(0)  # Σ_{k≠i'} |ρ_k||G_{k i'}|/‖x_k‖²
    base = Z0.clamp_min(0) + rho.abs() @ Gabs
    step = eta.view(-1, 1, 1, 1) * norms2 / (n * m)
    return rho.abs(), base + step, base, off


class OffclassE24:
    """``every_step`` hook: the sharpened (E.24) (:func:`e24_sides`) at *every* step t ≥ 1, and its wrong
    version without the η‖x‖²/(nm) term. ``viol`` / ``viol_wrong`` (E,): counts of (step, j, r, i') with
    lhs > rhs + tol, tol = ``rtol``·max|ρ| (the right side is a sum of ≤ n rounded terms)."""

    def __init__(self, Z0, G, norms2, y, eta, n, m, rtol: float = 1e-12):
        self.args = (Z0, G, norms2, y, eta, n, m)
        self.rtol = rtol
        E = Z0.shape[0]
        self.viol = torch.zeros(E, dtype=torch.long, device=Z0.device)
        self.viol_wrong = torch.zeros(E, dtype=torch.long, device=Z0.device)
        self.max_ratio = torch.zeros(E, dtype=Z0.dtype, device=Z0.device)  # max over steps of lhs/rhs
        self.steps = 0

    def __call__(self, t, rho, Z, dl):
        if t < 1:
            return
        lhs, rhs, rhs_wrong, off = e24_sides(rho, *self.args)
        tol = self.rtol * lhs.flatten(1).max(1).values.view(-1, 1, 1, 1)
        offm = off.expand_as(lhs)
        self.viol += ((lhs > rhs + tol) & offm).flatten(1).sum(1)
        self.viol_wrong += ((lhs > rhs_wrong + tol) & offm).flatten(1).sum(1)
        r = torch.where(offm, lhs / rhs, torch.zeros_like(lhs)).flatten(1).max(1).values
        self.max_ratio = torch.maximum(self.max_ratio, r)
        self.steps += 1

    def finish(self):
        return self
