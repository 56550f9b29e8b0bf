"""Appendix D definitions and kernel lemmas: zhu2022/def-D, zhu2022/rem-D.1, zhu2022/lem-6, zhu2022/lem-7,
zhu2022/rem-D.2.  Two-layer f = (1/α)Σ a_r φ(w_rᵀx), both layers trained on ½Σ(f − y)²; H = first-layer
tangent kernel, G = second-layer kernel (theory.sim.ntk.layer_kernels)."""
from __future__ import annotations

import math

import numpy as np

import pytest
import torch
from scipy import stats as st

from theory import ClaimViolation, assert_claim
from theory.papers.zhu2022 import two_layer as tl
from theory.sim.ntk import layer_kernels
from theory.sim.train import gd
from theory.stats import failure_rate_test, fit_power
from theory.device import draw

from ._references import k_reference

D, N = 5, 8
# Family-wise level of the Monte-Carlo z-tests of H^∞ (Bonferroni over its entries). Issue 35: 1e-4 (was 1e-3); the wrong
# closed form (π − θ)/π is off by a factor 2 on every entry, |z| in the hundreds at R = 10⁶ draws, against z_crit ≈ 4.9.
MC_ALPHA = 1e-4


def _data(gen, ctx, n=N, d=D):
    X = draw(torch.randn, n, d, generator=gen, dtype=ctx.dtype, device=ctx.device)
    return X / X.norm(dim=1, keepdim=True), draw(torch.randn, n, generator=gen, dtype=ctx.dtype, device=ctx.device)


def _H_direct(net, X, alpha):
    """H_ij = (1/α²) Σ_r a_r² x_iᵀx_j 1{w_rᵀx_i ≥ 0} 1{w_rᵀx_j ≥ 0}, G_ij = (1/α²) Σ_r φ(w_rᵀx_i) φ(w_rᵀx_j) (definition)."""
    W, a = net.weights[0], net.weights[1][:, 0, :]
    Z = X @ W.transpose(-1, -2)  # (E, n, m)
    I = (Z >= 0).to(X.dtype)
    H = ((I * a[:, None, :] ** 2) @ I.transpose(-1, -2)) * (X @ X.T) / alpha ** 2
    P = Z.clamp_min(0)
    return H, P @ P.transpose(-1, -2) / alpha ** 2


@pytest.mark.claim("zhu2022/def-D")
def test_kernels_match_definitions_and_limit(ctx, record):
    """H(0), G(0) from autograd = the Appendix-D formulas (float64); H^∞ closed form (m β₂²/α²)K vs Monte Carlo;
    R'_w(t₁) = R_w and R'_a(t₂) = R_a (definitions of t₁, t₂)."""
    gen = record.generator({"t": "defD"})
    X, _ = _data(gen, ctx)
    m, alpha, b1, b2 = 64, 3.0, 0.8, 1.3
    net = tl.build(3, D, m, alpha=alpha, beta1=b1, beta2=b2, generator=gen, device=ctx.device)
    H, G = layer_kernels(net, X)
    Hd, Gd = _H_direct(net, X, alpha)
    err = float(max((H - Hd).abs().max() / Hd.abs().max(), (G - Gd).abs().max() / Gd.abs().max()))
    # H^∞ by Monte Carlo: per-neuron expectation E[a² x_iᵀx_j 1 1] with 10^6 draws
    R = ctx.pick(quick=1_000_000, full=10_000_000)
    s1 = torch.zeros(N, N, dtype=ctx.dtype, device=ctx.device)
    s2 = torch.zeros_like(s1)
    chunk = 200_000  # bounded memory: (chunk, n, n) per pass
    for start in range(0, R, chunk):
        k = min(chunk, R - start)
        w = draw(torch.randn, k, D, generator=gen, dtype=ctx.dtype, device=ctx.device) * b1
        a2 = (draw(torch.randn, k, generator=gen, dtype=ctx.dtype, device=ctx.device) * b2) ** 2
        I = (w @ X.T >= 0).to(ctx.dtype)  # (k, n)
        samp = a2[:, None, None] * I[:, :, None] * I[:, None, :] * (X @ X.T)  # (k, n, n)
        s1 += samp.sum(0)
        s2 += (samp ** 2).sum(0)
    mc = s1 / R
    se = ((s2 / R - mc ** 2).clamp_min(0) * R / (R - 1)).sqrt() / math.sqrt(R)
    closed = b2 ** 2 * tl.K_matrix(X)  # per-neuron: H^∞/(m/α²)
    iu = torch.triu_indices(N, N)
    z = ((mc - closed) / se)[iu[0], iu[1]]
    zcrit = st.norm.isf(MC_ALPHA / (2 * len(z)))  # Bonferroni over the n(n+1)/2 entries, family level MC_ALPHA
    wrong = b2 ** 2 * tl.K_matrix(X) * 2  # mutation: (π−θ)/π instead of (π−θ)/(2π)
    zw = ((mc - wrong) / se)[iu[0], iu[1]].abs().max()
    lam0 = tl.lambda0(X, m, alpha, b2)
    # λ₀ = λ_min(H^∞), H^∞ = (m β₂²/α²)·xᵢᵀxⱼ(π − θᵢⱼ)/(2π), evaluated apart in numpy (β₂ = 1.3 ≠ 1, so a wrong
    # power of β₂ or of α, a factor ≥ 1.3, shows). Error model of the gap: θᵢᵢ = arccos(≈1) carries an absolute error
    # up to √(2·4eps) ≈ 3e-8 (arccos is ill-conditioned at 1), so each entry is off by ≤ |G|ᵢⱼ·3e-8/(2π) and λ_min by
    # ≤ n·max|G|·3e-8/(2π) (Weyl), plus 100·n·eps·λ_max for the eigensolvers; relative to λ_min, asserted
    Xn = X.detach().cpu().numpy()
    Gs = m * b2 * b2 / (alpha * alpha) * (Xn @ Xn.T)
    ev = np.linalg.eigvalsh(m * b2 * b2 / (alpha * alpha) * k_reference(X))
    lam0_np = float(ev[0])
    e0 = abs(lam0 / lam0_np - 1)
    e0_tol = (len(ev) * float(np.abs(Gs).max()) * 3e-8 / (2 * np.pi)
              + 100 * len(ev) * np.finfo(float).eps * float(ev[-1])) / lam0_np
    assert e0_tol < 0.05, e0_tol  # the pin can still see a factor 1.3
    Ra = tl.R_a_legible(lam0, alpha, N, m)
    Rw = tl.R_w(lam0, alpha, N, m, b1, b2, Ra)
    r0 = 2.0
    t1 = tl.t1(lam0, alpha, N, b2, Ra, Rw, r0)
    t2 = tl.t2(lam0, alpha, N, m, b1, Ra, Rw, r0)
    e1 = abs(float(tl.Rp_w(t1, lam0, alpha, N, b2, Ra, r0)) - Rw) / Rw
    e2 = abs(float(tl.Rp_a(t2, lam0, alpha, N, m, b1, Rw, r0)) - Ra) / Ra if math.isfinite(t2) else 0.0
    # K holds for inputs of any norm (E 1{wᵀxᵢ ≥ 0}1{wᵀxⱼ ≥ 0} = (π − θᵢⱼ)/(2π)): K(2X) = 4K(X), exactly in binary
    # floating point (scaling by 2 is exact, the angles are of the normalized rows), though the runs use unit rows
    scale_err = float((tl.K_matrix(2 * X) / 4 - tl.K_matrix(X)).abs().max() / tl.K_matrix(X).abs().max())
    # err: the same sums in another order (rounding only); e1, e2: a log/exp round trip in float64
    ok = err < 1e-12 and float(z.abs().max()) < zcrit and e1 < 1e-12 and e2 < 1e-12 and e0 <= e0_tol and scale_err <= 1e-15
    record("holds" if ok else "violated", observed=float(z.abs().max()), bound=float(zcrit), evidence="consistency",
           inside=True, inside_reason=f"definitions: unit inputs ‖x_i‖ = 1 (n = {N}, d = {D}), the loss a sum; no other hypothesis",
           false_alarm=MC_ALPHA,  # the two-sided z-tests (normal approximation); the other asserts are deterministic
           covers=["kernel formulas", "H-infinity closed form", "t1 t2 definitions"],
           config={"m": m, "alpha": alpha, "beta1": b1, "beta2": b2, "n": N, "d": D, "R": R},
           hypotheses={"autograd vs definition (rel)": err, "K(2X)/4 vs K(X) (rel)": scale_err, "lambda0 vs numpy (rel)": e0, "its tolerance": e0_tol, "R'_w(t1)=R_w rel err": e1, "R'_a(t2)=R_a rel err": e2,
                       "kappa0": tl.kappa0(X), "lambda0": lam0, "R_a (legible part)": Ra, "R_w": Rw, "t1": t1, "t2": t2},
           tightness="max |z| of MC vs the closed form of H^∞ over the n(n+1)/2 entries (Bonferroni, family MC_ALPHA)")
    record("holds" if float(zw) > zcrit else "violated", role="companion", observed=float(zw), bound=float(zcrit),
           note=f"wrong closed form (π−θ)/π: max |z| = {float(zw):.1f} (> z_crit: rejected)")
    assert ok, (err, float(z.abs().max()), e1, e2, e0)
    assert float(zw) > zcrit


@pytest.mark.claim("zhu2022/rem-D.1")
def test_lambda0_positive_and_collapses_for_parallel_inputs(ctx, record):
    """κ₀ = λ_min(K) > 0 for the data; when two inputs approach each other κ₀ → 0 (∝ angle), and exactly
    parallel inputs give κ₀ = 0 — the assumption check flags them."""
    gen = record.generator({"t": "remD1"})
    X, _ = _data(gen, ctx)
    k0 = tl.kappa0(X)
    deltas = [1e-1, 3e-2, 1e-2, 3e-3, 1e-3]
    ks = []
    z = draw(torch.randn, D, generator=gen, dtype=ctx.dtype, device=ctx.device)
    for dl in deltas:
        Y = X.clone()
        Y[1] = X[0] + dl * z
        Y[1] = Y[1] / Y[1].norm()
        ks.append(tl.kappa0(Y))
    Yp = X.clone()
    Yp[1] = X[0]
    kpar = tl.kappa0(Yp)
    f = fit_power(deltas, ks)
    # kpar: two identical rows (their angle is exactly 0 in K_matrix, theory.sim.ntk.row_angles; arccos gave ~1e-8
    # and κ₀ ≈ 1e-9 at seed 5), so K is exactly singular and κ₀ is eigvalsh rounding, ≲ n·ε·‖K‖ ≈ 1e-14;
    # κ₀ ∝ angle between the two inputs: the fitted log-log slope over
    # a 100× range of angles within ±0.2 of 1 (a quadratic collapse, slope 2, would be rejected)
    ok = k0 > 1e-3 and abs(kpar) < 1e-12 and 0.8 < f.exponent < 1.2
    record("holds" if ok else "violated", observed=k0, bound=0.0, ratio=None, config={"n": N, "d": D}, evidence="test",
           rejects=(f"'κ₀ collapses quadratically in the angle' (slope 2) and 'κ₀ stays positive for parallel inputs': the "
                    f"fitted slope {f.exponent:.3f} is in [0.8, 1.2] and κ₀ of identical inputs is {kpar:.1e}"),
           inside=True, inside_reason=f"data on the unit sphere (n = {N}, d = {D}), no two inputs parallel (κ₀ = {k0:.3g} > 0)",
           covers=["lambda0 > 0", "collapse for parallel inputs"],
           hypotheses={"kappa0 vs delta slope": f.exponent, "kappa0 parallel": kpar},
           tightness="κ₀ of the data (> 0 assumed); κ₀ of exactly parallel inputs (= 0) and its slope in the angle",
           series={"kappa0 vs perturbation": {"x": deltas, "y": ks, "xlabel": "delta", "ylabel": "kappa0",
                                              "logx": True, "logy": True}})
    assert ok, (k0, kpar, f.exponent)


@pytest.mark.claim("zhu2022/lem-6")
def test_output_dynamics_first_order(ctx, record):
    """GD: f(k+1) − f(k) = η(H + G)(y − f) + O(η²): residual/η² constant (slope 2 over a geometric η grid);
    dropping G (mutation) leaves an O(η) residual (slope 1).

    The expansion is smooth only while no ReLU pre-activation w_rᵀx_i changes sign during the step; a flip adds
    a non-smooth term (seen for η ≥ 2e-3 at some seeds). The slope is fitted on the step sizes without a flip
    (at least four are required), and the flips per η are recorded."""
    gen = record.generator({"t": "lem6"})
    X, y = _data(gen, ctx)
    m = 200
    etas = [4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4, 6.25e-5]
    one = tl.build(1, D, m, alpha=math.sqrt(m), beta1=1.0, beta2=1.0, generator=gen, device=ctx.device)
    net = tl.build(len(etas), D, m, alpha=math.sqrt(m), beta1=1.0, beta2=1.0, generator=gen, device=ctx.device)
    net.weights = [w.repeat(len(etas), 1, 1) for w in one.weights]
    H, G = layer_kernels(net, X)
    f0 = net(X)
    Z0 = X @ net.weights[0].transpose(-1, -2)
    eta = torch.tensor(etas, dtype=ctx.dtype, device=ctx.device)
    gd(net, X, y, loss="squared", lr=N * eta, steps=1, record=[])
    flips = ((Z0 >= 0) != (X @ net.weights[0].transpose(-1, -2) >= 0)).flatten(1).sum(1).tolist()
    df = net(X) - f0
    pred = eta[:, None] * ((H + G) @ (y - f0)[..., None])[..., 0]
    predH = eta[:, None] * (H @ (y - f0)[..., None])[..., 0]
    res = (df - pred).norm(dim=-1).tolist()
    resH = (df - predH).norm(dim=-1).tolist()
    smooth = [i for i, k in enumerate(flips) if k == 0]
    assert len(smooth) >= 4, f"activation flips at every step size but {len(smooth)}: {dict(zip(etas, flips))}"
    es = [etas[i] for i in smooth]
    f, fH = fit_power(es, [res[i] for i in smooth]), fit_power(es, [resH[i] for i in smooth])
    ok = 1.9 <= f.exponent <= 2.1
    record("holds" if ok else "violated", observed=f.exponent, bound=2.0, config={"m": m, "n": N, "d": D, "etas": etas},
           evidence="test", rejects=f"'G dropped' (f(k+1) − f(k) ≈ ηH(y − f)): its residual slope is {fH.exponent:.3f}, O(η)",
           inside=True, inside_reason=(f"two-layer model of Eq. (16), quadratic loss (a sum); the slope is fitted on the "
                                       f"{len(es)} step sizes without a ReLU flip in the step (the expansion's smoothness)"),
           covers=["first-order GD identity"],
           table=[{"eta": e, "ReLU flips in the step": k, "residual": r, "residual/eta^2": r / e ** 2,
                   "residual without G": rh} for e, k, r, rh in zip(etas, flips, res, resH)],
           series={"residual": {"x": etas, "y": res, "xlabel": "eta", "ylabel": "|df - eta(H+G)(y-f)|", "logx": True, "logy": True},
                   "residual without G": {"x": etas, "y": resH, "xlabel": "eta", "ylabel": "residual", "logx": True,
                                          "logy": True, "plot": "residual"}},
           tightness=(f"slope {f.exponent:.3f} (CI {f.ci[0]:.3f}..{f.ci[1]:.3f}) over the {len(es)} step sizes without "
                      f"an activation flip; without G slope {fH.exponent:.3f}"))
    record("holds" if fH.exponent < 1.2 else "violated", role="companion", observed=fH.exponent, bound=1.2,
           note=f"wrong version f(k+1) − f(k) ≈ ηH(y − f) (G dropped): residual slope {fH.exponent:.3f} (< 1.2: O(η), rejected)")
    assert ok, f
    assert fH.exponent < 1.2


H0_CHUNK_BYTES = 1 << 30
"""Members per draw of _H0_events: first-layer weights of at most this many bytes (the full profile's E = 4000 at
m = 16384, d = 64 would be 33.5 GB at once); the quick profile's draws fit in one chunk, so its numbers are unchanged."""


def _H0_events(ctx, gen, X, m, alpha, E, beta2=1.0):
    Hinf = m * beta2 ** 2 / alpha ** 2 * tl.K_matrix(X)
    lam0 = tl.lambda0(X, m, alpha, beta2)
    c = max(1, min(E, H0_CHUNK_BYTES // (m * X.shape[1] * X.element_size())))
    oks, devs = [], []
    for e0 in range(0, E, c):
        net = tl.build(min(c, E - e0), X.shape[1], m, alpha=alpha, beta1=1.0, beta2=beta2, generator=gen,
                       device=ctx.device)
        H, _ = _H_direct(net, X, alpha)
        dev = torch.linalg.matrix_norm(H - Hinf, 2)
        lmin = torch.linalg.eigvalsh(H)[:, 0]
        oks.append((dev <= lam0 / 4) & (lmin >= 0.75 * lam0))
        devs.append((H - Hinf).abs().amax((-1, -2)))
        del net, H
    return torch.cat(oks), torch.cat(devs), lam0


@pytest.mark.claim("zhu2022/lem-7")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="Lemma 7's event is exactly invariant to α (H(0), H^∞, λ₀ all scale as 1/α²), so the printed "
                          "condition on α cannot guarantee it; it fails at small width")
def test_lemma7_condition_on_alpha(ctx, record):
    """As printed: α > 16nβ₂²√(log 2n³)/λ₀ ⇒ w.p. ≥ 1 − 1/n, ‖H(0) − H^∞‖ ≤ λ₀/4 and λ_min(H(0)) ≥ ¾λ₀.
    With λ₀ = mβ₂²κ₀/α², the condition holds for every small enough α; test at m = 16, α = 1e-3."""
    gen = record.generator({"t": "lem7-alpha"})
    X, _ = _data(gen, ctx)
    E, m = ctx.pick(quick=500, full=5000), 16
    res, thr = {}, {}
    for alpha in (1e-3, 1.0, 1e3):
        ok, _, lam0 = _H0_events(ctx, record.generator({"t": "lem7-alpha", "same init": 1}), X, m, alpha, E)
        cond = alpha > 16 * N * math.sqrt(math.log(2 * N ** 3)) / lam0
        res[alpha] = (ok, cond)
        thr[alpha] = 16 * N * math.sqrt(math.log(2 * N ** 3)) / lam0
    ok_small, cond_small = res[1e-3]
    same = all(bool((res[a][0] == ok_small).all()) for a in res)
    fails = int((~ok_small).sum())
    test = failure_rate_test(fails, E, delta=1 / N, alpha=1e-3)
    # preconditions (plain asserts: if they fail the test fails instead of passing as a finding): the printed
    # condition holds at α = 1e-3, and the event does not depend on α (H(0), H^∞, λ₀ all carry 1/α²)
    assert cond_small, "the printed condition on α must hold at α = 1e-3"
    assert same, "the event must be identical for α ∈ {1e-3, 1, 1e3}"
    ok = not test.rejects
    # the size of the finding: the failure rate is refuted not only against the 1/n read in the OCR but against any
    # reading of the illegible probability up to the 3/n that Lemma 11 accumulates (the 99.9% lower bound is above it)
    lo = float(st.beta.ppf(1e-3, fails, E - fails + 1)) if fails else 0.0
    record("holds" if ok else "expected-failure", observed=test.rate, bound=1 / N,
           config={"m": m, "n": N, "E": E, "alphas": list(res)}, covers=["condition on alpha", "conclusion events"],
           finding_type="" if ok else "false-as-stated", evidence="test",
           inside=cond_small, inside_reason=(f"the printed condition α > 16nβ₂²√(log 2n³)/λ₀ at α = 1e-3: right side "
                                             f"{thr[1e-3]:.3g} ({'holds' if cond_small else 'fails'}); unit inputs, λ₀ > 0 "
                                             f"(κ₀ = {tl.kappa0(X):.3g}): Lemma 7's hypotheses"),
           hypotheses={"printed condition holds at alpha=1e-3": cond_small, "event identical for all alpha": same,
                       "p-value": test.p_value, "99.9% lower bound of the failure rate": lo},
           finding="" if ok else (
               f"With the printed condition on α satisfied (α=1e-3, m={m}), the event failed in {test.rate:.0%} of {E} "
               f"inits (claimed ≤ 1/n = {1 / N:.3f}; p={test.p_value:.1e}; 99.9% lower bound {lo:.2f} > 3/n); the event is "
               "identical for α ∈ {1e-3, 1, 1e3}, so the requirement is really on the width (√m ≳ n/κ₀), not on α."))
    assert ok or lo > 3 / N, f"finding size: failure rate lower bound {lo:.3f} not above 3/n"
    assert_claim(ok, f"event failure rate {test.rate:.3f} > 1/n under the printed condition on α")


@pytest.mark.claim("zhu2022/lem-7")
def test_lemma7_width_dependence(ctx, record):
    """Corrected reading: the event probability rises with width m (fluctuations ∝ √m vs mean ∝ m); entrywise
    deviation |H(0) − H^∞| ∝ √m β₂²/α²; the corrected sufficient width √m ≳ 16n√(log 2n³)/κ₀ is reported."""
    gen = record.generator({"t": "lem7-width"})
    X, _ = _data(gen, ctx, d=64)  # near-orthogonal inputs: larger κ₀, so the event is reached at CPU widths
    E = ctx.pick(quick=400, full=4000)
    widths = ctx.pick(quick=[16, 64, 256, 1024, 4096], full=[16, 64, 256, 1024, 4096, 16384])
    rows, devs = [], []
    for m in widths:
        ok, dev, lam0 = _H0_events(ctx, gen, X, m, 1.0, E)
        rows.append({"m": m, "P(event)": float(ok.float().mean()), "mean max|H0-Hinf|": float(dev.mean()),
                     "bernstein-type scale sqrt(m log(n^2/0.01))": math.sqrt(m * math.log(N ** 2 / 0.01))})
        devs.append(float(dev.mean()))
    f = fit_power(widths, devs)
    k0 = tl.kappa0(X)
    m_corr = (16 * N * math.sqrt(math.log(2 * N ** 3)) / k0) ** 2
    m_star = next((r["m"] for r in rows if r["P(event)"] >= 0.95), None)
    probs = [r["P(event)"] for r in rows]
    # deviation ∝ √m: the fitted exponent within ±0.1 of 1/2 (5 widths over a 256× range, mean of E = 400 draws each);
    # the event probability rises with m and reaches 0.95 inside the grid
    ok = 0.4 <= f.exponent <= 0.6 and probs[-1] >= 0.95 and probs[0] < probs[-1]
    record("holds" if ok else "violated", observed=f.exponent, bound=0.5, ratio=None, reading="reconstructed",
           evidence="test", rejects=("a width-independent deviation (exponent 0) or one linear in m (exponent 1): both "
                                     f"outside [0.4, 0.6], where the fitted exponent {f.exponent:.3f} lies"),
           inside=True, inside_reason=f"at init, unit inputs (n = {N}, d = 64), κ₀ = {tl.kappa0(X):.3g} > 0; α = 1 (the event "
                                      "does not depend on α)",
           note="a corrected reading (a width condition), not the printed lemma: shown beside its verdict",
           config={"n": N, "d": 64, "E": E, "widths": widths}, table=rows,
           hypotheses={"empirical m* (P>=0.95)": m_star, "corrected sufficient m (reported; its looseness)": m_corr, "kappa0": k0},
           series={"P(event) vs m": {"x": widths, "y": probs, "xlabel": "m", "ylabel": "P(event)", "logx": True}},
           tightness=f"deviation ∝ m^{f.exponent:.3f}; corrected width condition m ≥ {m_corr:.3g} vs empirical m* = {m_star}")
    assert ok, (f.exponent, probs)


@pytest.mark.claim("zhu2022/rem-D.2")
def test_remark_gaussian_output_weights(ctx, record):
    """Remark after Lemma 7 (Gaussian instead of ±1 output weights makes the analysis harder): no numerical
    content. Structural fact checked: with a_r ~ N(0, β₂²), H(0) = (1/α²)Σ a_r² (…) has E over a equal to the ±β₂
    case (E a² = β₂²), so H^∞ is the same and only the fluctuations differ."""
    gen = record.generator({"t": "remD2"})
    X, _ = _data(gen, ctx)
    m, E = 256, 400
    net = tl.build(E, D, m, alpha=1.0, beta1=1.0, beta2=1.0, generator=gen, device=ctx.device)
    H, _ = _H_direct(net, X, 1.0)
    net.weights[1] = net.weights[1].sign()
    Hs, _ = _H_direct(net, X, 1.0)
    sd_g, sd_s = float(H.std(0).mean()), float(Hs.std(0).mean())
    record("not-applicable", observed=sd_g / sd_s, config={"m": m, "E": E}, evidence="consistency",
           inside=True, inside_reason="a remark: no hypotheses and no bound (the record never reads 'violated')",
           note=("remark without checkable content; measured: fluctuation of H(0) entries with Gaussian a is "
                 f"{sd_g / sd_s:.2f}× that with ±1 a (same mean H^∞)"))
    assert sd_g > sd_s
