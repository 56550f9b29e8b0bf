"""Appendix D along GD trajectories: zhu2022/lem-8, zhu2022/lem-9, zhu2022/lem-10, zhu2022/lem-11, zhu2022/thm-3.

Two-layer f = (1/α)Σ a_r φ(w_rᵀx), α = √m, β₁ = β₂ = 1 (so λ₀ = κ₀), n = 8 points on the unit sphere of R⁵,
GD on ½Σ(f − y)² with rate η = 0.05 (physical time t = ηk), seeds on the ensemble axis
(fixtures.zhu2022.two_layer_run). R̂_w(t) = max_r ‖w_r(t) − w_r(0)‖, R̂_a(t) = max_r |a_r(t) − a_r(0)|.
The illegible R_a is read as (α/n)√(λ₀/(8nm)) (RA_READING: the legible fragment with the n the OCR prints) wherever the
lemmas need it (stated in records); Lemma 8's check records every reading apart.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats as st

from fixtures import zhu2022 as fz
from fixtures.controls import control_text, input_grad_control
from theory import ClaimViolation, assert_claim
from theory.papers.zhu2022 import perturbation as pt
from theory.papers.zhu2022 import two_layer as tl
from theory.sim.ntk import layer_kernels
from theory.sim.train import gd
from theory.stats import failure_rate_test
from theory.device import draw

from ._references import k_reference

# tests that compute one cached run: xdist keeps each group on one worker (theory.harness.shared_runs)
SHARED_RUNS = "zhu2022/two_layer_runs"

B1 = B2 = 1.0
# The one reading of the illegible R_a every check of this file uses (tl.R_a_readings): (α/n)√(λ₀/(8nm)), the legible
# fragment with the n the OCR prints before √(8nm) (α√(λ₀/(8nm)), tl.R_a_legible, drops it). Lemma 8's check records
# every reading apart.
RA_READING = "fragment with 1/n"


def _Ra(lam0, alpha, n, m, beta2=B2):
    """R_a under RA_READING."""
    return tl.R_a_readings(lam0, alpha, n, m, beta2)[RA_READING]


EPS64 = float(np.finfo(np.float64).eps)
# Levels of the exact binomial tests; each is the declared false-alarm rate (record false_alarm) of its test. Issue 35:
# 2.5e-4 each (was 1e-3). The wrong versions stay far beyond them: the |a_r(0)| event at the mean level √(2/π)β₂ fails
# for about 40 % of the neurons against ≤ 1/n = 12.5 %, and Lemma 9's counted n e^{−n/2} = 0.147 against a measured
# frequency near the exact union 0.70 at E = 4000 (p-values in the records' notes).
FLIP_ALPHA = 2.5e-4   # lem-8 (iii): family-wise over the recorded times (Bonferroni)
UNION_ALPHA = 2.5e-4  # lem-9: two-sided test that the measured frequency matches the exact union probability
EVENT_ALPHA = 2.5e-4  # lem-9 proof step, lem-10 projection event, thm-3 init events (family-wise over the two)


def _run(ctx, m, cfg=None, alpha=None):
    cfg = fz.TWO_LAYER if cfg is None else cfg
    alpha = math.sqrt(m) if alpha is None else alpha
    return fz.two_layer_run(m, alpha, ctx.device, ctx.dtype, ctx.seed, tuple(sorted(cfg.items())))


def _widths(ctx):
    return ctx.pick(quick=(256, 1024), full=(256, 1024, 4096, 16384))


def _radii(r):
    dW = (r["W"] - r["W"][0]).norm(dim=-1)  # (T, E, m)
    da = (r["a"] - r["a"][0]).abs()
    return dW, da, dW.amax(-1), da.amax(-1)  # per-neuron and max radii


def _lam0(r):
    return tl.lambda0(r["X"], r["m"], r["alpha"], B2)


def _lemma7_8_reference(X, W0, a, H, alpha, Ra, Rw):
    """Lemma 7's figures and Lemma 8's Markov ratios written apart from tl (numpy, float64), to pin the production
    events that gate the as-stated records (a wrong threshold there would only move members between inside and
    outside). Lemma 7: ‖H(0) − H^∞‖₂/λ₀ and λ_min(H(0))/λ₀ with H^∞_ij = (m β₂²/α²) x_iᵀx_j (π − θ_ij)/(2π) and
    λ₀ = λ_min(H^∞). Lemma 8, Eqs. (19)–(20) × n (Markov): max_ij |H̃_ij(t) − H̃_ij(0)| / (n (m/α²) R_a (R_a + √(8/π) β₂))
    and max_ij |H_ij(t) − H̃_ij(t)| / (n · 4 R_w m/(α² √(2π) β₁) · (R_a(R_a + √(8/π) β₂) + β₂²)), where
    H̃_ij(t) = (1/α²) Σ_r a_r(t)² 1{w_r(0)ᵀx_i > 0} 1{w_r(0)ᵀx_j > 0} x_iᵀx_j. Returns (dev, lmin, r19, r20, b19, b20)."""
    X, W0, a, H = (np.asarray(t.detach().cpu(), dtype=np.float64) for t in (X, W0, a, H))
    n, m = X.shape[0], W0.shape[-2]
    G = X @ X.T
    Hinf = m * B2 ** 2 / alpha ** 2 * k_reference(X)
    lam0 = np.linalg.eigvalsh(Hinf)[0]
    dev = np.linalg.norm(H[0] - Hinf, ord=2, axis=(-2, -1)) / lam0
    lmin = np.linalg.eigvalsh(H[0])[:, 0] / lam0
    on = (np.einsum("emd,id->emi", W0, X) > 0).astype(np.float64)      # (E, m, n) patterns of w(0)
    Ht = np.einsum("tem,emi,emj->teij", a ** 2, on, on) * G / alpha ** 2  # (T, E, n, n)
    c = np.sqrt(8 / np.pi) * B2
    b19 = n * m / alpha ** 2 * Ra * (Ra + c)
    b20 = n * 4 * Rw * m / (alpha ** 2 * np.sqrt(2 * np.pi) * B1) * (Ra * (Ra + c) + B2 ** 2)
    r19 = np.abs(Ht - Ht[0]).max(axis=(-2, -1)) / b19
    r20 = np.abs(H - Ht).max(axis=(-2, -1)) / b20
    return dev, lmin, r19, r20, b19, b20


@pytest.mark.claim("zhu2022/lem-8")
def test_kernel_stability_under_weight_movement(ctx, record):
    """Pathwise ingredients of Lemma 8 at every recorded time: (i) a pattern flip of (r, i) needs
    |w_r(0)ᵀx_i| ≤ ‖w_r(t) − w_r(0)‖; (ii) ‖H(t) − H(0)‖_F ≤ ‖B‖_F with B_ij = (1/α²)Σ_r |x_iᵀx_j|(|a_r(t)² − a_r(0)²|
    + a_r(t)² 1{flip_ir ∪ flip_jr}); (iii) the flip rate of the pairs (r, i) ≤ 2R̂_w/(√(2π)β₁) (exact binomial test);
    (iv) ‖H(t) − H(0)‖₂ ≤ the lemma's expected-value bound n²(m/α²)[R_a(R_a + √(8/π)β₂) + 4R_w(R_a(R_a + √(8/π)β₂)
    + β₂²)/(√(2π)β₁)] with the measured radii (a consistency check: an expectation applied to one path).
    The conclusion λ_min(H(t)) ≥ λ₀/2 is only reported here (these runs leave the lemma's radii) and checked in
    test_lemma8_conclusion_within_radii.
    Companions: (i) with the radius halved must be violated along the runs; (ii) with |a_r(t)² − a_r(0)²| replaced by
    (a_r(t) − a_r(0))² is checked on the runs (reported: flips there can mask it) and on a probe that provably
    violates it: W(0), a = (1+s)a(0), s = 1e-3, where no pattern flips and H − H(0) = (2s + s²)H(0) exactly (first
    order in s) while the mutated bound is s²Σa_r²|x_iᵀx_j|/α² (second order); ‖·‖_F ratio ≥ (2+s)/s ·
    max_i H_ii(0)α²/(nΣa_r²) > 1, a precondition asserted per member. The true bound must hold on the probe too."""
    table, bad_flip, bad_path, mut_path, mut_flip = [], 0, 0, 0, 0
    probe_true, probe_mut, probe_ratio = 0, 0, math.inf
    path_ratio, bad_exp, exp_ratio, flip_tests, out_of_hyp, worst_lmin = 0.0, 0, 0.0, [], 0.0, math.inf
    on_e7 = {}
    for m in _widths(ctx):
        r = _run(ctx, m)
        X, alpha, n = r["X"], r["alpha"], r["X"].shape[0]
        lam0 = _lam0(r)
        e7 = tl.lemma7_event(r["H"][0], X, m, alpha, B2)["ok"]
        on_e7[f"m={m}"] = f"{int(e7.sum())}/{e7.numel()}"
        dW, da, Rw, Ra = _radii(r)
        Z = r["W"] @ X.T  # (T, E, m, n)
        flip = (Z >= 0) != (Z[0] >= 0)
        proj0 = Z[0].abs().expand_as(Z)
        need = dW[..., None].expand_as(Z)
        bad_flip += int((flip & (proj0 > need + 1e-12)).sum())
        mut_flip += int((flip & (proj0 > need / 2)).sum())  # mutation: flips need |w_r(0)ᵀx_i| ≤ ‖Δw_r‖/2
        XX = (X @ X.T).abs()
        dsq = (r["a"] ** 2 - r["a"][0] ** 2).abs()  # (T, E, m)
        fl = flip.to(X.dtype)
        union = 1 - (1 - fl[..., :, None]) * (1 - fl[..., None, :])  # (T, E, m, n, n)
        Bmat = (dsq.sum(-1)[..., None, None] + torch.einsum("tem,temij->teij", r["a"] ** 2, union)) * XX / alpha ** 2
        Bmut = (((r["a"] - r["a"][0]) ** 2).sum(-1)[..., None, None] + torch.einsum("tem,temij->teij", r["a"] ** 2, union)) * XX / alpha ** 2
        dH = r["H"] - r["H"][0]
        fro = torch.linalg.matrix_norm(dH)
        bad_path += int((fro > torch.linalg.matrix_norm(Bmat) * (1 + 1e-12) + 1e-14).sum())
        mut_path += int((fro > torch.linalg.matrix_norm(Bmut)).sum())
        # probe: only the second layer moves, a = (1+s)a(0) (no flips): ΔH = (2s+s²)H(0)
        s_ = 1e-3
        W0, a0 = r["W"][0], r["a"][0]
        Hp = layer_kernels(r["net"], X, [W0, ((1 + s_) * a0)[:, None, :]])[0]
        dHp = Hp - r["H"][0]
        assert torch.allclose(dHp, (2 * s_ + s_ ** 2) * r["H"][0], rtol=1e-9, atol=1e-15), "probe: ΔH = (2s+s²)H(0)"
        act_mass = ((a0 ** 2)[:, :, None] * (Z[0] >= 0)).sum(1).amax(-1)  # max_i Σ_r a_r² 1{w_rᵀx_i ≥ 0}, (E,)
        assert bool((act_mass > n * s_ / (2 + s_) * (a0 ** 2).sum(-1)).all()), "probe precondition (active mass) fails"
        dsq_p = ((1 + s_) ** 2 - 1) * a0 ** 2
        Bp = dsq_p.sum(-1)[:, None, None] * XX / alpha ** 2
        Bp_mut = ((s_ * a0) ** 2).sum(-1)[:, None, None] * XX / alpha ** 2
        fro_p = torch.linalg.matrix_norm(dHp)
        probe_true += int((fro_p > torch.linalg.matrix_norm(Bp) * (1 + 1e-12) + 1e-14).sum())
        probe_mut += int((fro_p > torch.linalg.matrix_norm(Bp_mut)).sum())
        probe_ratio = min(probe_ratio, float((fro_p / torch.linalg.matrix_norm(Bp_mut)).min()))
        spec = torch.linalg.matrix_norm(dH, 2)
        path_ratio = max(path_ratio, float((fro / torch.linalg.matrix_norm(Bmat).clamp_min(1e-300)).max()))
        c = math.sqrt(8 / math.pi) * B2
        exp_bound = n * n * (m / alpha ** 2 * Ra * (Ra + c) + 4 * Rw * m / (alpha ** 2 * math.sqrt(2 * math.pi) * B1)
                             * (Ra * (Ra + c) + B2 ** 2))  # (T, E): the lemma's E Σ_ij |ΔH_ij| with measured radii
        bad_exp += int((spec > exp_bound * (1 + 1e-12)).sum())
        exp_ratio = max(exp_ratio, float((spec / exp_bound.clamp_min(1e-300))[1:].max()))
        # (iii): flips of (r, i) need |w_r(0)ᵀx_i| ≤ R̂_w, probability ≤ 2R̂_w/(√(2π)β₁) per pair; pooled over members
        # at each recorded t > 0, one-sided exact binomial test at family-wise FLIP_ALPHA (Bonferroni over the times)
        for k in range(1, len(r["steps"])):
            p_bound = min(1.0 - 1e-12, 2 * float(Rw[k].max()) / (math.sqrt(2 * math.pi) * B1))
            nflip = int(flip[k].sum())
            flip_tests.append((nflip, flip[k].numel(), p_bound))
        lmin = torch.linalg.eigvalsh(r["H"])[..., 0]
        Ra_l = _Ra(lam0, alpha, n, m)
        Rw_l = tl.R_w(lam0, alpha, n, m, B1, B2, Ra_l)
        out_of_hyp = max(out_of_hyp, float(Rw.max() / Rw_l))
        worst_lmin = min(worst_lmin, float(lmin.min() / lam0))
        for k in range(0, len(r["steps"]), max(1, len(r["steps"]) // 6)):
            table.append({"m": m, "t": float(r["t"][k]), "max R_w hat": float(Rw[k].max()), "max R_a hat": float(Ra[k].max()),
                          "flip fraction": float(fl[k].mean()), "2R_w/(sqrt(2pi)beta1)": float(2 * Rw[k].max() / math.sqrt(2 * math.pi)),
                          "|H(t)-H(0)|_2": float(spec[k].max()), "expected-value bound (measured radii)": float(exp_bound[k].max()),
                          "lambda_min(H)/lambda0": float(lmin[k].min() / lam0), "R_w hat / R_w(lemma)": float(Rw[k].max() / Rw_l)})
    ntimes = len(flip_tests)
    flip_res = [failure_rate_test(f, N_, p, alpha=FLIP_ALPHA / ntimes) for f, N_, p in flip_tests]
    bad_iii = sum(t.rejects for t in flip_res)
    worst_iii = max(t.rate / t.delta for t in flip_res)
    ok = bad_flip == 0 and bad_path == 0 and probe_true == 0 and bad_exp == 0
    record("holds" if ok else "violated", observed=path_ratio, bound=1.0, covers=["pathwise ingredients"],
           evidence="consistency", inside=True,
           inside_reason=("(i), (ii) and the probe hold for any weights and invoke no event; (iv) applies an expectation to "
                          "one path with the measured radii (a consistency check)"),
           tightness="max over times and members of ‖H(t) − H(0)‖_F / ‖B(t)‖_F (pathwise ingredient (ii))",
           config={**fz.TWO_LAYER, "widths": _widths(ctx), "R_a": "(alpha/n)*sqrt(lambda0/(8nm))"}, table=table,
           hypotheses={"(i) flip-condition violations": bad_flip, "(ii) pathwise-bound violations": bad_path,
                       "(iii) max flip fraction / bound (its own record)": worst_iii,
                       "(iv) times where |H(t)-H(0)|_2 exceeds the expected-value bound": bad_exp,
                       "(iv) max |H(t)-H(0)|_2 / expected-value bound": exp_ratio,
                       "probe: true-bound violations": probe_true,
                       "conclusion on these runs (outside the hypothesis): min lambda_min(H(t))/lambda0": worst_lmin,
                       "max R_w hat / R_w(lemma)": out_of_hyp,
                       "events invoked by the ingredients (i), (ii)": "none (they hold for any weights); (iii), (iv) are "
                                                                        "statements over the init",
                       "members on the event of Lemma 7 (used by the conclusion only; reported)": on_e7},
           note=(f"headline = the pathwise ingredients (i)/(ii); the conclusion λ_min(H(t)) ≥ λ₀/2 is not judged on these runs: "
                 f"their radii exceed the lemma's R_w by up to {out_of_hyp:.3g}× (hypothesis not met); it is checked where "
                 f"R̂_w ≤ R_w in test_lemma8_conclusion_within_radii (min λ_min/λ₀ here: {worst_lmin:.3f}, reported)"))
    # (iii) apart: a flip of (r, i) implies |w_r(0)ᵀx_i| ≤ R̂_w (pathwise, (i)), and |w_r(0)ᵀx_i| ~ |N(0, β₁²)| has
    # P(≤ R) ≤ 2R/(√(2π)β₁) for any R (Gaussian density ≤ 1/(√(2π)β₁)): true by construction of the init, so the
    # binomial test checks the code (consistency). R̂_w is measured on the same runs, while the lemma's radius is fixed
    # before the init is drawn: the probability statement is applied outside its exact form (inside "unknown").
    record("holds" if bad_iii == 0 else "violated", observed=worst_iii, bound=1.0, covers=["flip probability"],
           evidence="consistency", false_alarm=FLIP_ALPHA, inside="unknown",
           inside_reason=("the lemma bounds P(|w_r(0)ᵀx_i| ≤ R_w) for a radius fixed in advance; here R̂_w(t) is measured "
                          "on the same runs (data-dependent); ‖x_i‖ = 1 holds"),
           config={**fz.TWO_LAYER, "widths": _widths(ctx)},
           hypotheses={"flip-rate tests rejecting 2R_w/(sqrt(2pi)beta1)": f"{bad_iii}/{ntimes}",
                       "family-wise level (Bonferroni over the times)": FLIP_ALPHA},
           tightness="max over recorded times of (flip fraction of the pairs (r, i)) / (2R̂_w/(√(2π)β₁))")
    n_members = len(_widths(ctx)) * fz.TWO_LAYER["seeds"]
    rejected = mut_flip > 0 and probe_mut == n_members and probe_ratio > 1
    record("holds" if rejected else "violated", role="companion", observed=probe_ratio, bound=1.0,
           note=(f"wrong versions: (i) with the radius halved violated {mut_flip} times on the runs; (ii) with (a(t)−a(0))² "
                 f"for |a(t)²−a(0)²| violated on {probe_mut}/{n_members} probes (min ‖ΔH‖_F/‖B_mut‖_F = {probe_ratio:.3g}) and "
                 f"{mut_path} times on the runs"))
    assert bad_flip == 0 and bad_path == 0 and probe_true == 0
    assert bad_iii == 0, flip_res
    assert bad_exp == 0, exp_ratio
    assert rejected


# Widths of the short runs of test_lemma8_conclusion_within_radii. Lemma 8's last step ("by Eq. (17)") needs the event
# of Lemma 7, ‖H(0) − H^∞‖₂ ≤ λ₀/4: on this data it holds on no member at m ≤ 1024 (seeds 0, 3, 11, 17; ‖H(0) − H^∞‖₂/λ₀
# ≥ 0.27) and on 2–4 of the 4 members at m = 16384, so the conclusion is judged there and reported at m = 256.
LEM8_WIDTHS = (256, 4096, 16384)
LEM8_RANDOM = 4  # random points of the box per member (beside the trajectory and the corners)
LEM8_READING = RA_READING  # the box's R_a (tl.R_a_readings); every reading is also recorded apart
LEM8_LOOSE = 0.5  # the worst ‖H − H(0)‖₂/(λ₀/4) below this: the bound has over 2× room ("loose", factor in the note)


def _kernel_at(X, a, P, alpha):
    """H = (1/α²) Σ_r a_r² x_iᵀx_j 1_ir 1_jr for output weights a (..., m) and activation patterns P (..., m, n)."""
    return torch.einsum("...m,...mi,...mj->...ij", a ** 2, P, P) * (X @ X.T) / alpha ** 2


def _toggled_patterns(X, W0, Rw):
    """Patterns (E, m, n) of w_r(0) with every flippable pair (|w_r(0)ᵀx_i| < R_w) of a neuron toggled, where one move
    ‖δ‖ ≤ R_w does it (least-norm δ with (w_r(0) + δ)ᵀx_i = −sign(w_r(0)ᵀx_i)·1e-9 R_w on the toggled i, the other
    patterns of the neuron unchanged); neurons where it does not are left as they are. Returns (patterns, toggled pairs)."""
    Z0 = W0 @ X.T
    P = (Z0 >= 0).to(X.dtype)
    count = 0
    for e, r in (Z0.abs() < Rw).any(-1).nonzero().tolist():
        S = (Z0[e, r].abs() < Rw).nonzero().flatten()
        sgn = torch.where(Z0[e, r, S] >= 0, 1.0, -1.0).to(X.dtype)
        delta = torch.linalg.pinv(X[S]) @ (-Z0[e, r, S] - sgn * 1e-9 * Rw)
        z = Z0[e, r] + X @ delta
        keep = torch.ones_like(z, dtype=torch.bool)
        keep[S] = False
        if float(delta.norm()) <= Rw and bool(((z >= 0) == (Z0[e, r] >= 0))[keep].all()) and bool(((z >= 0) != (Z0[e, r] >= 0))[S].all()):
            P[e, r] = (z >= 0).to(X.dtype)
            count += len(S)
    return P, count


def _lemma8_box_points(X, W0, a0, Ra, Rw, gen):
    """Points of Lemma 8's box {‖w_r − w_r(0)‖ ≤ R_w, |a_r − a_r(0)| ≤ R_a}: LEM8_RANDOM random ones and the adversarial
    corners. H depends on w only through the patterns and H = (1/α²)Σ_r a_r² M_r with M_r ⪰ 0, so for fixed patterns
    λ_max(H − H(0)) is largest at |a_r| = |a_r(0)| + R_a, and λ_max(H(0) − H) and −λ_min(H) at |a_r| = max(|a_r(0)| − R_a,
    0) (monotone in the PSD order): the corners are the exact extremes of the output-weight part, the proof's equality
    cases (|a_r(t)² − a_r(0)²| at its bound 2|a_r(0)|R_a + R_a² in Eq. (19)). Each corner is taken with the initial
    patterns and with the flippable pairs toggled (the flip event A_ir of Eq. (20)). Returns (a (P, E, m), patterns
    (P, E, m, n), labels, toggled pairs)."""
    E, m, d = W0.shape
    kw = dict(dtype=X.dtype, device=X.device)
    pts_a, pts_P, labels = [], [], []
    for _ in range(LEM8_RANDOM):
        u = 2 * draw(torch.rand, E, m, generator=gen, **kw) - 1
        v = draw(torch.randn, E, m, d, generator=gen, **kw)
        v = v / v.norm(dim=-1, keepdim=True) * draw(torch.rand, E, m, 1, generator=gen, **kw) ** (1 / d) * Rw
        pts_a.append(a0 + Ra * u)
        pts_P.append(((W0 + v) @ X.T >= 0).to(X.dtype))
        labels.append("random point of the box")
    P0 = (W0 @ X.T >= 0).to(X.dtype)
    Pt, toggled = _toggled_patterns(X, W0, Rw)
    up, down = a0 + Ra * a0.sign(), a0.sign() * (a0.abs() - Ra).clamp_min(0)
    for la, a in (("corner |a_r(0)| + R_a", up), ("corner max(|a_r(0)| - R_a, 0)", down)):
        for lp, P in (("initial patterns", P0), ("flippable pairs toggled", Pt)):
            pts_a.append(a)
            pts_P.append(P)
            labels.append(f"{la}, {lp}")
    return torch.stack(pts_a), torch.stack(pts_P), labels, toggled


@pytest.mark.claim("zhu2022/lem-8")
def test_lemma8_conclusion_within_radii(ctx, record):
    """Lemma 8's conclusion for every weights in its box (a "for every θ" statement: forall), at the worst case: for
    ‖w_r − w_r(0)‖ ≤ R_w and |a_r − a_r(0)| ≤ R_a, ‖H − H(0)‖₂ ≤ λ₀/4 and λ_min(H) ≥ λ₀/2. R_a is illegible: the box
    takes R_a = (α/n)√(λ₀/(8nm)) (tl.R_a_readings, "fragment with 1/n") and R_w = the largest value of its formula over
    that reading and "closing" (R_w grows as R_a shrinks), so the box contains the boxes of both readings (the
    conclusion is monotone in the output-weight radius at fixed patterns, and the pattern part only grows with R_w).
    The proof's (19) term closes (is λ₀/8) only at "closing"; at (α/n)√(λ₀/(8nm)) it is far above λ₀/8 (its factor in
    the reading's record), so the box is a test of the conclusion, not of the proof's arithmetic. Points per member:
    the short GD run over [0, min(t₁, t₂)] (_short_run) where it stays in the box (typical points), LEM8_RANDOM random
    points of the box, and the adversarial corners of _lemma8_box_points (exact extremes of the output-weight part,
    with the flippable patterns toggled). As-stated figure: ‖H − H(0)‖₂/(λ₀/4) ≤ 1 (the part that depends on the box);
    λ_min(H) ≥ λ₀/2 is recorded too, as consistency (forced by Lemma 7's event λ_min(H(0)) ≥ 3λ₀/4 and Weyl).
    Inside: Lemma 7's event of the member (‖H(0) − H^∞‖₂ ≤ λ₀/4, λ_min(H(0)) ≥ 3λ₀/4; the proof's last step uses it)
    and the proof's Markov events at the point (entrywise Eqs. (19)–(20) × n with the box's radii). The as-stated record
    (worst_case) judges the inside (member, point) cells; the others are recorded apart (inside False). Each R_a reading
    (α√(λ₀/(8nm)), which drops the printed n; (α/n)√(λ₀/(8nm)); "closing") has its own record (reading "reconstructed",
    beside the verdict): the upper corner |a_r| = |a_r(0)| + R_a at that reading's radii, and the (19) term over λ₀/8.
    Companion: the conclusion with a tightened constant, λ_min(H) ≥ 3λ₀/2, must be violated (λ_min(H(0)) ≈ λ₀)."""
    cells, reports, info, toggles = [], {}, {}, 0
    gen = record.generator({"t": "lemma8 box"})
    for m in LEM8_WIDTHS:
        s = _short_run(ctx, m)
        tr, lam0, X, alpha = s["tr"], s["lam0"], s["r"]["X"], s["r"]["alpha"]
        n = X.shape[0]
        W, a, H = tr.stacked("W"), tr.stacked("a"), tr.stacked("H")
        e7 = tl.lemma7_event(H[0], X, m, alpha, B2)
        mk = tl.lemma8_markov_event(X, W[0], a[0], a, H, alpha, B1, B2, s["Ra"], s["Rw"])
        # the production events against the reference written above: the bounds to 1e-12, Lemma 7's figures to 1e-9
        # (eigen-solvers), the Markov ratios to 1e-9 plus the rounding of an m-term kernel entry over its bound. H and
        # H̃ agree to rounding while no pattern flips, so (20)'s ratio on the run is ~1e-12, rounding over a bound: it is
        # also pinned on a probe, the run's H with entry (0, 1) of the last step moved by b20/2 (ratio ≈ 1/2 there).
        dev_r, lmin_r, r19_r, r20_r, b19_r, b20_r = _lemma7_8_reference(X, W[0], a, H, alpha, s["Ra"], s["Rw"])
        assert math.isclose(mk["b19"], b19_r, rel_tol=1e-12) and math.isclose(mk["b20"], b20_r, rel_tol=1e-12), \
            "Lemma 8's Markov bounds (19)-(20) in tl differ from the reference"
        Hp = H.clone()
        Hp[-1, :, 0, 1] += b20_r / 2
        Hp[-1, :, 1, 0] += b20_r / 2
        r20_p = _lemma7_8_reference(X, W[0], a, Hp, alpha, s["Ra"], s["Rw"])[3]
        hmax = float(H.abs().max())
        for name, got, want, atol in (("Lemma 7 dev", e7["dev"], dev_r, 0.0), ("Lemma 7 lmin", e7["lmin"], lmin_r, 0.0),
                                      ("Markov ratio (19)", mk["r19"], r19_r, m * EPS64 * hmax / b19_r),
                                      ("Markov ratio (20)", mk["r20"], r20_r, m * EPS64 * hmax / b20_r),
                                      ("Markov ratio (20), probe", tl.lemma8_markov_event(
                                          X, W[0], a[0], a, Hp, alpha, B1, B2, s["Ra"], s["Rw"])["r20"][-1], r20_p[-1], 0.0)):
            assert np.allclose(got.cpu().numpy(), want, rtol=1e-9, atol=atol), f"{name}: tl differs from the reference"
        if m == LEM8_WIDTHS[0]:  # Lemma 7's thresholds probed: H(0) = H^∞ + c λ₀ vvᵀ (v its top eigenvector) has
            # ‖H(0) − H^∞‖₂/λ₀ = c and λ_min(H(0)) = λ₀, so the event holds at c = 0.2475 and fails at c = 0.2525
            Hinf_t = torch.as_tensor(m * B2 ** 2 / alpha ** 2 * k_reference(X), dtype=H.dtype, device=H.device)
            ev, V = torch.linalg.eigh(Hinf_t)
            vv = torch.outer(V[:, -1], V[:, -1])
            probe = torch.stack([Hinf_t + c * ev[0] * vv for c in (0.2475, 0.2525)])
            assert tl.lemma7_event(probe, X, m, alpha, B2)["ok"].tolist() == [True, False], \
                "tl.lemma7_event's thresholds are not ‖H(0) − H^∞‖₂ ≤ λ₀/4, λ_min(H(0)) ≥ 3λ₀/4"
        readings = tl.R_a_readings(lam0, alpha, n, m, B2)
        Ra = readings[LEM8_READING]
        # R_w grows as R_a shrinks: the box takes the largest R_w over the readings it covers (LEM8_READING, "closing"),
        # so it contains both readings' boxes
        Rw = max(tl.R_w(lam0, alpha, n, m, B1, B2, readings[k]) for k in (LEM8_READING, "closing"))
        # typical points: the short run's steps that lie in the box
        in_box = ((W - W[0]).norm(dim=-1).amax(-1) <= Rw) & ((a - a[0]).abs().amax(-1) <= Ra)  # (T, E)
        # random and adversarial points
        pa, pP, labels, tg = _lemma8_box_points(X, W[0], a[0], Ra, Rw, gen)
        toggles += tg
        Hb = _kernel_at(X, pa, pP, alpha)  # (P, E, n, n)
        pts = [("GD step", H, a, in_box)] + [(lab, Hb[i:i + 1], pa[i:i + 1], torch.ones_like(in_box[:1])) for i, lab in enumerate(labels)]
        for lab, Hp, ap, ok_box in pts:
            mk_p = tl.lemma8_markov_event(X, W[0], a[0], ap, Hp, alpha, B1, B2, Ra, Rw)["ok"]  # (P, E)
            rA = torch.linalg.matrix_norm(Hp - H[0], 2) / (lam0 / 4)
            lmin = torch.linalg.eigvalsh(Hp)[..., 0]
            rB = (lam0 / 2) / lmin
            for e in range(W.shape[1]):
                sel = ok_box[:, e]
                if not bool(sel.any()):
                    continue
                ins = sel & mk_p[:, e] & e7["ok"][e]
                for part, mask in (("inside", ins), ("outside", sel & ~ins)):
                    if bool(mask.any()):
                        fa, fb = float(rA[mask, e].max()), float(rB[mask, e].max())
                        cells.append({"m": m, "member": e, "point": lab, "status": part, "points": int(mask.sum()),
                                      "max |H-H(0)|_2/(lambda0/4)": fa, "max (lambda0/2)/lambda_min(H)": fb,
                                      "figure": max(fa, fb), "min lambda_min(H)/lambda0": float(lmin[mask, e].min() / lam0),
                                      "Lemma 7 event": bool(e7["ok"][e]),
                                      "|H(0)-Hinf|_2/lambda0": float(e7["dev"][e]),
                                      "Markov events at the points": bool(mk_p[mask, e].all())})
        # each R_a reading apart (reading "reconstructed", beside the verdict): the upper corner |a_r| = |a_r(0)| + R_a with
        # the initial patterns and R_w at that reading, on the members on Lemma 7's event; the proof's (19) term
        # n³(m/α²)R_a(R_a + √(8/π)β₂) against λ₀/8, and the Markov events at the corner
        for name, Rx in readings.items():
            up = a[0] + Rx * a[0].sign()
            Hu = _kernel_at(X, up, (W[0] @ X.T >= 0).to(X.dtype), alpha)
            rx = torch.linalg.matrix_norm(Hu - H[0], 2) / (lam0 / 4)
            Rwx = tl.R_w(lam0, alpha, n, m, B1, B2, Rx)
            mkx = tl.lemma8_markov_event(X, W[0], a[0], up[None], Hu[None], alpha, B1, B2, Rx, Rwx)["ok"][0]
            t19 = n ** 3 * (m / alpha ** 2) * Rx * (Rx + math.sqrt(8 / math.pi) * B2) / (lam0 / 8)
            if bool(e7["ok"].any()):
                info.setdefault(name, []).append({"m": m, "R_a": Rx, "R_w": Rwx, "corner |H-H(0)|_2/(lambda0/4)":
                                                  float(rx[e7["ok"]].max()), "(19) term/(lambda0/8)": t19,
                                                  "Markov events at the corner": bool(mkx[e7["ok"]].all()),
                                                  "members": int(e7["ok"].sum())})
        reports[f"m={m}"] = {"R_a readings": readings, "box": {"R_a": Ra, "R_w": Rw},
                             "members on Lemma 7's event": f"{int(e7['ok'].sum())}/{e7['ok'].numel()}",
                             "GD steps inside the box": f"{int(in_box.sum())}/{in_box.numel()}"}
    ins = [c for c in cells if c["status"] == "inside"]
    outs = [c for c in cells if c["status"] != "inside"]
    cfg = {**fz.TWO_LAYER, "widths": LEM8_WIDTHS, "steps": 60, "random points per member": LEM8_RANDOM,
           "R_a reading of the box": LEM8_READING}
    hyp = {**reports, "flippable pairs toggled at the corners (all widths)": toggles}
    ok = ok_out = True
    if ins:
        worst = max(ins, key=lambda c: c["max |H-H(0)|_2/(lambda0/4)"])
        fA = worst["max |H-H(0)|_2/(lambda0/4)"]
        ok = fA <= 1.0
        loose = ok and fA < LEM8_LOOSE
        why_in = (f"judged cells: members on Lemma 7's event (‖H(0) − H^∞‖₂/λ₀ ≤ "
                  f"{max(c['|H(0)-Hinf|_2/lambda0'] for c in ins):.3f} ≤ 1/4 on them) at points of the box where the "
                  "proof's Markov events (19)–(20) × n hold; the box: R_a = (α/n)√(λ₀/(8nm)) (R_a illegible; the "
                  "readings are recorded apart), R_w the largest of its formula over that reading and \"closing\"")
        n_judged = len({(c['m'], c['member']) for c in ins})
        record("holds" if ok else "violated", observed=fA, bound=1.0, covers=["conclusion within radii"],
               evidence="test", worst_case=True, inside=True, inside_reason=why_in,
               finding_type="loose" if loose else "",
               tightness="max over the inside cells of ‖H − H(0)‖₂/(λ₀/4) (GD steps, random points, adversarial corners)",
               config=cfg, table=ins, hypotheses=hyp,
               note=(f"worst at m = {worst['m']}, member {worst['member']}, {worst['point']}: ‖H − H(0)‖₂ = "
                     f"{fA:.3g}·λ₀/4 at the worst point of the box ({n_judged} members judged, the others in the outside "
                     "record)" + (f"; the bound λ₀/4 has a factor {1 / fA:.3g} of room (loose)" if loose else "")))
        lmin_in = min(c["min lambda_min(H)/lambda0"] for c in ins)
        record("holds" if lmin_in >= 0.5 else "violated", covers=["conclusion within radii"], evidence="consistency",
               inside=True, inside_reason=why_in, config=cfg, hypotheses=hyp,
               note=(f"second conclusion λ_min(H) ≥ λ₀/2: min λ_min(H)/λ₀ = {lmin_in:.3f} over the inside cells. "
                     "Forced on them by Lemma 7's event λ_min(H(0)) ≥ 3λ₀/4 and Weyl with the first conclusion "
                     "(λ_min(H) ≥ λ_min(H(0)) − ‖H − H(0)‖₂ ≥ λ₀/2), so it cannot fail unless that record does "
                     "(consistency)"))
    else:
        record("not-applicable", config=cfg, table=cells, hypotheses=hyp, evidence="consistency", inside=False,
               inside_reason="no member on Lemma 7's event at this draw",
               note=("precondition not met at this draw: no member is on every event the proof invokes (Lemma 7's "
                     "‖H(0) − H^∞‖₂ ≤ λ₀/4 above all); the conclusion is recorded outside the hypotheses only"))
    if outs:
        wo = max(c["max |H-H(0)|_2/(lambda0/4)"] for c in outs)
        ok_out = wo <= 1.0
        record("holds" if ok_out else "violated", reading="outside-hypotheses", observed=wo, bound=1.0, config=cfg,
               table=outs, hypotheses=hyp, evidence="test", inside=False,
               inside_reason="members off Lemma 7's event, or points where a Markov event of the proof fails",
               tightness="max over the outside cells of ‖H − H(0)‖₂/(λ₀/4) (λ_min(H)/λ₀ per cell in the table)",
               note="reported, never counted against the paper")
    # each R_a reading apart, beside the verdict (reading "reconstructed"): the upper corner at that reading's radii
    for name, rows in info.items():
        fx, t19 = max(r["corner |H-H(0)|_2/(lambda0/4)"] for r in rows), max(r["(19) term/(lambda0/8)"] for r in rows)
        mk_all = all(r["Markov events at the corner"] for r in rows)
        extra = {"fragment": "it drops the n the OCR prints before √(8nm)",
                 "fragment with 1/n": "the box of the as-stated record",
                 "closing": "the radius at which the (19) term is exactly λ₀/8"}[name]
        record("holds" if fx <= 1.0 else "violated", reading="reconstructed", observed=fx, bound=1.0, evidence="test",
               inside=bool(mk_all), config={**cfg, "R_a reading": name}, table=rows,
               inside_reason=(f"members on Lemma 7's event; the proof's Markov events (19)–(20) × n at the corner with this "
                              f"reading's radii: {'hold' if mk_all else 'fail on some member'}"),
               tightness="max over widths and members on Lemma 7's event of ‖H − H(0)‖₂/(λ₀/4) at the upper corner "
                         "|a_r| = |a_r(0)| + R_a (initial patterns)",
               note=(f"R_a reading \"{name}\" ({extra}): ‖H − H(0)‖₂ = {fx:.3g}·λ₀/4 at the upper corner; the proof's "
                     f"(19) term n³(m/α²)R_a(R_a + √(8/π)β₂) is {t19:.3g}× λ₀/8 at this reading"
                     + (" (the proof cannot close there; shown beside the verdict, never as it)" if t19 > 1 + 1e-9 else "")))
    worst_l_all = min(c["min lambda_min(H)/lambda0"] for c in cells)
    rejected = worst_l_all < 1.5
    record("holds" if rejected else "violated", role="companion", observed=worst_l_all, bound=1.5,
           note=f"wrong version λ_min(H) ≥ 3λ₀/2: min λ_min/λ₀ = {worst_l_all:.3f} over all cells (< 1.5: rejected)")
    assert ok, ins
    assert rejected


# Issue 19: the width at which the movement term R_a of Lemma 9's factor (√n β₂ + R_a) is a material share (≥ 25 %)
# while λ_min(H) ≥ λ₀/2 still holds: at m = 64 (seed 0) R̂_a reaches 0.38 of the factor (0.22 at m = 256, 0.13 at 1024);
# narrower nets (m = 16, 32) leave the hypothesis on about half the recorded times. At some draws (seed 7) no m = 64
# cell has both the hypothesis and a material R_a: m = 32 is run too. A draw where neither width reaches it is reported
# (the term part then stays untested at that draw: "holds in part"), never re-drawn. Costs < 1 s each.
LEM9_MATERIAL_M = (16, 32, 64)
LEM9_MATERIAL_CFG = {**fz.TWO_LAYER, "seeds": 12}


@pytest.mark.claim("zhu2022/lem-9")
def test_loss_envelope_and_first_layer_radius(ctx, record):
    """Where λ_min(H(s)) ≥ λ₀/2 on the recorded s ≤ t: ‖y − f(t)‖² ≤ e^{−λ₀t}‖y − f(0)‖² (Eq. 21), and
    max_r ‖w_r(t) − w_r(0)‖ ≤ R'_w(t) with R_a := R̂_a(t) (Eq. 22). Eq. (22) is judged (as stated) on the (t, member)
    cells on every event its proof invokes: the hypotheses on s ≤ t (λ_min, and |a_r(s) − a_r(0)| ≤ R_a, i.e. R̂_a(s) ≤
    R̂_a(t) on the recorded s ≤ t), the proof's event |a_r(0)| ≤ √n β₂ for every r (tl.lemma9_event), and Eq. (21) on the
    recorded s ≤ t (its integrand; exact under gradient flow, checked on the GD stand-in); the other cells where λ_min
    held are recorded apart (reading "outside-hypotheses") and asserted too. Both terms of R'_w's factor (√n β₂ + R_a)
    are tested where material: the extra widths LEM9_MATERIAL_M have inside cells where R̂_a is ≥ 25 % of the factor
    (recorded; covered only when such a cell exists at this draw). Companions (wrong versions that must be violated
    somewhere on the runs): the envelope at rate 4λ_max(H+G)(0); R'_w without its √n factors."""
    table, worst_env, worst_rw, mut_env, mut_rw, pin_err = [], 0.0, 0.0, 0, 0, 0.0
    mat_n, mat_worst, mat_share = 0, 0.0, 0.0  # issue 19: R'_w where R̂_a and √nβ₂ are each ≥ 25 % of their sum
    n_in, n_out, worst_out, ev_members, out_why = 0, 0, 0.0, {}, {"R_a hat(s) > R_a hat(t) for some s <= t": 0,
                                                                 "|a_r(0)| > sqrt(n) beta2 for some r": 0, "(21) failed at some s <= t": 0}
    for m in LEM9_MATERIAL_M + tuple(_widths(ctx)):
        r = _run(ctx, m, LEM9_MATERIAL_CFG if m in LEM9_MATERIAL_M else None)
        n, alpha, lam0, t = r["X"].shape[0], r["alpha"], _lam0(r), r["t"]
        res = ((r["y"] - r["f"]) ** 2).sum(-1)  # (T, E)
        lmin = torch.linalg.eigvalsh(r["H"])[..., 0]
        hyp = torch.cummin(lmin, 0).values >= lam0 / 2
        env = res[0] * torch.exp(-lam0 * t)[:, None]
        ratio_env = torch.where(hyp, res / env, torch.zeros_like(res))
        worst_env = max(worst_env, float(ratio_env[1:].max()))  # t > 0: at t = 0 the envelope is its own start (= 1)
        lmax = torch.linalg.eigvalsh(r["H"][0] + r["G"][0])[..., -1]
        mut_env += int((res > res[0] * torch.exp(-4 * lmax[None, :] * t[:, None])).sum())
        _, _, Rw, Ra = _radii(r)
        r0 = res[0].sqrt()
        Rpw = torch.stack([tl.Rp_w(t, lam0, alpha, n, B2, Ra[:, e], float(r0[e])) for e in range(res.shape[1])], 1)
        ok = Rpw > 0
        # the events of the proof of (22) per (t, member): R_a := R̂_a(t) bounds |a_r(s) − a_r(0)| on the recorded s ≤ t,
        # |a_r(0)| ≤ √n β₂ for every r, and (21) held on the recorded s ≤ t
        mono = torch.cummax(Ra, 0).values <= Ra
        e9 = tl.lemma9_event(r["a"][0], n, B2)["ok"]
        env_ok = torch.cummin((res <= env).to(torch.int64), 0).values.bool()
        inside = ok & hyp & mono & e9[None, :] & env_ok
        outside = ok & hyp & ~inside
        ev_members[f"m={m}"] = f"{int(e9.sum())}/{e9.numel()}"
        out_why["R_a hat(s) > R_a hat(t) for some s <= t"] += int((outside & ~mono).sum())
        out_why["|a_r(0)| > sqrt(n) beta2 for some r"] += int((outside & ~e9[None, :]).sum())
        out_why["(21) failed at some s <= t"] += int((outside & ~env_ok).sum())
        n_in, n_out = n_in + int(inside.sum()), n_out + int(outside.sum())
        ratio_rw = torch.where(inside, Rw / Rpw.clamp_min(1e-300), torch.zeros_like(Rw))
        worst_rw = max(worst_rw, float(ratio_rw.max()))
        worst_out = max(worst_out, float(torch.where(outside, Rw / Rpw.clamp_min(1e-300), torch.zeros_like(Rw)).max()))
        share_a = Ra / (Ra + math.sqrt(n) * B2)  # share of the movement term R_a := R̂_a in (√n β₂ + R_a)
        mat = inside & (share_a >= 0.25) & (share_a <= 0.75)
        mat_n += int(mat.sum())
        mat_worst = max(mat_worst, float(torch.where(mat, ratio_rw, torch.zeros_like(ratio_rw)).max()))
        mat_share = max(mat_share, float(torch.where(mat, share_a, torch.zeros_like(share_a)).max()))
        # the encoded R'_w pinned against Eq. (22) written out here independently (numpy, float64): R'_w is loose on
        # these runs (R̂_w ≈ R'_w/3), so the radius check alone would not notice a factor √n lost in the code
        tt, Ra_np, r0_np = t.cpu().numpy()[:, None], Ra.cpu().numpy(), r0.cpu().numpy()[None, :]
        indep = 2 * n ** 0.5 * (n ** 0.5 * B2 + Ra_np) * r0_np * (1 - np.exp(-lam0 * tt / 2)) / (alpha * lam0)
        pin_err = max(pin_err, float(np.abs(Rpw.cpu().numpy() - indep).max() / np.abs(indep).max()))
        Rpw_mut = Rpw / (math.sqrt(n) * (math.sqrt(n) * B2 + Ra)) * (B2 + Ra)  # drop both √n factors
        mut_rw += int(((Rw > Rpw_mut) & ok).sum())
        big_a = int((r["a"][0].abs() > math.sqrt(n) * B2).sum())
        for k in range(1, len(r["steps"]), max(1, len(r["steps"]) // 8)):
            table.append({"m": m, "t": float(t[k]), "loss/envelope": float(ratio_env[k].max()),
                          "R_w hat/R'_w (inside cells)": float(ratio_rw[k].max()), "hypothesis holds": bool(hyp[k].all()),
                          "members inside (22)": int(inside[k].sum())})
        table.append({"m": m, "neurons with |a_r(0)| > sqrt(n) beta2 (all seeds)": big_a})
    series = {"loss/envelope": {"x": [row["t"] for row in table if "t" in row and row["m"] == _widths(ctx)[0]],
                                "y": [row["loss/envelope"] for row in table if "t" in row and row["m"] == _widths(ctx)[0]],
                                "xlabel": "t", "ylabel": "|y-f(t)|^2 / (e^{-lambda0 t}|y-f(0)|^2)"}}
    ok = worst_env <= 1.0 and worst_rw <= 1.0
    record("holds" if ok else "violated", observed=max(worst_env, worst_rw), bound=1.0, table=table, series=series,
           evidence="test", inside=True,
           inside_reason=(f"(21) judged on the (t, member) cells where its hypothesis λ_min(H(s)) ≥ λ₀/2 held on the recorded "
                          f"s ≤ t; (22) on the {n_in} cells on every event its proof invokes (R̂_a(s) ≤ R̂_a(t) on s ≤ t, "
                          f"|a_r(0)| ≤ √n β₂ for every r, (21) on s ≤ t; {n_out} cells off an event are recorded apart); "
                          f"GD with η = {fz.TWO_LAYER['eta']} as the flow"),
           covers=["loss envelope"] + (["first-layer radius", "term: sqrt(n) beta2 (init level of a)"] if n_in else [])
           + (["term: R_a (movement of a)"] if mat_n else []),
           hypotheses={"max loss/envelope": worst_env, "max R_w hat/R'_w (inside cells)": worst_rw,
                       "(t, member) cells inside for (22) (all events) / outside (lambda_min held, an event failed)":
                           f"{n_in}/{n_out}",
                       "members on the event |a_r(0)| <= sqrt(n) beta2 for all r (proof of Lemma 9)": ev_members,
                       "outside cells per failed event": out_why,
                       "encoded R'_w vs Eq. (22) written independently (max rel. diff)": pin_err,
                       "(t, member) cells with R_a and sqrt(n) beta2 each >= 25% of their sum": mat_n,
                       "max R_w hat/R'_w over those cells": mat_worst},
           config={**fz.TWO_LAYER, "widths": LEM9_MATERIAL_M + tuple(_widths(ctx)),
                   "max share of term R_a (movement of a) where the hypothesis holds": mat_share,
                   "share of term sqrt(n) beta2 at that cell": 1 - mat_share},
           note=("" if mat_n else f"precondition of the R_a-term test not met at this draw: no inside cell at widths "
                                   f"{LEM9_MATERIAL_M} has R̂_a ≥ 25 % of √nβ₂ + R̂_a (max share "
                                   f"{mat_share:.3f}); that term stays untested here")
                + ("" if n_in else "; no (t, member) cell is on every event of the proof of (22) at this draw: the radius "
                                   "is recorded outside the hypotheses only"),
           tightness="max over recorded times of measured/bound (envelope on the cells where λ_min held; radius on the "
                     "cells inside)")
    if n_out:
        record("holds" if worst_out <= 1.0 else "violated", reading="outside-hypotheses", observed=worst_out, bound=1.0,
               config={**fz.TWO_LAYER, "widths": LEM9_MATERIAL_M + tuple(_widths(ctx))}, evidence="test", inside=False,
               inside_reason=f"an event of the proof of (22) fails on these {n_out} cells: {out_why}",
               hypotheses={"outside cells per failed event": out_why, "cells": n_out},
               tightness="max R̂_w/R'_w over the cells where λ_min held but an event of the proof of (22) failed",
               note="(22) on cells off an event its proof invokes (mostly |a_r(0)| > √nβ₂ for some r): reported, not counted")
    rejected = mut_env > 0 and mut_rw > 0
    record("holds" if rejected else "violated", role="companion", observed=min(mut_env, mut_rw), bound=0, ratio=None,
           note=f"wrong versions violated on the runs: envelope at rate 4λ_max(H+G)(0) {mut_env} times; R'_w without √n {mut_rw} times")
    assert pin_err < 1e-12, pin_err  # a handful of float64 operations per entry
    assert ok and worst_out <= 1.0, (worst_env, worst_rw, worst_out)  # (22) asserted on the outside cells too
    assert rejected


@pytest.mark.claim("zhu2022/lem-9")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="proof step of Lemma 9: the event |a_r(0)| ≤ √n β₂ for all r fails far more often than the "
                          "n e^{-n/2} counted (the union over the m neurons is missing); the lemma's conclusions hold")
def test_lemma9_output_weight_event_probability(ctx, record):
    """Proof step of Lemma 9 (reading "proof-step", a proof gap, not a false lemma): the proof uses |a_r(0)| ≤ √n β₂
    for every r and counts its failure as n e^{−n/2}; the union over r gives 1 − (1 − 2Φ̄(√n))^m ≈ 2m Φ̄(√n).
    Exact one-sided binomial test of the counted probability at level EVENT_ALPHA; the size of the gap is pinned by a
    two-sided exact binomial test (UNION_ALPHA) that the measured frequency agrees with the exact union probability, so a
    different wrong count would not pass as this finding."""
    n, m, E = 8, 256, ctx.pick(quick=4000, full=40000)
    a = draw(torch.randn, E, m, generator=record.generator({"t": "a-event"}), dtype=ctx.dtype, device=ctx.device) * B2
    fail_here = (a.abs() > math.sqrt(n) * B2).any(-1)  # the event written here, apart from tl.lemma9_event
    fails = int(fail_here.sum())
    # the production event that gates Lemma 9's inside cells must be this event on every draw
    assert torch.equal(~tl.lemma9_event(a, n, B2)["ok"], fail_here), "tl.lemma9_event is not |a_r(0)| ≤ √n β₂ for all r"
    delta = n * math.exp(-n / 2)
    test = failure_rate_test(fails, E, delta, alpha=EVENT_ALPHA)
    from scipy.stats import binomtest, norm
    union = 1 - (1 - 2 * norm.sf(math.sqrt(n))) ** m
    p_union = float(binomtest(fails, E, union).pvalue)
    assert p_union > UNION_ALPHA, f"measured frequency {fails / E:.3f} disagrees with the exact union probability {union:.3f}"
    ok = not test.rejects
    record("holds" if ok else "expected-failure", observed=test.rate, bound=delta, ratio=test.rate / delta,
           reading="proof-step", finding_type="" if ok else "proof-gap", evidence="test", inside=True,
           inside_reason=f"a_r(0) ~ N(0, β₂²) i.i.d. (n = {n}, m = {m}): the proof step's only hypothesis",
           false_alarm=UNION_ALPHA,  # the chance failure of this test: the p_union assert (rejection is the finding)
           config={"n": n, "m": m, "E": E},
           hypotheses={"p-value": test.p_value, "exact failure probability (union over r)": union,
                       "p-value of the measured frequency against the exact union (two-sided)": p_union},
           finding="" if ok else (f"Proof step, not the lemma: P(some |a_r(0)| > √n β₂) measured {test.rate:.3f} (exact union "
                                  f"{union:.3f}) at n={n}, m={m}, vs the n e^(-n/2) = {delta:.3f} counted in the proof "
                                  f"(p = {test.p_value:.1e}; factor {test.rate / delta:.1f}): the per-neuron tail was not unioned "
                                  "over the m neurons. The lemma's conclusions (loss envelope, radius R'_w) held on every run "
                                  "(test_loss_envelope_and_first_layer_radius)."))
    assert_claim(ok, f"failure rate {test.rate:.3f} > n e^(-n/2) = {delta:.3f}")


# Issue 19: the cells where the movement term R_w of Lemma 10's factor (3β₁√log(mn²) + R_w) is a material share. Under
# the NTK scaling α = √m the first layer moves by ≲ 0.2 of that factor; the scaling factor α of Eq. (16) is free in
# Appendix D (the non-lazy regime), and at the mean-field end α = m the neurons move by O(1) while λ_min(H) ≥ λ₀/2 still
# holds on most cells. The rate is scaled by α²/m, so η·λ_max(H(0)) is that of the base runs (H ∝ 1/α² at a fixed draw).
# Seeds 0–29: the largest R_w share on inside cells was 0.32–0.60, the largest R̂_a/R'_a over all cells 0.09–0.20.
LEM10_MATERIAL_CELLS = ((64, 64.0), (256, 256.0))


def _lem10_cells(ctx):
    """(m, α, cfg) of the Lemma 10 runs: the NTK-scaled widths, then the mean-field cells LEM10_MATERIAL_CELLS."""
    return [(m, None, None) for m in _widths(ctx)] + [
        (m, a, {**fz.TWO_LAYER, "eta": fz.TWO_LAYER["eta"] * a * a / m, "seeds": 8}) for m, a in LEM10_MATERIAL_CELLS]


@pytest.mark.claim("zhu2022/lem-10")
def test_output_layer_radius_and_projection_event(ctx, record):
    """max_r |a_r(t) − a_r(0)| ≤ R'_a(t) with R_w := R̂_w(t) (Eq. 23) where λ_min(H) ≥ λ₀/2 held; and the event
    max_{i,r}|w_r(0)ᵀx_i| ≤ 3β₁√(log(mn²)) over many inits (failure rate vs 1/n, exact binomial test at EVENT_ALPHA).
    Eq. (23) is judged (as stated) on the (t, member) cells on every event its proof invokes: λ_min(H(s)) ≥ λ₀/2 and
    R̂_w(s) ≤ R̂_w(t) (the hypothesis ‖w_r(s) − w_r(0)‖ ≤ R_w with R_w := R̂_w(t)) on the recorded s ≤ t, the projection
    event on the run's own init (tl.lemma10_event) and Eq. (21) on the recorded s ≤ t (used in the proof's gradient
    bound); the other cells where λ_min held are recorded apart (reading "outside-hypotheses") and asserted too.
    Both terms of the factor (3β₁√log(mn²) + R_w) are tested where material: the mean-field cells
    LEM10_MATERIAL_CELLS (α = m) have inside cells where R̂_w is ≥ 25 % of it (recorded; covered only when such a
    cell exists at this draw). Companion: R'_a with β₁ instead of 3β₁√log(mn²) and 2 instead of 2√n (the union/tail factor and the √n of the
    Cauchy–Schwarz step over the n samples dropped) must be violated on the runs. Dropping only the tail factor (the
    earlier companion) shrinks R'_a by ≈ 9× while the runs reach R̂_a ≈ R'_a/10, so its rejection hung on a single
    step of a single draw; with √n dropped too the wrong bound is ≈ 26× smaller, and the record reports the margin
    (max R̂_a/R'_a,wrong)."""
    table, worst, mut, mut_margin, pin_err = [], 0.0, 0, 0.0, 0.0
    share_w, share_init_min = 0.0, 1.0  # issue 19: shares of R_w := R̂_w and 3β₁√log(mn²) in their sum
    n_in, n_out, worst_out, ev_members = 0, 0, 0.0, {}
    out_why = {"R_w hat(s) > R_w hat(t) for some s <= t": 0, "projection event fails": 0, "(21) failed at some s <= t": 0}
    for m, a_, cfg in _lem10_cells(ctx):
        r = _run(ctx, m, cfg, a_)
        n, alpha, lam0, t = r["X"].shape[0], r["alpha"], _lam0(r), r["t"]
        res = ((r["y"] - r["f"]) ** 2).sum(-1)
        hyp = torch.cummin(torch.linalg.eigvalsh(r["H"])[..., 0], 0).values >= lam0 / 2
        _, _, Rw, Ra = _radii(r)
        r0 = res[0].sqrt()
        Rpa = torch.stack([tl.Rp_a(t, lam0, alpha, n, m, B1, Rw[:, e], float(r0[e])) for e in range(res.shape[1])], 1)
        ok = (Rpa > 0) & hyp
        mono = torch.cummax(Rw, 0).values <= Rw
        e10 = tl.lemma10_event(r["W"][0], r["X"], B1)["ok"]
        env_ok = torch.cummin((res <= res[0] * torch.exp(-lam0 * t)[:, None]).to(torch.int64), 0).values.bool()
        inside = ok & mono & e10[None, :] & env_ok
        outside = ok & ~inside
        ev_members[f"m={m}, alpha={alpha:g}"] = f"{int(e10.sum())}/{e10.numel()}"
        out_why["R_w hat(s) > R_w hat(t) for some s <= t"] += int((outside & ~mono).sum())
        out_why["projection event fails"] += int((outside & ~e10[None, :]).sum())
        out_why["(21) failed at some s <= t"] += int((outside & ~env_ok).sum())
        n_in, n_out = n_in + int(inside.sum()), n_out + int(outside.sum())
        ratio = torch.where(inside, Ra / Rpa.clamp_min(1e-300), torch.zeros_like(Ra))
        worst = max(worst, float(ratio.max()))
        worst_out = max(worst_out, float(torch.where(outside, Ra / Rpa.clamp_min(1e-300), torch.zeros_like(Ra)).max()))
        sw = Rw / (Rw + 3 * B1 * math.sqrt(math.log(m * n * n)))
        share_w = max(share_w, float(torch.where(inside, sw, torch.zeros_like(sw)).max()))
        share_init_min = min(share_init_min, 1 - float(torch.where(inside, sw, torch.zeros_like(sw)).max()))
        tt, Rw_np, r0_np = t.cpu().numpy()[:, None], Rw.cpu().numpy(), r0.cpu().numpy()[None, :]
        indep = (2 * n ** 0.5 * (3 * B1 * np.sqrt(np.log(m * n ** 2)) + Rw_np) * r0_np * (1 - np.exp(-lam0 * tt / 2))
                 / (alpha * lam0))  # Eq. (23) written out independently of theory.papers.zhu2022.two_layer
        pin_err = max(pin_err, float(np.abs(Rpa.cpu().numpy() - indep).max() / np.abs(indep).max()))
        Rpa_mut = Rpa / (math.sqrt(n) * (3 * B1 * math.sqrt(math.log(m * n * n)) + Rw)) * (B1 + Rw)
        mut += int(((Ra > Rpa_mut) & ok).sum())
        mut_margin = max(mut_margin, float(torch.where(ok, Ra / Rpa_mut.clamp_min(1e-300), torch.zeros_like(Ra)).max()))
        for k in range(1, len(r["steps"]), max(1, len(r["steps"]) // 6)):
            table.append({"m": m, "alpha": alpha, "t": float(t[k]), "R_a hat/R'_a (inside cells)": float(ratio[k].max()),
                          "members inside (23)": int(inside[k].sum()),
                          "max share of R_w (inside cells)": float(torch.where(inside[k], sw[k], torch.zeros_like(sw[k])).max())})
    E, m, n = ctx.pick(quick=2000, full=20000), 256, 8
    X = fz.two_layer_run(m, math.sqrt(m), ctx.device, ctx.dtype, ctx.seed, tuple(sorted(fz.TWO_LAYER.items())))["X"]
    W = draw(torch.randn, E, m, X.shape[1], generator=record.generator({"t": "proj"}), dtype=ctx.dtype, device=ctx.device) * B1
    fail_here = (W @ X.T).abs().amax((-1, -2)) > 3 * B1 * math.sqrt(math.log(m * n * n))  # written apart from tl
    fails = int(fail_here.sum())
    # the production event that gates Lemma 10's inside cells must be this event on every draw
    assert torch.equal(~tl.lemma10_event(W, X, B1)["ok"], fail_here), "tl.lemma10_event is not the projection event"
    # the event almost never fails at these sizes (3β₁√log(mn²) ≈ 11 standard deviations), so probe its threshold too:
    # inits scaled to max|w_rᵀx_i| = 0.5× and 2× the threshold written here must be inside and outside respectively
    peak = (W[:8] @ X.T).abs().amax((-1, -2)).view(-1, 1, 1)
    thr = 3 * B1 * math.sqrt(math.log(m * n * n))
    probe = [bool(tl.lemma10_event(W[:8] / peak * f * thr, X, B1)["ok"].all()) for f in (0.5, 2.0)]
    assert probe == [True, False], f"tl.lemma10_event's threshold is not 3β₁√log(mn²): {probe}"
    test = failure_rate_test(fails, E, 1 / n, alpha=EVENT_ALPHA)
    ok = worst <= 1.0 and not test.rejects
    # the projection event's rate: its threshold 3β₁√log(mn²) is ≈ 11 standard deviations, so its failure probability
    # (≤ 2mn·e^{−9 log(mn²)/2}) is far below 1/n for any Gaussian init: the rate test can fail only by a bug (consistency)
    tail = 2 * m * n * math.exp(-4.5 * math.log(m * n * n))
    record("holds" if not test.rejects else "violated", covers=["projection event"], evidence="consistency",
           false_alarm=EVENT_ALPHA, inside=True,
           inside_reason="the projection event needs only the Gaussian init and ‖x_i‖ = 1 (both hold by construction)",
           config={"E": E, "m": m, "n": n, "beta1": B1},
           hypotheses={"projection-event failures": f"{fails}/{E}", "p-value vs 1/n": test.p_value,
                       "union-bound tail 2mn e^{-9 log(mn^2)/2}": tail},
           note=(f"projection event max_(i,r) |w_r(0)ᵀx_i| ≤ 3β₁√log(mn²): {fails}/{E} failures (p = {test.p_value:.2g} "
                 f"against ≤ 1/n); its Gaussian tail is ≤ {tail:.1e}, far below 1/n = {1 / n:.3g}, so the rate can fail only "
                 "by a bug in the sampler or the event (consistency; the event's threshold is probed at 0.5× and 2×)"))
    record("holds" if worst <= 1.0 else "violated", observed=worst, bound=1.0, table=table,
           evidence="test", inside=True,
           inside_reason=(f"(23) judged on the {n_in} (t, member) cells on every event its proof invokes (λ_min(H(s)) ≥ λ₀/2 "
                          f"and R̂_w(s) ≤ R̂_w(t) on s ≤ t, the projection event on the run's init, (21) on s ≤ t; {n_out} "
                          "cells off an event recorded apart)"),
           config={**fz.TWO_LAYER, "widths": _widths(ctx), "mean-field cells (m, alpha = m; rate x alpha^2/m, 8 seeds)":
                   LEM10_MATERIAL_CELLS, "max share of term R_w (movement of w)": share_w,
                   "min share of term 3 beta1 sqrt(log(m n^2))": share_init_min},
           covers=(["output-layer radius"] if n_in else [])
           + (["term: 3 beta1 sqrt(log(m n^2)) (init level of w^T x)"] if n_in and share_init_min >= 0.25 else [])
           + (["term: R_w (movement of w)"] if n_in and 0.25 <= share_w <= 0.75 else []),
           note=(f"the movement term R_w := R̂_w reaches {share_w:.2f} of (3β₁√log(mn²) + R_w) on the inside cells (the "
                 "mean-field cells α = m carry it: under α = √m it stays ≲ 0.2)"
                 + ("" if share_w >= 0.25 else "; below 25 % at this draw, so that term stays untested here"))
                + ("" if n_in else "; no (t, member) cell is on every event of the proof of (23) at this draw: the radius "
                                   "is recorded outside the hypotheses only"),
           hypotheses={"projection-event failures": f"{fails}/{E}", "p-value vs 1/n": test.p_value,
                       "encoded R'_a vs Eq. (23) written independently (max rel. diff)": pin_err,
                       "(t, member) cells inside for (23) (all events) / outside (lambda_min held, an event failed)":
                           f"{n_in}/{n_out}",
                       "members on the projection event (own init)": ev_members, "outside cells per failed event": out_why},
           tightness="max over recorded times of R̂_a(t)/R'_a(t) on the inside cells")
    if n_out:
        record("holds" if worst_out <= 1.0 else "violated", reading="outside-hypotheses", observed=worst_out, bound=1.0,
               evidence="test", inside=False, inside_reason=f"an event of the proof of (23) fails on these {n_out} cells: {out_why}",
               config={**fz.TWO_LAYER, "widths": _widths(ctx)}, hypotheses={"outside cells per failed event": out_why, "cells": n_out},
               tightness="max R̂_a/R'_a over the cells where λ_min held but an event of the proof of (23) failed",
               note="(23) on cells off an event its proof invokes: reported, not counted")
    record("holds" if mut > 0 else "violated", role="companion", observed=mut_margin, bound=1.0,
           note=(f"wrong version R'_a with β₁ for 3β₁√log(mn²) and 2 for 2√n: violated {mut} times on the runs "
                 f"(max R̂_a/R'_a,wrong = {mut_margin:.3g})"))
    assert pin_err < 1e-12, pin_err
    assert ok and worst_out <= 1.0, (worst, worst_out, test)  # (23) asserted on the outside cells too
    assert mut > 0


def _short_run(ctx, m, cfg=None):
    """GD from the same init as two_layer_run with a step small enough to resolve [0, min(t₁, t₂)]. R'_w, R'_a, t₁, t₂
    use each member's own ‖y − f(0)‖ (r0, shape (E,)); the window is the smallest over the members. cfg: the
    configuration of two_layer_run (fz.TWO_LAYER unless given)."""
    r = _run(ctx, m, cfg)
    X, y, alpha, n = r["X"], r["y"], r["alpha"], r["X"].shape[0]
    lam0 = _lam0(r)
    r0 = ((y - r["f"][0]) ** 2).sum(-1).sqrt()  # (E,)
    Ra = _Ra(lam0, alpha, n, m)
    Rw = tl.R_w(lam0, alpha, n, m, B1, B2, Ra)
    t1 = [tl.t1(lam0, alpha, n, B2, Ra, Rw, float(v)) for v in r0]
    t2 = [tl.t2(lam0, alpha, n, m, B1, Ra, Rw, float(v)) for v in r0]
    tmin = min(min(t1), min(t2))
    if not (math.isfinite(tmin) and tmin > 0):
        raise ValueError(f"min(t1, t2) must be finite and positive, got {tmin}")
    steps = 60
    eta = tmin / steps
    from theory.sim.models import DeepMLP
    net = DeepMLP([r["W"][0].clone(), r["a"][0].clone()[:, None, :]], r["net"].act, 1.0 / alpha)

    def obs(t, ps, u):
        return {"W": ps[0].detach().clone(), "a": ps[1][:, 0, :].detach().clone(), "H": layer_kernels(net, X, ps)[0],
                "f": u.detach().clone()}

    tr = gd(net, X, y, loss="squared", lr=n * eta, steps=steps, record=range(steps + 1), observe=obs)
    return dict(r=r, tr=tr, eta=eta, tmin=tmin, t1=t1, t2=t2, Ra=Ra, Rw=Rw, r0=r0, lam0=lam0)


def _Rp_members(fn, t, r0, *args):
    """R'(t) for every member's own r0: (T, E)."""
    return torch.stack([fn(t, *args, float(v)) for v in r0], 1)


def _lemma11_events(s, with_conclusions=False):
    """The events the proof of Lemma 11 invokes, per member of the short run s (induction with Lemmas 7–10): t ≤ the
    member's own min(t₁, t₂) (by construction), Lemma 7's event (base case λ_min(H(0)) ≥ 3λ₀/4; Lemma 8's last step),
    Lemma 8's Markov events at every step, Lemma 9's |a_r(0)| ≤ √n β₂ for every r, Lemma 10's projection event, and
    Eq. (21) at every step (exact under the flow; checked on the GD stand-in). with_conclusions adds Lemma 11's own
    conclusions at every step (the event Theorem 3's Eq. (25) is stated on). Returns tl.event_report plus figures."""
    r, tr, lam0 = s["r"], s["tr"], s["lam0"]
    X, y, alpha, m = r["X"], r["y"], r["alpha"], r["m"]
    n = X.shape[0]
    W, a, H = tr.stacked("W"), tr.stacked("a"), tr.stacked("H")
    f = torch.stack(tr.obs["f"])  # (T, E, n)
    t = torch.tensor(tr.steps, dtype=X.dtype, device=X.device) * s["eta"]
    res = ((y - f) ** 2).sum(-1)
    e7 = tl.lemma7_event(H[0], X, m, alpha, B2)
    mk = tl.lemma8_markov_event(X, W[0], a[0], a, H, alpha, B1, B2, s["Ra"], s["Rw"])
    e9 = tl.lemma9_event(a[0], n, B2)
    e10 = tl.lemma10_event(W[0], X, B1)
    window = torch.tensor([s["tmin"] <= min(a_, b_) for a_, b_ in zip(s["t1"], s["t2"])], device=X.device)
    ev = {"t <= min(t1, t2) of the member": window, "event of Lemma 7 (base case, Lemma 8's Eq. 17 step)": e7["ok"],
          "Markov events of Lemma 8 (19)-(20) at every step": mk["ok"].all(0),
          "|a_r(0)| <= sqrt(n) beta2 for all r (Lemma 9)": e9["ok"], "projection event of Lemma 10": e10["ok"],
          "(21) at every step": (res <= res[0] * torch.exp(-lam0 * t)[:, None] * (1 + 1e-12)).all(0)}
    if with_conclusions:
        Rpw = _Rp_members(tl.Rp_w, t, s["r0"], lam0, alpha, n, B2, s["Ra"])
        Rpa = _Rp_members(tl.Rp_a, t, s["r0"], lam0, alpha, n, m, B1, s["Rw"])
        ev["conclusions of Lemma 11 at every step"] = ((torch.linalg.eigvalsh(H)[..., 0] >= lam0 / 2)
                                                      & ((W - W[0]).norm(dim=-1).amax(-1) <= Rpw)
                                                      & ((a - a[0]).abs().amax(-1) <= Rpa)).all(0)
    rep = tl.event_report(ev)
    rep["figures"] = {"|H(0)-Hinf|_2/lambda0 per member": [float(v) for v in e7["dev"]],
                      "max_r |a_r(0)|/(sqrt(n) beta2) per member": [float(v) for v in e9["ratio"]],
                      "max_ir |w_r(0)^T x_i|/(3 beta1 sqrt(log(m n^2))) per member": [float(v) for v in e10["ratio"]],
                      "max Markov ratios (19), (20)": [float(mk["r19"].max()), float(mk["r20"].max())]}
    return rep


# Issue 19: on fz.TWO_LAYER (d = 5, n = 8) no member is on every event of Lemma 11's proof: Lemma 7's ‖H(0) − H^∞‖₂ ≤
# λ₀/4 fails on all of them at m ≤ 1024 (‖H(0) − H^∞‖₂/λ₀ ≥ 0.67 at m = 256, seeds 0–9; λ₀ = 0.08–0.17), and Lemma 9's
# |a_r(0)| ≤ √8 β₂ on most (per-neuron tail 2Φ̄(√8) = 4.7e-3: 30/40 members fail at m = 256, 40/40 at m ≥ 1024; at
# m = 4096 Lemma 7's event holds on 11/40 and Lemma 9's on none). A larger m helps Lemma 7 but hurts Lemma 9 at fixed
# n, so the inside configuration raises n (Lemma 9's level √n β₂) and d (near-orthogonal data, λ₀ ≈ 0.33):
# fz.TWO_LAYER_INSIDE (d = 96, n = 20) at INSIDE_M = 2048. Members inside at seeds 0–19: 75/80, ≥ 3/4 at every seed
# (off: Lemma 7's event 3, ‖H(0) − H^∞‖₂/λ₀ = 0.11–0.27; |a_r(0)| > √20 β₂ for some r 2, P = 1.6 % per member). Smaller
# sizes leave members off at some seed (seeds 0–19): d = 64, n = 16, m = 2048: 62/80, one seed 1/4 (|a_r(0)| > 4β₂ for
# some r: P = 12 % per member); m = 1536: 68/80, ≥ 2/4; d = 64, n = 20, m = 2048: 69/80, ≥ 2/4 (Lemma 7's event off on 10).
INSIDE_M = 2048


def _window_members(s):
    """Per-member figures of Lemma 11's conclusions on the short run s: min_t λ_min(H(t))/λ₀, max_{t>0} R̂_w/R'_w and
    R̂_a/R'_a (each member's own r0), max_{t>0} R̂_w/(R'_w/100) (the companion), each (E,); and the certified
    coverage t₁(R_a = 0)/t_half per member (t_half from the long run of the same init)."""
    r, tr, lam0 = s["r"], s["tr"], s["lam0"]
    n, alpha, m = r["X"].shape[0], r["alpha"], r["m"]
    t = torch.tensor(tr.steps, dtype=r["X"].dtype, device=r["X"].device) * s["eta"]
    W, a, H = tr.stacked("W"), tr.stacked("a"), tr.stacked("H")
    dW = (W - W[0]).norm(dim=-1).amax(-1)  # (T, E)
    da = (a - a[0]).abs().amax(-1)
    Rpw = _Rp_members(tl.Rp_w, t, s["r0"], lam0, alpha, n, B2, s["Ra"])
    Rpa = _Rp_members(tl.Rp_a, t, s["r0"], lam0, alpha, n, m, B1, s["Rw"])
    res_e = ((r["y"] - r["f"]) ** 2).sum(-1)  # (T, E) on the long run
    t_half_e = [float(r["t"][int((res_e[:, e] <= res_e[0, e] / 2).nonzero()[0])]) for e in range(res_e.shape[1])]
    Rw0 = tl.R_w(lam0, alpha, n, m, B1, B2, 0.0)
    cover = [tl.t1(lam0, alpha, n, B2, 0.0, Rw0, float(v)) / th for v, th in zip(s["r0"], t_half_e)]
    return {"lmin": torch.linalg.eigvalsh(H)[..., 0].amin(0) / lam0, "rw": (dW[1:] / Rpw[1:]).amax(0),
            "ra": (da[1:] / Rpa[1:]).amax(0), "mut": (dW[1:] / (0.01 * Rpw[1:])).amax(0),
            "cover": torch.tensor(cover, dtype=r["X"].dtype, device=r["X"].device), "t_half": t_half_e}


def _lemma11_regime(cov, m, n):
    """The regime and the width dependence of Lemma 11's vacuity finding: under α = √m, β₁ = β₂ = 1 (NTK scaling) λ₀,
    R_a's legible part and R_w do not depend on m while R'_w's coefficient ∝ 1/α, so t₁ ∝ √m at a fixed t_half: the
    certified coverage cov at width m reaches 1e-2 near m·(1e-2/cov)²."""
    m_needed = m * (1e-2 / cov) ** 2 if cov > 0 else math.inf
    return (f" Regime: α = √m, β₁ = β₂ = 1 (NTK scaling of Appendix D's runs), not Theorem 3's α ≍ 1, β ≍ m^(−c); in this regime "
            f"the coverage grows like √m (t₁ ∝ α), so at n = {n} it would reach 1e-2 only near m ≈ {m_needed:.1g}.")


@pytest.mark.claim("zhu2022/lem-11")
def test_joint_control_up_to_min_t1_t2(ctx, record):
    """For t < min(t₁, t₂) (R_a = (α/n)√(λ₀/(8nm)), RA_READING; R_w from its formula, per-member ‖y − f(0)‖): λ_min(H(t)) ≥ λ₀/2,
    |a_r(t) − a_r(0)| ≤ R'_a(t), ‖w_r(t) − w_r(0)‖ ≤ R'_w(t) at every GD step (η = min(t₁,t₂)/60); and how much of
    training the window covers (vacuous when it is < 1% of the time the loss takes to halve).
    Hypothesis report per member (_lemma11_events): on fz.TWO_LAYER no member is on every event; the same conclusions
    are judged on fz.TWO_LAYER_INSIDE at INSIDE_M on the members inside (record "as-stated"; the others "outside-
    hypotheses", asserted too; "not-applicable" at a draw with none inside).
    Companion: R'_w 100× smaller must be violated (on both configurations)."""
    m = _widths(ctx)[0]
    s = _short_run(ctx, m)
    r, tr = s["r"], s["tr"]
    n, alpha = r["X"].shape[0], r["alpha"]
    t = torch.tensor(tr.steps, dtype=ctx.dtype, device=ctx.device) * s["eta"]
    W, a, H = tr.stacked("W"), tr.stacked("a"), tr.stacked("H")
    lmin = torch.linalg.eigvalsh(H)[..., 0]
    dW = (W - W[0]).norm(dim=-1).amax(-1)  # (T, E)
    da = (a - a[0]).abs().amax(-1)
    Rpw = _Rp_members(tl.Rp_w, t, s["r0"], s["lam0"], alpha, n, B2, s["Ra"])
    Rpa = _Rp_members(tl.Rp_a, t, s["r0"], s["lam0"], alpha, n, m, B1, s["Rw"])
    ok_l = bool((lmin >= s["lam0"] / 2).all())
    rw, ra = float((dW[1:] / Rpw[1:]).max()), float((da[1:] / Rpa[1:]).max())
    # coverage: time for the long run to halve the loss vs min(t1, t2)
    res = ((r["y"] - r["f"]) ** 2).sum(-1).mean(-1)
    t_half = float(r["t"][int((res <= res[0] / 2).nonzero()[0])])
    cover = s["tmin"] / t_half
    # certified coverage, whatever the illegible R_a ≥ 0: R_w decreases and the coefficient of R'_w increases with R_a,
    # so t₁ (hence min(t₁, t₂)) is largest at R_a = 0; each member against the time its own loss takes to halve
    res_e = ((r["y"] - r["f"]) ** 2).sum(-1)  # (T, E)
    t_half_e = [float(r["t"][int((res_e[:, e] <= res_e[0, e] / 2).nonzero()[0])]) for e in range(res_e.shape[1])]
    Rw0 = tl.R_w(s["lam0"], alpha, n, m, B1, B2, 0.0)
    t1_free = [tl.t1(s["lam0"], alpha, n, B2, 0.0, Rw0, float(v)) for v in s["r0"]]
    cover_cert = max(a / b for a, b in zip(t1_free, t_half_e))
    fw = torch.stack([tr.obs["f"][k] for k in (0, len(tr.steps) - 1)])  # (2, E, n)
    dloss = float(((((r["y"] - fw[0]) ** 2).sum(-1) - ((r["y"] - fw[1]) ** 2).sum(-1)).abs()
                   / ((r["y"] - fw[0]) ** 2).sum(-1)).max())
    ok = ok_l and rw <= 1 and ra <= 1
    ev, f0 = _lemma11_events(s), _window_members(s)
    ins0 = torch.tensor(ev["inside"], device=f0["lmin"].device)
    hyp0 = {"hypothesis report (per member)": ev,
            "t1 (min over members)": min(s["t1"]), "t2 (min over members)": min(s["t2"]), "R_a ((alpha/n) sqrt(lambda0/(8nm)))": s["Ra"],
            "R_w": s["Rw"], "lambda_min ok": ok_l, "max R_w hat/R'_w": rw, "max R_a hat/R'_a": ra,
            "t to halve loss": t_half, "coverage min(t1,t2)/t_half": cover,
            "t1 at R_a=0 (upper bound for every R_a >= 0), per member": t1_free,
            "certified coverage max_e t1(R_a=0)/t_half,e": cover_cert,
            "max relative loss change over the window": dloss}
    # the members on every event of the proof (as stated, inside) and the others (inside False), each judged apart
    for inside0, sel in ((True, ins0), (False, ~ins0)):
        if not bool(sel.any()):
            continue
        l0, w0_, a0_ = float(f0["lmin"][sel].min()), float(f0["rw"][sel].max()), float(f0["ra"][sel].max())
        cov0 = float(f0["cover"][sel].max())
        ok0 = l0 >= 0.5 and w0_ <= 1 and a0_ <= 1
        v0 = ("vacuous" if cov0 < 1e-2 else "holds") if ok0 else "violated"
        record(v0, observed=max(w0_, a0_), bound=1.0, config={"m": m, **fz.TWO_LAYER, "steps": 60, "eta": s["eta"]},
               covers=["lambda_min", "a radius", "w radius"] if inside0 else [],
               reading="as-stated" if inside0 else "outside-hypotheses",
               finding_type="vacuous" if v0 == "vacuous" else "", evidence="test", inside=inside0,
               inside_reason=(f"{int(sel.sum())} members on every event the proof invokes (Lemmas 7–10, (21), t ≤ min(t1, t2))"
                              if inside0 else f"members off an event the proof invokes: {'; '.join(ev['outside_reasons'])}"),
               note=(f"hypothesis report (events the proof invokes, per member): {ev['members inside']} members inside; on "
                     f"the judged members min λ_min(H(t))/λ₀ = {l0:.3f}, max R̂_w/R'_w = {w0_:.3g}, max R̂_a/R'_a = {a0_:.3g}"
                     + ("" if inside0 else "; reported, never counted against the paper (the vacuity, a property of the "
                                           "window's length, does not depend on the events)")),
               hypotheses=hyp0, tightness="max over steps and the judged members of R̂/R' (radii)",
               finding=("" if v0 != "vacuous" else
                        f"All three conditions hold on [0, min(t1,t2)], but the window is negligible: min(t1,t2) = {s['tmin']:.2g} "
                        f"is {cover:.1e} of the time the loss takes to halve ({t_half:.2g}), and for every value of the "
                        f"illegible R_a t1 ≤ t1(R_a=0), at most {cov0:.1e} of it; over the window the loss changes by "
                        f"{dloss:.1e} (relative), so the conclusions restate their values at t = 0."
                        + _lemma11_regime(cov0, m, n)))
    mutated = float((dW[1:] / (0.01 * Rpw[1:])).max())  # wrong version: R'_w 100× smaller
    record("holds" if mutated > 1 else "violated", role="companion", observed=mutated, bound=1.0,
           note=f"wrong version R'_w/100: max R̂_w/(R'_w/100) = {mutated:.3g} (> 1: rejected)")
    # issue 19: the same conclusions on fz.TWO_LAYER_INSIDE at INSIDE_M, judged on the members on every event of the
    # proof (the others recorded apart, reading "outside-hypotheses", and asserted too)
    si = _short_run(ctx, INSIDE_M, fz.TWO_LAYER_INSIDE)
    evi, fi = _lemma11_events(si), _window_members(si)
    ins = torch.tensor(evi["inside"], device=fi["lmin"].device)
    cfg_i = {"m": INSIDE_M, **fz.TWO_LAYER_INSIDE, "steps": 60, "eta": si["eta"], "lambda0": si["lam0"],
             "R_a": "(alpha/n)*sqrt(lambda0/(8nm))"}
    hyp_i = {"hypothesis report (per member)": evi, "R_a ((alpha/n) sqrt(lambda0/(8nm)))": si["Ra"], "R_w": si["Rw"],
             "min_t lambda_min(H(t))/lambda0 per member": fi["lmin"], "max R_w hat/R'_w per member": fi["rw"],
             "max R_a hat/R'_a per member": fi["ra"], "certified coverage t1(R_a=0)/t_half per member": fi["cover"]}

    def _judge_i(sel):
        l_, w_, a_ = float(fi["lmin"][sel].min()), float(fi["rw"][sel].max()), float(fi["ra"][sel].max())
        return l_, w_, a_, l_ >= 0.5 and w_ <= 1 and a_ <= 1

    ok_in = ok_out = True
    if bool(ins.any()):
        l_in, rw_in, ra_in, ok_in = _judge_i(ins)
        cov_in = float(fi["cover"][ins].max())
        v_in = ("vacuous" if cov_in < 1e-2 else "holds") if ok_in else "violated"
        record(v_in, observed=max(rw_in, ra_in), bound=1.0, config=cfg_i, covers=["lambda_min", "a radius", "w radius"],
               finding_type="vacuous" if v_in == "vacuous" else "", hypotheses=hyp_i, evidence="test", inside=True,
               inside_reason=(f"{evi['members inside']} members on every event the proof invokes: t ≤ their own "
                              "min(t1, t2), Lemma 7's event, Lemma 8's Markov events at every step, |a_r(0)| ≤ √n β₂ for "
                              "every r, Lemma 10's projection event, (21) at every step (per-member figures in hypotheses)"),
               tightness="max over steps and the members inside of R̂/R' (radii); min λ_min(H(t))/λ₀ in the note",
               note=(f"inside the hypotheses: {evi['members inside']} members on every event the proof invokes (d = "
                     f"{fz.TWO_LAYER_INSIDE['d']}, n = {fz.TWO_LAYER_INSIDE['n']}, m = {INSIDE_M}); on them min λ_min(H(t))/λ₀ = "
                     f"{l_in:.3f} (≥ 0.5), max R̂_w/R'_w = {rw_in:.3g}, max R̂_a/R'_a = {ra_in:.3g}"),
               finding=("" if v_in != "vacuous" else
                        f"Inside every event of the proof the three conclusions hold on [0, min(t1,t2)], but for every value "
                        f"of the illegible R_a the window is at most {cov_in:.1e} of the time the loss takes to halve."
                        + _lemma11_regime(cov_in, INSIDE_M, fz.TWO_LAYER_INSIDE["n"])))
    else:
        record("not-applicable", config=cfg_i, hypotheses=hyp_i, evidence="consistency", inside=False,
               inside_reason="no member of the inside configuration is on every event the proof invokes at this draw",
               note=(f"precondition not met at this draw: no member of the inside configuration is on every event the "
                     f"proof invokes ({'; '.join(evi['outside_reasons'])}); its conclusions are recorded outside only"))
    if not bool(ins.all()):
        l_out, rw_out, ra_out, ok_out = _judge_i(~ins)
        record("holds" if ok_out else "violated", reading="outside-hypotheses", observed=max(rw_out, ra_out), bound=1.0,
               config=cfg_i, hypotheses=hyp_i, tightness="max R̂/R' (radii) over the members off an event",
               evidence="test", inside=False, inside_reason=f"members off an event: {'; '.join(evi['outside_reasons'])}",
               note=(f"members of the inside configuration off an event ({'; '.join(evi['outside_reasons'])}): min "
                     f"λ_min/λ₀ = {l_out:.3f}; reported, never counted against the paper"))
    sel_i = ins if bool(ins.any()) else ~ins  # the members inside; all of them at a draw with none inside
    mut_i = float(fi["mut"][sel_i].min())
    record("holds" if mut_i > 1 else "violated", role="companion", observed=mut_i, bound=1.0,
           note=(f"wrong version R'_w/100 on the inside configuration: min over the members "
                 f"{'inside' if bool(ins.any()) else '(none inside: all)'} of max_t R̂_w/(R'_w/100) = {mut_i:.3g} "
                 "(> 1 on every one: rejected)"))
    assert ok, (ok_l, rw, ra)
    assert mutated > 1
    assert ok_in and ok_out, hyp_i
    assert mut_i > 1


@pytest.mark.claim("zhu2022/thm-3")
def test_stability_bound_24_and_init_events(ctx, record):
    """(24): P(f_t, ε) ≤ (ε/α) Σ_r |a_r(t)| ‖w_r(t)‖ at every recorded t (closed form of P for scalar output);
    (b) per-neuron init events |a_r(0)| ≤ √(2/π) n β₂ and ‖w_r(0)‖ ≤ 4β₁√d + 2β₁√(log n) vs the stated 1/n rate
    (exact one-sided binomial tests over all neurons, family-wise EVENT_ALPHA); (c) Eq. (25) with measured maxima in place
    of R'_a, R'_w (reading "proof-step": the proof's substitution step, on runs past the statement's window), judged on
    the members on both init events for every neuron (the events that substitution invokes; tl.thm3_init_events), the
    others recorded apart (reading "outside-hypotheses") and asserted too. (24) is Cauchy–Schwarz and invokes no event
    (consistency). Companions: (24) with max_r instead of Σ_r; the |a_r(0)| event with the mean
    √(2/π)β₂ in place of the Markov level √(2/π)nβ₂ (must fail at a rate above 1/n)."""
    eps, Nt = 0.1, 256
    gen = record.generator({"t": "thm3"})
    table, worst24, mut24, worst25 = [], 0.0, 0, 0.0
    worst25_out, n_in, n_out, reports = 0.0, 0, 0, {}
    fa_n = fw_n = fa_mut = tot = 0
    sh_a = sh_w = 0.0  # issue 19: largest share of the measured radii R̂_a, R̂_w in the two factors of (25)
    for m in _widths(ctx):
        r = _run(ctx, m)
        d, n, alpha = r["X"].shape[1], r["X"].shape[0], r["alpha"]
        Xt = draw(torch.randn, Nt, d, generator=gen, dtype=ctx.dtype, device=ctx.device)
        Xt = Xt / Xt.norm(dim=1, keepdim=True)
        _, _, Rw, Ra = _radii(r)
        sh_a = max(sh_a, float((Ra / (Ra + math.sqrt(2 / math.pi) * n * B2)).max()))
        sh_w = max(sh_w, float((Rw / (Rw + 4 * B1 * math.sqrt(d) + 2 * B1 * math.sqrt(math.log(n)))).max()))
        ie = tl.thm3_init_events(r["a"][0], r["W"][0], n, B1, B2)
        rep_m = tl.event_report({"|a_r(0)| <= sqrt(2/pi) n beta2 for all r": ie["ok_a"],
                                 "|w_r(0)| <= 4 beta1 sqrt(d) + 2 beta1 sqrt(log n) for all r": ie["ok_w"]})
        reports[f"m={m}"] = {"members inside": rep_m["members inside"], "outside_reasons": rep_m["outside_reasons"],
                             "max ratios (a, w)": [float(ie["ratio_a"].max()), float(ie["ratio_w"].max())]}
        inside_m = torch.tensor(rep_m["inside"], device=ctx.device)
        from theory.sim.models import DeepMLP
        for k in range(0, len(r["steps"]), max(1, len(r["steps"]) // 8)):
            net = DeepMLP([r["W"][k], r["a"][k][:, None, :]], r["net"].act, 1.0 / alpha)
            G = pt.input_grads(net, Xt)
            P = pt.stability_scalar(G, eps)  # (E,)
            b24 = tl.eq24_bound(r["a"][k], r["W"][k], alpha, eps)
            bmax = eps / alpha * (r["a"][k].abs() * r["W"][k].norm(dim=-1)).amax(-1)
            b25 = torch.tensor([tl.eq25_bound(eps, m, alpha, n, d, B1, B2, float(Ra[k, e]), float(Rw[k, e]))
                                for e in range(P.shape[0])], dtype=ctx.dtype, device=ctx.device)
            worst24 = max(worst24, float((P / b24).max()))
            worst25 = max(worst25, float(torch.where(inside_m, P / b25, torch.zeros_like(P)).max()))
            worst25_out = max(worst25_out, float(torch.where(~inside_m, P / b25, torch.zeros_like(P)).max()))
            n_in, n_out = n_in + int(inside_m.sum()), n_out + int((~inside_m).sum())
            mut24 += int((P > bmax).sum())
            table.append({"m": m, "t": float(r["t"][k]), "P/eps": float(P.mean() / eps), "P/(24)": float((P / b24).max()),
                          "P/(25) measured radii": float((P / b25).max())})
        a0, w0 = r["a"][0], r["W"][0]
        bad_a = a0.abs() > math.sqrt(2 / math.pi) * n * B2  # per neuron, written apart from tl.thm3_init_events
        bad_w = w0.norm(dim=-1) > 4 * B1 * math.sqrt(d) + 2 * B1 * math.sqrt(math.log(n))
        fa, fw = int(bad_a.sum()), int(bad_w.sum())
        # ie (above, from the same a0, w0): the production events that gate Thm 3's inside members
        assert torch.equal(ie["ok_a"], ~bad_a.any(-1)) and torch.equal(ie["ok_w"], ~bad_w.any(-1)), \
            "tl.thm3_init_events differs from the per-neuron events of Eq. (25)'s proof"
        # the ratios too (every member inside leaves the flags blind to a looser threshold)
        ra = a0.abs().amax(-1) / (math.sqrt(2 / math.pi) * n * B2)
        rw = w0.norm(dim=-1).amax(-1) / (4 * B1 * math.sqrt(d) + 2 * B1 * math.sqrt(math.log(n)))
        assert torch.allclose(ie["ratio_a"], ra, rtol=1e-12, atol=0) and torch.allclose(ie["ratio_w"], rw, rtol=1e-12, atol=0), \
            "tl.thm3_init_events' ratios differ from Eq. (25)'s events"
        fa_n, fw_n, tot = fa_n + fa, fw_n + fw, tot + a0.numel()
        fa_mut += int((a0.abs() > math.sqrt(2 / math.pi) * B2).sum())
        table.append({"m": m, "per-neuron |a_r(0)| event failure": fa / a0.numel(), "per-neuron |w_r(0)| event failure": fw / a0.numel()})
    # ‖∇f‖ of the last network (widest m, last recorded t) vs the core's default opnorm and its SVD (member 0, 16 rows)
    ctl = input_grad_control(net, Xt, G)
    n = 8
    # two tests at EVENT_ALPHA / 2 each: family-wise EVENT_ALPHA (union bound)
    ta, tw = failure_rate_test(fa_n, tot, 1 / n, alpha=EVENT_ALPHA / 2), failure_rate_test(fw_n, tot, 1 / n, alpha=EVENT_ALPHA / 2)
    # (24) is Cauchy–Schwarz: P/(24) ≤ E|wᵀu|/(‖w‖ε) = c_d for every network whatever its weights (scalar output,
    # closed form of def-1), so its record is a consistency check of the code (evidence "consistency"), not evidence
    cd = pt.c_d(r["X"].shape[1])
    ok24 = worst24 <= cd * (1 + 1e-12)
    record("holds" if ok24 else "violated", observed=worst24, bound=1.0, evidence="consistency", covers=["(24) Cauchy-Schwarz"],
           inside=True, inside_reason="(24) is Cauchy–Schwarz on the closed form of P (scalar output): it invokes no event",
           config={**fz.TWO_LAYER, "eps": eps}, table=table,
           tightness=f"max P/(24) over times and seeds; ≤ c_d = {cd:.3f} for any weights (Cauchy–Schwarz)",
           note="identity-grade: holds for every network; a check of the code, never on its own evidence for Theorem 3")
    ok = worst25 <= 1.0 and not ta.rejects and not tw.rejects
    init_terms = ["term: sqrt(2/pi) n beta2 (init level of a)", "term: 4 beta1 sqrt(d) + 2 beta1 sqrt(log n) (init level of w)"]
    assert n_in > 0, f"no member on both init events of (25) at any width: {reports}"
    # (b) the per-neuron init events against their stated rate 1/n: two exact binomial tests, family-wise EVENT_ALPHA
    pmin = min(ta.p_value, tw.p_value)
    record("holds" if not (ta.rejects or tw.rejects) else "violated", observed=pmin, bound=EVENT_ALPHA / 2, ratio=None,
           false_alarm=EVENT_ALPHA, figure_kind="slack", covers=["per-neuron init events"], evidence="consistency",
           rejects=(f"the |a_r(0)| event at the mean level √(2/π)β₂ (no factor n): failure rate {fa_mut / tot:.1%} of "
                    "neurons, rejected against ≤ 1/n by the same test (companion)"),
           inside=True, inside_reason="a_r(0) ~ N(0, β₂²), w_r(0) ~ N(0, β₁² I_d) i.i.d.: the events' only hypotheses",
           note=("consistency: the levels √(2/π)nβ₂ and 4β₁√d + 2β₁√(log n) sit far in the Gaussian tails (per-neuron "
                 f"failure rates {ta.rate:.1e}, {tw.rate:.1e}; tail probabilities of order 1e-10) against the stated 1/n = "
                 f"{1 / n:.3g}, so the test can fail only by a bug in the sampler or the events"),
           config={**fz.TWO_LAYER, "neurons": tot, "family-wise alpha": EVENT_ALPHA},
           hypotheses={"|a_r(0)| event failure rate": ta.rate, "p-value |a_r(0)| event vs 1/n": ta.p_value,
                       "|w_r(0)| event failure rate": tw.rate, "p-value |w_r(0)| event vs 1/n": tw.p_value},
           tightness="smallest p-value of the two one-sided exact binomial tests of the per-neuron failure frequency "
                     "against the stated 1/n, vs the level EVENT_ALPHA/2 of each")
    # (c) Eq. (25) with the measured radii in place of R'_a, R'_w: the proof's substitution step (runs past the window
    # t ≤ min(t₁, t₂) of the statement), judged on the members on both init events
    record("holds" if worst25 <= 1.0 else "violated", observed=worst25, bound=1.0, reading="proof-step", evidence="test",
           inside=True,
           inside_reason=(f"the step's events, |a_r(0)| ≤ √(2/π)nβ₂ and ‖w_r(0)‖ ≤ 4β₁√d + 2β₁√(log n) for every r, hold on "
                          f"the judged members ({n_in} (time, member) cells; {n_out} off an event recorded apart)"),
           config={**fz.TWO_LAYER, "eps": eps, "max share of term R'_a (measured R_a hat)": sh_a,
                   "max share of term R'_w (measured R_w hat)": sh_w,
                   "min share of the init level of a": 1 - sh_a, "min share of the init level of w": 1 - sh_w},
           covers=["(25) measured radii"] + [c for c, sh in zip(init_terms, (sh_a, sh_w)) if sh <= 0.75]
           + [c for c, sh in zip(("term: R'_a (movement of a)", "term: R'_w (movement of w)"), (sh_a, sh_w)) if sh >= 0.25],
           note=(f"movement terms with the measured radii: at most {sh_a:.2f} (a) and {sh_w:.2f} (w) of their factors of (25) "
                 "on these runs (see test_eq25_at_window_end for why the theorem's own radii cannot reach 25 %)"),
           hypotheses={"hypothesis report of (25) with measured radii (per width)": reports,
                       "(time, member) cells judged (inside) / outside": f"{n_in}/{n_out}",
                       "max P/(25) with measured radii (inside)": worst25,
                       "production path (widest m, last t, member 0)": control_text(ctl)},
           tightness="max P/(25) with the measured radii R̂_a, R̂_w in place of R'_a, R'_w (tests the init-event substitution)")
    if n_out:
        record("holds" if worst25_out <= 1.0 else "violated", reading="outside-hypotheses", observed=worst25_out, bound=1.0,
               config={**fz.TWO_LAYER, "eps": eps}, hypotheses={"hypothesis report (per width)": reports}, evidence="test",
               inside=False, inside_reason="members with some |a_r(0)| or ‖w_r(0)‖ above its level (an init event fails)",
               tightness="max P/(25) with measured radii on the members off an init event",
               note="(25) with measured radii on members with some |a_r(0)| or ‖w_r(0)‖ above its level: reported, not counted")
    tm = failure_rate_test(fa_mut, tot, 1 / n, alpha=EVENT_ALPHA / 2)
    rejected = mut24 > 0 and tm.rejects
    record("holds" if rejected else "violated", role="companion", observed=tm.rate, bound=1 / n,
           note=(f"wrong versions: (24) with max_r for Σ_r violated {mut24} times; |a_r(0)| ≤ √(2/π)β₂ (mean, no factor n) "
                 f"fails for {tm.rate:.1%} of neurons (p = {tm.p_value:.1e} against ≤ 1/n)"))
    assert ok24, worst24
    assert ok and worst25_out <= 1.0, (worst25, worst25_out, ta, tw)  # (25) asserted on the outside members too
    assert rejected


def _eq25_members(s, Xt, eps):
    """Per member of the short run s at its last step t = min(t₁, t₂): P(f_t, ε), (24), (25) with R'_a, R'_w at t
    (each member's own r0) and (25) at R'_a = R'_w = 0; and the hypothesis report of (25): Lemma 11's events and
    conclusions on [0, t] and the per-neuron init events of Theorem 3's proof."""
    from theory.sim.models import DeepMLP
    r, tr = s["r"], s["tr"]
    n, d, m, alpha = r["X"].shape[0], r["X"].shape[1], r["m"], r["alpha"]
    Wt, at = tr.stacked("W")[-1], tr.stacked("a")[-1]
    P = pt.stability_scalar(pt.input_grads(DeepMLP([Wt, at[:, None, :]], r["net"].act, 1.0 / alpha), Xt), eps)
    Rpa = [float(tl.Rp_a(s["tmin"], s["lam0"], alpha, n, m, B1, s["Rw"], float(v))) for v in s["r0"]]
    Rpw = [float(tl.Rp_w(s["tmin"], s["lam0"], alpha, n, B2, s["Ra"], float(v))) for v in s["r0"]]
    b25 = torch.tensor([tl.eq25_bound(eps, m, alpha, n, d, B1, B2, pa, pw) for pa, pw in zip(Rpa, Rpw)],
                       dtype=P.dtype, device=P.device)
    ev = _lemma11_events(s, with_conclusions=True)
    ie = tl.thm3_init_events(r["a"][0], r["W"][0], n, B1, B2)
    rep = tl.event_report({**{k: torch.tensor(v) for k, v in ev["events"].items()},
                           "|a_r(0)| <= sqrt(2/pi) n beta2 for all r": ie["ok_a"],
                           "|w_r(0)| <= 4 beta1 sqrt(d) + 2 beta1 sqrt(log n) for all r": ie["ok_w"]})
    rep["figures"] = ev["figures"]
    return {"P": P, "b24": tl.eq24_bound(at, Wt, alpha, eps), "b25": b25, "Rpa": Rpa, "Rpw": Rpw,
            "b25_free": tl.eq25_bound(eps, m, alpha, n, d, B1, B2, 0.0, 0.0), "report": rep}


def _eq25_record(record, inside, P, b25, b24, b25_free, config, hypotheses, *, covers, why, note):
    """One record of (25) at t = min(t₁, t₂) on a set of members (inside the hypotheses: as stated; else apart). (25) is
    derived from (24) by valid upper bounds, so it cannot fall below it: its distance from (24) and from P is looseness,
    never vacuity. On the members on every event (inside) P ≤ (24) ≤ (25) holds for any weights, so the record is
    consistency there (evidence "test" only on the members off an event, where the events do not force it). Verdict "holds" (finding "loose" with the measured factors where even its R_a-free part, R'_a = R'_w
    = 0, is above (24) on every member) or "violated"."""
    ratio, over, free = float((P / b25).max()), float((b25 / b24).min()), float((b25_free / b24).min())
    ok = ratio <= 1.0
    loose = ok and free >= 1.0
    record("holds" if ok else "violated", observed=float(P.max()), bound=float(b25.min()), ratio=ratio,
           reading="as-stated" if inside else "outside-hypotheses", covers=covers if inside else [],
           finding_type="loose" if loose else "", evidence="consistency" if inside else "test", inside=inside,
           inside_reason=why,
           config=config, hypotheses=hypotheses, tightness="max over the members of P/(25) at t = min(t1, t2)",
           note=((f"loose: (25) is {1 / ratio:.3g}× P or more and {over:.3g}× or more the bound (24) it is derived from on the "
                  f"same networks; its part free of the illegible R_a (R'_a = R'_w = 0) alone is {free:.3g}× (24) or more (the "
                  "Markov level |a_r(0)| ≤ √(2/π)nβ₂ and the prefactor m). " if loose else
                  f"max P/(25) = {ratio:.3g}, min (25)/(24) = {over:.3g}. ")
                 + ("" if inside else "Reported, never counted against the paper. ") + note))
    return ok


@pytest.mark.claim("zhu2022/thm-3")
def test_eq25_at_window_end(ctx, record):
    """(25) with R'_a, R'_w evaluated at t = min(t₁, t₂) (the theorem's own radii; R_a = RA_READING; each member's
    own ‖y − f(0)‖) on the short GD run that resolves the window:
    P(f_t, ε) ≤ (εm/α)(R'_a + √(2/π)nβ₂)(R'_w + 4β₁√d + 2β₁√log n).
    (25) bounds the deterministic (24), (ε/α)Σ_r|a_r(t)|‖w_r(t)‖, term by term through initialisation events, so (25) ≥ (24)
    cannot fail: its distance from (24) is looseness (finding "loose" with the measured factors), not vacuity. Judged
    as stated on the members on every event of Lemma 11 (and its conclusions on [0, t]) and on Theorem 3's init events
    (_eq25_members), here and on fz.TWO_LAYER_INSIDE at INSIDE_M; the others recorded apart (inside False).
    Companion: the bound for a single average neuron, (ε/α)(R'_a + √(2/π)β₂)(R'_w + β₁√d) (sum over neurons and tail
    factors dropped), must be violated (on both configurations)."""
    m = _widths(ctx)[0]
    s = _short_run(ctx, m)
    r, tr, eps = s["r"], s["tr"], 0.1
    n, d, alpha = r["X"].shape[0], r["X"].shape[1], r["alpha"]
    Xt = draw(torch.randn, 256, d, generator=record.generator({"t": "eq25"}), dtype=ctx.dtype, device=ctx.device)
    Xt = Xt / Xt.norm(dim=1, keepdim=True)
    from theory.sim.models import DeepMLP
    Wt, at = tr.stacked("W")[-1], tr.stacked("a")[-1]
    net = DeepMLP([Wt, at[:, None, :]], r["net"].act, 1.0 / alpha)
    G = pt.input_grads(net, Xt)
    P = pt.stability_scalar(G, eps)  # (E,)
    ctl = input_grad_control(net, Xt, G)  # ‖∇f‖ vs the core's default opnorm and its SVD (member 0, 16 rows)
    b24 = tl.eq24_bound(at, Wt, alpha, eps)
    Rpa = [float(tl.Rp_a(s["tmin"], s["lam0"], alpha, n, m, B1, s["Rw"], float(v))) for v in s["r0"]]
    Rpw = [float(tl.Rp_w(s["tmin"], s["lam0"], alpha, n, B2, s["Ra"], float(v))) for v in s["r0"]]
    b25 = torch.tensor([tl.eq25_bound(eps, m, alpha, n, d, B1, B2, pa, pw) for pa, pw in zip(Rpa, Rpw)],
                       dtype=ctx.dtype, device=ctx.device)
    ratio = float((P / b25).max())
    over24 = float((b25 / b24).min())
    # certified vacuity, whatever the illegible R_a: R'_a, R'_w ≥ 0, so (25) ≥ (εm/α)·√(2/π)nβ₂·(4β₁√d + 2β₁√log n)
    # (√d: the smaller of the OCR's two readings √m, √d of the norm bound); vacuous where that exceeds (24)
    b25_free = tl.eq25_bound(eps, m, alpha, n, d, B1, B2, 0.0, 0.0)
    free24 = float((b25_free / b24).min())
    ok = ratio <= 1.0
    # issue 19, shares of the terms of (25). For t ≤ min(t₁, t₂), R'_a ≤ R_a and R'_w ≤ R_w (definitions of t₂, t₁), so
    # the movement terms' shares are at most R_a/(R_a + √(2/π)nβ₂) and R_w/(R_w + 4β₁√d + 2β₁√log n) (R_a: RA_READING).
    # In general (unit inputs) λ₀ ≤ H^∞_ii = mβ₂²/(2α²) gives R_a ≤ β₂/(4√n) and R_w ≤ √(2π)β₁/(64n³): shares below
    # 1/(1 + 4√(2/π)n^{3/2}) ≤ 0.24 and 0.01 for every n ≥ 1, d ≥ 1 — the theorem's window keeps both immaterial.
    init_a, init_w = math.sqrt(2 / math.pi) * n * B2, 4 * B1 * math.sqrt(d) + 2 * B1 * math.sqrt(math.log(n))
    cap_a, cap_w = s["Ra"] / (s["Ra"] + init_a), s["Rw"] / (s["Rw"] + init_w)
    # hypothesis report: (25) is stated on the event of Lemma 11 (its events and its conclusions on [0, t]) and on the
    # per-neuron init events of the proof of Theorem 3
    ev = _lemma11_events(s, with_conclusions=True)
    ie = tl.thm3_init_events(r["a"][0], r["W"][0], n, B1, B2)
    ev_all = tl.event_report({**{k: torch.tensor(v) for k, v in ev["events"].items()},
                              "|a_r(0)| <= sqrt(2/pi) n beta2 for all r": ie["ok_a"],
                              "|w_r(0)| <= 4 beta1 sqrt(d) + 2 beta1 sqrt(log n) for all r": ie["ok_w"]})
    ev_all["figures"] = ev["figures"]
    sh_a, sh_w = max(pa / (pa + init_a) for pa in Rpa), max(pw / (pw + init_w) for pw in Rpw)
    init_terms = ["term: sqrt(2/pi) n beta2 (init level of a)", "term: 4 beta1 sqrt(d) + 2 beta1 sqrt(log n) (init level of w)"]
    terms_note = (f"Terms of (25) at t = min(t1, t2): R'_a is {sh_a:.1e} and R'_w {sh_w:.1e} of their factors; under the "
                  f"hypothesis t ≤ min(t1, t2) they cannot exceed {cap_a:.3f} and {cap_w:.1e} here (R'_a ≤ R_a, R'_w ≤ R_w), "
                  "and for any n, d at most 0.24 and 0.01 (unit inputs: λ₀ ≤ mβ₂²/(2α²)): a share ≥ 25 % is impossible "
                  "under the hypotheses with R_a = (α/n)√(λ₀/(8nm)), so the movement terms stay untested parts"
                  + ("" if max(cap_a, cap_w) < 0.25 else " [the cap at this configuration is not below 0.25: check the argument]"))
    ins0 = torch.tensor(ev_all["inside"], device=P.device)
    hyp0 = {"hypothesis report (per member)": ev_all, "R'_a(tmin) per member": Rpa, "R'_w(tmin) per member": Rpw,
            "min over members of (25)/(24)": over24, "R_a-free lower bound of (25)": b25_free,
            "min over members of (R_a-free lower bound)/(24)": free24, "max P/(24)": float((P / b24).max()),
            "production path (member 0)": control_text(ctl)}
    cfg0 = {"m": m, "eps": eps, **fz.TWO_LAYER, "share of term R'_a (movement of a)": sh_a,
            "share of term R'_w (movement of w)": sh_w, "cap of the R'_a share under the hypotheses": cap_a,
            "cap of the R'_w share under the hypotheses": cap_w}
    for inside0, sel in ((True, ins0), (False, ~ins0)):  # the members on every event (as stated) and the others apart
        if bool(sel.any()):
            _eq25_record(record, inside0, P[sel], b25[sel], b24[sel], b25_free, cfg0, hyp0,
                         covers=["(25) at window end"] + (init_terms if max(sh_a, sh_w) <= 0.75 else []),
                         why=(f"{int(sel.sum())} members on every event of Lemma 11 (with its conclusions on [0, t]) and on "
                              "Theorem 3's init events" if inside0 else
                              f"members off an event: {'; '.join(ev_all['outside_reasons'])}"),
                         note=terms_note)
    b_mut = torch.tensor([eps / alpha * (pa + math.sqrt(2 / math.pi) * B2) * (pw + B1 * math.sqrt(d)) for pa, pw in zip(Rpa, Rpw)],
                         dtype=ctx.dtype, device=ctx.device)
    rej = int((P > b_mut).sum())
    record("holds" if rej == P.numel() else "violated", role="companion", observed=float((P / b_mut).min()), bound=1.0,
           note=(f"wrong version (one average neuron, (ε/α)(R'_a + √(2/π)β₂)(R'_w + β₁√d)): violated on {rej}/{P.numel()} "
                 f"members; the true (25) is {1 / ratio:.3g}× P, so only versions tightened by more than that can be rejected"))
    # issue 19: (25) at the window end on fz.TWO_LAYER_INSIDE at INSIDE_M, judged on the members on every event of
    # Lemma 11 (and its conclusions on [0, t]) and on Theorem 3's init events; the others recorded apart and asserted too
    si = _short_run(ctx, INSIDE_M, fz.TWO_LAYER_INSIDE)
    n_i, d_i = si["r"]["X"].shape
    Xti = draw(torch.randn, 256, d_i, generator=record.generator({"t": "eq25-inside"}), dtype=ctx.dtype, device=ctx.device)
    qi = _eq25_members(si, Xti / Xti.norm(dim=1, keepdim=True), eps)
    rep_i = qi["report"]
    ins = torch.tensor(rep_i["inside"], device=qi["P"].device)
    r25, r24, f24 = qi["P"] / qi["b25"], qi["b25"] / qi["b24"], qi["b25_free"] / qi["b24"]
    ia, iw = math.sqrt(2 / math.pi) * n_i * B2, 4 * B1 * math.sqrt(d_i) + 2 * B1 * math.sqrt(math.log(n_i))
    sh_ai, sh_wi = max(pa / (pa + ia) for pa in qi["Rpa"]), max(pw / (pw + iw) for pw in qi["Rpw"])
    cap_ai, cap_wi = si["Ra"] / (si["Ra"] + ia), si["Rw"] / (si["Rw"] + iw)
    cfg_i = {"m": INSIDE_M, "eps": eps, **fz.TWO_LAYER_INSIDE, "lambda0": si["lam0"], "t = min(t1, t2)": si["tmin"],
             "share of term R'_a (movement of a)": sh_ai, "share of term R'_w (movement of w)": sh_wi,
             "cap of the R'_a share under the hypotheses": cap_ai, "cap of the R'_w share under the hypotheses": cap_wi}
    hyp_i = {"hypothesis report (per member)": rep_i, "R'_a(tmin) per member": qi["Rpa"], "R'_w(tmin) per member": qi["Rpw"],
             "P/(25) per member": r25, "(25)/(24) per member": r24, "(R_a-free lower bound)/(24) per member": f24}
    ok_in = ok_out = True
    if bool(ins.any()):
        ok_in = float(r25[ins].max()) <= 1.0
        _eq25_record(record, True, qi["P"][ins], qi["b25"][ins], qi["b24"][ins], qi["b25_free"], cfg_i, hyp_i,
                     covers=["(25) at window end"] + (init_terms if max(sh_ai, sh_wi) <= 0.75 else []),
                     why=(f"{rep_i['members inside']} members on every event of Lemma 11 (with its conclusions on [0, t]) "
                          f"and on Theorem 3's init events (d = {d_i}, n = {n_i}, m = {INSIDE_M})"),
                     note=f"movement terms at most {sh_ai:.1e} (a) and {sh_wi:.1e} (w) of their factors (untested parts, as above)")
    else:
        record("not-applicable", config=cfg_i, hypotheses=hyp_i, evidence="consistency", inside=False,
               inside_reason="no member of the inside configuration is on every event of (25) at this draw",
               note=(f"precondition not met at this draw: no member of the inside configuration is on every event of "
                     f"(25) ({'; '.join(rep_i['outside_reasons'])}); (25) is recorded outside only"))
    if not bool(ins.all()):
        ok_out = float(r25[~ins].max()) <= 1.0
        _eq25_record(record, False, qi["P"][~ins], qi["b25"][~ins], qi["b24"][~ins], qi["b25_free"], cfg_i, hyp_i,
                     covers=[], why=f"members off an event: {'; '.join(rep_i['outside_reasons'])}", note="")
    b_mut = torch.tensor([eps / si["r"]["alpha"] * (pa + math.sqrt(2 / math.pi) * B2) * (pw + B1 * math.sqrt(d_i))
                          for pa, pw in zip(qi["Rpa"], qi["Rpw"])], dtype=ctx.dtype, device=ctx.device)
    sel_i = ins if bool(ins.any()) else ~ins  # the members inside; all of them at a draw with none inside
    mut_i = float((qi["P"] / b_mut)[sel_i].min())
    record("holds" if mut_i > 1 else "violated", role="companion", observed=mut_i, bound=1.0,
           note=(f"wrong version (one average neuron) on the inside configuration: min over the members "
                 f"{'inside' if bool(ins.any()) else '(none inside: all)'} of P/bound = {mut_i:.3g} (> 1 on every one: "
                 "rejected)"))
    assert ok, ratio
    assert rej == P.numel()
    assert max(cap_a, cap_w) < 0.25, (cap_a, cap_w)  # the note's claim: movement terms immaterial under the hypotheses
    assert ok_in and ok_out, hyp_i
    assert mut_i > 1, mut_i
    assert max(cap_ai, cap_wi) < 0.25, (cap_ai, cap_wi)


WIDTH_C = (1.75, 2.0)  # β₁ = β₂ = m^{-c}: inside the hypothesis c > 1.5 (OCR line 837)
S_MIN = 0.25  # the smallest decrease refuted: P/ε ∝ m^{-1/4} halves P over the grid's 16× width range
PLANT = 0.5  # planted decrease of the power companion: P·(m/m₀)^{-1/2}


def _trend(logm, logP, alpha):
    """OLS slope of log P on log m with one-sided (1 − alpha) bounds: (slope, lower, upper)."""
    res = st.linregress(logm, logP)
    q = float(st.t.ppf(1 - alpha, len(logm) - 2)) * res.stderr
    return float(res.slope), float(res.slope - q), float(res.slope + q)


@pytest.mark.claim("zhu2022/thm-3")
def test_width_trend_non_lazy(ctx, record):
    """Information, not a test of the paper (reading "reconstructed"): Theorem 3's final line (illegible) says that its
    upper bound on P/ε decreases with width when α ≍ 1, β₁ = β₂ = m^{−c}, c > 1.5, m > n². An upper bound that decreases
    in m predicts nothing about the trend of P itself without a matching lower bound, and (25) is vacuous here
    (test_eq25_at_window_end), so a measured trend of P can neither confirm nor refute the theorem; Appendix E.5's
    empirical sentence concerns deep FCNs on MNIST with initialisations the OCR does not give. Measured: P(f_t, ε)/ε at matched training loss —
    each network at its first GD step with loss ≤ 5% of the initial (a second deterministic pass from the same init
    stops there) — over a geometric width grid, for c ∈ {1.75, 2}; networks still on a saddle plateau at the step
    budget are excluded and counted. Per c, the OLS slope s of log P on log m over all networks, with one-sided 99%
    bounds (Bonferroni over the c's): the claim is confirmed if every upper bound is < 0, refuted if some lower bound
    exceeds −1/4 (P falls more slowly than m^{−1/4}, which would halve P over the grid). Preconditions (plain
    asserts): m > n², every network non-lazy (relative change of W₁ ≥ 1), ≥ 8 networks per c over ≥ 3 widths.
    Hypothesis report: the final line is derived from (25), stated for t ≤ min(t₁, t₂) on the event of Lemma 11; the
    time each network takes to reach the matched loss is compared with its own min(t₁, t₂) (R_a = RA_READING), and a
    network beyond it is outside the hypotheses (reported; the record is information either way).
    Companion: the same test on planted data P·(m/m₀)^{−1/2} must confirm and not refute."""
    widths = ctx.pick(quick=(128, 256, 512, 1024), full=(128, 256, 512, 1024, 2048, 4096, 8192))
    cs = ctx.pick(quick=WIDTH_C, full=WIDTH_C + (2.5,))
    d, n, E, eps = 5, 8, ctx.pick(quick=8, full=16), 0.1
    steps, eta, target = ctx.pick(quick=1500, full=6000), 0.05, 0.05
    assert min(widths) > n * n, "Theorem 3's width condition m > n² fails on the grid"
    gen = record.generator({"t": "width"})
    X = draw(torch.randn, n, d, generator=gen, dtype=ctx.dtype, device=ctx.device)
    X = X / X.norm(dim=1, keepdim=True)
    y = draw(torch.randn, n, generator=gen, dtype=ctx.dtype, device=ctx.device)
    Xt = draw(torch.randn, 256, d, generator=gen, dtype=ctx.dtype, device=ctx.device)
    Xt = Xt / Xt.norm(dim=1, keepdim=True)
    from theory.sim.models import DeepMLP
    table, pts, stuck, ctl = [], {c: [] for c in cs}, {c: 0 for c in cs}, None
    k0, t_over_window = tl.kappa0(X), []  # t at matched loss / the network's own min(t1, t2)
    for m in widths:
        nets = [tl.build(E, d, m, alpha=1.0, beta1=m ** (-c), beta2=m ** (-c), generator=gen, device=ctx.device) for c in cs]
        W0 = [torch.cat([nt.weights[l] for nt in nets]) for l in range(2)]  # c on the ensemble axis, E per c
        r0 = (y - DeepMLP([w.clone() for w in W0], nets[0].act, 1.0)(X).detach()).norm(dim=-1)  # ‖y − f(0)‖ per member
        net = DeepMLP([w.clone() for w in W0], nets[0].act, 1.0)
        loss = gd(net, X, y, loss="squared", lr=n * eta, steps=steps, record=range(steps + 1)).loss_tensor()  # (T, E·|c|)
        hit = loss <= target * loss[0]
        reached = hit.any(0)
        k = hit.to(torch.int64).argmax(0)
        if not bool(reached.any()):
            continue
        keep = lambda t, ps, u: {"W": ps[0].detach().clone(), "a": ps[1].detach().clone()}
        again = DeepMLP([w.clone() for w in W0], nets[0].act, 1.0)
        tr = gd(again, X, y, loss="squared", lr=n * eta, steps=int(k[reached].max()),
                record=sorted(set(k[reached].tolist())), observe=keep)
        at = {st_: i for i, st_ in enumerate(tr.steps)}
        for e in range(len(cs) * E):
            c = cs[e // E]
            if not bool(reached[e]):
                stuck[c] += 1
                table.append({"c": c, "m": m, "member": e % E, "reached 5% loss": False,
                              "loss ratio at step budget": float(loss[-1, e] / loss[0, e])})
                continue
            i = at[int(k[e])]
            W, a = tr.obs["W"][i][e:e + 1], tr.obs["a"][i][e:e + 1]
            net_e = DeepMLP([W, a], net.act, 1.0)
            G = pt.input_grads(net_e, Xt)
            P = float(pt.stability_scalar(G, eps)[0]) / eps
            if ctl is None:  # once: ‖∇f‖ vs the core's default opnorm and its SVD (the first trained network, 16 rows)
                ctl = input_grad_control(net_e, Xt, G)
            rel = float((W[0] - W0[0][e]).norm() / W0[0][e].norm())
            pts[c].append((m, P, rel))
            bt = m ** (-c)
            lam0 = m * bt ** 2 * k0  # α = 1
            Ra = _Ra(lam0, 1.0, n, m, bt)
            Rw = tl.R_w(lam0, 1.0, n, m, bt, bt, Ra)
            win = min(tl.t1(lam0, 1.0, n, bt, Ra, Rw, float(r0[e])), tl.t2(lam0, 1.0, n, m, bt, Ra, Rw, float(r0[e])))
            t_over_window.append(int(k[e]) * eta / win)
            table.append({"c": c, "m": m, "member": e % E, "reached 5% loss": True, "step": int(k[e]), "P/eps at matched loss": P,
                          "loss ratio": float(loss[int(k[e]), e] / loss[0, e]), "rel change W1 (non-lazy if >= 1)": rel,
                          "t / min(t1, t2)": t_over_window[-1]})
    for c in cs:
        assert len(pts[c]) >= 8 and len({p[0] for p in pts[c]}) >= 3, f"c={c}: too few networks reached the matched loss"
        assert min(p[2] for p in pts[c]) >= 1.0, f"c={c}: a run is not non-lazy (relative change of W1 < 1)"
    alpha_c = 0.01 / len(cs)
    fits, series = {}, {}
    for c in cs:
        lm = np.log([p[0] for p in pts[c]])
        lp = np.log([p[1] for p in pts[c]])
        s_, lo, hi = _trend(lm, lp, alpha_c)
        ps_, plo, phi = _trend(lm, lp - PLANT * (lm - lm.min()), alpha_c)
        fits[c] = {"slope": s_, "lower": lo, "upper": hi, "networks": len(lm), "stuck (excluded)": stuck[c],
                   "planted slope": ps_, "planted upper": phi, "planted lower": plo}
        ms = sorted({p[0] for p in pts[c]})
        series[f"c={c}"] = {"x": ms, "y": [float(np.mean([p[1] for p in pts[c] if p[0] == m])) for m in ms], "xlabel": "width m",
                            "ylabel": "P/eps at matched loss", "logx": True, "logy": True, "plot": "non-lazy width trend"}
    confirmed = all(v["upper"] < 0 for v in fits.values())
    refuted = any(v["lower"] > -S_MIN for v in fits.values())
    slopes = ", ".join(f"c={c}: {v['slope']:+.3f} (one-sided 99% bounds {v['lower']:+.3f}, {v['upper']:+.3f})" for c, v in fits.items())
    trend = "decreasing" if confirmed else ("not decreasing faster than m^(-1/4)" if refuted else "undetermined")
    beyond = sum(v > 1 for v in t_over_window)
    record("not-applicable", reading="reconstructed", observed=max(v["slope"] for v in fits.values()), bound=-S_MIN, ratio=None,
           table=table, series=series, evidence="consistency",
           inside=False if beyond == len(t_over_window) else "unknown",
           inside_reason=(f"{beyond}/{len(t_over_window)} networks reach the matched loss after their window t ≤ min(t1, t2) "
                          "of (25) (outside); Lemma 11's events are not evaluated on the others; information only (an upper "
                          "bound's trend predicts nothing about P: the record never reads 'violated')"),
           config={"d": d, "n": n, "E per c": E, "eps": eps, "cs": cs, "widths": widths, "steps": steps, "eta": eta,
                   "matched loss": target, "alpha (family)": 0.01},
           hypotheses={"log-log slope of P/eps vs m": fits, "m > n^2": True, "measured trend of P": trend,
                       "networks with t <= min(t1, t2) at matched loss (window of (25))":
                           f"{sum(v <= 1 for v in t_over_window)}/{len(t_over_window)}",
                       "min over networks of t / min(t1, t2)": min(t_over_window),
                       "hypothesis status": ("outside: every network reaches the matched loss after its window "
                                             "t <= min(t1, t2)" if min(t_over_window) > 1 else
                                             "outside for the networks beyond their window (see the table); the others "
                                             "unknown: Lemma 11's events are not evaluated on these runs"),
                       "min rel change W1": min(p[2] for c in cs for p in pts[c]),
                       "production path (first network at matched loss)": control_text(ctl)},
           tightness="fitted exponent of P/ε in m at matched loss (information)",
           note=(f"information only: P(f_t,ε)/ε at matched loss is {trend} in width ({slopes}); every run non-lazy (relative "
                 f"change of W1 ≥ {min(p[2] for c in cs for p in pts[c]):.3g}); stand-in n={n}, d={d}. Theorem 3's final line is "
                 "an upper bound (illegible): its direction in m is not a prediction of P, so this trend is not held against it"))
    planted_ok = all(v["planted upper"] < 0 and v["planted lower"] <= -S_MIN for v in fits.values())
    record("holds" if planted_ok else "violated", role="companion", observed=max(v["planted slope"] for v in fits.values()),
           bound=0.0, ratio=None,
           note=("planted P·(m/m0)^(-1/2) (a claim-conforming width effect): the same test confirms the decrease and does "
                 "not refute: " + ", ".join(f"c={c}: slope {v['planted slope']:+.3f} [{v['planted lower']:+.3f}, "
                                              f"{v['planted upper']:+.3f}]" for c, v in fits.items())))
    assert planted_ok, fits


@pytest.mark.claim("zhu2022/thm-3")
@pytest.mark.claim("zhu2022/lem-8")
@pytest.mark.claim("zhu2022/lem-9")
@pytest.mark.claim("zhu2022/lem-10")
def test_appendix_d_formulas_at_betas_other_than_one(record):
    """Every run of Appendix D's two-layer checks uses β₁ = β₂ = 1 (and α = 1 in most), where β², β³ and 1/β all equal 1:
    a β dropped or squared in tl would pass every run. Here each formula of tl that carries a β is evaluated at
    β₁ = 0.7, β₂ = 1.9, α = 1.3, m = 50, n = 6, d = 4 and compared with the display it encodes, written out below in numpy
    from Appendix D (λ₀ = mβ₂²κ₀/α²; R_w; R'_w, R'_a of Lemmas 9–10; t₁, t₂; the bound (25); the events of Lemmas 7, 9,
    10 and of Theorem 3's proof; Lemma 8's Markov bounds (19)-(20)), to 1e-12 relative (≤ 20 float64 operations; κ₀
    from two eigen-solvers, 1e-12).
    A consistency check of the code (evidence: consistency), not evidence about the paper."""
    b1, b2, alpha, m, n, d = 0.7, 1.9, 1.3, 50, 6, 4
    g = record.generator({"betas": [b1, b2]}, claim="zhu2022/thm-3")
    X = torch.randn(n, d, generator=g, dtype=torch.float64, device=g.device)
    X = X / X.norm(dim=1, keepdim=True)
    W0 = b1 * torch.randn(2, m, d, generator=g, dtype=torch.float64, device=g.device)
    a0 = b2 * torch.randn(2, m, generator=g, dtype=torch.float64, device=g.device)
    Xn = X.cpu().numpy()
    kap0 = float(np.linalg.eigvalsh(k_reference(Xn))[0])
    lam0 = m * b2 ** 2 * kap0 / alpha ** 2
    Ra, r0, t = 0.03, 2.5, 0.4
    ref = {
        "lambda0": lam0,
        "R_w": alpha ** 2 * lam0 * math.sqrt(2 * math.pi) * b1
        / (32 * n ** 3 * m * (Ra * (Ra + math.sqrt(8 / math.pi) * b2) + b2 ** 2)),
        "R'_w(t)": 2 * math.sqrt(n) * (math.sqrt(n) * b2 + Ra) * r0 / (alpha * lam0) * (1 - math.exp(-lam0 * t / 2)),
        "R'_a(t)": 2 * math.sqrt(n) * (3 * b1 * math.sqrt(math.log(m * n ** 2)) + 0.02) * r0 / (alpha * lam0)
        * (1 - math.exp(-lam0 * t / 2)),
        "(25)": 1e-3 * m / alpha * (0.1 + math.sqrt(2 / math.pi) * n * b2)
        * (0.2 + 4 * b1 * math.sqrt(d) + 2 * b1 * math.sqrt(math.log(n))),
    }
    Rw = ref["R_w"]
    c1 = 2 * math.sqrt(n) * (math.sqrt(n) * b2 + Ra) * r0 / (alpha * lam0)
    c2 = 2 * math.sqrt(n) * (3 * b1 * math.sqrt(math.log(m * n ** 2)) + Rw) * r0 / (alpha * lam0)
    ref["t1"] = -2 / lam0 * math.log1p(-Rw / c1)  # log1p: R_w/c₁ is ~1e-4 here, log(1 − x) would lose 4 digits
    ref["t2"] = -2 / lam0 * math.log1p(-Ra / c2)
    Wn, an = W0.cpu().numpy(), a0.cpu().numpy()
    ref["lemma 9 ratio"] = np.abs(an).max(-1) / (math.sqrt(n) * b2)
    ref["lemma 10 ratio"] = np.abs(np.einsum("emd,id->emi", Wn, Xn)).max((-1, -2)) / (3 * b1 * math.sqrt(math.log(m * n * n)))
    ref["thm 3 ratio a"] = np.abs(an).max(-1) / (math.sqrt(2 / math.pi) * n * b2)
    ref["thm 3 ratio w"] = np.linalg.norm(Wn, axis=-1).max(-1) / (4 * b1 * math.sqrt(d) + 2 * b1 * math.sqrt(math.log(n)))
    Hinf = m * b2 ** 2 / alpha ** 2 * k_reference(Xn)
    H0 = Hinf + 0.1 * lam0 * np.eye(n)  # ‖H(0) − H^∞‖₂ = 0.1 λ₀, λ_min(H(0)) = 1.1 λ₀
    ref["lemma 7 dev"], ref["lemma 7 lmin"] = 0.1, float(np.linalg.eigvalsh(H0)[0]) / lam0
    cm = math.sqrt(8 / math.pi) * b2  # Lemma 8's Markov bounds, Eqs. (19)-(20) times n
    ref["(19) x n"] = n * m / alpha ** 2 * Ra * (Ra + cm)
    ref["(20) x n"] = n * 4 * Rw * m / (alpha ** 2 * math.sqrt(2 * math.pi) * b1) * (Ra * (Ra + cm) + b2 ** 2)
    got = {
        "lambda0": tl.lambda0(X, m, alpha, b2),
        "R_w": tl.R_w(lam0, alpha, n, m, b1, b2, Ra),
        "R'_w(t)": float(tl.Rp_w(t, lam0, alpha, n, b2, Ra, r0)),
        "R'_a(t)": float(tl.Rp_a(t, lam0, alpha, n, m, b1, 0.02, r0)),
        "(25)": tl.eq25_bound(1e-3, m, alpha, n, d, b1, b2, 0.1, 0.2),
        "t1": tl.t1(lam0, alpha, n, b2, Ra, Rw, r0),
        "t2": tl.t2(lam0, alpha, n, m, b1, Ra, Rw, r0),
        "lemma 9 ratio": tl.lemma9_event(a0, n, b2)["ratio"].cpu().numpy(),
        "lemma 10 ratio": tl.lemma10_event(W0, X, b1)["ratio"].cpu().numpy(),
    }
    e3 = tl.thm3_init_events(a0, W0, n, b1, b2)
    got["thm 3 ratio a"], got["thm 3 ratio w"] = e3["ratio_a"].cpu().numpy(), e3["ratio_w"].cpu().numpy()
    H2 = torch.as_tensor(np.stack([H0, H0])[:, None], device=X.device)  # (T = 2, E = 1, n, n): only the bounds are read
    mk = tl.lemma8_markov_event(X, W0[:1], a0[:1], a0[:1].expand(2, 1, m), H2, alpha, b1, b2, Ra, Rw)
    got["(19) x n"], got["(20) x n"] = mk["b19"], mk["b20"]
    e7 = tl.lemma7_event(torch.as_tensor(H0, device=X.device).unsqueeze(0), X, m, alpha, b2)
    got["lemma 7 dev"], got["lemma 7 lmin"] = float(e7["dev"][0]), float(e7["lmin"][0])
    rows = [{"formula": k, "tl": np.asarray(got[k]).tolist(), "reference": np.asarray(v).tolist(),
             "rel. error": float(np.max(np.abs(np.asarray(got[k]) - v) / np.abs(v)))} for k, v in ref.items()]
    worst = max(r["rel. error"] for r in rows)
    ok = worst <= 1e-12
    for claim in ("zhu2022/thm-3", "zhu2022/lem-8", "zhu2022/lem-9", "zhu2022/lem-10"):
        record("holds" if ok else "violated", claim=claim, observed=worst, bound=1e-12, evidence="consistency", table=rows,
               inside=True, inside_reason="formula pins at β₁, β₂ ≠ 1 (no run): no hypothesis involved",
               config={"beta1": b1, "beta2": b2, "alpha": alpha, "m": m, "n": n, "d": d},
               tightness="max relative error of tl's Appendix-D formulas against the displays, at β₁, β₂ ≠ 1")
    assert ok, rows
