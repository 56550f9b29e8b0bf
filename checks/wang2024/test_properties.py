"""Wang et al. §5.1 Properties 1–2 (catalog `prop-1`, `prop-2`) on the linear model (and ReLU for Property 1).

Property 1: ϱ builds up early and saturates later. Checked on per-step GD trajectories (τ = ηk): (a) fraction of
non-decreasing steps after τ = 0.5; (b) mean slope over the last 20 % of the steps vs the max slope, and the slope
on a geometric time grid (fitted decay exponent); (c) the saturation level from (F1): for non-separable data the
logistic-regression iterate w(k) = W(k)ᵀa converges to w*, so ϱ_∞ = ‖w*‖/‖W(0) + a(w* − w(0))ᵀ‖₂ < 1; for
separable data ‖w(k)‖ → ∞ and ϱ → 1.
Property 2: the early increment V = ϱ(τ=1) − ϱ(0) is larger when ‖W(0)‖₂ is smaller (Spearman over a (m, q) grid).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as st
import torch

from fixtures import wang2024 as fw
from theory import ClaimViolation, assert_claim, stats
from theory.papers.wang2024 import cocorrelation as cc
from theory.papers.wang2024 import concentration as conc
from theory.papers.wang2024 import dynamics as dyn
from theory.papers.wang2024 import properties as pr
from theory.sim import models, train
from theory.stats import fit_affine, fit_power

ETA1 = 0.5  # Property 1: GD step (the logistic loss in w has curvature ≤ 1/4, stable for η < 8)
STEPS1 = 400  # per-step trajectories: τ = 200
LONG = 10000  # (F1) horizon: τ = 5·10³
D1, N1 = 20, 400


def _init_cells(gen, ms, qs, seeds, d):
    """W(0), a for every (m, q, seed): W_ij ~ N(0, m^{-(1+2q)}) (Assumption 5.1). Returns {m: (W0, a, q list)}."""
    out = {}
    for m in ms:
        net = models.TwoLayerNet.init(len(qs) * seeds, m, d, q=0.0, act="linear", generator=gen)
        qlist = [q for q in qs for _ in range(seeds)]
        scale = torch.tensor([m ** -q for q in qlist], dtype=net.W.dtype, device=net.W.device)
        out[m] = (net.W * scale.view(-1, 1, 1), net.a, qlist)
    return out


_P1: dict = {}


P1_EFOLDS = 4  # the (F1) horizon spans at least this many e-folds of the slowest GD mode near w*


def p1_horizon(X, wstar) -> int:
    """(F1) horizon: LONG steps, or more when the slowest contraction −log(1 − ηλ_min(∇²L(w*))) of this draw's data is
    so slow that LONG steps span fewer than P1_EFOLDS e-folds (seed 10: λ_min half of seed 9's; with LONG alone the
    gap to ϱ_∞ was still 0.25·(1 − ϱ_∞) at the end)."""
    p = torch.sigmoid(X @ wstar)
    lam_min = float(torch.linalg.eigvalsh((X.T * (p * (1 - p))) @ X / X.shape[0])[0])
    return max(LONG, int(math.ceil(P1_EFOLDS / -math.log(1 - ETA1 * lam_min))))


def _prop1_runs(ctx):
    """Non-separable mixture (separation 0.3, n = 400, d = 20): per-step GD on W (run_linear) and the (F1) replica."""
    key = (ctx.profile, ctx.seed)
    if key in _P1:
        return _P1[key]
    gen = ctx.generator("wang2024/prop-1", {"data": "mixture-0.3"})
    X, y, _, _ = fw.mixture(N1, 10, D1, generator=gen, separation=0.3)
    ms, qs, seeds = ctx.pick(quick=[16, 64, 256], full=[16, 64, 256, 1024]), [0.0, 0.25], ctx.pick(quick=3, full=8)
    cells = _init_cells(gen, ms, qs, seeds, D1)
    W0v, av, _ = cells[ms[1]]  # validation of the (F1) replica against GD on W (one width, first 100 steps)
    check = dyn.run_linear(W0v, av, X, y, eta=ETA1, steps=100)["varrho"]
    state = [torch.cat(t) for t in zip(*(pr.f1_state(W0, a) for W0, a, _ in cells.values()))]
    wstar, gnorm = pr.logistic_optimum(X, y)
    horizon = p1_horizon(X, wstar)
    grid = sorted(set(train.geometric_grid(horizon, 24)) | {k + 1 for k in train.geometric_grid(horizon - 1, 24)})
    steps, vr, w = pr.f1_trajectory(state, X, y, eta=ETA1, record=grid)
    _, vr_step, _ = pr.f1_trajectory(state, X, y, eta=ETA1, record=list(range(STEPS1 + 1)))
    labels = [(m, q) for m, (_, _, ql) in cells.items() for q in ql]
    pred = pr.f1_varrho(*state[:2], state[2], wstar.expand_as(state[1]))
    off = sum(cells[m][0].shape[0] for m in ms[:1])
    f1_err = float((check - vr_step[:101, off:off + W0v.shape[0]]).abs().max())
    _P1[key] = dict(X=X, y=y, f1_err=f1_err, state=state, steps=steps, vr=vr, w=w, vr_step=vr_step, labels=labels,
                    wstar=wstar, gnorm=gnorm, pred=pred, ms=ms, qs=qs, seeds=seeds, horizon=horizon)
    return _P1[key]


@pytest.mark.claim("wang2024/prop-1")
def test_prop1_linear_rises_early_then_flattens(record, ctx):
    """Property 1 (linear, Thm 5.3 setting): frac. of non-decreasing steps after τ = 0.5 ≥ 0.95, mean slope over the
    last 20 % ≤ 0.1·max slope, slope on a geometric τ grid decays (fitted exponent CI < 0); (F1) replica = GD on W."""
    R = _prop1_runs(ctx)
    gd_vr, f1_err = R["vr_step"], R["f1_err"]  # (T, E): GD on W through its exact (F1) replica
    st = pr.shape_stats(gd_vr, ETA1, tau0=0.5, late=0.2)
    # the reported slopes against numpy (dϱ/dτ = Δϱ/η per step; the late mean over the last 20 % of the steps)
    inc_np = np.diff(gd_vr.cpu().numpy(), axis=0) / ETA1
    nl = max(1, int(0.2 * inc_np.shape[0]))
    assert np.allclose(st["max_slope"].cpu().numpy(), inc_np.max(0), rtol=1e-12, atol=0)
    assert np.allclose(st["late_slope"].cpu().numpy(), inc_np[-nl:].mean(0), rtol=1e-12, atol=1e-15)
    k0 = int(round(0.5 / ETA1))  # the first step at τ = ηk ≥ 0.5
    assert k0 > 0 and np.array_equal(st["frac_up"].cpu().numpy(), (inc_np[k0:] >= 0).mean(0)), k0
    # slope on the geometric grid from the (F1) long run: (ϱ(k+1) − ϱ(k))/η at recorded pairs
    steps = R["steps"]
    idx = {k: i for i, k in enumerate(steps)}
    ks = [k for k in steps if k + 1 in idx and k >= 1]
    slope = torch.stack([(R["vr"][idx[k + 1]] - R["vr"][idx[k]]) / ETA1 for k in ks])  # (K, E)
    taus = [k * ETA1 for k in ks]
    late = [i for i, t in enumerate(taus) if 10 <= t <= 1000]
    rows = []
    for e, (m, q) in enumerate(R["labels"]):
        rows.append({"m": m, "q": q, "frac non-decreasing (tau>=0.5)": float(st["frac_up"][e]),
                     "max slope": float(st["max_slope"][e]), "tau of max slope": float(st["argmax_tau"][e]),
                     "late slope / max slope": float(st["slope_ratio"][e]),
                     "varrho tau=0/10/200": [round(float(gd_vr[i, e]), 4) for i in (0, 20, STEPS1)]})
    cfg = {"d": D1, "n": N1, "separation": 0.3, "eta": ETA1, "steps": STEPS1, "ms": R["ms"], "seeds": R["seeds"],
           "long horizon (F1)": R["horizon"]}
    # the runs with q > 0 (Assumption 5.1, which Property 1's Thm 5.3 setting assumes) judge the claim; the q = 0 runs
    # are the same criteria outside the hypotheses, recorded apart (issue 32)
    oks = {}
    for inside, sel in _p1_split(R["labels"]):
        ix = torch.tensor(sel, device=gd_vr.device)
        med_slope = slope[:, ix].median(dim=1).values
        fit = fit_power([taus[i] for i in late], [float(med_slope[i]) for i in late])
        fu, sr = st["frac_up"][ix], st["slope_ratio"][ix]
        # float64: 100 steps of the same arithmetic in two orders (Gram of W vs Gram from G0, w0): ≲ 1e-13
        ok = bool((fu >= 0.95).all() and (sr <= 0.1).all() and fit.ci[1] < 0) and f1_err < 1e-12
        oks[inside] = (ok, fit)
        qsel = [R["labels"][e][1] for e in sel]
        record("holds" if ok else "violated", observed=float(fu.min()), bound=0.95, evidence="test",
               **_p1_inside(qsel, R["X"]),
               covers=["linear model: early rise"] if inside else [],
               tightness="min over runs of the fraction of non-decreasing GD steps after τ = 0.5",
               config=cfg | {"qs": sorted(set(qsel))},
               table=[rows[e] for e in sel] + [{"max late/max slope ratio": float(sr.max()),
                                                 "slope-decay exponent (median over runs, tau in [10, 1000])": fit.exponent,
                                                 "99% CI": list(fit.ci), "(F1) vs GD on W max |diff|": f1_err}],
               series={f"median slope vs tau (linear, q={sorted(set(qsel))})": {
                   "x": taus, "y": med_slope.clamp_min(1e-300).tolist(), "xlabel": "τ = ηk", "ylabel": "median dϱ/dτ",
                   "logx": True, "logy": True, "plot": "prop1 slope"}},
               note=f"slope decays like τ^{fit.exponent:.2f} (CI {fit.ci[0]:.2f}..{fit.ci[1]:.2f}) over τ ∈ [10, 1000]; "
                    f"max slope at τ ≤ {float(st['argmax_tau'][ix].max()):.1f}. The (F1) replica of GD matched GD on W "
                    f"to {f1_err:.1e}.")
    assert f1_err < 1e-12, f1_err  # control: the (F1) replica is GD on W
    assert oks[True][0], (rows, oks[True][1])


def _p1_split(labels):
    """[(True, indices of the runs with q > 0), (False, indices with q ≤ 0)], the empty groups left out."""
    out = [(True, [e for e, (_, q) in enumerate(labels) if q > 0]), (False, [e for e, (_, q) in enumerate(labels) if q <= 0])]
    return [(i, sel) for i, sel in out if sel]


def _p1_inside(qs, *Xs) -> dict:
    """inside=/inside_reason= of a Property 1/2 record over runs with the q values ``qs`` (Assumptions 5.1–5.2)."""
    return fw.inside({**fw.assumption_51(qs), **fw.assumption_52(*Xs)})


@pytest.mark.claim("wang2024/prop-1")
def test_prop1_linear_saturation_level_f1(record, ctx):
    """Property 1 saturation (linear, non-separable data): ϱ(τ) → ϱ_∞ = ‖w*‖/‖W(0)+a(w*−w(0))ᵀ‖₂ < 1 (F1), with
    |ϱ(τ) − ϱ_∞| decaying exponentially at least at the rate η·λ_min(∇²L(w*)) of the slowest mode (fitted over the late
    geometric grid).
    Companion inside: the same criterion rejects the wrong limit ϱ_∞ = 1."""
    R = _prop1_runs(ctx)
    X, y, wstar, pred = R["X"], R["y"], R["wstar"], R["pred"]
    p = torch.sigmoid(X @ wstar)
    lam_min = float(torch.linalg.eigvalsh((X.T * (p * (1 - p))) @ X / X.shape[0])[0])
    steps = np.array(R["steps"], float)
    late = steps >= R["horizon"] / 4

    def criterion(limit, ix):
        gap = (R["vr"][:, ix] - limit[ix]).abs()  # (T, E')
        g_med = gap.median(dim=1).values.clamp_min(1e-300)
        fit = fit_affine(steps[late], np.log(g_med.cpu().numpy()[late]))
        final_ok = bool((gap[-1] <= 0.1 * (1 - pred[ix])).all())
        return final_ok and fit.slope_ci[1] < 0, fit, gap, g_med

    rate_pred = -math.log(1 - ETA1 * lam_min)
    cfg = {"d": D1, "n": N1, "separation": 0.3, "eta": ETA1, "horizon steps": R["horizon"],
           "horizon rule": f"max({LONG}, {P1_EFOLDS} e-folds of the slowest mode)", "|w*|": float(wstar.norm())}
    res = {}
    for inside, sel in _p1_split(R["labels"]):  # q > 0 judges (Assumption 5.1); q = 0 recorded apart
        ix = torch.tensor(sel, device=pred.device)
        ok, fit, gap, g_med = criterion(pred, ix)
        ok_wrong, fit_w, gap_w, _ = criterion(torch.ones_like(pred), ix)
        rows = [{"m": R["labels"][e][0], "q": R["labels"][e][1], "1 - varrho_inf (F1 prediction)": float(1 - pred[e]),
                 "|varrho(T) - varrho_inf|": float(gap[-1, j]), "varrho(T)": float(R["vr"][-1, e])}
                for j, e in enumerate(sel)]
        # the exponential rate: near w* the slowest GD mode contracts at −log(1 − ηλ_min) per step, so the late gap
        # decays at least that fast (up to the fit's error: 25 %). A fit over a finite window also sees faster modes,
        # which bias it upward only (seeds 0–13: 1.02–1.30 × the prediction, 1.86 at seed 10), so only the lower side is
        # asserted; the ratio is reported.
        rate_ok = -fit.slope / rate_pred > 0.75
        good = ok and rate_ok and bool((pred[ix] < 1).all())
        res[inside] = (good, ok_wrong, rows, fit, fit_w)
        qsel = [R["labels"][e][1] for e in sel]
        record("holds" if good else "violated", observed=float((gap[-1] / (1 - pred[ix])).max()), bound=0.1,
               evidence="test", **_p1_inside(qsel, X), covers=["linear model: saturation"] if inside else [],
               tightness="max over runs of |ϱ(T) − ϱ_∞(F1)| / (1 − ϱ_∞) at the horizon T (≥ 10⁴ steps, τ ≥ 5·10³)",
               config=cfg | {"qs": sorted(set(qsel))},
               table=rows + [{"fitted decay rate per step": -fit.slope, "predicted -log(1 - eta*lambda_min)": rate_pred,
                              "wrong limit 1: final median gap": float(gap_w[-1].median()),
                              "wrong limit 1: fitted slope of log gap": fit_w.slope}],
               series={f"median |varrho - varrho_inf| vs step (q={sorted(set(qsel))})": {
                   "x": steps.tolist(), "y": g_med.tolist(), "xlabel": "GD step k", "ylabel": "median |ϱ(k) − ϱ_∞|",
                   "logx": True, "logy": True, "plot": "prop1 saturation"}},
               note=f"1 − ϱ_∞ ranges {float((1 - pred[ix]).min()):.1e}..{float((1 - pred[ix]).max()):.1e} (strictly below "
                    f"1: the data are not separable, |w*| = {float(wstar.norm()):.2f}); the gap to ϱ_∞ decays at "
                    f"{-fit.slope:.2e}/step vs η·λ_min prediction {rate_pred:.2e}. The wrong limit ϱ_∞ = 1 leaves a gap "
                    f"≈ 1 − ϱ_∞ that does not decay (fitted log-slope {fit_w.slope:.1e}); the same criterion rejects it: "
                    f"{not ok_wrong}.")
    good, ok_wrong, rows, fit, fit_w = res[True]
    assert R["gnorm"] < 1e-12  # precondition: w* is a stationary point (non-separable data)
    # the precondition's figure is the gradient norm of the *mean* BCE: pinned where it is not at rounding level (no
    # Newton step: w = 0, ∇ = Xᵀ(½ − y)/n, computed here in numpy)
    Xn, yn = X.cpu().numpy(), y.cpu().numpy()
    _, g0 = pr.logistic_optimum(X, y, iters=0, gtol=1.0)
    g0_ref = float(np.linalg.norm(Xn.T @ (0.5 - yn)) / len(yn))
    assert abs(g0 - g0_ref) <= 1e-12 * g0_ref, (g0, g0_ref)
    assert good, (rows, fit, rate_pred)
    assert not ok_wrong, fit_w  # companion: the wrong limit ϱ_∞ = 1 is rejected (on the runs inside the hypotheses)


# separation of the separable-data case: at 0.5 one draw in 40 was not separable (seed 14); at 0.7 and 1.0 none of 40.
# A draw that is not separable is reported as outside the check's precondition (never re-drawn).
SEP_SEPARABLE = 1.0


@pytest.mark.claim("wang2024/prop-1")
def test_prop1_linear_separable_tends_to_one(record, ctx):
    """Separable data (mixture, separation SEP_SEPARABLE, d = 20, n = 400; separability certified by an LP, no finite w*): ‖w(τ)‖ grows like log τ
    and 1 − ϱ(τ) → 0 along a power law in τ (fitted over τ ∈ [10², 5·10³], CI of the exponent < 0)."""
    gen = ctx.generator("wang2024/prop-1", {"data": "separable"})
    X, y, _, _ = fw.mixture(N1, 10, D1, generator=gen, separation=SEP_SEPARABLE)
    if not pr.is_separable(X, y):  # the check's precondition failed at this draw: reported, never re-drawn
        record("not-applicable", reading="outside-hypotheses", observed=None, bound=None, evidence="consistency",
               inside=False, inside_reason="the check's precondition (linearly separable data) failed at this draw",
               config={"d": D1, "n": N1, "separation": SEP_SEPARABLE},
               note="precondition not met at this draw: the LP finds the mixture not linearly separable; no verdict")
        return
    cells = _init_cells(gen, [16, 64, 256], [0.0, 0.25], 2, D1)
    state = [torch.cat(t) for t in zip(*(pr.f1_state(W0, a) for W0, a, _ in cells.values()))]
    grid = train.geometric_grid(LONG, 20)
    steps, vr, w = pr.f1_trajectory(state, X, y, eta=ETA1, record=grid)
    taus = np.array(steps, float) * ETA1
    sel = (taus >= 100)
    labels = [(m, q) for m, (_, _, ql) in cells.items() for q in ql]
    oks = {}
    for inside, members in _p1_split(labels):  # q > 0 judges (Assumption 5.1); q = 0 recorded apart
        ix = torch.tensor(members, device=vr.device)
        one_minus = (1 - vr[:, ix]).median(dim=1).values
        fit = fit_power(taus[sel], one_minus.cpu().numpy()[sel])
        wn = w[:, ix].norm(dim=-1).median(dim=1).values
        fw_log = fit_affine(np.log(taus[sel]), wn.cpu().numpy()[sel])
        keep = torch.tensor(sel[1:], device=one_minus.device)
        decreasing = bool((one_minus[1:][keep] <= one_minus[:-1][keep]).all())
        ok = fit.ci[1] < 0 and fw_log.slope_ci[0] > 0 and decreasing
        oks[inside] = (ok, fit, fw_log, decreasing)
        qsel = [labels[e][1] for e in members]
        record("holds" if ok else "violated", observed=fit.exponent, bound=0.0, evidence="test",
               **_p1_inside(qsel, X), tightness="fitted exponent of median 1 − ϱ(τ) in τ (< 0: → 1)",
               covers=["linear model: saturation"] if inside else [],
               config={"d": D1, "n": N1, "separation": SEP_SEPARABLE, "eta": ETA1, "horizon steps": LONG,
                       "qs": sorted(set(qsel))},
               table=[{"1-varrho at tau=1e2/1e3/5e3": [float(one_minus[np.argmin(abs(taus - t))]) for t in (100, 1000, 5000)],
                       "exponent": fit.exponent, "99% CI": list(fit.ci), "|w| per log tau": fw_log.slope}],
               series={f"median 1 - varrho (separable, q={sorted(set(qsel))})": {
                   "x": taus[1:].tolist(), "y": one_minus[1:].tolist(), "xlabel": "τ", "ylabel": "1 − ϱ", "logx": True,
                   "logy": True}},
               note="On separable data ‖w‖ grows like log τ (fitted slope per log τ in the table), so ϱ → 1 slowly "
                    f"(1 − ϱ ∝ τ^{fit.exponent:.2f} over τ ∈ [10², 5·10³]).")
    assert oks[True][0], oks[True][1:]


@pytest.mark.claim("wang2024/prop-1")
def test_prop1_relu_rises_early_then_flattens(record, ctx):
    """Property 1 for the ReLU MLP ('Property 1 still holds for the MLPs', §5.2; Thm 5.5 setting, autograd GD,
    a frozen; ϱ_{a,σ∘W} on 60 held-out points at every step). The paper states 'develops during the initial stages
    of training and becomes saturated as training progresses'; the catalog reads it as '(mostly) non-decreasing'.
    Reading (:func:`theory.papers.wang2024.properties.rise_shape`): during the rise (τ ≥ 0.5 until ϱ first reaches
    95 % of its total rise) the decreases sum to ≤ 25 % of the rise, that 95 % is reached within the first half of
    the run, the mean slope over the last 20 % is ≤ 0.1·max slope in absolute value, and any post-peak decline is
    ≤ 5 % of the rise. ReLU activation flips give a
    few small dips during the rise (up to 8 % of the rise over seeds 0–11, three of 58 steps at seed 7), so a count
    of down-steps (the former '≥ 95 % of the rise steps non-decreasing', which seed 7 missed by one step) measures
    the flips, not the shape; the count is still reported.

    The catalog's criterion (a) — ≥ 95 % of all steps after τ = 0.5 non-decreasing, i.e. monotone through the
    plateau — is a stricter reading than the paper's wording (which claims no monotonicity after saturation); it is
    evaluated on the same runs and written as its own, separately labelled record."""
    gen = ctx.generator("wang2024/prop-1", {"model": "relu"})
    X, y, Xe, _ = fw.mixture(200, 60, D1, generator=gen)
    steps, eta, m = ctx.pick(quick=150, full=1000), 0.5, ctx.pick(quick=64, full=256)
    qs = [0.0, 0.0, 0.25, 0.25]
    net = models.TwoLayerNet.init(len(qs), m, D1, q=0.0, act=fw.RELU, generator=gen)
    net.W = net.W * torch.tensor([m ** -q for q in qs], dtype=X.dtype, device=X.device).view(-1, 1, 1)
    obs = lambda t, p, u: {"varrho": cc.mlp_varrho(p[0].detach(), net.a, Xe, fw.RELU)}
    vr = train.gd(net, X, y, loss="bce", lr=eta, steps=steps, record=list(range(steps + 1)), observe=obs).stacked("varrho")
    fw.mlp_opnorm_controls(net.W, net.a, Xe)  # the Jacobian norms behind ϱ vs the core's default opnorm and SVD
    shapes = [pr.rise_shape(vr[:, e], eta) for e in range(len(qs))]
    rows = [{"m": m, "q": q, "rise varrho(peak)-varrho(0)": sh["rise"], "tau at 95% of rise": sh["k95"] * eta,
             "fraction of the run at 95% of rise": sh["early"],
             "tau of peak": sh["tau_peak"], "decreases during rise / rise": sh["down"],
             "frac non-decreasing steps during rise (reported)": sh["frac_up_rise"],
             "late/max slope": sh["slope_ratio"], "post-peak decline / rise": sh["decline"],
             "catalog (a): frac non-decreasing after tau=0.5, whole run": sh["frac_up_after_tau0"],
             "varrho tau=0/10/end": [round(float(vr[i, e]), 4) for i in (0, 20, -1)]}
            for e, (q, sh) in enumerate(zip(qs, shapes))]
    cfg = {"d": D1, "n": 200, "m": m, "eta": eta, "steps": steps}
    oks = {}
    # the members with q > 0 (Assumption 5.1) judge the claim; the q = 0 members are recorded apart (issue 32)
    for inside, members in _p1_split([(m, q) for q in qs]):
        sh_, qsel = [shapes[e] for e in members], [qs[e] for e in members]
        ok = all(sh["ok"] for sh in sh_)
        oks[inside] = ok
        record("holds" if ok else "violated", observed=max(sh["down"] for sh in sh_), bound=pr.MOSTLY_UP,
               evidence="test", **fw.inside({**fw.assumption_51(qsel), **fw.assumption_52(X, Xe),
                                              "Assumption 5.4 (ReLU, M = 1)": (1, True)}),
               covers=["ReLU MLP"] if inside else [],
               table=[rows[e] for e in members], config=cfg | {"qs": qsel},
               tightness="max over runs of (decreases of ϱ during the rise) ÷ rise (ReLU)",
               series={f"varrho ReLU q={qs[e]} #{e}": {"x": [k * eta for k in range(steps + 1)], "y": vr[:, e].tolist(),
                                                       "xlabel": "τ", "ylabel": "ϱ_{a,σ∘W}", "plot": "prop1 relu"}
                       for e in members},
               note=f"ReLU ϱ rises early and saturates (max |late/max slope| "
                    f"{max(abs(sh['slope_ratio']) for sh in sh_):.3f}); dips during the rise sum to at most "
                    f"{max(sh['down'] for sh in sh_):.1%} of the rise; max post-peak decline "
                    f"{max(sh['decline'] for sh in sh_):.2%} of the rise.")
    ok = oks[True]
    # the catalog's criterion (a), separately labelled: reported with its own result, not the paper's statement (on the
    # members inside the hypotheses)
    ins = [e for e, q in enumerate(qs) if q > 0]
    frac_a = [rows[e]["catalog (a): frac non-decreasing after tau=0.5, whole run"] for e in ins]
    a_ok = min(frac_a) >= 0.95
    failing = [(rows[e]["q"], round(f, 3), rows[e]["tau of peak"], round(rows[e]["post-peak decline / rise"], 4))
               for e, f in zip(ins, frac_a) if f < 0.95]
    record("not-applicable", observed=min(frac_a), bound=0.95, config=cfg | {"qs": [qs[e] for e in ins]}, reading="strict",
           evidence="consistency", **fw.inside({**fw.assumption_51([qs[e] for e in ins]), **fw.assumption_52(X, Xe)}),
           tightness="catalog criterion (a): min fraction of non-decreasing steps after τ = 0.5 (whole run)",
           table=[{"member": e, "q": rows[e]["q"], "criterion (a) fraction": f, "passes (>= 0.95)": f >= 0.95}
                  for e, f in zip(ins, frac_a)],
           note=("Catalog criterion (a) (monotone through the plateau), a stricter reading than the paper's wording, "
                 "reported only (it never reads violated): "
                 + ("passes on every run." if a_ok else
                    f"fails on {len(failing)}/{len(ins)} runs ((q, fraction, τ of peak, decline/rise) = {failing}): "
                    "ReLU flips give small dips of ϱ, so the sign count of increments falls below 0.95; the paper "
                    "claims development and saturation, not monotonicity, so this is reported, not a verdict.")))
    # wrong versions of the shape, run through the same reading: a late rise (no early development) and a
    # zig-zag of the same net rise whose dips are half its upward variation (not 'mostly non-decreasing')
    v, sh0 = vr[:, 0], shapes[0]
    late_rise = torch.cat([v[:1].expand(2 * steps // 3), v[:steps + 1 - 2 * steps // 3]])
    # alternating ±a on a rise of n steps: every other step falls by 2a − rise/n, so the dips sum to
    # n·a − rise/2; a = rise/n puts them at ≈ rise/2, twice the bound of the reading
    a = sh0["rise"] / max(1, sh0["k95"] - int(round(0.5 / eta)))
    zig = v + a * torch.tensor([(-1.0) ** k if k >= 2 else 0.0 for k in range(steps + 1)], dtype=v.dtype, device=v.device)
    wrong = {"late rise": pr.rise_shape(late_rise, eta), "zig-zag": pr.rise_shape(zig, eta)}
    rejected = not any(w["ok"] for w in wrong.values())
    # the reading's figures on a curve of known shape: a ramp v(k) = min(k/K, 1) over steps 0..steps reaches 95 % of
    # its rise first at k = ⌈0.95 K⌉, reached after a fraction ⌈0.95 K⌉/steps of the run, with no decrease
    K = steps // 2
    ramp = torch.clamp(torch.arange(steps + 1, dtype=torch.float64) / K, max=1.0)
    k95 = math.ceil(0.95 * K - 1e-12)
    rs = pr.rise_shape(ramp, eta)
    assert rs["k95"] == k95 and math.isclose(rs["early"], k95 / steps, rel_tol=1e-12) and rs["down"] == 0.0 \
        and math.isclose(rs["rise"], 1.0, rel_tol=1e-12), f"pr.rise_shape on a ramp: {rs}"
    # the post-peak decline is a fraction of the rise: a ramp of height 3 that then falls linearly by 3c to the last
    # step has decline/rise = c; c = 0.03 passes the reading's DECLINE = 0.05 and c = 0.06 fails it (alone: its late
    # slope ratio c·K/(steps − K) = c stays under SATURATED = 0.1)
    tail = torch.clamp((torch.arange(steps + 1, dtype=torch.float64) - K) / (steps - K), min=0.0)
    fall = {c: pr.rise_shape(3 * ramp - 3 * c * tail, eta) for c in (0.03, 0.06)}
    assert all(math.isclose(fall[c]["decline"], c, rel_tol=1e-9) for c in fall) and fall[0.03]["ok"] \
        and not fall[0.06]["ok"], f"pr.rise_shape's post-peak decline: {fall}"
    # the shortest trajectory the reading takes: τ0/η + 3 points (two increments after τ0 and a last one); one fewer
    # is refused with a message naming the length
    k0 = round(0.5 / eta)
    pr.rise_shape(ramp[: k0 + 3], eta)
    with pytest.raises(ValueError, match=f"trajectory of {k0 + 2} points"):
        pr.rise_shape(ramp[: k0 + 2], eta)
    record("holds" if rejected else "violated", role="companion", observed=sum(w["ok"] for w in wrong.values()),
           bound=0, config=cfg, table=[{"wrong version": k, "accepted": w["ok"], "decreases/rise": w["down"],
                                        "late/max slope": w["slope_ratio"]} for k, w in wrong.items()],
           note="A late rise (flat for the first two thirds) and a zig-zag around the measured run (dips ≈ half the "
                "rise, twice the reading's bound) are rejected by the same reading.")
    assert ok, rows
    assert rejected, wrong


# ---- Property 2 ------------------------------------------------------------------------------------

ETA2 = 0.05
ALPHA2 = 1e-4  # level of the permutation tests (issue 35: the suite's Σα ≤ 0.01, this paper's share ≤ 0.0025)
P2_PERM = 50000  # permutations per test: the smallest p, 1/(P2_PERM + 1) = 2e-5, sits well below ALPHA2


_P2: dict = {}


def _prop2_setup(ctx, tag: str):
    """The generator of one Property-2 grid (``tag``), its data (n = 200 mixture) and the widths."""
    gen = ctx.generator("wang2024/prop-2", {tag: 1})
    X, y, _, _ = fw.mixture(200, 10, D1, generator=gen)
    ms = ctx.pick(quick=[16, 32, 64, 128, 256, 512], full=[16, 32, 64, 128, 256, 512, 1024, 2048])
    return gen, X, y, ms


def _prop2_grid(ctx):
    """(m, q) grid: 6 widths × 3 q = 18 cells × 5 seeds; V = ϱ(τ=1) − ϱ(0) with η = 0.05 (20 GD steps)."""
    key = (ctx.profile, ctx.seed)
    if key in _P2:
        return _P2[key]
    gen, X, y, ms = _prop2_setup(ctx, "grid")
    qs, seeds = [0.0, 0.1, 0.25], ctx.pick(quick=5, full=10)
    cells = _init_cells(gen, ms, qs, seeds, D1)
    k1 = int(round(1 / ETA2))
    state = [torch.cat(t) for t in zip(*(pr.f1_state(W0, a) for W0, a, _ in cells.values()))]
    _, vr, _ = pr.f1_trajectory(state, X, y, eta=ETA2, record=[0, k1])  # all cells and seeds in one program
    V = vr[1] - vr[0]
    Q0 = torch.cat([torch.linalg.matrix_norm(W0, ord=2) ** 2 for W0, _, _ in cells.values()])
    # cross-check on true GD on W (per width) and the Thm 5.3 numerator S_k(1 − (aᵀv)²) over the first τ = 1
    vr_gd, numer = [], []
    for W0, a, _ in cells.values():
        run = dyn.run_linear(W0, a, X, y, eta=ETA2, steps=k1)
        vr_gd.append(run["varrho"][[0, -1]])
        numer.append((run["main"][1:] / ETA2).mean(0))  # S_k(1−(aᵀv)²), k = 1..20
    vr_gd = torch.cat(vr_gd, dim=1)
    labels = [(m, q) for m, (_, _, ql) in cells.items() for q in ql]
    _P2[key] = dict(V=V, Q0=Q0, labels=labels, err=float((vr_gd - vr).abs().max()), numer=torch.cat(numer), X=X,
                    varrho0=vr[0], ms=ms, qs=qs, seeds=seeds)
    return _P2[key]


def _cell_rows(R):
    rows = []
    for m in R["ms"]:
        for q in R["qs"]:
            sel = torch.tensor([lab == (m, q) for lab in R["labels"]], device=R["V"].device)
            rows.append({"m": m, "q": q, "1/|W(0)|^2 (median)": float((1 / R["Q0"][sel]).median()),
                         "V = varrho(1)-varrho(0) (median)": float(R["V"][sel].median()),
                         "varrho(0)": float(R["varrho0"][sel].median()),
                         "numerator S(1-(a^T v)^2) (mean over tau<=1)": float(R["numer"][sel].median())})
    return rows


def _p2_inside(R):
    """Boolean mask of the t = 0 grid's runs inside Assumption 5.1 (q > 0)."""
    return np.array([q > 0 for _, q in R["labels"]])


@pytest.mark.claim("wang2024/prop-2")
def test_prop2_speed_vs_weight_norm(record, ctx):
    """Property 2 at t = 0: Spearman r_s(V, 1/‖W(0)‖₂²) > 0 over the (m, q) cells × 5 seeds, one-sided permutation p <
    ALPHA2, judged on the runs inside Assumption 5.1 (q ∈ {0.1, 0.25}); the q = 0 runs are the same test outside the
    hypotheses, recorded apart. The check fails under the claim only by lack of power (no false alarm declared)."""
    R = _prop2_grid(ctx)
    x_all, v_all = (1 / R["Q0"]).cpu().numpy(), R["V"].cpu().numpy()
    ins = _p2_inside(R)
    rows = _cell_rows(R)
    cfg = {"d": D1, "n": 200, "eta": ETA2, "tau": 1.0, "ms": R["ms"], "seeds": R["seeds"], "alpha": ALPHA2,
           "permutations": P2_PERM}
    res = {}
    for inside, sel in ((True, ins), (False, ~ins)):
        x, v = x_all[sel], v_all[sel]
        rs, p = stats.spearman_permutation(x, v, n_perm=P2_PERM, seed=ctx.seed)
        # the statistic against scipy's Spearman (an independent implementation): the correlation of the ranks, 1e-12
        rs_scipy = float(st.spearmanr(x, v).statistic)
        res[inside] = (rs, p, rs_scipy)
        qsel = sorted({q for (_, q), s_ in zip(R["labels"], sel) if s_})
        cells = [r for r in rows if (r["q"] > 0) == inside]
        num = np.array([r["numerator S(1-(a^T v)^2) (mean over tau<=1)"] for r in cells])
        invq = np.array([r["1/|W(0)|^2 (median)"] for r in cells])
        ok = rs > 0 and p < ALPHA2 and abs(rs - rs_scipy) <= 1e-12
        record("holds" if ok else "violated", observed=rs, bound=0.0, covers=["t = 0: early increment"] if inside else [],
               evidence="test", **fw.inside({**fw.assumption_51(qsel), **fw.assumption_52(R["X"])}),
               tightness=f"Spearman r_s(V, 1/‖W(0)‖²) (permutation p = {p:.1e}, α = {ALPHA2})",
               hypotheses={"r_s vs scipy.stats.spearmanr": abs(rs - rs_scipy)}, config=cfg | {"qs": qsel},
               table=cells, series={f"V vs 1/|W(0)|^2 (q={qsel})": {"x": x.tolist(), "y": v.tolist(),
                                                                    "xlabel": "1/‖W(0)‖₂²", "ylabel": "ϱ(τ=1) − ϱ(0)",
                                                                    "logx": True, "plot": "prop2 scatter",
                                                                    "scatter": True}},
               note=f"r_s = {rs:.3f}, permutation p = {p:.1e} over {len(v)} runs. Across cells 1/‖W(0)‖² spans a factor "
                    f"{invq.max() / invq.min():.0f} while the Thm 5.3 numerator S_k(1−(aᵀv)²) spans a factor "
                    f"{num.max() / max(num.min(), 1e-300):.1f} (it is not what drives the ordering). Increments, not "
                    "levels, are compared: ϱ(0) itself falls with m (F2).")
    assert R["err"] < 1e-12, R["err"]  # control: (F1) batched program = GD on W, float64
    rs, p, rs_scipy = res[True]
    assert rs > 0 and p < ALPHA2 and abs(rs - rs_scipy) <= 1e-12, (rs, p, rows)


_P2L: dict = {}
SEEDS_LATER = 12  # inits per (m, q) cell for the τ ∈ [1, 2] window
P2_QS = (0.0, 0.1, 0.25)
P2_INSIDE_QS = (0.1, 0.25)  # the rows inside Assumption 5.1 (q > 0)
P2_LATER_MS = [16, 32, 64, 128, 256, 512, 1024, 2048]  # the later window's widths, in every profile (96 runs per row)
P2_SAT_Q = 0.25  # the row whose ϱ(τ=1) is near saturation (Property 1)
P2_REV_RS = -0.4  # size pinned (strict reading): r_s(V₂, 1/‖W(1)‖²) in that row is ≤ this
P2_SAT_RHO = 0.6  # pattern pinned (strict reading): the reversed row's median ϱ(τ=1) is ≥ this (saturation)


def _prop2_later(ctx):
    """The same (m, q) grid, 12 inits per cell, trained by GD on W to τ = 2: V₂ = ϱ(τ=2) − ϱ(τ=1), ϱ(τ=1), ‖W(τ=1)‖₂²
    and the row label q of every run."""
    key = (ctx.profile, ctx.seed)
    if key in _P2L:
        return _P2L[key]
    gen, X, y, _ = _prop2_setup(ctx, "later")
    ms = P2_LATER_MS  # both profiles: the saturated row's reversal shows from m ≈ 64 on and is clear only up to 2048
    k1 = int(round(1 / ETA2))
    V2, R1, Q1, qs, AV1 = [], [], [], [], []
    for W0, a, ql in _init_cells(gen, ms, list(P2_QS), SEEDS_LATER, D1).values():
        W1 = dyn.run_linear(W0, a, X, y, eta=ETA2, steps=k1)["W"]
        run = dyn.run_linear(W1, a, X, y, eta=ETA2, steps=k1)
        V2.append(run["varrho"][-1] - run["varrho"][0])
        R1.append(run["varrho"][0])
        AV1.append(run["av"][0])  # aᵀv(τ=1), v the top left singular vector of W(1) (Thm 5.3's factor 1 − (aᵀv)²)
        Q1.append(torch.linalg.matrix_norm(W1, ord=2) ** 2)
        qs += ql
    V2, R1, Q1 = torch.cat(V2), torch.cat(R1), torch.cat(Q1)
    x, v, r1 = (1 / Q1).cpu().numpy(), V2.cpu().numpy(), R1.cpu().numpy()
    fac = 1 - torch.cat(AV1).cpu().numpy() ** 2  # Thm 5.3's factor 1 − (aᵀv(1))² (‖a‖ = 1)
    if not (np.isfinite(v).all() and np.isfinite(r1).all()):
        raise FloatingPointError("ϱ over τ ∈ [1, 2] is not finite: GD diverged")
    if not (r1 < 1).all() or not (fac > 0).all():
        raise ValueError("ϱ(τ=1) or |aᵀv(1)| reached 1: no room left to normalize by")
    qrow = np.array(qs)
    perm = dict(n_perm=P2_PERM, seed=ctx.seed)
    rows = []
    for q in P2_QS:
        s = qrow == q
        g = v[s] / fac[s]  # the increment with Thm 5.3's own factor 1 − (aᵀv(1))² divided out
        rs, p_pos = stats.spearman_permutation(x[s], v[s], **perm)
        _, p_neg = stats.spearman_permutation(x[s], v[s], alternative="less", **perm)
        rs_g, p_g = stats.spearman_permutation(x[s], g, **perm)
        # the reversal test of g; the same p is that of the wrong version "g rises with ‖W(1)‖²" (ranks of ‖W(1)‖² are
        # those of 1/‖W(1)‖² reversed), which the companion runs through criterion (ii)
        _, p_g_neg = stats.spearman_permutation(x[s], g, alternative="less", **perm)
        # normaliser sensitivity (information): the proxy 1 − ϱ(1) and the full Thm 5.3 prefactor ϱ(1 − (aᵀv)²)
        rs_px = float(st.spearmanr(x[s], v[s] / (1 - r1[s])).statistic)
        rs_full = float(st.spearmanr(x[s], v[s] / (r1[s] * fac[s])).statistic)
        rows.append({"q": q, "runs": int(s.sum()), "median varrho(1)": float(np.median(r1[s])),
                     "median 1-(a^T v(1))^2": float(np.median(fac[s])),
                     "r_s(V2, 1/|W(1)|^2)": rs, "p (r_s > 0)": p_pos, "p (r_s < 0)": p_neg,
                     "r_s(V2/(1-(a^T v)^2), 1/|W(1)|^2)": rs_g, "p (normalized, r_s > 0)": p_g,
                     "p (normalized, r_s < 0)": p_g_neg, "p (normalized vs |W(1)|^2, r_s > 0)": p_g_neg,
                     "info: r_s(V2/(1-varrho(1)), 1/|W(1)|^2)": rs_px,
                     "info: r_s(V2/(varrho(1)(1-(a^T v)^2)), 1/|W(1)|^2)": rs_full})
    _P2L[key] = dict(V=V2, R1=R1, Q1=Q1, q=qrow, ms=ms, X=X, rows=rows, x=x, v=v, r1=r1, fac=fac)
    return _P2L[key]


def _p2_later_cfg():
    return {"d": D1, "n": 200, "eta": ETA2, "window": [1.0, 2.0], "ms": P2_LATER_MS, "seeds": SEEDS_LATER,
            "alpha": ALPHA2, "permutations": P2_PERM}


@pytest.mark.claim("wang2024/prop-2")
def test_prop2_speed_vs_weight_norm_later(record, ctx):
    """Property 2 at t > 0 ("inversely related to ‖W(t)‖₂"), judged other things being equal. Property 2 is the
    informal summary of Thm 5.3's 1/‖W(t)‖₂² factor; the bound it summarizes also carries the factor 1 − (v(t)ᵀa)²,
    which shrinks as ϱ saturates (Property 1). Other things equal is therefore the increment with that factor divided
    out, g = (ϱ(2) − ϱ(1))/(1 − (aᵀv(1))²) (v(1) the top left singular vector of W(1)), against 1/‖W(τ=1)‖₂², within
    each row q of the (m, q) grid inside Assumption 5.1
    (q ∈ {0.1, 0.25}; 12 inits × 8 widths per row).

    Judged: (i) no inside row shows a significant reversal of g (one-sided Spearman permutation tests, Holm over the
    rows at ALPHA2: the declared false alarm), and (ii) g rises with 1/‖W(1)‖² in every inside row (p < ALPHA2 each;
    it fails under the claim only by lack of power). The raw ranking of ϱ(2) − ϱ(1) across networks in the saturated
    row is the strict reading (test_prop2_later_raw_ranking_strict); the q = 0 row, outside Assumption 5.1, is recorded
    apart. Companion: the reversed ordering (g rising with ‖W(1)‖²) is rejected in every inside row."""
    L = _prop2_later(ctx)
    by_q = {r["q"]: r for r in L["rows"]}
    inside_rows = [by_q[q] for q in P2_INSIDE_QS]
    rev = conc.holm([r["p (normalized, r_s < 0)"] for r in inside_rows], ALPHA2)
    pos = [r["r_s(V2/(1-(a^T v)^2), 1/|W(1)|^2)"] > 0 and r["p (normalized, r_s > 0)"] < ALPHA2 for r in inside_rows]
    ok = not any(rev) and all(pos)
    sel = np.isin(L["q"], P2_INSIDE_QS)
    g = L["v"] / L["fac"]
    record("holds" if ok else "violated", observed=min(r["r_s(V2/(1-(a^T v)^2), 1/|W(1)|^2)"] for r in inside_rows),
           bound=0.0, covers=["t > 0: later increments"], evidence="test", false_alarm=ALPHA2,
           **fw.inside({**fw.assumption_51(P2_INSIDE_QS), **fw.assumption_52(L["X"])}),
           tightness="min over the rows q > 0 of Spearman r_s((ϱ(2) − ϱ(1))/(1 − (aᵀv(1))²), 1/‖W(1)‖²) (claim: > 0)",
           config=_p2_later_cfg() | {"qs": list(P2_INSIDE_QS), "reversal tests": "Holm over the rows"},
           table=[dict(r, **{"reversal rejected (Holm)": bool(h)}) for r, h in zip(inside_rows, rev)],
           series={"V2/(1-(a^T v)^2) vs 1/|W(1)|^2 (q > 0)": {"x": L["x"][sel].tolist(), "y": g[sel].tolist(),
                                                                "xlabel": "1/‖W(τ=1)‖₂²",
                                                                "ylabel": "(ϱ(2) − ϱ(1))/(1 − (aᵀv(1))²)", "logx": True,
                                                                "scatter": True}},
           note="Other things equal (Thm 5.3's own factor 1 − (v(t)ᵀa)² divided out), the later speed "
                "rises with 1/‖W(1)‖² in every row inside Assumption 5.1: r_s = "
                + ", ".join(f"{r['r_s(V2/(1-(a^T v)^2), 1/|W(1)|^2)']:.2f} (q = {r['q']})" for r in inside_rows)
                + ". The raw cross-network ranking of the saturated row is the strict reading, recorded beside it. Normaliser "
                "sensitivity (information, table 'info:' columns; r_s per inside row, raw V₂ / V₂/(1 − ϱ(1)) / "
                "V₂/(1 − (aᵀv)²) / V₂/(ϱ(1 − (aᵀv)²))): "
                + "; ".join(f"q = {r['q']}: {r['r_s(V2, 1/|W(1)|^2)']:.2f} / "
                            f"{r['info: r_s(V2/(1-varrho(1)), 1/|W(1)|^2)']:.2f} / "
                            f"{r['r_s(V2/(1-(a^T v)^2), 1/|W(1)|^2)']:.2f} / "
                            f"{r['info: r_s(V2/(varrho(1)(1-(a^T v)^2)), 1/|W(1)|^2)']:.2f}" for r in inside_rows)
                + ". The proxy 1 − ϱ(1) is not Thm 5.3's factor and is not the verdict's normaliser.")
    # the q = 0 row: outside Assumption 5.1, the same figures recorded apart (never a verdict)
    out = by_q[0.0]
    record("holds" if out["r_s(V2/(1-(a^T v)^2), 1/|W(1)|^2)"] > 0 else "violated",
           observed=out["r_s(V2/(1-(a^T v)^2), 1/|W(1)|^2)"], bound=0.0, evidence="test",
           **fw.inside({**fw.assumption_51([0.0]), **fw.assumption_52(L["X"])}), config=_p2_later_cfg() | {"qs": [0.0]},
           tightness="Spearman r_s((ϱ(2) − ϱ(1))/(1 − (aᵀv(1))²), 1/‖W(1)‖²) in the row q = 0 (outside Assumption 5.1)",
           table=[out])
    # companion: the reversed ordering (g rising with ‖W(1)‖², not its inverse) run through criterion (ii)
    wrong_pass = all(r["p (normalized vs |W(1)|^2, r_s > 0)"] < ALPHA2 for r in inside_rows)
    record("holds" if not wrong_pass else "violated", role="companion", false_alarm=ALPHA2,
           observed=min(r["p (normalized vs |W(1)|^2, r_s > 0)"] for r in inside_rows), bound=ALPHA2,
           tightness="smallest p of 'g rises with ‖W(1)‖²' over the inside rows (rejected unless every row has p < α)",
           table=[{"q": r["q"], "p (reversed ordering)": r["p (normalized vs |W(1)|^2, r_s > 0)"]} for r in inside_rows])
    assert not wrong_pass, inside_rows
    assert ok, inside_rows


@pytest.mark.claim("wang2024/prop-2")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="strict reading of Property 2 at t > 0 (a raw ranking across networks, not other things equal): "
                          "where ϱ is near saturation (q = 0.25), wider nets with smaller ‖W(t)‖₂ gain less ϱ, as Thm "
                          "5.3's factor 1 − (v(t)ᵀa)² says")
def test_prop2_later_raw_ranking_strict(record, ctx):
    """Property 2 at t > 0 read strictly: the raw increment V₂ = ϱ(2) − ϱ(1) ranked across networks against
    1/‖W(τ=1)‖₂² within each inside row (q ∈ {0.1, 0.25}), one-sided Spearman permutation tests of a reversal, Holm
    over the rows at ALPHA2 (declared false alarm: a reversal of the unsaturated row by chance). Finding pinned (size
    and pattern): the reversed rows are exactly {P2_SAT_Q}, the saturated row (median ϱ(1) ≥ P2_SAT_RHO), with r_s ≤
    P2_REV_RS; the unsaturated row q = 0.1 keeps r_s > 0 (p < ALPHA2); within the reversed row the normalized
    increment V₂/(1 − (aᵀv(1))²) has r_s > 0 (p < ALPHA2). Recorded with reading="strict", beside the verdict."""
    L = _prop2_later(ctx)
    by_q = {r["q"]: r for r in L["rows"]}
    inside_rows = [by_q[q] for q in P2_INSIDE_QS]
    rev = conc.holm([r["p (r_s < 0)"] for r in inside_rows], ALPHA2)
    reversed_rows = [r["q"] for r, h in zip(inside_rows, rev) if h]
    sat, unsat = by_q[P2_SAT_Q], by_q[0.1]
    rs_all, p_all = stats.spearman_permutation(L["x"][np.isin(L["q"], P2_INSIDE_QS)],
                                               L["v"][np.isin(L["q"], P2_INSIDE_QS)], n_perm=P2_PERM, seed=ctx.seed)
    record("holds" if not reversed_rows else "expected-failure", observed=sat["r_s(V2, 1/|W(1)|^2)"], bound=0.0,
           reading="strict", evidence="test", finding_type="" if not reversed_rows else "missing-hypothesis",
           false_alarm=ALPHA2, **fw.inside({**fw.assumption_51(P2_INSIDE_QS), **fw.assumption_52(L["X"])}),
           tightness=f"Spearman r_s(ϱ(2) − ϱ(1), 1/‖W(1)‖²) in the row q = {P2_SAT_Q} (strict reading: > 0)",
           config=_p2_later_cfg() | {"qs": list(P2_INSIDE_QS)},
           table=[dict(r, **{"reversal rejected (Holm)": bool(h)}) for r, h in zip(inside_rows, rev)],
           series={"V2 vs 1/|W(1)|^2": {"x": L["x"].tolist(), "y": L["v"].tolist(), "xlabel": "1/‖W(τ=1)‖₂²",
                                        "ylabel": "ϱ(τ=2) − ϱ(τ=1)", "logx": True, "scatter": True}},
           finding="" if not reversed_rows else
           (f"Read strictly (a raw ranking across networks), Property 2 fails at t > 0 in the row q = {P2_SAT_Q}: there "
            f"ϱ(τ=1) is already {sat['median varrho(1)']:.2f} (median), and over τ ∈ [1, 2] the wider nets, with the "
            f"smaller ‖W(1)‖₂, gain less ϱ (r_s = {sat['r_s(V2, 1/|W(1)|^2)']:.2f}, p = {sat['p (r_s < 0)']:.1e}). "
            "Thm 5.3's bound on the rate carries the factor 1 − (v(t)ᵀa)², which the informal Property 2 leaves out; "
            "other things equal (that factor divided out), the ordering holds in that row too "
            f"(r_s = {sat['r_s(V2/(1-(a^T v)^2), 1/|W(1)|^2)']:.2f}): the verdict's reading."),
           note=f"Pooled over the {int(np.isin(L['q'], P2_INSIDE_QS).sum())} inside runs, r_s(V₂, 1/‖W(1)‖²) = "
                f"{rs_all:.2f} (p = {p_all:.1e}).")
    if reversed_rows:  # size and pattern of the finding
        assert reversed_rows == [P2_SAT_Q], inside_rows
        assert sat["r_s(V2, 1/|W(1)|^2)"] <= P2_REV_RS and sat["median varrho(1)"] >= P2_SAT_RHO, inside_rows
        assert unsat["r_s(V2, 1/|W(1)|^2)"] > 0 and unsat["p (r_s > 0)"] < ALPHA2, inside_rows
        assert sat["r_s(V2/(1-(a^T v)^2), 1/|W(1)|^2)"] > 0 and sat["p (normalized, r_s > 0)"] < ALPHA2, inside_rows
    assert_claim(not reversed_rows, f"ϱ's later increment falls with 1/‖W(1)‖² in the rows q = {reversed_rows}")


@pytest.mark.claim("wang2024/prop-2")
def test_prop2_rejects_reversed_ordering(record, ctx):
    """Companion: the same permutation test (on the runs inside Assumption 5.1) rejects the reversed claim (speed
    increasing with ‖W(0)‖₂²)."""
    R = _prop2_grid(ctx)
    ins = _p2_inside(R)
    rs, p = stats.spearman_permutation(R["Q0"].cpu().numpy()[ins], R["V"].cpu().numpy()[ins], n_perm=P2_PERM,
                                       seed=ctx.seed)
    rejected = not (rs > 0 and p < ALPHA2)
    record("holds" if rejected else "violated", role="companion", observed=p, bound=ALPHA2, false_alarm=ALPHA2,
           tightness="permutation p-value of the reversed ordering (rejected when not < α)",
           table=[{"r_s(V, |W(0)|^2)": rs, "p (greater)": p}])
    assert rejected, (rs, p)
