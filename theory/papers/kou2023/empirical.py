"""Kou et al. (2023) §6 / App. I empirical observations (claim kou2023/rem-6): P1 runs and summaries.

- :func:`p1_run`: one paper-§6 data draw (D-P, ``fixtures.data.kou_section6``) trained by exact
  full-batch GD (the paper's batch 64 exceeds n = 10) with the shared coefficient-space runner
  :func:`theory.papers.kou2023.setup.simulate`; several σ₀ can share the ensemble axis.
- :func:`area`: time-averaged stable rank (1/T)∫₀ᵀ srank(t) dt (trapezoid on the recorded grid),
  the "decreases faster" measure of observation (i).
- :func:`ordering`: a declared-false-alarm rank-trend test (``theory.stats.rank_trend``) of an
  ordering claim, returning the test's numbers for the record.
- :func:`bands`: mean ± 3 sd over seeds, the paper's Fig. 1–5 bands, as plot series.
"""
from __future__ import annotations

import numpy as np

from theory.papers.kou2023 import setup as ks
from theory.stats import rank_trend

# P1 (catalog "Standard configurations"): n = 10, d = 784, m = 100, η = 0.1, 50 GD steps.
P1 = ks.KouConfig(n=10, d=784, m=100, act="leaky_relu", gamma=0.1, sigma0=1e-3, eta=0.1, steps=50, data="P")


def p1_config(gamma: float, **kw) -> ks.KouConfig:
    """P1 with leaky slope ``gamma``; γ = 0 means ReLU (the paper's Fig. 1 slope 0)."""
    if gamma == 0:
        return P1.replace(act="relu", gamma=0.5, **kw)  # gamma unused for ReLU (cfg.slope = 0)
    return P1.replace(act="leaky_relu", gamma=float(gamma), **kw)


def p1_run(cfg: ks.KouConfig, data_gen, init_gen, *, record, device=None, sigma0s=None):
    """Train ``cfg`` on one D-P draw (``data_gen``) from one initialization draw (``init_gen``),
    recording srank(W_j) at the steps ``record``. Returns the :class:`~setup.KouRun`."""
    data = ks.make_data(cfg, data_gen, device=device)
    net = ks.make_net(cfg, data, init_gen, sigma0s=sigma0s)
    return ks.simulate(cfg, data, net, record=record, observe=("srank", "loss"), sigma0s=sigma0s)


def area(t, y) -> float:
    """(1/T)∫₀ᵀ y dt by the trapezoid rule on the grid ``t`` (observation (i): 'decreases faster')."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    if t.ndim != 1 or t.shape != y.shape or t.size < 2 or np.any(np.diff(t) <= 0):
        raise ValueError("area needs matching 1-d t (strictly increasing, ≥ 2 points) and y")
    return float(np.trapezoid(y, t) / (t[-1] - t[0]))


def ordering(levels, values, *, direction: str, alpha: float = 0.01) -> dict:
    """Rank-trend test that ``values`` move in ``direction`` ('down' or 'up') as ``levels`` grow.

    ``levels`` and ``values`` are (seeds, k) arrays: every seed (one data + initialization draw) is a
    block that sees all k levels. The test is the one-sided Spearman test of
    :func:`theory.stats.rank_trend` (false-alarm rate ``alpha`` under no association) applied to the
    within-seed-centred log values log v − mean_seed(log v), which removes the seed-to-seed offset of
    the stable rank (a blocked design); the pooled, uncentred test is reported alongside as
    ``pooled_p``. Returns {rho, p, alpha, holds, pooled_rho, pooled_p}."""
    if direction not in ("down", "up"):
        raise ValueError(f"direction must be 'down' or 'up', got {direction!r}")
    lev, val = np.asarray(levels, float), np.asarray(values, float)
    if lev.ndim != 2 or lev.shape != val.shape or lev.shape[1] < 2:
        raise ValueError(f"ordering needs matching (seeds, k≥2) arrays, got {lev.shape}, {val.shape}")
    if not np.all(val > 0):
        raise ValueError("ordering needs positive values (it compares log values within a seed)")
    alt = "less" if direction == "down" else "greater"
    lv = np.log(val)
    cen = lv - lv.mean(1, keepdims=True)
    rho, p, sig = rank_trend(lev.ravel(), cen.ravel(), alpha=alpha, alternative=alt)
    prho, pp, _ = rank_trend(lev.ravel(), val.ravel(), alpha=alpha, alternative=alt)
    return {"rho": rho, "p": p, "alpha": alpha, "holds": sig, "pooled_rho": prho, "pooled_p": pp}


def bands(t, Y, label: str, *, ylabel: str = "srank(W_{+1})", plot: str | None = None, logx: bool = False) -> dict:
    """Series mean, mean − 3 sd, mean + 3 sd over the seed axis (axis 1 of ``Y`` (T, seeds))."""
    t = np.asarray(t, float)
    Y = np.asarray(Y, float)
    mu, sd = Y.mean(1), Y.std(1, ddof=1)
    out = {}
    for name, v in ((f"{label} mean", mu), (f"{label} −3sd", mu - 3 * sd), (f"{label} +3sd", mu + 3 * sd)):
        s = {"x": t.tolist(), "y": v.tolist(), "xlabel": "GD step t", "ylabel": ylabel, "logx": logx, "logy": False}
        if plot:
            s["plot"] = plot
        out[name] = s
    return out
