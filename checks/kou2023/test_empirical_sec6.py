"""Kou et al. (2023) §6 and Appendix I: empirical observations (claim kou2023/rem-6).

(i) larger leaky slopes γ make srank(W_{+1}) decrease faster and settle lower (Fig. 1);
(ii) smaller initialization σ₀ gives a smaller stable rank after training (Figs. 2–3, MNIST in the paper);
(iii) width has a weak effect on the final stable rank; very small widths give low stable rank (Figs. 4–5,
MNIST in the paper).

Everything runs on the paper's synthetic P1 data (``fixtures.data.kou_section6``: n = 10, d = 784,
μ ~ N(0, 10⁻⁴ I), x_i = y_i μ + ξ_i), m = 100, η = 0.1, 50 full-batch GD steps (batch 64 > n), 5 seeds
(each seed its own data and initialization draw), exact coefficient-space GD (Lemma 5.2) in float64.
P1 violates the theorems' hypotheses (C_data ≈ 1 for ReLU, ×γ⁴ for leaky) and 50 steps is
pre-asymptotic; both are recorded. Orderings are judged by one-sided Spearman rank-trend tests at a
declared false-alarm level α = 0.01, each with a companion that feeds the reversed labels and must be
rejected. The MNIST protocol (P3) is recorded as not applicable (no download; the 10→2 class reduction is
unspecified).
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from theory.papers.kou2023 import empirical as emp
from theory.sim import train

CLAIM = "kou2023/rem-6"
ALPHA = 0.01  # declared false-alarm rate of every ordering test
SEEDS = 5
GAMMAS = (0.0, 0.1, 0.25, 0.5, 0.75)  # 0 = ReLU; γ = 1 (linear) is outside the leaky model's (0, 1)
STEPS = 50  # the paper's 50 epochs
WEAK = 1.25  # declared: "weak width effect" = seed-mean final srank varies by ≤ 25% over m ≥ 50


def _gens(ctx, seed, tag):
    return (ctx.generator(CLAIM, {"data": "P1", "seed": seed}),
            ctx.generator(CLAIM, {"init": tag, "seed": seed}))


def _hyp_summary(runs) -> dict:
    h = [r.hyp for r in runs]
    return {"inside": any(x["inside"] for x in h), "C_data_R": [round(x["C_data_R"], 3) for x in h],
            "C_data (act-specific, worst)": min(x["C_data"] for x in h),
            "outside_reasons (seed 0)": h[0]["outside_reasons"],
            "n_pos per seed": [x["n_pos"] for x in h],
            "tau at t=50 (η R_max² t/(nm))": float(0.1 * h[0]["R_max"] ** 2 * STEPS / (10 * 100))}


# --- (i) slopes -----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _slope_runs(ctx):
    """srank(W_{+1}) (T, seeds, γ) on a grid: every step up to 50, then geometric to T_ext.
    Within a seed all γ share data and W(0) (common random numbers)."""
    T_ext = ctx.pick(quick=2000, full=20_000)
    grid = sorted(set(range(STEPS + 1)) | set(train.geometric_grid(T_ext, 25)))
    S, L, runs = [], [], []
    for s in range(SEEDS):
        row, lrow = [], []
        for g in GAMMAS:
            cfg = emp.p1_config(g, steps=T_ext)
            dg, ig = _gens(ctx, s, "slopes")
            run = emp.p1_run(cfg, dg, ig, record=grid, device=ctx.device)
            row.append(run.srank[:, 0, 0].cpu().numpy())
            lrow.append(run.loss[:, 0].cpu().numpy())
            if g == GAMMAS[1]:
                runs.append(run)
        S.append(np.stack(row, -1))
        L.append(np.stack(lrow, -1))
    return np.asarray(grid), np.stack(S, 1), np.stack(L, 1), runs, T_ext


@pytest.mark.claim(CLAIM)
def test_slope_ordering_at_paper_horizon(ctx, record):
    """rem-6 (i), Fig. 1: over t ∈ [0, 50], larger γ ⇒ smaller area (1/50)∫srank dt ('decreases faster')
    and smaller srank(W_{+1}) at t = 50 ('settles lower'); one-sided Spearman over (seed, γ) pairs at
    α = 0.01. Companion: the same test fed with the γ labels reversed must reject."""
    t, S, L, runs, _ = _slope_runs(ctx)
    k = t <= STEPS
    lev = np.repeat(np.asarray(GAMMAS)[None], SEEDS, 0)
    area = np.array([[emp.area(t[k], S[k, s, g]) for g in range(len(GAMMAS))] for s in range(SEEDS)])
    final = S[k][-1]  # (seeds, γ)
    ta, tf = (emp.ordering(lev, v, direction="down", alpha=ALPHA) for v in (area, final))
    rev = np.repeat(np.asarray(GAMMAS[::-1])[None], SEEDS, 0)
    ra, rf = (emp.ordering(rev, v, direction="down", alpha=ALPHA) for v in (area, final))
    ma, mf = area.mean(0), final.mean(0)
    adj_bad = [f"{GAMMAS[i]}→{GAMMAS[i + 1]}" for i in range(len(GAMMAS) - 1) if mf[i + 1] > mf[i]]
    ok = ta["holds"] and tf["holds"]
    table = [{"gamma": g, "act": "relu" if g == 0 else "leaky_relu", "area mean": float(ma[i]),
              "area sd": float(area[:, i].std(ddof=1)), "srank(50) mean": float(mf[i]),
              "srank(50) sd": float(final[:, i].std(ddof=1)), "srank(0) mean": float(S[0, :, i].mean()),
              "loss(50) mean": float(L[k][-1, :, i].mean())} for i, g in enumerate(GAMMAS)]
    ser = {}
    for i, g in enumerate(GAMMAS):
        ser.update(emp.bands(t[k], S[k][:, :, i], f"γ={g}" if g else "ReLU", plot="fig1"))
    record("holds" if ok else "violated", observed=tf["rho"], bound=0.0,
           config={"data": "D-P (P1)", "n": 10, "d": 784, "m": 100, "eta": 0.1, "sigma0": 1e-3, "steps": STEPS,
                   "gammas": GAMMAS, "seeds": SEEDS, "alpha": ALPHA},
           hypotheses=_hyp_summary(runs), table=table, series=ser,
           tightness=(f"area: Spearman ρ={ta['rho']:.3f} (p={ta['p']:.1e}); srank(50): ρ={tf['rho']:.3f} "
                      f"(p={tf['p']:.1e}; pooled uncentred p={tf['pooled_p']:.1e}); seed means srank(50) {np.round(mf, 4).tolist()}, area "
                      f"{np.round(ma, 3).tolist()} for γ={list(GAMMAS)}; adjacent pairs out of order at t=50: "
                      f"{adj_bad or 'none'}; reversed-label companion p = {ra['p']:.2f}, {rf['p']:.2f} (rejected)"),
           note=("P1 is outside the theorems' hypotheses (C_data ≈ 1 for ReLU, times γ⁴ for leaky) and 50 steps is "
                 "pre-asymptotic (τ ≈ 4): this is a check of the paper's plot, not of a theorem"))
    assert ok, (ta, tf)
    assert not ra["holds"] and not rf["holds"]  # reversed γ labels are rejected


@pytest.mark.claim(CLAIM)
@pytest.mark.xfail(strict=True, reason=(
    "rem-6 (i) 'settle lower as t→∞' does not hold among leaky slopes at the extended horizon: srank−1 at "
    "T = 2·10³ is not ordered downward in γ — from γ = 0.5 to 0.75 it goes up in 3–5 of 5 seeds (measured seed "
    "means e.g. 6.2e-3 → 6.6e-3, pair p ≈ 0.96–1.0; see the record); all leaky limits are 1 (Thm 4.1(b))"))
def test_slope_ordering_extended_horizon(ctx, record):
    """rem-6 (i), 'smaller value when epoch t → ∞': srank(W_{+1}) − 1 at the extended horizon (2·10³ quick,
    2·10⁴ full) should decrease with γ over the leaky slopes {0.1, 0.25, 0.5, 0.75}: every adjacent pair
    (γ_k, γ_{k+1}) must pass the within-seed one-sided rank-trend test at α = 0.01 (a monotone ordering).
    Does not reproduce: strict xfail with the measured numbers."""
    t, S, _, runs, T_ext = _slope_runs(ctx)
    gl = [i for i, g in enumerate(GAMMAS) if g > 0]
    gs = [GAMMAS[i] for i in gl]
    gap = S[-1][:, gl] - 1  # (seeds, leaky γ)
    lev = np.repeat(np.asarray(gs)[None], SEEDS, 0)
    pairs = [emp.ordering(lev[:, k:k + 2], gap[:, k:k + 2], direction="down", alpha=ALPHA) for k in range(len(gs) - 1)]
    allg = emp.ordering(lev, gap, direction="down", alpha=ALPHA)
    ok = all(r["holds"] for r in pairs)
    up_seeds = [int((gap[:, k + 1] > gap[:, k]).sum()) for k in range(len(gs) - 1)]
    relu_gap = S[-1][:, 0] - 1
    record("holds" if ok else "expected-failure", observed=max(r["p"] for r in pairs), bound=ALPHA,
           config={"data": "D-P (P1)", "m": 100, "eta": 0.1, "sigma0": 1e-3, "steps": T_ext, "seeds": SEEDS,
                   "gammas": gs, "alpha": ALPHA},
           hypotheses=_hyp_summary(runs),
           table=[{"gamma": g, "srank(T)-1 mean": float(gap[:, c].mean()), "sd": float(gap[:, c].std(ddof=1))}
                  for c, g in enumerate(gs)] + [{"gamma": 0.0, "srank(T)-1 mean": float(relu_gap.mean()),
                                                 "sd": float(relu_gap.std(ddof=1))}],
           series={**emp.bands(t[t >= 1], S[t >= 1][:, :, gl[0]] - 1, "γ=0.1", ylabel="srank − 1", plot="ext", logx=True),
                   **emp.bands(t[t >= 1], S[t >= 1][:, :, gl[-1]] - 1, "γ=0.75", ylabel="srank − 1", plot="ext",
                               logx=True)},
           tightness=(f"T={T_ext}: seed-mean srank−1 {np.round(gap.mean(0), 5).tolist()} for γ={gs} (ReLU "
                      f"{relu_gap.mean():.3f}); adjacent-pair p-values {[round(r['p'], 3) for r in pairs]} (α={ALPHA}); "
                      f"seeds (of {SEEDS}) where the larger γ is higher: {up_seeds}; all-leaky Spearman "
                      f"ρ={allg['rho']:.3f} (p={allg['p']:.2g}, driven by γ=0.1 not yet converged)"),
           finding=("At the extended horizon larger leaky slopes do not settle lower: γ ≥ 0.25 end within ~10% of each "
                    "other with srank−1 increasing from γ=0.5 to 0.75, and every leaky slope tends to 1 (Thm 4.1(b)); "
                    "only ReLU stays clearly above. Fig. 1's ordering is a finite-time (t ≤ 50) effect"))
    assert ok, pairs


# --- (ii) initialization scale --------------------------------------------------------------------
SIGMAS = (1e-5, 1e-4, 1e-3)


@pytest.mark.claim(CLAIM)
@pytest.mark.parametrize("gamma", [0.0, 0.1], ids=["relu", "leaky0.1"])
def test_init_scale_ordering(ctx, record, gamma):
    """rem-6 (ii), Figs. 2–3 (ReLU and leaky γ = 0.1): smaller σ₀ ∈ {1e-5, 1e-4, 1e-3} ⇒ smaller srank(W_{+1})
    after 50 steps and smaller area, on P1 (σ₀ values on the ensemble axis, 5 data/init seeds); one-sided
    Spearman at α = 0.01. Companion: reversed σ₀ labels must be rejected."""
    cfg = emp.p1_config(gamma, E=len(SIGMAS))
    grid = list(range(STEPS + 1))
    S, runs = [], []
    for s in range(SEEDS):
        dg, ig = _gens(ctx, s, f"sigma-{gamma}")
        run = emp.p1_run(cfg, dg, ig, record=grid, device=ctx.device, sigma0s=list(SIGMAS))
        S.append(run.srank[:, :, 0].cpu().numpy())  # (T, σ)
        runs.append(run)
    S = np.stack(S, 1)  # (T, seeds, σ)
    t = np.asarray(grid)
    lev = np.repeat(np.log10(SIGMAS)[None], SEEDS, 0)
    final = S[-1]
    area = np.array([[emp.area(t, S[:, s, i]) for i in range(len(SIGMAS))] for s in range(SEEDS)])
    tf, ta = (emp.ordering(lev, v, direction="up", alpha=ALPHA) for v in (final, area))
    rev = np.repeat(np.log10(SIGMAS[::-1])[None], SEEDS, 0)
    rf, ra = (emp.ordering(rev, v, direction="up", alpha=ALPHA) for v in (final, area))
    ok = tf["holds"] and ta["holds"]
    ser = {}
    for i, s0 in enumerate(SIGMAS):
        ser.update(emp.bands(t, S[:, :, i], f"σ₀={s0:g}", plot=f"sigma-{gamma}"))
    record("holds" if ok else "violated", observed=tf["rho"], bound=0.0,
           config={**cfg.as_dict(), "sigma0s": SIGMAS, "seeds": SEEDS, "alpha": ALPHA}, hypotheses=_hyp_summary(runs),
           table=[{"sigma0": s0, "srank(0) mean": float(S[0, :, i].mean()), "srank(50) mean": float(final[:, i].mean()),
                   "srank(50) sd": float(final[:, i].std(ddof=1)), "area mean": float(area[:, i].mean())}
                  for i, s0 in enumerate(SIGMAS)],
           series=ser,
           tightness=(f"srank(50) seed means {np.round(final.mean(0), 4).tolist()} for σ₀={list(SIGMAS)}: Spearman "
                      f"ρ={tf['rho']:.3f} (p={tf['p']:.1e}; pooled uncentred p={tf['pooled_p']:.2g}); area ρ={ta['rho']:.3f} (p={ta['p']:.1e}); reversed "
                      f"labels p = {rf['p']:.2f}, {ra['p']:.2f} (rejected)"),
           note="paper's (ii) is an MNIST observation (P3, not applicable); checked here on P1 (outside the hypotheses)")
    assert ok, (tf, ta)
    assert not rf["holds"] and not ra["holds"]


# --- (iii) width -----------------------------------------------------------------------------------
WIDTH_SIGMAS = (1e-5, 1e-3)  # App. I uses σ₀ = 1e-5; 1e-3 is the companion (strong width effect)
SEEDS_W = 10  # width effects are small against seed-to-seed scatter: 10 data/init draws


@functools.lru_cache(maxsize=None)
def _width_runs(ctx, gamma):
    ms = ctx.pick(quick=(10, 50, 100, 500), full=(10, 50, 100, 500, 1000))
    grid = [0, 1, 2, 5, 10, 20, 30, 40, 50]  # m×m eigenproblems only on a few steps (m up to 1000)
    out, runs = [], []
    for m in ms:
        cfg = emp.p1_config(gamma, m=m, E=len(WIDTH_SIGMAS))
        row = []
        for s in range(SEEDS_W):
            dg, ig = _gens(ctx, s, f"width-{gamma}-{m}")
            run = emp.p1_run(cfg, dg, ig, record=grid, device=ctx.device, sigma0s=list(WIDTH_SIGMAS))
            row.append(run.srank[:, :, 0].cpu().numpy())  # (T, σ)
            if m == 100:
                runs.append(run)
        out.append(np.stack(row, 1))  # (T, seeds, σ)
    return ms, np.asarray(grid), np.stack(out, -1), runs  # (T, seeds, σ, m)


def _width_measure(ctx, gamma):
    ms, t, S, runs = _width_runs(ctx, gamma)
    final = S[-1]  # (seeds, σ, m)
    mean = final.mean(0)  # (σ, m)
    big = np.asarray(ms) >= 50
    spread = mean[:, big].max(1) / mean[:, big].min(1)  # per σ
    lev = np.repeat(np.asarray(ms, float)[None], SEEDS_W, 0)
    trend = emp.ordering(lev, final[:, 0], direction="up", alpha=ALPHA)
    rev = emp.ordering(np.repeat(np.asarray(ms[::-1], float)[None], SEEDS_W, 0), final[:, 0], direction="up", alpha=ALPHA)
    table = [{"m": m, "srank(0) mean (σ₀=1e-5)": float(S[0, :, 0, c].mean()),
              "srank(50) mean σ₀=1e-5": float(mean[0, c]), "sd": float(final[:, 0, c].std(ddof=1)),
              "srank(50) mean σ₀=1e-3": float(mean[1, c])} for c, m in enumerate(ms)]
    ser = {f"m={m}": {"x": np.asarray(t, float).tolist(), "y": S[:, :, 0, c].mean(1).tolist(), "xlabel": "GD step t",
                      "ylabel": "srank(W_{+1}) (σ₀=1e-5, seed mean)", "logx": False, "logy": True, "plot": "width"}
           for c, m in enumerate(ms)}
    return ms, mean, spread, trend, rev, table, ser, runs


@pytest.mark.claim(CLAIM)
@pytest.mark.parametrize("gamma", [0.0, 0.1], ids=["relu", "leaky0.1"])
def test_width_weak_effect(ctx, record, gamma):
    """rem-6 (iii), App. I (σ₀ = 1e-5): width has a weak effect on the final stable rank: the seed-mean
    srank(W_{+1}) after 50 steps varies by at most a factor 1.25 (declared) over m ∈ {50, 100, 500(, 1000)}.
    Companion: the same statistic at σ₀ = 1e-3 (where the initialization part, which grows with m, is not yet
    washed out) exceeds 1.25, so the check can fail."""
    ms, mean, spread, _, _, table, ser, runs = _width_measure(ctx, gamma)
    ok = spread[0] <= WEAK
    record("holds" if ok else "violated", observed=float(spread[0]), bound=WEAK,
           config={"data": "D-P (P1)", "gamma": gamma, "act": "relu" if gamma == 0 else "leaky_relu", "widths": ms,
                   "sigma0": WIDTH_SIGMAS[0], "eta": 0.1, "steps": STEPS, "seeds": SEEDS_W},
           hypotheses=_hyp_summary(runs), table=table, series=ser,
           tightness=(f"max/min seed-mean srank(50) over m ≥ 50: {spread[0]:.3f} at σ₀=1e-5 (means "
                      f"{np.round(mean[0], 3).tolist()} for m={list(ms)}); companion σ₀=1e-3: {spread[1]:.2f} > {WEAK} "
                      f"(means {np.round(mean[1], 2).tolist()}) — the weak-width effect needs a small σ₀"),
           note="paper's (iii) is an MNIST observation (P3, not applicable); checked here on P1 (outside the hypotheses)")
    assert ok, spread
    assert spread[1] > WEAK  # a strong width effect is rejected by the same criterion


@pytest.mark.claim(CLAIM)
@pytest.mark.parametrize("gamma", [0.0, 0.1], ids=["relu", "leaky0.1"])
@pytest.mark.xfail(strict=True, reason=(
    "rem-6 (iii) 'very small widths give low stable rank' does not reproduce on P1 (σ₀ = 1e-5, 50 steps, "
    "10 seeds): m = 10 is not the lowest and srank(50) shows no significant increase with m (measured seed "
    "means and Spearman p in the record; e.g. leaky ≈1.01 for every m, ReLU m=10 above m ≥ 50)"))
def test_width_small_is_low(ctx, record, gamma):
    """rem-6 (iii), App. I Figs. 4–5 (ReLU / leaky γ = 0.1, σ₀ = 1e-5): very small widths give low stable rank
    and the final stable rank grows with width: within-seed one-sided Spearman of srank(W_{+1}) at t = 50 on
    m at α = 0.01, and m = 10 has the smallest seed mean. Does not reproduce on P1: strict xfail with the
    measured numbers. (The criterion's ability to fail is shown by the companion: reversed width labels.)"""
    ms, mean, _, trend, rev, table, ser, runs = _width_measure(ctx, gamma)
    lowest = int(np.argmin(mean[0])) == 0
    ok = trend["holds"] and lowest
    record("holds" if ok else "expected-failure", observed=trend["rho"], bound=0.0,
           config={"data": "D-P (P1)", "act": "relu" if gamma == 0 else "leaky_relu", "gamma": gamma, "widths": ms,
                   "sigma0": WIDTH_SIGMAS[0], "steps": STEPS, "seeds": SEEDS_W, "alpha": ALPHA},
           hypotheses=_hyp_summary(runs), table=table, series=ser,
           tightness=(f"srank(50) seed means {np.round(mean[0], 4).tolist()} for m={list(ms)}; within-seed Spearman "
                      f"ρ={trend['rho']:.3f} (p={trend['p']:.2f}; pooled p={trend['pooled_p']:.2f}); m=10 lowest: {lowest}; "
                      f"reversed labels p={rev['p']:.2f}"),
           finding=("On P1 at the paper's App. I scale σ₀ = 1e-5 the smallest width does not give a lower stable rank "
                    "after 50 steps, and there is no increase with width; the paper's Figs. 4–5 trend is an MNIST "
                    "observation (10 classes, many more samples than neurons at m = 10) that does not transfer to "
                    "n = 10 synthetic data, where W_{+1} − W_{+1}(0) has rank ≤ 10 for every m"))
    assert ok, (trend, mean[0])


# --- MNIST protocol --------------------------------------------------------------------------------
@pytest.mark.claim(CLAIM)
def test_mnist_protocol_not_applicable(ctx, record):
    """rem-6, §6 'Real-data experiments' and App. I (P3: MNIST, m = 1000, SGD batch 64, lr 0.1, 10 epochs):
    not applicable offline — MNIST cannot be downloaded here, and the paper does not say how the 10 classes
    are reduced to its binary ±1 model (nor the σ₀ convention: 'weight variance' vs standard deviation)."""
    record("not-applicable", observed=None, bound=None,
           config={"protocol": "P3 MNIST", "m": 1000, "batch": 64, "lr": 0.1, "epochs": 10},
           note=("MNIST protocol out of scope: no download at run time, the 10→2 class reduction for the binary "
                 "model is unspecified, and MNIST is far from the nearly-orthogonal regime of the theorems; "
                 "observations (ii) and (iii) are checked on the synthetic P1 data instead"))
    with pytest.raises(ValueError):  # the offline data path refuses a non-binary task, as it must
        from fixtures import real
        real.binary_digits(3, 3)
