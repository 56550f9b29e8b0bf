"""Wang et al. Thm 5.3 (linear, Eqs. 18–19, App. B (58)–(83)) and Thm 5.5 (ReLU, App. C (100)–(153)), Eq. 21.

Convention (catalog): Ẇ is d/dτ with τ = ηk, and C is *defined* by ϱ̇ = ηCϱ, so C = (d ln ϱ/dτ)/η. The
identity is checked against finite differences of ln ϱ along the real GD direction Ẇ at W(k) (h = η is
exactly the GD step) with h halved twice: the error must shrink like O(h).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fixtures import wang2024 as fw
from theory.papers.wang2024 import cocorrelation as cc
from theory.papers.wang2024 import dynamics as dyn
from theory.sim import models
from theory.stats import fit_power

ETA = 0.05


def _linear_grid(gen, m, qs, seeds, d=20, n=200):
    X, y, _, _ = fw.mixture(n, 10, d, generator=gen)
    net = models.TwoLayerNet.init(len(qs) * seeds, m, d, q=0.0, act="linear", generator=gen)
    scale = torch.tensor([m ** -q for q in qs for _ in range(seeds)], dtype=X.dtype)
    return X, y, net.W * scale.view(-1, 1, 1), net.a


_RUNS: dict = {}


def _linear_runs(ctx):
    """Thm 5.3 runs: d=20, n=200, m ∈ {16, 64, 256}, q ∈ {−0.15, 0, 0.25}, η=0.05, 200 steps (quick)."""
    key = (ctx.profile, ctx.seed)
    if key not in _RUNS:
        out = {}
        qs = [-0.15, 0.0, 0.25]
        for m in ctx.pick(quick=[16, 64, 256], full=[16, 64, 256, 1024, 4096]):
            gen = ctx.generator("wang2024/thm-5.3", {"m": m})
            X, y, W0, a = _linear_grid(gen, m, qs, 1)
            out[m] = dict(X=X, y=y, W0=W0, a=a, qs=qs,
                          run=dyn.run_linear(W0, a, X, y, eta=ETA, steps=ctx.pick(quick=200, full=400)))
        _RUNS[key] = out
    return _RUNS[key]


def _fd_errors(varrho_fn, W, dW, exact, hs):
    return [(dyn.fd_log_rate(varrho_fn, W, dW, h) - exact).abs() / exact.abs().clamp_min(1e-300) for h in hs]


@pytest.mark.claim("wang2024/thm-5.3")
def test_linear_rate_identity_fd(record, ctx):
    """ϱ̇ = ηCϱ with C = ½(Ṅ/N − Q̇/Q)/η (Ṅ = 2aᵀWx̃, Q̇ = 2(aᵀv)(vᵀWx̃)) vs one-step FD at h = η, η/2, η/4: O(h)."""
    rows, errs_all = [], {h: [] for h in (ETA, ETA / 2, ETA / 4)}
    for m, R in _linear_runs(ctx).items():
        W, a, X, y = R["W0"].clone(), R["a"], R["X"], R["y"]
        for k in range(60):
            dW, xt = dyn.linear_increment(W, a, X, y)
            if k in (0, 5, 20, 59):
                ex = dyn.linear_rates(W, a, xt)["dlog"]
                for h, e in zip(errs_all, _fd_errors(lambda V: dyn.linear_varrho_at(V, a), W, dW, ex, list(errs_all))):
                    errs_all[h].append(e)
            W = W + ETA * dW
    med = [float(torch.cat(v).median()) for v in errs_all.values()]
    fit = fit_power(list(errs_all), med)
    ok = abs(fit.exponent - 1) < 0.15 and med[-1] < 0.05
    # companion inside: the same FD test rejects the rate without the ½ (|err| → 1, not 0)
    assert ok, (fit, med)
    record("holds", observed=fit.exponent, bound=1.0, tightness="FD error exponent in h (1 = first order)",
           table=[{"h": h, "median relative FD error": e} for h, e in zip(errs_all, med)],
           series={"FD error vs h (linear)": {"x": list(errs_all), "y": med, "xlabel": "h", "ylabel": "median rel. error",
                                              "logx": True, "logy": True}})


def _linear_wrong_rates(W, a, xt):
    """The true rate d ln ϱ/dτ of Thm 5.3 and two mutations: without the ½, and Q̇ without the (aᵀv) factor."""
    r = dyn.linear_rates(W, a, xt)
    s = ((W @ xt.unsqueeze(-1)).squeeze(-1) * r["v"]).sum(-1)  # vᵀWx̃ = σ₁uᵀx̃
    wrongs = {"no 1/2": 2 * r["dlog"], "Qdot without a^T v": 0.5 * (r["Nd"] / r["N"] - 2 * s / r["Q"])}
    return r, s, wrongs


# h grid for the companion: the GD step η halved ten times (h_max/h_min = 1024; the float64 rounding of the FD,
# ~1e-15/h relative to ϱ, stays ≪ the O(h) truncation at h_min = η/1024 ≈ 5e-5); resolution index: h = η/16
_H_GRID = [ETA / 2 ** j for j in range(11)]
_J_RES = 4


@pytest.mark.claim("wang2024/thm-5.3")
def test_linear_rate_identity_rejects_wrong(record, ctx):
    """Companion (Thm 5.3, Eqs. 18–19): the FD check separates the identity from its mutations by how the error
    scales with h, not by an error threshold.

    At every (member, step) of the FD test (9 members × k ∈ {0, 5, 20, 59}) the FD estimate of d ln ϱ/dτ is
    taken at h = η·2^-j, j = 0..10, and its distance to a candidate rate r is e_r(h) = |FD(h) − r| / |r_true|
    (one common scale for all candidates). FD(h) = r_true + c·h + O(h²), so e_true ∝ h (fitted exponent ≈ 1),
    while for a mutation r_w = r_true + Δ the error tends to δ = |Δ|/|r_true| and does not shrink.
    A mutation *changes the rate* at a case when δ ≥ e_true(η/16), the correct formula's FD error at h = η/16.
    Then, by the triangle inequality and e_true ∝ h, e_w(h_min) ≥ δ − e_true(η/16)/64 ≥ (63/64)·δ and
    e_w(η) ≤ δ + 16·e_true(η/16) ≤ 17δ, so even the two-point exponent of e_w over the 1024-fold range of h is
    ≤ log(17·64/63)/log 1024 ≈ 0.41, and e_w(h_min) ≥ 63·e_true(h_min): the check rejects it (criterion: fitted
    exponent < 0.5 and e_w(h_min) > 16·e_true(h_min), i.e. the wrong rate is not approached as h → 0).
    Cases with δ < e_true(η/16) are recorded (the mutation is below the grid's resolution there), not asserted.

    Why the (aᵀv) mutation is weak at some draws: Δ = (aᵀv − 1)·vᵀWx̃/Q. At init |aᵀv| ~ m^-½ (v is a random
    direction), so Δ is small only when vᵀWx̃ = σ₁uᵀx̃ is: x̃ nearly orthogonal to the top right-singular
    vector u (e.g. δ ≈ 0.007 at m = 64, q = 0, --seed 2, k = 0). Later, members with q = 0.25 align v with a
    (W accumulates the rank-one updates a x̃ᵀ), |aᵀv| → 0.9: with aᵀv ≈ +1 the mutation is inert, with
    aᵀv ≈ −1 (the sign of v from eigh is arbitrary) it flips the sign of the Q̇ term.
    """
    hs = _H_GRID
    cases = {k: [] for k in ("no 1/2", "Qdot without a^T v")}
    exps_true = []
    for m, R in _linear_runs(ctx).items():
        W, a, X, y = R["W0"].clone(), R["a"], R["X"], R["y"]
        for k in range(60):
            dW, xt = dyn.linear_increment(W, a, X, y)
            if k in (0, 5, 20, 59):
                r, s, wrongs = _linear_wrong_rates(W, a, xt)
                t = r["dlog"]
                fd = torch.stack([dyn.fd_log_rate(lambda V: dyn.linear_varrho_at(V, a), W, dW, h) for h in hs])  # (H, E)
                e_t = (fd - t).abs() / t.abs()
                for e in range(t.shape[0]):
                    ft = fit_power(hs, e_t[:, e].tolist())
                    exps_true.append(ft.exponent)
                    for name, w in wrongs.items():
                        e_w = (fd[:, e] - w[e]).abs() / t[e].abs()
                        fw_ = fit_power(hs, e_w.tolist())
                        delta = float((w[e] - t[e]).abs() / t[e].abs())
                        cases[name].append({
                            "m": m, "q": R["qs"][e], "k": k, "a^T v": float(r["av"][e]),
                            "|v^T W x~/Q| / |rate|": float((s[e] / r["Q"][e]).abs() / t[e].abs()),
                            "delta = |r_w - r|/|r|": delta, "e_true(eta)": float(e_t[0, e]),
                            "e_true(eta/16)": float(e_t[_J_RES, e]), "e_true(h_min)": float(e_t[-1, e]), "e_wrong(h_min)": float(e_w[-1]),
                            "exp true": ft.exponent, "exp wrong": fw_.exponent,
                            "changes rate": delta >= float(e_t[_J_RES, e]),
                            "rejected": fw_.exponent < 0.5 and float(e_w[-1]) > 16 * float(e_t[-1, e])})
            W = W + ETA * dW
    # the correct identity: first order at every case (the main FD test asserts the median; here every case)
    assert min(exps_true) > 0.8 and max(exps_true) < 1.2, (min(exps_true), max(exps_true))
    summary, missed = [], []
    for name, rows in cases.items():
        changed = [c for c in rows if c["changes rate"]]
        missed += [dict(c, variant=name) for c in changed if not c["rejected"]]
        inert = [c for c in rows if not c["changes rate"]]
        summary.append({"variant": name, "cases": len(rows), "# changing the rate (delta >= e_true(eta/16))": len(changed),
                        "# of those rejected": sum(c["rejected"] for c in changed),
                        "min delta among changed": min((c["delta = |r_w - r|/|r|"] for c in changed), default=None),
                        "max exp wrong among changed": max((c["exp wrong"] for c in changed), default=None),
                        "min e_wrong/e_true at h_min among changed": min(
                            (c["e_wrong(h_min)"] / c["e_true(h_min)"] for c in changed), default=None),
                        "inert cases (delta, a^T v)": [(round(c["delta = |r_w - r|/|r|"], 4), round(c["a^T v"], 3))
                                                        for c in inert]})
        # non-vacuous: the mutation must change the rate at most cases (it does unless x~ ⟂ u or a^T v ≈ +1)
        assert len(changed) >= len(rows) // 2, summary
    assert not missed, missed
    record("holds", observed=max(s["max exp wrong among changed"] for s in summary), bound=0.5,
           tightness="largest fitted h-exponent of a mutation's FD error where it changes the rate (correct: ≈ 1)",
           config={"h grid": hs, "members": "3 widths × 3 q", "steps": [0, 5, 20, 59]},
           table=summary + [{"correct identity: exponent range": [min(exps_true), max(exps_true)]}],
           note="every mutation that changes the rate by at least the correct formula's FD error at h = η/16 was "
                "rejected; weaker (inert) cases are listed with their δ and aᵀv.")


@pytest.mark.claim("wang2024/thm-5.3")
def test_linear_decomposition_main_plus_remainder(record, ctx):
    """½(Ṅ − Q̇) = ηS_k(1 − (aᵀv)²) + (a − (aᵀv)v)ᵀW(0)x̃ at every step (exact given W(k) = W(0) + ηaΣx̃ᵀ)."""
    worst = 0.0
    for m, R in _linear_runs(ctx).items():
        run = R["run"]
        scale = run["main"].abs() + run["rem"].abs()
        worst = max(worst, float(((run["half_gap"] - run["main"] - run["rem"]).abs() / scale).max()))
    # 200 accumulated float64 updates of W and of Σx̃: ~200·4 ulps ≈ 2e-13 relative in the worst case
    assert worst <= 1e-10
    record("holds", observed=worst, bound=1e-10, tightness="max |½(Ṅ−Q̇) − main − ②| / (|main|+|②|)")


def _bound_rows(ctx):
    rows, viol, viol_nd = [], 0, 0
    series = {}
    for m, R in _linear_runs(ctx).items():
        run = R["run"]
        lb = run["M"] + run["R2"]
        bad = run["C_true"] < lb - 1e-9 * lb.abs()
        viol += int(bad.sum())
        viol_nd += int((bad & (run["Nd"] >= 0)).sum())
        for e, q in enumerate(R["qs"]):
            ks = run["k"][:, e].tolist()
            steps_bad = [int(k) for k, b in zip(ks, bad[:, e].tolist()) if b]
            rows.append({"m": m, "q": q, "violating steps": steps_bad[:20], "# violations": len(steps_bad),
                         "# with Ndot<0": int((run["Nd"][:, e] < 0).sum()),
                         "C_true/(M+R2) at k=50": float(run["C_true"][50, e] / lb[50, e]),
                         "R2/M at k=50": float(run["R2"][50, e] / run["M"][50, e]),
                         "varrho k=0/50/200": [round(float(run["varrho"][i, e]), 4) for i in (0, 50, -1)]})
            if q == 0.25 or (m == 16 and q == -0.15):
                pos = (lb[:, e] > 0) & (run["k"][:, e] > 0)
                series[f"C_true/(M+R2) m={m} q={q}"] = {"x": [k for k, p in zip(ks, pos.tolist()) if p],
                                                         "y": (run["C_true"][:, e] / lb[:, e])[pos].tolist(),
                                                         "xlabel": "GD step k", "ylabel": "C_true / bound", "logy": True,
                                                         "plot": "thm53 tightness"}
    return rows, viol, viol_nd, series


@pytest.mark.claim("wang2024/thm-5.3")
def test_linear_lower_bound_only_fails_where_Ndot_negative(record, ctx):
    """C_true ≥ M + R₂ (R₂ = ②/(ηQ)) holds at every step with Ṅ ≥ 0: the (63) step needs Ṅ ≥ 0."""
    rows, viol, viol_nd, series = _bound_rows(ctx)
    assert viol_nd == 0, rows
    record("holds", observed=viol_nd, bound=0, table=rows, series=series,
           tightness="# steps with Ṅ ≥ 0 where C_true < M + R₂",
           note=f"{viol} violating steps in total, all with Ṅ < 0; the bound is loose late (C_true/(M+R₂) ≫ 1) because "
                "R₂ ≈ −M once the early phase is over (table: R₂/M).")


@pytest.mark.claim("wang2024/thm-5.3")
@pytest.mark.xfail(strict=True, reason="Eq. (63) replaces 1/N by 1/Q without requiring Ṅ ≥ 0; the lower bound fails "
                                       "at early steps where Ṅ < 0 (narrow nets, q ≤ 0)")
def test_linear_lower_bound_every_step(record, ctx):
    """As printed: C ≥ S_k(1−(vᵀa)²)/‖W‖² + remainder at every step."""
    rows, viol, viol_nd, _ = _bound_rows(ctx)
    record("expected-failure", observed=viol, bound=0, table=rows,
           finding=f"C_true < M + R₂ at {viol} GD steps (all with Ṅ < 0, e.g. the first steps of m=16): step (63) "
                   "silently needs Ṅ ≥ 0.")
    assert viol == 0


@pytest.mark.claim("wang2024/thm-5.3")
@pytest.mark.xfail(strict=True, reason="the remainder R₂ = ②/(ηQ) is not O(m^{-q}): it scales like m^{q−1/2}")
def test_linear_remainder_order(record, ctx):
    """'+O(m^{-q})': fit median |R₂| at k=0 vs m ∈ 2^4..2^12 for q = 0.5; the paper's slope −q lies outside the CI."""
    gen = ctx.generator("wang2024/thm-5.3", {"remainder": 0.5})
    q, seeds, d = 0.5, 64, 20
    ms = ctx.pick(quick=[2 ** k for k in range(6, 13)], full=[2 ** k for k in range(6, 14)])
    X, y, _, _ = fw.mixture(200, 10, d, generator=gen)
    med = []
    for m in ms:
        net = models.TwoLayerNet.init(seeds, m, d, q=q, act="linear", generator=gen)
        run = dyn.run_linear(net.W, net.a, X, y, eta=ETA, steps=0)
        med.append(float(run["R2"][0].abs().median()))
    fit = fit_power(ms, med)
    record("expected-failure", observed=fit.exponent, bound=-q, config={"q": q, "d": d, "seeds": seeds, "eta": ETA},
           series={"|R2| vs m": {"x": ms, "y": med, "xlabel": "width m", "ylabel": "median |R₂| at k=0", "logx": True, "logy": True}},
           finding=f"|R₂| ∝ m^{fit.exponent:.2f} (99% CI {fit.ci[0]:.2f}..{fit.ci[1]:.2f}) at q={q}, predicted q−1/2 = {q - 0.5}; "
                   f"the claimed O(m^{{-q}}) = m^{-q} is contradicted (the remainder is divided by η‖W‖² when moved into C; "
                   f"the excess over q−1/2 is the finite-width factor (1+√(d/m))² in ‖W(0)‖²).")
    assert fit.ci[1] <= -q + 0.05


# ---- ReLU (Thm 5.5) -------------------------------------------------------------------------------

_RELU: dict = {}
ETA_RELU = 0.5


def _relu_runs(ctx):
    """ReLU runs: d=20, n=200, m ∈ {32, 128}, q ∈ {0, 0.25}, η = 0.5, 100 steps; x̃_*, aᵀv every step,
    ϱ, C (jvp) and finite differences at h = η and η/2^j, j = 3..8, every 10 steps (N_eval = 60 held-out points),
    with a flag per h telling whether any ReLU pattern on the evaluation points flips between W and W + hẆ."""
    key = (ctx.profile, ctx.seed)
    if key in _RELU:
        return _RELU[key]
    out = {}
    steps, every = ctx.pick(quick=100, full=400), 10
    eta = ETA_RELU
    hs = [eta] + [eta / 2 ** j for j in range(3, 9)]
    for m in ctx.pick(quick=[32, 128], full=[32, 128, 512]):
        gen = ctx.generator("wang2024/thm-5.5", {"m": m})
        X, y, Xe, _ = fw.mixture(200, 60, 20, generator=gen)
        qs = [0.0, 0.25]
        net = models.TwoLayerNet.init(len(qs), m, 20, q=0.0, act=fw.RELU, generator=gen)
        W = net.W * torch.tensor([m ** -q for q in qs], dtype=X.dtype).view(-1, 1, 1)
        a = net.a
        vfn = lambda V: cc.mlp_varrho(V, a, Xe, fw.RELU)
        rec = dict(varrho=[], C_true=[], fd=[], flip=[], xs=[], av=[], B2=[], k=[])
        for k in range(steps + 1):
            dW, _ = dyn.relu_increment(W, a, X, y, fw.RELU)
            e = dyn.error_weights((fw.RELU(X @ W.transpose(-1, -2)) * a.unsqueeze(1)).sum(-1), y)
            alpha = dyn.relu_alpha_rows(W, Xe, X, fw.RELU)  # (E, Ne, n)
            rec["xs"].append((alpha * e.unsqueeze(1)) @ X)  # x̃_*(k, x) for x in Xe: (E, Ne, d)
            Q, v, _, _ = dyn.top_pair(W)
            rec["av"].append((a * v).sum(-1).abs())
            if k % every == 0:
                rec["B2"].append(cc.mlp_hidden_opnorm_gram(W, Xe, fw.RELU).pow(2).mean(-1))
                rec["varrho"].append(vfn(W))
                ex = dyn.jvp_log_rate(vfn, W, dW)
                rec["C_true"].append(ex / eta)
                rec["fd"].append(torch.stack([dyn.fd_log_rate(vfn, W, dW, h) for h in hs]))
                pat = (Xe @ W.transpose(-1, -2)) > 0
                rec["flip"].append(torch.stack([(((Xe @ (W + h * dW).transpose(-1, -2)) > 0) != pat).flatten(1).any(-1)
                                                for h in hs]))  # (H, E)
                rec["k"].append(k)
            W = W + eta * dW
        out[m] = {kk: (torch.stack(v) if kk != "k" else v) for kk, v in rec.items()} | dict(qs=qs, eta=eta, hs=hs, every=every)
    _RELU[key] = out
    return out


def _relu_main(R, consistent=False):
    """Main term of Thm 5.5: Σ_{τ≤t}(1 − aᵀv(τ)·aᵀv(t)) E_x[x̃_*(τ)ᵀx̃_*(t)] / E‖DW‖², per t (T, E).

    ``consistent``: use (aᵀv(t))² as in the linear case (catalog pitfall ii). Note: aᵀv is sign-ambiguous;
    we use |aᵀv| (the sign of an eigenvector is arbitrary, the paper's product implicitly fixes it).
    """
    xs, av, B2 = R["xs"], R["av"], R["B2"]
    out = []
    for i, t in enumerate(R["k"]):
        inner = torch.einsum("send,end->se", xs[: t + 1], xs[t]) / xs.shape[2]  # (t+1, E): E_x x̃*(τ)·x̃*(t)
        fac = 1 - (av[t] ** 2 if consistent else av[: t + 1] * av[t])
        out.append((fac * inner).sum(0) / B2[i])
    return torch.stack(out)


@pytest.mark.claim("wang2024/thm-5.5")
def test_relu_rate_identity(record, ctx):
    """ϱ̇ = ηCϱ for the ReLU MLP (Thm 5.5): exact directional derivative (jvp, patterns fixed a.e.) vs GD finite
    difference at h = η, η/8, …, η/256.

    While no ReLU pattern on the evaluation points flips between W and W + hẆ, ϱ is smooth along the segment and
    the FD error is c·h + O(h²) (first order). A flip adds a non-smooth term: over all cases the median error jumps
    between η/16 and η/8 at some seeds (×3.8 at --seed 4, where 41 % of the cases flip at η/8). So the exponent is
    fitted over h ≤ η/16 on the fixed set of cases (members × recorded steps) with no flip at any of these h — the
    precise condition for the first-order Taylor bound; that set must hold at least half of the cases (asserted,
    not assumed). The all-cases median is recorded beside it.
    """
    rows = []
    errs, flips = {}, {}
    for m, R in _relu_runs(ctx).items():
        ex = R["C_true"] * R["eta"]
        rel = (R["fd"] - ex.unsqueeze(1)).abs() / ex.abs().unsqueeze(1).clamp_min(1e-300)  # (T, H, E)
        for j, h in enumerate(R["hs"]):
            errs.setdefault(h, []).append(rel[:, j].flatten())
            flips.setdefault(h, []).append(R["flip"][:, j].flatten())
        rows.append({"m": m, "median rel. gap at the GD step h=η": float(rel[:, 0].median()),
                     f"at h=η/{round(R['eta'] / R['hs'][-1])}": float(rel[:, -1].median())})
    hs = sorted(errs)
    E = torch.stack([torch.cat(errs[h]) for h in hs])  # (H, cases)
    F = torch.stack([torch.cat(flips[h]) for h in hs])
    fit_h = [i for i, h in enumerate(hs) if h <= ETA_RELU / 16]
    smooth = ~F[fit_h].any(0)
    n_smooth, n_cases = int(smooth.sum()), int(smooth.numel())
    assert 2 * n_smooth >= n_cases, (
        f"only {n_smooth}/{n_cases} cases keep their ReLU pattern for h ≤ η/16: refine the h grid")
    med = [float(E[i, smooth].median()) for i in range(len(hs))]
    med_all = [float(E[i].median()) for i in range(len(hs))]
    flip = [float(F[i].double().mean()) for i in range(len(hs))]
    fit = fit_power([hs[i] for i in fit_h], [med[i] for i in fit_h])
    med_32 = med_all[hs.index(ETA_RELU / 32)]
    # a wrong rate leaves exponent ≈ 0, a second-order slip ≈ 2
    assert abs(fit.exponent - 1) < 0.1 and med_32 < 0.01, (rows, med, flip)
    record("holds", observed=fit.exponent, bound=1.0,
           table=rows + [{"h": h, "median FD error (fixed-pattern cases)": e, "median FD error (all cases)": ea,
                          "fraction of cases with a ReLU flip": f, "in fit": i in fit_h}
                         for i, (h, e, ea, f) in enumerate(zip(hs, med, med_all, flip))],
           tightness=f"FD error exponent in h over h ≤ η/16 on the {n_smooth}/{n_cases} fixed-pattern cases (1 = first order)",
           series={"FD error vs h (ReLU)": {"x": hs, "y": med, "xlabel": "h", "ylabel": "median rel. error",
                                            "logx": True, "logy": True}})


@pytest.mark.claim("wang2024/thm-5.5")
@pytest.mark.xfail(strict=True, reason="the printed main term of Thm 5.5 (with aᵀv(τ)·aᵀv(t)) exceeds the true C(t) at "
                                       "most recorded steps, at both widths; the x-independent v and the mixed "
                                       "aᵀv(τ)aᵀv(t) factor come from inconsistent steps of the proof")
def test_relu_lower_bound_main_term(record, ctx):
    """C(t) vs the stated main term (v from WWᵀ, as printed) and the consistent (aᵀv(t))² form, step by step."""
    rows, series, fails_total, steps_total = [], {}, 0, 0
    for m, R in _relu_runs(ctx).items():
        for variant in (False, True):
            main = _relu_main(R, consistent=variant)
            fails = (R["C_true"] < main)
            for e, q in enumerate(R["qs"]):
                bad = [k for k, b in zip(R["k"], fails[:, e].tolist()) if b]
                if not variant:
                    fails_total += len(bad)
                    steps_total += len(R["k"])
                rows.append({"m": m, "q": q, "variant": "consistent (a^T v(t))^2" if variant else "as printed",
                             "# steps C < main": len(bad), "first failing steps": bad[:10],
                             "C/main at k=10,50,end": [float(R["C_true"][i, e] / main[i, e]) for i in (1, 5, -1)],
                             "varrho k=0/end": [float(R["varrho"][0, e]), float(R["varrho"][-1, e])]})
                if not variant and q == 0.25:
                    pos = main[:, e] > 0
                    series[f"C/main m={m}"] = {"x": [k for k, p in zip(R["k"], pos.tolist()) if p],
                                               "y": (R["C_true"][:, e] / main[:, e])[pos].tolist(), "xlabel": "GD step",
                                               "ylabel": "C_true / main term", "logy": True, "plot": "thm55 tightness"}
    frac = fails_total / steps_total
    cons = sum(r["# steps C < main"] for r in rows if r["variant"].startswith("consistent"))
    record("expected-failure", observed=frac, bound=0.0, table=rows, series=series,
           tightness="fraction of recorded steps with C_true < printed main term",
           finding=f"C_true fell below the printed main term at {fails_total}/{steps_total} recorded steps (m = 32 and 128, "
                   f"q = 0 and 0.25; C/main down to ~0.02 late); with the consistent (aᵀv(t))² factor only {cons} steps fail. "
                   "The hidden max{O(m^-1/2), O(m^-q)} remainder would have to absorb an O(1) relative shortfall.",
           note="Main term uses row-average α_i (what the proof uses), v = top eigenvector of WWᵀ as printed, |aᵀv|.")
    assert fails_total == 0


@pytest.mark.claim("wang2024/eq-21")
def test_alpha_closed_form_and_xstar_bound(record, ctx):
    """α_i(0,x) = (π − θ)/(2π) for ReLU at init (MC over 2·10⁵ rows); ‖x̃_*(t)‖ ≤ M² = 1 along training."""
    gen = record.generator({"rows": 200000})
    d = 30
    X = fw.mixture(12, 2, d, generator=gen)[0]
    x = X[0]
    Wr = torch.randn(200000, d, generator=gen, dtype=X.dtype)
    ind = (Wr @ X.T >= 0).double()
    mc = (ind[:, :1] * ind).mean(0)
    cf = dyn.alpha_closed_form(x, X)
    se = (mc * (1 - mc) / Wr.shape[0]).sqrt().clamp_min(1e-12)
    z = float(((mc - cf) / se).abs().max())
    wrong = (torch.arccos(((X @ x) / X.norm(dim=-1)).clamp(-1, 1))) / (2 * torch.pi)
    zw = float(((mc - wrong) / se).abs().max())
    xmax = max(float(R["xs"].norm(dim=-1).max()) for R in _relu_runs(ctx).values())
    assert z < 5 and zw > 5 and xmax <= 1
    record("holds", observed=z, bound=5.0, tightness="max |MC − closed form| in standard errors (12 points)",
           table=[{"max z closed form": z, "max z wrong θ/(2π)": zw, "max ||x~*(t)|| over ReLU runs": xmax}])
