"""zhu2022/eq-balance: layer balance (Du, Hu & Lee 2018, Cor. 2.1, used in Appendix C).

Euler's identity per layer makes ⟨W_l, ∇_{W_l}𝓛⟩ equal for all l (bias-free ReLU net, output scale 1/α).
Under GD, ‖W_l‖_F² changes by −2η⟨W_l,G_l⟩ + η²‖G_l‖², so per step, exactly,
Δ(‖W_{l+1}‖² − ‖W_l‖²) = η²(‖G_{l+1}‖² − ‖G_l‖²): O(η²) per step, O(η) over a fixed time T = ηK.
"""
from __future__ import annotations

import pytest
import torch

from theory.papers.zhu2022 import nonlazy
from theory.papers.zhu2022 import schemes
from theory.sim import losses
from theory.sim.models import DeepMLP
from theory.sim.train import gd
from theory.stats import fit_power
from theory.device import draw

L, D, M, N, T = 4, 10, 32, 50, 2.0
ETAS = [0.04, 0.02, 0.01, 0.005, 0.0025]


def _run(ctx, gen, act="relu", alpha=1.0):
    """All η on the ensemble axis (same init), stepped to K = T/η_min; norms and gradients at every step."""
    X = draw(torch.randn, N, D, generator=gen, dtype=ctx.dtype, device=ctx.device)
    X = X / X.norm(dim=1, keepdim=True)
    y = draw(torch.randn, N, generator=gen, dtype=ctx.dtype, device=ctx.device)
    one = DeepMLP.init(1, [D, M, M, M, 1], stds=schemes.stds("he", D, M, L), act=act, alpha=alpha,
                       generator=gen, device=ctx.device)
    E = len(ETAS)
    net = DeepMLP([w.repeat(E, 1, 1) for w in one.weights], one.act, alpha)
    steps = int(round(T / min(ETAS)))

    def obs(t, ps, u):
        gs = torch.autograd.grad(losses.loss("squared", net.forward(X, ps), y).sum(), ps)
        return {"nW": nonlazy.sq_norms(ps), "nG": nonlazy.sq_norms(gs), "ip": nonlazy.inner_products(ps, gs)}

    tr = gd(net, X, y, loss="squared", lr=torch.tensor(ETAS, dtype=ctx.dtype, device=ctx.device), steps=steps,
            record=range(steps + 1), observe=obs)
    return tr, steps


@pytest.mark.claim("zhu2022/eq-balance")
def test_balance_identity_and_drift_rates(ctx, record):
    gen = record.generator({"t": "balance"})
    tr, steps = _run(ctx, gen)
    nW, nG, ip = tr.stacked("nW"), tr.stacked("nG"), tr.stacked("ip")  # (K+1, L, E)
    eta = torch.tensor(ETAS, dtype=ctx.dtype, device=ctx.device)
    scale = float(nW.abs().max())
    # (i) ⟨W_l, G_l⟩ equal across layers (relative spread)
    spread = float(((ip.amax(1) - ip.amin(1)).abs() / ip.abs().amax(1).clamp_min(1e-300)).max())
    # (ii) exact per-step identity for consecutive layer pairs
    diffW = nW[:, 1:] - nW[:, :-1]  # (K+1, L-1, E)
    lhs = diffW[1:] - diffW[:-1]
    rhs = eta ** 2 * (nG[:-1, 1:] - nG[:-1, :-1])
    resid = float((lhs - rhs).abs().max())
    # rounding: each ‖W‖² is a sum of ≤ 1024 products (relative error ≤ 1024·u ≈ 2.3e-13 worst case);
    # the residual combines four of them, hence 1e-12·scale
    tol = 1e-12 * scale
    # mutations: drift η (not η²), flipped sign
    resid_eta = float((lhs - eta * (nG[:-1, 1:] - nG[:-1, :-1])).abs().max())
    resid_sign = float((lhs + rhs).abs().max())
    # (iii) per-step drift ∝ η², (iv) accumulated drift at fixed T ∝ η
    per_step, accum = [], []
    for e, h in enumerate(ETAS):
        K = int(round(T / h))
        per_step.append(float(lhs[:K, :, e].abs().max()))
        accum.append(float((diffW[K, :, e] - diffW[0, :, e]).abs().max()))
    f2, f1 = fit_power(ETAS, per_step), fit_power(ETAS, accum)
    ok = spread < 1e-10 and resid <= tol and 1.85 <= f2.exponent <= 2.15 and 0.85 <= f1.exponent <= 1.15
    record("holds" if ok else "violated", observed=resid, bound=tol, config={"L": L, "d": D, "m": M, "n": N, "T": T, "etas": ETAS},
           evidence="consistency", covers=["layer identity", "GD per-step drift"],
           inside=True, inside_reason="bias-free ReLU network (positively 1-homogeneous), squared loss of the outputs: the "
                                      "identity's only hypotheses, true by construction",
           hypotheses={"inner-product spread": spread, "slope per step": f2.exponent, "slope accumulated": f1.exponent,
                       "CI per step": f2.ci, "CI accumulated": f1.ci},
           table=[{"eta": h, "max per-step drift": a, "accumulated drift at T": b} for h, a, b in zip(ETAS, per_step, accum)],
           series={"per-step drift": {"x": ETAS, "y": per_step, "xlabel": "eta", "ylabel": "drift", "logx": True, "logy": True},
                   "accumulated drift (T fixed)": {"x": ETAS, "y": accum, "xlabel": "eta", "ylabel": "drift",
                                                   "logx": True, "logy": True, "plot": "per-step drift"}},
           tightness=f"per-step slope {f2.exponent:.3f}, accumulated slope {f1.exponent:.3f}")
    rejected = resid_eta > 1e3 * tol and resid_sign > 1e3 * tol
    record("holds" if rejected else "violated", role="companion", observed=min(resid_eta, resid_sign), bound=1e3 * tol,
           note=f"wrong versions: drift η(‖G_l+1‖²−‖G_l‖²) residual {resid_eta:.3g}, flipped sign residual {resid_sign:.3g} "
                f"(> 1e3·tol: rejected)")
    # ⟨W_l,G_l⟩ ~ O(1): each is a sum of ≤1024 products, rounding ≪ 1e-10 relative
    assert ok, (spread, resid, tol, f2.exponent, f1.exponent)
    assert rejected


@pytest.mark.claim("zhu2022/eq-balance")
@pytest.mark.parametrize("act", ["softplus", "tanh"])
def test_balance_needs_homogeneity(ctx, record, act):
    """Negative control: a non-homogeneous activation breaks Euler's identity (⟨W_l, G_l⟩ unequal across l),
    so the same check rejects the balance claim there."""
    gen = record.generator({"act": act})
    X = draw(torch.randn, N, D, generator=gen, dtype=ctx.dtype, device=ctx.device)
    y = draw(torch.randn, N, generator=gen, dtype=ctx.dtype, device=ctx.device)
    net = DeepMLP.init(1, [D, M, M, M, 1], stds="he", act=act, generator=gen, device=ctx.device)
    ps = [p.requires_grad_(True) for p in net.params]
    gs = torch.autograd.grad(losses.loss("squared", net.forward(X, ps), y).sum(), ps)
    ip = nonlazy.inner_products(ps, gs)[:, 0].detach()
    spread = float((ip.max() - ip.min()).abs() / ip.abs().max())
    rejected = spread > 1e-3
    record("holds" if rejected else "violated", role="companion", observed=spread, bound=1e-3, ratio=None, config={"act": act},
           note=(f"wrong version 'balance holds for the non-homogeneous {act}': relative spread of ⟨W_l, G_l⟩ across layers "
                 f"{spread:.3g} (> 1e-3: rejected; the identity needs positive 1-homogeneity)"))
    assert rejected


@pytest.mark.claim("zhu2022/eq-balance")
def test_per_neuron_balance(ctx, record):
    """Finer form: for each hidden unit j of layer l, ‖row_j(W_l)‖² − ‖col_j(W_{l+1})‖² changes under one GD step by
    exactly η²(‖row_j(G_l)‖² − ‖col_j(G_{l+1})‖²) (per-unit Euler identity ⟨row_j W_l, row_j G_l⟩ = ⟨col_j W_{l+1},
    col_j G_{l+1}⟩). Mutation: pairing unit j's row with unit j+1's column breaks it."""
    gen = record.generator({"t": "per-neuron"})
    X = draw(torch.randn, N, D, generator=gen, dtype=ctx.dtype, device=ctx.device)
    y = draw(torch.randn, N, generator=gen, dtype=ctx.dtype, device=ctx.device)
    net = DeepMLP.init(2, [D, M, M, M, 1], stds="he", generator=gen, device=ctx.device)
    eta = 0.03
    ps = [p.clone().requires_grad_(True) for p in net.params]
    gs = [g.detach() for g in torch.autograd.grad(losses.loss("squared", net.forward(X, ps), y).sum(), ps)]
    ps = [p.detach() for p in ps]
    new = [p - eta * g for p, g in zip(ps, gs)]
    worst, worst_mut, scale = 0.0, 0.0, 0.0
    for l in range(L - 1):
        def unit(Ws):
            return (Ws[l] ** 2).sum(-1) - (Ws[l + 1] ** 2).sum(-2)  # (E, m): row of W_l minus column of W_{l+1}
        lhs = unit(new) - unit(ps)
        rhs = eta ** 2 * ((gs[l] ** 2).sum(-1) - (gs[l + 1] ** 2).sum(-2))
        worst = max(worst, float((lhs - rhs).abs().max()))
        rolled = (ps[l] * gs[l]).sum(-1) - (ps[l + 1] * gs[l + 1]).sum(-2).roll(1, -1)
        worst_mut = max(worst_mut, float(rolled.abs().max()))
        scale = max(scale, float((ps[l] ** 2).sum(-1).max()), float((ps[l + 1] ** 2).sum(-2).max()))
    tol = 1e-13 * scale  # each unit norm is a sum of ≤ 32 products: rounding ≪ 1e-13 relative
    ok = worst <= tol
    record("holds" if ok else "violated", observed=worst, bound=tol, config={"L": L, "m": M, "eta": eta},
           evidence="consistency", covers=["per-neuron"],
           inside=True, inside_reason="bias-free ReLU network, squared loss: the identity's only hypotheses, by construction",
           tightness="max per-unit residual of the one-step identity")
    record("holds" if worst_mut > 1e3 * tol else "violated", role="companion", observed=worst_mut, bound=1e3 * tol,
           note=f"wrong version (unit j's row paired with unit j+1's column): inner-product mismatch {worst_mut:.3g}")
    assert ok, worst
    assert worst_mut > 1e3 * tol
