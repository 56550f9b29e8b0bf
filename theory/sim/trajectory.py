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
    # the recorded losses live in one buffer grown by doubling (``loss`` holds row views): a clone per step of a
    # run that records every step interleaves 10⁵ tiny allocations with the step's large temporaries and
    # fragments the heap (a Kou run reached 23 GB that way)
    _buf: torch.Tensor | None = field(default=None, repr=False)
    _n: int = field(default=0, repr=False)

    def loss_tensor(self) -> torch.Tensor:
        return torch.stack(self.loss)

    def stacked(self, key: str) -> torch.Tensor:
        return torch.stack(self.obs[key])

    def _add(self, step: int, loss: torch.Tensor, extra: dict | None) -> None:
        self.steps.append(step)
        v, b = loss.detach(), self._buf
        if b is not None and (b.shape[1:] != v.shape or b.dtype != v.dtype or b.device != v.device):
            self.loss.append(v.clone())  # a loss unlike the buffer's rows: kept apart
        else:
            if b is None:
                b = v.new_empty((64, *v.shape))
            elif self._n == b.shape[0]:
                grown = b.new_empty((2 * self._n, *v.shape))
                grown[: self._n] = b
                b = grown  # earlier rows stay views of the previous buffer (same values)
            b[self._n].copy_(v)
            self.loss.append(b[self._n])
            self._buf, self._n = b, self._n + 1
        self._add_extra(extra)

    def _add_extra(self, extra: dict | None) -> None:
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
