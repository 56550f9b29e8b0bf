"""OPT-SPEED: batched projected (Riemannian) gradient descent of L0 on the sphere ‖θ‖² = L.

Catalog procedure OPT-SPEED (``bantzis2025/def-2.1``, ``prop-3.2``, ``ex-1``, ``fig-2``): every
restart is one member of the ensemble axis; several hidden widths share one tensor by
zero-masking the unused neurons (a width-w net padded to width n is the same function, and
the mask keeps the padded weights at zero), so restarts × widths run as one batched program.

Step: g = ∇L0(θ) (autograd, σ'(0)=0), g_T = g − ⟨g,θ⟩θ/‖θ‖², θ ← θ − η_t g_T, θ ← √L θ/‖θ‖.
Schedule: phase A, geometric η from 0.05 to 0.002; phase B ("polish"), 0.002 to 1e-5; both
multiplied by 10/(‖X‖_F‖G‖_F) (the catalog's values are for ‖X‖‖G‖ ≈ 10).

Normalized variant (``normalized=True``, the cold-start depth chain of ``prop-3.2``): the step is an angle,
θ ← θ − η_t √L g_T/‖g_T‖, with η_t geometric from 0.1 to 1e-5 rad (:func:`angle_schedule`). At a random deep
init the gradient is tiny (the output shrinks like a product of L operator norms < 1), so a step proportional to
the gradient barely moves; an angle step does not depend on the gradient's size.

Every final speed ŝ_r = −L0(θ_r) is *achieved* by a point of the sphere, so max_r ŝ_r is a
certified lower bound on s*(L) — never an estimate of s* itself.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from . import localized as loc


@dataclass
class SpeedResult:
    """Per-restart outputs of OPT-SPEED."""

    params: list
    speeds: torch.Tensor      # ŝ_r = −L0(θ_r), (E,)
    residual: torch.Tensor    # Def-2.1 residual, NaN where ŝ_r ≤ 0
    balance: torch.Tensor     # max_ℓ |‖W_ℓ‖_F² − 1|
    widths: torch.Tensor      # hidden width of each member (E,)
    history: list             # (step, speeds) snapshots

    @property
    def best(self) -> float:
        return float(self.speeds.max())

    def best_index(self) -> int:
        return int(self.speeds.argmax())

    def member(self, i: int) -> list:
        return [w[i:i + 1].clone() for w in self.params]


def width_masks(dims: Sequence[int], widths: torch.Tensor, dtype=torch.float64):
    """0/1 masks (E, n_ℓ, n_{ℓ−1}) keeping the first ``widths[e]`` neurons of every hidden layer."""
    E = widths.shape[0]
    L = len(dims) - 1
    masks = []
    for l in range(L):
        rows = torch.ones(E, dims[l + 1], dtype=dtype, device=widths.device)
        cols = torch.ones(E, dims[l], dtype=dtype, device=widths.device)
        if l < L - 1:
            rows = (torch.arange(dims[l + 1], device=widths.device) < widths[:, None]).to(dtype)
        if l > 0:
            cols = (torch.arange(dims[l], device=widths.device) < widths[:, None]).to(dtype)
        masks.append(rows[:, :, None] * cols[:, None, :])
    return masks


def schedule(steps_a: int, steps_b: int, scale: float = 1.0) -> np.ndarray:
    """The two-phase geometric step sizes (phase A 0.05→0.002, phase B 0.002→1e-5), times ``scale``."""
    a = np.geomspace(0.05, 0.002, steps_a) if steps_a else np.zeros(0)
    b = np.geomspace(0.002, 1e-5, steps_b) if steps_b else np.zeros(0)
    return np.concatenate([a, b]) * scale


def angle_schedule(steps: int, start: float = 0.1, end: float = 1e-5) -> np.ndarray:
    """Geometric angle steps (radians) of the normalized variant, ``start`` → ``end`` over ``steps``."""
    if not isinstance(steps, int) or steps < 1 or not 0 < end <= start:
        raise ValueError(f"angle_schedule needs steps >= 1 and 0 < end <= start, got {steps}, {start}, {end}")
    return np.geomspace(start, end, steps)


def opt_speed(X: torch.Tensor, G: torch.Tensor, depth: int, *, width: int | None = None,
              widths: Sequence[int] | None = None, restarts: int = 32, steps_a: int = 750, steps_b: int = 750,
              generator=None, balanced_init: bool = True, init: Sequence[torch.Tensor] | None = None,
              lr: np.ndarray | None = None, snapshots: int = 0, normalized: bool = False) -> SpeedResult:
    """Run OPT-SPEED on (X, G) at ``depth`` L ≥ 2.

    ``width`` (uniform hidden width) or ``widths`` (a list: ``restarts`` members for each width,
    padded to the largest). ``init`` warm-starts from given weights (E members, any point; it is
    projected to the sphere). ``lr`` overrides the schedule. ``snapshots`` > 0 keeps that
    many (step, speeds) pairs for plotting. ``normalized`` takes angle steps η_t·√L·g_T/‖g_T‖ (``lr`` is then the
    angle schedule, default :func:`angle_schedule` over ``steps_a + steps_b`` steps); members with g_T = 0 stay put.
    """
    Gm = loc.check_data(X, G)
    if not isinstance(depth, int) or depth < 2:
        raise ValueError(f"depth must be an integer >= 2, got {depth!r}")
    d, o = X.shape[1], Gm.shape[1]
    if init is not None:
        params = loc.to_sphere([w.detach().clone() for w in init])
        if len(params) != depth:
            raise ValueError(f"init has {len(params)} layers, depth is {depth}")
        E = params[0].shape[0]
        wl = torch.full((E,), params[0].shape[1], dtype=torch.long, device=X.device)
        masks = None
    else:
        if (width is None) == (widths is None):
            raise ValueError("give exactly one of width= or widths=")
        ws = [width] if widths is None else list(widths)
        if any(not isinstance(w, int) or w < 1 for w in ws) or restarts < 1:
            raise ValueError(f"widths must be positive integers and restarts >= 1, got {ws}, {restarts}")
        n = max(ws)
        dims = [d] + [n] * (depth - 1) + [o]
        wl = torch.tensor(ws, device=X.device).repeat_interleave(restarts)
        E = wl.shape[0]
        masks = width_masks(dims, wl, X.dtype) if len(set(ws)) > 1 or n != ws[0] else None
        params = loc.random_sphere(E, dims, balanced=True, generator=generator, dtype=X.dtype, device=X.device)
        if masks is not None:
            params = [w * m for w, m in zip(params, masks)]
            if balanced_init:
                params = [w / w.reshape(E, -1).norm(dim=1).view(-1, 1, 1) for w in params]
        if not balanced_init:
            params = loc.to_sphere(params)
    if lr is None:
        lr = angle_schedule(steps_a + steps_b) if normalized else schedule(steps_a, steps_b,
                                                                            10.0 / float(X.norm() * Gm.norm()))
    lr = np.asarray(lr, float)
    keep = set(np.unique(np.linspace(0, len(lr), snapshots).astype(int)).tolist()) if snapshots else set()
    history = []
    for t, eta in enumerate(lr):
        if t in keep:
            history.append((t, (-loc.localized_loss(params, X, Gm)).detach().clone()))
        _, g = loc.gradient(params, X, Gm)
        with torch.no_grad():
            if masks is not None:
                g = [a * m for a, m in zip(g, masks)]
            coef = loc.inner(g, params) / loc.sq_norm(params)
            gT = [a - loc._bcast(coef, w) * w for a, w in zip(g, params)]
            step = torch.full_like(coef, float(eta))
            if normalized:
                gn = torch.sqrt(loc.sq_norm(gT))
                step = torch.where(gn > 0, step * math.sqrt(depth) / gn.clamp_min(1e-300), torch.zeros_like(step))
            params = loc.to_sphere([w - loc._bcast(step, w) * a for w, a in zip(params, gT)])
    s, res = loc.def21_residual(params, X, Gm)
    bal = (loc.layer_sq_norms(params) - 1).abs().amax(1)
    if keep:
        history.append((len(lr), s.clone()))
    return SpeedResult(params, s, res, bal, wl, history)
