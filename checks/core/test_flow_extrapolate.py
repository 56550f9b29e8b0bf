"""Core (issue 34): gradient flow that stops on a budget, and GD extrapolated to η → 0 (Richardson).

Before issue 34, ``train.gradient_flow`` ran without limit: on the ReLU objectives below it ran for over 60 s
(stopped by hand; the issue's user waited 11 minutes). Now its budget (evaluations and/or seconds) raises a
FlowBudgetError that names the likely cause; ReLU-type nets get :func:`theory.sim.extrapolate.gd_limit`.
"""
import time

import pytest
import torch

from theory import stats
from theory.device import draw
from theory.sim import losses, models, train
from theory.sim.extrapolate import gd_limit, richardson
from theory.sim.flow import FlowBudgetError, gradient_flow

DT = torch.float64
BUDGET_S = 2.0
OVERHEAD_S = 3.0  # one gradient evaluation past the deadline, scipy's bookkeeping, a loaded 2-core machine


def _sliding(ps):
    """J(θ) = ½(relu(θ)+1)² + ½(relu(−θ)+1)²: slope ±1 on either side of θ = 0, so the flow from θ = 1 reaches the
    kink at t = log 2 and slides along it (Filippov): an adaptive integrator's step shrinks to its tolerance there."""
    th = ps[0]
    return 0.5 * ((torch.relu(th) + 1) ** 2 + (torch.relu(-th) + 1) ** 2).sum((-1, -2))


def _relu_net(ctx):
    g = ctx.generator("core/flow", "relu-net")
    X = draw(torch.randn, 8, 3, generator=g, dtype=DT, device=ctx.device)
    y = draw(torch.randn, 8, generator=g, dtype=DT, device=ctx.device)
    net = models.DeepMLP.init(1, [3, 16, 1], act="relu", generator=g, device=ctx.device)
    return net, X, y


def test_flow_sliding_along_a_relu_kink_stops_at_its_evaluation_budget(ctx):
    th0 = torch.ones(1, 1, dtype=DT, device=ctx.device)
    with pytest.raises(FlowBudgetError) as e:
        gradient_flow(_sliding, [th0], [0.0, 2.0], max_evals=1000)
    msg = str(e.value)
    assert "budget of 1000 evaluations spent" in msg and "ReLU" in msg and "gd_limit" in msg
    assert train.gradient_flow is gradient_flow and train.FlowBudgetError is FlowBudgetError  # re-exported
    # the same flow with a smooth objective of the same slopes away from 0 finishes well inside the budget
    _, _, sol = gradient_flow(lambda ps: 0.5 * ((ps[0] + 1) ** 2).sum((-1, -2)), [th0], [0.0, 2.0], max_evals=1000)
    assert sol.success and sol.nfev < 1000


def test_relu_network_flow_that_used_to_hang_raises_within_its_time_budget(ctx):
    net, X, y = _relu_net(ctx)
    t0 = time.perf_counter()
    with pytest.raises(FlowBudgetError, match=rf"budget of {BUDGET_S:g} s spent .*non-smooth activation"):
        gradient_flow(lambda ps: losses.loss("squared", net.forward(X, ps), y), net.params, [0.0, 50.0],
                      max_seconds=BUDGET_S, max_evals=None)
    took = time.perf_counter() - t0
    assert took < BUDGET_S + OVERHEAD_S, f"the budget of {BUDGET_S} s stopped the flow only after {took:.1f} s"


def test_gd_limit_matches_a_tanh_flow_within_its_error_estimate_and_gains_one_order_per_level(ctx):
    """GD is Euler's method: error O(η); each Richardson column eliminates one more order (slopes 1, 2, 3 on
    log–log axes, fitted over η = 0.1 … 0.00625); the extrapolation agrees with DOP853 (rtol 1e-11) within the
    estimate |R[n][n] − R[n][n−1]|."""
    g = ctx.generator("core/flow", "tanh-net")
    X = draw(torch.randn, 6, 3, generator=g, dtype=DT, device=ctx.device)
    y = draw(torch.randn, 6, generator=g, dtype=DT, device=ctx.device)
    net = models.DeepMLP.init(2, [3, 8, 1], act="tanh", generator=g, device=ctx.device)
    T, lr, levels = 1.0, 0.1, 5
    _, traj, sol = gradient_flow(lambda ps: losses.loss("squared", net.forward(X, ps), y), net.params, [0.0, T])
    before = [p.clone() for p in net.params]
    lim = gd_limit(net, X, y, loss="squared", lr=lr, times=[T], levels=levels)
    assert all(torch.equal(a, b) for a, b in zip(before, net.params))  # the model itself is not trained
    for k, ref in enumerate(traj):
        key = f"param{k}"
        err = float((lim.value[key][0] - ref[-1]).abs().max())
        assert err <= lim.max_error(key), (key, err, lim.max_error(key))
        assert lim.max_error(key) < 1e-6  # 5 levels from η = 0.1: the estimate itself is small
    tab = lim.tableau["param0"]
    for col, order in enumerate((1, 2, 3)):
        errs = [float((tab[j][col][0] - traj[0][-1]).abs().max()) for j in range(col, levels)]
        fit = stats.fit_power([lr / 2 ** j for j in range(col, levels)], errs)
        assert abs(fit.exponent - order) < 0.35, (col, fit.exponent, errs)
    loss_T = losses.loss("squared", net.forward(X, [tr[-1] for tr in traj]), y)
    assert torch.allclose(lim.value["loss"][0], loss_T, rtol=0, atol=lim.max_error("loss") + 1e-12)


def test_gd_limit_on_a_relu_network_reports_its_error(ctx):
    """Where the adaptive flow stalls, the extrapolation returns with a finite, stated error estimate."""
    net, X, y = _relu_net(ctx)
    lim = gd_limit(net, X, y, loss="squared", lr=0.05, times=[0.5, 1.0], levels=4)
    assert lim.value["param0"].shape == (2, 1, 16, 3) and lim.raw["loss"].shape == (4, 2, 1)
    assert 0 < lim.max_error("loss") < 1e-2 and bool(torch.isfinite(lim.error["param1"]).all())


def test_richardson_and_gd_limit_refuse_bad_input(ctx):
    with pytest.raises(ValueError, match="at least two levels"):
        richardson([1.0])
    with pytest.raises(ValueError, match="one shape"):
        richardson([torch.zeros(2, dtype=DT), torch.zeros(3, dtype=DT)])
    net, X, y = _relu_net(ctx)
    with pytest.raises(ValueError, match="whole multiples of lr"):
        gd_limit(net, X, y, loss="squared", lr=0.1, times=[0.25])
    with pytest.raises(ValueError, match="levels"):
        gd_limit(net, X, y, loss="squared", lr=0.1, times=[0.2], levels=1)
    with pytest.raises(ValueError, match="max_evals"):
        gradient_flow(_sliding, [torch.ones(1, 1, dtype=DT, device=ctx.device)], [0.0, 1.0], max_evals=0)
