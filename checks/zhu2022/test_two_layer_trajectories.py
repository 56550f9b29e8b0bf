"""Appendix D along GD trajectories: zhu2022/lem-8, zhu2022/lem-9, zhu2022/lem-10, zhu2022/lem-11, zhu2022/thm-3.

Two-layer f = (1/α)Σ a_r φ(w_rᵀx), α = √m, β₁ = β₂ = 1 (so λ₀ = κ₀), n = 8 points on the unit sphere of R⁵,
GD on ½Σ(f − y)² with rate η = 0.05 (physical time t = ηk), seeds on the ensemble axis
(fixtures.zhu2022.two_layer_run). R̂_w(t) = max_r ‖w_r(t) − w_r(0)‖, R̂_a(t) = max_r |a_r(t) − a_r(0)|.
The illegible R_a is taken as its legible part α√(λ₀/(8nm)) wherever the lemmas need it (stated in records).
"""
from __future__ import annotations

import math

import pytest
import torch

from fixtures import zhu2022 as fz
from theory.papers.zhu2022 import perturbation as pt
from theory.papers.zhu2022 import two_layer as tl
from theory.records import verdict_for
from theory.sim.ntk import layer_kernels
from theory.sim.train import gd, geometric_grid
from theory.stats import failure_rate_test, fit_power

B1 = B2 = 1.0


def _run(ctx, m):
    return fz.two_layer_run(m, math.sqrt(m), ctx.device, ctx.dtype, ctx.seed, tuple(sorted(fz.TWO_LAYER.items())))


def _widths(ctx):
    return ctx.pick(quick=(256, 1024), full=(256, 1024, 4096, 16384))


def _radii(r):
    dW = (r["W"] - r["W"][0]).norm(dim=-1)  # (T, E, m)
    da = (r["a"] - r["a"][0]).abs()
    return dW, da, dW.amax(-1), da.amax(-1)  # per-neuron and max radii


def _lam0(r):
    return tl.lambda0(r["X"], r["m"], r["alpha"], B2)


@pytest.mark.claim("zhu2022/lem-8")
def test_kernel_stability_under_weight_movement(ctx, record):
    """Pathwise ingredients of Lemma 8 at every recorded time: (i) a pattern flip of (r, i) needs
    |w_r(0)ᵀx_i| ≤ ‖w_r(t) − w_r(0)‖; (ii) ‖H(t) − H(0)‖_F ≤ ‖B‖_F with B_ij = (1/α²)Σ_r |x_iᵀx_j|(|a_r(t)² − a_r(0)²|
    + a_r(t)² 1{flip_ir ∪ flip_jr}); (iii) flip fraction vs 2R̂_w/(√(2π)β₁); (iv) the lemma's expected-value bound with
    measured radii vs ‖H(t) − H(0)‖₂, and the conclusion λ_min(H(t)) ≥ λ₀/2 along the whole run.
    Companions: (i) with the radius halved must be violated along the runs; (ii) with |a_r(t)² − a_r(0)²| replaced by
    (a_r(t) − a_r(0))² is checked on the runs (reported: flips there can mask it) and on a probe that provably
    violates it: W(0), a = (1+s)a(0), s = 1e-3, where no pattern flips and H − H(0) = (2s + s²)H(0) exactly (first
    order in s) while the mutated bound is s²Σa_r²|x_iᵀx_j|/α² (second order); ‖·‖_F ratio ≥ (2+s)/s ·
    max_i H_ii(0)α²/(nΣa_r²) > 1, a precondition asserted per member. The true bound must hold on the probe too."""
    table, bad_flip, bad_path, mut_path, mut_flip = [], 0, 0, 0, 0
    probe_true, probe_mut, probe_ratio = 0, 0, math.inf
    for m in _widths(ctx):
        r = _run(ctx, m)
        X, alpha, n = r["X"], r["alpha"], r["X"].shape[0]
        lam0 = _lam0(r)
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
        c = math.sqrt(8 / math.pi) * B2
        exp_bound = n * n * (m / alpha ** 2 * Ra * (Ra + c) + 4 * Rw * m / (alpha ** 2 * math.sqrt(2 * math.pi) * B1)
                             * (Ra * (Ra + c) + B2 ** 2))
        lmin = torch.linalg.eigvalsh(r["H"])[..., 0]
        Ra_l = tl.R_a_legible(lam0, alpha, n, m)
        Rw_l = tl.R_w(lam0, alpha, n, m, B1, B2, Ra_l)
        for k in range(0, len(r["steps"]), max(1, len(r["steps"]) // 6)):
            table.append({"m": m, "t": float(r["t"][k]), "max R_w hat": float(Rw[k].max()), "max R_a hat": float(Ra[k].max()),
                          "flip fraction": float(fl[k].mean()), "2R_w/(sqrt(2pi)beta1)": float(2 * Rw[k].max() / math.sqrt(2 * math.pi)),
                          "|H(t)-H(0)|_2": float(spec[k].max()), "expected-value bound (measured radii)": float(exp_bound[k].max()),
                          "lambda_min(H)/lambda0": float(lmin[k].min() / lam0), "R_w hat / R_w(lemma)": float(Rw[k].max() / Rw_l)})
    worst_lmin = min(row["lambda_min(H)/lambda0"] for row in table)
    record("holds" if not (bad_flip or bad_path or probe_true) else "violated", observed=worst_lmin, bound=0.5, ratio=0.5 / worst_lmin,
           tightness="conclusion λ_min(H(t))/λ₀ ≥ 1/2: ratio = (1/2)/min_t λ_min(H(t))/λ₀ (≤ 1 holds)",
           config={**fz.TWO_LAYER, "widths": _widths(ctx), "R_a": "legible part alpha*sqrt(lambda0/(8nm))"}, table=table,
           hypotheses={"flip-condition violations": bad_flip, "pathwise-bound violations": bad_path,
                       "mutated flip condition violations": mut_flip, "mutated pathwise bound violations (runs)": mut_path,
                       "probe: true-bound violations": probe_true, "probe: mutated-bound violations (members)": probe_mut,
                       "probe: min ||dH||_F / ||B_mut||_F": probe_ratio},
           note=("conclusion λ_min(H(t)) ≥ λ₀/2 held along whole runs although the measured radii exceed the lemma's R_w "
                 "by orders of magnitude (see 'R_w hat / R_w(lemma)'): the lemma's radius is very conservative"))
    assert bad_flip == 0 and bad_path == 0 and probe_true == 0
    n_members = len(_widths(ctx)) * fz.TWO_LAYER["seeds"]
    assert mut_flip > 0 and probe_mut == n_members and probe_ratio > 1
    assert worst_lmin >= 0.5


@pytest.mark.claim("zhu2022/lem-9")
def test_loss_envelope_and_first_layer_radius(ctx, record):
    """Where λ_min(H(s)) ≥ λ₀/2 on the recorded s ≤ t: ‖y − f(t)‖² ≤ e^{−λ₀t}‖y − f(0)‖² (Eq. 21), and
    max_r ‖w_r(t) − w_r(0)‖ ≤ R'_w(t) with R_a := R̂_a(t) (Eq. 22). Mutations: the envelope at rate 4λ_max(H+G)(0);
    R'_w without its √n factors."""
    table, worst_env, worst_rw, mut_env, mut_rw = [], 0.0, 0.0, 0, 0
    for m in _widths(ctx):
        r = _run(ctx, m)
        n, alpha, lam0, t = r["X"].shape[0], r["alpha"], _lam0(r), r["t"]
        res = ((r["y"] - r["f"]) ** 2).sum(-1)  # (T, E)
        lmin = torch.linalg.eigvalsh(r["H"])[..., 0]
        hyp = torch.cummin(lmin, 0).values >= lam0 / 2
        env = res[0] * torch.exp(-lam0 * t)[:, None]
        ratio_env = torch.where(hyp, res / env, torch.zeros_like(res))
        worst_env = max(worst_env, float(ratio_env.max()))
        lmax = torch.linalg.eigvalsh(r["H"][0] + r["G"][0])[..., -1]
        mut_env += int((res > res[0] * torch.exp(-4 * lmax[None, :] * t[:, None])).sum())
        _, _, Rw, Ra = _radii(r)
        r0 = res[0].sqrt()
        Rpw = torch.stack([tl.Rp_w(t, lam0, alpha, n, B2, Ra[:, e], float(r0[e])) for e in range(res.shape[1])], 1)
        ok = Rpw > 0
        ratio_rw = torch.where(ok & hyp, Rw / Rpw.clamp_min(1e-300), torch.zeros_like(Rw))
        worst_rw = max(worst_rw, float(ratio_rw.max()))
        Rpw_mut = Rpw / (math.sqrt(n) * (math.sqrt(n) * B2 + Ra)) * (B2 + Ra)  # drop both √n factors
        mut_rw += int(((Rw > Rpw_mut) & ok).sum())
        big_a = int((r["a"][0].abs() > math.sqrt(n) * B2).sum())
        for k in range(1, len(r["steps"]), max(1, len(r["steps"]) // 8)):
            table.append({"m": m, "t": float(t[k]), "loss/envelope": float(ratio_env[k].max()),
                          "R_w hat/R'_w": float(ratio_rw[k].max()), "hypothesis holds": bool(hyp[k].all())})
        table.append({"m": m, "neurons with |a_r(0)| > sqrt(n) beta2 (all seeds)": big_a})
    series = {"loss/envelope": {"x": [row["t"] for row in table if "t" in row and row["m"] == _widths(ctx)[0]],
                                "y": [row["loss/envelope"] for row in table if "t" in row and row["m"] == _widths(ctx)[0]],
                                "xlabel": "t", "ylabel": "|y-f(t)|^2 / (e^{-lambda0 t}|y-f(0)|^2)"}}
    record(verdict_for(max(worst_env, worst_rw), 1.0), observed=max(worst_env, worst_rw), bound=1.0, table=table, series=series,
           hypotheses={"max loss/envelope": worst_env, "max R_w hat/R'_w": worst_rw, "mutated envelope violations": mut_env,
                       "mutated R'_w violations": mut_rw}, config={**fz.TWO_LAYER, "widths": _widths(ctx)},
           tightness="max over recorded times of measured/bound (envelope and radius)")
    assert worst_env <= 1.0 and worst_rw <= 1.0
    assert mut_env > 0 and mut_rw > 0


@pytest.mark.claim("zhu2022/lem-9")
@pytest.mark.xfail(strict=True, reason="the event |a_r(0)| ≤ √n β₂ for all r fails far more often than n e^{-n/2}: "
                                       "the union over the m neurons is missing")
def test_lemma9_output_weight_event_probability(ctx, record):
    """Lemma 9 uses |a_r(0)| ≤ √n β₂ for every r 'w.p. ≥ 1 − n e^{−n/2}'; the union over r gives ≈ 2m Φ̄(√n)."""
    n, m, E = 8, 256, ctx.pick(quick=4000, full=40000)
    a = torch.randn(E, m, generator=record.generator({"t": "a-event"}), dtype=ctx.dtype, device=ctx.device) * B2
    fails = int(((a.abs() > math.sqrt(n) * B2).any(-1)).sum())
    delta = n * math.exp(-n / 2)
    test = failure_rate_test(fails, E, delta, alpha=1e-3)
    from scipy.stats import norm
    union = 1 - (1 - 2 * norm.sf(math.sqrt(n))) ** m
    record("expected-failure", observed=test.rate, bound=delta, config={"n": n, "m": m, "E": E},
           hypotheses={"p-value": test.p_value, "exact failure probability (union over r)": union},
           finding=(f"P(some |a_r(0)| > √n β₂) measured {test.rate:.3f} (exact {union:.3f}) at n={n}, m={m}, vs the stated "
                    f"n e^(-n/2) = {delta:.3f}: the per-neuron tail was not unioned over the m neurons."))
    assert not test.rejects


@pytest.mark.claim("zhu2022/lem-10")
def test_output_layer_radius_and_projection_event(ctx, record):
    """max_r |a_r(t) − a_r(0)| ≤ R'_a(t) with R_w := R̂_w(t) (Eq. 23) where λ_min(H) ≥ λ₀/2 held; and the event
    max_{i,r}|w_r(0)ᵀx_i| ≤ 3β₁√(log(mn²)) over many inits (failure rate vs 1/n). Mutation: β₁ instead of 3β₁√log."""
    table, worst, mut = [], 0.0, 0
    for m in _widths(ctx):
        r = _run(ctx, m)
        n, alpha, lam0, t = r["X"].shape[0], r["alpha"], _lam0(r), r["t"]
        res = ((r["y"] - r["f"]) ** 2).sum(-1)
        hyp = torch.cummin(torch.linalg.eigvalsh(r["H"])[..., 0], 0).values >= lam0 / 2
        _, _, Rw, Ra = _radii(r)
        r0 = res[0].sqrt()
        Rpa = torch.stack([tl.Rp_a(t, lam0, alpha, n, m, B1, Rw[:, e], float(r0[e])) for e in range(res.shape[1])], 1)
        ok = (Rpa > 0) & hyp
        ratio = torch.where(ok, Ra / Rpa.clamp_min(1e-300), torch.zeros_like(Ra))
        worst = max(worst, float(ratio.max()))
        Rpa_mut = Rpa / (3 * B1 * math.sqrt(math.log(m * n * n)) + Rw) * (B1 + Rw)
        mut += int(((Ra > Rpa_mut) & ok).sum())
        for k in range(1, len(r["steps"]), max(1, len(r["steps"]) // 6)):
            table.append({"m": m, "t": float(t[k]), "R_a hat/R'_a": float(ratio[k].max())})
    E, m, n = ctx.pick(quick=2000, full=20000), 256, 8
    X = fz.two_layer_run(m, math.sqrt(m), ctx.device, ctx.dtype, ctx.seed, tuple(sorted(fz.TWO_LAYER.items())))["X"]
    W = torch.randn(E, m, X.shape[1], generator=record.generator({"t": "proj"}), dtype=ctx.dtype, device=ctx.device) * B1
    fails = int(((W @ X.T).abs().amax((-1, -2)) > 3 * B1 * math.sqrt(math.log(m * n * n))).sum())
    test = failure_rate_test(fails, E, 1 / n, alpha=1e-3)
    record(verdict_for(worst, 1.0), observed=worst, bound=1.0, table=table, config={**fz.TWO_LAYER, "widths": _widths(ctx)},
           hypotheses={"projection-event failures": f"{fails}/{E}", "p-value vs 1/n": test.p_value, "mutated R'_a violations": mut})
    assert worst <= 1.0 and not test.rejects
    assert mut > 0


def _short_run(ctx, m, gen_cfg):
    """GD from the same init as two_layer_run but with a step small enough to resolve [0, min(t₁, t₂)]."""
    r = _run(ctx, m)
    X, y, alpha, n = r["X"], r["y"], r["alpha"], r["X"].shape[0]
    lam0 = _lam0(r)
    res0 = ((y - r["f"][0]) ** 2).sum(-1).sqrt()
    Ra = tl.R_a_legible(lam0, alpha, n, m)
    Rw = tl.R_w(lam0, alpha, n, m, B1, B2, Ra)
    r0 = float(res0.max())
    t1 = tl.t1(lam0, alpha, n, B2, Ra, Rw, r0)
    t2 = tl.t2(lam0, alpha, n, m, B1, Ra, Rw, r0)
    tmin = min(t1, t2)
    steps = 60
    eta = tmin / steps
    from theory.sim.models import DeepMLP
    net = DeepMLP([r["W"][0].clone(), r["a"][0].clone()[:, None, :]], r["net"].act, 1.0 / alpha)

    def obs(t, ps, u):
        return {"W": ps[0].detach().clone(), "a": ps[1][:, 0, :].detach().clone(), "H": layer_kernels(net, X, ps)[0]}

    tr = gd(net, X, y, loss="squared", lr=n * eta, steps=steps, record=range(steps + 1), observe=obs)
    loss = tr.loss_tensor()
    return dict(r=r, tr=tr, eta=eta, tmin=tmin, t1=t1, t2=t2, Ra=Ra, Rw=Rw, r0=r0, lam0=lam0, loss=loss)


@pytest.mark.claim("zhu2022/lem-11")
def test_joint_control_up_to_min_t1_t2(ctx, record):
    """For t < min(t₁, t₂) (R_a = legible part, R_w from its formula): λ_min(H(t)) ≥ λ₀/2, |a_r(t) − a_r(0)| ≤ R'_a(t),
    ‖w_r(t) − w_r(0)‖ ≤ R'_w(t) at every GD step (η = min(t₁,t₂)/60); and how much of training the window covers."""
    m = _widths(ctx)[0]
    s = _short_run(ctx, m, {})
    r, tr = s["r"], s["tr"]
    n, alpha = r["X"].shape[0], r["alpha"]
    t = torch.tensor(tr.steps, dtype=ctx.dtype, device=ctx.device) * s["eta"]
    W, a, H = tr.stacked("W"), tr.stacked("a"), tr.stacked("H")
    lmin = torch.linalg.eigvalsh(H)[..., 0]
    dW = (W - W[0]).norm(dim=-1).amax(-1)
    da = (a - a[0]).abs().amax(-1)
    Rpw = tl.Rp_w(t, s["lam0"], alpha, n, B2, s["Ra"], s["r0"])[:, None]
    Rpa = tl.Rp_a(t, s["lam0"], alpha, n, m, B1, s["Rw"], s["r0"])[:, None]
    ok_l = bool((lmin >= s["lam0"] / 2).all())
    rw, ra = float((dW[1:] / Rpw[1:]).max()), float((da[1:] / Rpa[1:]).max())
    # coverage: time for the long run to halve the loss vs min(t1, t2)
    res = ((r["y"] - r["f"]) ** 2).sum(-1).mean(-1)
    t_half = float(r["t"][int((res <= res[0] / 2).nonzero()[0])])
    cover = s["tmin"] / t_half
    mutated = float((dW[1:] / (0.01 * Rpw[1:])).max())  # mutation: R'_w 100× smaller
    verdict = "vacuous" if ok_l and rw <= 1 and ra <= 1 and cover < 1e-2 else ("holds" if ok_l and rw <= 1 and ra <= 1 else "violated")
    record(verdict, observed=max(rw, ra), bound=1.0, config={"m": m, **fz.TWO_LAYER, "steps": 60, "eta": s["eta"]},
           hypotheses={"t1": s["t1"], "t2": s["t2"], "R_a (legible part)": s["Ra"], "R_w": s["Rw"], "lambda_min ok": ok_l,
                       "max R_w hat/R'_w": rw, "max R_a hat/R'_a": ra, "t to halve loss": t_half, "coverage min(t1,t2)/t_half": cover,
                       "mutated (R'_w/100) ratio": mutated},
           finding=(f"All three conditions hold on [0, min(t1,t2)], but min(t1,t2) = {s['tmin']:.2g} is {cover:.1e} of the time "
                    f"the loss takes to halve ({t_half:.2g}): the lemma controls a negligible initial stretch of training."))
    assert ok_l and rw <= 1 and ra <= 1
    assert mutated > 1


@pytest.mark.claim("zhu2022/thm-3")
def test_stability_bound_24_and_init_events(ctx, record):
    """(24): P(f_t, ε) ≤ (ε/α) Σ_r |a_r(t)| ‖w_r(t)‖ at every recorded t (closed form of P for scalar output);
    (b) per-neuron init events |a_r(0)| ≤ √(2/π) n β₂ and ‖w_r(0)‖ ≤ 4β₁√d + 2β₁√(log n) vs the stated 1/n rate;
    (c) Eq. (25) with measured maxima in place of R'_a, R'_w. Mutation: (24) with max_r instead of Σ_r."""
    eps, Nt = 0.1, 256
    gen = record.generator({"t": "thm3"})
    table, worst24, mut24, worst25 = [], 0.0, 0, 0.0
    for m in _widths(ctx):
        r = _run(ctx, m)
        d, n, alpha = r["X"].shape[1], r["X"].shape[0], r["alpha"]
        Xt = torch.randn(Nt, d, generator=gen, dtype=ctx.dtype, device=ctx.device)
        Xt = Xt / Xt.norm(dim=1, keepdim=True)
        _, _, Rw, Ra = _radii(r)
        from theory.sim.models import DeepMLP
        for k in range(0, len(r["steps"]), max(1, len(r["steps"]) // 8)):
            net = DeepMLP([r["W"][k], r["a"][k][:, None, :]], r["net"].act, 1.0 / alpha)
            P = pt.stability_scalar(pt.input_grads(net, Xt), eps)  # (E,)
            b24 = tl.eq24_bound(r["a"][k], r["W"][k], alpha, eps)
            bmax = eps / alpha * (r["a"][k].abs() * r["W"][k].norm(dim=-1)).amax(-1)
            b25 = torch.tensor([tl.eq25_bound(eps, m, alpha, n, d, B1, B2, float(Ra[k, e]), float(Rw[k, e]))
                                for e in range(P.shape[0])], dtype=ctx.dtype, device=ctx.device)
            worst24 = max(worst24, float((P / b24).max()))
            worst25 = max(worst25, float((P / b25).max()))
            mut24 += int((P > bmax).sum())
            table.append({"m": m, "t": float(r["t"][k]), "P/eps": float(P.mean() / eps), "P/(24)": float((P / b24).max()),
                          "P/(25) measured radii": float((P / b25).max())})
        a0, w0 = r["a"][0], r["W"][0]
        fa = float((a0.abs() > math.sqrt(2 / math.pi) * n * B2).float().mean())
        fw = float((w0.norm(dim=-1) > 4 * B1 * math.sqrt(d) + 2 * B1 * math.sqrt(math.log(n))).float().mean())
        table.append({"m": m, "per-neuron |a_r(0)| event failure": fa, "per-neuron |w_r(0)| event failure": fw})
    record(verdict_for(worst24, 1.0), observed=worst24, bound=1.0, table=table, config={**fz.TWO_LAYER, "eps": eps},
           hypotheses={"max P/(25) with measured radii": worst25, "mutated (max_r) violations": mut24},
           tightness="max P/(24) over times and seeds (sign cancellation and |wᵀu| ≪ ‖w‖‖u‖ make it ≪ 1)")
    assert worst24 <= 1.0 and worst25 <= 1.0
    assert mut24 > 0
    ev = [row for row in table if "per-neuron |a_r(0)| event failure" in row]
    assert all(row["per-neuron |a_r(0)| event failure"] <= 1 / 8 and row["per-neuron |w_r(0)| event failure"] <= 1 / 8 for row in ev)


@pytest.mark.claim("zhu2022/thm-3")
def test_eq25_at_window_end(ctx, record):
    """(25) with R'_a, R'_w evaluated at t = min(t₁, t₂) (the theorem's own radii; R_a = legible part) on the
    short GD run that resolves the window: P(f_t, ε) ≤ (εm/α)(R'_a + √(2/π)nβ₂)(R'_w + 4β₁√d + 2β₁√log n).
    Mutation: (25) without its initialisation terms is violated."""
    m = _widths(ctx)[0]
    s = _short_run(ctx, m, {})
    r, tr, eps = s["r"], s["tr"], 0.1
    n, d, alpha = r["X"].shape[0], r["X"].shape[1], r["alpha"]
    Xt = torch.randn(256, d, generator=record.generator({"t": "eq25"}), dtype=ctx.dtype, device=ctx.device)
    Xt = Xt / Xt.norm(dim=1, keepdim=True)
    from theory.sim.models import DeepMLP
    net = DeepMLP([tr.stacked("W")[-1], tr.stacked("a")[-1][:, None, :]], r["net"].act, 1.0 / alpha)
    P = float(pt.stability_scalar(pt.input_grads(net, Xt), eps).max())
    Rpa = float(tl.Rp_a(s["tmin"], s["lam0"], alpha, n, m, B1, s["Rw"], s["r0"]))
    Rpw = float(tl.Rp_w(s["tmin"], s["lam0"], alpha, n, B2, s["Ra"], s["r0"]))
    b = tl.eq25_bound(eps, m, alpha, n, d, B1, B2, Rpa, Rpw)
    b_mut = eps * m / alpha * Rpa * Rpw  # mutation: (25) without its initialisation terms (movement only)
    record(verdict_for(P, b), observed=P, bound=b, config={"m": m, "eps": eps, **fz.TWO_LAYER},
           hypotheses={"R'_a(tmin)": Rpa, "R'_w(tmin)": Rpw, "bound without init terms (mutation)": b_mut},
           tightness="P/(25) at t = min(t1, t2); the Markov-based |a_r(0)| ≤ √(2/π)nβ₂ and the prefactor m make it loose")
    assert P <= b
    assert P > b_mut


@pytest.mark.claim("zhu2022/thm-3")
@pytest.mark.xfail(strict=True, reason="at CPU scale P(f_t, ε)/ε at matched loss is flat in m (non-lazy, β = m^-c): the "
                                       "claimed width benefit is not reproduced")
def test_width_trend_non_lazy(ctx, record):
    """Asymptotic claim (final line illegible): with α ≍ 1 and β₁ = β₂ = m^{−c}, P/ε decreases with width
    ('width helps' in the non-lazy regime; also Appendix E.5). Measured: P(f_t, ε)/ε at matched training loss (first
    recorded time with loss ≤ 5% of the initial) over a geometric width grid; the claim requires a significantly
    negative log-log slope (99% CI below 0) for every c."""
    cs = ctx.pick(quick=(0.5, 1.0), full=(0.5, 1.0, 1.5))
    widths = ctx.pick(quick=(64, 256, 1024, 4096), full=(64, 256, 1024, 4096, 16384))
    d, n, E, eps, steps = 5, 8, 4, 0.1, ctx.pick(quick=600, full=20000)
    gen = record.generator({"t": "width"})
    X = torch.randn(n, d, generator=gen, dtype=ctx.dtype, device=ctx.device)
    X = X / X.norm(dim=1, keepdim=True)
    y = torch.randn(n, generator=gen, dtype=ctx.dtype, device=ctx.device)
    Xt = torch.randn(256, d, generator=gen, dtype=ctx.dtype, device=ctx.device)
    Xt = Xt / Xt.norm(dim=1, keepdim=True)
    table, fits, series = [], {}, {}
    from theory.sim.models import DeepMLP
    for c in cs:
        Ps = []
        for m in widths:
            b = m ** (-c)
            net = tl.build(E, d, m, alpha=1.0, beta1=b, beta2=b, generator=gen, device=ctx.device)
            w0 = [w.clone() for w in net.weights]
            keep = lambda t, ps, u: {"W": ps[0].detach().clone(), "a": ps[1].detach().clone()}
            tr = gd(net, X, y, loss="squared", lr=n * 0.05, steps=steps, record=geometric_grid(steps, 60), observe=keep)
            L = tr.loss_tensor()
            hit = (L <= 0.05 * L[0]).all(-1).nonzero()
            k = int(hit[0]) if len(hit) else len(tr.steps) - 1
            nk = DeepMLP([tr.obs["W"][k], tr.obs["a"][k]], net.act, 1.0)
            P = float(pt.stability_scalar(pt.input_grads(nk, Xt), eps).mean()) / eps
            rel = float(((tr.obs["W"][k] - w0[0]).flatten(1).norm(dim=1) / w0[0].flatten(1).norm(dim=1)).min())
            Ps.append(P)
            table.append({"c": c, "m": m, "P/eps at matched loss": P, "step": tr.steps[k], "reached 5% loss": bool(len(hit)),
                          "min rel change W1 (non-lazy if >= 1)": rel})
        f = fit_power(widths, Ps)
        fits[c] = {"slope": f.exponent, "ci99": f.ci}
        series[f"c={c}"] = {"x": list(widths), "y": Ps, "xlabel": "width m", "ylabel": "P/eps at matched loss",
                            "logx": True, "logy": True, "plot": "non-lazy width trend"}
    dec = all(v["ci99"][1] < 0 for v in fits.values())
    slopes = ", ".join(f"c={c}: {v['slope']:.3f} (99% CI {v['ci99'][0]:.3f}..{v['ci99'][1]:.3f})" for c, v in fits.items())
    record("holds" if dec else "expected-failure", observed=max(v["slope"] for v in fits.values()), bound=0.0, ratio=None,
           table=table, series=series, config={"d": d, "n": n, "E": E, "eps": eps, "cs": cs, "widths": widths},
           hypotheses={"log-log slope of P/eps vs m": fits},
           finding="" if dec else (f"P(f_t,ε)/ε at matched loss does not decrease significantly with width ({slopes}); "
                                   "the runs are non-lazy for c=1. Tiny-scale stand-in, not the paper's setting."),
           note="Theorem 3's final bound is illegible: the check tests its stated direction (decreasing in m)")
    assert all(r["reached 5% loss"] for r in table)
    assert dec
