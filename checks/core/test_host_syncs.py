"""Core (issue 33): train.gd reads the host about once per guard chunk and per recorded step, not once per step.

On CUDA every host read of a device value (``bool(t)``, ``t.item()``, ``t.tolist()``, ``t.cpu()``, ...) is a
synchronisation that stalls the step loop. The reads are counted here on CPU by wrapping those Tensor methods:
over 200 steps, recorded at 3 steps, with the divergence guard read every 64 steps, a run may read the host about
200/64 + 3 times plus a few one-off validations (learning rates, inputs, labels), far below one read per step.
Before issue 33's fix, the labels' check in ``losses.loss`` and the inputs' finiteness check in
``models.check_inputs`` read the host at every step (210 to 409 reads for these runs).

The checks are then made once per tensor and version (:class:`theory.sim.losses._CheckedOnce`); the last tests
show that a tensor changed in place is checked again, so bad input still raises its clear error.
"""
from __future__ import annotations

import collections
import contextlib

import pytest
import torch

from theory import data
from theory.sim import gd_blocks, losses, models, train

DT = torch.float64
STEPS, RECORD = 200, [0, 100, 200]
HOST_READS = ("__bool__", "__int__", "__float__", "__index__", "item", "tolist", "numpy", "cpu", "nonzero")
ONE_OFF = 5  # the learning rates (2 reads), the inputs' finiteness (1), the labels (1, and 1 in the analytic build)


@contextlib.contextmanager
def host_reads():
    """Count calls of the Tensor methods that read a value on the host, by name."""
    counts, orig = collections.Counter(), {n: getattr(torch.Tensor, n) for n in HOST_READS}

    def wrap(name, f):
        def counted(self, *a, **k):
            counts[name] += 1
            return f(self, *a, **k)
        return counted

    for n, f in orig.items():
        setattr(torch.Tensor, n, wrap(n, f))
    try:
        yield counts
    finally:
        for n, f in orig.items():
            setattr(torch.Tensor, n, f)


@pytest.fixture
def one_thread():
    """One intra-op thread: the analytic engine runs its members as one block (one guard to read)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _task(loss: str, model: str):
    """Fresh inputs and labels (so their one-off checks are counted) and a tiny net."""
    g = torch.Generator().manual_seed(0)
    X = data.unit_sphere(8, 5, generator=g)
    if loss == "cross_entropy":
        y = torch.arange(8) % 3
        net = models.DeepMLP.init(3, [5, 8, 3], generator=g, device="cpu")
        return net, X, y
    y = data.balanced_labels(8)
    net = (models.TwoClassNet.init(3, 4, 5, sigma0=0.1, act="relu", generator=g, device="cpu") if model == "kou"
           else models.DeepMLP.init(3, [5, 8, 1], act="tanh", generator=g, device="cpu"))
    return net, X, y


def _bound(steps: int, record, every: int) -> int:
    """Guard reads (one per full chunk and one at each recorded step and the end) plus the one-off checks."""
    return steps // every + len(record) + 1 + ONE_OFF


@pytest.mark.parametrize("engine", ["analytic", "autograd"])
@pytest.mark.parametrize("loss, model", [("logistic", "kou"), ("squared", "mlp"), ("cross_entropy", "mlp")])
def test_gd_reads_the_host_per_chunk_not_per_step(engine, loss, model, one_thread):
    net, X, y = _task(loss, model)
    assert train._engine_net(engine, net, X, y, loss) is not None or engine == "autograd"
    with host_reads() as counts:
        traj = train.gd(net, X, y, loss=loss, lr=0.05, steps=STEPS, record=RECORD, engine=engine)
    n = sum(counts.values())
    assert traj.steps == RECORD
    # 7 to 9 reads for these runs (210 to 409 before issue 33's fix)
    assert n <= _bound(STEPS, RECORD, gd_blocks.GUARD_EVERY), (n, dict(counts))
    assert n >= STEPS // gd_blocks.GUARD_EVERY, (n, dict(counts))  # the guard is read: the counter sees reads


@pytest.mark.parametrize("engine", ["analytic", "autograd"])
def test_reads_per_extra_step_are_one_per_guard_chunk(engine, one_thread):
    """The marginal count: 640 more steps add 640/64 = 10 guard reads, whatever the one-off checks."""
    runs = []
    for steps in (128, 768):
        net, X, y = _task("logistic", "kou")
        with host_reads() as counts:
            train.gd(net, X, y, loss="logistic", lr=0.05, steps=steps, record=[0], engine=engine)
        runs.append(sum(counts.values()))
    assert runs[1] - runs[0] == (768 - 128) // gd_blocks.GUARD_EVERY, runs


def test_labels_changed_in_place_are_checked_again():
    u, y = torch.zeros(1, 3, dtype=DT), torch.tensor([1.0, -1.0, 1.0], dtype=DT)
    losses.loss("logistic", u, y)
    with host_reads() as counts:
        losses.loss("logistic", u, y)
    assert sum(counts.values()) == 0  # the same labels, unchanged: not read again
    y[0] = 0.0
    with pytest.raises(ValueError, match="labels in"):
        losses.loss("logistic", u, y)
    with pytest.raises(ValueError, match="labels in"):  # checked per loss: bce labels are not logistic labels
        losses.loss("logistic", u, torch.tensor([0.0, 1.0, 1.0], dtype=DT))
    c = torch.tensor([0, 2, 1])
    losses.loss("cross_entropy", torch.zeros(1, 3, 3, dtype=DT), c)
    with pytest.raises(ValueError, match=r"0\.\.1"):  # the same indices, fewer classes
        losses.loss("cross_entropy", torch.zeros(1, 3, 2, dtype=DT), c)


def test_inputs_changed_in_place_are_checked_again():
    net = models.TwoLayerNet.init(2, 5, 4, device="cpu")
    X = torch.zeros(3, 4, dtype=DT)
    net(X)
    with host_reads() as counts:
        net(X)
    assert sum(counts.values()) == 0
    X[1, 2] = float("nan")
    with pytest.raises(ValueError, match="NaN or inf"):
        net(X)
    with pytest.raises(ValueError, match="NaN or inf"):  # a view of it is another tensor: checked
        net(X[1:])
