"""Gradient flow on the localized loss along an escape direction, and the radial/angular split.

``bantzis2025/prop-2.2``, ``prop-A.2``: norm law along an escape ray (printed constant off by L^{L/2}).
``bantzis2025/eq-escape-time``: output bound and escape time (printed sign and constant wrong).
``bantzis2025/prop-A.1``: ∂_t‖θ‖ and ∂_t θ̄ identities. ``bantzis2025/eq-stime``: reparametrized time
(printed exponentials miss the factor L) and the scaling law θ_α(t) = αθ(α^{L−2}t).

Escape directions are exact interior ones of width-one nets (no kink nearby), so the flow is smooth
and scipy's DOP853 (rtol 1e-11, atol 1e-12) is accurate to ~1e-11 relative: tolerance 1e-9.
"""
import math

import numpy as np
import pytest
import torch

from theory.papers.bantzis2025 import bounds as B
from theory.papers.bantzis2025 import escape as es
from theory.papers.bantzis2025 import localized as loc
from theory.sim.heun import heun_flow

TOL = 1e-9  # DOP853 at rtol 1e-11 over ≤ 7 sample times: global error ~1e-11 relative


def _data(record, ctx):
    """Gaussian (X, G), N = 10, d = 3, conditioned on having an interior width-one escape direction
    (not guaranteed by the paper; redraws are seeded — the first draw is kept when it qualifies)."""
    g = record.generator({"data": "gaussian N=10 d=3"})
    X, G, _, _ = es.gaussian_with_interior_direction(10, 3, generator=g, dtype=ctx.dtype, device=ctx.device)
    return X, G


def _norms(traj):
    n = traj[0].shape[0]
    return np.sqrt(sum((p.reshape(n, -1) ** 2).sum(1).numpy() for p in traj))


def _run_ray(X, G, L, start_scale=1.0):
    w, c, s = es.interior_escape_directions(X, G)[0]
    rho = es.direction_params(w, c, L)
    _, res = loc.def21_residual(rho, X, G)
    th0 = loc.scale(rho, torch.tensor([start_scale], dtype=X.dtype))
    r0 = math.sqrt(L) * start_scale
    T = 3.0 / s if L == 2 else 0.9 * B.blowup_time(r0, s, L)
    t = np.linspace(0, T, 7)
    tt, traj, sol = es.flow(th0, X, G, t, atol=1e-12 * start_scale)  # atol scaled with the state
    obs = _norms(traj)
    dirs = torch.cat([p.reshape(len(tt), -1) for p in traj], 1)
    dirs = dirs / dirs.norm(dim=1, keepdim=True)
    drift = float((dirs - dirs[0]).norm(dim=1).max())
    return dict(s=s, res=float(res), r0=r0, t=tt, obs=obs, traj=traj, drift=drift, rho=rho)


def _rel(pred, obs):
    with np.errstate(invalid="ignore"):
        e = np.abs(pred - obs) / obs
    return float(np.nan_to_num(e, nan=np.inf).max())


@pytest.mark.claim("bantzis2025/prop-2.2")
@pytest.mark.parametrize("L", [2, 3, 4, 5])
def test_norm_law_along_escape_direction_corrected(record, ctx, L):
    X, G = _data(record, ctx)
    rows, worst = [], 0.0
    for start in (1.0, 1e-3):
        r = _run_ray(X, G, L, start)
        e_c = _rel(B.norm_law(r["t"], r["r0"], r["s"], L), r["obs"])
        e_p = _rel(B.norm_law(r["t"], r["r0"], r["s"], L, printed=True), r["obs"])
        e_bar = _rel(B.norm_law(r["t"], r["r0"], B.unit_speed(r["s"], L), L, printed=True), r["obs"])
        worst = max(worst, e_c)
        rows.append({"start": f"{start}·ρ", "speed s": r["s"], "Def-2.1 residual": r["res"],
                     "corrected rel err": e_c, "printed (s) rel err": e_p, "printed with s̄=L^{-L/2}s": e_bar,
                     "direction drift": r["drift"]})
        assert r["res"] < 1e-13 and r["drift"] < 1e-9
    r = _run_ray(X, G, L, 1.0)
    assert worst <= TOL
    record("holds", observed=worst, bound=TOL, table=rows, config={"L": L, "data": "gaussian N=10 d=3"},
           tightness="max relative error of the corrected norm law",
           series={f"L={L} observed": {"x": r["t"].tolist(), "y": r["obs"].tolist(), "xlabel": "t", "ylabel": "‖θ(t)‖",
                                      "logy": True, "plot": f"norm-law-L{L}"},
                   f"L={L} corrected": {"x": r["t"].tolist(), "y": B.norm_law(r["t"], r["r0"], r["s"], L).tolist(),
                                       "xlabel": "t", "ylabel": "‖θ(t)‖", "logy": True, "plot": f"norm-law-L{L}"},
                   f"L={L} printed": {"x": r["t"].tolist(),
                                     "y": np.nan_to_num(B.norm_law(r["t"], r["r0"], r["s"], L, printed=True),
                                                        nan=0.0).tolist(),
                                     "xlabel": "t", "ylabel": "‖θ(t)‖ (0 = past predicted blow-up)", "logy": False,
                                     "plot": f"norm-law-L{L}-printed"}},
           note="Corrected: ‖θ‖^{2−L} = ‖θ_0‖^{2−L} + (2−L)L^{1−L/2}s(t−t_0), e^{s(t−t_0)} for L=2 (= printed law "
                "with the unit-sphere speed s̄).")


@pytest.mark.claim("bantzis2025/prop-2.2")
@pytest.mark.parametrize("L", [2, 3])
@pytest.mark.xfail(strict=True, reason="printed Prop 2.2 constant (2−L)Ls / e^{2st} uses the unit-sphere speed")
def test_norm_law_as_printed(record, ctx, L):
    X, G = _data(record, ctx)
    r = _run_ray(X, G, L)
    e_p = _rel(B.norm_law(r["t"], r["r0"], r["s"], L, printed=True), r["obs"])
    tb = B.blowup_time(r["r0"], r["s"], L, printed=True)
    record("expected-failure", observed=e_p, bound=TOL, config={"L": L},
           finding=(f"With Def. 2.1's speed s (sphere ‖θ‖²=L) the printed law is wrong: at L={L} its relative error "
                    f"is {e_p:.3g} " + ("(it predicts e^(2st); the flow gives e^(st)). " if L == 2 else
                                         f"(predicted blow-up at t={tb:.3g}, true {B.blowup_time(r['r0'], r['s'], L):.3g}). ")
                    + "The printed constant holds with s̄ = L^(−L/2)s: off by L^(L/2)."))
    assert e_p <= TOL


@pytest.mark.claim("bantzis2025/prop-A.2")
def test_proof_step_loss_along_ray(record, ctx):
    """Along the ray L0(θ(t)) = −s̄‖θ(t)‖^L with s̄ = L^{−L/2}s (the proof uses −s‖θ‖^L)."""
    X, G = _data(record, ctx)
    rows, worst = [], 0.0
    for L in (2, 3, 4, 5):
        r = _run_ray(X, G, L)
        n = r["t"].size
        L0 = loc.localized_loss([p.reshape(n, *p.shape[2:]) for p in r["traj"]], X, G).numpy()
        pred = -B.unit_speed(r["s"], L) * r["obs"] ** L
        err = float(np.max(np.abs(L0 - pred) / np.abs(pred)))
        err_p = float(np.max(np.abs(L0 + r["s"] * r["obs"] ** L) / np.abs(L0)))
        worst = max(worst, err)
        rows.append({"L": L, "rel err (s̄)": err, "rel err (printed s)": err_p, "L^{L/2}": L ** (L / 2)})
    assert worst <= 1e-10    # pointwise evaluation at integrated states: rounding only
    assert all(r["rel err (printed s)"] > 0.5 for r in rows)
    record("holds", observed=worst, bound=1e-10, table=rows,
           finding="", note="The proof's step 'L0(θ̄(t_0)) = −s' is where the factor L^{L/2} is lost: with "
                            "‖ρ‖² = L, L0(θ̄) = −L^{−L/2}s. The printed version is off by L^{L/2} (table).")


@pytest.mark.claim("bantzis2025/prop-A.2")
@pytest.mark.xfail(strict=True, reason="proof step L0(θ(t)) = −s‖θ(t)‖^L is off by L^{L/2}")
def test_proof_step_as_printed(record, ctx):
    X, G = _data(record, ctx)
    r = _run_ray(X, G, 3)
    n = r["t"].size
    L0 = loc.localized_loss([p.reshape(n, *p.shape[2:]) for p in r["traj"]], X, G).numpy()
    err = float(np.max(np.abs(L0 + r["s"] * r["obs"] ** 3) / np.abs(L0)))
    record("expected-failure", observed=err, bound=1e-10, config={"L": 3},
           finding=f"Along the escape ray L0(θ(t)) = −3^(−3/2)s‖θ‖³, not −s‖θ‖³ (relative error {err:.3g}).")
    assert err <= 1e-10


@pytest.mark.claim("bantzis2025/eq-escape-time")
def test_output_bound(record, ctx):
    gen = record.generator({"test": "output bound"})
    rows, worst = [], 0.0
    for L, n in ((2, 8), (3, 8), (5, 6), (8, 4)):
        X = torch.randn(12, 5, generator=gen, dtype=ctx.dtype)
        th = [torch.randn(ctx.pick(quick=2000, full=20000), a, b, generator=gen, dtype=ctx.dtype)
              for a, b in zip([n] * (L - 1) + [2], [5] + [n] * (L - 1))]
        th = loc.scale(th, torch.rand(th[0].shape[0], generator=gen, dtype=ctx.dtype) * 3)
        Y = loc.output(th, X)
        bound = (torch.sqrt(loc.sq_norm(th)) / math.sqrt(L)) ** L * X.norm()
        opprod = torch.stack([torch.linalg.matrix_norm(w, ord=2) for w in th], 1).prod(1) * X.norm()
        ratio = Y.norm(dim=(-1, -2)) / bound
        mid = float((Y.norm(dim=(-1, -2)) / opprod).max())
        worst = max(worst, float(ratio.max()))
        rows.append({"L": L, "width": n, "max ‖Y‖/((‖θ‖/√L)^L‖X‖)": float(ratio.max()),
                     "max ‖Y‖/(Π‖W‖_op‖X‖)": mid})
        assert mid <= 1 + 1e-12 and float((opprod / bound).max()) <= 1 + 1e-12
    # equality case: X = x1ᵀ, width-one chain W_1 = a x̂ᵀ, W_ℓ = [a]
    x = torch.tensor([0.6, -0.8, 0.0, 0.0, 0.0], dtype=ctx.dtype) * 2.5
    X = x.expand(7, 5)
    eq = []
    for L in (2, 3, 6):
        a = 1.3
        th = [a * (x / x.norm()).reshape(1, 1, 5)] + [torch.full((1, 1, 1), a, dtype=ctx.dtype)] * (L - 1)
        rat = float(loc.output(th, X).norm() / ((loc.sq_norm(th).sqrt() / math.sqrt(L)) ** L * X.norm()))
        eq.append(rat)
    assert max(abs(r - 1) for r in eq) <= 1e-12 and worst <= 1 + 1e-12
    # a tightened bound (constant 0.99) is rejected by the equality case
    assert max(eq) > 0.99 * (1 + 1e-12)
    record("holds", observed=worst, bound=1.0, table=rows,
           tightness=f"random nets: max ratio {worst:.3g}; equality case ratios {eq}",
           note="‖Y_θ‖_F ≤ Π‖W_ℓ‖_op‖X‖_F ≤ (‖θ‖/√L)^L‖X‖_F; equality attained (ratio 1 to 1e-12), so a "
                "constant 0.99 would be violated.")


def _hit_times(X, G, L, factors):
    w, c, s = es.interior_escape_directions(X, G)[0]
    rho = es.direction_params(w, c, L)
    r0 = math.sqrt(L)
    out = []
    for f in factors:
        T = 2 * B.escape_time(f * r0, r0, s, L)
        _, _, sol = es.flow(rho, X, G, [0.0, T], max_norm=f * r0)
        out.append((f, float(sol.t_events[0][0]), s, r0))
    return out


@pytest.mark.claim("bantzis2025/eq-escape-time")
def test_escape_time_corrected(record, ctx):
    X, G = _data(record, ctx)
    rows, worst = [], 0.0
    for L in (2, 3, 4):
        for f, t1, s, r0 in _hit_times(X, G, L, (2.0, 10.0)):
            pc = B.escape_time(f * r0, r0, s, L)
            pp = B.escape_time(f * r0, r0, s, L, printed=True)
            e = abs(pc - t1) / t1
            worst = max(worst, e)
            rows.append({"L": L, "r/‖θ_0‖": f, "observed t_1": t1, "corrected": pc, "printed": pp})
    assert worst <= TOL
    record("holds", observed=worst, bound=TOL, table=rows,
           note="t_1(r) − t_0 = (‖θ_0‖^{2−L} − r^{2−L})/((L−2)L^{1−L/2}s); log(r/‖θ_0‖)/s for L = 2.")


@pytest.mark.claim("bantzis2025/eq-escape-time")
@pytest.mark.xfail(strict=True, reason="printed escape time has '+r^{2−L}' (sign) and the L^{L/2} constant")
def test_escape_time_as_printed(record, ctx):
    X, G = _data(record, ctx)
    f, t1, s, r0 = _hit_times(X, G, 3, (10.0,))[0]
    pp = B.escape_time(f * r0, r0, s, 3, printed=True)
    sign_only = (r0 ** -1 - (f * r0) ** -1) / (3 * s)
    record("expected-failure", observed=pp, bound=t1, config={"L": 3, "r/‖θ_0‖": f},
           finding=(f"Printed t_1 − t_0 = {pp:.4g} vs integrated {t1:.4g} at L=3; with the sign fixed but the "
                    f"printed constant: {sign_only:.4g}. Correct: (‖θ_0‖^(2−L) − r^(2−L))/((L−2)L^(1−L/2)s)."))
    assert abs(pp - t1) / t1 <= TOL


@pytest.mark.claim("bantzis2025/prop-A.1")
def test_gradient_flow_decomposition_pointwise(record, ctx):
    gen = record.generator({"test": "A.1"})
    X = torch.randn(12, 4, generator=gen, dtype=ctx.dtype)
    G = torch.randn(12, generator=gen, dtype=ctx.dtype)
    rows, worst = [], 0.0
    E = ctx.pick(quick=200, full=1000)
    for L in (2, 3, 4, 6):
        th = loc.scale(loc.random_sphere(E, [4] + [8] * (L - 1) + [1], generator=gen, dtype=ctx.dtype),
                       torch.rand(E, generator=gen, dtype=ctx.dtype) * 2 + 0.1)
        nrm = torch.sqrt(loc.sq_norm(th))
        bar = loc.scale(th, 1 / nrm)
        _, g = loc.gradient(th, X, G)
        vb, gb = loc.gradient(bar, X, G)
        radial = -loc.inner(bar, g)
        rad_pred = -L * nrm ** (L - 1) * vb
        e1 = float(((radial - rad_pred).abs() / rad_pred.abs().clamp_min(1e-300)).max())
        # ∂_t θ̄ = −(I − θ̄θ̄ᵀ)∇L0(θ)/‖θ‖ = −‖θ‖^{L−2}(I − θ̄θ̄ᵀ)∇L0(θ̄)
        ang = [-(a - loc._bcast(loc.inner(bar, g), b) * b) / loc._bcast(nrm, a) for a, b in zip(g, bar)]
        pred = [-loc._bcast(nrm ** (L - 2), a) * (a - loc._bcast(loc.inner(bar, gb), b) * b) for a, b in zip(gb, bar)]
        diff = torch.sqrt(loc.sq_norm([a - b for a, b in zip(ang, pred)]))
        e2 = float((diff / torch.sqrt(loc.sq_norm(pred)).clamp_min(1e-300)).max())
        e3 = float((torch.sqrt(loc.sq_norm([a - loc._bcast(nrm ** (L - 1), b) * b for a, b in zip(g, gb)]))
                    / torch.sqrt(loc.sq_norm(g))).max())
        # the same radial identity without the factor L is rejected
        wrong = float(((radial + nrm ** (L - 1) * vb).abs() / rad_pred.abs()).median())
        worst = max(worst, e1, e2, e3)
        rows.append({"L": L, "radial rel err": e1, "angular rel err": e2, "∇L0(θ)=‖θ‖^{L−1}∇L0(θ̄) err": e3,
                     "without factor L (median rel err)": wrong})
        assert wrong > 0.3
    # products of ≤ 6 layers in float64; relative errors ~1e-15, except members with tiny L0 (cancellation)
    assert worst <= 1e-9
    record("holds", observed=worst, bound=1e-9, table=rows, config={"θ per depth": E, "width": 8},
           note="Euler's identity makes both formulas exact wherever L0 is differentiable; dropping L is rejected.")


def _stime_run(L, dt, horizon, E, gen, dtype):
    X = torch.randn(10, 3, generator=gen, dtype=dtype)
    G = torch.randn(10, generator=gen, dtype=dtype)
    X, G = X / X.norm(), G / G.norm()
    th0 = loc.to_sphere(loc.random_sphere(E, [3] + [4] * (L - 1) + [1],
                                          generator=gen, dtype=dtype), 0.25)

    def obs(t, ps):
        n = torch.sqrt(loc.sq_norm(ps))
        return {"norm": n, "rate": loc.localized_loss(loc.scale(ps, 1 / n), X, G) * n ** (L - 2),
                "dtau": n ** (L - 2)}

    res = heun_flow(lambda ps: loc.localized_loss(ps, X, G), th0, dt=dt, steps=int(round(horizon / dt)),
                    observe=obs, freeze=lambda ps: torch.sqrt(loc.sq_norm(ps)) >= 3.0)
    n = res.stacked("norm")
    rate = res.stacked("rate")
    tau = res.stacked("dtau")
    stop = torch.where(res.frozen_at >= 0, res.frozen_at, torch.full_like(res.frozen_at, n.shape[0] - 1))
    I = torch.cat([torch.zeros(1, E, dtype=dtype), torch.cumsum(0.5 * dt * (rate[1:] + rate[:-1]), 0)])
    T = torch.cat([torch.zeros(1, E, dtype=dtype), torch.cumsum(0.5 * dt * (tau[1:] + tau[:-1]), 0)])
    err_c, err_p = [], []
    for e in range(E):
        k = int(stop[e]) + 1
        pc = 0.5 * torch.exp(-L * I[:k, e])
        pp = 0.5 * torch.exp(-I[:k, e])
        err_c.append(float(((pc - n[:k, e]).abs() / n[:k, e]).max()))
        err_p.append(float(((pp - n[:k, e]).abs() / n[:k, e]).max()))
    return max(err_c), max(err_p), float(n.max()), T, I


@pytest.mark.claim("bantzis2025/eq-stime")
def test_reparametrized_time_norm_formula(record, ctx):
    gen_cfg = {"L": 3, "E": 8}
    dts = ctx.pick(quick=[8e-3, 4e-3], full=[2e-3, 1e-3, 5e-4])
    horizon = ctx.pick(quick=5.0, full=40.0)
    rows = []
    for L in ctx.pick(quick=[3], full=[3, 4]):
        for dt in dts:
            ec, ep, nmax, _, _ = _stime_run(L, dt, horizon, 8, record.generator(gen_cfg | {"L": L}), ctx.dtype)
            rows.append({"L": L, "dt": dt, "corrected e^{−L∫L0}": ec, "printed e^{−∫L0}": ep, "max ‖θ‖": nmax})
    ec = [r["corrected e^{−L∫L0}"] for r in rows]
    ep = [r["printed e^{−∫L0}"] for r in rows]
    # the corrected formula's error is discretization error: it shrinks ≥1.8× when dt halves
    # (Heun is first order across kinks, second order between), and is small in absolute terms
    conv = all(ec[i] / ec[i + 1] >= 1.8 for i in range(len(ec) - 1) if rows[i]["L"] == rows[i + 1]["L"])
    assert conv and max(ec) < 1e-3
    assert min(ep) > 1e-2
    record("holds", observed=max(ec), bound=1e-3, table=rows,
           config={"width": 4, "inits": 8, "‖θ_0‖": 0.5, "horizon": horizon, "norm cap": 3},
           tightness="corrected-form error → 0 with dt; printed-form error constant in dt",
           series={"corrected": {"x": [r["dt"] for r in rows], "y": ec, "xlabel": "dt", "ylabel": "max rel error",
                                 "logx": True, "logy": True, "plot": "stime"},
                   "printed": {"x": [r["dt"] for r in rows], "y": ep, "xlabel": "dt", "ylabel": "max rel error",
                               "logx": True, "logy": True, "plot": "stime"}},
           note="‖θ(τ)‖ = ‖θ_0‖exp(−L∫L0(θ̄)dτ) (corrected); the printed exponentials lack the factor L.")


@pytest.mark.claim("bantzis2025/eq-stime")
@pytest.mark.xfail(strict=True, reason="printed Sec. 2.1 formula ‖θ(τ)‖ = ‖θ_0‖exp(−∫L0) misses the factor L")
def test_reparametrized_time_as_printed(record, ctx):
    ec, ep, *_ = _stime_run(3, 8e-3, 5.0, 8, record.generator({"L": 3, "E": 8}), ctx.dtype)
    record("expected-failure", observed=ep, bound=1e-3, config={"L": 3, "dt": 4e-3},
           finding=f"Printed ‖θ_0‖exp(−∫L0(θ̄)dτ) is off by relative error {ep:.3g} (corrected form with the "
                   f"factor L: {ec:.2g}, a discretization error that halves with dt).")
    assert ep <= 1e-3


@pytest.mark.claim("bantzis2025/eq-stime")
def test_scaling_law(record, ctx):
    """θ_α(t) = αθ(α^{L−2}t) solves GF from αθ_0 (scale invariance of the τ-trajectory)."""
    gen = record.generator({"test": "scaling"})
    X, G, dirs, _ = es.gaussian_with_interior_direction(10, 3, generator=gen, dtype=ctx.dtype)
    w, c, s = dirs[0]
    rows, worst = [], 0.0
    for L in (3, 4):
        rho = es.direction_params(w, c, L)
        # a generic start near (not on) the ray, still inside one activation region (smooth flow)
        th0 = [p + 0.02 * torch.randn(p.shape, generator=gen, dtype=ctx.dtype) for p in rho]
        th0 = loc.scale(th0, torch.tensor([0.3], dtype=ctx.dtype))
        t = np.linspace(0, 0.2, 5)
        _, base, _ = es.flow(th0, X, G, t)
        for alpha in (0.5, 2.0):
            _, tr, _ = es.flow(loc.scale(th0, torch.tensor([alpha], dtype=ctx.dtype)), X, G, t / alpha ** (L - 2))
            e = max(float((a - alpha * b).norm() / (alpha * b).norm()) for a, b in zip(tr, base))
            wrong = max(float((a - alpha * b).norm() / (alpha * b).norm()) for a, b in
                        zip(es.flow(loc.scale(th0, torch.tensor([alpha], dtype=ctx.dtype)), X, G, t)[1], base))
            worst = max(worst, e)
            rows.append({"L": L, "alpha": alpha, "rel err αθ(α^{L−2}t)": e, "rel err without time change": wrong})
            assert wrong > 1e-3
    assert worst <= 1e-8
    record("holds", observed=worst, bound=1e-8, table=rows,
           note="GF from αθ_0 equals αθ(α^{L−2}t); without the time change the comparison fails (table).")
