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
the members diverging there (blocks that diverge later are not reported, as under autograd). The step
itself is :class:`theory.sim.mlp_backprop.Block`.
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


class Guarded:
    """One :class:`mlp_backprop.Block` with its initial losses and divergence threshold."""

    def __init__(self, block, eta, layer_lr, blowup):
        self.b, self.blowup = block, blowup
        self.scales = block.step_scales(eta, layer_lr)
        self.first = self.thr = None

    def check(self):
        """None, or the boolean mask of diverged members at the cached forward pass."""
        cur = self.b.loss()
        if self.first is None:
            self.first = cur.clone()
            big = torch.finfo(cur.dtype).max
            self.thr = (self.blowup * self.first.clamp_min(1e-300)).clamp_max(big) if self.blowup \
                else torch.full_like(cur, big)
        elif bool((cur <= self.thr).all()):  # one comparison per step; NaN and inf fail it
            return None
        bad = bad_members(cur, self.first, self.blowup)
        return bad if bool(bad.any()) else None

    def advance(self, t0: int, t1: int, check_t0: bool):
        """Steps t0 → t1, guarding each step after t0 (and t0 when asked); returns (step, mask) at the first
        divergence, else None with the (exact) forward pass at t1 cached."""
        with torch.no_grad():
            for t in range(t0, t1 + 1):
                if t == t1 and t > t0:
                    self.b.refresh()  # the forward pass at a segment's end is exact (no Gram updates)
                if t > t0 or check_t0:
                    bad = self.check()
                    if bad is not None:
                        self.b.flush()
                        return t, bad
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


def run(model, net, eta, layer_lr, steps, rec, observe, blowup) -> Trajectory:
    """:func:`theory.sim.train.gd` on ``net`` (:func:`mlp_backprop.build`) with rates ``eta`` (E,) and
    ``layer_lr``; record set ``rec``."""
    params = model.params
    E, dev = params[0].shape[0], params[0].device
    threads = torch.get_num_threads() if dev.type == "cpu" else 1
    ranges = block_ranges(net, E, dev, workers=threads)
    blocks = [Guarded(mlp_backprop.Block(net, e0, e1), eta[e0:e1], layer_lr, blowup) for e0, e1 in ranges]
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
                    for (s, bad), g in found:
                        if s == step:
                            idx += (bad.nonzero().flatten() + g.b.e0).tolist()
                            cur += g.b.loss()[bad].tolist()
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
