"""Kou et al. (2023) — ReLU automatic balance, persistent activation and logarithmic coefficient bounds.

Claims: kou2023/lem-5.5 (ReLU balance, = E.1(1)), kou2023/lem-5.8 (S_i^(0) ⊆ S_i^(t)),
kou2023/lem-E.1 (balance, log-rate bounds (2)–(3) with the proof's constants, persistent activation).
Runs: C0-R (D-G(p), p = 1/(20n)) and C0-O (orthonormal data), E seeds on the ensemble axis,
coefficient space (exact, Lemma 5.2), activation tracked at every step; plus an (n, m) sweep.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from theory.papers.kou2023 import dynamics as kd
from theory.papers.kou2023 import setup as ks
from theory.papers.kou2023 import stable_rank as sr

EXACT = 1e-10  # exact identities among float64 sums of ≤ 1e6 equal terms (see test_leaky_patterns)
C_MIN, TREND_MIN = 0.05, 0.9  # catalog pass rule for lem-5.5


def log_shift(run) -> np.ndarray:
    """Per member, the natural log-time offset s = mean_i log K_i, K_i = η|S_i^(0)|‖x_i‖²/(nm²) (Lemma F.2's
    scalar recursion; exact for orthogonal data, the leading behaviour for near-orthogonal D-G(p)): the own-class
    coefficients grow like log(K_i t) with log K_i ≈ −3 here, so the balance ratio is a smooth function of
    x = 1/(log t + s), not of 1/log t."""
    return sr.orthogonal_log_shift(run.eta, run.S0.sum(-2), run.data.norms2, run.data.y, run.cfg.m).mean(1)


def limit_fit(t, r, shift: float):
    """Extrapolated limit L∞ of r(t) = L∞ + b₁x + b₂x², x = 1/(log t + shift), OLS over the last two
    decades (:func:`theory.papers.kou2023.stable_rank.limit_log_poly`): (L∞, SE, truncation error).

    The catalog's protocol (x = 1/log t, linear) is misspecified here: with log K ≈ −3 it extrapolates from
    x ∈ [0.12, 0.27] along a curve whose natural variable is shifted, and was biased low by ≈0.2 (seed 4,
    n = 10, m = 40: −0.01 at T = 4000, while the ratio was 0.33 at T = 2·10⁵ and the shifted fit gives 0.22 at
    both horizons)."""
    f = sr.limit_log_poly(np.asarray(t, float), np.asarray(r, float), shift=float(shift), degree=2)
    return f.intercept, f.intercept_se, f.truncation


def balance_ok(t, r, shift: float):
    """lem-5.5 pass rule: the ratio stays ≥ C_MIN over the run and its extrapolated limit too, with the
    fit's statistical (3 SE) and model (truncation) errors both counted against the limit."""
    L, se, trunc = limit_fit(t, r, shift)
    return float(np.min(r)) >= C_MIN and L - 3 * se - trunc >= C_MIN


def e1_log_constants_model(t, eta, n: int, m: int, S_counts, norms2, R_min: float, R_max: float):
    """Independent evaluation of the implied constants ĉ₂, ĉ₃ of Lemma E.1 (2)–(3), from the initial active counts
    only (no trained coefficients): Lemma F.2's scalar margin recursion q ← q + K_i/(1 + e^q), q(0) = 0,
    K_i = η|S_i^(0)|‖x_i‖²/(nm²), with ρ̄_{y_i,r,i}(t) = (m/|S_i^(0)|)·q_i(t) for r ∈ S_i^(0) (exact for orthogonal
    data once the opposite-class neurons switched off; the leading behaviour for near-orthogonal data). Returns
    (ĉ₂, ĉ₃) model values: min over grid t ≥ 1 and i of ρ̄/log(1 + ηR_min²t/(5nm)), max of ρ̄/log(1 + 6ηR_max²t/(5nm)),
    per member (arrays of shape (E,)); eta (E,), S_counts (E, n), norms2 (n,)."""
    t = np.asarray(t, float)
    eta = np.asarray(eta, float)[:, None]
    S = np.asarray(S_counts, float)
    K = eta * S * np.asarray(norms2, float)[None] / (n * m * m)
    q = np.zeros_like(K)
    want = {int(x) for x in t if x >= 1}
    at = {}
    for step in range(1, int(t.max()) + 1):
        q = q + K / (1.0 + np.exp(q))
        if step in want:
            at[step] = q.copy()
    tt = np.array(sorted(at))
    rho = (m / S)[None] * np.stack([at[k] for k in tt])  # (T, E, n)
    lo = np.log1p(eta[None, :, 0, None] * R_min ** 2 * tt[:, None, None] / (5 * n * m))
    hi = np.log1p(6 * eta[None, :, 0, None] * R_max ** 2 * tt[:, None, None] / (5 * n * m))
    return (rho / lo).min(axis=(0, 2)), (rho / hi).max(axis=(0, 2))


def e1_proof_constants_indep(m: int, S_counts, eps: float, c1: float) -> tuple[float, float]:
    """c₂ = 1/(c'(1+ε/c₁)) and c₃ = c'/(1−2c'ε/c₁) of Lemma E.1's proof, written apart from the check (another
    algebraic form, c' recomputed from the integer counts |S_i^(0)| of every member): c₂ = c₁/(c'(c₁+ε)),
    c₃ = c₁c'/(c₁ − 2c'ε) (inf when the denominator is ≤ 0)."""
    cp = m / int(np.asarray(S_counts).min())
    den = c1 - 2 * cp * eps
    return c1 / (cp * (c1 + eps)), (c1 * cp / den if den > 0 else math.inf)


# Tightness bands of Lemma E.1 (2)–(3) (issue 15). The slacks ĉ₂/c₂ (≈ 3.9–4.6) and c₃/ĉ₃ (≈ 1.15–2.3) are pinned
# through ĉ₂, ĉ₃ against e1_log_constants_model (scalar recursion from the initial counts, no trained coefficient):
# - p = 0 (C0-O): the model is exact once the opposite-class neurons switched off (Lemma F.2), up to the initial
#   margin |q_i(0)| ≤ β ≈ 0.03 and that early phase; measured/model 0.9992–0.9996 → bands [0.97, 1.02] for both;
# - p > 0 (C0-R, ε = 0.05): the cross terms Σ_{i'}ρ⟨x_{i'}, x_i⟩/‖x_{i'}‖² and neurons outside S_i^(0) that turn
#   active on x_i (lem-5.8's reverse inclusion fails for p > 0) add to the margin, so own-class coefficients grow
#   slower than the model and ĉ₂ (a minimum over samples) falls below it: 0.67–0.73; ĉ₃ (a
#   maximum, set by the member and sample with the smallest |S_i^(0)|) stays near the model, 0.90–1.001 (seeds 0, 3, 11, 17).
#   The upper edges are the model (cross terms only slow the growth) plus 2 %; the lower edges are not derived:
#   they are set as low as a factor-2 test allows, so a held-out draw has room: ĉ₂/model in [0.55, 1.02] (width
#   ×1.85), ĉ₃/model in [0.6, 1.02] (×1.7; measured 0.90–1.00, so 1.5× room below the lowest seed).
# Every band is narrower than a factor 2, so c₂ or c₃ doubled or halved moves the slack out of it (companion).
E1_BAND_C2_P0 = E1_BAND_C3_P0 = (0.97, 1.02)
E1_BAND_C2_P = (0.55, 1.02)
E1_BAND_C3_P = (0.6, 1.02)


class _Activation:
    """every_step hook: counts (r ∉ S_i^(0)) neurons of class y_i active on x_i (the reverse
    inclusion S_i^(t) ⊆ S_i^(0), which the paper does *not* claim) and runs the explicit Lemma C.1
    spread bound with γ = 0 (:class:`theory.papers.kou2023.dynamics.StepBounds`)."""

    def __init__(self, S0, y, bounds):
        self.S0, self.y, self.bounds = S0, y, bounds
        self.newly_active = torch.zeros(S0.shape[0], dtype=torch.long, device=S0.device)

    def __call__(self, t, rho, Z, dl):
        own = torch.where(self.y > 0, Z[:, 0], Z[:, 1])
        self.newly_active += (~self.S0 & (own > 0)).flatten(1).sum(1).cpu()
        self.bounds(t, rho, Z, dl)

    def finish(self):
        return self


def _run(ctx, base, tag):
    # full profile: paper-scale widths (catalog P2); per-step tracking → 2e5 steps (catalog R1)
    base = ctx.pick(quick=base, full=base.replace(n=40, d=1024, m=400, sigma0=1e-3))  # m ≥ 50 log(2n/δ) = 334
    cfg = base.replace(E=ctx.pick(quick=4, full=8), steps=ctx.pick(quick=20_000, full=200_000),
                       grid_points=ctx.pick(quick=50, full=80))
    data = ks.make_data(cfg, ctx.generator("kou2023/lem-5.5", cfg.key("data", tag)), device=ctx.device)
    # initialization on the events of Lemmas A.1 and A.2 (Appendix E is stated on them)
    net = ks.make_net(cfg, data, ctx.generator("kou2023/lem-5.5", cfg.key("init", tag, cfg.E)), on_events=True)
    Z0 = ks.preact0(net, data)
    eta = torch.full((cfg.E,), ks.default_eta(cfg, data), dtype=data.X.dtype, device=data.X.device)
    S0 = ks.active_at_init(Z0, data)
    bounds = kd.StepBounds(data.norms2, eta, cfg.n, cfg.m, 0.0, data.stats.R_min, data.stats.R_max, y=data.y, S0=S0)
    hook = _Activation(S0, data.y, bounds)
    run = ks.simulate(cfg, data, net, eta=eta, track=True, every_step=hook, observe=("rho", "loss"))
    return cfg, run


@pytest.mark.claim("kou2023/lem-5.5")
@pytest.mark.claim("kou2023/lem-5.8")
@pytest.mark.claim("kou2023/lem-E.1")
@pytest.mark.claim("kou2023/lem-C.1")
@pytest.mark.parametrize("which", ["C0-R", "C0-O"])
def test_relu_balance_activation_and_log_bounds(which, ctx, record):
    cfg, run = _run(ctx, ks.C0_R if which == "C0-R" else ks.C0_O, which)
    t, rho, y, S0 = run.t, run.rho, run.data.y, run.S0
    st_ = run.data.stats
    n, m = cfg.n, cfg.m
    cfgd = cfg.as_dict() | {"which": which}
    fails = []
    # ---- Lemma 5.5: ρ̄_{y_i,r,i} ≥ c|ρ_{j,r',i'}| for r ∈ S_i^(0) ------------------------------------
    rr = kd.relu_balance_ratio(rho[1:], y, S0).cpu().numpy()  # (T-1, E) on the grid (plots, trend, limit fit)
    every = run.hook_out.bounds.bal_relu
    mn = float(every.value.min())  # minimum over every step t ≥ 1
    mn_at = int(every.step[int(torch.argmin(every.value))])
    j10 = int(np.argmin(np.abs(t[1:] - t[-1] / 10)))
    trend = float((rr[-1] / rr[j10]).min())
    shift = log_shift(run)
    lims = [limit_fit(t[1:], rr[:, e], shift[e]) for e in range(cfg.E)]
    Lmin = min(L for L, _, _ in lims)
    own = kd.own_coeffs(rho, y)  # (T, E, m, n)
    big = torch.finfo(own.dtype).max
    in_max = torch.where(S0, own, -big).max(-2).values
    in_min = torch.where(S0, own, big).min(-2).values
    scale = own.abs().max()
    side_i = float(((in_max - in_min) / scale).max())  # (i) ρ̄ equal over r ∈ S_i^(0)
    out_max = torch.where(~S0, own, -big).max(-2).values
    side_ii = float(((out_max - in_min) / scale).max())  # (ii) ρ̄ outside ≤ ρ̄ inside (must be ≤ 0)
    ok5 = (mn >= C_MIN and all(balance_ok(t[1:], rr[:, e], shift[e]) for e in range(cfg.E)) and side_i <= EXACT
           and side_ii <= EXACT)
    ins, why = ks.inside(run.hyp)
    record(claim="kou2023/lem-5.5", verdict="holds" if ok5 else "violated", observed=mn, bound=C_MIN,
           evidence="test", inside=ins, inside_reason=why,
           covers=["every step t ≥ 1"],
           tightness=f"implied ĉ = min over every step of r^R_bal(t) (at step {mn_at}; the lemma asserts some constant c > 0)",
           config=cfgd, hypotheses=run.hyp,
           series={f"seed {e}": {"x": t[1:].tolist(), "y": rr[:, e].tolist(), "xlabel": "step t",
                                 "ylabel": "r_bal^R(t)", "logx": True, "plot": "ReLU balance"} for e in range(cfg.E)},
           table=[{"seed": e, "min r": float(rr[:, e].min()), "L_inf": L, "SE": se, "truncation": tr,
                   "log-time shift": float(shift[e])} for e, (L, se, tr) in enumerate(lims)],
           note=f"tail trend r(T)/r(T/10) {trend:.4f}; extrapolated limit (min over seeds) {Lmin:.4f}; side facts: (i) spread of ρ̄ within S_i^(0) {side_i:.2e} (≤1e-10), "
                f"(ii) max(ρ̄ outside − ρ̄ inside)/scale {side_ii:.3g} (≤ 0); min|S_i^(0)|/m = {run.hyp['S0_min_frac']}")
    if not ok5:
        fails.append(f"lem-5.5: min {mn}, trend {trend}, (i) {side_i}, (ii) {side_ii}")
    # companion: a trajectory whose S_i^(0) coefficients starve like 1/log t is rejected
    bad = rho.clone()
    sc = torch.tensor(1.0 / np.log(np.e + t), dtype=bad.dtype, device=bad.device).view(-1, 1, 1)
    assert bool(y[0] > 0)  # sample 0 has y = +1
    bad[:, :, 0, :, 0] *= sc
    rbad = kd.relu_balance_ratio(bad[1:], y, S0).cpu().numpy()
    starved = not balance_ok(t[1:], rbad[:, 0], shift[0])
    Lb, seb, trb = limit_fit(t[1:], rbad[:, 0], shift[0])
    record(claim="kou2023/lem-5.5", verdict="holds" if starved else "violated", role="companion",
           observed=Lb - 3 * seb - trb, bound=C_MIN, config=cfgd,
           note=f"seed-0 trajectory with sample 0's coefficients ×1/log(e+t): extrapolated limit "
                f"{Lb:.3g} − 3 SE − truncation {trb:.2g} < {C_MIN} (rejected: {starved})")
    assert starved
    # ---- Lemma 5.8: S_i^(0) ⊆ S_i^(t) at every step ---------------------------------------------------
    lost = int(run.s0_lost.sum())
    newly = int(run.hook_out.newly_active.sum())
    # at p = 0 (C0-O) ⟨w_{y_i,r}, x_i⟩ = Z⁰ + ρ̄ with ρ̄ non-decreasing: the inclusion holds by construction
    record(claim="kou2023/lem-5.8", verdict="holds" if lost == 0 else "violated", observed=lost, bound=0,
           evidence="consistency" if run.data.stats.p == 0 else "test", inside=ins, inside_reason=why,
           covers=["every step t ≥ 0", "every i and r ∈ S_i^(0)"],
           tightness="count of (step, i, r ∈ S_i^(0)) with ⟨w_{y_i,r}, x_i⟩ ≤ 0, every step",
           config=cfgd, hypotheses=run.hyp,
           note=f"informational: (step, i, r ∉ S_i^(0)) active on x_i: {newly} — the reverse inclusion "
                f"S_i^(t) ⊆ S_i^(0) is not claimed and {'fails' if newly else 'holds'} here; last step at which "
                f"any σ'-pattern entry changed: {run.last_change.tolist()} of {cfg.steps} (implied C = "
                f"{[round(float(x), 3) for x in (run.last_change + 1).cpu().numpy() * run.eta.cpu().numpy() * st_.R_min ** 2 / (n * m)]}"
                f" in T = C·nm/(ηR_min²); for p > 0 the ReLU pattern need not freeze, cf. thm-4.3 pitfalls)")
    if run.hyp["p"] > 0:
        record(claim="kou2023/lem-5.8", verdict="holds" if newly > 0 else "violated", role="companion",
               observed=newly, bound=0, config=cfgd,
               note=f"the reverse inclusion S_i^(t) ⊆ S_i^(0) (not claimed) by the same every-step count: {newly} "
                    "exceptions (rejected)")
        assert newly > 0  # companion: the reverse inclusion S_i^(t) ⊆ S_i^(0) is detected as false for p > 0
    if lost:
        fails.append(f"lem-5.8: {lost} lost activations")
    # ---- Lemma C.1 explicit form with γ = 0 (every step): spread ≤ S_i(t) ---------------------------
    c1r = float(run.hook_out.bounds.c1_ratio.max())
    record(claim="kou2023/lem-C.1", verdict="holds" if c1r <= 1 + EXACT else "violated", observed=c1r, bound=1.0,
           evidence="consistency", inside=True,
           inside_reason="Lemma C.1 has no hypotheses beyond the GD dynamics; the explicit form holds for any GD trajectory",
           tightness="ReLU (γ = 0): max over every step of spread/S_i(t); 1 = tight", config=cfgd, hypotheses=run.hyp)
    if c1r > 1 + EXACT:
        fails.append(f"lem-C.1 (ReLU) ratio {c1r}")
    # ---- Lemma E.1 (2)–(3): c₂ log(1+ηR_min²t/(5nm)) ≤ ρ̄ ≤ c₃ log(1+6ηR_max²t/(5nm)), r ∈ S_i^(0) -------
    eta = run.eta.view(1, -1, 1, 1).cpu()
    tt = torch.as_tensor(t[1:], dtype=rho.dtype, device=rho.device).view(-1, 1, 1, 1)
    Lo = torch.log1p(eta * st_.R_min ** 2 * tt / (5 * n * m))
    Hi = torch.log1p(6 * eta * st_.R_max ** 2 * tt / (5 * n * m))
    o = own[1:].cpu()
    c2_hat = float(torch.where(S0.cpu(), o / Lo, torch.full_like(o, big)).min())
    c3_hat = float(torch.where(S0.cpu(), o / Hi, torch.full_like(o, -big)).max())
    c_prime = run.hyp["c_prime"]
    eps = run.hyp["epsilon"]
    c1 = mn  # balance constant measured above
    c2 = 1 / (c_prime * (1 + eps / c1))
    c3 = c_prime / (1 - 2 * c_prime * eps / c1) if 2 * c_prime * eps / c1 < 1 else math.inf
    c2_mod, c3_mod = e1_log_constants_model(t, run.eta.cpu().numpy(), n, m, S0.sum(1).cpu().numpy(),
                                            run.data.norms2.cpu().numpy(), st_.R_min, st_.R_max)
    okE = c2_hat >= c2 and c3_hat <= c3 and lost == 0 and ok5
    # tightness bands (issue 15): slack ĉ₂/c₂ and c₃/ĉ₃, with ĉ pinned against the scalar-recursion model
    c2_i, c3_i = e1_proof_constants_indep(m, S0.sum(1).cpu().numpy(), eps, c1)
    pin = max(abs(c2 / c2_i - 1), abs(c3 / c3_i - 1) if math.isfinite(c3) else 0.0)
    b2 = E1_BAND_C2_P0 if eps == 0 else E1_BAND_C2_P
    r2, r3 = c2_hat / float(c2_mod.min()), c3_hat / float(c3_mod.max())
    band2 = (b2[0] * float(c2_mod.min()) / c2_i, b2[1] * float(c2_mod.min()) / c2_i)  # on the slack ĉ₂/c₂
    b3 = E1_BAND_C3_P0 if eps == 0 else E1_BAND_C3_P
    band3 = (c3_i / (b3[1] * float(c3_mod.max())), c3_i / (b3[0] * float(c3_mod.max())))  # on the slack c₃/ĉ₃
    slack2, slack3 = c2_hat / c2, c3 / c3_hat
    in2, in3 = band2[0] <= slack2 <= band2[1], band3[0] <= slack3 <= band3[1]
    record(claim="kou2023/lem-E.1", verdict="holds" if okE else "violated", observed=[c2_hat, c3_hat], bound=[c2, c3],
           evidence="test", inside=ins, inside_reason=why,
           covers=["(1) balance", "(2) lower log bound", "(3) upper log bound", "(4) S_i(0) ⊆ S_i(t)"],
           ratio=c3_hat / c3, config=cfgd, hypotheses=run.hyp,
           tightness=(f"ĉ₂ vs proof c₂ = 1/(c'(1+ε/c₁)) (lower): slack ĉ₂/c₂ = {slack2:.3f} in [{band2[0]:.3f}, "
                      f"{band2[1]:.3f}] ({in2}); ĉ₃ vs c₃ = c'/(1−2c'ε/c₁) (upper): slack c₃/ĉ₃ = {slack3:.3f} in "
                      f"[{band3[0]:.3f}, {band3[1]:.3f}] ({in3}); bands from the scalar-recursion model of ĉ₂, ĉ₃ "
                      f"(measured/model {r2:.4f}, {r3:.4f}); ratio = ĉ₃/c₃"),
           table=[{"c2_hat": c2_hat, "c2 (proof)": c2, "c3_hat": c3_hat, "c3 (proof)": c3, "c_prime": c_prime,
                   "c1_hat": c1, "epsilon": eps, "c2 model": float(c2_mod.min()), "c3 model": float(c3_mod.max()),
                   "slack c2_hat/c2": slack2, "band (2)": list(band2), "slack c3/c3_hat": slack3, "band (3)": list(band3)}],
           note="(1) = lem-5.5 and (4) = lem-5.8 above; with min|S_i^(0)| < 0.4m the constants use the measured c'")
    if not okE:
        fails.append(f"lem-E.1: c2_hat {c2_hat} vs {c2}, c3_hat {c3_hat} vs {c3}")
    # companion: the upper bound with c₃ replaced by the naive limit 1 (no m/|S_i^(0)| factor) fails
    record(claim="kou2023/lem-E.1", verdict="holds" if c3_hat > 1.0 else "violated", role="companion",
           observed=c3_hat, bound=1.0, config=cfgd,
           note=f"(3) with c₃ = 1 (no m/|S_i^(0)| factor): ĉ₃ = {c3_hat:.3f} > 1 (rejected)")
    assert c3_hat > 1.0
    # companion of the bands: c₂ and c₃ with their constant doubled or halved (written apart, from the counts)
    wrong = {f"c2×{f:g}": not (band2[0] <= c2_hat / (f * c2_i) <= band2[1]) for f in (2.0, 0.5)}
    wrong |= {f"c3×{f:g}": not (band3[0] <= (f * c3_i) / c3_hat <= band3[1]) for f in (2.0, 0.5)}
    record(claim="kou2023/lem-E.1", verdict="holds" if all(wrong.values()) else "violated", role="companion",
           observed=[c2_hat / (2 * c2_i), c2_hat / (0.5 * c2_i), 2 * c3_i / c3_hat, 0.5 * c3_i / c3_hat],
           bound=[list(band2), list(band3)], config=cfgd,
           note=f"bounds (2)–(3) with c₂ or c₃ ×2 or ×½: slack outside its band (rejected: {wrong})")
    assert all(wrong.values()), wrong
    assert pin <= 1e-12, pin  # c₂, c₃ of the check = their independent evaluation
    assert 2 * c_prime * eps / c1 < 1  # c₃ finite: the band on (3) is defined
    assert in2 and in3, (slack2, band2, slack3, band3)
    assert not fails, fails


@pytest.mark.claim("kou2023/lem-5.5")
def test_relu_balance_trend_over_n_m(ctx, record):
    """Implied ReLU balance constant across n and m (the lemma's c is independent of them)."""
    # every width meets Theorem 4.3's width condition 50 log(2n/δ) (265, 300, 334, 403 at n = 10, 20, 40, 160; δ = 0.1),
    # and the initializations are drawn on the events of Lemmas A.1 and A.2 (Appendix E is stated on them)
    grid = ctx.pick(quick=[(10, 300), (20, 320), (40, 400), (10, 900)],
                    full=[(10, 300), (40, 400), (160, 450), (40, 1000), (160, 1000)])
    steps = ctx.pick(quick=4_000, full=100_000)
    rows = []
    for n, m in grid:
        cfg = ks.C0_R.replace(n=n, m=m, d=max(100, 2 * n), E=3, steps=steps, grid_points=30)
        gen = ctx.generator("kou2023/lem-5.5", cfg.key("sweep", m))
        data = ks.make_data(cfg, gen, device=ctx.device)
        net = ks.make_net(cfg, data, gen, on_events=True, max_draws=5000)
        run = ks.simulate(cfg, data, net, observe=("rho",))
        rr = kd.relu_balance_ratio(run.rho[1:], data.y, run.S0)
        shift = log_shift(run)
        rows.append({"label": f"n={n} m={m}", "n": n, "m": m, "c_hat": float(rr.min()),
                     "L_inf (min over seeds)": min(limit_fit(run.t[1:], rr[:, e].cpu().numpy(), shift[e])[0] for e in range(3)),
                     "ok": all(balance_ok(run.t[1:], rr[:, e].cpu().numpy(), shift[e]) for e in range(3)),
                     **ks.hyp_row(run.hyp)})
    # the as-stated record judges the rows inside the hypothesis report; rows outside (none expected) beside it
    ins_rows = [r for r in rows if r["inside"]]
    out_rows = [r for r in rows if not r["inside"]]
    cs = [r["c_hat"] for r in ins_rows]
    ok = bool(ins_rows) and all(r["ok"] for r in ins_rows)
    ins, why = ks.inside_rows(rows, "(n, m) runs")
    if out_rows and ins_rows:
        ins, why = True, f"{len(ins_rows)} of {len(rows)} (n, m) runs inside (judged here); the others in a record beside"
    record("holds" if ok else "violated", observed=min(cs) if cs else float("nan"), bound=C_MIN, table=ins_rows,
           covers=["constant independent of n, m"], evidence="test", inside=ins and bool(ins_rows), inside_reason=why,
           hypotheses={"rows inside": len(ins_rows), "rows": len(rows), "per run": "see table"},
           tightness=f"min over (n, m) of ĉ (grid minima); max/min = {max(cs) / min(cs):.3f}" if cs else "no inside row",
           config={"grid": grid, "steps": steps, "initialization": "on the events of Lemmas A.1 and A.2"})
    if out_rows:
        record("holds" if all(r["ok"] for r in out_rows) else "violated", observed=min(r["c_hat"] for r in out_rows),
               bound=C_MIN, table=out_rows, covers=["constant independent of n, m"], evidence="test", inside=False,
               inside_reason=ks.inside_rows(out_rows, "(n, m) runs")[1], config={"grid": grid, "steps": steps})
    assert ins_rows and not out_rows, [r["outside_reasons"] for r in out_rows]  # drawn on the events: all inside
    assert ok, rows


@pytest.mark.claim("kou2023/lem-5.5")
def test_limit_extrapolation_recovers_a_known_limit(record):
    """The production extrapolation behind the balance limits (:func:`limit_fit`, ``stable_rank.limit_log_poly``) on
    curves of exactly its model, y = L∞ + b₁x + b₂x² with x = 1/(log t + s), on a geometric grid like the runs':
    it must return L∞ to 1e-9 (relative; OLS on ≤ 60 points of O(1) values) with a truncation estimate ≤ 1e-9; and a
    cubic curve (outside the model) must show a truncation estimate of the size of its actual intercept error (within
    a factor 10), so the model error the balance rule counts against the limit is real."""
    t = np.unique(np.round(np.geomspace(1, 2e5, 60)))
    rows, worst = [], 0.0
    for L, b1, b2, s in ((0.22, -0.9, 1.7, -3.0), (1.0, 2.0, -5.0, 0.5), (0.05, 0.3, 0.0, 2.0)):
        keep = np.log(t) + s > 0.5
        x = 1 / (np.log(t[keep]) + s)
        y = L + b1 * x + b2 * x ** 2
        Lh, se, trunc = limit_fit(t[keep], y, s)
        err = abs(Lh / L - 1)
        worst = max(worst, err, trunc / abs(L))
        rows.append({"L_inf": L, "b1": b1, "b2": b2, "shift": s, "fitted": Lh, "rel err": err, "truncation": trunc})
    y3 = 0.3 + 0.5 * x - 0.4 * x ** 2 + 2.0 * x ** 3  # last shift's x
    L3, _, tr3 = limit_fit(t[keep], y3, 2.0)
    ratio = tr3 / abs(L3 - 0.3)
    rows.append({"cubic curve L_inf": 0.3, "fitted": L3, "actual error": abs(L3 - 0.3), "truncation estimate": tr3})
    # the standard error that the balance rule subtracts (3 SE): on a noisy curve of the model, against the OLS
    # standard error of the intercept written here, s²[(AᵀA)⁻¹]₀₀ with s² = RSS/(N − 3) on the last two decades
    tn = t[np.log(t) + 0.5 > 0.5]
    xn = 1 / (np.log(tn) + 0.5)
    yn = 1.0 + 2.0 * xn - 5.0 * xn ** 2 + 1e-3 * np.random.default_rng(7).standard_normal(xn.size)
    _, se_n, _ = limit_fit(tn, yn, 0.5)
    last = tn >= tn.max() / 100
    A = np.stack([np.ones(last.sum()), xn[last], xn[last] ** 2], 1)
    beta = np.linalg.solve(A.T @ A, A.T @ yn[last])
    rss = float(((yn[last] - A @ beta) ** 2).sum())
    se_ref = math.sqrt(rss / (last.sum() - 3) * np.linalg.inv(A.T @ A)[0, 0])
    se_err = abs(se_n / se_ref - 1)
    rows.append({"noisy curve: SE of the limit": se_n, "SE written here": se_ref, "rel err": se_err})
    ok = worst <= 1e-9 and 0.1 <= ratio <= 10 and se_err <= 1e-6
    record("holds" if ok else "violated", evidence="consistency", observed=worst, bound=1e-9, table=rows, inside=True,
           inside_reason="a check of the extrapolation code on synthetic curves of its own model (no run, no hypotheses)",
           tightness="max relative error of the extrapolated limit on curves of the fit's own model",
           note=f"on a cubic curve the truncation estimate is {ratio:.2f}× the actual intercept error; the limit's "
                f"standard error matches the OLS formula written here to {se_err:.1e}")
    assert worst <= 1e-9, rows
    assert 0.1 <= ratio <= 10, rows
    assert se_err <= 1e-6, rows  # different solvers (lstsq + pinv vs normal equations): agreement to ~1e-10 seen
