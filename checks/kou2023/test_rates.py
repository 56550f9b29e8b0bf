"""Kou et al. (2023) loss rates.

Claims: kou2023/rem-4.2 (orthogonal data, leaky: L = O(1/t), sharp constant derived),
kou2023/lem-D.2 (leaky: L = O(t^{-α})), kou2023/thm-4.3 (b) (ReLU: L = O(t^{-α_R}), fitted exponent against
α_R of the G.1 formula; sharp p = 0 limit of t·L), kou2023/lem-G.1 (ReLU explicit bound; on the events of Lemmas A.1/A.2
informative only after t* ≈ 10³ steps and loose in its exponent; vacuous if the whole horizon lies before t*).
Runs are shared with test_stable_rank.py (checks/kou2023/_rates_runs.py), exact GD in float64.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from theory.papers.kou2023 import dynamics as kd
from theory.papers.kou2023 import setup as ks
from theory.papers.kou2023 import stable_rank as sr
from theory.stats import fit_power

from ._rates_runs import leaky_long, orth_pair, relu_c0r, relu_c0r_every_step

# tests that compute one cached run: xdist keeps each group on one worker (theory.harness.shared_runs)
SHARED_RUNS = {"kou2023/leaky_long": ["test_leaky_loss_exponent"],
               "kou2023/orth_pair": ["test_orthogonal_leaky_one_over_t"],
               "kou2023/relu_c0r": ["test_relu_loss_bound_g1", "test_relu_loss_polynomial_decay"]}


@pytest.mark.claim("kou2023/rem-4.2")
def test_orthogonal_leaky_one_over_t(ctx, record):
    """Remark 4.2: p = 0 ⇒ α = 1: fitted loss exponent 1 ± 0.02 and t·L within 1% of the derived
    constant m/((1+γ²)η)·Σ_i‖x_i‖⁻²."""
    _, run = orth_pair(ctx)
    t, L = run.t, run.loss.cpu().numpy()
    w = sr.window(t)
    s = np.array([-fit_power(t[w], L[w, e]).exponent for e in range(run.cfg.E)])
    ref = sr.leaky_tL_ref(run.cfg.m, run.eta.cpu().numpy(), run.cfg.gamma, run.data.norms2)
    tL = t[-1] * L[-1]
    rel = np.abs(tL / ref - 1)
    wrong = run.cfg.m / run.eta.cpu().numpy() * float((1 / run.data.norms2).sum())  # mutation: no 1/(1+γ²)
    ok = np.abs(s - 1).max() <= 0.02 and rel.max() <= 0.01
    ins, why = ks.inside(run.hyp)
    # the worst member of the rule: its t·L(T) off the derived limit per 1%, or its exponent off 1 per 0.02
    record("holds" if ok else "violated", observed=max(float(rel.max()) / 0.01, float(np.abs(s - 1).max()) / 0.02),
           bound=1.0, config=run.cfg.as_dict(), figure_kind="err/tol",
           evidence="test", inside=ins, inside_reason=why, covers=["p = 0: α = 1, L_S = O(1/t)"],  # "more orthogonal, faster" is a property of α's formula: untested
           hypotheses=run.hyp, tightness=f"exponent {s.round(4).tolist()}; t·L(T) {tL.round(4).tolist()} vs derived {ref.round(4).tolist()}",
           series={"L_S(W(t))": {"x": t[t >= 1].tolist(), "y": L[t >= 1, 0].tolist(), "xlabel": "step t",
                                 "ylabel": "loss", "logx": True, "logy": True}})
    wrong_rel = float(np.abs(tL / wrong - 1).min())
    record("holds" if wrong_rel > 0.01 else "violated", role="companion", observed=wrong_rel, bound=0.01,
           config=run.cfg.as_dict(),
           note=f"constant m/η·Σ‖x_i‖⁻² (without 1/(1+γ²)) is off by ≥ {wrong_rel:.1%} (> 1%: rejected)")
    assert ok
    assert wrong_rel > 0.01  # the constant without 1/(1+γ²) is rejected


@pytest.mark.claim("kou2023/lem-D.2")
def test_leaky_loss_exponent(ctx, record):
    """Lemma D.2: L ≤ Σ e^{C'_i}(1 + c(t − T₁))^{−α}/n with O(1) prefactors: L·(t − T_stab)^α bounded and
    non-increasing over the last two decades, fitted exponent ≥ α(ĉ₁) − 0.02."""
    run = leaky_long(ctx)
    cfg, data, t = run.cfg, run.data, run.t
    L = run.loss.cpu().numpy()
    c1 = float(kd.balance_sum_ratio(run.rho[1:], data.y).min()) / cfg.gamma ** 2
    alpha = sr.leaky_alpha(data.stats.epsilon, c1, cfg.gamma)
    jy = data.jy.view(1, 1, 2, 1, -1)
    bad = np.nonzero((np.sign(run.Z.cpu().numpy()) != jy.cpu().numpy()).reshape(len(t), -1).any(1))[0]
    Ts = int(t[bad[-1] + 1]) if bad.size else 0
    w = sr.window(t) & (t > Ts)
    s = np.array([-fit_power(t[w], L[w, e]).exponent for e in range(cfg.E)])

    def nonincreasing(a):
        v = L[w] * (t[w, None] - Ts) ** a
        return bool(np.all(np.diff(v, axis=0) <= 1e-12 * v[:-1])), float(v.max())

    ok_mono, vmax = nonincreasing(alpha)
    wrong_mono, _ = nonincreasing(alpha + 0.1)
    ok = s.min() >= alpha - 0.02
    ins, why = ks.inside(run.hyp)
    record("holds" if ok else "violated", observed=float(s.min()), bound=alpha, config=cfg.as_dict(),
           evidence="test", inside=ins, inside_reason=why, covers=["exponent α(c₁, γ, ε)"],
           hypotheses={**run.hyp, "c1_hat": c1, "T_stab_grid": Ts},
           tightness=f"exponent {s.min():.4f} vs α(ĉ₁={c1:.3f})={alpha:.5f} (ratio {s.min() / alpha:.3f})")
    # "L·(t − T₁)^α bounded" cannot fail on a finite run; that it does not increase over the last two decades is a
    # stricter reading, beside the verdict (an independent read: a bounded but wiggly product would fail it)
    record("holds" if ok_mono else "violated", observed=float(s.min()), bound=alpha, config=cfg.as_dict(),
           evidence="test", inside=ins, inside_reason=why, reading="strict",
           covers=["prefactors: L·(t − T₁)^α bounded"], rejects="the exponent α + 0.1 (the companion below)",
           tightness=f"L·(t−T)^α non-increasing over the window: {ok_mono}, max {vmax:.3f}")
    record("holds" if not wrong_mono else "violated", role="companion", observed=alpha + 0.1, bound=float(s.min()),
           config=cfg.as_dict(), note=f"mutated exponent α+0.1: L·(t−T)^(α+0.1) is not non-increasing (rejected: {not wrong_mono})")
    assert ok and ok_mono and not wrong_mono


def _alpha_R(run, c1: float) -> np.ndarray:
    """α_R of Theorem 4.3(b) with Lemma G.1's constants, per seed: (1 − (1+c')ε/c₁)/(c'²(1+ε/c₁)),
    c' = m/min_i|S_i^(0)| (measured), c₁ the measured ReLU balance constant (lem-5.5)."""
    S = run.S0.sum(1).cpu().numpy()
    cp = run.cfg.m / S.min(1)
    eps = run.data.stats.epsilon
    return (1 - (1 + cp) * eps / c1) / (cp ** 2 * (1 + eps / c1))


S_MAX = 1.05  # a fitted exponent above 1.05 means a bug or a too-early window (catalog thm-4.1(c))

# Tightness band of the ReLU loss rate (thm-4.3(b), and the looseness of lem-G.1, issue 15). The slack of the
# bound's exponent is s/α_R (α_R = α_G of Lemma G.1). Its observed side is pinned: for p = 0 Lemma F.2's scalar
# recursion gives t·L(T) → Σ_i m²/(nη|S_i^(0)|‖x_i‖²) (asserted within 1% below), i.e. exponent exactly 1, and the
# two-decade window leaves a bias O(log(K_i T)/(K_i T)) ≈ 1e-3; for p = 0.005 (ε = pn/R_min² = 0.05) the exponent
# moves by O(ε). Measured 1.013–1.034 at seeds 0, 3, 11, 17. So s ∈ [0.95, 1.05] and the slack lies in
# [0.95/α_R, 1.05/α_R] (width ×1.1) with α_R from an independent evaluation of the G.1 formula (alpha_g1_indep): a
# factor 2 in the exponent's constant 1/c'² (or in α_R) leaves the band.
EXP_BAND = (0.95, 1.05)


def alpha_g1_indep(m: int, S0_counts, eps: float, c1: float) -> np.ndarray:
    """α_G = α_R of Lemma G.1, written apart from _alpha_R / g1_rhs and in another algebraic form:
    (c₁ − (1 + c')ε) / (c'²(c₁ + ε)), c' = m / min_i |S_i^(0)| per member (S0_counts: (E, n) integer counts)."""
    out = []
    for row in np.asarray(S0_counts):
        cp = m / int(min(row))
        out.append((c1 - (1 + cp) * eps) / (cp * cp * (c1 + eps)))
    return np.asarray(out)


@pytest.mark.claim("kou2023/thm-4.3")
def test_relu_loss_polynomial_decay(ctx, record):
    """Theorem 4.3(b): L_S(W(t)) = O(t^{−α_R}). On C0-R (p = 0.005) and on orthonormal data (p = 0): the loss
    exponent fitted on the last two decades must be ≥ α_R − 0.02 (α_R from the G.1 formula with the measured
    c', ĉ₁) and ≤ 1.05; for p = 0 also t·L(T) within 1% of the derived limit Σ_i m²/(η|S_i^(0)|‖x_i‖²) (Lemma F.2;
    the relative correction is O(log(K_i T)/(K_i T)) ≈ 0.3% at T = 5·10⁴, K_i ≈ 0.05)."""
    rows, ok, hyps = [], True, {}
    tl_rel, tl_wrong, bands = [], [], []
    for name, run in (("C0-R p=0.005", relu_c0r(ctx)), ("C0-O p=0", orth_pair(ctx)[0])):
        hyps[name] = run.hyp
        t, L = run.t, run.loss.cpu().numpy()
        w = sr.window(t)
        s = np.array([-fit_power(t[w], L[w, e]).exponent for e in range(run.cfg.E)])
        c1 = float(kd.relu_balance_ratio(run.rho[1:], run.data.y, run.S0).min())
        aR = _alpha_R(run, c1)
        a_ind = alpha_g1_indep(run.cfg.m, run.S0.sum(1).cpu().numpy(), run.data.stats.epsilon, c1)
        pin_dev = float(np.max(np.abs(aR / a_ind - 1)))
        slack = s / a_ind  # per member: fitted exponent over the bound's exponent
        band = (EXP_BAND[0] / a_ind, EXP_BAND[1] / a_ind)
        in_band = bool(np.all((band[0] <= slack) & (slack <= band[1])))
        # wrong versions of the bound's constant (c₁ of Thm 4.3 = 1/c'² of G.1) ×2 and ×½: slack off by 2
        wrong_in = [bool(np.any((band[0] <= s / (f * a_ind)) & (s / (f * a_ind) <= band[1]))) for f in (2.0, 0.5)]
        bands.append((name, slack, in_band, pin_dev, wrong_in))
        row = {"run": name, "exponent min": float(s.min()), "exponent max": float(s.max()),
               "alpha_R (G.1 constants)": aR.round(4).tolist(), "c1_hat": c1, "slack s/alpha_R": slack.round(3).tolist(),
               "band": [band[0].round(3).tolist(), band[1].round(3).tolist()], **ks.hyp_row(run.hyp)}
        ok &= bool(np.all(s >= aR - 0.02) and s.max() <= S_MAX)
        if run.data.stats.p <= 1e-12:
            ref = sr.relu_tL_ref(run.cfg.m, run.eta.cpu().numpy(), run.S0.sum(1), run.data.norms2)
            tL = t[-1] * L[-1]
            tl_rel.append(float(np.abs(tL / ref - 1).max()))
            # wrong version: every neuron active (|S_i^(0)| = m), the ReLU analogue of the leaky constant
            wrong = run.cfg.m / run.eta.cpu().numpy() * float((1 / run.data.norms2).sum())
            tl_wrong.append(float(np.abs(tL / wrong - 1).min()))
            row.update({"t*L(T)": tL.round(4).tolist(), "derived limit": np.round(ref, 4).tolist(),
                        "rel. dev": tl_rel[-1]})
            ok &= tl_rel[-1] <= 0.01
        rows.append(row)
    s_min = min(r["exponent min"] for r in rows)
    a_max = max(max(r["alpha_R (G.1 constants)"]) for r in rows)
    sl_all = np.concatenate([b[1] for b in bands])
    all_in = all(b[2] for b in bands)
    pin = max(b[3] for b in bands)
    ins, why = ks.inside_all(hyps)
    record("holds" if ok else "violated", observed=s_min, bound=a_max, table=rows, covers=["(b) loss rate t^-α_R"],
           evidence="test", inside=ins, inside_reason=why, figure_kind="slack",  # s ≥ α_R: the bound's slack s/α_R
           config={"runs": [r["run"] for r in rows], "window": "last two decades"},
           hypotheses={"all_inside": all(r["inside"] for r in rows), "per run": "see table"},
           tightness=(f"fitted loss exponents {s_min:.4f}–{max(r['exponent max'] for r in rows):.4f} vs α_R ≤ {a_max:.4f}: "
                      f"slack s/α_R = {sl_all.min():.2f}–{sl_all.max():.2f}, pinned in [{EXP_BAND[0]}/α_R, {EXP_BAND[1]}/α_R] "
                      f"({all_in}; α_R equal to its independent evaluation within {pin:.0e}); p = 0: t·L(T) within "
                      f"{max(tl_rel):.2%} of the derived limit"))
    wrong_rejected = not any(w for b in bands for w in b[4])
    rejected = min(tl_wrong) > 0.01 and s_min < 1.2 - 0.02 and wrong_rejected
    record("holds" if rejected else "violated", role="companion", observed=min(tl_wrong), bound=0.01,
           note=(f"wrong versions: t·L limit with every neuron active (m/η·Σ‖x_i‖⁻²) off by ≥ {min(tl_wrong):.1%} "
                 f"(> 1%); exponent 1.2 (faster than measured) fails s ≥ 1.2 − 0.02 with s = {s_min:.3f}; α_R with its "
                 f"constant ×2 or ×½ puts the slack outside the band at every member (rejected: {wrong_rejected})"))
    assert rejected
    assert ok, rows
    assert pin <= 1e-12, pin  # α_R of the check = the independent evaluation of the G.1 formula
    assert all_in, [(b[0], b[1]) for b in bands]  # slack pinned: s/α_R ∈ [0.95, 1.05]/α_R


def g1_terms(run, c1: float, exponent: float | None = None):
    """The constants of Lemma G.1's right-hand side per seed: β (E,), K_i = |S_i|η‖x_i‖²e^{−β}/(2nm²) (E, n),
    α_G (E,) and c' = m/min|S_i| (E,)."""
    cfg, data = run.cfg, run.data
    beta = run.Z0.abs().flatten(1).max(1).values.cpu().numpy()  # (E,)
    S = run.S0.sum(1).cpu().numpy()  # (E, n)
    cp = cfg.m / S.min(1)  # c' per seed
    eps = data.stats.epsilon
    aG = (1 - (1 + cp) * eps / c1) / (cp ** 2 * (1 + eps / c1)) if exponent is None else np.full_like(cp, exponent)
    eta = run.eta.cpu().numpy()
    x2 = data.norms2.cpu().numpy()
    K = S * eta[:, None] * x2[None] * np.exp(-beta)[:, None] / (2 * cfg.n * cfg.m ** 2)  # (E, n)
    return beta, K, aG, cp


def g1_rhs(run, t, c1: float, exponent: float | None = None):
    """Lemma G.1 right-hand side (safer form of the catalog) per seed, (T, E)."""
    beta, K, aG, cp = g1_terms(run, c1, exponent)
    tt = np.asarray(t, float)[:, None, None]
    return np.exp(2 * beta)[None] * ((1 + K[None] * tt) ** (-aG[None, :, None])).mean(-1), aG, cp


class G1EveryStep:
    """Hook for ``ks.simulate(every_step=…)``: the largest L_S(W(t))/RHS(t) of Lemma G.1 over every step t ≥ 1, per
    member, with L_S = mean_i −log(1 + ℓ'_i) (ℓ'_i = −σ(−q_i), so −log(1 + ℓ'_i) = log(1 + e^{−q_i}) exactly) and the
    right side from :func:`g1_terms`."""

    def __init__(self, run, c1: float):
        beta, K, aG, _ = g1_terms(run, c1)
        dev, dt = run.eta.device, run.eta.dtype
        self.pre = torch.as_tensor(np.exp(2 * beta), dtype=dt, device=dev)
        self.K = torch.as_tensor(K, dtype=dt, device=dev)
        self.aG = torch.as_tensor(aG, dtype=dt, device=dev)[:, None]
        self.worst = torch.zeros(len(beta), dtype=dt, device=dev)
        self.steps = 0

    def __call__(self, t, rho, Z, dl):
        if t < 1:
            return
        L = (-torch.log1p(dl)).mean(-1)  # (E,)
        rhs = self.pre * ((1 + self.K * t) ** (-self.aG)).mean(-1)
        self.worst = torch.maximum(self.worst, L / rhs)
        self.steps += 1

    def finish(self):
        return self


@pytest.mark.claim("kou2023/lem-G.1")
def test_relu_loss_bound_g1(ctx, record):
    """Lemma G.1: L_S(W(t)) ≤ e^{2β}/n Σ_i (1 + |S_i|η‖x_i‖²e^{−β}t/(2nm²))^{−α_G}. Checked at every step t ≥ 1
    (a per-step hook on a rerun of the same trajectory) and at every grid point, with the constants that make the
    right side smallest (ĉ₁, c' = m/min|S_i|); "vacuous" if the right side stays ≥ max(log 2, L(0)) over the whole
    horizon, else "holds" with the looseness of α_G and the time t* (from the formula) before which the bound says
    nothing."""
    run = relu_c0r(ctx)
    t, L = run.t, run.loss.cpu().numpy()
    c1 = float(kd.relu_balance_ratio(run.rho[1:], run.data.y, run.S0).min())
    rhs, aG, cp = g1_rhs(run, t, c1)
    pos = t >= 1
    holds_grid = bool(np.all(L[pos] <= rhs[pos] * (1 + 1e-12)))
    # every step t ≥ 1, not only the grid: the same run again with a per-step hook (the same trajectory: its grid
    # loss must equal the cached run's bit for bit up to rounding of the reduction)
    ev = relu_c0r_every_step(ctx, G1EveryStep(run, c1))
    same_run = float(np.max(np.abs(ev.loss.cpu().numpy() / L - 1))) <= 1e-12
    every = ev.hook_out.worst.cpu().numpy()  # (E,) max over steps t ≥ 1 of L/RHS
    assert same_run and ev.hook_out.steps == int(t[-1]), (same_run, ev.hook_out.steps)
    holds = holds_grid and bool(np.all(every <= 1 + 1e-12))
    # vacuity threshold per seed: the loss at initialization, or log 2 if that is larger (a bound above both says
    # nothing beyond "the loss stays at its initial level"); conservative: ĉ₁ (the largest balance constant the
    # run allows) and c' = m/min|S_i| (the smallest admissible) make the right side as small as G.1 permits
    triv = np.maximum(math.log(2), L[0])  # (E,)
    below = [int(t[np.argmax(rhs[:, e] < triv[e])]) if (rhs[:, e] < triv[e]).any() else None for e in range(run.cfg.E)]
    vacuous = all(b is None for b in below)
    # t*: first time the explicit right side drops below the threshold, from the formula (bisection in log t)
    t_star = []
    for e in range(run.cfg.E):
        lo_, hi_ = 0.0, 60.0  # log t
        for _ in range(200):
            mid = 0.5 * (lo_ + hi_)
            lo_, hi_ = (mid, hi_) if g1_rhs(run, [math.exp(mid)], c1)[0][0, e] >= triv[e] else (lo_, mid)
        t_star.append(math.exp(hi_))
    # mutation: exponent 2, twice the observed loss exponent (≈ 1). An exponent of 1.2 was too close to be rejected
    # on a finite horizon at every draw (seed 9: max L/rhs = 0.986, the e^{2β} prefactor absorbs a 0.2 difference)
    wrong, _, _ = g1_rhs(run, t, c1, exponent=2.0)
    wrong_rejected = bool(np.any(L[pos] > wrong[pos]))
    record("holds" if wrong_rejected else "violated", role="companion", observed=float((L[pos] / wrong[pos]).max()),
           bound=1.0, config=run.cfg.as_dict(),
           note=f"G.1 with exponent 2: L exceeds the right side at {int((L[pos] > wrong[pos]).sum())} grid values (rejected)")
    w = sr.window(t)
    s_e = np.array([-fit_power(t[w], L[w, e]).exponent for e in range(run.cfg.E)])
    s = float(s_e.min())
    # size of the "loose" finding (EXP_BAND above): α_G equals its independent evaluation, and the slack s/α_G per
    # member lies in [0.95, 1.05]/α_G, so a G.1 exponent off by a factor 2 would not pass as the same finding
    a_ind = alpha_g1_indep(run.cfg.m, run.S0.sum(1).cpu().numpy(), run.data.stats.epsilon, c1)
    pin = float(np.max(np.abs(aG / a_ind - 1)))
    loose_in_band = bool(np.all((EXP_BAND[0] / a_ind <= s_e / a_ind) & (s_e / a_ind <= EXP_BAND[1] / a_ind)))
    verdict = ("vacuous" if vacuous else "holds") if holds else "violated"
    # size: t* from the formula is consistent with the grid (beyond T exactly when vacuous on the whole horizon)
    assert all((ts > t[-1]) == (b is None) for ts, b in zip(t_star, below)), (t_star, below)
    slack = s / float(aG.max())  # the exponent's looseness: observed loss exponent over the largest α_G
    if vacuous:
        ftype, finding = "vacuous", ("Lemma G.1 holds but is vacuous on this horizon: its right-hand side stays above "
                                     f"max(log 2, L(0)) up to t={int(t[-1])} (and until t* ≈ {min(t_star):.2g} by the "
                                     f"formula) because α_G≈{aG.mean():.3f} while the loss decays like t^-{s:.2f}")
    else:  # informative from t* on: a rate bound is always vacuous for small t; what remains is its looseness
        ftype, finding = "loose", (f"Lemma G.1 holds; its exponent α_G ∈ [{aG.min():.3f}, {aG.max():.3f}] is ≥ {slack:.1f}× "
                                   f"below the observed loss exponent {s:.2f}, and its right side stays above "
                                   f"max(log 2, L(0)) until t* ≈ {min(t_star):.2g}–{max(t_star):.2g} steps")
    ins, why = ks.inside(run.hyp)
    worst_ratio = float(max(every.max(), (L[pos] / rhs[pos]).max()))  # max over every step t ≥ 1 of L/RHS
    record(verdict, observed=float(L[-1].max()), bound=float(rhs[-1].min()), ratio=worst_ratio, config=run.cfg.as_dict(),
           evidence="test", inside=ins, inside_reason=why,
           finding_type=ftype if holds else "", covers=["every t ≥ 1", "rate O(t^-α_G)"],
           hypotheses={**run.hyp, "c1_hat": c1, "c_prime": cp.tolist(), "alpha_G": aG.tolist(), "t_star": t_star},
           note=(f"checked at every step t ≥ 1 (a per-step hook on the same run; max L/RHS per member "
                 f"{every.round(4).tolist()}) and on the grid"),
           tightness=(f"RHS/L from {float((rhs[pos] / L[pos]).min()):.2f} to {float((rhs[pos] / L[pos]).max()):.3g}; "
                      f"α_G={aG.round(4).tolist()} vs observed loss exponent {s:.3f} (×{slack:.1f}; per member "
                      f"{(s_e / a_ind).round(2).tolist()}, pinned in [{EXP_BAND[0]}, {EXP_BAND[1]}]/α_G: {loose_in_band}); RHS < max(log 2, "
                      f"L(0)) first at t={below} on the grid, t* = {[f'{x:.3g}' for x in t_star]} from the formula"),
           finding=finding if holds else "",
           series={"L": {"x": t[pos].tolist(), "y": L[pos, 0].tolist(), "xlabel": "step t", "ylabel": "loss",
                         "logx": True, "logy": True, "plot": "G1"},
                   "G.1 RHS": {"x": t[pos].tolist(), "y": rhs[pos, 0].tolist(), "xlabel": "step t", "ylabel": "loss",
                               "logx": True, "logy": True, "plot": "G1"}})
    assert holds and wrong_rejected
    assert pin <= 1e-12, pin  # α_G of the check = the independent evaluation of the G.1 formula
    assert loose_in_band, s_e / a_ind  # the looseness factor is 1/α_G (observed exponent 1), not 2× more or less
