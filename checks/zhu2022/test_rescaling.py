"""zhu2022/lem-3: dynamic equivalence under weight rescaling, along discrete GD trajectories.

W̃_l = W_l/c, f̃ = c^L W̃_L φ(⋯) ≡ f; ∂f̃/∂W̃_l = c ∂f/∂W_l, so GD with η̃ = η/c² gives W̃(k) = W(k)/c
at every step. Layer-wise: W̃_l = W_l/c_l with forward multipliers c_l (NTK-type), rates η/c_l²; with c_l the He stds this is the NTK
parameterisation trained to reproduce He's trajectory.
"""
from __future__ import annotations

import pytest
import torch

from theory.errors import DivergenceError
from theory.papers.zhu2022 import schemes
from theory.sim.models import DeepMLP
from theory.sim.train import gd
from theory.device import draw

L, D, M, O, N, STEPS, ETA = 4, 8, 16, 2, 20, 200, 0.05
# Identity tolerance: c = 0.5 is a power of two (exact); for c = 3 every step adds a few ulp per entry
# and GD over 200 steps amplifies them by at most the (bounded) Jacobian of the GD map: 1e-10 is far
# above that and far below the 1e-3-level errors of any wrong scaling (catalog: "above 1e-10 is a bug").
TOL = 1e-10


def _data(gen, ctx):
    X = draw(torch.randn, N, D, generator=gen, dtype=ctx.dtype, device=ctx.device)
    return X / X.norm(dim=1, keepdim=True), draw(torch.randn, N, O, generator=gen, dtype=ctx.dtype, device=ctx.device)


def _run(model, X, y, lr, layer_lr=None):
    keep = lambda t, ps, u: {f"W{l}": p.detach().clone() for l, p in enumerate(ps)} | {"f": u}
    return gd(model, X, y, loss="squared", lr=lr, steps=STEPS, record=range(STEPS + 1), observe=keep, layer_lr=layer_lr)


def _max_rel_err(tr_ref, tr, scales):
    err = 0.0
    for l, c in enumerate(scales):
        a, b = tr_ref.stacked(f"W{l}"), tr.stacked(f"W{l}") * c
        err = max(err, float(((a - b).abs().amax() / a.abs().amax())))
    fa, fb = tr_ref.stacked("f"), tr.stacked("f")
    return max(err, float((fa - fb).abs().amax() / fa.abs().amax()))


@pytest.mark.claim("zhu2022/lem-3")
@pytest.mark.parametrize("c", [0.5, 3.0])
def test_common_rescaling_equivalence(ctx, record, c):
    """W̃ = W/c with output multiplier c^L: GD at rate η/c² reproduces the reference trajectory (W̃(k)·c = W(k), same
    outputs) to TOL; companion: the wrong rates η, η/c, ηc² must leave it by > 1e-3."""
    gen = record.generator({"c": c})
    X, y = _data(gen, ctx)
    base = DeepMLP.init(3, [D, M, M, M, O], stds="he", generator=gen, device=ctx.device)
    w0 = [w.clone() for w in base.weights]
    ref = _run(base, X, y, ETA)
    rows, errs = [], {}
    for name, lr in {"eta/c^2": ETA / c ** 2, "eta": ETA, "eta/c": ETA / c, "eta*c^2": ETA * c ** 2}.items():
        tilde = DeepMLP([w / c for w in w0], base.act, alpha=c ** L)
        try:
            errs[name] = _max_rel_err(ref, _run(tilde, X, y, lr), [c] * L)
        except DivergenceError:  # a wrong rate may even diverge: then it certainly differs
            errs[name] = float("inf")
        rows.append({"rate": name, "max rel err over steps": errs[name]})
    ok = errs["eta/c^2"] <= TOL
    record("holds" if ok else "violated", observed=errs["eta/c^2"], bound=TOL, evidence="consistency", covers=["common scale"],
           inside=True, inside_reason=f"c = {c} > 0, ReLU (positively 1-homogeneous), no biases: Lemma 3's hypotheses",
           config={"c": c, "L": L, "d": D, "m": M, "o": O, "n": N, "steps": STEPS, "eta": ETA}, table=rows, series={"errors": {
               "x": list(range(len(rows))), "y": [min(max(r["max rel err over steps"], 1e-18), 1e3) for r in rows],
               "xlabel": "rate " + ", ".join(r["rate"] for r in rows), "ylabel": "max rel error", "logy": True}},
           tightness="max relative deviation from the reference trajectory over all steps (weights and outputs)")
    wrong = min(errs[k] for k in ("eta", "eta/c", "eta*c^2"))
    rejected = wrong > 1e-3
    record("holds" if rejected else "violated", role="companion", observed=wrong, bound=1e-3,
           note="wrong rates η, η/c, ηc²: smallest max rel. deviation " + f"{wrong:.3g} (> 1e-3: rejected)")
    assert ok, errs
    assert rejected, errs


@pytest.mark.claim("zhu2022/lem-3")
@pytest.mark.parametrize("case", ["free c_l", "NTK vs He"])
def test_layerwise_rescaling_ntk_vs_he(ctx, record, case):
    """Layer-wise: W̃_l = W_l/c_l with forward multipliers c_l, GD at per-layer rates η/c_l² reproduces the
    standard-parameterised trajectory exactly (W̃_l(k)·c_l = W_l(k)). Cases: arbitrary c_l = (0.7, 2.5, 0.3, 1.9)
    on a He-initialised net; and the NTK parameterisation itself (theory.papers.zhu2022.schemes 'ntk': N(0, 1) weights,
    multipliers = the He stds) trained against the He net of the same Gaussian draw (NTK ≡ He at init).
    Companion: the common rate η (standard NTK training) and the rates η/c_l must leave the trajectory."""
    gen = record.generator({"t": "layerwise", "case": case})
    X, y = _data(gen, ctx)
    if case == "free c_l":
        cs = [0.7, 2.5, 0.3, 1.9]
        base = DeepMLP.init(3, [D, M, M, M, O], stds="he", generator=gen, device=ctx.device)
        tilde0 = [w / c for w, c in zip(base.weights, cs)]
    else:
        cs = schemes.stds("he", D, M, L)
        base = schemes.build(3, D, M, L, O, "he", generator=record.generator({"t": "ntk-he draw"}), device=ctx.device)
        ntk = schemes.build(3, D, M, L, O, "ntk", generator=record.generator({"t": "ntk-he draw"}), device=ctx.device)
        assert list(ntk.multipliers) == cs, "NTK multipliers must be the He stds"
        tilde0 = [w.clone() for w in ntk.weights]
    w0 = [w.clone() for w in base.weights]
    ref = _run(base, X, y, ETA)
    rows, errs = [], {}
    for name, mult in {"eta/c_l^2": [1 / c ** 2 for c in cs], "eta (common)": None,
                       "eta/c_l": [1 / c for c in cs]}.items():
        tilde = DeepMLP([w.clone() for w in tilde0], base.act, alpha=1.0, multipliers=list(cs))
        errs[name] = _max_rel_err(ref, _run(tilde, X, y, ETA, layer_lr=mult), cs)
        rows.append({"rates": name, "max rel err": errs[name]})
    ok = errs["eta/c_l^2"] <= TOL
    record("holds" if ok else "violated", observed=errs["eta/c_l^2"], bound=TOL, config={"case": case, "c_l": cs, "L": L, "steps": STEPS},
           evidence="consistency", covers=["layer-wise scales"],
           inside=True, inside_reason="every c_l > 0, ReLU, no biases: the layer-wise version's hypotheses",
           table=rows, hypotheses={"init weights: NTK·c_l vs He (max abs)": float(max((a * c - b).abs().max() for a, b, c in zip(tilde0, w0, cs)))},
           tightness="max relative deviation from the standard-parameterised trajectory over all steps")
    wrong = min(errs["eta (common)"], errs["eta/c_l"])
    rejected = wrong > 1e-3
    record("holds" if rejected else "violated", role="companion", observed=wrong, bound=1e-3,
           note=f"wrong rates (common η; η/c_l): smallest max rel. deviation {wrong:.3g} (> 1e-3: rejected)")
    assert ok, errs
    assert rejected, errs
