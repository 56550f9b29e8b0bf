"""Wang et al. §4.1: Thm 4.5 (Eq. 15), Def. 4.2 (Eq. 9), Def. 4.3 (Eqs. 12–14), Rem. 4.4, Eq. 11, Algorithm 1,
Def. 3.2 — on the linear model, the ReLU MLP and a 3-module composition with a non-linear outer map.

Tolerance for the identities: every factor is a ratio of means of ≤ 1e3 float64 numbers; each mean, sqrt and
division adds a few ulps (2.2e-16), so |LHS/RHS − 1| ≲ 20 ulps ≈ 5e-15. The issue asks for ≤ 1e-12.
"""
from __future__ import annotations

import math

import pytest
import torch

from theory.papers.wang2024 import cocorrelation as cc
from theory.sim import activations, models
from theory.sim import jacobian as jac

EXACT = 1e-12
RELU = activations.get("relu", grad_at_zero=1.0)  # paper's σ'(z) = 1{z ≥ 0}


def _randn(*shape, generator=None, dtype=torch.float64):
    return torch.randn(*shape, generator=generator, dtype=dtype)


def _unit(X):
    return X / X.norm(dim=-1, keepdim=True)


def _cases(gen, N=400, d=20):
    """Norms (A, B, C) for the three models of the check: linear, ReLU MLP, 3-module composition."""
    X = _unit(_randn(N, d, generator=gen))
    lin = models.TwoLayerNet.init(1, 64, d, q=0.25, act="linear", generator=gen)
    mlp = models.TwoLayerNet.init(1, 64, d, q=0.25, act=RELU, generator=gen)
    W1 = _randn(30, d, generator=gen) / math.sqrt(d)
    W2 = _randn(25, 30, generator=gen) / math.sqrt(30)
    W3 = _randn(5, 25, generator=gen) / math.sqrt(25)
    inner, outer, _ = cc.three_module(W1, W2, W3, RELU)
    return {"linear (m=64, q=0.25)": [t[0] for t in cc.linear_norms(lin.W, lin.a, N)],
            "ReLU MLP (m=64, q=0.25)": [t[0] for t in cc.mlp_norms(mlp.W, mlp.a, X, RELU)],
            "3-module ReLU, non-linear outer (20-30-25-5)": list(cc.composition_norms(inner, outer, X))}


@pytest.mark.claim("wang2024/thm-4.5")
def test_decomposition_identity(record):
    """Eq. 15 holds to ≤1e-12 with population moments; Algorithm 1's statistics shown beside it."""
    gen = record.generator({"N": 400})
    rows, worst = [], 0.0
    for name, (A, B, C) in _cases(gen).items():
        p = cc.population(A, B, C)
        p1 = cc.population(A, B, C, ddof=1)
        al = cc.decomposition_with_alg1(A, B, C)
        v = float(p["var"] / p["mu"] ** 2)
        N = A.numel()
        err = abs(float(p["rel_err"]))
        worst = max(worst, err)
        rows.append({"model": name, "|LHS/RHS-1| population": err, "N-1 variance error": float(p1["rel_err"]),
                     "predicted N-1 error -v/(2(N-1)(1+v))": -v / (2 * (N - 1) * (1 + v)),
                     "Alg-1 plug-in error": float(al["rel_err"]), "varrho (Def 4.2)": float(p["varrho"]),
                     "varrho_hat (Alg 1)": float(al["varrho_alg1"]), "(1+var/mu^2)^1/2": float(p["rel_factor"]),
                     "rho": float(p["rho"]), "rho*(1+v)^1/2 - 1": float(p["rho"] * p["rel_factor"] - 1)})
    nonlin = rows[2]
    # non-triviality: the identity is checked to EXACT, so the non-linear case's factor ρ(1+v)^½ must differ from 1
    # by ≫ EXACT (here ≥ 10³·EXACT) for the check to tell Eq. 15 from "both sides ≈ 1"; the size depends on the
    # draw (−9.0e-5 at --seed 5, 4.4e-4..5.7e-3 in size at --seed 0..4), a fixed 1e-4 floor was tuned to the
    # development seeds; the linear cases give ≤ 4.4e-16, so 1e-9 separates them by > 10⁵ either way
    assert abs(nonlin["rho*(1+v)^1/2 - 1"]) > 1e3 * EXACT, "outer map must be non-linear so the identity is not 1·1"
    # (F3): outer map linear => rho·(1+v)^{1/2} = 1 exactly (paper's own models)
    assert abs(rows[1]["rho*(1+v)^1/2 - 1"]) < EXACT
    assert worst <= EXACT, rows
    record("holds", observed=worst, bound=EXACT, table=rows, tightness="|LHS/RHS − 1| (population moments)",
           config={"N": 400, "d": 20, "dtype": "float64"},
           note="Exact with population moments for all three models. With Algorithm 1's N−1 variance the identity is "
                "off by ≈ −v/(2(N−1)(1+v)); with its ratio-of-means ϱ̂ by the mean/RMS mismatch (table). For the "
                "paper's models φ = aᵀ· is linear, so ρ(1+var/μ²)^{1/2} ≡ 1: only the 3-module case is non-trivial.")


@pytest.mark.claim("wang2024/thm-4.5")
def test_decomposition_rejects_wrong_versions(record):
    """The 1e-12 test rejects N−1 variance, Alg-1's ϱ̂, and a dropped ρ factor (on the non-trivial composition)."""
    gen = record.generator({"N": 400})
    A, B, C = _cases(gen)["3-module ReLU, non-linear outer (20-30-25-5)"]
    p = cc.population(A, B, C)
    wrong = {"N-1 variance": float(cc.population(A, B, C, ddof=1)["rel_err"]),
             "Alg-1 plug-in": float(cc.decomposition_with_alg1(A, B, C)["rel_err"]),
             "rho dropped": float(p["S_f"] / (p["rhs"] / p["rho"]) - 1)}
    assert all(abs(e) > 1e3 * EXACT for e in wrong.values()), wrong
    record("holds", observed=min(abs(e) for e in wrong.values()), bound=EXACT,
               table=[{"variant": k, "|LHS/RHS-1|": abs(v)} for k, v in wrong.items()],
               note="companion: every wrong variant exceeds the 1e-12 tolerance by > 1e3× (ratio = rejection margin)")


@pytest.mark.claim("wang2024/thm-4.5")
def test_decomposition_float32_scale(record):
    """Float32 evaluation of the same identity: error ~1e-6 (sets production tolerances; not a claim test)."""
    gen = record.generator({"N": 400})
    A, B, C = (t.float() for t in _cases(gen)["3-module ReLU, non-linear outer (20-30-25-5)"])
    err = abs(float(cc.population(A, B, C)["rel_err"]))
    assert err < 1e-5  # ~ 20 float32 ulps (1.2e-7)
    record("holds", observed=err, bound=1e-5, config={"dtype": "float32"}, tightness="|LHS/RHS − 1| in float32")


@pytest.mark.claim("wang2024/alg-1")
def test_algorithm1_vs_definitions(record):
    """Algorithm 1's ϱ̂ (ratio of means) and σ̂ (N−1) differ from Def. 4.2/4.3; ϱ̂ ∈ [0,1]; mismatch quantified."""
    gen = record.generator({"N": 500})
    d, N = 30, 500
    X = _unit(_randn(N, d, generator=gen))
    net = models.TwoLayerNet.init(1, 64, d, q=0.25, act=RELU, generator=gen)
    A, B, C = (t[0] for t in cc.mlp_norms(net.W, net.a, X, RELU))
    p, al = cc.population(A, B, C), cc.algorithm1(A, B, C)
    mism = float(al["varrho"] / p["varrho"] - 1)
    pred = float((C.mean() / C.pow(2).mean().sqrt()) / ((A * B).mean() / (A * B).pow(2).mean().sqrt()) - 1)
    assert 0 <= float(al["varrho"]) <= 1 and 0 <= float(al["rho"]) <= 1
    assert abs(mism - pred) < EXACT  # the mismatch is exactly the mean/RMS formula
    assert abs(float(al["sigma"] ** 2 / p["var"]) - N / (N - 1)) < EXACT  # σ̂² = N/(N−1)·var
    assert abs(mism) > 1e3 * EXACT  # Alg 1 is not Def 4.2 on this model (the mismatch formula is checked to EXACT)
    record("holds", observed=float(al["varrho"]), bound=float(p["varrho"]), tightness="ϱ̂_Alg1 vs ϱ_Def",
           config={"m": 64, "d": d, "N": N, "q": 0.25},
           table=[{"varrho_def": float(p["varrho"]), "varrho_alg1": float(al["varrho"]), "relative mismatch": mism,
                   "sigma_hat^2/var": float(al["sigma"] ** 2 / p["var"])}],
           note=f"Algorithm 1's ϱ̂ = mean C/mean AB differs from Def. 4.2 by {mism:+.3%} (exactly the mean/RMS ratio "
                "mismatch); σ̂ uses N−1. Its header also promises per-module μ, σ that the body never computes.")


@pytest.mark.claim("wang2024/def-4.2")
def test_cocorrelation_range_and_extremes(record):
    """0 ≤ ϱ ≤ 1 (pointwise C ≤ AB), ϱ = 1 for W = abᵀ, ϱ = 0 for Wᵀa = 0, ϱ(0) ≈ √d/(√m+√d) (F2)."""
    gen = record.generator({"d": 50})
    d, N = 50, 300
    X = _unit(_randn(N, d, generator=gen))
    rows = []
    for m in (64, 512, 2048):
        net = models.TwoLayerNet.init(8, m, d, q=0.25, act="linear", generator=gen)
        vr = cc.linear_varrho(net.W, net.a)
        rows.append({"m": m, "varrho(0) mean of 8": float(vr.mean()), "sqrt d/(sqrt m+sqrt d)": math.sqrt(d) / (math.sqrt(m) + math.sqrt(d))})
        assert abs(rows[-1]["varrho(0) mean of 8"] / rows[-1]["sqrt d/(sqrt m+sqrt d)"] - 1) < 0.25
    mlp = models.TwoLayerNet.init(4, 64, d, q=0.0, act=RELU, generator=gen)
    A, B, C = cc.mlp_norms(mlp.W, mlp.a, X, RELU)
    excess = float((C - A * B).max())
    assert excess <= EXACT  # sub-multiplicativity, pointwise
    a = mlp.a[:1]
    b = _randn(1, d, generator=gen, dtype=a.dtype)
    W_rank1 = a.unsqueeze(-1) * b.unsqueeze(1)
    Wp = _randn(1, 64, d, generator=gen)
    W_perp = Wp - a.unsqueeze(-1) * (a.unsqueeze(-1) * Wp).sum(-2, keepdim=True) / a.pow(2).sum()
    one, zero = float(cc.linear_varrho(W_rank1, a)), float(cc.linear_varrho(W_perp, a))
    assert abs(one - 1) < EXACT and abs(zero) < EXACT
    rho_all = cc.population(A, B, C)["varrho"]
    assert bool(((rho_all >= 0) & (rho_all <= 1)).all())
    record("holds", observed=excess, bound=0.0, tightness="max_x C(x) − A(x)B(x) (must be ≤ 0)",
           table=rows + [{"W = a bᵀ": one, "Wᵀa = 0": zero}],
           note="Range 0 ≤ ϱ ≤ 1 from pointwise sub-multiplicativity; equality cases constructed; random-init "
                "level matches √d/(√m+√d) (F2) within 25 %.")


@pytest.mark.claim("wang2024/def-4.2")
def test_cocorrelation_rejects_frobenius(record):
    """Companion: with a Frobenius norm for B (a wrong Def. 3.2) the linear formula ϱ = ‖Wᵀa‖/‖W‖₂ is violated."""
    gen = record.generator({"d": 20})
    net = models.TwoLayerNet.init(1, 64, 20, q=0.25, act="linear", generator=gen)
    good = float(cc.linear_varrho(net.W, net.a))
    fro = float((net.a.unsqueeze(-1) * net.W).sum(-2).norm() / torch.linalg.matrix_norm(net.W, ord="fro"))
    assert abs(fro / good - 1) > 1e-3
    record("holds", observed=fro, bound=good, note="Frobenius-norm variant rejected (ratio ≠ 1)")


@pytest.mark.claim("wang2024/def-4.3")
def test_uncentred_correlation_range(record):
    """0 ≤ ρ ≤ 1; linear outer map: ρ = E B/(E B²)^{1/2} = (1+Var B/(E B)²)^{−1/2} exactly."""
    gen = record.generator({"N": 400})
    cases = _cases(gen)
    rows = []
    for name, (A, B, C) in cases.items():
        p = cc.population(A, B, C)
        rows.append({"model": name, "rho": float(p["rho"]), "mu": float(p["mu"]), "var": float(p["var"])})
        assert 0 <= float(p["rho"]) <= 1 + EXACT
    A, B, C = cases["ReLU MLP (m=64, q=0.25)"]
    rho = float(cc.population(A, B, C)["rho"])
    closed = float(B.mean() / B.pow(2).mean().sqrt())
    closed2 = float((1 + B.var(unbiased=False) / B.mean() ** 2) ** -0.5)
    assert abs(rho - closed) < EXACT and abs(rho - closed2) < EXACT
    record("holds", observed=abs(rho - closed2), bound=EXACT, table=rows,
           tightness="|ρ − (1+VarB/(EB)²)^{−1/2}| for the MLP (linear outer map)")


@pytest.mark.claim("wang2024/def-4.3")
def test_uncentred_correlation_rejects_centred(record):
    """Companion: a centred (Pearson) ρ breaks the closed form; the check would reject it."""
    gen = record.generator({"N": 400})
    A, B, C = _cases(gen)["3-module ReLU, non-linear outer (20-30-25-5)"]
    pear = float(torch.corrcoef(torch.stack([A, B]))[0, 1])
    rho = float(cc.population(A, B, C)["rho"])
    assert abs(pear - rho) > 1e-2
    record("holds", observed=pear, bound=rho, note="Pearson correlation of A, B differs from the uncentred ρ")


@pytest.mark.claim("wang2024/rem-4.4")
def test_rho_equals_one_iff_proportional(record):
    """ρ = 1 when B = tA (constructed: linear∘linear, and A, B proportional); ρ < 1 otherwise. Pearson remark vacuous."""
    gen = record.generator({"N": 300})
    cases = _cases(gen)
    A, B, C = cases["linear (m=64, q=0.25)"]
    r_lin = float(cc.population(A, B, C)["rho"])
    A2 = 0.5 + torch.rand(300, generator=gen, dtype=torch.float64)
    r_prop = float(cc.population(A2, 3.7 * A2, 0.5 * A2 * A2)["rho"])
    Am, Bm, Cm = cases["ReLU MLP (m=64, q=0.25)"]
    r_mlp = float(cc.population(Am, Bm, Cm)["rho"])
    assert abs(r_lin - 1) < EXACT and abs(r_prop - 1) < EXACT
    assert r_mlp < 1 - 1e-8 and float(Bm.std()) > 0
    record("holds", observed=max(abs(r_lin - 1), abs(r_prop - 1)), bound=EXACT,
           table=[{"case": "linear∘linear", "rho": r_lin}, {"case": "B = 3.7·A", "rho": r_prop},
                  {"case": "ReLU MLP (B not constant)", "rho": r_mlp}],
           note="The 'reduces to Pearson when both means are zero' sentence is vacuous: A, B ≥ 0 have zero mean only "
                "if they vanish a.s.; ρ is an uncentred (cosine) correlation.")


@pytest.mark.claim("wang2024/eq-11")
def test_linear_cocorrelation_formula_and_alignment(record):
    """ϱ(W₂W₁) = ‖W₂W₁‖/(‖W₂‖‖W₁‖) on any sample; =1 when aligned; decreasing in the misalignment angle."""
    gen = record.generator({"d": 12})
    d, h, o, N = 12, 10, 6, 200
    W1 = _randn(h, d, generator=gen)
    W2 = _randn(o, h, generator=gen)
    X = _randn(N, d, generator=gen)
    A, B, C = cc.composition_norms(lambda x: W1 @ x, lambda z: W2 @ z, X)
    formula = torch.linalg.matrix_norm(W2 @ W1, ord=2) / (torch.linalg.matrix_norm(W2, ord=2) * torch.linalg.matrix_norm(W1, ord=2))
    err = abs(float(cc.population(A, B, C)["varrho"] / formula - 1))
    U1, S1, V1 = torch.linalg.svd(W1, full_matrices=False)
    U2, S2, V2h = torch.linalg.svd(W2, full_matrices=True)
    thetas = [0.0, 0.2, 0.5, 0.9, 1.3]
    vals = []
    perp = U1[:, 1]
    for th in thetas:
        top = math.cos(th) * U1[:, 0] + math.sin(th) * perp
        Q, _ = torch.linalg.qr(torch.cat([top[:, None], _randn(h, h - 1, generator=gen)], 1))
        Q[:, 0] = top
        W2a = U2[:, :len(S2)] @ torch.diag(torch.tensor([3.0, 1.0, 0.8, 0.5, 0.3, 0.1], dtype=top.dtype)) @ Q[:, :len(S2)].T
        vals.append(float(torch.linalg.matrix_norm(W2a @ W1, ord=2) / (torch.linalg.matrix_norm(W2a, ord=2) * S1[0])))
    assert err < EXACT and abs(vals[0] - 1) < EXACT
    assert all(x > y for x, y in zip(vals, vals[1:])), vals
    record("holds", observed=err, bound=EXACT, tightness="|ϱ_Def / formula − 1|",
           series={"varrho vs misalignment": {"x": thetas, "y": vals, "xlabel": "angle θ (rad)", "ylabel": "ϱ"}},
           table=[{"theta": t, "varrho": v} for t, v in zip(thetas, vals)])


@pytest.mark.claim("wang2024/def-3.2")
def test_dirichlet_energy_three_evaluations(record):
    """𝔖 by dense SVD (opnorm exact), by the closed forms, and by power iteration (Alg. 2) agree."""
    gen = record.generator({"m": 30})
    d, N = 20, 15
    X = _unit(_randn(N, d, generator=gen))
    net = models.TwoLayerNet.init(1, 30, d, q=0.0, act=RELU, generator=gen)
    W, a = net.W[0], net.a[0]
    hidden = lambda x: RELU(W @ x)
    full = lambda x: (a * RELU(W @ x)).sum()
    B_svd = jac.opnorm(hidden, X, method="exact")
    B_cf = jac.two_layer_hidden_opnorm_exact(W, X, RELU)
    B_gram = cc.mlp_hidden_opnorm_gram(net.W, X, RELU)[0]
    C_svd = jac.opnorm(full, X, method="exact")
    C_cf = jac.two_layer_output_grad_norm(W, a, X, RELU)
    B_pw = jac.opnorm(hidden, X, method="power", tol=1e-12, generator=gen)
    e_cf = max(float((B_svd / B_cf - 1).abs().max()), float((C_svd / C_cf - 1).abs().max()),
               float((B_gram / B_cf - 1).abs().max()))
    e_pw = float((B_pw / B_cf - 1).abs().max())
    S = lambda t: float(t.pow(2).mean().sqrt())
    assert e_cf < 1e-10 and e_pw < 1e-8
    fro = S(torch.linalg.matrix_norm(RELU.slope(X @ W.T)[:, :, None] * W[None], ord="fro"))
    assert abs(fro / S(B_cf) - 1) > 1e-2  # operator norm ≠ Frobenius: a mixed-up norm would be caught
    record("holds", observed=e_cf, bound=1e-10, tightness="max relative gap SVD vs closed form",
           table=[{"S(hidden) SVD": S(B_svd), "closed form": S(B_cf), "power (tol 1e-13)": S(B_pw), "Frobenius (wrong)": fro,
                   "S(f) SVD": S(C_svd), "S(f) closed form": S(C_cf)}])
