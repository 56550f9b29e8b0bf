"""Wang et al. §6 / App. D empirical claims: Fig. 1 (`fig-1`), Fig. 3 (`fig-3`), Fig. 4 (`fig-4`), Fig. 6 (`fig-6`).

Setting (theorem-faithful, stated in every record): scalar output f = aᵀσ(Wx), a ∈ {±1/√m} frozen,
W(0) ~ N(0, m^{-(1+2q)}), binary labels, full-batch GD on the mean BCE with η = 0.25 for 80 steps, i.e. horizon
τ = ηk = 20 (the paper's 50 epochs × ⌈60000/512⌉ steps × lr 0.003 give τ ≈ 17.6), σ ∈ {linear, ReLU (σ'(0)=1)}.
Two data sets: scikit-learn's bundled 8×8 digits 3 vs 8 (centred, unit-norm rows, Assumption 5.2; 237 train /
120 test) for every figure, and a synthetic two-class Gaussian mixture on the unit sphere (d = 32, 240 train /
120 test; d is kept small because the per-point ‖D(x)W‖₂ costs m·d² per test point) for Figs. 3 and 6. Quick grid: widths 2^4..2^8 (synthetic 2^4, 2^6, 2^8),
q ∈ {−0.15, −0.05, 0.05, 0.25}, 3 seeds per cell (synthetic: 6); full: widths 2^4..2^13, the paper's q grid
{−0.15, −0.1, −0.05, 0, 0.05, 0.15, 0.25}, 8 seeds. ϱ is Def. 4.2 on the 120 test points; 𝔖(f) is Def. 3.2;
robust accuracy is L2 at ε = 0.1 (exact for the linear model, PGD for ReLU; the paper's ε = 0.5 on MNIST rows of
norm ≈ 9 is ≈ 0.05 relative). Not the paper's experiment (10-class MNIST, minibatch SGD lr 0.003 batch 512,
Gaussian 10×m head): full-batch GD is matched to the paper's horizon τ; a minibatch-SGD run needs an SGD trainer in
the core (theory.sim.train has gd and adam only).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from fixtures import wang2024 as fw
from theory import ClaimViolation, assert_claim
from theory.papers.wang2024 import figures as F

ETA, STEPS = 0.25, 80
EPS = 0.1
RECORD = [0, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80]
K_SHORT = 8  # τ = 2, the catalog's "short horizon"
FLAT = 0.05  # catalog: "flat" = Δϱ < 0.05
ALPHA = 0.01
N_PERM = 2000
ACTS = {"linear": "linear", "relu": fw.RELU}
DATASETS = ("digits", "synthetic")
PAPER_QS = [-0.15, -0.1, -0.05, 0.0, 0.05, 0.15, 0.25]

_GRID: dict = {}


def qs(ctx):
    return ctx.pick(quick=[-0.15, -0.05, 0.05, 0.25], full=PAPER_QS)


def _data(ctx, data="digits"):
    if data == "digits":
        return fw.digits_binary(3, 8, generator=ctx.generator("wang2024/fig-6", {"data": "digits 3v8"}))
    if data == "synthetic":
        return fw.mixture(240, 120, 32, generator=ctx.generator("wang2024/fig-6", {"data": "mixture d=32"}))
    raise ValueError(f"unknown data set {data!r}")


def _widths(ctx, data):
    if data == "digits":
        return ctx.pick(quick=[16, 32, 64, 128, 256], full=[2 ** k for k in range(4, 14)])
    return ctx.pick(quick=[16, 64, 256], full=[2 ** k for k in range(4, 14)])


def _seeds(ctx, data):
    """Inits per (m, q) cell. The synthetic grid has fewer widths and d = 32, where the seed-to-seed spread of
    ϱ(0) = ‖Wᵀa‖/‖W‖₂ (relative std ≈ 1/√(2d), independent of q) is comparable to the q-effect on Δϱ at the
    narrow widths: 3 inits leave the q-axis trend of the linear model under-powered (pooled p ≈ 0.01 at some
    seeds), so it gets 6."""
    return ctx.pick(quick=3, full=8) if data == "digits" else ctx.pick(quick=6, full=8)


def grid(ctx, act: str, data: str = "digits") -> dict:
    """{m: WidthRuns} for one activation and data set, cached per (profile, seed, act, data) and shared by all
    figure checks. Robust accuracy (PGD for ReLU) is measured on the digits grid only (Fig. 1)."""
    key = (ctx.profile, ctx.seed, act, data)
    if key not in _GRID:
        dat = _data(ctx, data)
        out = {}
        for m in _widths(ctx, data):
            gen = ctx.generator("wang2024/fig-6", {"m": m, "act": act} | ({} if data == "digits" else {"data": data}))
            out[m] = F.run_width(ACTS[act], m, qs(ctx), _seeds(ctx, data), dat, eta=ETA, steps=STEPS,
                                 record=RECORD, eps=EPS if data == "digits" else None, generator=gen,
                                 pgd_steps=ctx.pick(quick=20, full=100), pgd_restarts=ctx.pick(quick=1, full=3))
        _GRID[key] = out
    return _GRID[key]


def _config(ctx, data="digits", **kw):
    setting = {"digits": "binary digits 3v8, unit-norm", "synthetic": "two-class Gaussian mixture on the sphere, d=32"}[data]
    return {"setting": setting + ", a∈{±1/√m} frozen, full-batch GD + BCE",
            "eta": ETA, "steps": STEPS, "tau": ETA * STEPS, "qs": qs(ctx), "eps_L2": EPS,
            "widths": _widths(ctx, data), "seeds": _seeds(ctx, data)} | kw


def _flat(ctx, act, fn, data="digits"):
    """Per-run rows (m, q, value) over the grid for a per-WidthRuns function returning (E,)."""
    rows = []
    for m, R in grid(ctx, act, data).items():
        for e, v in enumerate(fn(R).tolist()):
            rows.append((m, R.q_of[e], v))
    return np.array(rows)


def _cell_means(ctx, act, fn, data="digits"):
    A = _flat(ctx, act, fn, data)
    return {(m, q): float(np.mean([r[2] for r in A if r[0] == m and r[1] == q]))
            for m in grid(ctx, act, data) for q in qs(ctx)}


# ---- Fig. 1 --------------------------------------------------------------------------------------

def _fig1_stats(ctx, act, rob=None):
    A = _flat(ctx, act, lambda R: R.energy)
    Rb = _flat(ctx, act, lambda R: R.rob_acc)[:, 2] if rob is None else rob
    rs, p = F.spearman_permutation(A[:, 2], Rb, n_perm=N_PERM, seed=ctx.seed, alternative="less")
    wid = F.stratified_kendall(np.log2(A[:, 0]), Rb, A[:, 1], n_perm=N_PERM, seed=ctx.seed)
    return rs, p, wid, A, Rb


def _pgd_text(ctx):
    return (f"L2 PGD, {ctx.pick(quick=20, full=100)} steps × {ctx.pick(quick=1, full=3)} restart(s) from the "
            "first-order start")


@pytest.mark.claim("wang2024/fig-1")
def test_fig1_energy_vs_robust_accuracy(record, ctx):
    """Fig. 1a,b / §6.1: across trained MLPs (ReLU grid) lower 𝔖(f) (Def. 3.2) ↔ higher L2 robust accuracy:
    Spearman ρ_s < 0 with one-sided permutation p < 0.01; and at equal q wider nets are more robust (Kendall
    trend of robust accuracy in log m within each q, pooled permutation p < 0.01)."""
    rows, res = [], {}
    for act in ("relu", "linear"):
        rs, p, wid, A, Rb = _fig1_stats(ctx, act)
        res[act] = (rs, p, wid, A, Rb)
        rows.append({"model": act, "Spearman(S(f), robust acc)": rs, "permutation p": p,
                     "width trend of robust acc: pooled p": wid["p"], "Kendall tau per q": wid["per"],
                     "S(f) range": [float(A[:, 2].min()), float(A[:, 2].max())],
                     "robust acc range": [float(Rb.min()), float(Rb.max())]})
    rs, p, wid, A, Rb = res["relu"]
    ok = rs < 0 and p < ALPHA and wid["significant"]
    record("holds" if ok else "violated", observed=rs, bound=0.0,
           tightness="Spearman(𝔖(f), robust accuracy) over the ReLU grid (claim: < 0); linear grid reported",
           config=_config(ctx, n_perm=N_PERM, alpha=ALPHA, attack=_pgd_text(ctx)), table=rows,
           series={"fig1 robust acc vs S(f) (ReLU)": {"x": A[:, 2].tolist(), "y": Rb.tolist(), "xlabel": "Dirichlet energy S(f)",
                                                      "ylabel": f"robust accuracy (L2, ε={EPS})", "scatter": True}},
           note=f"Robust accuracy of the ReLU nets is a PGD upper estimate ({_pgd_text(ctx)}); the linear model's is "
                "exact. The linear grid is reported only: its 𝔖(f) = ‖Wᵀa‖ is the logistic-regression weight norm "
                "(F1), which varies little over (m, q).")
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
    rejected = p_rev >= ALPHA and p_sh >= ALPHA
    record("holds" if rejected else "violated", role="companion", observed=min(p_rev, p_sh), bound=ALPHA,
           tightness="smallest permutation p of a wrong version (rejected when ≥ α)",
           table=[{"variant": "reversed claim (rho_s > 0)", "p": p_rev},
                  {"variant": "shuffled robust accuracy", "rho_s": rs_sh, "p": p_sh}])
    assert rejected, (p_rev, p_sh)


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
    ok = all(r["min frac non-decreasing after tau=0.5"] >= 0.95 and r["min rise"] > FLAT for r in wide)
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
    rejected = worst < 0.95
    record("holds" if rejected else "violated", role="companion", observed=worst, bound=0.95,
           tightness="max non-decreasing fraction of reversed trajectories (rejected when < 0.95)")
    assert rejected, worst


# ---- Fig. 3 --------------------------------------------------------------------------------------

def _delta(R, k):
    return R.at(k) - R.varrho[0]


def _tau_flat(R, q):
    """Largest recorded τ up to which every seed has |Δϱ| < FLAT."""
    sel = _q_sel(R, q)
    d = (R.varrho[:, sel] - R.varrho[0, sel]).abs().max(1).values
    t = 0.0
    for k, v in zip(R.steps, d.tolist()):
        if v >= FLAT:
            break
        t = ETA * k
    return t


def _fig3_rows(ctx, data):
    """One row per (model, m, q): seed-mean Δϱ at τ = 0.5, 1, 2, 20, the largest seed-mean |Δϱ| over the run,
    and τ_flat (every seed |Δϱ| < FLAT up to there)."""
    rows = []
    for act in ("linear", "relu"):
        for m, R in grid(ctx, act, data).items():
            for q in qs(ctx):
                sel = _q_sel(R, q)
                mean_d = (R.varrho[:, sel] - R.varrho[0, sel]).mean(1)  # (T,)
                rows.append({"data": data, "model": act, "m": m, "q": q,
                             **{f"dvarrho tau={ETA * k:g}": float(mean_d[R.steps.index(k)]) for k in (2, 4, K_SHORT, STEPS)},
                             "max over tau of |dvarrho| (seed mean)": float(mean_d.abs().max()),
                             "tau_flat (every seed)": _tau_flat(R, q)})
    return rows


def _fig3_series(ctx, data):
    out = {}
    for act in ("linear", "relu"):
        for m, R in grid(ctx, act, data).items():
            for q in qs(ctx):
                out[f"{data} {act} m={m} q={q}"] = {"x": [ETA * k for k in R.steps],
                                                    "y": R.varrho[:, _q_sel(R, q)].mean(1).tolist(),
                                                    "xlabel": "τ = ηk", "ylabel": "ϱ (seed mean)",
                                                    "plot": f"fig3 {data} {act} m={m}"}
    return out


@pytest.mark.claim("wang2024/fig-3")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="q < 0 trajectories are not flat throughout training: over the paper's horizon (τ = 20 ≈ 50 "
                          "epochs at lr 0.003) ϱ rises by far more than 0.05 for q < 0, most for the widest nets")
def test_fig3_flat_for_negative_q(record, ctx):
    """§6.2 as printed: 'all trajectories with q < 0 remain flat throughout training' — for every q < 0 cell (both
    models, every width, digits and synthetic data) the seed-mean trajectory keeps |ϱ(τ) − ϱ(0)| < 0.05 at every
    recorded τ ≤ 20 (catalog: 'flat' = Δϱ < 0.05). The ϱ(τ) curves of every (data, model, m, q) cell are in the
    record's series. The catalog's short-horizon reading (τ ≤ 2) is written as a separate, reported-only record."""
    rows = [r for data in DATASETS for r in _fig3_rows(ctx, data)]
    series = {}
    for data in DATASETS:
        series |= _fig3_series(ctx, data)
    neg = [r for r in rows if r["q"] < 0]
    key = "max over tau of |dvarrho| (seed mean)"
    bad = [r for r in neg if r[key] >= FLAT]
    worst = max(neg, key=lambda r: r[key])
    short = f"dvarrho tau={ETA * K_SHORT:g}"
    short_bad = [(r["data"], r["model"], r["m"], r["q"], round(r[short], 3)) for r in neg if abs(r[short]) >= FLAT]
    tf = [r["tau_flat (every seed)"] for r in neg]
    record("not-applicable", config=_config(ctx, horizon_tau=ETA * K_SHORT, datasets=list(DATASETS)),
           observed=max(abs(r[short]) for r in neg), bound=FLAT,
           tightness="max over q < 0 cells of |seed-mean Δϱ(τ=2)| (short-horizon reading)",
           table=[{k: r[k] for k in ("data", "model", "m", "q", short, "tau_flat (every seed)")} for r in neg],
           note=(f"Reported only — the catalog's short-horizon reading, not the paper's statement ('throughout "
                 f"training'): |Δϱ(τ=2)| < {FLAT} in {len(neg) - len(short_bad)}/{len(neg)} q < 0 cells"
                 + (f"; exceeded in {short_bad}" if short_bad else "")
                 + f". τ_flat (every seed within {FLAT}) ranges {min(tf):g}..{max(tf):g}."))
    ok = not bad
    record("holds" if ok else "expected-failure", observed=worst[key], bound=FLAT, table=rows, series=series,
           config=_config(ctx, horizon_tau=ETA * STEPS, datasets=list(DATASETS)),
           tightness="max over q < 0 cells of the largest seed-mean |Δϱ(τ)|, τ ≤ 20",
           finding="" if ok else
           (f"|Δϱ| ≥ {FLAT} within τ ≤ {ETA * STEPS:g} in {len(bad)}/{len(neg)} q < 0 cells (max {worst[key]:.3f} at "
            f"{worst['data']}, {worst['model']}, m = {worst['m']}, q = {worst['q']}); flatness (every seed within "
            f"{FLAT}) lasts only up to τ = {min(tf):g} in the least flat cell and {max(tf):g} in the flattest. 'Flat for "
            "q < 0' holds over short horizons, not throughout a training run of the paper's length."))
    assert_claim(ok, f"{len(bad)}/{len(neg)} q<0 cells not flat")


def _fig3_speed(ctx, act, data, sign=1.0, shuffle=False):
    A = _flat(ctx, act, lambda R: _delta(R, K_SHORT) / (ETA * K_SHORT), data)
    y = A[:, 2]
    if shuffle:
        y = y[np.random.default_rng(2000 + ctx.seed).permutation(y.size)]
    return F.stratified_kendall(sign * np.log2(A[:, 0]), y, A[:, 1], n_perm=N_PERM, seed=ctx.seed)


@pytest.mark.claim("wang2024/fig-3")
@pytest.mark.parametrize("data", DATASETS)
def test_fig3_speed_increases_with_width(record, ctx, data):
    """§6.2 'the speed of accumulation significantly increases with larger network widths': early speed
    V = Δϱ(τ=2)/2 vs log m, Kendall trend within each q pooled (permutation p < 0.01), both models."""
    res = {act: _fig3_speed(ctx, act, data) for act in ("linear", "relu")}
    rows = [{"model": a, "pooled S": r["S"], "p": r["p"], "Kendall tau per q": r["per"]} for a, r in res.items()]
    ok = all(r["significant"] for r in res.values())
    record("holds" if ok else "violated", observed=max(r["p"] for r in res.values()), bound=ALPHA,
           tightness="pooled within-q Kendall p-value of V = Δϱ(τ=2)/2 vs log m (max over models)",
           config=_config(ctx, data, horizon_tau=ETA * K_SHORT, n_perm=N_PERM), table=rows,
           note="Per-q Kendall τ is reported, not required: for q < 0 the early speed is small and its ordering "
                "noisier.")
    assert ok, rows


@pytest.mark.claim("wang2024/fig-3")
@pytest.mark.parametrize("data", DATASETS)
def test_fig3_speed_check_rejects_wrong(record, ctx, data):
    """Companion: reversed width ordering and a shuffled grid are not significant (p ≥ 0.01)."""
    ps = {(a, v): _fig3_speed(ctx, a, data, sign=-1.0 if v == "reversed" else 1.0, shuffle=v == "shuffled")["p"]
          for a in ("linear", "relu") for v in ("reversed", "shuffled")}
    rejected = min(ps.values()) >= ALPHA
    record("holds" if rejected else "violated", role="companion", observed=min(ps.values()), bound=ALPHA,
           tightness="smallest p of a wrong ordering (rejected when ≥ α)", config={"data": data},
           table=[{"model": a, "variant": v, "p": p} for (a, v), p in ps.items()])
    assert rejected, ps


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
                     "acc per q (seed mean)": [round(float(R.acc[_q_sel(R, q)].mean()), 4) for q in R.qs]})
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
    runs = {m: F.run_width("linear", m, qs(ctx), 2, data, eta=ETA, steps=STEPS, record=[0, STEPS], eps=EPS,
                           generator=ctx.generator("wang2024/fig-4", {"m": m}), lr_scale=lambda m, q: m ** (-2 * q))
            for m in (16, 256)}
    rows, worst, _ = _fig4_linear(ctx, runs)
    rejected = worst["ratio"] > 1.5 and not _fig4_ok(worst)
    record("holds" if rejected else "violated", role="companion", observed=worst["ratio"], bound=1.0, table=rows,
           tightness="max ‖w_T − w_ref‖/‖w(0)‖ of the confounded grid (rejected when > 1.5 and the check fails)")
    assert rejected, worst


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
                     "acc per q": [round(float(R.acc[_q_sel(R, q)].mean()), 4) for q in R.qs],
                     "varrho per q": [round(float(R.varrho[-1][_q_sel(R, q)].mean()), 4) for q in R.qs]})
    A = _flat(ctx, "relu", lambda R: R.varrho[-1])
    tr = F.stratified_kendall(A[:, 1], A[:, 2], A[:, 0], n_perm=N_PERM, seed=ctx.seed)
    record("holds" if tr["significant"] else "violated", observed=tr["p"], bound=ALPHA, config=_config(ctx), table=rows,
           tightness="pooled within-width Kendall p of ϱ(τ=20) vs q")
    assert tr["significant"], (tr, rows)


@pytest.mark.claim("wang2024/fig-4")
def test_fig4_wide_accuracy_drops_with_varrho(record, ctx):
    """§6.2: for the widest MLPs, raising q raises ϱ while accuracy declines (0.93 → 0.68 at width 8192). Measured
    at the widest grid width (Spearman(acc, ϱ(τ=20)), one-sided permutation p) and recorded as not applicable:
    the paper's drop is at width 8192 on 10-class MNIST with a Gaussian 10×m head, where the end-to-end step is
    ≈ η·m^{-2q} (catalog fig-4 pitfall), none of which the binary CPU stand-in has; a non-reproduction here is not
    evidence about the paper. Reproducing it needs the full profile at width 8192 and, to separate the effect of
    ϱ from the confound, the 10-class Gaussian-head variant at matched effective step η·m^{2q}."""
    m = max(grid(ctx, "relu"))
    R = grid(ctx, "relu")[m]
    rs, p = F.spearman_permutation(R.varrho[-1].numpy(), R.acc.numpy(), n_perm=N_PERM, seed=ctx.seed, alternative="less")
    accs = [round(float(R.acc[_q_sel(R, q)].mean()), 3) for q in R.qs]
    rhos = [round(float(R.varrho[-1][_q_sel(R, q)].mean()), 3) for q in R.qs]
    record("not-applicable", observed=rs, bound=0.0, config=_config(ctx, width=m, n_perm=N_PERM),
           tightness="Spearman(accuracy, ϱ(τ=20)) at the widest grid width (the paper's trend: < 0)",
           table=[{"q": q, "accuracy (seed mean)": a_, "varrho(tau=20) (seed mean)": r_} for q, a_, r_ in zip(R.qs, accs, rhos)],
           note=f"Not reproduced at this scale (reported, not a verdict): width {m}, Spearman(acc, ϱ) = {rs:.2f} "
                f"(one-sided p = {p:.2f}); accuracy per q {R.qs} = {accs} while ϱ(τ=20) = {rhos}. The paper's 0.93 → 0.68 "
                "is at width 8192 with a 10-class Gaussian head (effective step ≈ η·m^{-2q}).")


# ---- Fig. 6 --------------------------------------------------------------------------------------

def _fig6_tests(ctx, act, data="digits", *, sign=1.0, shuffle=False, lines=False):
    """Pooled within-line Kendall trends of total Δϱ along width (lines = fixed q) and along q (lines = fixed m),
    each a stratified permutation test at ALPHA. With ``lines``: also, per line, the one-sided permutation p of a
    *decrease* (H1: S < 0), to be judged at the Bonferroni level ALPHA/(number of lines in the record)."""
    A = _flat(ctx, act, lambda R: R.varrho[-1] - R.varrho[0], data)
    y = A[:, 2]
    if shuffle:
        y = y[np.random.default_rng(3000 + ctx.seed).permutation(y.size)]
    width = F.stratified_kendall(sign * np.log2(A[:, 0]), y, A[:, 1], n_perm=N_PERM, seed=ctx.seed)
    qax = F.stratified_kendall(sign * A[:, 1], y, A[:, 0], n_perm=N_PERM, seed=ctx.seed)
    if lines:
        for res, xcol, gcol in ((width, 0, 1), (qax, 1, 0)):
            res["p_decrease"] = {}
            for g in dict.fromkeys(A[:, gcol].tolist()):
                sel = A[:, gcol] == g
                x = np.log2(A[sel, 0]) if xcol == 0 else A[sel, 1]
                res["p_decrease"][g] = F.kendall_permutation(sign * x, y[sel], n_perm=N_PERM_LINE, seed=ctx.seed,
                                                             alternative="less")[1]
    return width, qax


# per-line permutations: the Bonferroni level ALPHA/L (L ≤ 2 models × (10 widths + 7 q) = 34 lines) must exceed the
# smallest attainable p = 1/(N_PERM_LINE + 1)
N_PERM_LINE = 20000


def _fig6_ok(width, qax, alpha_line):
    """Both pooled trends significant at ALPHA, and no line with a significant decrease at the per-line level."""
    dec = [p for r in (width, qax) for p in r["p_decrease"].values()]
    return width["significant"] and qax["significant"] and min(dec) >= alpha_line


@pytest.mark.claim("wang2024/fig-6")
@pytest.mark.parametrize("data", DATASETS)
def test_fig6_total_dvarrho_increases_with_width_and_q(record, ctx, data):
    """App. D / Fig. 6: total Δϱ = ϱ(τ=20) − ϱ(0) increases with width at fixed q and with q at fixed width, linear
    and ReLU. Per axis and model, the pooled within-line Kendall trend must be significant (permutation p < 0.01),
    and no single line (a row or column of the paper's heat map) may show a significant decrease: one-sided
    permutation test per line at the Bonferroni level 0.01/L over the L lines of the record (family-wise 0.01).
    Each line's sample Kendall τ is reported; requiring every sample τ > 0 would be a criterion without a
    false-alarm rate (at m = 16 the q-effect on Δϱ is small next to the seed-to-seed spread of ϱ(0))."""
    res = {act: _fig6_tests(ctx, act, data, lines=True) for act in ("linear", "relu")}
    n_lines = sum(len(r["p_decrease"]) for w, qa in res.values() for r in (w, qa))
    alpha_line = ALPHA / n_lines
    rows, series, ok = [], {}, True
    for act in ("linear", "relu"):
        width, qax = res[act]
        ok &= _fig6_ok(width, qax, alpha_line)
        rows.append({"model": act, "axis": "width (per q)", "Kendall tau": width["per"], "pooled p": width["p"],
                     "per-line p of a decrease": width["p_decrease"]})
        rows.append({"model": act, "axis": "q (per width)", "Kendall tau": qax["per"], "pooled p": qax["p"],
                     "per-line p of a decrease": qax["p_decrease"]})
        cells = _cell_means(ctx, act, lambda R: R.varrho[-1] - R.varrho[0], data)
        lvl0 = _cell_means(ctx, act, lambda R: R.varrho[0], data)
        lvl = _cell_means(ctx, act, lambda R: R.varrho[-1], data)
        ms = list(grid(ctx, act, data))
        for q in qs(ctx):
            series[f"{data} {act} q={q}"] = {"x": ms, "y": [cells[(m, q)] for m in ms], "xlabel": "width m",
                                             "ylabel": "total Δϱ (τ=20)", "logx": True, "plot": f"fig6 {data} {act}"}
            rows.append({"model": act, "q": q, "dvarrho per width": [round(cells[(m, q)], 4) for m in ms],
                         "varrho(0) per width": [round(lvl0[(m, q)], 4) for m in ms],
                         "varrho(20) per width": [round(lvl[(m, q)], 4) for m in ms]})
    neg = [(r["model"], r["axis"], g) for r in rows if "Kendall tau" in r for g, t in r["Kendall tau"].items() if t <= 0]
    record("holds" if ok else "violated", observed=max(r["pooled p"] for r in rows if "pooled p" in r), bound=ALPHA,
           tightness="max pooled Kendall p over the two axes and two models (no line may decrease significantly)",
           config=_config(ctx, data, horizon_tau=ETA * STEPS, n_perm=N_PERM, n_perm_line=N_PERM_LINE,
                          per_line_alpha=alpha_line), table=rows, series=series,
           note="Abstract/contribution 2 ('wider MLPs exhibit more resistance to increased co-correlation') contradicts "
                "Fig. 6 read as accumulation: wider nets accumulate more Δϱ; they only start lower (F2: ϱ(0) ≈ "
                "√d/(√m+√d)), see the ϱ(0)/ϱ(20) rows and test_fig6_abstract_wider_resists. "
                + (f"Lines with sample Kendall τ ≤ 0 (none significant): {neg}." if neg else "Every line has Kendall τ > 0."))
    assert ok, rows


@pytest.mark.claim("wang2024/fig-6")
@pytest.mark.parametrize("data", DATASETS)
def test_fig6_check_rejects_reversed_or_shuffled(record, ctx, data):
    """Companion: the Fig. 6 test rejects reversed axes (width and q order flipped) and a shuffled grid."""
    out, res = {}, {}
    for act in ("linear", "relu"):
        for v in ("reversed", "shuffled"):
            res[(act, v)] = _fig6_tests(ctx, act, data, sign=-1.0 if v == "reversed" else 1.0, shuffle=v == "shuffled",
                                        lines=True)
    n_lines = sum(len(r["p_decrease"]) for (a, v), (w, qa) in res.items() if v == "reversed" for r in (w, qa))
    for (act, v), (w, qa) in res.items():
        out[(act, v)] = (_fig6_ok(w, qa, ALPHA / n_lines), w["p"], qa["p"])
    rejected = not any(o[0] for o in out.values())
    record("holds" if rejected else "violated", role="companion", observed=sum(o[0] for o in out.values()), bound=0,
           tightness="# wrong versions that pass the Fig. 6 test (rejected when 0)", config={"data": data},
           table=[{"model": a, "variant": v, "passes?": o[0], "p width": o[1], "p q": o[2]} for (a, v), o in out.items()])
    assert rejected, out


@pytest.mark.claim("wang2024/fig-6")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="abstract/contribution 2/conclusion: 'wider MLPs exhibit more resistance to increased "
                          "co-correlation' — contradicted by Fig. 6 and by the runs: total Δϱ increases with width")
def test_fig6_abstract_wider_resists(record, ctx):
    """The abstract's reading as an accumulation statement: total Δϱ decreases with width at fixed q (pooled
    within-q Kendall trend of Δϱ in −log m, p < 0.01), linear and ReLU, digits and synthetic data."""
    res = {(data, act): _fig6_tests(ctx, act, data, sign=-1.0)[0] for data in DATASETS for act in ("linear", "relu")}
    ok = all(r["significant"] for r in res.values())
    neg_lines = sum(v < 0 for r in res.values() for v in r["per"].values())
    n_lines = sum(len(r["per"]) for r in res.values())
    record("holds" if ok else "expected-failure", observed=max(r["p"] for r in res.values()), bound=ALPHA,
           tightness="max over (data, model) of the pooled p for 'Δϱ decreases with width' (claim: < α)",
           table=[{"data": d, "model": a, "p (H1: decreasing in width)": r["p"], "Kendall tau per q (vs -log m)": r["per"]}
                  for (d, a), r in res.items()],
           finding="" if ok else
           (f"Total Δϱ over τ = {ETA * STEPS:g} does not decrease with width: Kendall τ of Δϱ vs −log m is negative on "
            f"{neg_lines}/{n_lines} (data, model, q) lines and the pooled p for a decrease is ≥ {min(r['p'] for r in res.values()):.2f} "
            "everywhere: wider nets accumulate more co-correlation, as Fig. 6 / §6.2 say. The abstract's 'more "
            "resistance' holds only for the level ϱ (wider nets start lower, F2), not for the accumulation."))
    assert_claim(ok, "Δϱ does not decrease with width")
