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
    allocations with each step's large temporaries and fragments the heap (a Kou full-profile run reached 23 GB).

    >>> import torch
    >>> buf = RowBuffer()
    >>> for k in range(3):
    ...     _ = buf.append(torch.full((2,), float(k)))
    >>> buf.tensor().tolist()
    [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
    """

    def __init__(self):
        self.buf: torch.Tensor | None = None
        self.n = 0

    def fits(self, v: torch.Tensor) -> bool:
        """Whether the row ``v`` has the shape, dtype and device of the rows so far (True while empty)."""
        b = self.buf
        return b is None or (b.shape[1:] == v.shape and b.dtype == v.dtype and b.device == v.device)

    def append(self, v: torch.Tensor) -> torch.Tensor:
        """Copy the row ``v`` in (growing the buffer by doubling when full); return the stored row's view."""
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
        """The rows so far, (n, *row shape) (a view; ValueError when none was appended)."""
        if self.buf is None:
            raise ValueError("no rows were appended")
        return self.buf[: self.n]


@dataclass
class Trajectory:
    """What a run recorded: times, per-member losses (T, E), and observer outputs.

    Returned by :func:`theory.sim.train.gd` (and ``gd_hidden``, ``adam``, ``sgd``): ``steps`` are the recorded
    steps (``record=``), ``loss_tensor()`` the losses there (len(steps), E), and ``stacked(key)`` the values that
    ``observe(step, params, outputs)`` returned under ``key``, stacked on a leading step axis.

    >>> import torch
    >>> from theory.sim import models, train
    >>> net = models.DeepMLP.init(2, [3, 4, 1], act="relu", generator=torch.Generator().manual_seed(0), device="cpu")
    >>> X, y = torch.eye(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    >>> traj = train.gd(net, X, y, loss="squared", lr=0.1, steps=10, record=[0, 5, 10],
    ...                 observe=lambda step, params, outputs: {"W1 norm": params[0].norm(dim=(1, 2))})
    >>> traj.steps, tuple(traj.loss_tensor().shape), tuple(traj.stacked("W1 norm").shape)
    ([0, 5, 10], (3, 2), (3, 2))
    """

    steps: list = field(default_factory=list)
    loss: list = field(default_factory=list)
    obs: dict = field(default_factory=dict)
    # the recorded losses live in one RowBuffer (``loss`` holds row views): no allocation per recorded step
    _rows: RowBuffer = field(default_factory=RowBuffer, repr=False)

    def loss_tensor(self) -> torch.Tensor:
        """The recorded losses, (len(steps), E)."""
        return torch.stack(self.loss)

    def stacked(self, key: str) -> torch.Tensor:
        """The observed values of ``key`` stacked on a leading step axis, (len(steps), …)."""
        return torch.stack(self.obs[key])

    def _add(self, step: int, loss: torch.Tensor, extra: dict | None) -> None:
        self.steps.append(step)
        v = loss.detach()
        self.loss.append(self._rows.append(v) if self._rows.fits(v) else v.clone())  # unlike the rows: kept apart
        for k, v in (extra or {}).items():
            self.obs.setdefault(k, []).append(v.detach().clone() if isinstance(v, torch.Tensor) else v)


def bad_members(cur: torch.Tensor, first: torch.Tensor, blowup: float) -> torch.Tensor:
    """Members whose loss is not finite or above ``blowup`` × the initial loss (boolean mask).

    Args:
        cur: the current losses (E,); first: the initial losses (E,); blowup: the factor (0: finiteness only).

    >>> import torch
    >>> bad_members(torch.tensor([1.0, float("inf"), 500.0]), torch.ones(3), blowup=100).tolist()
    [False, True, True]
    """
    bad = ~torch.isfinite(cur)
    if blowup:
        bad = bad | (cur > blowup * first.clamp_min(1e-300))
    return bad


def divergence_error(step: int, idx: list, cur: list, first: list) -> DivergenceError:
    """The error for members ``idx`` diverging at ``step`` (``cur``: their losses, ``first``: their initial ones).

    >>> divergence_error(7, [2], [1e9], [0.5])
    DivergenceError('GD diverged at step 7: loss of ensemble members [2] is [1000000000.0] (initial [0.5])')
    """
    return DivergenceError(f"GD diverged at step {step}: loss of ensemble members {idx[:10]} is "
                           f"{cur[:10]} (initial {first[:10]})")


def guard(step: int, cur: torch.Tensor, first: torch.Tensor, blowup: float) -> None:
    """Raise :func:`divergence_error` at ``step`` if :func:`bad_members` (``cur``, ``first``, ``blowup``) finds any.

    >>> import torch
    >>> guard(3, torch.tensor([0.1, 0.2]), torch.ones(2), blowup=1e8)  # nothing to report
    """
    bad = bad_members(cur, first, blowup)
    if bool(bad.any()):
        raise divergence_error(step, bad.nonzero().flatten().tolist(), cur[bad].tolist(), first[bad].tolist())
