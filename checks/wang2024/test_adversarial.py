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
from theory import ClaimViolation, assert_claim
from theory.device import draw
from theory.papers.wang2024 import adversarial as adv
from theory.papers.wang2024 import worstcase as wc
from theory.stats import fit_affine

# tests that compute one cached run: xdist keeps each group on one worker (theory.harness.shared_runs)
SHARED_RUNS = "wang2024/adversarial_runs"

RADII = [1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.3, 0.5, 1.0, 2.0]
LIMIT_TOL = 1e-2  # catalog: fitted r → 0 limit within 1 % (the affine fit's O(r²) residual at r ≤ 1e-2 is ≲ 1e-3)
# PGD stability: doubling the steps or the restarts may change R_rob − R per radius by at most this (relative).
# A converged attack changes it only by the last digits; an attack still climbing moves it by O(1 %).
PGD_STABLE = 1e-5


def _pgd_cfg(ctx):
    """L2 PGD on the MLP: ≥ 100 steps (catalog), 3 restarts incl. the first-order start (quick); full: 200 × 6."""
    return dict(steps=ctx.pick(quick=100, full=200), restarts=ctx.pick(quick=3, full=6))


_CACHE: dict = {}


# issue 19: on the trained models the energy term r𝔖 is ≤ 7 % of R + r𝔖 at the radii of the first-order fit (r ≤ 1e-2;
# 22–27 % only at r = 0.05, outside it). "linear-confident" is the same trained linear classifier with its logits scaled
# by CONFIDENT_SCALE (‖w‖ ≈ 15, R ≈ 1e-4, as after long training on nearly separable data): there r𝔖 is 28–59 % of the
# bound at r = 1e-2 (a probe over 20 draws: the smaller of the two shares at the best fit radius 0.34–0.50).
CONFIDENT_SCALE = 3.0
MATERIAL = 0.25  # a term is a material share of the bound R + r𝔖 at ≥ 25 % of it
TERM_R, TERM_S = "term: R(f) (natural risk)", "term: r S(L(f)) (Dirichlet energy of the loss)"


def _setup(kind, ctx):
    base = "linear" if kind == "linear-confident" else kind  # the same draw and training as "linear"
    gen = ctx.generator("wang2024/thm-4.1", {"model": base})
    d = 20
    Xtr, ytr, Xte, yte = fw.mixture(400, ctx.pick(quick=400, full=2000), d, generator=gen)
    if base == "linear":
        net = fw.trained("linear", 64, d, 0.25, Xtr, ytr, lr=0.5, steps=ctx.pick(quick=150, full=300), generator=gen)
        w = (net.a[0].unsqueeze(-1) * net.W[0]).sum(0) * (CONFIDENT_SCALE if kind == "linear-confident" else 1.0)
        f = lambda Z: Z @ w
    else:
        net = fw.trained("relu", 32, d, 0.25, Xtr, ytr, lr=2.0, steps=ctx.pick(quick=300, full=3000), generator=gen)
        W, a = net.W[0], net.a[0]
        f = lambda Z: fw.RELU(Z @ W.T) @ a
        f.W = W
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
    # G = sig(−s f)·‖∇f‖: the model's input-gradient norm vs the core's default opnorm and its exact SVD
    ctl = fw.opnorm_control(lambda x: f(x.unsqueeze(0)).squeeze(0), X, G / torch.sigmoid(-s * f(X)).detach())
    assert ctl["ok"], ctl
    en = adv.energy_terms(G)
    S, kappa = float(en["S_loss"]), float(en["kappa"])
    radii = RADII if w is not None else RADII[:7]
    if w is not None:
        sup = adv.linear_robust_loss(w, X, y, radii)
        inf = adv.linear_robust_loss(w, X, y, radii, sign=-1)
        stability = None
    else:
        cfg = _pgd_cfg(ctx)
        sup = adv.pgd_l2(f, X, y, radii, generator=gen, **cfg)
        inf = adv.pgd_l2(f, X, y, radii, sign=-1, generator=gen, **cfg)
        # attack convergence on the MLP itself: rerun with twice the steps and with twice the restarts
        stability = {}
        for name, kw in (("2x steps", dict(cfg, steps=2 * cfg["steps"])),
                         ("2x restarts", dict(cfg, restarts=2 * cfg["restarts"]))):
            alt = adv.pgd_l2(f, X, y, radii, generator=gen, **kw).mean(-1)
            stability[name] = ((alt - sup.mean(-1)) / (sup.mean(-1) - R_nat)).tolist()
    l0 = F.softplus(-s * f(X))
    R_rob = sup.mean(-1)
    # the events Thm 4.1's proof invokes: ℓ differentiable in f (softplus), f differentiable at the sample points
    # (ReLU: no pre-activation exactly 0 on the held-out sample; linear: everywhere)
    zeros = 0 if w is not None else int((X @ f.W.T == 0).sum())
    ratios = adv.ratio_table(radii, R_nat, R_rob.tolist(), S)
    # (J): R_rob ≤ R + (E sup_ε Δ²)^{1/2}, sup Δ² = max(sup Δ, −inf Δ)² (ε = 0 feasible ⇒ sup Δ ≥ 0)
    sup_d2 = torch.maximum(sup - l0, l0 - inf).pow(2).mean(-1).sqrt()
    jensen = (R_rob - R_nat - sup_d2).tolist()
    return dict(radii=radii, R=R_nat, S=S, kappa=kappa, ratios=ratios, jensen=jensen, R_rob=R_rob.tolist(),
                sup_d2=sup_d2.tolist(), sup_d1=(R_rob - R_nat).tolist(), mean_sq=(sup - l0).pow(2).mean(-1).tolist(),
                stability=stability,
                S_f=float(G.div((torch.sigmoid(f(X)) - y).abs().clamp_min(1e-300)).pow(2).mean().sqrt()),
                G=G, X=X, y=y, f=f, w=w, zeros=zeros)


def _limit_fit(m, key="ratios"):
    """Fit y(r) = ŷ₀ + c·r on the three smallest radii (the first-order limit of a ratio)."""
    ys = m[key] if key == "ratios" else [v / (r * m["S"]) for v, r in zip(m[key], m["radii"])]
    fit = fit_affine(m["radii"][:3], ys[:3])
    return fit.intercept, fit


def _energy_shares(m):
    """Share of r𝔖 in the bound R + r𝔖 at each radius of m["radii"] (the share of R is its complement)."""
    return [r * m["S"] / (m["R"] + r * m["S"]) for r in m["radii"]]


def _term_covers(m):
    """(largest share of R, largest share of r𝔖 over the radii of the first-order fit, the term parts that reach
    MATERIAL there, and the fit radius where the smaller of the two shares is largest, with both shares)."""
    fit = _energy_shares(m)[:3]
    sh_R, sh_S = 1 - min(fit), max(fit)
    i = max(range(len(fit)), key=lambda j: min(fit[j], 1 - fit[j]))
    both = {"r": m["radii"][i], "share of R": 1 - fit[i], "share of r S": fit[i]}
    return sh_R, sh_S, [t for t, v in ((TERM_R, sh_R), (TERM_S, sh_S)) if v >= MATERIAL], both


def _inside(m, kind):
    """inside=/inside_reason= of a Thm 4.1 record: the events its proof (App. A) invokes, measured on this run."""
    return fw.inside({"loss differentiable in f": ("softplus(−s f) (BCE)", True),
                      "f differentiable at the sample points (ReLU pre-activations exactly 0)":
                          (m["zeros"], m["zeros"] == 0),
                      "expectation over (x, y) ~ P": (f"mean over {len(m['y'])} held-out points", True),
                      "r > 0": (f"radii {m['radii'][0]:g}..{m['radii'][-1]:g}", True)})


def _attack(kind, ctx):
    return "exact sup/inf" if kind.startswith("linear") else "L2 PGD {steps} steps × {restarts} restarts".format(**_pgd_cfg(ctx))


@pytest.mark.claim("wang2024/thm-4.1")
@pytest.mark.parametrize("kind", ["linear", "relu"])
def test_first_order_limit(record, ctx, kind):
    """(R_rob − R)/(r𝔖) → κ = E G/(E G²)^{1/2} ≤ 1 as r → 0: the bound holds to first order with slack 1 − κ.
    For the MLP the attack is also checked for convergence: doubling its steps or its restarts changes R_rob − R
    by ≤ PGD_STABLE (relative) at every radius."""
    m = _measure(record, kind, ctx)
    k_hat, fit = _limit_fit(m)
    err = abs(k_hat / m["kappa"] - 1)
    r_star = adv.crossover(m["radii"], m["ratios"])
    sh_R, sh_S, terms, both = _term_covers(m)
    table = [{"r": r, "ratio (R_rob-R)/(r S)": q, "R_rob": rb, "R + r S": m["R"] + r * m["S"], "share of r S in R + r S": sh}
             for r, q, rb, sh in zip(m["radii"], m["ratios"], m["R_rob"], _energy_shares(m))]
    stab = 0.0
    if m["stability"] is not None:
        for name, rel in m["stability"].items():
            stab = max(stab, max(abs(x) for x in rel))
            table.append({"PGD stability": name, "relative change of R_rob - R per radius": rel})
    ok = err < LIMIT_TOL and m["kappa"] <= 1 and stab <= PGD_STABLE
    record("holds" if ok else "violated", observed=k_hat, bound=m["kappa"], evidence="test", **_inside(m, kind),
           covers=["first order (r → 0)", "linear model" if kind == "linear" else "ReLU MLP"] + terms,
           tightness="fitted r→0 limit of (R_rob−R)/(r𝔖) vs κ = E G/(E G²)^{1/2}",
           hypotheses={"largest share of R in R + r S on the fit radii": sh_R,
                       "largest share of r S in R + r S on the fit radii": sh_S,
                       "fit radius with both terms most balanced": both},
           config={"model": kind, "d": 20, "attack": _attack(kind, ctx), "limit tolerance": LIMIT_TOL,
                   "PGD stability tolerance": PGD_STABLE}, table=table,
           series={f"ratio vs r ({kind})": {"x": m["radii"], "y": m["ratios"], "xlabel": "radius r",
                                            "ylabel": "(R_rob − R)/(r·S(ℓ∘f))", "logx": True, "logy": True, "plot": f"thm41 {kind}"},
                   f"kappa ({kind})": {"x": m["radii"], "y": [m["kappa"]] * len(m["radii"]), "plot": f"thm41 {kind}",
                                       "xlabel": "radius r", "ylabel": "ratio"},
                   f"bound = 1 ({kind})": {"x": m["radii"], "y": [1.0] * len(m["radii"]), "plot": f"thm41 {kind}",
                                           "xlabel": "radius r", "ylabel": "ratio"}},
           note=f"κ = {m['kappa']:.4f}, fitted limit {k_hat:.4f} (|κ̂/κ − 1| = {err:.1e}); the bound R + r𝔖 fails from "
                f"r* = {r_star} on the grid (unit-norm inputs); S(ℓ∘f) = {m['S']:.4g}, paper's proxy S(f) = "
                f"{m['S_f']:.4g}. The term r𝔖 is at most {sh_S:.1%} of R + r𝔖 on the fit radii r ≤ 1e-2 (a material "
                "share is tested in test_first_order_limit_confident)." + ("" if m["stability"] is None else
                                      f" PGD convergence: max relative change of R_rob − R when doubling steps or "
                                      f"restarts {stab:.1e} (tolerance {PGD_STABLE:g})."))
    assert err < LIMIT_TOL, (k_hat, m["kappa"])
    assert m["kappa"] <= 1
    assert stab <= PGD_STABLE, m["stability"]


@pytest.mark.claim("wang2024/thm-4.1")
def test_first_order_limit_confident(record, ctx):
    """The first-order limit (R_rob − R)/(r𝔖) → κ where both terms of R + r𝔖 are a material share on the fit radii:
    the trained linear classifier with logits × CONFIDENT_SCALE (exact sup). Same criterion as test_first_order_limit;
    the shares are recorded and a term is covered where it reaches MATERIAL at a radius of the fit."""
    m = _measure(record, "linear-confident", ctx)
    k_hat, _ = _limit_fit(m)
    err = abs(k_hat / m["kappa"] - 1)
    sh_R, sh_S, terms, both = _term_covers(m)
    ok = err < LIMIT_TOL and m["kappa"] <= 1
    record("holds" if ok else "violated", observed=k_hat, bound=m["kappa"], evidence="test", **_inside(m, "linear"),
           covers=["first order (r → 0)", "linear model"] + terms,
           tightness="fitted r→0 limit of (R_rob−R)/(r𝔖) vs κ = E G/(E G²)^{1/2}",
           config={"model": f"linear, logits x {CONFIDENT_SCALE}", "d": 20, "attack": "exact sup/inf",
                   "limit tolerance": LIMIT_TOL, "material share": MATERIAL},
           hypotheses={"largest share of R in R + r S on the fit radii": sh_R,
                       "largest share of r S in R + r S on the fit radii": sh_S,
                       "fit radius with both terms most balanced": both},
           table=[{"r": r, "ratio (R_rob-R)/(r S)": q, "R_rob": rb, "R + r S": m["R"] + r * m["S"],
                   "share of r S in R + r S": sh} for r, q, rb, sh in zip(m["radii"], m["ratios"], m["R_rob"],
                                                                         _energy_shares(m))],
           note=f"R = {m['R']:.3g}, S(ℓ∘f) = {m['S']:.3g}, κ = {m['kappa']:.4f}, fitted limit {k_hat:.4f} "
                f"(|κ̂/κ − 1| = {err:.1e}); at r = {both['r']:g} (a radius of the fit) r𝔖 is {both['share of r S']:.0%} of "
                f"R + r𝔖 and R {both['share of R']:.0%}" + ("" if len(terms) == 2 else f"; below {MATERIAL:.0%} at this draw: "
                                          f"{[t for t in (TERM_R, TERM_S) if t not in terms]} not covered"))
    assert err < LIMIT_TOL, (k_hat, m["kappa"])
    assert m["kappa"] <= 1


# worst case of the first-order bound over f (issue 32): the r → 0 limit of (R_rob − R)/(r𝔖) is κ(f) = E G/(E G²)^{1/2}
# ≤ 1 for every f (Cauchy–Schwarz), with equality iff G = ‖∇ₓℓ‖ is constant over the sample. The affine fit on the three
# smallest radii leaves an O(r²) residual in the intercept: ≲ 1e-4 at r‖w‖ ≤ 0.15 (linear models here), so a fitted
# limit above 1 + WORST_TOL would be a first-order excess, not the fit.
WORST_TOL = 1e-3
WORST_STEPS = 100  # Adam steps of the κ ascent (8 starts, d = 20, 400 points: a fraction of a second)


def _linear_first_order(w, X, y):
    """(fitted r → 0 limit of (R_rob − R)/(r𝔖), κ) of f = wᵀx with the exact sup, on the three smallest radii."""
    radii = RADII[:3]
    G = torch.sigmoid(-adv.signed(y) * (X @ w)) * w.norm()
    en = adv.energy_terms(G)
    R = float(F.softplus(-adv.signed(y) * (X @ w)).mean())
    R_rob = adv.linear_robust_loss(w, X, y, radii).mean(-1).tolist()
    ratios = adv.ratio_table(radii, R, R_rob, float(en["S_loss"]))
    return fit_affine(radii, ratios).intercept, float(en["kappa"])


def _equal_margin_case(gen, d=20, n=200, alpha=0.6, beta=1.5):
    """The equality case of the Cauchy–Schwarz step: x_i = s_i(αu + √(1−α²)z_i), z_i ⟂ u unit, w = βu, so every point
    has the signed margin s_i wᵀx_i = αβ, G is constant and κ = 1 exactly (unit-norm inputs, labels half 0, half 1)."""
    u = draw(torch.randn, d, generator=gen, dtype=torch.float64, device=gen.device).cpu()
    u = u / u.norm()
    Z = draw(torch.randn, n, d, generator=gen, dtype=torch.float64, device=gen.device).cpu()
    Z = Z - (Z @ u)[:, None] * u
    Z = Z / Z.norm(dim=-1, keepdim=True)
    y = (torch.arange(n, device=u.device) % 2).to(torch.float64)
    X = (2 * y - 1)[:, None] * (alpha * u + math.sqrt(1 - alpha ** 2) * Z)
    return beta * u, X, y


@pytest.mark.claim("wang2024/thm-4.1")
def test_first_order_limit_worst_case(record, ctx):
    """Thm 4.1 holds for every classifier f, so its first-order form is judged at the worst f found: the largest fitted
    r → 0 limit of (R_rob − R)/(r𝔖) (exact sup, linear f) over the trained classifier, its logits × CONFIDENT_SCALE,
    random w of four norms, a batched gradient ascent of κ over w (:func:`worstcase.ascend_kappa`, 8 starts) and the
    proof's equality case (constant ‖∇ₓℓ‖: every point at the same margin, κ = 1). Bound 1 (the first-order bound with
    constant 1); each fitted limit must also equal its κ within LIMIT_TOL (the expansion itself)."""
    m = _measure(record, "linear", ctx)
    X, y, w_tr = m["X"], m["y"], m["w"]
    gen = record.generator({"worst case": "kappa"})
    d = X.shape[1]
    dirs = draw(torch.randn, 16, d, generator=gen, dtype=X.dtype, device=gen.device).to(X.device)
    dirs = dirs / dirs.norm(dim=-1, keepdim=True)
    norms = torch.tensor([0.3, 1.0, 3.0, 10.0], dtype=X.dtype, device=X.device).repeat_interleave(4)
    W_rand = dirs * norms[:, None]
    k_start = wc.kappa_linear(W_rand[:8], X, y)
    asc, w_asc = wc.ascend_kappa(W_rand[:8], X, y, steps=WORST_STEPS)
    cands = {"trained": w_tr, f"trained, logits x {CONFIDENT_SCALE}": CONFIDENT_SCALE * w_tr}
    k_rand = wc.kappa_linear(W_rand, X, y)
    cands["random w (largest kappa of 16)"] = W_rand[int(k_rand.argmax())]
    cands["ascent of kappa (best of 8 starts)"] = w_asc[int(asc.argmax())]
    rows, worst, fit_err = [], -math.inf, 0.0
    for name, w in cands.items():
        lim, kap = _linear_first_order(w, X, y)
        rows.append({"f": name, "|w|": float(w.norm()), "kappa": kap, "fitted limit": lim})
    w_eq, X_eq, y_eq = _equal_margin_case(gen)
    lim, kap = _linear_first_order(w_eq, X_eq, y_eq)
    rows.append({"f": "equality case (all margins equal, G constant)", "|w|": float(w_eq.norm()), "kappa": kap,
                 "fitted limit": lim})
    for r in rows:
        worst = max(worst, r["fitted limit"])
        fit_err = max(fit_err, abs(r["fitted limit"] / r["kappa"] - 1))
    eq_gap = abs(rows[-1]["kappa"] - 1)
    wrow = max(rows, key=lambda r: r["fitted limit"])  # the classifier that attains the recorded maximum
    ok = worst <= 1 + WORST_TOL and fit_err < LIMIT_TOL
    zeros = {"loss differentiable in f": ("softplus(−s f) (BCE)", True),
             "f differentiable (linear f)": ("everywhere", True),
             "expectation over (x, y) ~ P": (f"mean over {len(y)} held-out points (equality case: 200 points)", True)}
    record("holds" if ok else "violated", observed=worst, bound=1.0, evidence="test", worst_case=True, figure_kind="slack",
           **fw.inside(zeros), covers=["first order (r → 0)", "linear model"],
           tightness="largest fitted r → 0 limit of (R_rob − R)/(r𝔖) over f (random, trained, κ-ascent, equality case)",
           config={"model": "linear", "d": d, "attack": "exact sup", "fit radii": RADII[:3], "worst tolerance": WORST_TOL,
                   "ascent": f"Adam, {WORST_STEPS} steps, 8 starts"},
           table=rows + [{"ascent: kappa at the starts (max)": float(k_start.max()), "after the ascent (max)":
                          float(asc.max()), "max |limit/kappa - 1|": fit_err, "|kappa - 1| at the equality case": eq_gap,
                          "worst case: f": wrow["f"], "worst case: |w|": wrow["|w|"]}],
           note=f"The recorded maximum (fitted limit {wrow['fitted limit']:.6f}) is attained by '{wrow['f']}' with "
                f"‖w‖ = {wrow['|w|']:.2g}. The κ-ascent has no norm constraint: κ → 1 as w → 0 (every ‖∇ₓℓ‖ tends to "
                "the same ‖w‖/2), so it drifts toward a near-zero classifier, a limit of the equality case rather than a "
                f"new one. The proof's equality case itself (every margin equal, ‖w‖ = {rows[-1]['|w|']:.2g}) gives "
                f"fitted limit {rows[-1]['fitted limit']:.6f} with κ = {rows[-1]['kappa']:.6f}: no slack in the worst "
                f"case. Every fitted limit equals its κ within {fit_err:.1e}.")
    assert eq_gap <= 1e-12, eq_gap  # the construction is the equality case
    assert fit_err < LIMIT_TOL, rows
    assert worst <= 1 + WORST_TOL, rows


@pytest.mark.claim("wang2024/thm-4.1")
@pytest.mark.parametrize("kind", ["linear", "relu"])
def test_jensen_step_every_radius(record, ctx, kind):
    """App. A, the two steps of the proof at every radius.

    (J) R_rob − R = E sup Δ ≤ (E sup Δ²)^{1/2} is an arithmetic consistency step (Jensen; sup Δ ≥ 0 because ε = 0 is
    feasible, so it cannot fail for any numbers: it checks the bookkeeping of sup/inf, not the paper). The step that
    carries the theorem is the linearization sup_ε Δ² ≈ r²‖∇ₓℓ‖²: then (E sup Δ²)^{1/2}/(r𝔖) → 1 as r → 0. That
    limit is fitted on the three smallest radii and must be 1 within LIMIT_TOL; the ratio at larger r shows where
    the linearization (not Jensen) breaks."""
    m = _measure(record, kind, ctx)
    worst = max(m["jensen"])
    lin = [v / (r * m["S"]) for v, r in zip(m["sup_d2"], m["radii"])]
    lim, _ = _limit_fit(m, "sup_d2")
    # a difference of means of O(1) losses: a few ulps
    ok = worst <= 1e-12 and abs(lim - 1) < LIMIT_TOL
    record("holds" if ok else "violated", observed=lim, bound=1.0, reading="proof-step", evidence="test",
           **_inside(m, kind),
           tightness="fitted r→0 limit of (E sup Δ²)^{1/2}/(r𝔖) (linearization step; 1 expected)",
           config={"model": kind, "attack": _attack(kind, ctx)},
           table=[{"r": r, "(J) slack R_rob - R - sqrt(E supΔ²)": j, "sqrt(E supΔ²)/(r S)": q}
                  for r, j, q in zip(m["radii"], m["jensen"], lin)],
           note=f"(J) held at every radius (max slack {worst:.1e} ≤ 0; arithmetic consistency). The linearized "
                f"quantity tends to r𝔖 (fitted limit {lim:.5f}) and exceeds it by {lin[-1]:.2f}× at r = {m['radii'][-1]}: "
                "the finite-radius failure of Thm 4.1 comes from the linearization, not from Jensen.")
    assert worst <= 1e-12
    assert abs(lim - 1) < LIMIT_TOL, lin


@pytest.mark.claim("wang2024/thm-4.1")
@pytest.mark.parametrize("kind", ["linear", "relu"])
def test_jensen_step_rejects_wrong(record, ctx, kind):
    """Companion of the proof-step check: (J) without the square root, R_rob − R ≤ E sup Δ², is rejected at the
    radii where sup Δ < 1 (there Δ² < Δ); and a linearization limit of 1/2 (a dropped factor 2 in
    sup(∇ℓᵀε)² = r²‖∇ℓ‖²) misses the fitted limit by more than LIMIT_TOL."""
    m = _measure(record, kind, ctx)
    bad_r = [r for r, d1, d2 in zip(m["radii"], m["sup_d1"], m["mean_sq"]) if d1 > d2]
    lim, _ = _limit_fit(m, "sup_d2")
    half = abs(lim / 0.5 - 1)
    rejected = len(bad_r) > 0 and half > LIMIT_TOL
    record("holds" if rejected else "violated", role="companion", observed=len(bad_r), bound=0,
           tightness="# radii where R_rob − R > E sup Δ² (the no-square-root version fails there)",
           table=[{"r": r, "R_rob - R": d1, "E supΔ²": d2} for r, d1, d2 in zip(m["radii"], m["sup_d1"], m["mean_sq"])]
                 + [{"wrong limit 1/2: |lim/0.5 - 1|": half}],
           note=f"no-sqrt version rejected at r ∈ {bad_r}; limit 1/2 rejected ({half:.2f} > {LIMIT_TOL:g}).")
    assert rejected, (bad_r, half)


# the strict reading's finding pins where the first-order bound stops describing the risk: it holds at the small radii
# (first-order regime, ratio → κ < 1) and the crossover r* lies in (STRICT_R_LO, STRICT_R_HI] on unit-norm inputs.
# STRICT_R_LO is the first-order fit's range (the three smallest radii, r ≤ 1e-2), not a seed-tuned value: where the
# crossover falls beyond it depends on κ and the curvature of the drawn model (seed 17: ratio 1.0006 at r = 0.05)
STRICT_R_LO, STRICT_R_HI, STRICT_MAX_RATIO = 0.01, 0.5, 1.5


@pytest.mark.claim("wang2024/thm-4.1-strict")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="strict reading of Thm 4.1 ('≲' as '≤ at every r'): the first-order bound stops holding "
                          "beyond a crossover radius r* (0.01 < r* ≤ 0.5 on unit-norm inputs)")
@pytest.mark.parametrize("kind", ["linear", "relu"])
def test_bound_at_finite_radius(record, ctx, kind):
    """wang2024/thm-4.1-strict (Eq. 8 with '≲' read as '≤' at every radius): fails once curvature dominates.

    Not the printed statement (first order, confirmed by test_first_order_limit): recorded with reading='strict'.
    Size pinned: the ratio (R_rob − R)/(r𝔖) is ≤ 1 at every grid radius ≤ STRICT_R_LO, the crossover r* lies in
    (STRICT_R_LO, STRICT_R_HI], and the largest ratio on the grid is ≥ STRICT_MAX_RATIO."""
    m = _measure(record, kind, ctx)
    r_star = adv.crossover(m["radii"], m["ratios"])
    worst = max(m["ratios"])
    ok = worst <= 1.0
    small_ok = all(q <= 1.0 for r, q in zip(m["radii"], m["ratios"]) if r <= STRICT_R_LO)
    record("holds" if ok else "expected-failure", observed=worst, bound=1.0, reading="strict", evidence="test",
           **_inside(m, kind),
           finding_type="" if ok else "missing-hypothesis",
           config={"model": kind, "attack": _attack(kind, ctx),
                   "pinned: ratio ≤ 1 at every r ≤": STRICT_R_LO, "pinned: crossover r* in": [STRICT_R_LO, STRICT_R_HI],
                   "pinned: largest ratio ≥": STRICT_MAX_RATIO},
           tightness="max over the radius grid of (R_rob − R)/(r𝔖) (the strict reading needs ≤ 1)",
           finding="" if ok else (f"Read strictly (≤ at every r), Eq. (8) needs r below a crossover r* that depends "
                                  f"on the classifier f and on its slack 1 − κ (here κ = {m['kappa']:.3f}, r* = {r_star} "
                                  f"on unit-norm inputs): the ratio (R_rob − R)/(r𝔖) is ≤ 1 for r ≤ {STRICT_R_LO} and "
                                  f"reaches {worst:.2f} on the grid r ≤ {m['radii'][-1]}. At a classifier with κ = 1 "
                                  "(the proof's equality case) there is no slack and the ratio exceeds 1 at every r > 0 "
                                  "wherever the curvature term is positive, so no f-independent r* exists. The printed "
                                  "'≲' is first order (confirmed); the missing condition is 'r small relative to f's "
                                  "slack', which the paper states only informally."),
           table=[{"r": r, "ratio": q} for r, q in zip(m["radii"], m["ratios"])])
    # the size of the finding: first-order regime intact, crossover in the pinned window, a clear excess beyond it
    assert small_ok, m["ratios"]
    if not ok:
        assert STRICT_R_LO < r_star <= STRICT_R_HI, r_star
        assert worst >= STRICT_MAX_RATIO, worst
    assert_claim(ok, f"R_rob > R + r·S(ℓ∘f) at r ≥ {r_star} (max ratio {worst:.2f})")


def _kappa_numpy(w, X, y):
    """κ = E G/(E G²)^{1/2} of the linear model, written here in numpy from the raw w, X, y (independent of
    adversarial.grad_norm_loss/energy_terms): for ℓ = softplus(−s wᵀx), ∇ₓℓ = −s·sig(−s wᵀx)·w, so
    G = sig(−s wᵀx)‖w‖ and ‖w‖ cancels in κ. Also returns 𝔖(ℓ∘f) = (E G²)^{1/2} and n."""
    w, X, y = (np.asarray(t.detach().cpu(), dtype=np.float64) for t in (w, X, y))
    s = 2 * y - 1
    g = 1 / (1 + np.exp(s * (X @ w)))  # sig(−s wᵀx)
    G = g * np.linalg.norm(w)
    return float(np.mean(G) / np.sqrt(np.mean(G * G))), float(np.sqrt(np.mean(G * G))), len(y)


@pytest.mark.claim("wang2024/thm-4.1")
def test_limit_check_rejects_wrong_constants(record, ctx):
    """Companion: the κ test rejects κ·1.05, the limit 1 (a 'tight' reading), and 𝔖 of the dataset-mean loss.

    κ and 𝔖 are recomputed here in numpy from the linear model's raw w, X, y (:func:`_kappa_numpy`), and the wrong
    limits are built from that κ, not from the code under test; the production κ and 𝔖 must equal them (relative
    1e-12: means of ≤ 2000 O(1) numbers), so a mutated grad_norm_loss/energy_terms (a factor, a missing 1/n)
    fails here."""
    m = _measure(record, "linear", ctx)
    k_hat, _ = _limit_fit(m)
    kappa, S, n = _kappa_numpy(m["w"], m["X"], m["y"])
    agree = {"kappa": abs(m["kappa"] / kappa - 1), "S(loss o f)": abs(m["S"] / S - 1)}
    wrong = {"kappa*1.05": kappa * 1.05, "limit 1": 1.0, "S of mean loss (1/n)": kappa * n}
    rej = {k: abs(k_hat / v - 1) for k, v in wrong.items()}
    rejected = all(e > LIMIT_TOL for e in rej.values()) and abs(k_hat / kappa - 1) < LIMIT_TOL
    agrees = max(agree.values()) <= 1e-12
    record("holds" if rejected and agrees else "violated", role="companion", observed=min(rej.values()), bound=LIMIT_TOL,
           tightness="smallest |κ̂/κ' − 1| over the wrong limits κ' (rejected when > the tolerance)",
           table=[{"variant": k, "|κ̂/κ' − 1|": v} for k, v in rej.items()]
                 + [{"production vs numpy": k, "relative gap": v} for k, v in agree.items()],
           note="each wrong limit (built from the numpy κ) misses the fitted κ̂ by more than the 1 % tolerance, which "
                "the numpy κ itself meets")
    assert agrees, agree
    assert rejected, rej


def _def31(m, record):
    gen = record.generator({"pgd": "validation"})
    f, X, y, w = m["f"], m["X"][:300], m["y"][:300], m["w"]
    radii = [0.0, 0.01, 0.1, 0.5]
    pgd = adv.pgd_l2(f, X, y, radii, steps=60, restarts=3, generator=gen).mean(-1)
    exact = adv.linear_robust_loss(w, X, y, radii).mean(-1)
    return f, X, y, w, radii, pgd, exact


_DEF31_TOL = 1e-6  # catalog: PGD vs closed form on the linear model, relative


@pytest.mark.claim("wang2024/def-3.1")
def test_adversarial_risk_definition(record, ctx):
    """R_rob(f,0) = R(f); r ↦ R_rob non-decreasing; PGD on the linear model matches the closed form (≤1e-6)."""
    m = _measure(record, "linear", ctx)
    f, X, y, w, radii, pgd, exact = _def31(m, record)
    gap = float(((exact - pgd) / exact).abs().max())
    R0 = float(F.softplus(-adv.signed(y) * f(X)).mean())
    mono = all(b >= a for a, b in zip(m["R_rob"], m["R_rob"][1:]))
    # 0-1 version: misclassified iff s wᵀx ≤ r‖w‖
    rob_err = [float((adv.signed(y) * (X @ w) <= r * w.norm()).double().mean()) for r in radii]
    ok = abs(float(exact[0]) - R0) < 1e-14 and mono and gap <= _DEF31_TOL
    record("holds" if ok else "violated", observed=gap, bound=_DEF31_TOL, evidence="consistency",
           **fw.inside({"r > 0 (radii)": (radii[1:], True), "inputs not clipped to a box": ("unconstrained ball", True)}),
           tightness="max relative gap PGD vs exact sup (linear model)",
           table=[{"r": r, "R_rob exact": float(e), "R_rob PGD": float(p), "robust 0-1 error": z}
                  for r, e, p, z in zip(radii, exact, pgd, rob_err)],
           note=f"R_rob(0) − R = {float(exact[0]) - R0:.1e}; R_rob non-decreasing on the thm-4.1 grid: {mono}.")
    assert abs(float(exact[0]) - R0) < 1e-14 and mono and gap <= _DEF31_TOL


@pytest.mark.claim("wang2024/def-3.1")
def test_adversarial_risk_rejects_wrong(record, ctx):
    """Companion: the PGD-vs-closed-form comparison rejects wrong closed forms of the sup — the inf
    softplus(−s wᵀx − r‖w‖) (sign flipped), a 1 % larger radius r·1.01‖w‖, and the L1 norm r‖w‖₁ — at the same
    1e-6 tolerance (radii > 0)."""
    m = _measure(record, "linear", ctx)
    f, X, y, w, radii, pgd, exact = _def31(m, record)
    s = adv.signed(y)
    r = torch.tensor(radii[1:], dtype=X.dtype, device=X.device).reshape(-1, 1)
    wrong = {"inf instead of sup": F.softplus(-s * (X @ w) - r * w.norm()).mean(-1),
             "radius 1.01 r": F.softplus(-s * (X @ w) + 1.01 * r * w.norm()).mean(-1),
             "L1 norm of w": F.softplus(-s * (X @ w) + r * w.abs().sum()).mean(-1)}
    gaps = {k: float(((v - pgd[1:]) / v).abs().max()) for k, v in wrong.items()}
    rejected = all(g > _DEF31_TOL for g in gaps.values())
    record("holds" if rejected else "violated", role="companion", observed=min(gaps.values()), bound=_DEF31_TOL,
           tightness="smallest max-relative gap of a wrong closed form to PGD (rejected when > 1e-6)",
           table=[{"variant": k, "max rel. gap to PGD": g} for k, g in gaps.items()])
    assert rejected, gaps


# ---- the attack itself against an exact sup: PGD (the production R_rob estimator of the Thm 4.1 MLP checks) ----
# On a quadratic model with a convex inner problem, sup_{‖ε‖≤r} ℓ(f(x+ε)) is a trust-region subproblem with an exact
# solution. PGD keeps its first-order start r∇ℓ/‖∇ℓ‖, so the figure of merit is the fraction of the gap between that
# start and the exact sup that the iterations close. Over the family below (seeds 0–17 of its construction) the
# production attack closes ≥ 0.995 of it at every radius and ≥ 0.998 at r ≥ 0.5; an attack whose steps do nothing
# (e.g. an unnormalized step on a saturated loss) closes < 0.1. The band PGD_CLOSED = 0.99 sits between.
PGD_CLOSED = 0.99
_TRS_RADII = [0.1, 0.5, 1.0]


def _trs_max(g, H, r):
    """max_{‖e‖≤r} gᵀe + ½eᵀHe (numpy; H symmetric): the interior critical point when H ≺ 0 and it lies in the ball,
    else the boundary solution e(μ) = (μI − H)⁻¹g, ‖e(μ)‖ = r, μ > max(λ_max(H), 0), by bisection to machine
    precision (the 'hard case' g ⟂ top eigenvector has probability 0 for the random data here)."""
    lam, Q = np.linalg.eigh(H)
    gt = Q.T @ g
    if lam.max() < 0 and np.linalg.norm(gt / lam) <= r:
        e = -gt / lam
        return float(gt @ e + 0.5 * np.sum(lam * e * e))
    lo = max(float(lam.max()), 0.0)
    hi = lo + np.linalg.norm(g) / r + 1.0
    for _ in range(200):
        mu = 0.5 * (lo + hi)
        lo, hi = (mu, hi) if np.linalg.norm(gt / (mu - lam)) > r else (lo, mu)
    e = gt / (hi - lam)
    return float(gt @ e + 0.5 * np.sum(lam * e * e))


def _trs_case(gen, sign):
    """f(x) = ½xᵀAx + bᵀx + c with A ⪰ 0 on unit-norm x (d = 6, N = 40); all labels 1 for the sup (ℓ = softplus(−f):
    maximizing −f is concave) and 0 for the inf (ℓ = softplus(f): minimizing f is convex). c = ±6 saturates the
    loss (ℓ' ≈ e⁻⁶), so only a step that uses the gradient's direction, not its size, moves."""
    d, N = 6, 40
    B = torch.randn(d, d, generator=gen, dtype=torch.float64, device=gen.device)
    A = (B @ B.T / d).cpu().numpy()
    b = (0.5 * torch.randn(d, generator=gen, dtype=torch.float64, device=gen.device)).cpu().numpy()
    X = torch.randn(N, d, generator=gen, dtype=torch.float64, device=gen.device)
    X = (X / X.norm(dim=-1, keepdim=True)).cpu().numpy()
    c = 6.0 if sign > 0 else -6.0
    y = np.full(N, 1.0 if sign > 0 else 0.0)
    exact, first = np.zeros((len(_TRS_RADII), N)), np.zeros((len(_TRS_RADII), N))
    for i, x in enumerate(X):
        fx, grad = 0.5 * x @ A @ x + b @ x + c, A @ x + b
        for k, r in enumerate(_TRS_RADII):
            e1 = r * grad / np.linalg.norm(grad)  # direction of ∇ℓ: −∇f for the sup, and the inf moves along −∇f too
            if sign > 0:  # sup softplus(−f) = softplus(−f(x) + max(−∇fᵀe − ½eᵀAe))
                exact[k, i] = np.logaddexp(0, -fx + _trs_max(-grad, -A, r))
                first[k, i] = np.logaddexp(0, -(fx - grad @ e1 + 0.5 * e1 @ A @ e1))
            else:  # inf softplus(f) = softplus(f(x) − max(−∇fᵀe − ½eᵀAe))
                exact[k, i] = np.logaddexp(0, fx - _trs_max(-grad, -A, r))
                first[k, i] = np.logaddexp(0, fx - grad @ e1 + 0.5 * e1 @ A @ e1)
    At, bt = torch.from_numpy(A), torch.from_numpy(b)
    f = lambda Z: 0.5 * ((Z @ At) * Z).sum(-1) + Z @ bt + c
    return f, torch.from_numpy(X), torch.from_numpy(y), exact, first


def _pgd_vs_trs(record):
    rows, worst_closed, worst_excess = [], 1.0, -np.inf
    for sign in (1, -1):
        gen = record.generator({"pgd": "trust-region", "sign": sign})
        f, X, y, exact, first = _trs_case(gen, sign)
        pgd = adv.pgd_l2(f, X, y, _TRS_RADII, steps=100, restarts=3, sign=sign, generator=gen).cpu().numpy()
        # sup: PGD is a lower estimate (pgd ≤ exact); inf: an upper estimate (pgd ≥ exact); ulps of O(1e-3) losses
        excess = float((sign * (pgd - exact) / np.abs(exact)).max())
        closed = (pgd.mean(-1) - first.mean(-1)) / (exact.mean(-1) - first.mean(-1))
        worst_closed, worst_excess = min(worst_closed, float(closed.min())), max(worst_excess, excess)
        rows += [{"problem": "sup (labels 1)" if sign > 0 else "inf (labels 0)", "r": r, "exact": float(e),
                  "first-order start": float(s), "PGD": float(p), "fraction closed": float(q)}
                 for r, e, s, p, q in zip(_TRS_RADII, exact.mean(-1), first.mean(-1), pgd.mean(-1), closed)]
    return rows, worst_closed, worst_excess


def _pgd_vs_linear(gen):
    """PGD on a linear model f(x) = wᵀx with ‖w‖ = 5 and half the labels against f, so that ‖∇ₓℓ‖ = 5σ(−s f) exceeds 1
    on the misclassified points: the sup/inf over ‖ε‖ ≤ r are softplus(∓(s·f(x)) ± r‖w‖) written here in numpy,
    attained at the first-order start. PGD's per-sample best must equal them (it may never exceed the sup: a start off
    the ball would). Unit-norm x keep every softplus argument within ‖w‖(1 + r) ≤ 10, below the threshold 20 past which
    torch's softplus returns its argument (an error up to e^{-20}), so numpy and torch evaluate the same function and
    1e-12 relative covers the rounding of O(10) values."""
    N, d = 30, 4
    w = draw(torch.randn, d, generator=gen, dtype=torch.float64, device=gen.device).cpu()
    w = 5 * w / w.norm()
    X = draw(torch.randn, N, d, generator=gen, dtype=torch.float64, device=gen.device).cpu()
    X = X / X.norm(dim=1, keepdim=True)
    y = (torch.arange(N) % 2).to(torch.float64)
    f = lambda Z: Z @ w
    Xn, wn = X.cpu().numpy(), w.cpu().numpy()
    sf = (2 * y.cpu().numpy() - 1) * (Xn @ wn)
    worst = 0.0
    for sign in (1, -1):
        pgd = adv.pgd_l2(f, X, y, _TRS_RADII, steps=20, restarts=2, sign=sign, generator=gen).cpu().numpy()
        exact = np.logaddexp(0, -sf[None] + sign * np.asarray(_TRS_RADII)[:, None] * np.linalg.norm(wn))
        worst = max(worst, float(np.abs(pgd - exact).max() / np.abs(exact).max()))
    return worst


@pytest.mark.claim("wang2024/def-3.1")
def test_pgd_reaches_trust_region_sup(record, ctx):
    """Def. 3.1's sup as the Thm 4.1 MLP checks compute it (production :func:`adversarial.pgd_l2`, sup and inf),
    against the exact trust-region solution on quadratic models where the inner problem is convex (numpy bisection,
    written here). PGD never passes the exact value (relative 1e-9) and closes ≥ PGD_CLOSED of the gap between its
    first-order start and the exact sup/inf at every radius, so a PGD whose iterations stall is rejected even where its
    first-order start alone would pass the closed-form comparison of the linear model."""
    rows, closed, excess = _pgd_vs_trs(record)
    lin = _pgd_vs_linear(record.generator({"pgd": "linear, large gradient"}))
    ok = closed >= PGD_CLOSED and excess <= 1e-9 and lin <= 1e-12
    record("holds" if ok else "violated", observed=closed, bound=PGD_CLOSED, evidence="test",
           **fw.inside({"r > 0 (radii)": (_TRS_RADII, True), "inputs not clipped to a box": ("unconstrained ball", True)}),
           tightness="smallest fraction of the (first-order start → exact sup) gap closed by PGD (≥ 0.99 required)",
           config={"model": "½xᵀAx + bᵀx ± 6, A ⪰ 0, d = 6, N = 40", "attack": "L2 PGD 100 steps × 3 restarts",
                   "radii": _TRS_RADII},
           table=rows, note=f"PGD − exact (signed, relative) ≤ {excess:.1e}; fraction closed ≥ {closed:.4f}; on a linear "
                            f"model with ‖∇ₓℓ‖ up to 5, PGD vs the closed-form sup/inf: {lin:.1e} (relative).")
    assert excess <= 1e-9, excess
    assert lin <= 1e-12, f"PGD vs the linear model's closed-form sup/inf: {lin:.3g} (relative)"
    assert closed >= PGD_CLOSED, rows
