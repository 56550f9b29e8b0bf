"""Wang et al. Appendix D, Fig. 5 (catalog `fig-5`): linear correlation ρ (Eq. 12) and relative std σ/μ of the
Jacobian-norm product for the q = 0.25 MLPs.

Structure (catalog (F3)): for f = aᵀσ(Wx) the outer map φ = aᵀ· is linear, A = ‖a‖ is constant, so
ρ = E[AB]/(E[A²]E[B²])^{1/2} = μ/(μ² + var)^{1/2} = (1 + var/μ²)^{-1/2} exactly with population moments: Fig. 5's two
panels are one number. With Algorithm 1's N−1 moments, (1 + σ̂²/μ²)^{-1/2}/ρ − 1 = ((1+v)/(1+vN/(N−1)))^{1/2} − 1 ≈
−v/(2(N−1)(1+v)), v = var/μ². Stand-in for MNIST (no download): scikit-learn's 8×8 digits, 3 vs 8, centred,
unit-norm rows (d = 64), binary BCE, a ∈ {±1/√m} frozen, full-batch GD.
"""
from __future__ import annotations

import pytest
import torch

from fixtures import wang2024 as fw
from theory.papers.wang2024 import cocorrelation as cc
from theory.sim import models, train
from theory.stats import fit_power

EXACT = 1e-12  # a handful of float64 means/sqrt/divisions over N = 120 numbers: ≲ 20 ulps ≈ 5e-15
RHO_LO, RS_RANGE = 0.99965, (0.005, 0.03)  # Fig. 5(b) axis range, Fig. 5(a) range

_RUNS: dict = {}


def _runs(ctx):
    """Per width m ∈ {64, 256, 1024} (quick), 2 seeds, q = 0.25, lr 1.0, 200 steps; norms at 6 checkpoints."""
    key = (ctx.profile, ctx.seed)
    if key in _RUNS:
        return _RUNS[key]
    gen = ctx.generator("wang2024/fig-5", {"data": "digits-3-8"})
    Xtr, ytr, Xte, _ = fw.digits_binary(3, 8, generator=gen)
    steps = ctx.pick(quick=200, full=1000)
    ckpts = sorted({0, 10, 25, 50, steps // 2, steps})
    out = []
    for m in ctx.pick(quick=[64, 256, 1024], full=[64, 256, 1024, 4096]):
        net = models.TwoLayerNet.init(2, m, Xtr.shape[1], q=0.25, act=fw.RELU, generator=gen)
        obs = lambda t, p, u: dict(zip("ABC", cc.mlp_norms(p[0].detach(), net.a, Xte, fw.RELU)))
        tr = train.gd(net, Xtr, ytr, loss="bce", lr=1.0, steps=steps, record=ckpts, observe=obs)
        # the core's default opnorm and its exact SVD on the trained member 0 against the norms used here
        W0_, a0_ = net.W[0].detach(), net.a[0]
        _, B_, C_ = (t[0] for t in cc.mlp_norms(net.W.detach(), net.a, Xte, fw.RELU))
        for f_, v_ in ((lambda x: fw.RELU(W0_ @ x), B_), (lambda x: (a0_ * fw.RELU(W0_ @ x)).sum(), C_)):
            c_ = fw.opnorm_control(f_, Xte, v_)
            assert c_["ok"], (m, c_)
        for i, t in enumerate(tr.steps):
            for e in range(net.E):
                out.append(dict(m=m, step=t, seed=e, A=tr.obs["A"][i][e], B=tr.obs["B"][i][e], C=tr.obs["C"][i][e]))
    _RUNS[key] = dict(rows=out, N=Xte.shape[0], steps=steps, ckpts=ckpts)
    return _RUNS[key]


def _stats(A, B, C):
    p, p1 = cc.population(A, B, C), cc.population(A, B, C, ddof=1)
    v, v1 = float(p["var"] / p["mu"] ** 2), float(p1["var"] / p1["mu"] ** 2)
    return float(p["rho"]), v, v1


@pytest.mark.claim("wang2024/fig-5")
def test_fig5_rho_relative_std_relation(record, ctx):
    """ρ = (1 + var/μ²)^{-1/2} to ≤ 1e-12 (population moments) on every trained q = 0.25 net and checkpoint; with N−1
    moments the deviation equals ((1+v)/(1+vN/(N−1)))^{1/2} − 1 ≈ −v/(2(N−1)) (|dev| ≤ 1/(2N))."""
    R = _runs(ctx)
    N = R["N"]
    worst, worst_dev, worst_pred, table = 0.0, 0.0, 0.0, []
    for r in R["rows"]:
        rho, v, v1 = _stats(r["A"], r["B"], r["C"])
        err = abs(rho * (1 + v) ** 0.5 - 1)
        dev = (1 + v1) ** -0.5 / rho - 1
        pred = ((1 + v) / (1 + v * N / (N - 1))) ** 0.5 - 1
        worst, worst_dev = max(worst, err), max(worst_dev, abs(dev))
        worst_pred = max(worst_pred, abs(dev - pred))
        table.append({"m": r["m"], "step": r["step"], "seed": r["seed"], "rho": rho, "std/mu": v ** 0.5,
                      "|rho(1+v)^1/2 - 1|": err, "N-1 deviation": dev, "-v/(2(N-1))": -v / (2 * (N - 1))})
    ok = worst <= EXACT and worst_pred <= EXACT and worst_dev <= 1 / (2 * N)
    record("holds" if ok else "violated", observed=worst, bound=EXACT, evidence="consistency", inside=True,
           inside_reason="the (F3) relation holds for any network whose outer map is linear, which includes the paper's "
                         "own setting (Eq. (3b): φ = aᵀ·); so the stand-in data (digits 3 vs 8, d = 64, widths 64–1024, "
                         "full-batch GD, not the paper's MNIST widths 16–8192) is inside for this relation. Consistency "
                         "evidence only: it cannot fail for any weights",
           tightness="max |ρ·(1+var/μ²)^{1/2} − 1| (population moments)",
           config={"data": "digits 3 vs 8, unit norm, d=64", "N held-out": N, "q": 0.25, "lr": 1.0, "steps": R["steps"]},
           table=table,
           note="Structural (catalog F3): the outer map φ = aᵀ· is linear, so Fig. 5's two panels are one number, "
                "ρ = (1 + std²/μ²)^{-1/2}; 'ρ ≈ 1' is the statement 'std/μ is small', an algebraic consequence, not "
                f"independent evidence. With N−1 moments the relation is off by at most {worst_dev:.1e} (≤ 1/(2N) = {1 / (2 * N):.1e}), exactly "
                f"the predicted ((1+v)/(1+vN/(N−1)))^{{1/2}} − 1 (to {worst_pred:.0e}).")
    assert ok, (worst, worst_pred, worst_dev)


@pytest.mark.claim("wang2024/fig-5")
def test_fig5_relation_rejects_wrong_versions(record, ctx):
    """Companion: the 1e-12 test rejects ρ = (1 + σ/μ)^{-1/2} (std for variance) on the trained nets and the relation
    itself on a composition with a non-linear outer map (3-module ReLU 20-30-25-5), where it is not structural."""
    R = _runs(ctx)
    wrong = 0.0
    for r in R["rows"]:
        rho, v, _ = _stats(r["A"], r["B"], r["C"])
        wrong = max(wrong, abs(rho * (1 + v ** 0.5) ** 0.5 - 1))
    gen = record.generator({"three-module": 1})
    X = torch.randn(100, 20, generator=gen, dtype=torch.float64, device=gen.device)
    X = X / X.norm(dim=-1, keepdim=True)
    W1, W2, W3 = (torch.randn(o, i, generator=gen, dtype=torch.float64, device=gen.device) / i ** 0.5 for o, i in ((30, 20), (25, 30), (5, 25)))
    inner, outer, _ = cc.three_module(W1, W2, W3, fw.RELU)
    A3, B3, C3 = cc.composition_norms(inner, outer, X)
    c3 = fw.opnorm_control(lambda x: outer(inner(x)), X, C3)
    assert c3["ok"], c3
    rho3, v3, _ = _stats(A3, B3, C3)
    nonlin = abs(rho3 * (1 + v3) ** 0.5 - 1)
    rejected = wrong > 1e3 * EXACT and nonlin > 1e3 * EXACT
    record("holds" if rejected else "violated", role="companion", observed=min(wrong, nonlin), bound=EXACT,
           tightness="smallest deviation of a wrong version of the relation (rejected when ≫ 1e-12)",
           table=[{"variant": "std instead of variance (trained nets)", "max |error|": wrong},
                  {"variant": "non-linear outer map (3-module)", "|rho(1+v)^1/2 - 1|": nonlin, "rho": rho3}])
    assert rejected, (wrong, nonlin)


@pytest.mark.claim("wang2024/fig-5")
def test_fig5_ranges(record, ctx):
    """Fig. 5 ranges for q = 0.25 MLPs, ρ ∈ [0.99965, 1] and std/μ ∈ [0.005, 0.03], measured on the CPU stand-in and
    recorded as not applicable: the ranges belong to MNIST (d = 784, 10k test points) at widths up to 8192, and
    std/μ is a property of the data and the width (by (F3) it is the only free number: ρ = (1 + std²/μ²)^{-1/2}),
    so missing them on 8×8 digits at widths 64–1024 is not evidence about the paper. The width trend of std/μ is
    fitted and extrapolated to 8192 (reported, not asserted)."""
    R = _runs(ctx)
    per_m = {}
    for r in R["rows"]:
        rho, v, _ = _stats(r["A"], r["B"], r["C"])
        d = per_m.setdefault(r["m"], dict(rho=[], rs=[], rs0=[]))
        d["rho"].append(rho)
        d["rs"].append(v ** 0.5)
        if r["step"] == 0:
            d["rs0"].append(v ** 0.5)
    rows = [{"m": m, "rho min": min(d["rho"]), "rho max": max(d["rho"]), "std/mu min": min(d["rs"]),
             "std/mu max": max(d["rs"]), "std/mu at init": max(d["rs0"]),
             "inside Fig. 5 ranges": min(d["rho"]) >= RHO_LO and RS_RANGE[0] <= min(d["rs"]) and max(d["rs"]) <= RS_RANGE[1]}
            for m, d in per_m.items()]
    ms = [r["m"] for r in rows]
    fit = fit_power(ms, [r["std/mu max"] for r in rows]) if len(ms) >= 3 else None
    extrap = fit.constant * 8192 ** fit.exponent if fit else None
    rho_min = min(r["rho min"] for r in rows)
    rs_lo, rs_hi = min(r["std/mu min"] for r in rows), max(r["std/mu max"] for r in rows)
    series = {}
    for m in per_m:
        pts = [(r["step"], _stats(r["A"], r["B"], r["C"])) for r in R["rows"] if r["m"] == m and r["seed"] == 0]
        series[f"std/mu m={m}"] = {"x": [s_ for s_, _ in pts], "y": [st[1] ** 0.5 for _, st in pts], "xlabel": "GD step",
                                   "ylabel": "std/μ", "plot": "fig5 relative std"}
    record("not-applicable", observed=rho_min, bound=RHO_LO, table=rows, series=series, evidence="consistency",
           inside=False, inside_reason="stand-in: digits 3 vs 8 (d = 64) at widths 64–1024; the ranges belong to MNIST "
                                       "(d = 784) at widths up to 8192",
           tightness="min ρ over nets and checkpoints (Fig. 5b range: ≥ 0.99965)",
           config={"data": "digits 3 vs 8, unit norm, d=64", "q": 0.25, "steps": R["steps"], "checkpoints": R["ckpts"],
                   "widths": ms, "paper": "MNIST d=784, widths to 8192, SGD lr 0.003 × 50 epochs"},
           note=f"Not reproduced at this scale (reported, not a verdict on the paper): ρ ∈ [{rho_min:.5f}, 1], std/μ ∈ "
                f"[{rs_lo:.3f}, {rs_hi:.3f}] over widths {ms} vs Fig. 5's [0.99965, 1] and [0.005, 0.03]; "
                f"{sum(r['inside Fig. 5 ranges'] for r in rows)}/{len(rows)} widths inside both ranges. "
                + (f"max std/μ ∝ m^{fit.exponent:.2f} (99% CI {fit.ci[0]:.2f}..{fit.ci[1]:.2f}), extrapolated to m = 8192: "
                   f"{extrap:.3f}. " if fit else "")
                + "A faithful test needs MNIST-size inputs and widths to 8192 (GPU profile with an MNIST-size data set).")
