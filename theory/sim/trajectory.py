"""What a training run records, and its divergence guard (shared by the engines of :mod:`theory.sim.train`).

- :class:`Trajectory` — recorded steps, per-member losses (T, E), observer outputs.
- :func:`bad_members` / :func:`divergence_error` / :func:`guard` — a member diverges when its loss is not
  finite or exceeds ``blowup`` × its initial loss; the error names the step and the members.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..errors import DivergenceError


@dataclass
class Trajectory:
    """What a run recorded: times, per-member losses (T, E), and observer outputs."""

    steps: list = field(default_factory=list)
    loss: list = field(default_factory=list)
    obs: dict = field(default_factory=dict)

    def loss_tensor(self) -> torch.Tensor:
        return torch.stack(self.loss)

    def stacked(self, key: str) -> torch.Tensor:
        return torch.stack(self.obs[key])

    def _add(self, step: int, loss: torch.Tensor, extra: dict | None) -> None:
        self.steps.append(step)
        self.loss.append(loss.detach().clone())
        for k, v in (extra or {}).items():
            self.obs.setdefault(k, []).append(v.detach().clone() if isinstance(v, torch.Tensor) else v)


def bad_members(cur: torch.Tensor, first: torch.Tensor, blowup: float) -> torch.Tensor:
    """Members whose loss is not finite or above ``blowup`` × the initial loss (boolean mask)."""
    bad = ~torch.isfinite(cur)
    if blowup:
        bad = bad | (cur > blowup * first.clamp_min(1e-300))
    return bad


def divergence_error(step: int, idx: list, cur: list, first: list) -> DivergenceError:
    return DivergenceError(f"GD diverged at step {step}: loss of ensemble members {idx[:10]} is "
                           f"{cur[:10]} (initial {first[:10]})")


def guard(step: int, cur: torch.Tensor, first: torch.Tensor, blowup: float) -> None:
    bad = bad_members(cur, first, blowup)
    if bool(bad.any()):
        raise divergence_error(step, bad.nonzero().flatten().tolist(), cur[bad].tolist(), first[bad].tolist())
