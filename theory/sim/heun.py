"""Fixed-step Heun integration of batched gradient flow θ̇ = −∇J(θ).

Adaptive high-order integrators (:func:`theory.sim.train.gradient_flow`) crawl when the
right-hand side is discontinuous (ReLU kinks crossed during the flow: a step rejection at
every crossing). Heun's method (explicit trapezoid, order 2 on smooth pieces, order 1
across kinks) with a fixed ``dt`` does not; checks then test convergence in ``dt``
(halve it and compare) instead of trusting one step size.

The objective returns one value per ensemble member, shape (E,); members are
independent, so the gradient of the sum is each member's own gradient. A member can be
frozen once a condition holds (``freeze``), e.g. a norm cap for a flow that blows up in
finite time; frozen members stop moving and are reported.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch

from ..errors import DivergenceError


@dataclass
class HeunResult:
    """Final parameters, per-member freeze step (−1: never frozen) and observer outputs (``steps``: the observed
    steps; ``obs[key]``: one entry per observed step), returned by :func:`heun_flow`.

    >>> import torch
    >>> res = heun_flow(lambda ps: 0.5 * ps[0].pow(2).sum(-1), [torch.ones(2, 1, dtype=torch.float64)], dt=0.1,
    ...                 steps=10, observe=lambda t, ps: {"theta": ps[0][:, 0]}, every=5)
    >>> res.steps, tuple(res.stacked("theta").shape), res.frozen_at.tolist()
    ([0, 5, 10], (3, 2), [-1, -1])
    """

    params: list
    frozen_at: torch.Tensor
    steps: list = field(default_factory=list)
    obs: dict = field(default_factory=dict)

    def stacked(self, key: str) -> torch.Tensor:
        """The observed values of ``key`` stacked on a leading step axis: (len(steps), …)."""
        return torch.stack(self.obs[key])


def _grad(objective, ps):
    ps = [p.detach().requires_grad_(True) for p in ps]
    J = objective(ps)
    gs = torch.autograd.grad(J.sum(), ps)
    return [g.detach() for g in gs]


def heun_flow(objective: Callable[[list], torch.Tensor], params: Sequence[torch.Tensor], *, dt: float,
              steps: int, observe: Callable | None = None, every: int = 1,
              freeze: Callable[[list], torch.Tensor] | None = None) -> HeunResult:
    """Integrate θ̇ = −∇J(θ) for ``steps`` Heun steps of size ``dt`` (all members at once).

    Args:
        objective: ``objective(params) -> (E,)``, one loss per ensemble member.
        params: the initial parameters (copied, not modified), each with the ensemble axis first.
        dt: the step; steps: how many.
        observe: ``observe(step, params) -> dict`` is called at step 0 and every ``every`` steps (and at the
            last step); every: see ``observe``.
        freeze: ``freeze(params) -> (E,) bool`` stops a member for good once it returns True (checked before
            each step).

    Raises :class:`DivergenceError` if a non-frozen member becomes non-finite. For a ReLU network, halve ``dt`` and
    compare (order 1 across kinks), or use :func:`theory.sim.extrapolate.gd_limit`.

    θ̇ = −θ from θ = 1 to t = 1 (exactly e⁻¹), error O(dt²):

    >>> import math, torch
    >>> res = heun_flow(lambda ps: 0.5 * ps[0].pow(2).sum(-1), [torch.ones(1, 1, dtype=torch.float64)],
    ...                 dt=0.01, steps=100)
    >>> abs(res.params[0].item() - math.exp(-1)) < 1e-5
    True
    """
    if not (dt > 0) or not isinstance(steps, int) or steps < 0 or every < 1:
        raise ValueError(f"heun_flow needs dt > 0, integer steps >= 0, every >= 1 (got {dt}, {steps}, {every})")
    ps = [p.detach().clone() for p in params]
    E = ps[0].shape[0]
    frozen_at = torch.full((E,), -1, dtype=torch.long, device=ps[0].device)
    res = HeunResult(ps, frozen_at)

    def _obs(t):
        if observe is not None:
            res.steps.append(t)
            for k, v in observe(t, ps).items():
                res.obs.setdefault(k, []).append(v.detach().clone() if isinstance(v, torch.Tensor) else v)

    _obs(0)
    for t in range(1, steps + 1):
        if freeze is not None:
            fz = freeze(ps).to(torch.bool) & (frozen_at < 0)
            frozen_at[fz] = t - 1
        active = (frozen_at < 0)
        if not bool(active.any()):
            break
        g1 = _grad(objective, ps)
        pred = [p - dt * g for p, g in zip(ps, g1)]
        g2 = _grad(objective, pred)
        mask = active.to(ps[0].dtype)
        for p, a, b in zip(ps, g1, g2):
            p.sub_(0.5 * dt * (a + b) * mask.view(-1, *([1] * (p.dim() - 1))))
        bad = torch.zeros(E, dtype=torch.bool, device=ps[0].device)
        for p in ps:
            bad |= ~torch.isfinite(p.reshape(E, -1)).all(1)
        bad &= active
        if bool(bad.any()):
            raise DivergenceError(f"heun_flow: members {bad.nonzero().flatten().tolist()[:10]} "
                                  f"became non-finite at step {t}")
        if t % every == 0 or t == steps:
            _obs(t)
    res.params = ps
    return res
