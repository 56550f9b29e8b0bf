"""zhu2022/fig-E: Appendix E experiments, reproduced where offline data and CPU scale allow.

- E.6 (Fig. 10): NTK and He initialisation give similar stability curves (except L = 2) — from the lazy sweep.
- E.1 (Table 4) analogue: lazy and non-lazy training reach similar clean accuracy — a fully connected stand-in on
  scikit-learn's 8×8 digits (ResNet-110/CIFAR cannot be run here).
- E.2 (Fig. 6), E.3 (Fig. 7, CNNs), E.4 (Fig. 8, ResNet-18/34): not checkable here (recorded with the reason);
  E.5 (Fig. 9) is the non-lazy width trend checked under zhu2022/thm-3.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fixtures import real
from fixtures import zhu2022 as fz
from theory.papers.zhu2022 import lazy
from theory.papers.zhu2022 import schemes
from theory.records import verdict_for
from theory.sim.models import DeepMLP
from theory.sim.train import gd


@pytest.mark.claim("zhu2022/fig-E")
def test_e6_ntk_vs_he_similar(ctx, record):
    """Fig. 10: trained P(f,ε)/ε under NTK vs He parameterisation: mean |log(P_NTK/P_He)| per depth.
    Asserted: similar (mean relative gap < 15%) for L ≥ 3; the L = 2 gap is reported next to it."""
    cells = [(m, L) for L in ctx.pick(quick=(2, 3, 5), full=(2, 6, 10)) for m in ctx.pick(quick=(16, 64, 256), full=(16, 64, 256, 1024, 4096))]
    cfg = ctx.pick(quick={}, full={"seeds": 5, "n": 100, "n_test": 1000, "steps": 3000})
    rows = fz.lazy_sweep(cells, ctx.device, ctx.dtype, ctx.seed, cfg)
    P = fz.mean_by(rows, ("scheme", "L", "m"), "PT")
    gaps, table = {}, []
    for L in sorted({c[1] for c in cells}):
        g = [abs(math.log(P[("ntk", L, m)] / P[("he", L, m)])) for m in sorted({c[0] for c in cells})]
        gaps[L] = float(np.mean(g))
        table += [{"L": L, "m": m, "P_He/eps": P[("he", L, m)], "P_NTK/eps": P[("ntk", L, m)]} for m in sorted({c[0] for c in cells})]
    deep = [v for L, v in gaps.items() if L >= 3]
    record(verdict_for(max(deep), math.log(1.15)), observed=max(deep), bound=math.log(1.15), table=table,
           hypotheses={"mean |log ratio| per depth": gaps, "L=2 gap larger than deeper gaps": gaps[2] > max(deep)},
           config={"cells": cells, **fz.LAZY}, note="stand-in: random-target regression on the sphere, not MNIST")
    assert max(deep) <= math.log(1.15)


@pytest.mark.claim("zhu2022/fig-E")
def test_e1_lazy_vs_non_lazy_accuracy_digits(ctx, record):
    """Table 4 analogue: an FCN (L = 3) trained from He init (the paper's 'lazy' arm; its laziness is reported) and (0.05 × He init, verified relative
    weight change ≥ 1) on 10-class digits (one-hot squared loss, full-batch GD) reaches similar test accuracy
    (|difference| ≤ 5 points; paper: 92.89% vs 92.14% on CIFAR10 with ResNet-110)."""
    X, t = real.digits(device=ctx.device)
    X = X / X.norm(dim=1, keepdim=True)
    gen = record.generator({"t": "E1"})
    perm = torch.randperm(len(t), generator=gen, device=ctx.device)
    n_tr = ctx.pick(quick=500, full=1200)
    tr_idx, te_idx = perm[:n_tr], perm[n_tr:]
    Y = torch.nn.functional.one_hot(t, 10).to(ctx.dtype)
    m, L, E, steps = ctx.pick(quick=64, full=1024), 3, 2, ctx.pick(quick=1000, full=20000)
    out = {}
    for regime, scale, lr in (("He init (paper: lazy)", 1.0, 0.5), ("0.1 x He init (non-lazy)", 0.1, 0.5)):
        st_ = [scale * s for s in schemes.stds("he", 64, m, L)]
        net = DeepMLP.init(E, [64, m, m, 10], stds=st_, generator=gen, device=ctx.device)
        w0 = [w.clone() for w in net.weights]
        gd(net, X[tr_idx], Y[tr_idx], loss="squared", lr=lr, steps=steps, record=[0, steps])
        acc = (net(X[te_idx]).argmax(-1) == t[te_idx]).to(ctx.dtype).mean(-1)
        out[regime] = {"test acc": acc.tolist(), "rel change": lazy.rel_change(w0, net.weights).tolist()}
    diff = abs(float(np.mean(out["He init (paper: lazy)"]["test acc"])) - float(np.mean(out["0.1 x He init (non-lazy)"]["test acc"])))
    record(verdict_for(diff, 0.05), observed=diff, bound=0.05, table=[{"regime": k, **v} for k, v in out.items()],
           config={"m": m, "L": L, "E": E, "steps": steps, "n_train": n_tr},
           note="stand-in for ResNet-110/CIFAR: FCN on sklearn digits; lr 0.5 on the mean squared loss; the He-init arm is not lazy by the 0.1 criterion at this width (relative change reported)")
    assert min(out["0.1 x He init (non-lazy)"]["rel change"]) >= 1.0
    assert diff <= 0.05


@pytest.mark.claim("zhu2022/fig-E")
@pytest.mark.parametrize("item", ["E.2 Fig 6", "E.3 Fig 7", "E.4 Fig 8", "E.5 Fig 9"])
def test_items_not_checkable_here(ctx, record, item):
    reasons = {
        "E.2 Fig 6": "50- vs 200-epoch SGD on MNIST-scale data with width 32/64, depth 4/8: needs the paper's SGD "
                     "schedule and data; full-batch GD on digits would not test the early-stopping claim",
        "E.3 Fig 7": "CNNs (depth 4-10) on image data: the harness has no convolutional models and no CIFAR/MNIST offline",
        "E.4 Fig 8": "ResNet-18/34 on CIFAR: architecture and data unavailable offline; GPU-scale",
        "E.5 Fig 9": "checked as the non-lazy width trend of zhu2022/thm-3 (test_width_trend_non_lazy) on a two-layer stand-in",
    }
    assert item in reasons
    record("not-applicable", note=reasons[item], config={"item": item})
