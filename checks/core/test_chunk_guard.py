"""The divergence guard without a host read per step (issue 33): :class:`theory.sim.gd_blocks.ChunkGuard` keeps each
step's losses on the device and is read every K steps, yet the error names the first diverging step, its members and
their losses at that step, as a guard read every step does."""
from __future__ import annotations

import math
import re

import pytest
import torch

from theory import data
from theory import DivergenceError
from theory.sim import gd_blocks, models, train

DT = torch.float64


def _feed(guard, rows):
    """Note ``rows`` (steps 0, 1, …) and read at the end: the first hit, as the trainers do."""
    for t, r in enumerate(rows):
        hit = guard.note(t, torch.tensor(r, dtype=DT, device="cpu"))
        if hit is not None:
            return hit
    return guard.read()


@pytest.mark.parametrize("every", [1, 3, 4, 64])
def test_first_divergence_inside_and_across_chunks(every):
    """Member 1 passes the blow-up threshold at step 5 (mid-chunk for K = 3, 4; at a chunk's start for K = 1),
    member 0 turns NaN at step 6 and member 2 never diverges: the read names step 5, member 1 and its loss there."""
    rows = [[1.0, 1.0, 1.0]] * 5 + [[1.0, 2e8, 1.0], [math.nan, math.inf, 1.0], [math.nan, math.nan, 1.0]]
    step, bad, cur = _feed(gd_blocks.ChunkGuard(1e8, every), rows)
    assert step == 5 and bad.tolist() == [False, True, False] and cur.tolist() == rows[5]
    rows[5] = [1.0, 1e8, 1.0]  # at the threshold (not above it): the first divergence is now step 6, two members
    step, bad, cur = _feed(gd_blocks.ChunkGuard(1e8, every), rows)
    assert step == 6 and bad.tolist() == [True, True, False]
    assert _feed(gd_blocks.ChunkGuard(1e8, every), rows[:6]) is None
    assert _feed(gd_blocks.ChunkGuard(0, every), [[1.0], [1e300], [2.0]]) is None  # blowup 0: non-finite only
    assert _feed(gd_blocks.ChunkGuard(0, every), [[1.0], [1e300], [math.inf]])[0] == 2


def test_guard_rejects_gaps_and_bad_chunks():
    g = gd_blocks.ChunkGuard(1e8, 4)
    g.note(0, torch.ones(2, dtype=DT, device="cpu"))
    with pytest.raises(ValueError, match="step 2 noted after step 0"):
        g.note(2, torch.ones(2, dtype=DT, device="cpu"))
    with pytest.raises(ValueError, match="positive number of steps"):
        gd_blocks.ChunkGuard(1e8, 0)


def _error(fn):
    with pytest.raises(DivergenceError) as err:
        fn()
    m = re.search(r"step (\d+): loss of ensemble members \[([\d, ]*)\] is \[([^\]]*)\]", str(err.value))
    return int(m.group(1)), m.group(2), m.group(3)


def _setup():
    """Linear least squares (a depth-1 linear DeepMLP) on 6 unit inputs in R^4: with rate η > 2/λ_max(H), H = XᵀX/N,
    the loss grows geometrically and crosses 10⁸ × its initial value at a step known in closed form."""
    X = data.unit_sphere(6, 4, generator=torch.Generator().manual_seed(0), device="cpu")
    Y = torch.randn(6, dtype=DT, generator=torch.Generator().manual_seed(1), device="cpu") * 10
    base = models.DeepMLP.init(4, [4, 1], act="linear", generator=torch.Generator().manual_seed(2), device="cpu")
    lam = float(torch.linalg.eigvalsh(X.T @ X / 6).max())
    lr = torch.tensor([0.01, 2.3 / lam, 0.01, 2.5 / lam], dtype=DT, device="cpu")
    return X, Y, base, lr


def _closed_form_first_step(X, Y, w0, eta, blowup=1e8, horizon=200):
    """First t with L(w_t) > blowup · L(w_0) for w_t = w* + (I − ηH)^t (w_0 − w*) (exact GD on ½ mean (Xw − y)²),
    and L(w_t) / threshold at that step (the margin: far from 1 so rounding cannot move the step)."""
    H, b = X.T @ X / X.shape[0], X.T @ Y / X.shape[0]
    lam, V = torch.linalg.eigh(H)
    ws = torch.linalg.solve(H, b)
    c0 = V.T @ (w0 - ws)
    loss = lambda w: 0.5 * float(((X @ w - Y) ** 2).mean())  # noqa: E731
    thr = blowup * loss(w0)
    for t in range(1, horizon):
        lt = loss(ws + V @ ((1 - eta * lam) ** t * c0))
        if lt > thr:
            return t, lt / thr
    raise AssertionError("no divergence within the horizon")


def _run(base, X, Y, lr, steps, engine, every):
    net = models.DeepMLP([w.clone() for w in base.weights], base.act, base.alpha)
    return train.gd(net, X, Y, loss="squared", lr=lr, steps=steps, record=[0], engine=engine, guard_every=every)


@pytest.mark.parametrize("engine", ["autograd", "analytic"])
def test_gd_reports_the_first_diverging_step_mid_chunk(engine):
    """Members 1 and 3 (rates 2.3/λ_max and 2.5/λ_max) diverge at steps known in closed form, both inside the first
    chunk of K = 64 (and not multiples of K = 5, not recorded). The chunked guard reports the earlier step, member
    3 alone and its loss there, exactly as a guard read every step (K = 1); and a run of s − 1 steps completes."""
    X, Y, base, lr = _setup()
    (s1, m1), (s3, m3) = (_closed_form_first_step(X, Y, base.weights[0][e, 0], float(lr[e])) for e in (1, 3))
    assert s3 < s1 < gd_blocks.GUARD_EVERY and s3 % 5 and s1 % 5 and min(m1, m3) > 1.01, (s1, s3, m1, m3)
    ref = _error(lambda: _run(base, X, Y, lr, 200, engine, 1))
    assert ref[0] == s3 and ref[1] == "3"
    for every in (5, gd_blocks.GUARD_EVERY):
        assert _error(lambda: _run(base, X, Y, lr, 200, engine, every)) == ref
    _run(base, X, Y, lr, s3 - 1, engine, gd_blocks.GUARD_EVERY)


def test_the_guard_is_read_once_per_chunk(monkeypatch):
    """200 steps, records at 0 and 200, K = 64: each block of the analytic engine reads its guard after steps 0
    (its own segment), 64, 128, 192 and 200: 5 reads, not 201."""
    X, Y, base, _ = _setup()
    reads = {}
    orig = gd_blocks.ChunkGuard.read
    monkeypatch.setattr(gd_blocks.ChunkGuard, "read",
                        lambda self: reads.__setitem__(id(self), reads.get(id(self), 0) + 1) or orig(self))
    net = models.DeepMLP([w.clone() for w in base.weights], base.act, base.alpha)
    train.gd(net, X, Y, loss="squared", lr=0.01, steps=200, record=[0, 200], engine="analytic")
    assert reads and set(reads.values()) == {5}
