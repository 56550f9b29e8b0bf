"""What a training run records, and its divergence guard (shared by the engines of :mod:`theory.sim.train`).

- :class:`Trajectory` — recorded steps, per-member losses (T, E), observer outputs.
- :class:`RowBuffer` — same-shape rows appended into one tensor grown by doubling (no allocation per step).
- :func:`bad_members` / :func:`divergence_error` / :func:`guard` — a member diverges when its loss is not
  finite or exceeds ``blowup`` × its initial loss; the error names the step and the members.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..errors import DivergenceError


class RowBuffer:
    """Rows of one shape appended into one tensor grown by doubling; ``append`` returns the row's view and
    ``tensor()`` the rows so far. A run that keeps a small tensor per step otherwise interleaves 10⁵ tiny
    allocations with each step's large temporaries and fragments the heap (a Kou full-profile run reached 23 GB)."""

    def __init__(self):
        self.buf: torch.Tensor | None = None
        self.n = 0

    def fits(self, v: torch.Tensor) -> bool:
        b = self.buf
        return b is None or (b.shape[1:] == v.shape and b.dtype == v.dtype and b.device == v.device)

    def append(self, v: torch.Tensor) -> torch.Tensor:
        b = self.buf
        if b is None:
            b = v.new_empty((64, *v.shape))
        elif self.n == b.shape[0]:
            grown = b.new_empty((2 * self.n, *v.shape))
            grown[: self.n] = b
            b = grown  # earlier rows handed out stay views of the previous buffer (same values)
        b[self.n].copy_(v)
        self.buf, self.n = b, self.n + 1
        return b[self.n - 1]

    def tensor(self) -> torch.Tensor:
        if self.buf is None:
            raise ValueError("no rows were appended")
        return self.buf[: self.n]


@dataclass
class Trajectory:
    """What a run recorded: times, per-member losses (T, E), and observer outputs."""

    steps: list = field(default_factory=list)
    loss: list = field(default_factory=list)
    obs: dict = field(default_factory=dict)
    # the recorded losses live in one RowBuffer (``loss`` holds row views): no allocation per recorded step
    _rows: RowBuffer = field(default_factory=RowBuffer, repr=False)

    def loss_tensor(self) -> torch.Tensor:
        return torch.stack(self.loss)

    def stacked(self, key: str) -> torch.Tensor:
        return torch.stack(self.obs[key])

    def _add(self, step: int, loss: torch.Tensor, extra: dict | None) -> None:
        self.steps.append(step)
        v = loss.detach()
        self.loss.append(self._rows.append(v) if self._rows.fits(v) else v.clone())  # unlike the rows: kept apart
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
