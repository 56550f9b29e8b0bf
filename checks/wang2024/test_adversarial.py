"""Wang et al. §3.2 Def. 3.1 (adversarial risk) and §4 Thm 4.1 (Eq. 8): R_rob(f, r) ≲ R(f) + r·𝔖(ℓ∘f).

Linear model: the sup over the L2 ball is exact, softplus(−s wᵀx + r‖w‖). ReLU MLP: multi-restart L2 PGD
(a lower estimate of the sup, so an excess over R + r𝔖 is a genuine violation). Data: two-class Gaussian
mixture on the unit sphere (Assumption 5.2), labels {0,1}, a held-out test sample as P.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fixtures import wang2024 as fw
from theory.papers.wang2024 import adversarial as adv
from theory.stats import fit_affine

RADII = [1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.3, 0.5, 1.0, 2.0]


_CACHE: dict = {}


def _setup(kind, ctx):
    gen = ctx.generator("wang2024/thm-4.1", {"model": kind})
    d = 20
    Xtr, ytr, Xte, yte = fw.mixture(400, ctx.pick(quick=400, full=2000), d, generator=gen)
    if kind == "linear":
        net = fw.trained("linear", 64, d, 0.25, Xtr, ytr, lr=0.5, steps=ctx.pick(quick=150, full=300), generator=gen)
        w = (net.a[0].unsqueeze(-1) * net.W[0]).sum(0)
        f = lambda Z: Z @ w
    else:
        net = fw.trained("relu", 32, d, 0.25, Xtr, ytr, lr=2.0, steps=ctx.pick(quick=300, full=3000), generator=gen)
        W, a = net.W[0], net.a[0]
        f = lambda Z: fw.RELU(Z @ W.T) @ a
        w = None
    return gen, f, w, Xte, yte


def _measure(record, kind, ctx):
    """Shared by the Thm 4.1 / Def 3.1 checks (computed once per process: same seeds, same numbers)."""
    key = (kind, ctx.profile, ctx.seed)
    if key not in _CACHE:
        _CACHE[key] = _compute(kind, ctx)
    return _CACHE[key]


def _compute(kind, ctx):
    gen, f, w, X, y = _setup(kind, ctx)
    s = adv.signed(y)
    R_nat = float(F.softplus(-s * f(X)).mean())
    G = adv.grad_norm_loss(f, X, y)
    en = adv.energy_terms(G)
    S, kappa = float(en["S_loss"]), float(en["kappa"])
    radii = RADII if kind == "linear" else RADII[:7]
    if kind == "linear":
        sup = adv.linear_robust_loss(w, X, y, radii)
        inf = adv.linear_robust_loss(w, X, y, radii, sign=-1)
    else:
        K = ctx.pick(quick=60, full=200)
        sup = adv.pgd_l2(f, X, y, radii, steps=K, restarts=ctx.pick(quick=3, full=6), generator=gen)
        inf = adv.pgd_l2(f, X, y, radii, steps=K, restarts=ctx.pick(quick=3, full=6), sign=-1, generator=gen)
    l0 = F.softplus(-s * f(X))
    R_rob = sup.mean(-1)
    ratios = adv.ratio_table(radii, R_nat, R_rob.tolist(), S)
    # (J): R_rob ≤ R + (E sup_ε Δ²)^{1/2}, sup Δ² = max(sup Δ, −inf Δ)² (ε = 0 feasible ⇒ sup Δ ≥ 0)
    sup_d2 = torch.maximum(sup - l0, l0 - inf).pow(2).mean(-1).sqrt()
    jensen = (R_rob - R_nat - sup_d2).tolist()
    return dict(radii=radii, R=R_nat, S=S, kappa=kappa, ratios=ratios, jensen=jensen, R_rob=R_rob.tolist(),
                S_f=float(G.div((torch.sigmoid(f(X)) - y).abs().clamp_min(1e-300)).pow(2).mean().sqrt()),
                G=G, X=X, y=y, f=f, w=w)


def _limit_fit(m):
    """Fit ratio(r) = κ̂ + c·r on the three smallest radii (the first-order limit)."""
    fit = fit_affine(m["radii"][:3], m["ratios"][:3])
    return fit.intercept, fit


@pytest.mark.claim("wang2024/thm-4.1")
@pytest.mark.parametrize("kind", ["linear", "relu"])
def test_first_order_limit(record, ctx, kind):
    """(R_rob − R)/(r𝔖) → κ = E G/(E G²)^{1/2} ≤ 1 as r → 0: the bound holds to first order with slack 1 − κ."""
    m = _measure(record, kind, ctx)
    k_hat, fit = _limit_fit(m)
    err = abs(k_hat / m["kappa"] - 1)
    r_star = adv.crossover(m["radii"], m["ratios"])
    table = [{"r": r, "ratio (R_rob-R)/(r S)": q, "R_rob": rb, "R + r S": m["R"] + r * m["S"],
              "(J) slack R_rob-R-sqrt(E supΔ²)": j} for r, q, rb, j in zip(m["radii"], m["ratios"], m["R_rob"], m["jensen"])]
    assert err < 1e-2, (k_hat, m["kappa"])
    assert m["kappa"] <= 1
    record("holds", observed=k_hat, bound=m["kappa"], tightness="fitted r→0 limit of (R_rob−R)/(r𝔖) vs κ",
           config={"model": kind, "d": 20, "attack": "exact" if kind == "linear" else "L2 PGD"}, table=table,
           series={f"ratio vs r ({kind})": {"x": m["radii"], "y": m["ratios"], "xlabel": "radius r",
                                            "ylabel": "(R_rob − R)/(r·S(ℓ∘f))", "logx": True, "logy": True, "plot": f"thm41 {kind}"},
                   f"kappa ({kind})": {"x": m["radii"], "y": [m["kappa"]] * len(m["radii"]), "plot": f"thm41 {kind}",
                                       "xlabel": "radius r", "ylabel": "ratio"},
                   f"bound = 1 ({kind})": {"x": m["radii"], "y": [1.0] * len(m["radii"]), "plot": f"thm41 {kind}",
                                           "xlabel": "radius r", "ylabel": "ratio"}},
           note=f"κ = {m['kappa']:.4f}; bound fails from r* = {r_star} on the grid (unit-norm inputs); "
                f"S(ℓ∘f) = {m['S']:.4g}, paper's proxy S(f) = {m['S_f']:.4g}.")


@pytest.mark.claim("wang2024/thm-4.1")
@pytest.mark.parametrize("kind", ["linear", "relu"])
def test_jensen_step_every_radius(record, ctx, kind):
    """The exact pre-linearization step (J) of App. A holds at every radius."""
    m = _measure(record, kind, ctx)
    worst = max(m["jensen"])
    assert worst <= 1e-12  # a difference of means of O(1) losses: a few ulps
    record("holds", observed=worst, bound=0.0, tightness="max_r R_rob − R − (E sup Δ²)^{1/2} (≤ 0)",
           config={"model": kind}, table=[{"r": r, "slack": j} for r, j in zip(m["radii"], m["jensen"])])


@pytest.mark.claim("wang2024/thm-4.1")
@pytest.mark.xfail(strict=True, reason="Thm 4.1 is first-order only: R_rob > R + r·S(ℓ∘f) beyond a modest radius")
@pytest.mark.parametrize("kind", ["linear", "relu"])
def test_bound_at_finite_radius(record, ctx, kind):
    """As printed (≲ read as ≤ at every radius): fails once curvature dominates (crossover r*)."""
    m = _measure(record, kind, ctx)
    r_star = adv.crossover(m["radii"], m["ratios"])
    worst = max(m["ratios"])
    record("expected-failure", observed=worst, bound=1.0, config={"model": kind},
           finding=f"R_rob ≤ R + r·S(ℓ∘f) fails for r ≥ {r_star} (unit-norm inputs; max ratio {worst:.2f} on the grid "
                   f"r ≤ {m['radii'][-1]}): the bound is first-order, with an uncontrolled O(r²) term.",
           table=[{"r": r, "ratio": q} for r, q in zip(m["radii"], m["ratios"])])
    assert worst <= 1.0


@pytest.mark.claim("wang2024/thm-4.1")
def test_limit_check_rejects_wrong_constants(record, ctx):
    """Companion: the κ test rejects κ·1.05, the limit 1 (a 'tight' reading), and 𝔖 of the dataset-mean loss."""
    m = _measure(record, "linear", ctx)
    k_hat, _ = _limit_fit(m)
    n = len(m["y"])
    wrong = {"kappa*1.05": m["kappa"] * 1.05, "limit 1": 1.0, "S of mean loss (1/n)": m["kappa"] * n}
    rej = {k: abs(k_hat / v - 1) for k, v in wrong.items()}
    assert all(e > 1e-2 for e in rej.values()), rej
    record("holds", observed=min(rej.values()), bound=1e-2, table=[{"variant": k, "|κ̂/κ' − 1|": v} for k, v in rej.items()],
           note="companion: each wrong limit misses the fitted κ̂ by more than the 1 % tolerance")


@pytest.mark.claim("wang2024/def-3.1")
def test_adversarial_risk_definition(record, ctx):
    """R_rob(f,0) = R(f); r ↦ R_rob non-decreasing; PGD on the linear model matches the closed form (≤1e-6)."""
    m = _measure(record, "linear", ctx)
    gen = record.generator({"pgd": "validation"})
    f, X, y, w = m["f"], m["X"][:300], m["y"][:300], m["w"]
    radii = [0.0, 0.01, 0.1, 0.5]
    pgd = adv.pgd_l2(f, X, y, radii, steps=60, restarts=3, generator=gen).mean(-1)
    exact = adv.linear_robust_loss(w, X, y, radii).mean(-1)
    gap = float(((exact - pgd) / exact).abs().max())
    R0 = float(F.softplus(-adv.signed(y) * f(X)).mean())
    mono = all(b >= a for a, b in zip(m["R_rob"], m["R_rob"][1:]))
    assert abs(float(exact[0]) - R0) < 1e-14 and mono and gap <= 1e-6
    # 0-1 version: misclassified iff s wᵀx ≤ r‖w‖
    rob_err = [float((adv.signed(y) * (X @ w) <= r * w.norm()).double().mean()) for r in radii]
    record("holds", observed=gap, bound=1e-6, tightness="max relative gap PGD vs exact sup (linear model)",
           table=[{"r": r, "R_rob exact": float(e), "R_rob PGD": float(p), "robust 0-1 error": z}
                  for r, e, p, z in zip(radii, exact, pgd, rob_err)])
