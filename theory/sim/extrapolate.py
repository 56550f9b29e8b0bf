"""Gradient flow as the limit η → 0 of gradient descent, by Richardson extrapolation, with an error estimate.

GD with step η is Euler's method for θ̇ = −∇J(θ): at time t = kη its iterate differs from the flow by
c₁(t)η + c₂(t)η² + … when J is smooth along the path. Running GD at η, η/2, …, η/2^(n−1) and combining the runs
(:func:`richardson`) cancels these terms one order at a time; the difference between the two highest orders is
the error estimate. For ReLU-type networks, where the adaptive integrator of :func:`theory.sim.flow.gradient_flow`
stalls at the kinks, this is the way to the flow: GD crosses a kink like any other point. Kinks crossed along the
path break the expansion beyond the first order, so there the estimate is larger (it says so, and it is the
number to report); a path inside one activation pattern keeps every order.

- :func:`richardson` — the tableau of values computed at steps h, h/r, h/r², …
- :func:`gd_limit` — GD at ``levels`` step sizes on copies of a model, observed at given flow times,
  extrapolated to η → 0: a :class:`Limit` (values, error estimates, the raw runs).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch


def richardson(values: Sequence[torch.Tensor], *, ratio: float = 2.0, order: int = 1):
    """Richardson extrapolation of ``values[j] ≈ A + c₁h_j^p + c₂h_j^(p+1) + …`` with ``h_j = h₀/ratio^j``.

    Args:
        values: at least two tensors (or floats) of one shape, computed with steps h₀, h₀/ratio, …
        ratio: the factor between consecutive steps (> 1).
        order: p, the order of the leading error term (1 for GD / Euler).

    Returns ``(estimate, error, tableau)``: the estimate R[n][n] (n = len(values) − 1 orders eliminated), the error
    estimate |R[n][n] − R[n][n−1]| (the difference between the two highest orders, elementwise) and the tableau
    R[j][k] (row j: values up to level j; column k: k orders eliminated).

    Example (A = 3 of A + h + h², sampled at h = 1, ½, ¼, is recovered exactly; the error estimate is the
    gap to the first-order estimate 2.875):

    >>> est, err, tab = richardson([3.0 + h + h * h for h in (1.0, 0.5, 0.25)])
    >>> float(est), float(err), float(tab[2][1])
    (3.0, 0.125, 2.875)
    """
    if len(values) < 2:
        raise ValueError(f"richardson needs at least two levels, got {len(values)}")
    if not ratio > 1 or not (isinstance(order, int) and order >= 1):
        raise ValueError(f"richardson needs ratio > 1 and an integer order >= 1, got {ratio!r}, {order!r}")
    vals = [torch.as_tensor(v, dtype=torch.float64) if not isinstance(v, torch.Tensor) else v for v in values]
    shapes = {tuple(v.shape) for v in vals}
    if len(shapes) != 1:
        raise ValueError(f"richardson needs values of one shape, got {sorted(shapes)}")
    tab = [[v] for v in vals]
    for j in range(1, len(vals)):
        for k in range(1, j + 1):
            f = ratio ** (order + k - 1) - 1.0
            tab[j].append(tab[j][k - 1] + (tab[j][k - 1] - tab[j - 1][k - 1]) / f)
    n = len(vals) - 1
    return tab[n][n], (tab[n][n] - tab[n][n - 1]).abs(), tab


@dataclass
class Limit:
    """What :func:`gd_limit` returns: the flow's quantities at ``times``, extrapolated to η → 0.

    ``value[key]`` and ``error[key]`` have shape (len(times), *quantity shape); ``raw[key]`` (levels, len(times),
    …) holds the GD runs at the steps ``lrs`` (coarsest first); ``tableau[key]`` is :func:`richardson`'s tableau.
    Every observed quantity has a leading ensemble axis E; ``"loss"`` (E,) is always there.

    >>> import torch
    >>> lim = Limit([1.0], [0.1, 0.05], value={"loss": torch.tensor([[0.25]])}, error={"loss": torch.tensor([[0.5]])})
    >>> lim.max_error("loss")
    0.5
    """

    times: list
    lrs: list
    value: dict = field(default_factory=dict)
    error: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict)
    tableau: dict = field(default_factory=dict)

    def max_error(self, key: str) -> float:
        """The largest error estimate of quantity ``key`` over times, members and entries."""
        return float(self.error[key].max())


def _default_observe(params, outputs) -> dict:
    return {f"param{i}": p for i, p in enumerate(params)}


def gd_limit(model, X: torch.Tensor, y: torch.Tensor, *, loss: str, lr: float, times: Sequence[float],
             levels: int = 4, observe: Callable | None = None, layer_lr: Sequence[float] | None = None,
             engine: str = "auto") -> Limit:
    """The gradient flow of ``model`` on (X, y) at ``times``, as GD extrapolated to η → 0 (Richardson).

    Args:
        model: a model of :mod:`theory.sim.models` (leading ensemble axis E); it is copied, never trained.
        X, y, loss, layer_lr, engine: as in :func:`theory.sim.train.gd` (the flow of the mean loss ``loss``).
        lr: the coarsest step η₀; the runs use η₀, η₀/2, …, η₀/2^(levels−1).
        times: flow times t ≥ 0, each a whole multiple of η₀ (so that every run lands on it).
        levels: number of GD runs (≥ 2); ``levels − 1`` orders are eliminated. The finest run takes
            max(times)/η₀ · 2^(levels−1) steps.
        observe: ``observe(params, outputs) -> dict`` of tensors (each with the ensemble axis first), smooth
            functions of the parameters to extrapolate; default: the parameters ``param0``, ``param1``, …

    Returns a :class:`Limit`; ``limit.error[key]`` is the error estimate (difference between the two highest
    orders). GD is Euler's method for the flow, first order in η; for a smooth path each extra level gains one
    order (checks/core/test_flow_extrapolate.py measures it); kinks crossed by a ReLU network's path leave the
    first order only, and the estimate shows it.

    Example (a linear model y = w·x, whose flow has a closed form):

    >>> import torch
    >>> from theory.sim import models
    >>> X = torch.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=torch.float64)
    >>> y = torch.tensor([1.0, -1.0], dtype=torch.float64)
    >>> net = models.DeepMLP.init(1, [2, 1], act="linear", generator=torch.Generator().manual_seed(0),
    ...                           device="cpu")
    >>> lim = gd_limit(net, X, y, loss="squared", lr=0.1, times=[1.0], levels=4)
    >>> w0 = net.weights[0][0, 0]                     # J = ½ mean (w·x − y)²: ẇ_i = −(w_i x_i² − y_i x_i)/2
    >>> target = torch.tensor([1.0, -0.5], dtype=torch.float64)
    >>> flow = target + (w0 - target) * torch.exp(-torch.tensor([0.5, 2.0], dtype=torch.float64))
    >>> err = (lim.value["param0"][0, 0, 0] - flow).abs().max()
    >>> bool(err <= lim.max_error("param0")), bool(err < 1e-4)
    (True, True)
    """
    from . import train

    if not isinstance(levels, int) or levels < 2:
        raise ValueError(f"levels must be an integer >= 2, got {levels!r}")
    if not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be one positive number (the coarsest step), got {lr!r}")
    ts = [float(t) for t in times]
    if not ts or any(not math.isfinite(t) or t < 0 for t in ts):
        raise ValueError(f"times must be a non-empty list of finite times >= 0, got {list(times)!r}")
    ks = [round(t / lr) for t in ts]
    off = [t for t, k in zip(ts, ks) if abs(k * lr - t) > 1e-9 * max(1.0, t)]
    if off:
        raise ValueError(f"times {off} are not whole multiples of lr = {lr}: every GD run must land on each time")
    obs = observe or _default_observe
    lrs = [lr / 2 ** j for j in range(levels)]
    per_level: list[dict] = []
    for j, eta in enumerate(lrs):
        steps = [k * 2 ** j for k in ks]
        m = copy.deepcopy(model)
        traj = train.gd(m, X, y, loss=loss, lr=eta, steps=max(steps), record=sorted(set(steps)),
                        observe=lambda t, ps, u: obs(ps, u), layer_lr=layer_lr, engine=engine)
        at = {s: i for i, s in enumerate(traj.steps)}
        rows = [at[s] for s in steps]
        q = {"loss": traj.loss_tensor()[rows]}
        for key in traj.obs:
            q[key] = traj.stacked(key)[rows]
        per_level.append(q)
    out = Limit(ts, lrs)
    for key in per_level[0]:
        vals = [q[key].to(torch.float64) for q in per_level]
        out.value[key], out.error[key], out.tableau[key] = richardson(vals, ratio=2.0, order=1)
        out.raw[key] = torch.stack(vals)
    return out
