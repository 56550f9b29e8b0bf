"""Kou et al. (2023) §6 / App. I empirical observations (claim kou2023/rem-6): runs and the tests that judge them.

- :func:`slope_sweep`: seeds × leaky slopes γ in one ensemble (observation (i), Fig. 1): every seed has its
  own data draw (the paper's §6 D-P data, ``fixtures.data.kou_section6``, or a shared real task) and W(0),
  shared by its γ values; trained by exact full-batch GD in coefficient space
  (:func:`theory.sim.train.gd_hidden` with per-member inputs and :func:`theory.sim.activations.member_slopes`;
  the paper's batch 64 exceeds n = 10, so its SGD is full-batch GD).
- :func:`task_run`: the same protocol on a fixed real two-class task (shipped 8×8 digits, or MNIST from a
  local file): the data are shared, so initialization seeds × σ₀ go on the ensemble axis (one call).
- :func:`area`: time-averaged stable rank (1/T)∫₀ᵀ srank(t) dt (trapezoid on the recorded grid),
  the "decreases faster" measure of observation (i).
- :func:`ordering`: Page's L test of an ordering across k levels within blocks (seeds), with its exact
  null distribution (independent uniform permutations within each block): the declared α is the actual
  false-alarm rate.
- :func:`paired_shift`: exact sign-flip test that one level's values exceed another's within blocks.
- :func:`bands`: mean ± 3 sd over seeds, the paper's Fig. 1–5 bands, as plot series.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import torch
from scipy import stats as st

from theory import data as fdata
from theory.papers.kou2023 import setup as ks
from theory.papers.kou2023.stable_rank import srank_from_gram
from theory.sim import activations as acts
from theory.sim import models, train
from theory.stats import rank_trend
from ...device import draw_device

# P1 (catalog "Standard configurations"): n = 10, d = 784, m = 100, η = 0.1, 50 GD steps.
P1 = ks.KouConfig(n=10, d=784, m=100, act="leaky_relu", gamma=0.1, sigma0=1e-3, eta=0.1, steps=50, data="P")
# The same protocol on the shipped digits (d = 64): n = 50 ≤ 64 images (batch 64 ≥ n: SGD is full-batch GD,
# as for P1), η = 0.1, 50 steps; raw pixels in [0, 1] as in the paper's MNIST runs.
DIGITS = ks.KouConfig(n=50, d=64, m=100, act="leaky_relu", gamma=0.1, sigma0=1e-3, eta=0.1, steps=50, data="D",
                      digits=(3, 8))


def p1_config(gamma: float, base: ks.KouConfig = P1, **kw) -> ks.KouConfig:
    """``base`` (P1 or DIGITS) with leaky slope ``gamma``; γ = 0 means ReLU (the paper's Fig. 1 slope 0)."""
    if gamma == 0:
        return base.replace(act="relu", gamma=0.5, **kw)  # gamma unused for ReLU (cfg.slope = 0)
    return base.replace(act="leaky_relu", gamma=float(gamma), **kw)


def slope_sweep(cfg: ks.KouConfig, datas, W0s, gammas, *, steps: int | None = None, record) -> dict:
    """Seeds × slopes on one ensemble axis: seed s has data ``datas[s]`` (a :class:`~setup.KouData`; the same
    object may repeat for a fixed task) and initial weights ``W0s[s]`` (2, m, d); each is trained with every
    slope in ``gammas`` (0 = ReLU, σ'(0) = 1), member e = s·len(gammas) + k, with the step size ``cfg.eta`` for
    ``steps`` (default ``cfg.steps``) exact GD steps. Returns ``srank`` (T, seeds, γ) of W_{+1} and ``loss``
    (T, seeds, γ) at the steps ``record``, and ``hyp`` {γ: [hypothesis report per seed]} (cfg's act/γ
    replaced by each slope)."""
    if cfg.eta is None:
        raise ValueError("slope_sweep needs a fixed step size cfg.eta")
    S, G = len(datas), len(gammas)
    if S == 0 or G == 0 or len(W0s) != S:
        raise ValueError(f"slope_sweep needs ≥ 1 seed and slope and one W(0) per data set, got {S}, {G}, {len(W0s)}")
    W0 = torch.stack([torch.as_tensor(w) for w in W0s])
    if W0.shape[1:] != (2, cfg.m, cfg.d):
        raise ValueError(f"W0s must be (2, {cfg.m}, {cfg.d}) each, got {tuple(W0.shape[1:])}")
    rep = lambda t: t.repeat_interleave(G, 0)  # noqa: E731  (seed s → members s·G … s·G + G − 1)
    X, y = rep(torch.stack([d.X for d in datas])), rep(torch.stack([d.y for d in datas]))
    net = models.TwoClassNet(rep(W0).clone(), acts.member_slopes(list(gammas) * S))
    m = cfg.m

    def observe(_, state, u):
        Wp = state.weights()[:, :m]  # W_{+1}: (E, m, d); its m×m Gram carries the spectrum (d-free eigensolve)
        return {"srank": srank_from_gram(Wp @ Wp.transpose(-1, -2))}

    traj, _ = train.gd_hidden(net, X, y, loss="logistic", lr=cfg.eta, steps=cfg.steps if steps is None else steps,
                              record=record, observe=observe, write_back=False)
    T = len(traj.steps)
    hyp = {g: [ks.hypotheses(p1_config(g, cfg), d, w.unsqueeze(0), cfg.eta) for d, w in zip(datas, W0)]
           for g in gammas}
    return {"t": np.asarray(traj.steps), "srank": traj.stacked("srank").reshape(T, S, G).cpu().numpy(),
            "loss": traj.loss_tensor().reshape(T, S, G).cpu().numpy(), "hyp": hyp}


def task_data(X: torch.Tensor, labels: torch.Tensor, a: int, b: int, n: int, generator=None) -> ks.KouData:
    """A balanced two-class subset (n/2 images of class ``a`` labelled +1, n/2 of ``b`` labelled −1) of an
    image set (e.g. MNIST from ``fixtures.real.load_mnist``); pixels as given."""
    if n % 2 or n <= 0:
        raise ValueError(f"n must be a positive even number, got {n}")
    ia, ib = (labels == a).nonzero().flatten(), (labels == b).nonzero().flatten()
    if len(ia) < n // 2 or len(ib) < n // 2:
        raise ValueError(f"need {n // 2} images of each class, have {len(ia)} of {a} and {len(ib)} of {b}")
    pick = lambda i: i[torch.randperm(len(i), generator=generator, device=draw_device(generator, "cpu")).to(i.device)[: n // 2]]  # noqa: E731
    idx = torch.cat([pick(ia), pick(ib)])
    Xs = X[idx]
    y = torch.cat([torch.ones(n // 2, device=X.device), -torch.ones(n // 2, device=X.device)]).to(X)
    G = Xs @ Xs.T
    return ks.KouData(Xs, y, G, G.diagonal().clone(), fdata.stats(Xs))


def task_run(cfg: ks.KouConfig, data: ks.KouData, init_gen, *, sigma0s, record):
    """``cfg`` on the fixed task ``data`` with E = len(sigma0s) members (seeds × σ₀ flattened by the caller)."""
    if cfg.E != len(sigma0s):
        raise ValueError(f"cfg.E = {cfg.E} but {len(sigma0s)} sigma0s")
    net = ks.make_net(cfg, data, init_gen, sigma0s=list(sigma0s))
    return ks.simulate(cfg, data, net, record=record, observe=("srank", "loss"), sigma0s=list(sigma0s))


def area(t, y) -> float:
    """(1/T)∫₀ᵀ y dt by the trapezoid rule on the grid ``t`` (observation (i): 'decreases faster')."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    if t.ndim != 1 or t.shape != y.shape or t.size < 2 or np.any(np.diff(t) <= 0):
        raise ValueError("area needs matching 1-d t (strictly increasing, ≥ 2 points) and y")
    return float(np.trapezoid(y, t) / (t[-1] - t[0]))


def _page_null(k: int, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact null distribution of Page's L = Σ_blocks Σ_j j·r_j (r a uniform permutation of 1..k per block):
    (support, pmf)."""
    if k > 8:
        raise ValueError(f"exact Page null enumerates k! permutations; k={k} > 8 is not supported")
    js = np.arange(1, k + 1)
    vals = np.array([int(js @ np.array(p)) for p in itertools.permutations(js)])
    lo = int(vals.min())
    one = np.bincount(vals - lo).astype(float) / len(vals)
    pmf = np.array([1.0])
    for _ in range(blocks):
        pmf = np.convolve(pmf, one)
    return lo * blocks + np.arange(len(pmf)), pmf


def ordering(levels, values, *, direction: str, alpha: float = 0.01) -> dict:
    """Page's L test that ``values`` move in ``direction`` ('down' or 'up') as ``levels`` grow.

    ``levels`` and ``values`` are (seeds, k) arrays: every seed (one data + initialization draw) is a block
    that sees all k levels. Within each block the levels and the values are ranked; L = Σ_blocks Σ_j
    rank(level_j)·rank(value_j). Under H0 (no association) the value ranks are an independent uniform
    permutation in every block, whatever the block offsets, so the exact null distribution of L (by
    enumeration and convolution) gives a one-sided p-value whose false-alarm rate is ``alpha`` exactly
    (up to the discreteness of L). ``rho`` is the mean within-block Spearman correlation (a linear function
    of L); the pooled, uncentred Spearman test is reported alongside as ``pooled_p`` (its p-value ignores
    the block structure). Returns {rho, p, alpha, holds, L, pooled_rho, pooled_p}."""
    if direction not in ("down", "up"):
        raise ValueError(f"direction must be 'down' or 'up', got {direction!r}")
    lev, val = np.asarray(levels, float), np.asarray(values, float)
    if lev.ndim != 2 or lev.shape != val.shape or lev.shape[1] < 2:
        raise ValueError(f"ordering needs matching (seeds, k≥2) arrays, got {lev.shape}, {val.shape}")
    if not (np.all(np.isfinite(lev)) and np.all(np.isfinite(val))):
        raise ValueError("ordering needs finite levels and values")
    S, k = lev.shape
    for arr, name in ((lev, "levels"), (val, "values")):
        if any(len(np.unique(row)) < k for row in arr):
            raise ValueError(f"ordering needs distinct {name} within every seed (ties have no exact Page null here)")
    rl = st.rankdata(lev, axis=1)
    rv = st.rankdata(val, axis=1)
    if direction == "down":
        rv = k + 1 - rv
    L = int(round(float((rl * rv).sum())))
    support, pmf = _page_null(k, S)
    p = float(pmf[support >= L].sum())
    rho = float(np.mean(1 - 6 * ((rl - rv) ** 2).sum(1) / (k * (k * k - 1))))
    if direction == "down":
        rho = -rho
    prho, pp, _ = rank_trend(lev.ravel(), val.ravel(), alpha=alpha, alternative="less" if direction == "down" else "greater")
    return {"rho": rho, "p": p, "alpha": alpha, "holds": p < alpha, "L": L, "pooled_rho": prho, "pooled_p": pp}


def paired_shift(a, b, *, alpha: float = 0.01) -> dict:
    """Exact one-sided sign-flip test that log b > log a within seeds (``a``, ``b``: (seeds,) positive).

    Statistic: the mean of d = log b − log a. Under H0 (the two labels exchangeable within each seed) the
    signs of d are i.i.d. fair coin flips, so enumerating all 2^S sign patterns gives the exact null;
    p = P(mean(±d) ≥ observed). Returns {mean_log_ratio, p, alpha, holds, up_seeds, seeds}."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2 or not (np.all(a > 0) and np.all(b > 0)):
        raise ValueError("paired_shift needs two matching 1-d arrays of positive values (≥ 2 seeds)")
    if a.size > 20:
        raise ValueError(f"exact sign-flip enumeration supports ≤ 20 seeds, got {a.size}")
    d = np.log(b) - np.log(a)
    signs = 1 - 2 * ((np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1)
    null = (signs * d).mean(1)
    obs = float(d.mean())
    p = float(np.mean(null >= obs - 1e-15 * max(1.0, abs(obs))))
    return {"mean_log_ratio": obs, "p": p, "alpha": alpha, "holds": p < alpha, "up_seeds": int((d > 0).sum()),
            "seeds": int(d.size)}


def min_p(k: int, seeds: int) -> float:
    """Smallest p-value Page's test can give for k levels and ``seeds`` blocks: (1/k!)^seeds."""
    return math.factorial(k) ** -float(seeds)


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
