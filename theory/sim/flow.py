"""Gradient flow θ̇ = −∇J(θ) by scipy's adaptive integrators, with a budget that stops it.

Suits objectives that are smooth along the path: smooth activations (``tanh``, ``softplus``, ``linear``),
quadratics, and piecewise-linear (ReLU) networks whose path stays inside one activation pattern (no
pre-activation crosses zero, e.g. Bantzis et al.'s interior escape directions). An adaptive high-order
integrator (DOP853 by default) shrinks its step wherever the right-hand side jumps: a ReLU or leaky-ReLU
kink crossed during the flow, and above all a flow that slides along a kink (the gradient on both sides
points at it), where the steps shrink to the tolerance and the run never ends. The budget
(``max_evals`` right-hand-side evaluations, and/or ``max_seconds``) turns that into a
:class:`FlowBudgetError` that names the likely cause. For such networks use
:func:`theory.sim.extrapolate.gd_limit` (GD at η, η/2, η/4, … extrapolated to η → 0, with an error
estimate) or :func:`theory.sim.heun.heun_flow` (fixed step; check convergence in dt).
"""
from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np
import torch

from ..errors import DivergenceError

# default budget: the smooth flows of the checks need ≤ 10³ evaluations (Bantzis escape flows: at most 992); a flow
# sliding along a ReLU kink spends it in 5–40 s (0.3–2 ms an evaluation of a small net on one CPU core)
MAX_EVALS = 20_000


class FlowBudgetError(RuntimeError):
    """:func:`gradient_flow` spent its budget (evaluations or seconds) before the end of ``t_eval``; the message
    names the likely cause. A RuntimeError (not a DivergenceError: nothing diverged).

    >>> issubclass(FlowBudgetError, RuntimeError)
    True
    """


class _OutOfBudget(Exception):
    """Raised inside the right-hand side to leave scipy's integrator (turned into FlowBudgetError)."""


def _budget_message(evals: int, seconds: float, t_reached: float, t0: float, t1: float, why: str) -> str:
    done = 100.0 * (t_reached - t0) / (t1 - t0) if t1 > t0 else 100.0
    return (f"gradient_flow stopped: {why} ({evals} evaluations of the gradient in {seconds:.1f} s) at "
            f"t = {t_reached:.6g} of [{t0:.6g}, {t1:.6g}] ({done:.2f}% of the interval). The adaptive integrator "
            f"shrinks its steps where the gradient is not smooth: most likely a non-smooth activation (ReLU or leaky "
            f"ReLU at its kinks: the flow crosses or slides along a kink) or a non-smooth loss. Use "
            f"theory.sim.extrapolate.gd_limit (GD extrapolated to lr -> 0, with an error estimate) or "
            f"theory.sim.heun.heun_flow (fixed step) for such models. A smooth but stiff objective can also do this "
            f"(try method='LSODA' or 'Radau'); raise max_evals / max_seconds only for a smooth objective that needs more.")


def gradient_flow(objective: Callable[[list], torch.Tensor], params: Sequence[torch.Tensor], t_eval,
                  *, method: str = "DOP853", rtol: float = 1e-11, atol: float = 1e-12,
                  max_norm: float | None = None, max_evals: int | None = MAX_EVALS,
                  max_seconds: float | None = None):
    """Integrate θ̇ = −∇J(θ), J = ``objective(params)`` (summed if it has an ensemble axis), in float64.

    Args:
        objective: ``objective(params) -> tensor``: the loss, one value per ensemble member (E,) or a scalar;
            the members are independent, so the gradient of the sum is each member's own gradient.
        params: the initial parameters (a list of tensors; not modified).
        t_eval: increasing times at which the solution is returned (the first is the start time).
        method, rtol, atol: scipy.integrate.solve_ivp's integrator and tolerances.
        max_norm: stop when ‖θ‖ (all parameters together) reaches it (a finite-time blow-up).
        max_evals: budget of gradient evaluations (None: no limit; default :data:`MAX_EVALS`).
        max_seconds: budget of wall-clock seconds (None: no limit).

    Returns ``(t, [param trajectories with a leading time axis], scipy result)``; ``result.nfev`` counts the
    evaluations. Raises :class:`FlowBudgetError` when the budget runs out first (most likely a non-smooth
    activation: see the module docstring for the models it suits) and :class:`theory.DivergenceError` on a
    non-finite gradient or an integrator failure.

    Example (θ̇ = −θ from θ(0) = 1, so θ(1) = e⁻¹):

    >>> import math, torch
    >>> t, (theta,), sol = gradient_flow(lambda ps: 0.5 * (ps[0] ** 2).sum(-1),
    ...                                  [torch.ones(1, 1, dtype=torch.float64)], [0.0, 1.0])
    >>> abs(float(theta[-1, 0, 0]) - math.exp(-1)) < 1e-10
    True

    A ReLU objective that slides along its kink (J ≈ 1 + |θ| near θ = 0, reached at t = log 2) runs out of budget:

    >>> relu = torch.relu
    >>> J = lambda ps: 0.5 * ((relu(ps[0]) + 1) ** 2 + (relu(-ps[0]) + 1) ** 2).sum((-1, -2))
    >>> gradient_flow(J, [torch.ones(1, 1, dtype=torch.float64)], [0.0, 2.0], max_evals=2000)
    Traceback (most recent call last):
    ...
    theory.sim.flow.FlowBudgetError: gradient_flow stopped: budget of 2000 evaluations spent ...
    """
    from scipy.integrate import solve_ivp

    if max_evals is not None and (not isinstance(max_evals, int) or max_evals < 1):
        raise ValueError(f"max_evals must be a positive integer or None, got {max_evals!r}")
    if max_seconds is not None and not max_seconds > 0:
        raise ValueError(f"max_seconds must be positive or None, got {max_seconds!r}")
    t_eval = np.asarray(t_eval, dtype=float)
    if t_eval.ndim != 1 or t_eval.size < 2 or not np.all(np.diff(t_eval) > 0):
        raise ValueError("t_eval must hold at least two increasing times")
    shapes = [p.shape for p in params]
    sizes = [p.numel() for p in params]
    dtype, dev = params[0].dtype, params[0].device
    t0, t1 = float(t_eval[0]), float(t_eval[-1])
    state = {"evals": 0, "t": t0, "start": time.perf_counter(), "why": ""}

    def unflat(v):
        ts = torch.as_tensor(v, dtype=dtype, device=dev).split(sizes)
        return [t.reshape(s).requires_grad_(True) for t, s in zip(ts, shapes)]

    def rhs(t, v):
        state["evals"] += 1
        state["t"] = max(state["t"], float(t))
        if max_evals is not None and state["evals"] > max_evals:
            state["why"] = f"budget of {max_evals} evaluations spent"
            raise _OutOfBudget
        if max_seconds is not None and time.perf_counter() - state["start"] > max_seconds:
            state["why"] = f"budget of {max_seconds:g} s spent"
            raise _OutOfBudget
        ps = unflat(v)
        J = objective(ps).sum()
        gs = torch.autograd.grad(J, ps)
        out = -torch.cat([g.reshape(-1) for g in gs]).detach().cpu().numpy()
        if not np.all(np.isfinite(out)):
            raise DivergenceError("gradient flow right-hand side is not finite")
        return out

    events = None
    if max_norm is not None:
        def hit(_, v):
            return float(np.linalg.norm(v) - max_norm)
        hit.terminal = True
        events = [hit]
    v0 = torch.cat([p.detach().reshape(-1) for p in params]).cpu().numpy()
    try:
        sol = solve_ivp(rhs, (t0, t1), v0, method=method, t_eval=t_eval, rtol=rtol, atol=atol, events=events)
    except _OutOfBudget:
        raise FlowBudgetError(_budget_message(state["evals"] - 1, time.perf_counter() - state["start"],
                                              state["t"], t0, t1, state["why"])) from None
    if sol.status == -1:
        raise DivergenceError(f"gradient flow integration failed: {sol.message}")
    traj = [torch.as_tensor(sol.y[o:o + s].T, dtype=dtype, device=dev).reshape(-1, *sh)
            for o, s, sh in zip(np.cumsum([0] + sizes[:-1]), sizes, shapes)]
    return sol.t, traj, sol
