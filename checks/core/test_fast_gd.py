"""Core: the analytic GD engine (theory.sim.mlp_backprop, issue 17) gives the autograd engine's iterates.

train.gd / train.sgd / train.adam with engine="analytic" against engine="autograd", float64: every model class
(TwoLayerNet, TwoClassNet, DeepMLP with α, NTK multipliers, vector outputs), every loss, per-member rates,
layer rates, per-member inputs, labels and slopes, observers on record grids, one block of members or one
member per block (the CPU engine runs blocks from one recorded step to the next), runs long enough to cross
the exact refreshes of the first layer's Gram updates. Agreement is asserted to 1e-12 relative to the
change of the weights (not to the weights themselves); a 1e-9 change of the rate breaks it (the comparison
has power). Divergence raises at the same step for the same members; uncovered runs fall back to autograd.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import torch

from theory import data
from theory import DivergenceError
from theory.device import draw
from theory.sim import activations, gd_blocks, mlp_backprop, models, train

DT = torch.float64
TOL = 1e-12


def _case(name, g, dev):
    """(model, X, y, loss, lr, layer_lr, steps) for one configuration."""
    E = 5
    lr = torch.tensor([0.5, 1.0, 1.5, 2.0, 0.75], dtype=DT, device=dev)
    X = data.unit_sphere(12, 30, generator=g, device=dev)
    ypm, y01 = data.balanced_labels(12, device=dev), data.balanced_labels(12, zero_one=True, device=dev)
    if name == "two-layer-relu-bce":  # σ'(0) = 1 (Wang): a zero input puts every pre-activation at 0
        X = torch.cat([X[:11], torch.zeros(1, 30, dtype=DT, device=dev)])
        net = models.TwoLayerNet.init(E, 16, 30, q=0.1, act="relu", generator=g, device=dev)
        return net, X, y01, "bce", 4 * lr, None, 120
    if name == "two-layer-linear-bce":
        return models.TwoLayerNet.init(E, 16, 30, act="linear", generator=g, device=dev), X, y01, "bce", lr, None, 70
    if name == "two-layer-tanh-logistic":
        return models.TwoLayerNet.init(E, 16, 30, act="tanh", generator=g, device=dev), X, ypm, "logistic", lr, None, 70
    if name == "two-class-leaky-logistic":
        net = models.TwoClassNet.init(E, 10, 30, sigma0=0.05, act="leaky_relu", gamma=0.1, generator=g, device=dev)
        return net, X, ypm, "logistic", 2 * lr, None, 150
    if name == "two-class-relu-squared":
        net = models.TwoClassNet.init(E, 10, 30, sigma0=0.1, act="relu", generator=g, device=dev)
        return net, X, ypm, "squared", lr, None, 80
    if name == "two-class-member-slopes-member-data":
        Xe = torch.stack([data.unit_sphere(12, 30, generator=g, device=dev) for _ in range(E)])
        ye = torch.stack([ypm[draw(torch.randperm, 12, generator=g, device=dev)] for _ in range(E)])
        W = 0.05 * draw(torch.randn, E, 2, 10, 30, generator=g, dtype=DT, device=dev)
        net = models.TwoClassNet(W, activations.member_slopes([0.0, 0.1, 0.5, 0.25, 0.0]))
        return net, Xe, ye, "logistic", 2 * lr, None, 100
    if name == "deep-relu-squared-vector":
        Y = draw(torch.randn, 12, 3, generator=g, dtype=DT, device=dev)
        net = models.DeepMLP.init(E, [30, 8, 8, 3], stds="he", alpha=0.7, generator=g, device=dev)
        return net, X, Y, "squared", 0.05 * lr, [1.0, 0.5, 2.0], 80
    if name == "deep-ntk-softplus-scalar":
        Y = draw(torch.randn, 12, generator=g, dtype=DT, device=dev)
        net = models.DeepMLP.init(E, [30, 9, 9, 1], stds="lecun", act="softplus", ntk=True, generator=g, device=dev)
        return net, X, Y, "squared", 0.1 * lr, [2.0, 1.0, 0.5], 80
    if name == "deep-relu-cross-entropy":
        lab = draw(torch.randint, 0, 4, (12,), generator=g, device=dev)
        net = models.DeepMLP.init(E, [30, 16, 16, 4], stds="he", generator=g, device=dev)
        return net, X, lab, "cross_entropy", 0.5 * lr, None, 60
    if name == "deep-leaky-member-data-wide-n":  # N > d: no Gram updates, exact forward every step
        Xe = draw(torch.randn, E, 40, 6, generator=g, dtype=DT, device=dev)
        ye = torch.where(draw(torch.randn, E, 40, generator=g, dtype=DT, device=dev) > 0, 1.0, -1.0)
        net = models.DeepMLP.init(E, [6, 12, 1], act=activations.get("leaky_relu", gamma=0.2), generator=g, device=dev)
        return net, Xe, ye, "logistic", 0.3 * lr, None, 60
    raise KeyError(name)


CASES = ["two-layer-relu-bce", "two-layer-linear-bce", "two-layer-tanh-logistic", "two-class-leaky-logistic",
         "two-class-relu-squared", "two-class-member-slopes-member-data", "deep-relu-squared-vector",
         "deep-ntk-softplus-scalar", "deep-relu-cross-entropy", "deep-leaky-member-data-wide-n"]


def _clone(model):
    if isinstance(model, models.TwoLayerNet):
        return models.TwoLayerNet(model.W.clone(), model.a.clone(), model.act)
    if isinstance(model, models.TwoClassNet):
        return models.TwoClassNet(model.W.clone(), model.act)
    return models.DeepMLP([w.clone() for w in model.weights], model.act, model.alpha, list(model.multipliers))


@dataclass
class Run:
    traj: train.Trajectory
    params: list


def _run(model, X, y, loss, lr, layer_lr, steps, engine, record=None, fn=train.gd):
    def observe(t, ps, u):
        return {"u": u, **{f"p{l}": p.detach().clone() for l, p in enumerate(ps)}}
    tr = fn(model, X, y, loss=loss, lr=lr, steps=steps, record=record, observe=observe, layer_lr=layer_lr,
            engine=engine)
    return Run(tr, [p.clone() for p in model.params])


def _gap(a: Run, b: Run, p0: list) -> float:
    """Largest difference between run ``a`` and reference ``b`` relative to how far the reference moved: weights
    at the end and at every step ``a`` recorded (``b`` may record more), outputs and losses there."""
    rows = [b.traj.steps.index(t) for t in a.traj.steps]
    gap = 0.0
    for pa, pb, q in zip(a.params, b.params, p0):
        gap = max(gap, float((pa - pb).abs().max() / (pb - q).abs().max()))
    for key in b.traj.obs:
        A, B = a.traj.stacked(key), b.traj.stacked(key)
        ref = (B - B[0]).abs().max() if key.startswith("p") else B.abs().max()
        gap = max(gap, float((A - B[rows]).abs().max() / ref))
    La, Lb = a.traj.loss_tensor(), b.traj.loss_tensor()[rows]
    return max(gap, float(((La - Lb).abs() / Lb.abs()).max()))


@contextmanager
def _threads(n):
    """Intra-op threads n for the block (n > 1 with several blocks: n worker threads, one kernel thread each)."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("name", CASES)
def test_analytic_gd_equals_autograd(ctx, name, monkeypatch):
    """Reference: autograd with every step recorded. Analytic: every step, the default geometric grid and a
    sparse grid (with a step past the end, ignored), each with one block, with one member per block, and with
    one member per block on two worker threads."""
    g = ctx.generator("core/fast_gd", name)
    model, X, y, loss, lr, layer_lr, steps = _case(name, g, ctx.device)
    p0 = [p.clone() for p in model.params]
    ref = _run(_clone(model), X, y, loss, lr, layer_lr, steps, "autograd", record=range(steps + 1))
    for budget, threads in ((gd_blocks.BLOCK_BYTES, 1), (1, 1), (1, 2)):
        monkeypatch.setattr(gd_blocks, "BLOCK_BYTES", budget)
        for rec in (range(steps + 1), None, [0, 7, steps // 2, steps, steps + 5]):
            with _threads(threads):
                fast = _run(_clone(model), X, y, loss, lr, layer_lr, steps, "analytic", record=rec)
            want = train.geometric_grid(steps) if rec is None else [t for t in rec if t <= steps]
            assert fast.traj.steps == want
            assert _gap(fast, ref, p0) <= TOL, (budget, threads, rec)


def test_comparison_has_power(ctx):
    """A rate off by one part in 10⁹ moves the iterates by far more than the tolerance."""
    g = ctx.generator("core/fast_gd", "power")
    model, X, y, loss, lr, layer_lr, steps = _case("two-class-leaky-logistic", g, ctx.device)
    p0 = [p.clone() for p in model.params]
    ref = _run(_clone(model), X, y, loss, lr, layer_lr, steps, "autograd")
    same = _run(_clone(model), X, y, loss, lr, layer_lr, steps, "analytic")
    assert _gap(same, ref, p0) <= TOL
    off = _run(_clone(model), X, y, loss, lr * (1 + 1e-9), layer_lr, steps, "analytic")
    assert _gap(off, ref, p0) > 100 * TOL


def test_block_split_matches_member_count(ctx):
    """Blocks cover the ensemble once, in order, with sizes differing by at most one."""
    g = ctx.generator("core/fast_gd", "blocks")
    model, X, y, loss, *_ = _case("two-class-leaky-logistic", g, ctx.device)
    net = mlp_backprop.build(model, X, y, loss)
    per = mlp_backprop.member_bytes(net, X.shape[0])
    assert len(gd_blocks.block_ranges(net, 5, torch.device("cpu"), 10 ** 12, workers=2)) == 2
    assert len(gd_blocks.block_ranges(net, 5, torch.device("meta"), 1, workers=2)) == 1  # not CPU: one block
    for budget, want in ((1, 5), (per, 5), (2 * per, 3), (3 * per, 2), (10 ** 12, 1)):
        r = gd_blocks.block_ranges(net, 5, torch.device("cpu"), budget)
        assert len(r) == want and r[0][0] == 0 and r[-1][1] == 5
        assert all(a[1] == b[0] for a, b in zip(r, r[1:]))
        assert max(b - a for a, b in r) - min(b - a for a, b in r) <= 1


def _divergence(fn):
    with pytest.raises(DivergenceError) as err:
        fn()
    m = re.search(r"step (\d+): loss of ensemble members \[([\d, ]*)\]", str(err.value))
    return int(m.group(1)), [int(i) for i in m.group(2).split(",")]


@pytest.mark.parametrize("blocks_", ["one-block", "member-blocks", "member-blocks-2-threads"])
def test_divergence_same_step_and_members(ctx, monkeypatch, blocks_):
    """Members with large rates blow up; the analytic engine names the autograd engine's step and members,
    also when the earliest divergence lies in a later block than another one."""
    if blocks_ != "one-block":
        monkeypatch.setattr(gd_blocks, "BLOCK_BYTES", 1)
    with _threads(2 if blocks_.endswith("threads") else 1):
        _check_divergence()


def _check_divergence():
    X = data.unit_sphere(6, 4, generator=torch.Generator().manual_seed(0))
    Y = torch.randn(6, dtype=DT, generator=torch.Generator().manual_seed(1), device="cpu") * 10
    base = models.DeepMLP.init(4, [4, 16, 16, 1], generator=torch.Generator().manual_seed(2))
    lr = torch.tensor([0.01, 30.0, 0.01, 50.0], dtype=DT)
    got = {}
    for engine in ("autograd", "analytic"):
        net = _clone(base)
        got[engine] = _divergence(lambda: train.gd(net, X, Y, loss="squared", lr=lr, steps=200, record=[0, 200],
                                                   engine=engine))
    assert got["analytic"] == got["autograd"]
    assert got["autograd"][1] == [3]  # member 1 (an earlier block) diverges too, but later
    # NaN weights in member 1: step 0, member 1
    net = models.TwoClassNet.init(3, 4, 4, sigma0=0.1, act="relu")
    net.W[1, 0, 0, 0] = float("nan")
    yy = data.balanced_labels(6)
    assert _divergence(lambda: train.gd(net, X, yy, loss="logistic", lr=0.1, steps=3, engine="analytic")) == (0, [1])


def _mb_case(name, g, dev):
    X = draw(torch.randn, 37, 9, generator=g, dtype=DT, device=dev)  # 37 rows: a last, shorter batch
    if name == "two-layer-bce":
        y = (draw(torch.rand, 37, generator=g, dtype=DT, device=dev) < 0.5).to(DT)
        return models.TwoLayerNet.init(3, 11, 9, act="relu", generator=g, device=dev), X, y, "bce"
    if name == "two-class-logistic":
        y = torch.where(draw(torch.rand, 37, generator=g, dtype=DT, device=dev) < 0.5, 1.0, -1.0).to(DT)
        net = models.TwoClassNet.init(3, 6, 9, sigma0=0.2, act="leaky_relu", gamma=0.1, generator=g, device=dev)
        return net, X, y, "logistic"
    lab = draw(torch.randint, 0, 3, (37,), generator=g, device=dev)
    return models.DeepMLP.init(3, [9, 8, 8, 3], generator=g, device=dev), X, lab, "cross_entropy"


@pytest.mark.parametrize("opt", ["sgd", "adam"])
@pytest.mark.parametrize("name", ["two-layer-bce", "two-class-logistic", "deep-cross-entropy"])
def test_analytic_minibatch_equals_autograd(ctx, opt, name):
    g = ctx.generator("core/fast_minibatch", name)
    model, X, y, loss = _mb_case(name, g, ctx.device)
    p0 = [p.clone() for p in model.params]
    runs = {}
    for engine in ("autograd", "analytic"):
        net = _clone(model)
        obs = lambda t, ps, u: {"u": u, **{f"p{l}": p.detach().clone() for l, p in enumerate(ps)}}  # noqa: E731
        tr = getattr(train, opt)(net, X, y, loss=loss, lr=0.05, epochs=6, batch=8, observe=obs, engine=engine,
                                 generator=torch.Generator().manual_seed(3), record=range(7))
        runs[engine] = Run(tr, [p.clone() for p in net.params])
        assert all(p.grad is None and not p.requires_grad for p in net.params)
    assert _gap(runs["analytic"], runs["autograd"], p0) <= TOL


def test_uncovered_runs_fall_back_to_autograd(ctx):
    """A model subclass or a custom activation runs on autograd under engine='auto'; 'analytic' refuses it."""

    class Cubic:
        kind, name = "smooth", "cubic"

        def __call__(self, z):
            return z ** 3 / 3 + z

    g = ctx.generator("core/fast_gd", "fallback")
    X = data.unit_sphere(8, 5, generator=g, device=ctx.device)
    y = data.balanced_labels(8, device=ctx.device)
    net = models.TwoLayerNet.init(2, 4, 5, generator=g, device=ctx.device)
    odd = models.TwoLayerNet(net.W.clone(), net.a, Cubic())
    assert mlp_backprop.unsupported(odd, X, y, "logistic") == "activation Cubic"
    with pytest.raises(ValueError, match="analytic engine does not cover"):
        train.gd(odd, X, y, loss="logistic", lr=0.1, steps=2, engine="analytic")
    a, b = _clone(odd), _clone(odd)
    train.gd(a, X, y, loss="logistic", lr=0.1, steps=20)
    train.gd(b, X, y, loss="logistic", lr=0.1, steps=20, engine="autograd")
    assert torch.equal(a.W, b.W)
    with pytest.raises(ValueError, match="unknown engine"):
        train.gd(net, X, y, loss="logistic", lr=0.1, steps=2, engine="jit")


def test_observer_can_differentiate_params(ctx):
    """Observers get the parameters with requires_grad on, as under autograd (e.g. for a per-step NTK)."""
    g = ctx.generator("core/fast_gd", "observer-grad")
    X = data.unit_sphere(6, 5, generator=g, device=ctx.device)
    y = data.balanced_labels(6, device=ctx.device)
    net = models.TwoLayerNet.init(2, 4, 5, generator=g, device=ctx.device)

    def obs(t, ps, u):
        (gr,) = torch.autograd.grad(net.forward(X, ps).sum(), ps)
        return {"g": gr}

    out = {e: train.gd(_clone(net), X, y, loss="logistic", lr=0.5, steps=40, observe=obs, engine=e).stacked("g")
           for e in ("autograd", "analytic")}
    assert float((out["analytic"] - out["autograd"]).abs().max() / out["autograd"].abs().max()) <= TOL
