"""The run context handed to every check: device, dtype, profile, seed offset.

``ctx.generator(claim_id, config)`` gives a CPU torch.Generator seeded from
(claim ID, configuration, --seed) only, so numbers do not depend on the worker,
on test order or on the run's device (draws are made on the CPU, then moved:
issue 33). ``ctx.pick(quick=..., full=...)`` chooses per-profile settings.

Profiles: ``quick`` (CPU-sized), ``full`` (the papers' scales) and ``smoke``, the full profile at reduced size,
derived from ``full`` by one rule: ``ctx.full`` is True (every full-only branch runs: MNIST paths, paper SGD,
chunked evaluation), ``ctx.pick`` returns the quick value (each quick grid is the small version of its full grid),
and every size that exists only in a full-only branch is written once, at its full value, through
``ctx.size(n, floor=...)``: ``n`` in quick and full, ``max(floor, ceil(n * scale))`` in smoke (``--scale``,
default 0.01). A smoke run tests that the code runs; its verdicts are not compared with the papers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .. import device as _device
from ..seeding import derive_seed

PROFILES = ("quick", "full", "smoke")
DEFAULT_SCALE = 0.01  # smoke: full-only sizes times this (ctx.size)


@dataclass(frozen=True)
class RunContext:
    device: torch.device
    profile: str = "quick"
    seed: int = 0
    dtype: torch.dtype = _device.DEFAULT_DTYPE
    scale: float = DEFAULT_SCALE  # used by the smoke profile only

    def __post_init__(self):
        if self.profile not in PROFILES:
            raise ValueError(f"unknown profile {self.profile!r}: choose one of {PROFILES}")
        if not 0 < self.scale <= 1:
            raise ValueError(f"--scale must be in (0, 1], got {self.scale}")

    @classmethod
    def default(cls, profile: str = "quick", seed: int = 0, device: str = "auto") -> "RunContext":
        return cls(_device.resolve(device), profile, seed)

    @property
    def full(self) -> bool:
        """True in the full profile and in its reduced-size smoke run (full-only branches run in both)."""
        return self.profile in ("full", "smoke")

    @property
    def smoke(self) -> bool:
        """The full profile at reduced size: verdicts are not compared with the papers."""
        return self.profile == "smoke"

    def pick(self, quick, full):
        """The full-profile value in the full profile, else the quick one (the smoke run takes the quick grids)."""
        return full if self.profile == "full" else quick

    def size(self, n, floor=1):
        """A size of a full-only branch, written at its full value ``n``: ``n`` itself unless in a smoke run, where
        it is ``max(floor, ceil(n * scale))`` (an int for an int ``n``; ``floor`` keeps the code path meaningful,
        e.g. 2 seeds for a spread, a width above a dense/iterative switch)."""
        if not self.smoke:
            return n
        v = max(floor, math.ceil(n * self.scale))
        return int(v) if isinstance(n, int) else float(v)

    def sizes(self, ns, floor=1) -> list:
        """:meth:`size` of each element of a grid, duplicates dropped (order kept)."""
        return list(dict.fromkeys(self.size(n, floor) for n in ns))

    def seed_for(self, claim_id: str, config=None) -> int:
        return derive_seed(claim_id, config, self.seed)

    def generator(self, claim_id: str, config=None, device=None) -> torch.Generator:
        """A CPU generator seeded from (claim ID, configuration, --seed): the same draws on every run device. Draw
        with :func:`theory.device.draw` (made on the CPU, moved to ``ctx.device``); issue 33. ``device`` is accepted
        for callers written before that and ignored: every generator of the policy is a CPU generator."""
        return _device.generator(self.seed_for(claim_id, config))

    def tensor(self, data, dtype=None):
        return torch.as_tensor(data, dtype=dtype or self.dtype, device=self.device)
