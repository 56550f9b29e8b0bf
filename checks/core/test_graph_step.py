"""Core (issue 33): the fixed-shape step of ``train.gd_hidden`` replays from a captured CUDA graph only after one
replay matched the eager step from the same state; a failed or differing capture falls back to the eager step, and
the state is where it was either way. The capture itself needs CUDA; here stand-ins take its place."""
import pytest
import torch

from theory.sim import graph_step


def _step_and_state():
    C = torch.zeros(4, dtype=torch.float64)
    Z = torch.arange(4, dtype=torch.float64)

    def step():
        C.add_(0.5 * Z)
        Z.add_(C)
    return step, [C, Z]


def test_good_capture_is_used_and_state_is_restored():
    step, state = _step_and_state()
    before = [t.clone() for t in state]

    def capture(st, dev):  # warms up like the real capture (advancing the state), returns a faithful replay
        for _ in range(graph_step.WARMUP):
            st()
        return lambda: st()
    replay = graph_step.replayed(step, state, torch.device("cpu"), capture=capture)
    assert all(torch.equal(a, b) for a, b in zip(state, before))  # the loop starts where it was
    replay()
    ref_step, ref = _step_and_state()
    ref_step()
    assert all(torch.equal(a, b) for a, b in zip(state, ref))


@pytest.mark.parametrize("bad", ["differs", "raises"])
def test_bad_capture_falls_back_to_the_eager_step(bad):
    step, state = _step_and_state()
    before = [t.clone() for t in state]

    def capture(st, dev):
        if bad == "raises":
            raise RuntimeError("operation not permitted when stream is capturing")
        return lambda: state[0].add_(1.0)  # a replay that does something else
    with pytest.warns(RuntimeWarning, match="eager step"):
        f = graph_step.replayed(step, state, torch.device("cpu"), capture=capture)
    assert f is step and all(torch.equal(a, b) for a, b in zip(state, before))


def test_only_long_cuda_loops_replay(monkeypatch):
    assert not graph_step.enabled(torch.device("cpu"), 10 ** 6)
    assert graph_step.enabled(torch.device("cuda"), graph_step.MIN_STEPS)
    assert not graph_step.enabled(torch.device("cuda"), graph_step.MIN_STEPS - 1)
    monkeypatch.setenv("THEORY_CUDA_GRAPHS", "0")
    assert not graph_step.enabled(torch.device("cuda"), 10 ** 6)


def test_gd_hidden_with_a_replayed_step_gives_the_eager_iterates(monkeypatch):
    """gd_hidden's loop in replay mode (forward at the looked-at steps, the whole step replayed between them), driven
    on the CPU by forcing ``enabled`` and a stand-in capture, ends where the eager loop ends."""
    from theory.sim import models, train

    def run(replay: bool):
        net = models.TwoClassNet.init(2, 6, 8, sigma0=0.1, act="relu", generator=torch.Generator().manual_seed(0),
                                      device="cpu")
        X = torch.randn(4, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1), device="cpu")
        y = torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=torch.float64)
        if replay:
            monkeypatch.setattr(graph_step, "enabled", lambda dev, steps: True)
            monkeypatch.setattr(graph_step, "_cuda_graph", lambda st, dev: st)
        seen = []
        traj, _ = train.gd_hidden(net, X, y, loss="logistic", lr=0.7, steps=300, record=[0, 17, 300],
                                  observe=lambda t, st, u: seen.append((t, u.clone())), guard_every=50)
        monkeypatch.undo()
        return net.W, traj.loss_tensor(), seen
    We, le, se = run(False)
    Wr, lr_, sr = run(True)
    assert torch.equal(We, Wr) and torch.equal(le, lr_)
    assert [t for t, _ in se] == [t for t, _ in sr] == [0, 17, 300]
    assert all(torch.equal(a, b) for (_, a), (_, b) in zip(se, sr))
