"""Cached OPT-SPEED runs shared by several checks of this paper (computed once per worker)."""
from __future__ import annotations

import functools

import torch

from fixtures import data
from theory.papers.bantzis2025 import opt_speed as O


@functools.lru_cache(maxsize=8)
def circle_widths_run(profile: str, seed: int, device: str):
    """Fig. 2 protocol: depth 3 on the circle data, widths 1..16 (1..64 full), R restarts each."""
    from theory.harness.context import RunContext

    ctx = RunContext(torch.device(device), profile, seed)
    X, G = data.unit_circle_8(device=ctx.device)
    widths = ctx.pick(quick=[1, 2, 4, 8, 16], full=[1, 2, 4, 8, 16, 32, 64])
    R = ctx.pick(quick=64, full=2000)
    T = ctx.pick(quick=900, full=5000)
    gen = ctx.generator("bantzis2025/fig-2", {"widths": widths, "R": R, "T": T})
    res = O.opt_speed(X, G, 3, widths=widths, restarts=R, steps_a=T, steps_b=T, generator=gen, snapshots=40)
    return res, {"widths": widths, "restarts": R, "steps_a": T, "steps_b": T, "init": "balanced Gaussian"}


@functools.lru_cache(maxsize=8)
def circle_optimum(profile: str, seed: int, device: str, depth: int = 3):
    """Best OPT-SPEED point on the circle data at ``depth`` (width 8), for the low-rank checks."""
    from theory.harness.context import RunContext

    ctx = RunContext(torch.device(device), profile, seed)
    X, G = data.unit_circle_8(device=ctx.device)
    R, T = ctx.pick(quick=32, full=1024), ctx.pick(quick=750, full=5000)
    gen = ctx.generator("bantzis2025/thm-3.1", {"depth": depth, "R": R, "T": T})
    res = O.opt_speed(X, G, depth, width=8, restarts=R, steps_a=T, steps_b=T, generator=gen)
    return res.member(res.best_index()), res.best
