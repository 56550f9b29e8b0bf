"""The analytic engine of :func:`theory.sim.train.gd`: blocks of ensemble members, each run on its own from
one recorded step to the next (issue 17).

The members are independent, so between two recorded steps (or the start and the end) a block of them can
take all its steps before the next block starts: on CPU a block's weights and activations
(:data:`BLOCK_BYTES`) then stay in the last-level cache for the whole segment, where one batched step over
the whole ensemble would stream every weight from memory twice per step. With several intra-op threads and
several blocks, the blocks run on as many Python worker threads, each with single-threaded kernels (torch
releases the GIL inside its kernels): no cross-core barrier per small GEMM, which on a shared machine costs
more than the GEMM. One block of all members on other devices.

Each block guards every step as the autograd engine does; the error names the earliest diverging step and
the members diverging there (blocks that diverge later are not reported, as under autograd). The guard is
read on the host once per :data:`GUARD_EVERY` steps, not every step (issue 33: on CUDA each read is a host
synchronisation): each step's losses are kept on the device in a :class:`ChunkGuard`, and a read finds the
first diverging step of its chunk, so the error is the one a per-step guard raises (the members then stand
up to ``GUARD_EVERY − 1`` steps further). The step itself is :class:`theory.sim.mlp_backprop.Block`.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import torch

from . import mlp_backprop
from .trajectory import Trajectory, bad_members, divergence_error

BLOCK_BYTES = 8 << 20
"""CPU: the weights and activations of one block (one member: :func:`mlp_backprop.member_bytes`)."""


def block_ranges(net, E: int, device: torch.device, block_bytes: int | None = None,
                 workers: int = 1) -> list[tuple[int, int]]:
    """Member ranges [e0, e1) covering 0..E in order, sizes within one of each other: at most ``block_bytes``
    per block on CPU (at least one member), and at least ``workers`` blocks when E allows."""
    per = E
    if device.type == "cpu":
        budget = BLOCK_BYTES if block_bytes is None else block_bytes
        per = max(1, min(E, budget // max(1, mlp_backprop.member_bytes(net, net.X.shape[1]))))
        per = min(per, -(-E // max(1, workers)))
    n = -(-E // per)
    per = -(-E // n)
    return [(e0, min(E, e0 + per)) for e0 in range(0, E, per)]


GUARD_EVERY = 64
"""Steps between two host reads of the divergence guard (:class:`ChunkGuard`); every recorded step and the last
step are read as well. The losses of a chunk cost ``GUARD_EVERY`` × (members) numbers of device memory."""


class ChunkGuard:
    """The divergence guard of a step loop without a host read per step (issue 33).

    :meth:`note` stores step t's per-member losses (c,) in a (K, c) device buffer (one copy, no synchronisation);
    :meth:`read` (called by :meth:`note` every ``every`` steps, and by the loop before it records or ends) reads
    the chunk on the host and returns ``(step, mask, losses)`` of the first step in it where a member's loss is
    not finite or above ``blowup`` × its loss at the first noted step (the rule of
    :func:`theory.sim.trajectory.bad_members`), else None. Steps must be noted consecutively."""

    def __init__(self, blowup: float, every: int = GUARD_EVERY):
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"the guard's chunk must be a positive number of steps, got {every!r}")
        self.blowup, self.every = blowup, every
        self.first = self.thr = self.buf = None
        self.k = self.t0 = 0

    def note(self, t: int, cur: torch.Tensor):
        """Keep step ``t``'s losses ``cur`` (c,); a read's result when this fills the chunk, else None."""
        if self.first is None:
            self.first = cur.detach().clone()
            big = torch.finfo(cur.dtype).max
            self.thr = (self.blowup * self.first.clamp_min(1e-300)).clamp_max(big) if self.blowup \
                else torch.full_like(self.first, big)
            self.buf = cur.new_empty((self.every, *cur.shape))
        if self.k == 0:
            self.t0 = t
        elif t != self.t0 + self.k:
            raise ValueError(f"guard: step {t} noted after step {self.t0 + self.k - 1}")
        self.buf[self.k].copy_(cur)
        self.k += 1
        return self.read() if self.k == self.every else None

    def read(self):
        """Host read of the steps noted since the last read: ``(step, mask, losses)`` at the first divergence."""
        k, self.k = self.k, 0
        if k == 0:
            return None
        rows = self.buf[:k]
        if bool((rows <= self.thr).all()):  # one comparison per chunk; NaN and inf fail it
            return None
        bad = bad_members(rows, self.first, self.blowup)
        hit = bad.reshape(k, -1).any(1)
        if not bool(hit.any()):
            return None
        r = int(hit.nonzero()[0, 0])
        return self.t0 + r, bad[r], rows[r].clone()


class Guarded:
    """One :class:`mlp_backprop.Block` with its divergence guard (:class:`ChunkGuard`)."""

    def __init__(self, block, eta, layer_lr, blowup, every: int = GUARD_EVERY):
        self.b = block
        self.scales = block.step_scales(eta, layer_lr)
        self.guard = ChunkGuard(blowup, every)

    @property
    def first(self):
        return self.guard.first

    def advance(self, t0: int, t1: int, check_t0: bool):
        """Steps t0 → t1, guarding each step after t0 (and t0 when asked); returns (step, mask, losses) at the
        first divergence, else None with the (exact) forward pass at t1 cached. The guard is read on the host
        every :data:`GUARD_EVERY` steps and at t1."""
        hit = None
        with torch.no_grad():
            for t in range(t0, t1 + 1):
                if t == t1 and t > t0:
                    self.b.refresh()  # the forward pass at a segment's end is exact (no Gram updates)
                if t > t0 or check_t0:
                    hit = self.guard.note(t, self.b.loss())
                    if hit is None and t == t1:
                        hit = self.guard.read()
                    if hit is not None:
                        self.b.flush()
                        return hit
                if t < t1:
                    self.b.gd_step(self.scales)
            self.b.forward()
            self.b.flush()
        self.b.z0_ok = False  # an observer sees (and may touch) the weights: recompute Z_0 after the next step
        return None


@contextmanager
def _single_threaded_kernels(active: bool):
    n = torch.get_num_threads()
    if active:
        torch.set_num_threads(1)
    try:
        yield n
    finally:
        if active:
            torch.set_num_threads(n)


def run(model, net, eta, layer_lr, steps, rec, observe, blowup, guard_every: int = GUARD_EVERY) -> Trajectory:
    """:func:`theory.sim.train.gd` on ``net`` (:func:`mlp_backprop.build`) with rates ``eta`` (E,) and
    ``layer_lr``; record set ``rec``; the guard read every ``guard_every`` steps (:class:`ChunkGuard`)."""
    params = model.params
    E, dev = params[0].shape[0], params[0].device
    threads = torch.get_num_threads() if dev.type == "cpu" else 1
    ranges = block_ranges(net, E, dev, workers=threads)
    blocks = [Guarded(mlp_backprop.Block(net, e0, e1), eta[e0:e1], layer_lr, blowup, guard_every)
              for e0, e1 in ranges]
    workers = min(threads, len(blocks))
    pool = ThreadPoolExecutor(workers) if workers > 1 else None
    traj, t0 = Trajectory(), 0
    try:
        with _single_threaded_kernels(pool is not None) as n_threads:
            for t1 in sorted({0, steps} | {t for t in rec if 0 <= t <= steps}):
                seg = lambda g, t0=t0, t1=t1: g.advance(t0, t1, t1 == 0)  # noqa: E731
                hits = list(pool.map(seg, blocks)) if pool else [seg(g) for g in blocks]
                found = [(h, g) for h, g in zip(hits, blocks) if h is not None]
                if found:
                    step = min(h[0] for h, _ in found)
                    idx, cur, first = [], [], []
                    for (s, bad, losses_s), g in found:
                        if s == step:
                            idx += (bad.nonzero().flatten() + g.b.e0).tolist()
                            cur += losses_s[bad].tolist()
                            first += g.first[bad].tolist()
                    raise divergence_error(step, idx, cur, first)
                if t1 in rec:
                    u = torch.cat([g.b.forward() for g in blocks])  # a copy: observers may keep it
                    cur = torch.cat([g.b.loss() for g in blocks])
                    traj._add(t1, cur, _observe(observe, t1, params, u, pool is not None, n_threads))
                t0 = t1
    finally:
        if pool is not None:
            pool.shutdown()
        for p in params:
            p.requires_grad_(False)
    return traj


def _observe(observe, t, params, u, restore: bool, n_threads: int):
    """``observe(t, params, u)`` as under autograd: grad mode on, parameters requiring grad, and the caller's
    intra-op thread count."""
    if not observe:
        return None
    if restore:
        torch.set_num_threads(n_threads)
    for p in params:
        p.requires_grad_(True)
    try:
        return observe(t, params, u)
    finally:
        for p in params:
            p.requires_grad_(False)
        if restore:
            torch.set_num_threads(1)
