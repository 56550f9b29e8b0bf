"""Issue 33, the same data on every device: every draw of the core is made from the check's seed on a CPU generator
and then moved, so a CUDA run judges the draws of a CPU run; and placement by size (theory.device.place).

No CUDA here, so the run's device is stood in for by ``meta`` (a device with no data, like CUDA seen from the CPU):
a recorder intercepts every torch random function while the core builds data and models for a ``meta`` target,
and shows that each draw is made on the CPU, from the same generator, with the same numbers, bit for bit, as the
same build for a CPU target; all that differs is the final ``.to(device)``, an exact copy. A draw on the target
device would show up in the recorder as a draw made on ``meta`` (the control below)."""
from __future__ import annotations

import pytest
import torch
from torch.overrides import TorchFunctionMode

from theory import data
from theory import device as policy
from theory.harness.context import RunContext
from theory.sim import ball, models

RANDOM = {torch.randn, torch.rand, torch.randint, torch.randperm, torch.normal, torch.bernoulli, torch.multinomial}


class Draws(TorchFunctionMode):
    """Records (device the draw was made on, a copy of its values) of every torch random function called."""

    def __init__(self):
        super().__init__()
        self.made = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in RANDOM:
            self.made.append((out.device.type, out.detach().clone() if out.device.type != "meta" else None))
        return out


def _builders():
    """The core's data generators, models and draw helpers, each a function of (generator, target)."""
    return {
        "unit_sphere": lambda g, t: data.unit_sphere(6, 5, generator=g, device=t),
        "haar_orthonormal": lambda g, t: data.haar_orthonormal(9, 4, generator=g, device=t),
        "gram_controlled": lambda g, t: data.gram_controlled(4, 9, 0.05, generator=g, device=t),
        "kou_section6": lambda g, t: data.kou_section6(6, 12, generator=g, device=t),
        "gaussian_mixture": lambda g, t: data.gaussian_mixture(8, 5, generator=g, device=t),
        "gaussian_rows": lambda g, t: data.gaussian_rows(8, 5, generator=g, device=t),
        "TwoLayerNet.init": lambda g, t: models.TwoLayerNet.init(2, 3, 5, generator=g, device=t).params,
        "TwoClassNet.init": lambda g, t: models.TwoClassNet.init(2, 3, 5, sigma0=0.1, gamma=0.1, generator=g,
                                                                 device=t).params,
        "DeepMLP.init": lambda g, t: models.DeepMLP.init(2, [5, 4, 1], generator=g, device=t).params,
        "sample_ball": lambda g, t: ball.sample_ball((3,), 5, 0.1, generator=g, device=t),
        "draw(randperm)": lambda g, t: policy.draw(torch.randperm, 9, generator=g, device=t),
    }


def _record(build, target, seed=7):
    """(draws made, generator after) of ``build`` for ``target`` from a check's policy generator. A generator that
    summarises its data (``.item()``) cannot finish on meta, which holds no data: its draws, all made before the
    summary, are what is compared (their count is asserted equal to the CPU build's)."""
    g = RunContext(torch.device(target), seed=seed).generator("core/same-draws", {"t": 1})
    with Draws() as rec:
        try:
            build(g, target)
        except (RuntimeError, NotImplementedError) as e:
            if target != "meta" or "meta" not in str(e):
                raise
    return rec.made, g


def test_policy_generators_are_cpu_whatever_the_run_device():
    for dev in ("cpu", "meta"):
        assert RunContext(torch.device(dev)).generator("core/x").device.type == "cpu"
    assert policy.generator(3, device="meta").device.type == "cpu"  # the device argument is ignored
    a, b = policy.generator(3), RunContext(torch.device("meta")).generator("core/x")
    fresh = policy.generator(3)
    assert torch.equal(torch.randn(4, generator=a, device="cpu"), torch.randn(4, generator=fresh, device="cpu"))
    assert b.initial_seed() == RunContext(torch.device("cpu")).generator("core/x").initial_seed()


@pytest.mark.parametrize("name", list(_builders()))
def test_core_draws_are_bit_identical_whatever_the_target(name):
    """The same draws, bit for bit, in the same order, all made on the CPU, for a CPU and a meta target; the
    generator ends in the same state."""
    build = _builders()[name]
    made_cpu, g_cpu = _record(build, "cpu")
    made_meta, g_meta = _record(build, "meta")
    assert made_cpu and len(made_cpu) == len(made_meta)
    assert {d for d, _ in made_meta} == {"cpu"}, "a draw was made on the target device"
    for (_, a), (_, b) in zip(made_cpu, made_meta):
        assert a.dtype == b.dtype and torch.equal(a, b)
    assert torch.equal(g_cpu.get_state(), g_meta.get_state())


def test_outputs_land_on_the_target():
    for name in ("unit_sphere", "haar_orthonormal", "TwoClassNet.init", "DeepMLP.init", "sample_ball",
                 "draw(randperm)"):
        out = _builders()[name](policy.generator(0), "meta")
        assert all(t.device.type == "meta" for t in (out if isinstance(out, list) else [out])), name


def test_the_recorder_sees_a_draw_on_the_target():
    """Control: a draw made on the target device (what a CUDA generator did before issue 33) is recorded there."""
    with Draws() as rec:
        torch.randn(3, device="meta")  # device-scan: deliberate (no generator: the recorder must still see it)
        policy.draw(torch.randn, 3, generator=policy.generator(1), device="meta")
    assert [d for d, _ in rec.made] == ["meta", "cpu"]


def test_place_by_size(monkeypatch):
    """Below the crossover the CPU, at or above it the run's device (meta stands in for CUDA); a CPU run stays on
    the CPU; the environment override; bad sizes and overrides raise."""
    monkeypatch.delenv("THEORY_CROSSOVER_FLOPS", raising=False)
    c = policy.crossover_flops()
    assert c == policy.CROSSOVER_FLOPS > 0
    assert policy.place(c / 2, "meta").type == "cpu" and policy.place(c, "meta").type == "meta"
    assert policy.place(10 * c, "cpu").type == "cpu"
    monkeypatch.setenv("THEORY_CROSSOVER_FLOPS", "0")
    assert policy.place(1.0, "meta").type == "meta"
    monkeypatch.setenv("THEORY_CROSSOVER_FLOPS", "lots")
    with pytest.raises(ValueError, match="THEORY_CROSSOVER_FLOPS"):
        policy.place(1.0, "meta")
    monkeypatch.delenv("THEORY_CROSSOVER_FLOPS")
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="flops_per_step"):
            policy.place(bad, "meta")


def test_step_flops_of_the_kou_net():
    """The size that place() reads: Kou's net (n = 10, d = 784, m = 100, first layer trained, frozen ±1/m readout)
    costs 4·n·d·2m + 4·n·2m FLOPs per step and member (forward and weight gradient of the first layer; forward
    and input gradient of the readout); a deep net adds the input gradient of every layer above the first."""
    from theory.sim import mlp_backprop
    assert mlp_backprop.gd_step_flops(1, 10, [784, 200, 1], trained=1) == 4 * 10 * 784 * 200 + 4 * 10 * 200
    assert mlp_backprop.gd_step_flops(3, 5, [4, 6, 2]) == 3 * 5 * (4 * 4 * 6 + 6 * 6 * 2)
    X = data.unit_sphere(10, 784, generator=policy.generator(0), device="cpu")
    net = models.TwoClassNet.init(2, 100, 784, sigma0=0.01, gamma=0.1, generator=policy.generator(1), device="cpu")
    built = mlp_backprop.build(net, X, data.balanced_labels(10, device="cpu"), "logistic")
    assert mlp_backprop.step_flops(built) == 2 * mlp_backprop.gd_step_flops(1, 10, [784, 200, 1], trained=1)
    with pytest.raises(ValueError, match="gd_step_flops"):
        mlp_backprop.gd_step_flops(1, 10, [784])
