"""Core: fixed-step Heun gradient flow (theory.sim.heun) — accuracy order, freezing, bad input."""
import math

import pytest
import torch

from theory.errors import DivergenceError
from theory.sim.heun import heun_flow


def _quad(ps):
    return 0.5 * (ps[0] ** 2).sum(-1)          # θ̇ = −θ: θ(t) = θ0 e^{−t}


def test_second_order_on_smooth_flow():
    th0 = [torch.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=torch.float64)]
    errs = []
    for dt in (0.1, 0.05, 0.025):
        res = heun_flow(_quad, th0, dt=dt, steps=int(round(1.0 / dt)))
        errs.append(float((res.params[0] - th0[0] * math.exp(-1.0)).abs().max()))
    assert errs[0] / errs[1] > 3.8 and errs[1] / errs[2] > 3.8     # order 2: error ÷4 per halving


def test_freeze_and_observe():
    th0 = [torch.tensor([[1.0], [10.0]], dtype=torch.float64)]
    grow = lambda ps: -0.5 * (ps[0] ** 2).sum(-1)                  # θ̇ = +θ
    res = heun_flow(grow, th0, dt=0.01, steps=250, observe=lambda t, ps: {"n": ps[0].norm(dim=-1)}, every=10,
                    freeze=lambda ps: ps[0].norm(dim=-1) >= 20.0)
    assert int(res.frozen_at[1]) >= 0 and int(res.frozen_at[0]) == -1
    assert float(res.params[0][1].abs().max()) < 20.5 and res.stacked("n").shape[1] == 2
    assert res.steps[0] == 0 and res.steps[-1] == 250


def test_bad_input_and_divergence():
    th0 = [torch.ones(1, 2, dtype=torch.float64)]
    with pytest.raises(ValueError):
        heun_flow(_quad, th0, dt=0.0, steps=10)
    with pytest.raises(DivergenceError):
        heun_flow(lambda ps: -(ps[0] ** 4).sum(-1), [torch.full((1, 1), 10.0, dtype=torch.float64)], dt=1.0, steps=50)
