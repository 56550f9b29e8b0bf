"""Wang et al. §6 / App. D empirical claims: Fig. 1 (`fig-1`), Fig. 3 (`fig-3`), Fig. 4 (`fig-4`), Fig. 6 (`fig-6`).

Setting (theorem-faithful, stated in every record): binary scikit-learn 8×8 digits 3 vs 8 (centred, unit-norm
rows, Assumption 5.2; 237 train / 120 test), scalar output f = aᵀσ(Wx), a ∈ {±1/√m} frozen,
W(0) ~ N(0, m^{-(1+2q)}), full-batch GD on the mean BCE with η = 0.25 for 80 steps, i.e. horizon τ = ηk = 20
(the paper's 50 epochs × ⌈60000/512⌉ steps × lr 0.003 give τ ≈ 17.6), σ ∈ {linear, ReLU (σ'(0)=1)}.
Quick grid: widths 2^4..2^8, q ∈ {−0.15, −0.05, 0.05, 0.25}, 3 seeds per cell (full: 2^4..2^11, 8 seeds).
ϱ is Def. 4.2 on the 120 test points; 𝔖(f) is Def. 3.2; robust accuracy is L2 at ε = 0.1 (exact for the
linear model, PGD for ReLU; the paper's ε = 0.5 on MNIST rows of norm ≈ 9 is ≈ 0.05 relative).
Not the paper's experiment (10-class MNIST, SGD, Gaussian 10×m head); that variant is not run here.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from fixtures import wang2024 as fw
from theory.papers.wang2024 import figures as F

ETA, STEPS = 0.25, 80
QS = [-0.15, -0.05, 0.05, 0.25]
EPS = 0.1
RECORD = [0, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80]
K_SHORT = 8  # τ = 2, the catalog's "short horizon"
ALPHA = 0.01
N_PERM = 2000
ACTS = {"linear": "linear", "relu": fw.RELU}

_GRID: dict = {}


def _data(ctx):
    return fw.digits_binary(3, 8, generator=ctx.generator("wang2024/fig-6", {"data": "digits 3v8"}))


def grid(ctx, act: str) -> dict:
    """{m: WidthRuns} for one activation, cached per (profile, seed, act) and shared by all figure checks."""
    key = (ctx.profile, ctx.seed, act)
    if key not in _GRID:
        data = _data(ctx)
        out = {}
        for m in ctx.pick(quick=[16, 32, 64, 128, 256], full=[2 ** k for k in range(4, 14)]):
            gen = ctx.generator("wang2024/fig-6", {"m": m, "act": act})
            out[m] = F.run_width(ACTS[act], m, QS, ctx.pick(quick=3, full=8), data, eta=ETA, steps=STEPS,
                                 record=RECORD, eps=EPS, generator=gen, pgd_steps=ctx.pick(quick=20, full=100),
                                 pgd_restarts=ctx.pick(quick=1, full=3))
        _GRID[key] = out
    return _GRID[key]


def _config(ctx, **kw):
    return {"setting": "binary digits 3v8, unit-norm, a∈{±1/√m} frozen, full-batch GD + BCE",
            "eta": ETA, "steps": STEPS, "tau": ETA * STEPS, "qs": QS, "eps_L2": EPS,
            "widths": list(grid(ctx, "linear")), "seeds": ctx.pick(quick=3, full=8)} | kw


def _flat(ctx, act, fn):
    """Per-run rows (m, q, value) over the grid for a per-WidthRuns function returning (E,)."""
    rows = []
    for m, R in grid(ctx, act).items():
        for e, v in enumerate(fn(R).tolist()):
            rows.append((m, R.q_of[e], v))
    return np.array(rows)


def _cell_means(ctx, act, fn):
    return {(m, q): float(np.mean([r[2] for r in _flat(ctx, act, fn) if r[0] == m and r[1] == q]))
            for m in grid(ctx, act) for q in QS}


# ---- Fig. 1 --------------------------------------------------------------------------------------

def _fig1_stats(ctx, act, rob=None):
    A = _flat(ctx, act, lambda R: R.energy)
    Rb = _flat(ctx, act, lambda R: R.rob_acc)[:, 2] if rob is None else rob
    rs, p = F.spearman_permutation(A[:, 2], Rb, n_perm=N_PERM, seed=ctx.seed, alternative="less")
    wid = F.stratified_kendall(np.log2(A[:, 0]), Rb, A[:, 1], n_perm=N_PERM, seed=ctx.seed)
    return rs, p, wid, A, Rb


@pytest.mark.claim("wang2024/fig-1")
def test_fig1_energy_vs_robust_accuracy(record, ctx):
    """Fig. 1a,b / §6.1: across trained MLPs (ReLU grid) lower 𝔖(f) (Def. 3.2) ↔ higher L2 robust accuracy:
    Spearman ρ_s < 0 with one-sided permutation p < 0.01; and at equal q wider nets are more robust (Kendall
    trend of robust accuracy in log m within each q, pooled permutation p < 0.01)."""
    rows, res = [], {}
    for act in ("relu", "linear"):
        rs, p, wid, A, Rb = _fig1_stats(ctx, act)
        res[act] = (rs, p, wid)
        rows.append({"model": act, "Spearman(S(f), robust acc)": rs, "permutation p": p,
                     "width trend of robust acc: pooled p": wid["p"], "Kendall tau per q": wid["per"],
                     "S(f) range": [float(A[:, 2].min()), float(A[:, 2].max())],
                     "robust acc range": [float(Rb.min()), float(Rb.max())]})
    rs, p, wid = res["relu"]
    A, Rb = _fig1_stats(ctx, "relu")[3:]
    record("holds" if (rs < 0 and p < ALPHA and wid["significant"]) else "violated", observed=rs, bound=0.0,
           tightness="Spearman(𝔖(f), robust accuracy) over the ReLU grid (claim: < 0); linear grid reported",
           config=_config(ctx, n_perm=N_PERM, alpha=ALPHA), table=rows,
           series={"fig1 robust acc vs S(f) (ReLU)": {"x": A[:, 2].tolist(), "y": Rb.tolist(), "xlabel": "Dirichlet energy S(f)",
                                                      "ylabel": f"robust accuracy (L2, ε={EPS})", "scatter": True}},
           note="Robust accuracy of the ReLU nets is a PGD upper estimate (quick: 20 steps from the first-order start; full: 100 steps, 3 restarts); the linear "
                "model's is exact. The linear grid is reported only: its 𝔖(f) = ‖Wᵀa‖ is the logistic-regression "
                "weight norm (F1), which varies little over (m, q).")
    assert rs < 0 and p < ALPHA, rows
    assert wid["significant"], rows


@pytest.mark.claim("wang2024/fig-1")
def test_fig1_correlation_check_rejects_wrong(record, ctx):
    """Companion: the same test rejects (i) the reversed claim (ρ_s > 0) and (ii) a shuffled grid (robust accuracy
    permuted across models): neither reaches p < 0.01."""
    A = _flat(ctx, "relu", lambda R: R.energy)
    Rb = _flat(ctx, "relu", lambda R: R.rob_acc)[:, 2]
    _, p_rev = F.spearman_permutation(A[:, 2], Rb, n_perm=N_PERM, seed=ctx.seed, alternative="greater")
    shuf = Rb[np.random.default_rng(1000 + ctx.seed).permutation(Rb.size)]
    rs_sh, p_sh = F.spearman_permutation(A[:, 2], shuf, n_perm=N_PERM, seed=ctx.seed, alternative="less")
    record("holds", observed=min(p_rev, p_sh), bound=ALPHA,
           table=[{"variant": "reversed claim (rho_s > 0)", "p": p_rev},
                  {"variant": "shuffled robust accuracy", "rho_s": rs_sh, "p": p_sh}])
    assert p_rev >= ALPHA and p_sh >= ALPHA


K_AFTER = 2  # index 1 of RECORD: k = 2, τ = 0.5 (catalog prop-1: monotonicity counted after the first τ = 0.5)


def _q_sel(R, q):
    return [e for e, qq in enumerate(R.q_of) if qq == q]


def _fig1_monotone(ctx, q=0.25):
    rows = []
    i0 = RECORD.index(K_AFTER)
    for act in ("linear", "relu"):
        for m, R in grid(ctx, act).items():
            v = R.varrho[:, _q_sel(R, q)]
            rows.append({"model": act, "m": m,
                         "min frac non-decreasing after tau=0.5": float(F.nondecreasing_fraction(v[i0:]).min()),
                         "min frac non-decreasing (whole run)": float(F.nondecreasing_fraction(v).min()),
                         "min rise": float((v[-1] - v[0]).min()), "varrho(0)": float(v[0].mean()),
                         "varrho(tau=20)": float(v[-1].mean())})
    return rows


@pytest.mark.claim("wang2024/fig-1")
def test_fig1_varrho_rises_for_q025(record, ctx):
    """Fig. 1c,d / §6.1: for q = 0.25, ϱ increases over training for every width except the narrowest (2^4, 2^5).
    Check for m ≥ 2^6, every seed (catalog prop-1 operationalization): ϱ(τ=20) − ϱ(0) > 0.05 and ≥ 95 % of the
    recorded increments after the first τ = 0.5 (τ = 0.5, 1, 2, 4, 6, …, 20) non-decreasing. The early dip
    (τ ≤ 0.5, Ṅ < 0 as in thm-5.3) and the narrow widths are reported."""
    rows = _fig1_monotone(ctx)
    wide = [r for r in rows if r["m"] >= 64]
    ok = all(r["min frac non-decreasing after tau=0.5"] >= 0.95 and r["min rise"] > 0.05 for r in wide)
    series = {}
    for act in ("linear", "relu"):
        for m, R in grid(ctx, act).items():
            series[f"varrho {act} m={m}"] = {"x": [ETA * k for k in R.steps],
                                             "y": R.varrho[:, _q_sel(R, 0.25)].mean(1).tolist(),
                                             "xlabel": "τ = ηk", "ylabel": "ϱ (q=0.25)", "plot": f"fig1 {act}"}
    record("holds" if ok else "violated", observed=min(r["min frac non-decreasing after tau=0.5"] for r in wide),
           bound=0.95, config=_config(ctx, q=0.25), table=rows, series=series,
           tightness="min over m ≥ 64 and seeds of the fraction of non-decreasing recorded ϱ increments after τ = 0.5")
    assert ok, rows


@pytest.mark.claim("wang2024/fig-1")
def test_fig1_monotonicity_check_rejects_reversed(record, ctx):
    """Companion: the ϱ-rise test applied to time-reversed trajectories fails (every wide run decreases)."""
    worst = 0.0
    i0 = RECORD.index(K_AFTER)
    for act in ("linear", "relu"):
        for m, R in grid(ctx, act).items():
            if m >= 64:
                v = R.varrho[:, _q_sel(R, 0.25)].flip(0)
                worst = max(worst, float(F.nondecreasing_fraction(v[i0:]).max()))
    record("holds", observed=worst, bound=0.95, tightness="max non-decreasing fraction of reversed trajectories")
    assert worst < 0.95


# ---- Fig. 3 --------------------------------------------------------------------------------------

def _delta(R, k):
    return R.at(k) - R.varrho[0]


def _fig3_rows(ctx):
    rows = []
    for act in ("linear", "relu"):
        cells = {k: _cell_means(ctx, act, lambda R, k=k: _delta(R, k)) for k in (2, 4, 8, STEPS)}
        for m in grid(ctx, act):
            for q in QS:
                rows.append({"model": act, "m": m, "q": q, **{f"dvarrho tau={ETA * k:g}": cells[k][(m, q)]
                                                            for k in cells}})
    return rows


def _tau_flat(ctx, act, m, q):
    """Largest recorded τ up to which every seed has Δϱ < 0.05."""
    R = grid(ctx, act)[m]
    sel = [e for e, qq in enumerate(R.q_of) if qq == q]
    d = (R.varrho[:, sel] - R.varrho[0, sel]).max(1).values
    t = 0.0
    for k, v in zip(R.steps, d.tolist()):
        if v >= 0.05:
            break
        t = ETA * k
    return t


@pytest.mark.claim("wang2024/fig-3")
def test_fig3_flat_for_negative_q_short_horizon(record, ctx):
    """Fig. 3 / §6.2 'trajectories with q < 0 remain flat', catalog operationalization: Δϱ < 0.05, restricted to
    the catalog's short horizon τ = 2 (k = 8) and to the most negative q = −0.15 (both models, every width,
    seed-mean). The q = −0.05 cells and τ_flat (largest τ with Δϱ < 0.05 for every seed) are reported."""
    rows = _fig3_rows(ctx)
    key = f"dvarrho tau={ETA * K_SHORT:g}"
    neg = [r for r in rows if r["q"] == -0.15]
    worst = max(r[key] for r in neg)
    failing_m005 = [(r["model"], r["m"], round(r[key], 3)) for r in rows if r["q"] == -0.05 and r[key] >= 0.05]
    tflat = [{"model": a, "m": m, "q": q, "tau_flat": _tau_flat(ctx, a, m, q)}
             for a in ("linear", "relu") for m in grid(ctx, a) for q in QS if q < 0]
    record("holds" if worst < 0.05 else "violated", observed=worst, bound=0.05,
           tightness="max over widths/models of seed-mean Δϱ(τ=2) at q = −0.15",
           config=_config(ctx, horizon_tau=ETA * K_SHORT), table=rows + tflat,
           note=f"q = −0.05 cells with Δϱ(τ=2) ≥ 0.05: {failing_m005 or 'none'}.")
    assert worst < 0.05, neg


@pytest.mark.claim("wang2024/fig-3")
@pytest.mark.xfail(strict=True, reason="q < 0 trajectories are not flat over the paper's training horizon: at τ = 20 "
                                       "(≈ the paper's 50 epochs at lr 0.003) Δϱ far exceeds 0.05 for q = −0.15 and "
                                       "−0.05, largest for the widest nets")
def test_fig3_flat_for_negative_q_paper_horizon(record, ctx):
    """As printed (§6.2): 'all trajectories with q < 0 remain flat throughout training' — Δϱ(τ=20) < 0.05 for every
    q < 0 cell (seed-mean), both models."""
    rows = _fig3_rows(ctx)
    key = f"dvarrho tau={ETA * STEPS:g}"
    neg = [r for r in rows if r["q"] < 0]
    bad = [(r["model"], r["m"], r["q"], round(r[key], 3)) for r in neg if r[key] >= 0.05]
    worst = max(r[key] for r in neg)
    tmin = min(_tau_flat(ctx, a, m, q) for a in ("linear", "relu") for m in grid(ctx, a) for q in QS if q < 0)
    record("expected-failure", observed=worst, bound=0.05, config=_config(ctx, horizon_tau=ETA * STEPS), table=rows,
           tightness="max seed-mean Δϱ(τ=20) over q < 0 cells",
           finding=f"Δϱ(τ=20) ≥ 0.05 in {len(bad)}/{len(neg)} q<0 cells (max {worst:.3f}); flatness (Δϱ<0.05 for every "
                   f"seed) lasts only up to τ = {tmin:g} in the least flat cell. 'Flat for q<0' is a short-horizon "
                   "statement, not one about the whole training run.")
    assert not bad


def _fig3_speed(ctx, act, sign=1.0, shuffle=False):
    A = _flat(ctx, act, lambda R: _delta(R, K_SHORT) / (ETA * K_SHORT))
    y = A[:, 2]
    if shuffle:
        y = y[np.random.default_rng(2000 + ctx.seed).permutation(y.size)]
    return F.stratified_kendall(sign * np.log2(A[:, 0]), y, A[:, 1], n_perm=N_PERM, seed=ctx.seed)


@pytest.mark.claim("wang2024/fig-3")
def test_fig3_speed_increases_with_width(record, ctx):
    """§6.2 'the speed of accumulation significantly increases with larger network widths': early speed
    V = Δϱ(τ=2)/2 vs log m, Kendall trend within each q pooled (permutation p < 0.01), both models."""
    res = {act: _fig3_speed(ctx, act) for act in ("linear", "relu")}
    rows = [{"model": a, "pooled S": r["S"], "p": r["p"], "Kendall tau per q": r["per"]} for a, r in res.items()]
    ok = all(r["significant"] for r in res.values())
    record("holds" if ok else "violated", observed=max(r["p"] for r in res.values()), bound=ALPHA,
           tightness="pooled within-q Kendall p-value of V = Δϱ(τ=2)/2 vs log m (max over models)",
           config=_config(ctx, horizon_tau=ETA * K_SHORT, n_perm=N_PERM), table=rows,
           note="Per-q Kendall τ is reported, not required: for q < 0 the early speed is ≈ 0 (flat) and its ordering "
                "is noise.")
    assert ok, rows


@pytest.mark.claim("wang2024/fig-3")
def test_fig3_speed_check_rejects_wrong(record, ctx):
    """Companion: reversed width ordering and a shuffled grid are not significant (p ≥ 0.01)."""
    ps = {(a, v): _fig3_speed(ctx, a, sign=-1.0 if v == "reversed" else 1.0, shuffle=v == "shuffled")["p"]
          for a in ("linear", "relu") for v in ("reversed", "shuffled")}
    record("holds", observed=min(ps.values()), bound=ALPHA,
           table=[{"model": a, "variant": v, "p": p} for (a, v), p in ps.items()])
    assert min(ps.values()) >= ALPHA


# ---- Fig. 4 --------------------------------------------------------------------------------------

def _fig4_linear(ctx, runs):
    """(F1) + non-expansiveness: every trained linear net's w = Wᵀa equals logistic-regression GD from w(0) (exact),
    so ‖w_T − w_ref,T‖ ≤ ‖w(0)‖ (GD on a convex L-smooth loss with η ≤ 2/L is non-expansive; w_ref from w = 0) and
    its test accuracy differs from the zero-init run's by at most flip_bound(w_ref, ‖w(0)‖)."""
    Xtr, ytr, Xe, ye = _data(ctx)
    if not F.logistic_nonexpansive(Xtr, ETA):
        raise ValueError("η exceeds 2/L: the non-expansiveness bound does not apply")
    w_ref = F.logistic_gd(torch.zeros(1, Xtr.shape[1], dtype=Xtr.dtype), Xtr, ytr, eta=ETA, steps=STEPS)[0]
    acc_ref = float(((Xe @ w_ref > 0).to(Xe.dtype) == ye).to(Xe.dtype).mean())
    rows, worst = [], dict(f1=0.0, ratio=0.0, slack=-1.0)
    for m, R in runs.items():
        w0 = (R.a.unsqueeze(-1) * R.W0).sum(-2)
        wT = (R.a.unsqueeze(-1) * R.W).sum(-2)
        f1 = float(((wT - F.logistic_gd(w0, Xtr, ytr, eta=ETA, steps=STEPS)).norm(dim=-1) / wT.norm(dim=-1)).max())
        ratio = float(((wT - w_ref).norm(dim=-1) / w0.norm(dim=-1)).max())
        bound = F.flip_bound(w_ref, w0.norm(dim=-1), Xe)
        dacc = (R.acc - acc_ref).abs()
        worst = dict(f1=max(worst["f1"], f1), ratio=max(worst["ratio"], ratio),
                     slack=max(worst["slack"], float((dacc - bound).max())))
        rows.append({"m": m, "F1 rel. gap": f1, "max ||w_T - w_ref|| / ||w(0)||": ratio,
                     "max ||w(0)||": float(w0.norm(dim=-1).max()), "max |acc - acc_ref|": float(dacc.max()),
                     "max flip bound": float(bound.max()),
                     "acc per q (seed mean)": [round(float(R.acc[[e for e, qq in enumerate(R.q_of) if qq == q]].mean()), 4)
                                               for q in QS]})
    return rows, worst, acc_ref


def _fig4_ok(worst):
    # 80 float64 steps of a d=64 update: rounding ~1e-15 relative per step; 1e-10 leaves room, a real gap is O(1)
    return worst["f1"] < 1e-10 and worst["ratio"] <= 1 + 1e-10 and worst["slack"] <= 0


@pytest.mark.claim("wang2024/fig-4")
def test_fig4_linear_accuracy_independent_of_width_and_q(record, ctx):
    """Fig. 4a / catalog (F1): in the binary linear model the trained function is logistic-regression GD in w = Wᵀa
    from w(0) ~ N(0, m^{-(1+2q)}I_d) (identity to 1e-10), so (m, q) act only through ‖w(0)‖ ≈ √d·m^{-(1/2+q)}:
    ‖w_T − w_ref‖ ≤ ‖w(0)‖ and |acc(m,q) − acc_ref| ≤ fraction of test x with |w_refᵀx| ≤ ‖w(0)‖ (exact bounds)."""
    rows, worst, acc_ref = _fig4_linear(ctx, grid(ctx, "linear"))
    rho = _cell_means(ctx, "linear", lambda R: R.varrho[-1])
    ok = _fig4_ok(worst)
    record("holds" if ok else "violated", observed=worst["ratio"], bound=1.0,
           tightness="max ‖w_T − w_ref‖/‖w(0)‖ (≤ 1 by non-expansiveness); accuracy slack and (F1) gap in the table",
           config=_config(ctx), table=rows + [{"acc_ref (w(0)=0)": acc_ref, "F1 max gap": worst["f1"],
                                               "max(|acc - acc_ref| - flip bound)": worst["slack"],
                                               "varrho(tau=20) range over cells": [min(rho.values()), max(rho.values())]}],
           note="ϱ varies strongly over (m, q) while the function can only move by ‖w(0)‖: in the faithful binary "
                "linear setting Fig. 4a's accuracy structure is an init-size effect at most (the flip bound is "
                "vacuous for narrow nets with q < 0, where ‖w(0)‖ is O(1), and shrinks with m and q). In the paper's "
                "10-class Gaussian-head code the end-to-end step is ≈ η m^{-2q}, a confound.")
    assert ok, rows


@pytest.mark.claim("wang2024/fig-4")
def test_fig4_invariance_check_rejects_confounded_step(record, ctx):
    """Companion: with the per-width effective step η·m^{-2q} (the confound of a Gaussian frozen head) the trained
    linear nets leave the ‖w(0)‖ ball around the reference run, and the check rejects the grid."""
    data = _data(ctx)
    runs = {m: F.run_width("linear", m, QS, 2, data, eta=ETA, steps=STEPS, record=[0, STEPS], eps=EPS,
                           generator=ctx.generator("wang2024/fig-4", {"m": m}), lr_scale=lambda m, q: m ** (-2 * q))
            for m in (16, 256)}
    rows, worst, _ = _fig4_linear(ctx, runs)
    record("holds", observed=worst["ratio"], bound=1.0, table=rows,
           tightness="max ‖w_T − w_ref‖/‖w(0)‖ of the confounded grid (> 1 required)")
    assert worst["ratio"] > 1.5 and not _fig4_ok(worst)


@pytest.mark.claim("wang2024/fig-4")
def test_fig4_relu_accuracy_vs_varrho(record, ctx):
    """Fig. 4c,d (ReLU): per-width Spearman correlation of test accuracy with ϱ(τ=20) over q × seeds is reported;
    the Fig.-4-independent part checked here: raising q raises the final ϱ at every width (Kendall trend within
    width, pooled p < 0.01)."""
    rows, X = [], []
    for m, R in grid(ctx, "relu").items():
        rs, p = F.spearman_permutation(R.varrho[-1].numpy(), R.acc.numpy(), n_perm=N_PERM, seed=ctx.seed,
                                       alternative="less")
        rows.append({"m": m, "Spearman(acc, varrho)": rs, "p (H1: < 0)": p,
                     "acc per q": [round(float(R.acc[[e for e, qq in enumerate(R.q_of) if qq == q]].mean()), 4) for q in QS],
                     "varrho per q": [round(float(R.varrho[-1][[e for e, qq in enumerate(R.q_of) if qq == q]].mean()), 4)
                                      for q in QS]})
    A = _flat(ctx, "relu", lambda R: R.varrho[-1])
    tr = F.stratified_kendall(A[:, 1], A[:, 2], A[:, 0], n_perm=N_PERM, seed=ctx.seed)
    record("holds" if tr["significant"] else "violated", observed=tr["p"], bound=ALPHA, config=_config(ctx), table=rows,
           tightness="pooled within-width Kendall p of ϱ(τ=20) vs q")
    assert tr["significant"], (tr, rows)


@pytest.mark.claim("wang2024/fig-4")
@pytest.mark.xfail(strict=True, reason="not reproduced in the faithful binary setting at CPU scale: at the widest width "
                                       "accuracy does not fall significantly as q (and ϱ) rise")
def test_fig4_wide_accuracy_drops_with_varrho(record, ctx):
    """§6.2: for the widest MLPs, raising q raises ϱ while accuracy declines (0.93 → 0.68 at width 8192): Spearman
    (acc, ϱ(τ=20)) < 0 at the widest grid width with permutation p < 0.01."""
    m = max(grid(ctx, "relu"))
    R = grid(ctx, "relu")[m]
    rs, p = F.spearman_permutation(R.varrho[-1].numpy(), R.acc.numpy(), n_perm=N_PERM, seed=ctx.seed, alternative="less")
    accs = [round(float(R.acc[[e for e, qq in enumerate(R.q_of) if qq == q]].mean()), 3) for q in QS]
    record("expected-failure", observed=rs, bound=0.0, config=_config(ctx, width=m),
           finding=f"width {m}: Spearman(acc, ϱ) = {rs:.2f} (p = {p:.2f}); accuracy per q {QS} = {accs}. With binary "
                   "labels, a ∈ {±1/√m} and one η, raising q does not cost accuracy; the paper's drop is plausibly the "
                   "η·m^{-2q} effective-step confound of its 10-class Gaussian head (catalog fig-4 pitfall) or needs "
                   "width 8192.")
    assert rs < 0 and p < ALPHA


# ---- Fig. 6 --------------------------------------------------------------------------------------

def _fig6_tests(ctx, act, *, sign=1.0, shuffle=False):
    A = _flat(ctx, act, lambda R: R.varrho[-1] - R.varrho[0])
    y = A[:, 2]
    if shuffle:
        y = y[np.random.default_rng(3000 + ctx.seed).permutation(y.size)]
    width = F.stratified_kendall(sign * np.log2(A[:, 0]), y, A[:, 1], n_perm=N_PERM, seed=ctx.seed)
    qax = F.stratified_kendall(sign * A[:, 1], y, A[:, 0], n_perm=N_PERM, seed=ctx.seed)
    return width, qax


def _fig6_ok(width, qax):
    return (width["significant"] and qax["significant"] and min(width["per"].values()) > 0
            and min(qax["per"].values()) > 0)


@pytest.mark.claim("wang2024/fig-6")
def test_fig6_total_dvarrho_increases_with_width_and_q(record, ctx):
    """App. D / Fig. 6: total Δϱ = ϱ(τ=20) − ϱ(0) increases with width at fixed q and with q at fixed width, linear
    and ReLU: Kendall τ > 0 on every line (all seeds of the line) and the pooled within-line permutation p < 0.01
    along each axis."""
    rows, series, ok = [], {}, True
    for act in ("linear", "relu"):
        width, qax = _fig6_tests(ctx, act)
        ok &= _fig6_ok(width, qax)
        rows.append({"model": act, "axis": "width (per q)", "Kendall tau": width["per"], "pooled p": width["p"]})
        rows.append({"model": act, "axis": "q (per width)", "Kendall tau": qax["per"], "pooled p": qax["p"]})
        cells = _cell_means(ctx, act, lambda R: R.varrho[-1] - R.varrho[0])
        lvl0 = _cell_means(ctx, act, lambda R: R.varrho[0])
        lvl = _cell_means(ctx, act, lambda R: R.varrho[-1])
        ms = list(grid(ctx, act))
        for q in QS:
            series[f"{act} q={q}"] = {"x": ms, "y": [cells[(m, q)] for m in ms], "xlabel": "width m",
                                      "ylabel": "total Δϱ (τ=20)", "logx": True, "plot": f"fig6 {act}"}
            rows.append({"model": act, "q": q, "dvarrho per width": [round(cells[(m, q)], 4) for m in ms],
                         "varrho(0) per width": [round(lvl0[(m, q)], 4) for m in ms],
                         "varrho(20) per width": [round(lvl[(m, q)], 4) for m in ms]})
    record("holds" if ok else "violated", observed=max(r["pooled p"] for r in rows if "pooled p" in r), bound=ALPHA,
           tightness="max pooled Kendall p over the two axes and two models (all line τ must be > 0)",
           config=_config(ctx, horizon_tau=ETA * STEPS, n_perm=N_PERM), table=rows, series=series,
           note="Abstract/contribution 2 ('wider MLPs exhibit more resistance to increased co-correlation') contradicts "
                "Fig. 6 read as accumulation: wider nets accumulate more Δϱ; they only start lower (F2: ϱ(0) ≈ "
                "√d/(√m+√d)), see the ϱ(0)/ϱ(20) rows and test_fig6_abstract_wider_resists.")
    assert ok, rows


@pytest.mark.claim("wang2024/fig-6")
def test_fig6_check_rejects_reversed_or_shuffled(record, ctx):
    """Companion: the Fig. 6 test rejects reversed axes (width and q order flipped) and a shuffled grid."""
    out = {}
    for act in ("linear", "relu"):
        for v in ("reversed", "shuffled"):
            w, qa = _fig6_tests(ctx, act, sign=-1.0 if v == "reversed" else 1.0, shuffle=v == "shuffled")
            out[(act, v)] = (_fig6_ok(w, qa), w["p"], qa["p"])
    record("holds", observed=sum(o[0] for o in out.values()), bound=0,
           table=[{"model": a, "variant": v, "passes?": o[0], "p width": o[1], "p q": o[2]} for (a, v), o in out.items()])
    assert not any(o[0] for o in out.values())


@pytest.mark.claim("wang2024/fig-6")
@pytest.mark.xfail(strict=True, reason="abstract/contribution 2/conclusion: 'wider MLPs exhibit more resistance to "
                                       "increased co-correlation' — contradicted by Fig. 6 and by the runs: total Δϱ "
                                       "increases with width")
def test_fig6_abstract_wider_resists(record, ctx):
    """The abstract's reading as an accumulation statement: total Δϱ decreases with width at fixed q (pooled
    within-q Kendall trend of Δϱ in −log m, p < 0.01), linear and ReLU."""
    res = {act: _fig6_tests(ctx, act, sign=-1.0)[0] for act in ("linear", "relu")}
    record("expected-failure", observed=max(r["p"] for r in res.values()), bound=ALPHA,
           table=[{"model": a, "p (H1: decreasing in width)": r["p"], "Kendall tau per q (vs -log m)": r["per"]}
                  for a, r in res.items()],
           finding="Total Δϱ over τ = 20 increases with width at every q (Kendall τ vs −log m negative on every line): "
                   "wider nets accumulate more co-correlation, as Fig. 6 / §6.2 say. The abstract's 'more resistance' "
                   "holds only for the level ϱ (wider nets start lower, F2), not for the accumulation.")
    assert all(r["significant"] for r in res.values())
