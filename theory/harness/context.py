"""The run context handed to every check: device, dtype, profile, seed offset.

``ctx.generator(claim_id, config)`` gives a torch.Generator seeded from
(claim ID, configuration, --seed) only, so numbers do not depend on the worker
or on test order. ``ctx.pick(quick=..., full=...)`` chooses per-profile settings.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import device as _device
from ..seeding import derive_seed

PROFILES = ("quick", "full")


@dataclass(frozen=True)
class RunContext:
    device: torch.device
    profile: str = "quick"
    seed: int = 0
    dtype: torch.dtype = _device.DEFAULT_DTYPE

    def __post_init__(self):
        if self.profile not in PROFILES:
            raise ValueError(f"unknown profile {self.profile!r}: choose one of {PROFILES}")

    @classmethod
    def default(cls, profile: str = "quick", seed: int = 0, device: str = "auto") -> "RunContext":
        return cls(_device.resolve(device), profile, seed)

    @property
    def full(self) -> bool:
        return self.profile == "full"

    def pick(self, quick, full):
        """The quick-profile or full-profile value."""
        return full if self.full else quick

    def seed_for(self, claim_id: str, config=None) -> int:
        return derive_seed(claim_id, config, self.seed)

    def generator(self, claim_id: str, config=None, device=None) -> torch.Generator:
        return _device.generator(self.seed_for(claim_id, config), device or self.device)

    def tensor(self, data, dtype=None):
        return torch.as_tensor(data, dtype=dtype or self.dtype, device=self.device)
