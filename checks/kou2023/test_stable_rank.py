"""Kou et al. (2023) stable-rank limits.

Claims: kou2023/def-srank, kou2023/thm-4.1 (leaky: Θ(log t) norms, srank → 1, loss t^{-α}),
kou2023/lem-C.3 (rate O(1/log t) and the rank-one certificate), kou2023/thm-4.3 + kou2023/lem-F.1
(ReLU: stable rank bounded independently of n; the proof's certificate), kou2023/lem-F.2
(orthogonal data: frozen pattern, ρ̄/log t → m/|S_i^(0)|), kou2023/lem-F.3 (orthogonal data: the
exactly predicted finite-(m, n) limit srank(A) and its approach to 2), kou2023/rem-4.4 (ReLU ≈ 2
above leaky's 1).

All runs are exact coefficient-space GD (Lemma 5.2) in float64 on geometric grids
(checks/kou2023/_rates_runs.py); limits are extrapolated by fits, never read off one time point.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.special import expit

from theory.papers.kou2023 import dynamics as kd
from theory.papers.kou2023 import setup as ks
from theory.papers.kou2023 import stable_rank as sr
from theory.sim import spectra
from theory.stats import fit_power

from ._rates_runs import leaky_long, orth_pair

# tests that compute one cached run: xdist keeps each group on one worker (theory.harness.shared_runs)
SHARED_RUNS = {"kou2023/leaky_long": ["test_leaky_log_norms_srank_and_loss", "test_leaky_srank_rate_and_certificate"],
               "kou2023/orth_pair": ["test_orthogonal_frozen_pattern_and_log_slope",
                                     "test_orthogonal_srank_predicted_limit_and_approach_to_2",
                                     "test_orthogonal_srank_wrong_limits_rejected", "test_relu_above_leaky_on_orthogonal_data"]}


def _series(t, y, name, ylabel, logy=False, plot=None):
    t = np.asarray(t, float)
    m = t >= 1
    s = {"x": t[m].tolist(), "y": np.asarray(y, float)[m].tolist(), "xlabel": "step t", "ylabel": ylabel,
         "logx": True, "logy": logy}
    if plot:
        s["plot"] = plot
    return {name: s}


# --- def-srank ---------------------------------------------------------------------------------
@pytest.mark.claim("kou2023/def-srank")
def test_stable_rank_definition(ctx, record):
    """srank(M) = ‖M‖_F²/‖M‖₂² ∈ [1, rank M]: exactly 1 on rank-one matrices, k on I_k, and the
    d-free Gram route (eigenvalues of WWᵀ, used by every run) agrees with the SVD route."""
    gen = record.generator({"def": 1})
    u = torch.randn(5, 30, 1, generator=gen, dtype=ctx.dtype, device=gen.device)
    v = torch.randn(5, 1, 200, generator=gen, dtype=ctx.dtype, device=gen.device)
    r1 = spectra.stable_rank(u @ v)
    eye = spectra.stable_rank(torch.eye(7, dtype=ctx.dtype, device=ctx.device))
    W = torch.randn(5, 30, 200, generator=gen, dtype=ctx.dtype, device=gen.device)
    via_gram = sr.srank_from_gram(W @ W.transpose(-1, -2))
    via_svd = spectra.stable_rank(W)
    # rounding: Σs_k²/s_1² from an SVD of a 30×200 matrix carries ~30·u relative error
    err1, erre, errg = float((r1 - 1).abs().max()), float(abs(eye - 7)), float(((via_gram - via_svd) / via_svd).abs().max())
    ranks = torch.linalg.matrix_rank(W).to(ctx.dtype)
    inside = bool(((via_svd >= 1 - 1e-12) & (via_svd <= ranks + 1e-12)).all())
    ok = err1 < 1e-12 and erre < 1e-12 and errg < 1e-12 and inside
    # the bounds 1 ≤ srank ≤ rank for every matrix: random matrices and both equality cases (rank one: srank = 1; equal
    # singular values, I_7: srank = rank), the extremes of Σ_k s_k²/s_1² over a given rank
    record("holds" if ok else "violated", observed=max(err1, erre, errg), bound=1e-12, evidence="consistency",
           inside=True, inside_reason="a definition: no hypotheses (1 ≤ srank ≤ rank holds for every matrix)",
           worst_case=True,
           tightness="max abs. error of srank on rank-one matrices, on I_7 (=7) and Gram route vs SVD route",
           note=f"rank-one error {err1:.1e}, I_7 error {erre:.1e}, Gram vs SVD {errg:.1e}; 1 ≤ srank ≤ rank: {inside}")
    # companion: ‖M‖_F²/‖M‖₂ (no square on the spectral norm) is rejected by the same comparison
    wrong = float(((W ** 2).sum((-1, -2)) / spectra.spectral_norm(W) - via_svd).abs().min())
    record("holds" if wrong > 1.0 else "violated", role="companion", observed=wrong, bound=1e-12,
           note=f"mutation ‖M‖_F²/‖M‖₂ differs from srank by ≥ {wrong:.2f} on the same matrices (rejected)")
    assert ok
    assert wrong > 1.0  # the wrong formula is rejected


# --- thm-4.1 -------------------------------------------------------------------------------------
@pytest.mark.claim("kou2023/thm-4.1")
def test_leaky_log_norms_srank_and_loss(ctx, record):
    """Theorem 4.1: (a) ‖w_{j,r}(t)‖ = a log t + b with a > 0 (fitted on the last two decades, the two
    halves agreeing) and a against the derived p = 0 constant √(n(1+γ²)/2)/(1+γ²); (b) srank(W_j) → 1
    (extrapolated limit); (c) loss exponent ≥ α(ĉ₁) − 0.02 and ≤ 1.05."""
    run = leaky_long(ctx)
    cfg, data, t = run.cfg, run.data, run.t
    g = cfg.gamma
    # (a) per-neuron slopes
    nr = run.norms.cpu().numpy()  # (T, E, 2, m)
    fits = [[[sr.log_slope(t, nr[:, e, j, r]) for r in range(cfg.m)] for j in range(2)] for e in range(cfg.E)]
    a = np.array([[[f[0].slope for f in fj] for fj in fe] for fe in fits])
    se = np.array([[[f[0].slope_se for f in fj] for fj in fe] for fe in fits])
    halves = np.array([[[abs(f[1] - f[2]) / f[0].slope for f in fj] for fj in fe] for fe in fits])
    # the halves are the last two decades split at T/10: slopes on [T/100, T/10] and [T/10, T], written here (np.polyfit)
    T_ = float(t.max())
    for k_, (lo_, hi_) in enumerate(((T_ / 100, T_ / 10), (T_ / 10, T_))):
        w_ = (t >= lo_) & (t <= hi_) & (t >= 1)
        ref_ = np.polyfit(np.log(t[w_]), nr[w_, 0, 0, 0], 1)[0]
        assert math.isclose(fits[0][0][0][1 + k_], ref_, rel_tol=1e-9), ("log_slope half", k_, fits[0][0][0][1 + k_], ref_)
    ref = sr.leaky_norm_slope_ref(data.y, data.norms2, g)  # (2,)
    dev = float(np.max(np.abs(a - ref[None, :, None]) / ref[None, :, None]))
    wrong_ref = np.sqrt(cfg.n * (1 + g * g) / 2)  # mutation: the reference without the 1/(1+γ²) factor
    dev_wrong = float(np.min(np.abs(a - wrong_ref) / wrong_ref))
    half_tol = ctx.pick(quick=0.10, full=0.05)
    ok_a = a.min() > 0 and (a / se).min() > 10 and halves.max() <= half_tol and dev <= 0.03
    # (b) stable-rank limit
    srk = run.srank.cpu().numpy()  # (T, E, 2)
    Linf = np.array([[sr.limit_inverse_log(t, srk[:, e, j]).intercept for j in range(2)] for e in range(cfg.E)])
    ok_b = float(np.abs(Linf - 1).max()) <= 1e-3
    # (c) loss exponent against α(ĉ₁)
    L = run.loss.cpu().numpy()  # (T, E)
    w = sr.window(t)
    s = np.array([-fit_power(t[w], L[w, e]).exponent for e in range(cfg.E)])
    rho = run.rho
    rb = kd.balance_sum_ratio(rho[1:], data.y)  # (T-1, E), t ≥ 1
    c1 = float(rb.min()) / g ** 2
    alpha = sr.leaky_alpha(data.stats.epsilon, c1, g)
    tL = t[-1] * L[-1]
    tL_ref = sr.leaky_tL_ref(cfg.m, run.eta.cpu().numpy(), g, data.norms2)
    ok_c = s.min() >= alpha - 0.02 and s.max() <= 1.05
    wrong_alpha_rejected = s.min() < (alpha + 0.1) - 0.02
    hyp = run.hyp
    assert hyp["inside"], hyp["outside_reasons"]  # precondition: the run is inside Theorem 4.1's hypotheses
    ins, why = ks.inside(hyp)
    conf = cfg.as_dict()
    # observed: the largest disagreement of the slopes on the two window halves (Θ(log t): one slope on both), against
    # its tolerance; the positive slope (≥ 10 SE) and the derived constant (3%) are in the same rule
    record("holds" if ok_a else "violated", observed=float(halves.max()), bound=half_tol, evidence="test", inside=ins,
           inside_reason=why, config=conf, hypotheses=hyp, covers=["(a) Θ(log t) neuron norms"], figure_kind="err/tol",
           tightness=(f"slopes a ∈ [{a.min():.4f}, {a.max():.4f}] (max SE {se.max():.1e}) vs derived p=0 constant "
                      f"{ref.round(4).tolist()} (max rel. dev {dev:.3%}, ≤ 3% required); window halves agree within "
                      f"{halves.max():.2%}"),
           series=_series(t, nr[:, 0, 0, 0], "‖w_{+1,1}(t)‖ (seed 0)", "neuron norm"))
    record("holds" if ok_b else "violated", observed=float(np.abs(Linf - 1).max()), bound=1e-3, evidence="test",
           inside=ins, inside_reason=why, config=conf, hypotheses=hyp, covers=["(b) stable rank → 1"],
           figure_kind="err/tol",
           tightness=f"extrapolated lim srank(W_j) = {Linf.round(6).tolist()}; end value {srk[-1].max():.6f} (rate: lem-C.3)",
           series=_series(t, srk[:, 0, 0] - 1, "srank(W_{+1}) − 1", "srank − 1", logy=True))
    record("holds" if ok_c else "violated", observed=float(s.min()), bound=alpha, covers=["(c) loss rate t^-α"],
           evidence="test", inside=ins, inside_reason=why,
           config=conf, hypotheses={**hyp, "c1_hat": c1, "alpha": alpha},
           tightness=(f"loss exponent {s.round(4).tolist()} vs α(ĉ₁={c1:.3f})={alpha:.5f}; t·L(T)={tL.round(4).tolist()} "
                      f"vs derived p=0 limit {np.round(tL_ref, 4).tolist()}"),
           series=_series(t, L[:, 0], "L_S(W(t)) (seed 0)", "training loss", logy=True))
    rejected = dev_wrong > 0.1 and wrong_alpha_rejected
    record("holds" if rejected else "violated", role="companion", observed=dev_wrong, bound=0.03, config=conf,
           note=(f"(a) mutated constant √(n(1+γ²)/2)={wrong_ref:.3f} (no 1/(1+γ²)) is off by ≥ {dev_wrong:.1%} (> 3%: "
                 f"rejected); (c) mutated exponent α+0.1={alpha + 0.1:.4f}: fitted {s.min():.4f} < α+0.1−0.02 "
                 f"(rejected: {wrong_alpha_rejected})"))
    assert ok_a and ok_b and ok_c
    assert rejected  # the check rejects wrong versions


# --- lem-C.3 -------------------------------------------------------------------------------------
def _stab_index(run) -> int:
    """First grid index from which every recorded pattern sign(⟨w_{j,r},x_i⟩) equals j·y_i."""
    jy = run.data.jy.view(1, 1, 2, 1, -1)
    bad = (torch.sign(run.Z) != jy).flatten(1).any(1).cpu().numpy()  # (T,)
    idx = np.nonzero(bad)[0]
    return int(idx[-1] + 1) if idx.size else 0


# Tightness band of Lemma C.3's rate (finding "loose"): the fitted exponent k' of srank − 1 against ‖w_{j,1}‖ is
# pinned in [K_LO, K_HI] around the derived value 2 (the rank-one certificate ‖E_j‖_F²/‖W_j‖₂² with E_j frozen decays
# like ‖w‖⁻²): a rate off by a factor log t (k' = 1, the claim's) or log² t (k' = 3) falls outside
K_LO, K_HI = 1.8, 2.2


@pytest.mark.claim("kou2023/lem-C.3")
@pytest.mark.claim("kou2023/thm-4.1")
def test_leaky_srank_rate_and_certificate(ctx, record):
    """Lemma C.3: 1 ≤ srank(W_j) ≤ 1 + K/log t. Checks (i) (srank−1)·log t bounded and non-increasing
    over the last decade, (ii) fitted exponent k' of srank−1 ∝ ‖w_{j,1}‖^{−k'} is ≥ 1 (the claimed
    rate; observed ≈ 2), (iii) the derived certificate srank−1 ≤ ‖E_j‖_F²/‖W_j‖₂², E_j = W_j − 1w_{j,1}ᵀ
    (Eckart–Young), with E_j constant after stabilization (Lemma C.2)."""
    run = leaky_long(ctx)
    cfg, data, t = run.cfg, run.data, run.t
    srk = run.srank.cpu().numpy()
    gap = srk - 1  # (T, E, 2)
    lt = np.log(np.maximum(t, 2.0))
    last = sr.window(t, 1.0)
    prod = gap * lt[:, None, None]
    first = np.argmax(last)
    bounded_nonincr = bool(np.all(prod[last].max(0) <= 1.05 * prod[first]))
    w = sr.window(t)
    nrm = run.norms.cpu().numpy()
    kp = np.array([[-fit_power(nrm[w, e, j, 0], gap[w, e, j]).exponent for j in range(2)] for e in range(cfg.E)])
    k = np.array([[-fit_power(lt[w], gap[w, e, j]).exponent for j in range(2)] for e in range(cfg.E)])
    # (iii) certificate from d-free blocks
    W0 = run.state.W0.reshape(cfg.E, 2, cfg.m, -1)
    A0 = W0 @ W0.transpose(-1, -2)
    C = run.rho / data.norms2
    fro, dC = sr.spread_blocks(A0, run.Z0, C, data.G)  # (T, E, 2)
    # the d-free blocks against ‖W_j − 1w_{j,1}ᵀ‖_F² formed in weight space (W = W0 + C X) at the first and last grid
    # points; the block form cancels terms of size ‖w_r‖² ~ the entries of A0, so 1e-10 relative to them
    for g in (0, -1):
        Wk = W0 + C[g] @ data.X
        fro_w = ((Wk - Wk[..., :1, :]) ** 2).sum((-1, -2))
        scale = float(A0.diagonal(dim1=-2, dim2=-1).sum(-1).max() + (Wk ** 2).sum((-1, -2)).max())
        assert float((fro[g] - fro_w).abs().max()) <= 1e-10 * scale, "spread_blocks differs from ‖E_j‖_F² in weight space"
    spec2 = run.spec ** 2
    cert = (fro / spec2).cpu().numpy()
    pos = t >= 1
    # eigenvalue rounding: srank from an m×m Gram carries ~m·u relative error on values ≈ 1
    tol = 1e-12 * cfg.m
    viol = int((gap[pos] > cert[pos] + tol).sum())
    viol_quarter = int((gap[pos] > cert[pos] / 4 + tol).sum())  # mutation: a 4× tighter certificate
    slack = float(np.max(gap[pos] / cert[pos]))
    ks_ = _stab_index(run)
    ref = dC[ks_]
    # after stabilization increments are identical across r; the difference of two float64 running
    # sums drifts like √T·ulp(|ρ|) (≈ 3e-13 at T = 1e5, |ρ| ≈ 20): 1e-9 relative leaves room for that
    drift = float(((dC[ks_:] - ref).abs().amax((0, -1, -2)) / ref.abs().amax((-1, -2))).max())
    ok = bounded_nonincr and kp.min() >= 1 and viol == 0 and drift <= 1e-9
    in_band = bool(K_LO <= kp.min() and kp.max() <= K_HI)  # size of the "loose" finding
    rejected = viol_quarter > 0 and kp.min() < 3
    record("holds" if rejected else "violated", claim="kou2023/lem-C.3", role="companion", observed=viol_quarter, bound=0,
           config=cfg.as_dict(),
           note=(f"mutations: a 4× tighter certificate ‖E‖_F²/(4‖W‖₂²) is violated at {viol_quarter} grid points; "
                 f"a rate 1/log³ t (k' ≥ 3) is rejected by the fitted k' = {kp.min():.3f} < 3"))
    ins, why = ks.inside(run.hyp)
    for cid, cov in (("kou2023/lem-C.3", ["rate O(1/log t)"]), ("kou2023/thm-4.1", ["(b) rate O(1/log t)"])):
        record("holds" if ok else "violated", claim=cid, observed=float(kp.min()), bound=1.0, covers=cov,
               evidence="test", inside=ins, inside_reason=why, figure_kind="slack",  # k' ≥ 1: an inequality
               finding_type="loose", config=cfg.as_dict(), hypotheses=run.hyp,
               tightness=(f"k' (vs ‖w‖) = {kp.min():.3f}–{kp.max():.3f} ≥ 1 claimed, pinned in [{K_LO}, {K_HI}] "
                          f"({in_band}): the true rate is ≈ 1/log² t; "
                          f"k (vs log t) = {k.min():.2f}–{k.max():.2f} (pre-asymptotic offset); "
                          f"max (srank−1)·log t over the last decade {prod[last].max():.2e}; certificate "
                          f"(srank−1)/(‖E‖_F²/‖W‖₂²) ≤ {slack:.3f}, E_j drift {drift:.1e} from t={int(t[ks_])}"),
               finding=("Lemma C.3's O(1/log t) is valid but loose by a factor log t: fits give srank−1 ∝ ‖w‖^-"
                        f"{kp.mean():.2f}, and the rank-one certificate ‖E_j‖_F²/‖W_j‖₂² = O(1/log² t) bounds it"),
               series={**_series(t, gap[:, 0, 0], "srank − 1", "srank − 1", logy=True, plot="lemC3"),
                       **_series(t, cert[:, 0, 0], "certificate ‖E‖_F²/‖W‖₂²", "srank − 1", logy=True, plot="lemC3")})
    # the limit srank(W_j) → 1 itself, j = ±1: the extrapolated limit (linear in 1/log t) of the same run within 1e-3 of
    # 1, the rule of thm-4.1 (b) (test_leaky_log_norms_srank_and_loss) on these data
    Linf = np.array([[sr.limit_inverse_log(t, srk[:, e, j]).intercept for j in range(2)] for e in range(cfg.E)])
    lim_dev = float(np.abs(Linf - 1).max())
    ok_lim = lim_dev <= 1e-3
    record("holds" if ok_lim else "violated", claim="kou2023/lem-C.3", observed=float(Linf.max()), bound=1.0,
           evidence="test", inside=ins, inside_reason=why,
           covers=["srank(W_j) → 1, j = ±1"], config=cfg.as_dict(), hypotheses=run.hyp,
           tightness=f"extrapolated lim srank(W_j) = {Linf.round(6).tolist()}, max |L∞ − 1| = {lim_dev:.1e} (≤ 1e-3)",
           note="the rule of the thm-4.1 (b) record applied to this run's stable ranks (both classes, every member)")
    assert ok and ok_lim
    assert in_band, kp  # the size of the "loose" finding: k' ≈ 2 (a rate off by log t), not 1 or 3
    assert rejected  # mutations (4× tighter certificate, rate 1/log³ t) rejected


# --- thm-4.3 and lem-F.1: ReLU n-sweep ------------------------------------------------------------
# thm-4.3 (a) and lem-F.1 sweep. Every width meets Theorem 4.3's m ≥ C log(n/δ) with Lemma A.2's constant,
# 50 log(2n/δ) (265 at n = 10, 369 at n = 80, 403 at n = 160; δ = 0.1), and every initialization is drawn on the events
# of Lemmas A.1 and A.2 (make_net(on_events=True): Appendices E–G are stated on them), so the rows are inside the
# hypotheses. At these widths the events hold for most draws (0.4m ≤ |S_i^(0)| ≤ 0.6m is a 4σ event per sample at m = 400).
# The quick n-sweep stops at n = 40 (width 350 ≥ 334): its cost grows like m·n·d, and n = 80 at m ≥ 369 alone cost
# more than the rest of the sweep; the full profile runs n = 10–160 at m = 450 (≥ 403).
M_SWEEP_N = 10  # sample count of the m-sweep


def _n_sweep_m(ctx) -> int:
    """Width of the n-sweep: at least 50 log(2n/δ) for its largest n."""
    return ctx.pick(quick=350, full=450)
SWEEP_MAX_DRAWS = 5000  # redraws of the initialization until it is on the events


def _sweep_configs(ctx):
    ns = ctx.pick(quick=(10, 20, 40), full=(10, 20, 40, 80, 160))
    ms = ctx.pick(quick=(300, 700), full=(300, 900, 2000))  # with (n, m) = (10, _n_sweep_m) of the n-sweep; all ≥ 265
    m_n = _n_sweep_m(ctx)
    T = ctx.pick(quick=20_000, full=200_000)
    out = []
    for kind in ("G", "O"):
        for n in ns:
            out.append(ks.C0_R.replace(n=n, m=m_n, d=max(100, 2 * n), E=2, steps=T, data=kind, grid_points=40))
        for m in ms:
            out.append(ks.C0_R.replace(n=M_SWEEP_N, m=m, E=2, steps=T, data=kind, grid_points=40))
    return out


def _fit_exponent(pairs) -> float:
    """Fitted power-law exponent of the (x, y) pairs; nan with fewer than three distinct x (fit_power needs 3)."""
    pairs = sorted(pairs)
    if len({a for a, _ in pairs}) < 3:
        return float("nan")
    return fit_power([a for a, _ in pairs], [b for _, b in pairs]).exponent


def _growth_exponents(rows, kind, key="L_inf_max"):
    """Fitted power-law exponents of ``key`` against n (the n-sweep's rows, at its one width) and against m (at
    n = M_SWEEP_N)."""
    m_ref = max((r["m"] for r in rows if r["n"] != M_SWEEP_N), default=None)  # the n-sweep's width
    return (_fit_exponent([(r["n"], r[key]) for r in rows if r["data"] == kind and r["m"] == m_ref]),
            _fit_exponent([(r["m"], r[key]) for r in rows if r["data"] == kind and r["n"] == M_SWEEP_N]))


def _bounded_in_n_and_m(exponents, limit) -> bool:
    return all(math.isfinite(e) for e in exponents) and max(exponents) <= limit


def _f1_constants(run):
    """Lemma F.1's implied constants at the last three grid points, per (member, class):
    Ĉ_U = ‖ΔW‖_F²/(mn R_max² R_min⁻⁴ log² t) (bound (U)) and ĉ_L = ‖ΔW‖₂/(R_max⁻² R_min √(mn) log t) (bound (L));
    srank(ΔW) = Ĉ_U R⁶/ĉ_L² identically. Returns (Ĉ_U, ĉ_L) as (3, E, 2) arrays."""
    cfg, st_ = run.cfg, run.data.stats
    lt = np.log(run.t[-3:].astype(float))[:, None, None]
    spec = run.spec_delta[-3:].cpu().numpy()
    fro = run.srank_delta[-3:].cpu().numpy() * spec ** 2
    mn = cfg.m * cfg.n
    CU = fro / (mn * st_.R_max ** 2 * st_.R_min ** -4 * lt ** 2)
    cL = spec / (st_.R_max ** -2 * st_.R_min * np.sqrt(mn) * lt)
    return CU, cL


GROWTH_MAX = 0.2  # |power-law exponent| in n or m that still counts as "bounded independently of n, m"

# Tightness band of Lemma F.1's certificate (issue 15). cert/srank(ΔW) = ‖v‖²‖ΔW‖₂²/‖ΔW v‖², v = XᵀG⁻¹1, and
# ΔW v = A1 (A = ρ/‖x‖², ΔW = AX). Asymptotically only the n/2 own-class columns of A grow (like log t; the
# opposite-class ones stay O(1) or O(pn log t)), so by Cauchy–Schwarz ‖A1‖² ≤ (n/2)‖A‖₂²(1 + O(1/log t)) while
# ‖v‖² = 1ᵀG⁻¹1 = n(1 + O(ε)): cert/srank ≥ 2(1 − O(ε) − O(1/log t)). Above, Gershgorin on AᵀA (row sums of the
# own-class Gram m²|S_i ∩ S_i'|/(|S_i||S_i'|) differ by ≲ 30% on the events |S_i| ∈ [0.4, 0.6]m) bounds it by
# ≈ 2·1.3. Band [1.8, 2.6] (width ×1.44 < 2), so a certificate doubled or halved falls outside (the halved one would
# also stop bounding srank); the measured range is in the record.
F1_BAND = (1.8, 2.6)


def _f1_certificate_weight_space(A: torch.Tensor, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Lemma F.1's certificate and srank(ΔW) evaluated apart from stable_rank.f1_certificate, in weight space:
    ΔW = A X (A: (E, 2, m, n) coefficients ρ/‖x_i‖², X: (n, d)), v = Xᵀ(XXᵀ)⁻¹1, cert = ‖ΔW‖_F²‖v‖²/‖ΔW v‖²,
    srank = ‖ΔW‖_F²/σ_max(ΔW)² from an SVD. Returns (cert, srank), each (E, 2)."""
    dW = A @ X
    v = X.T @ torch.linalg.solve(X @ X.T, torch.ones(X.shape[0], dtype=X.dtype, device=X.device))
    fro2 = (dW ** 2).sum((-1, -2))
    smax = torch.linalg.svdvals(dW)[..., 0]
    return fro2 * (v @ v) / ((dW @ v) ** 2).sum(-1), fro2 / smax ** 2


def _sweep_rule(rows) -> dict:
    """The thm-4.3 (a) rule on sweep rows, per data kind: max extrapolated limit ≤ 3 and growth exponents of the
    largest limit in n and m ≤ GROWTH_MAX; and Lemma F.1's (U), (L): growth exponents of Ĉ_U, ĉ_L in n and m within
    ±GROWTH_MAX. ``judgeable`` is False when the rows cannot support a fit in n and in m for every kind."""
    spread, growth, cgrowth = {}, {}, {}
    for kind in ("G", "O"):
        rk = [r for r in rows if r["data"] == kind]
        if not rk:
            continue
        hi, lo = max(r["L_inf_max"] for r in rk), min(r["L_inf_min"] for r in rk)
        spread[kind] = (lo, hi, hi / lo)
        growth[kind] = _growth_exponents(rows, kind)
        cgrowth[kind] = (*_growth_exponents(rows, kind, key="C_U_hat"), *_growth_exponents(rows, kind, key="c_L_hat"))
    judgeable = len(spread) == 2 and all(math.isfinite(e) for g in growth.values() for e in g)
    ok_thm = judgeable and all(spread[k][1] <= 3 and _bounded_in_n_and_m(growth[k], GROWTH_MAX) for k in spread)
    ok_uL = judgeable and all(abs(e) <= GROWTH_MAX for v in cgrowth.values() for e in v)
    return {"spread": spread, "growth": growth, "cgrowth": cgrowth, "judgeable": judgeable, "ok_thm": ok_thm,
            "ok_uL": ok_uL, "L_max": max((v[1] for v in spread.values()), default=float("nan")),
            "growth_max": max((max(g) for g in growth.values()), default=float("nan")),
            "c_growth_max": max((max(abs(e) for e in v) for v in cgrowth.values()), default=float("nan"))}


def _sweep_text(rule) -> str:
    return "; ".join(f"{k}: L∞ ∈ [{v[0]:.3f}, {v[1]:.3f}], growth exponent in n {rule['growth'][k][0]:+.3f}, in m "
                     f"{rule['growth'][k][1]:+.3f} (≤ {GROWTH_MAX} required)" for k, v in rule["spread"].items())


def _c_text(rule) -> str:
    return ", ".join(f"{k}: Ĉ_U ({v[0]:+.2f} in n, {v[1]:+.2f} in m), ĉ_L ({v[2]:+.2f} in n, {v[3]:+.2f} in m)"
                     for k, v in rule["cgrowth"].items())


@pytest.mark.claim("kou2023/thm-4.3")
@pytest.mark.claim("kou2023/lem-F.1")
def test_relu_srank_bounded_over_n_sweep(ctx, record):
    """Theorem 4.3(a) / Lemma F.1: limsup srank(W_j) ≤ c independent of n, m, d. Since srank ≤ n is
    trivial, the claim is tested over an n-sweep (m = 350, full 450) and an m-sweep (n = 10, m ≥ 300; every width above Theorem
    4.3's width condition 50 log(2n/δ)), initializations on the events
    of Lemmas A.1 and A.2: per data kind the extrapolated limits L∞ of srank(W_j − W_j(0)) must stay ≤ 3 and show
    no power-law growth — the fitted exponent of max L∞ against n and against m must be ≤ 0.2 (growth like the
    trivial bound n has exponent 1, like √n ½; the companion feeds such a sweep and is rejected). The as-stated
    records judge the rows inside the hypothesis report; rows outside (none expected) get records of their own.
    Lemma F.1: the implied constants Ĉ_U, ĉ_L of the bounds (U), (L) must have growth exponents in n and in m of
    at most 0.2 in absolute value; the proof's certificate ‖ΔW‖_F²‖v‖²/‖ΔW v‖² (v = XᵀG⁻¹1) bounds srank(ΔW) at
    every grid point (true for any matrix: a consistency record) and is pinned at about twice srank(ΔW) at T."""
    rows = []
    cert_viol, cert_ratio = 0, 0.0
    cert_pin, end_slack = 0.0, []  # the certificate re-evaluated in weight space, and its slack cert/srank at T
    for cfg in _sweep_configs(ctx):
        data = ks.make_data(cfg, record.generator(cfg.key(), claim="kou2023/thm-4.3"), device=ctx.device)
        net = ks.make_net(cfg, data, record.generator(cfg.key("init", cfg.m), claim="kou2023/thm-4.3"),
                          on_events=True, max_draws=SWEEP_MAX_DRAWS)
        run = ks.simulate(cfg, data, net, observe=("rho", "srank"))
        t = run.t
        sd = run.srank_delta.cpu().numpy()
        Linf = [sr.limit_inverse_log(t, sd[:, e, j]).intercept for e in range(cfg.E) for j in range(2)]
        C = run.rho[1:] / data.norms2
        cert, srd = sr.f1_certificate(C, data.G)
        cert_viol += int((srd > cert * (1 + 1e-9)).sum())  # rounding of m×m eigenvalues ≪ 1e-9
        cert_ratio = max(cert_ratio, float((srd / cert).max()))
        ci, si = _f1_certificate_weight_space(run.rho[-1] / data.norms2, data.X)
        cert_pin = max(cert_pin, float((cert[-1] / ci - 1).abs().max()), float((srd[-1] / si - 1).abs().max()))
        end_slack.append((ci / si).cpu().numpy().ravel())
        CU, cL = _f1_constants(run)
        rows.append({"label": f"{cfg.data} n={cfg.n} m={cfg.m}", "data": cfg.data, "n": cfg.n, "m": cfg.m, "d": cfg.d,
                     "width_min": ks.relu_width_min(cfg.n, cfg.delta),
                     "L_inf_max": max(Linf), "L_inf_min": min(Linf),
                     "srank_W_end_max": float(run.srank[-1].max()), "cert_end_max": float(cert[-1].max()),
                     "srank_delta_end_max": float(srd[-1].max()), "trivial_bound_n": cfg.n,
                     "C_U_hat (max, last 3 grid pts)": CU.max(axis=(1, 2)).tolist(),
                     "c_L_hat (min, last 3 grid pts)": cL.min(axis=(1, 2)).tolist(),
                     "C_U_hat": float(CU[-1].max()), "c_L_hat": float(cL[-1].min()),
                     "C_U/c_L settle (rel. change over last 3)": float(max(np.ptp(CU, 0).max() / CU[-1].max(),
                                                                             np.ptp(cL, 0).max() / cL[-1].min())),
                     **ks.hyp_row(run.hyp)})
    inside_rows = [r for r in rows if r["inside"]]
    outside_rows = [r for r in rows if not r["inside"]]
    rule = _sweep_rule(inside_rows)  # the as-stated verdict: the rows inside the hypotheses only
    ins = rule["judgeable"]
    wmin = min(r["m"] / r["width_min"] for r in inside_rows or rows)
    why = (f"{len(inside_rows)} of {len(rows)} rows inside the hypothesis report (widths ≥ {wmin:.2f}× Theorem 4.3's "
           f"m ≥ 50 log(2n/δ); initializations on the events of Lemmas A.1 and A.2, smallest |S_i^(0)|/m {min(r['S0_min_frac'] for r in inside_rows or rows):.3g}; "
           f"C_data ≥ {min(r['C_data'] for r in inside_rows or rows):.3g}, C_eta ≥ "
           f"{min(r['C_eta'] for r in inside_rows or rows):.3g}, C_sigma ≥ {min(r['C_sigma'] for r in inside_rows or rows):.3g})"
           + ("" if ins else "; too few inside rows for the growth fits in n and in m, so this record is outside"))
    ns = sorted({r["n"] for r in rows})
    ser = {}
    for kind in ("G", "O"):
        rk = sorted([r for r in inside_rows if r["data"] == kind and r["m"] == _n_sweep_m(ctx)], key=lambda r: r["n"])
        ser[f"L∞ max ({kind})"] = {"x": [r["n"] for r in rk], "y": [r["L_inf_max"] for r in rk], "xlabel": "n",
                                   "ylabel": "limit of srank(W_j − W_j(0))", "logx": True, "logy": False, "plot": "nsweep"}
    ser["trivial bound n"] = {"x": ns, "y": ns, "xlabel": "n", "ylabel": "limit of srank(W_j − W_j(0))",
                              "logx": True, "logy": True, "plot": "nsweep"}
    conf = {f"n (m={_n_sweep_m(ctx)})": ns, "m (n=10)": sorted({r["m"] for r in rows if r["n"] == M_SWEEP_N}),
            "steps": _sweep_configs(ctx)[0].steps, "data": "D-G(p=1/(20n)) and D-O", "act": "relu",
            "initialization": "on the events of Lemmas A.1 and A.2 (redrawn)"}
    hyp = {"rows inside": len(inside_rows), "rows": len(rows), "per run": "see table (R_min, R_max, p, C_data, C_eta, "
           "C_sigma, beta, S0_min_frac, inside, outside_reasons per row)",
           "outside rows": [(r["data"], r["n"], r["m"], r["outside_reasons"]) for r in outside_rows]}
    tight = _sweep_text(rule)
    record("holds" if rule["ok_thm"] else "violated", claim="kou2023/thm-4.3", observed=rule["L_max"], bound=3.0,
           evidence="test", inside=ins, inside_reason=why, covers=["(a) stable rank bounded independently of n, m"],
           figure_kind="slack",
           config=conf, hypotheses=hyp, table=inside_rows, series=ser,
           tightness=f"{tight}; largest growth exponent {rule['growth_max']:+.3f}; trivial bound n up to {max(ns)}")
    # companion: a sweep whose limits grew like √n (half the trivial bound's exponent) is rejected
    fake = [dict(r, L_inf_max=r["L_inf_max"] * (r["n"] / 10) ** 0.5) for r in inside_rows]
    fake_growth = _growth_exponents(fake, "G")
    fake_rejected = not _bounded_in_n_and_m(fake_growth, GROWTH_MAX)
    record("holds" if fake_rejected else "violated", claim="kou2023/thm-4.3", role="companion",
           observed=max(fake_growth), bound=GROWTH_MAX, config=conf,
           note=(f"the measured sweep with limits multiplied by √(n/10) (growth like √n) has growth exponent "
                 f"{fake_growth[0]:+.3f} in n > {GROWTH_MAX}: rejected ({fake_rejected})"))
    ratio_end = [r["srank_delta_end_max"] / r["cert_end_max"] for r in rows]
    fake_c = {k: _fit_exponent([(r["n"], r["c_L_hat"] * (r["n"] / 10) ** -0.5) for r in inside_rows
                                if r["data"] == k and r["m"] == _n_sweep_m(ctx)]) for k in ("G", "O")}
    fake_c_rejected = all(abs(v) > GROWTH_MAX for v in fake_c.values())
    record("holds" if fake_c_rejected else "violated", claim="kou2023/lem-F.1",
           role="companion", observed=min(abs(v) for v in fake_c.values()), bound=GROWTH_MAX, config=conf,
           note=("(L) with a constant decaying like n^-1/2 (the measured ĉ_L × (n/10)^-1/2) has growth exponents "
                 + ", ".join(f"{k} {v:+.2f}" for k, v in fake_c.items()) + f": rejected by |exponent| ≤ {GROWTH_MAX}"))
    f1_cols = ("label", "n", "m", "L_inf_max", "srank_delta_end_max", "cert_end_max", "C_U_hat", "c_L_hat",
               "C_U_hat (max, last 3 grid pts)", "c_L_hat (min, last 3 grid pts)",
               "C_U/c_L settle (rel. change over last 3)", "inside")
    # (U) and (L): the implied constants carry the factor mn explicitly, so they must neither grow nor decay with n, m
    record("holds" if rule["ok_uL"] else "violated", claim="kou2023/lem-F.1", observed=rule["c_growth_max"],
           bound=GROWTH_MAX, evidence="test", inside=ins, inside_reason=why, figure_kind="slack",
           covers=["(U) upper bound on ‖ΔW‖_F²", "(L) lower bound on ‖ΔW‖₂"], config=conf, hypotheses=hyp,
           table=[{k: r[k] for k in f1_cols} for r in inside_rows],
           tightness=(f"largest |growth exponent| of the implied constants {rule['c_growth_max']:.3f} (≤ {GROWTH_MAX}: "
                      f"constants independent of n and m): {_c_text(rule)}; implied constants at T: Ĉ_U ∈ "
                      f"[{min(r['C_U_hat'] for r in inside_rows or rows):.3g}, {max(r['C_U_hat'] for r in inside_rows or rows):.3g}], "
                      f"ĉ_L ∈ [{min(r['c_L_hat'] for r in inside_rows or rows):.3g}, {max(r['c_L_hat'] for r in inside_rows or rows):.3g}]"))
    # the certificate srank(ΔW) ≤ ‖ΔW‖_F²‖v‖²/‖ΔW v‖² holds for any matrix (‖ΔW v‖ ≤ ‖ΔW‖₂‖v‖): consistency
    record("holds" if cert_viol == 0 else "violated", claim="kou2023/lem-F.1", observed=cert_ratio, bound=1.0,
           evidence="consistency", inside=ins, inside_reason=why, config=conf, hypotheses=hyp,
           tightness=(f"max over grid points and runs of srank(ΔW)/cert = {cert_ratio:.3f} (≤ 1 for any matrix; "
                      f"{cert_viol} violations); at T the certificate is {1 / max(ratio_end):.2f}–{1 / min(ratio_end):.2f}× "
                      f"the stable rank, end values {min(r['cert_end_max'] for r in rows):.2f}–"
                      f"{max(r['cert_end_max'] for r in rows):.2f} for n ≤ {max(ns)}; slack cert/srank(ΔW) at T "
                      f"{min(min(x) for x in end_slack):.3f}–{max(max(x) for x in end_slack):.3f}, pinned in "
                      f"{list(F1_BAND)} (weight-space evaluation, agreeing with the d-free one within {cert_pin:.0e})"),
           note="Lemma F.1's proof invokes Cor. E.3, false for p=0 (see lem-E.2); its conclusion still holds at p=0 (D-O rows)")
    # F.1's conclusion limsup srank(W_j) = O(1): the thm-4.3 (a) rule on the same sweep (srank(W_j − W_j(0)) has the
    # limit of srank(W_j), since W_j(0) is fixed while W_j − W_j(0) grows like log t)
    record("holds" if rule["ok_thm"] else "violated", claim="kou2023/lem-F.1", observed=rule["L_max"], bound=3.0,
           evidence="test", inside=ins, inside_reason=why, covers=["limsup srank(W_j) = O(1)"], config=conf,
           figure_kind="slack",
           hypotheses=hyp, tightness=f"{tight}; trivial bound n up to {max(ns)}",
           note="the data and rule of the thm-4.3 (a) record of this sweep: extrapolated limits ≤ 3, growth exponents "
                f"in n and m ≤ {GROWTH_MAX}")
    if outside_rows:  # rows outside the hypothesis report: the same rules on all rows, shown beside the verdict
        rule_all = _sweep_rule(rows)
        why_out = (f"{len(outside_rows)} of {len(rows)} rows outside the hypothesis report: "
                   + "; ".join(f"{r['label']}: {r['outside_reasons']}" for r in outside_rows))
        for cid, cov in (("kou2023/thm-4.3", ["(a) stable rank bounded independently of n, m"]),
                         ("kou2023/lem-F.1", ["limsup srank(W_j) = O(1)"])):
            record("holds" if rule_all["ok_thm"] else "violated", claim=cid, observed=rule_all["L_max"], bound=3.0,
                   evidence="test", inside=False, inside_reason=why_out, covers=cov, config=conf, table=outside_rows,
                   figure_kind="slack",
                   tightness=_sweep_text(rule_all), note="all rows of the sweep, outside ones included")
    assert fake_rejected and fake_c_rejected
    # tightness band of the certificate (issue 15): its slack cert/srank(ΔW) at T, from the weight-space evaluation
    es = np.concatenate(end_slack)
    in_band = bool(np.all((F1_BAND[0] <= es) & (es <= F1_BAND[1])))
    wrong = {f: bool(np.any((F1_BAND[0] <= f * es) & (f * es <= F1_BAND[1]))) for f in (2.0, 0.5)}
    record("holds" if not any(wrong.values()) else "violated", claim="kou2023/lem-F.1", role="companion",
           observed=[float((2 * es).min()), float((0.5 * es).max())], bound=list(F1_BAND), config=conf,
           note=(f"the certificate doubled (slack {2 * es.min():.2f}–{2 * es.max():.2f}) or halved ({0.5 * es.min():.2f}–"
                 f"{0.5 * es.max():.2f}; halved it no longer bounds srank) leaves the band {list(F1_BAND)} of cert/srank "
                 f"at T = {es.min():.3f}–{es.max():.3f} (rejected: {not any(wrong.values())})"))
    assert not any(wrong.values()), wrong
    assert cert_pin <= 1e-9, cert_pin  # d-free certificate = its weight-space evaluation (rounding of m×m, m×d)
    assert in_band, es  # the certificate is ≈ 2× the stable rank at T, as the error model says
    assert ins, why  # the sweep is drawn on the events: every row inside
    assert cert_viol == 0 and rule["ok_thm"] and rule["ok_uL"], (rule, cert_viol)


@pytest.mark.claim("kou2023/thm-4.3")
def test_relu_bound_fails_without_both_classes(ctx, record):
    """Mutation / hidden hypothesis: with all labels +1 the class −1 never learns and srank(W_{−1})
    stays at initialization level, so the '≤ 3' check must fail; the theorem needs both classes."""
    cfg = ks.C0_R.replace(labels="positive", sigma0=0.05, E=2, steps=ctx.pick(quick=5000, full=20000), grid_points=20)
    data = ks.make_data(cfg, record.generator(cfg.key()), device=ctx.device)
    net = ks.make_net(cfg, data, record.generator(cfg.key("init")))
    run = ks.simulate(cfg, data, net, observe=("srank",))
    end = run.srank[-1].cpu().numpy()  # (E, 2)
    rejected = bool(end[:, 1].min() > 3.0)
    record("holds" if rejected else "violated", role="companion", observed=float(end[:, 1].min()), bound=3.0,
           config=cfg.as_dict(), hypotheses=run.hyp,
           note=f"one class only: srank(W_-1) stays {end[:, 1].round(2).tolist()} (init-level), srank(W_+1) "
                f"{end[:, 0].round(3).tolist()}; the '≤ 3' check rejects it: {rejected} (hidden hypothesis: both classes; "
                f"outside reasons reported: {run.hyp['outside_reasons']})")
    assert not run.hyp["inside"]
    assert rejected


# --- orthogonal data: lem-F.2, lem-F.3, rem-4.4 ---------------------------------------------------
@pytest.mark.claim("kou2023/lem-F.2")
def test_orthogonal_frozen_pattern_and_log_slope(ctx, record):
    """Lemma F.2 on D-O (ReLU): (a) Z(0) < 0 ⇒ ρ ≡ 0; (b) ρ̄_{y_i,r,i} identical over r ∈ S_i^(0);
    (c) opposite-class neurons active at init become inactive and freeze; (d) fitted slope of ρ̄ vs log t
    within 3% of m/|S_i^(0)| (when K_i T ≥ 10³), and the exact scalar recursion z ← z + K_i/(1+e^z)."""
    run, _ = orth_pair(ctx)
    cfg, data, t = run.cfg, run.data, run.t
    rho, Z0, Z = run.rho, run.Z0, run.Z  # (T,E,2,m,n), (E,2,m,n)
    own = (data.jy > 0).view(1, 2, 1, -1).expand_as(Z0)
    # (a) ρ is monotone in |·| (Lemma 5.2), so ρ(T) = 0 implies ρ(t) = 0 for every t ≤ T
    neg = Z0 < 0
    a_viol = int((rho[-1][neg] != 0).sum())
    # (b) identical increments within S_i^(0): bitwise-identical arithmetic, tolerance 1e-12 relative
    S0 = run.S0  # (E, m, n)
    ownrho = torch.where(data.y > 0, rho[:, :, 0], rho[:, :, 1])  # (T, E, m, n)
    big = torch.where(S0, ownrho, torch.full_like(ownrho, -np.inf)).amax(-2)
    small = torch.where(S0, ownrho, torch.full_like(ownrho, np.inf)).amin(-2)
    b_spread = float(((big - small) / big.abs().clamp_min(1e-300))[1:].max())
    # (c) opposite-class, active at init: Z decreases monotonically (ρ̲ non-increasing) → first grid
    # time at which all are negative; after it ρ̲ stays constant (exactly)
    opp = (~own) & (Z0 >= 0)
    neg_all = np.array([bool((Z[k][opp] < 0).all()) for k in range(len(t))])
    kc = int(np.argmax(neg_all)) if neg_all.any() else len(t)
    c_frozen = float((rho[kc:][:, opp] - rho[kc][opp]).abs().max()) if kc < len(t) else np.inf
    C_impl = float(t[kc] * run.eta[0] * data.stats.R_min ** 2 / (cfg.n * cfg.m)) if kc < len(t) else np.inf
    # (d) slopes per (e, i)
    Sn = S0.sum(1).cpu().numpy()  # (E, n)
    r_first = S0.to(torch.int64).argmax(1)  # (E, n): one r ∈ S_i^(0)
    rb = torch.gather(ownrho, 2, r_first.unsqueeze(0).unsqueeze(2).expand(len(t), -1, 1, -1)).squeeze(2).cpu().numpy()
    lim = cfg.m / Sn
    slopes = np.array([[sr.log_slope(t, rb[:, e, i])[0].slope for i in range(cfg.n)] for e in range(cfg.E)])
    K = run.eta.cpu().numpy()[:, None] * Sn * data.norms2.cpu().numpy()[None] / (cfg.n * cfg.m ** 2)
    judged = K * t[-1] >= 1e3
    rel = np.abs(slopes - lim) / lim
    naive = rb[-1] / np.log(t[-1]) / lim
    wrong_rel = np.abs(slopes - 1.1 * lim) / (1.1 * lim)  # mutation: a limit 10% off
    # scalar recursion for the margin from the grid point kc on (exact for t ≥ T_stab, p = 0)
    h = torch.relu(Z[kc])
    q = ((h[:, 0] - h[:, 1]).sum(1) / cfg.m * data.y).cpu().numpy()  # (E, n) margins y_i f(x_i)
    z = q.copy()
    for _ in range(int(t[-1] - t[kc])):
        z = z + K * expit(-z)
    hT = torch.relu(Z[-1])
    qT = ((hT[:, 0] - hT[:, 1]).sum(1) / cfg.m * data.y).cpu().numpy()
    # the recursion is contracting; rounding adds ≲ m·u·|q| per step → ≤ 1e-9 relative over 1e6 steps
    rec_err = float(np.max(np.abs(z - qT) / np.abs(qT)))
    # (a), (b), the freeze after (c) and the scalar recursion hold by construction on orthogonal data (each coefficient
    # moves only through its own sample's term): consistency. (d) and the switch-off of (c) within the run can fail.
    ok_cons = a_viol == 0 and b_spread <= 1e-12 and c_frozen == 0.0 and rec_err <= 1e-9
    ok = bool(judged.any() and rel[judged].max() <= 0.03 and kc < len(t))
    rejected = bool(wrong_rel[judged].min() > 0.03)
    record("holds" if rejected else "violated", role="companion", observed=float(wrong_rel[judged].min()), bound=0.03,
           config=cfg.as_dict(), note="(d) with a limit 10% above m/|S_i^(0)|: the 3% criterion rejects every judged slope")
    ins, why = ks.inside(run.hyp)
    record("holds" if ok_cons else "violated", observed=max(b_spread, rec_err), bound=1e-9, evidence="consistency",
           inside=ins, inside_reason=why, config=cfg.as_dict(),
           covers=["(a) inactive at init stays inactive", "(b) equal ρ̄ within S_i(0)"],
           tightness=(f"(a) {a_viol} nonzero ρ on Z(0)<0; (b) spread within S_i {b_spread:.1e}; after (c) the switched-off "
                      f"coefficients change by {c_frozen:.1e}; scalar recursion error {rec_err:.1e} (true by construction "
                      "on orthogonal data: each coefficient moves only through its own sample's term)"))
    record("holds" if ok else "violated", observed=float(rel[judged].max()), bound=0.03, evidence="test", inside=ins,
           inside_reason=why, config=cfg.as_dict(), hypotheses=run.hyp,
           covers=["(c) opposite class switches off", "(d) ρ̄/log t → m/|S_i(0)|"],
           table=[{"seed": e, "i": i, "|S_i|": int(Sn[e, i]), "m/|S_i|": float(lim[e, i]), "slope": float(slopes[e, i]),
                   "rel_err": float(rel[e, i]), "naive rho(T)/log T over limit": float(naive[e, i]),
                   "K_i T": float(K[e, i] * t[-1])} for e in range(min(cfg.E, 2)) for i in range(cfg.n)],
           tightness=(f"(a) {a_viol} nonzero ρ on Z(0)<0; (b) spread within S_i {b_spread:.1e}; (c) frozen from "
                      f"t={int(t[kc])} (implied C ≤ {C_impl:.3g}); (d) slope rel. error ≤ {rel[judged].max():.2%} "
                      f"(naive ratio only {naive.min():.2f}–{naive.max():.2f} of the limit); scalar recursion "
                      f"error {rec_err:.1e}"),
           series=_series(t, rb[:, 0, 0], "ρ̄_{y_1,r,1}(t)", "coefficient"))
    assert ok and ok_cons, (rel[judged].max() if judged.any() else None, kc, a_viol, b_spread, c_frozen, rec_err)
    assert rejected  # the 3% criterion rejects a 10%-wrong limit


# Orthogonal-data ReLU limit (lem-F.3, rem-4.4). For p = 0 and t ≥ T_stab (Lemma F.2) the own-class
# coefficients are ρ̄_{y_i,r,i} = (m/|S_i|)(q_i − c_i) with the margin q_i following q ← q + K_i/(1+e^q)
# exactly, so q_i = log(K_i t) + O(log(K_i t)/(K_i t)), K_i = η|S_i^(0)|‖x_i‖²/(nm²). With u = log t + ā_j
# (ā_j = mean log K_i over the class): W_j(t) = u·A_j + B_j + o(1), B_j = A_j diag(log K_i − ā_j − c_i) + W_j(0)
# + (frozen off-class part), so srank(W_j(t)) = srank(A_j + B_j x), x = 1/u: analytic in x with Taylor
# coefficients ~‖B_j‖^k. Without the shift B_j carries ā_j ≈ −3 and a low-degree fit in 1/log t extrapolates
# badly from x ∈ [0.09, 0.16] (seed 2: L∞ off by 1.1% linear, 1.3% quadratic); shifted, ‖B_j‖ is the spread
# of log|S_i| (≲ 0.5) and a quadratic in x leaves an intercept error of the order of the cubic term,
# ≈ c₃x₁x₂x₃, estimated by LimitFit.truncation (the intercept change when the cubic term is added). At the
# width Theorem 4.3 needs (m = 300, C0-O) it is ≤ 0.013% on seeds 0–6, against a true error ≤ 0.006%; the
# check requires truncation ≤ TOL_F3/2 (4× that), so the 0.1% criterion judges the limit and not the fit model.
# Its power: the limit without Lemma F.2(d)'s m/|S_i^(0)| column scaling is 0.38–1.32% off on the same seeds
# (|S_i^(0)|/m concentrates at ½ as m grows, so this wrong version moves closer at larger m), '2' 18–20% off.
TOL_F3 = 0.001


def _orth_relu_limits(run):
    """LimitFit of srank(W_j(t)) per (member, class) for the orthogonal ReLU run, and the predicted srank(A)."""
    cfg = run.cfg
    shift = sr.orthogonal_log_shift(run.eta, run.S0.sum(1), run.data.norms2, run.data.y, cfg.m)
    srk = run.srank.cpu().numpy()
    fits = [[sr.limit_log_poly(run.t, srk[:, e, j], shift=float(shift[e, j]), degree=2) for j in range(2)]
            for e in range(cfg.E)]
    pred = sr.orthogonal_limit_srank(run.Z0, run.data.y)[0].cpu().numpy()
    return fits, pred, shift


@pytest.mark.claim("kou2023/lem-F.3")
def test_orthogonal_srank_predicted_limit_and_approach_to_2(ctx, record):
    """Lemma F.3: srank(W_j(t)) → srank(A) exactly predicted from the initial pattern (within TOL_F3 = 0.1%, limit
    extrapolated by a quadratic in 1/log(K̄t), see the comment above), the stacked W's limit in [16/9, 9],
    and srank(A) → 2 only as m, n → ∞ (Monte Carlo, no training)."""
    run, _ = orth_pair(ctx)
    cfg, t = run.cfg, run.t
    fits, pred, shift = _orth_relu_limits(run)
    Linf = np.array([[f.intercept for f in fe] for fe in fits])
    trunc = np.array([[f.truncation / p for f, p in zip(fe, pe)] for fe, pe in zip(fits, pred)])
    rel = np.abs(Linf - pred) / pred
    pred_stack = sr.orthogonal_limit_srank(run.Z0, run.data.y)[1]
    W = run.weights().reshape(cfg.E, 2 * cfg.m, -1)
    stack_end = spectra.stable_rank(W).cpu().numpy()
    ps = pred_stack.cpu().numpy()
    in_range = bool(np.all((ps >= 16 / 9) & (ps <= 9)))
    # Monte Carlo of srank(A) over initial patterns
    sizes = ctx.pick(quick=[(20, 10, 200), (100, 10, 200), (1000, 10, 50), (20, 100, 100), (100, 100, 100),
                            (1000, 100, 30), (20, 1000, 20), (100, 1000, 20), (1000, 1000, 10)],
                     full=[(mm, nn, 200) for mm in (20, 100, 1000) for nn in (10, 100, 1000)])
    mc = []
    for mm, nn, dr in sizes:
        s = sr.srank_A_montecarlo(mm, nn, dr, generator=record.generator({"m": mm, "n": nn}))
        mc.append({"m": mm, "n": nn, "draws": dr, "mean": float(s.mean()), "sd": float(s.std())})
    diag = [next(r for r in mc if r["m"] == a and r["n"] == b) for a, b in ((20, 10), (100, 100), (1000, 1000))]
    approach = [abs(r["mean"] - 2) for r in diag]
    ok_mc = approach[2] < approach[0] and approach[2] <= 0.02
    fit_ok = float(trunc.max()) <= TOL_F3 / 2  # precondition: the fit model resolves the tolerance
    ok = rel.max() <= TOL_F3 and in_range and ok_mc and fit_ok
    m20 = next(r["mean"] for r in mc if r["m"] == 20 and r["n"] == 1000)
    ins, why = ks.inside(run.hyp)
    record("holds" if ok else "violated", observed=float(rel.max()), bound=TOL_F3, config=cfg.as_dict(),
           evidence="test", inside=ins, inside_reason=why, hypotheses=run.hyp, table=mc, covers=["limit = srank(A)", "srank(A) → 2 as m, n → ∞", "stacked W in [16/9, 9]"],
           tightness=(f"L∞ {Linf.round(4).tolist()} vs predicted srank(A),srank(B) {pred.round(4).tolist()} "
                      f"(rel. dev ≤ {rel.max():.3%}; fit: quadratic in 1/(log t + log K̄), log K̄ "
                      f"{shift.round(2).min()}…{shift.round(2).max()}, model-error estimate ≤ {trunc.max():.3%}); "
                      f"stacked W predicted {ps.round(2).tolist()} (end {stack_end.round(2).tolist()}) in [16/9, 9]; "
                      f"|E srank(A) − 2| = {[round(a, 3) for a in approach]} along (m,n)=(20,10),(100,100),(1000,1000)"),
           note=(f"'stable rank ≈ 2' is a large-(m, n) statement, as the lemma's o(1) in m, n says: at n={cfg.n}, m={cfg.m} the exact limit is "
                    f"srank(A) ∈ [{pred.min():.2f}, {pred.max():.2f}], and for m=20, n=1000 it is "
                    f"{m20:.2f} ({'>' if m20 > 2 else '≤'} 2)"),
           series={"E srank(A) (m=1000)": {"x": [r["n"] for r in mc if r["m"] == 1000],
                                           "y": [r["mean"] for r in mc if r["m"] == 1000], "xlabel": "n",
                                           "ylabel": "E srank(A)", "logx": True, "logy": False, "plot": "mc"},
                   "E srank(A) (m=20)": {"x": [r["n"] for r in mc if r["m"] == 20],
                                         "y": [r["mean"] for r in mc if r["m"] == 20], "xlabel": "n",
                                         "ylabel": "E srank(A)", "logx": True, "logy": False, "plot": "mc"}})
    assert fit_ok, trunc
    assert ok, (rel, in_range, approach)


@pytest.mark.claim("kou2023/lem-F.3")
def test_orthogonal_srank_wrong_limits_rejected(ctx, record):
    """Companions of the 0.1% criterion of lem-F.3 on the same run: (a) the large-(m, n) value 2 in place of
    srank(A) at n = 10; (b) srank of the un-normalised activity pattern 1[⟨w_{j,r}(0), x_i⟩ > 0] (dropping
    the m/|S_i^(0)| column scaling of Lemma F.2(d)); (c) the same limit extrapolated with the unshifted
    linear 1/log t model must be reported as less accurate than the fit used (it is the seed-2 failure mode)."""
    run, _ = orth_pair(ctx)
    fits, pred, _ = _orth_relu_limits(run)
    Linf = np.array([[f.intercept for f in fe] for fe in fits])
    M = sr.orthogonal_limit_matrix(run.Z0, run.data.y)
    act = (M > 0).to(M.dtype)
    ev = torch.linalg.eigvalsh(act @ act.transpose(-1, -2))
    unscaled = (ev.clamp_min(0).sum(-1) / ev[..., -1]).cpu().numpy()
    rel2 = float((np.abs(Linf - 2) / 2).max())
    rel_unscaled = float((np.abs(Linf - unscaled) / unscaled).max())
    srk = run.srank.cpu().numpy()
    lin = np.array([[sr.limit_inverse_log(run.t, srk[:, e, j]).intercept for j in range(2)] for e in range(run.cfg.E)])
    err_fit, err_lin = float((np.abs(Linf - pred) / pred).max()), float((np.abs(lin - pred) / pred).max())
    rejected = rel2 > TOL_F3 and rel_unscaled > TOL_F3
    record("holds" if rejected else "violated", role="companion", observed=min(rel2, rel_unscaled), bound=TOL_F3,
           config=run.cfg.as_dict(), hypotheses=run.hyp,
           note=(f"wrong limits judged by the same {TOL_F3:.1%} rule: '2' off by {rel2:.2%}, unscaled pattern srank "
                 f"{unscaled.round(3).tolist()} off by {rel_unscaled:.2%} (both rejected: {rejected}); fit-model "
                 f"contrast: max rel. error of the unshifted linear 1/log t fit {err_lin:.3%} vs {err_fit:.3%} for "
                 f"the shifted quadratic"))
    assert rejected


REM44_TWO = 0.02  # |E srank(A) − 2| at m = n = 1000 (the lem-F.3 rule); measured ≤ 0.004 over 60 streams


@pytest.mark.claim("kou2023/rem-4.4")
def test_relu_above_leaky_on_orthogonal_data(ctx, record):
    """Remark 4.4: same orthonormal data and W(0): leaky's limit ∈ [1, 1.01], ReLU's within TOL_F3 = 0.1% of
    srank(A) (extrapolated as in lem-F.3), srank(A) ≈ 2 at large m, n (E srank(A) within 0.02 of 2 at m = n = 1000,
    Monte Carlo as in lem-F.3), and ReLU's limit strictly above leaky's. The ReLU activation pattern is a function of
    the initial one: at every grid point each (j, r, i) keeps its initial activation, except the opposite-class
    neurons active at initialization, which switch off and stay off (Lemma F.2 (a)–(c))."""
    run_r, run_l = orth_pair(ctx)
    t = run_r.t
    fits, pred, _ = _orth_relu_limits(run_r)
    Lr = np.array([[f.intercept for f in fe] for fe in fits])
    trunc_r = max(f.truncation / p for fe, pe in zip(fits, pred) for f, p in zip(fe, pe))
    Ll = np.array([[sr.limit_inverse_log(t, run_l.srank[:, e, j].cpu().numpy()).intercept for j in range(2)]
                   for e in range(run_l.cfg.E)])
    end_l = run_l.srank[-1].cpu().numpy()
    # srank ≥ 1 exactly; the 1/log t extrapolation of a gap that decays like 1/log² t undershoots 1
    # slightly (≈1e-4 here), so the leaky limit is judged in [1 − 1e-3, 1.01] and the end values in [1, 1.01]
    ok_l = Ll.min() >= 1 - 1e-3 and Ll.max() <= 1.01 and end_l.min() >= 1 - 1e-12 and end_l.max() <= 1.01
    ok_r = (np.abs(Lr - pred) / pred).max() <= TOL_F3 and trunc_r <= TOL_F3 / 2
    gap = float(Lr.min() - Ll.max())
    mc = sr.srank_A_montecarlo(1000, 1000, 10, generator=record.generator({"m": 1000, "n": 1000}))
    two_dev = abs(float(mc.mean()) - 2)
    ok = ok_l and ok_r and gap > 0.3 and two_dev <= REM44_TWO
    ins, why = ks.inside_all({"ReLU run": run_r.hyp, "leaky run": run_l.hyp})
    record("holds" if ok else "violated", observed=gap, bound=0.3, evidence="test", inside=ins, inside_reason=why,
           covers=["ReLU stable rank → srank(A) ≈ 2", "above leaky ReLU's limit 1"],
           tightness="min ReLU limit − max leaky limit (same data and W(0)); the remark says ≈ 2 vs 1",
           config={"relu": run_r.cfg.as_dict(), "leaky_gamma": run_l.cfg.gamma},
           hypotheses={"relu": run_r.hyp, "leaky": run_l.hyp},
           table=[{"member": e, "class": ("+1", "-1")[j], "ReLU L_inf": float(Lr[e, j]), "predicted srank(A)": float(pred[e, j]),
                   "leaky L_inf": float(Ll[e, j]), "leaky end": float(end_l[e, j])}
                  for e in range(run_r.cfg.E) for j in range(2)],
           note=(f"leaky L∞ ∈ [{Ll.min():.5f}, {Ll.max():.5f}] (end ≤ {end_l.max():.5f}); ReLU L∞ within "
                 f"{(np.abs(Lr - pred) / pred).max():.3%} of srank(A) (fit-model error ≤ {trunc_r:.3%}), srank(A) ∈ "
                 f"[{pred.min():.3f}, {pred.max():.3f}] at n = {run_r.cfg.n}, m = {run_r.cfg.m}; '≈ 2' is large-(m, n): "
                 f"E srank(A) = {float(mc.mean()):.4f} at m = n = 1000 (10 patterns; |· − 2| ≤ {REM44_TWO} required)"),
           series={**_series(t, run_r.srank[:, 0, 0].cpu().numpy(), "ReLU srank(W_{+1})", "stable rank", plot="r44"),
                   **_series(t, run_l.srank[:, 0, 0].cpu().numpy(), "leaky srank(W_{+1})", "stable rank", plot="r44")})
    # the ReLU activation pattern is determined by the initial one (on the grid of the same run)
    act0 = run_r.Z0 > 0  # (E, 2, m, n)
    own = (run_r.data.jy > 0).view(1, 2, 1, -1).expand_as(act0)
    switch = (~own) & act0  # opposite-class neurons active at initialization: Lemma F.2 (c) switches them off
    act = run_r.Z > 0  # (T, E, 2, m, n)
    kept_viol = int((act[:, ~switch] != act0[~switch]).sum())  # every other entry keeps its initial state
    off = ~act[:, switch]  # (T, K)
    back_on = int((off[:-1] & ~off[1:]).sum())  # switched off, then on again
    still_on = int((~off[-1]).sum())
    k_off = int(np.argmax(off.all(1).cpu().numpy())) if bool(off[-1].all()) else len(t) - 1
    ok_pat = kept_viol == 0 and back_on == 0 and still_on == 0
    ins_r, why_r = ks.inside(run_r.hyp)
    # on orthogonal data each coefficient moves only through its own sample's term: the pattern follows from the
    # initial one by construction (Lemma F.2), so this record is consistency
    record("holds" if ok_pat else "violated", observed=kept_viol + back_on + still_on, bound=0, evidence="consistency",
           inside=ins_r, inside_reason=why_r,
           covers=["activation pattern determined by the initialization"], config=run_r.cfg.as_dict(),
           hypotheses=run_r.hyp,
           tightness=(f"grid points × (j, r, i) whose ReLU activation is not the one fixed by the initial pattern: kept "
                      f"entries changed {kept_viol}, switched-off entries back on {back_on}, still on at T {still_on}"),
           note=(f"{int(switch.sum())} opposite-class (j, r, i) active at initialization, all off from "
                 f"t = {int(t[k_off])}; {int((~switch).sum())} others keep their initial state at all {len(t)} grid "
                 "points (Lemma F.2 (a)–(c) on the run of this remark)"))
    assert ok, (Ll, Lr, pred, trunc_r, two_dev)
    assert ok_pat, (kept_viol, back_on, still_on)
