"""zhu2022/fig-E: Appendix E experiments, reproduced where offline data and CPU scale allow.

- E.6 (Fig. 10): NTK and He initialisation give similar stability curves (except L = 2) — paired NTK/He draws on the lazy-sweep task.
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
from scipy import stats as st

from fixtures import real
from fixtures import zhu2022 as fz
from theory.papers.zhu2022 import lazy
from theory.papers.zhu2022 import schemes
from theory.records import verdict_for
from theory.sim.models import DeepMLP
from theory.sim.train import gd


E6_ALPHA = 0.01  # level of each one-sided test of the TOST equivalence test (per depth)


def _tost(r: np.ndarray, delta: float, alpha: float = E6_ALPHA):
    """Equivalence (two one-sided t-tests) of the mean of paired log-ratios r with 0 within ±delta:
    'similar' iff the (1 − 2α) t-interval of the mean lies inside (−delta, delta)."""
    se = float(r.std(ddof=1) / math.sqrt(r.size))
    h = float(st.t.ppf(1 - alpha, r.size - 1)) * se
    lo, hi = float(r.mean()) - h, float(r.mean()) + h
    return lo, hi, bool(-delta < lo and hi < delta)


@pytest.mark.claim("zhu2022/fig-E")
def test_e6_ntk_vs_he_similar(ctx, record):
    """Fig. 10 (E.6): NTK and He initialisation 'yield similar curves' of P(f, ε) vs width, except for L = 2.
    Paired design: per seed one Gaussian draw gives the He net and the NTK-parameterised net (the same function at
    init, so init noise cancels) trained on the lazy-sweep task; r = log(P_NTK(T)/P_He(T)) per pair.
    'Similar' (a curve difference invisible against the draw-to-draw scatter of the figure's points) is encoded as an
    equivalence test per depth L ≥ 3: the (1 − 2·0.01) t-interval of mean r lies within ±δ_L, δ_L = the pooled
    within-cell SD of log P_He(T) over independent draws. Companion: the same test must reject 'LeCun ≈ He'
    (same draws rescaled to γ = 1/√2). The L = 2 exception is reported (mean |r| at L = 2 vs deeper)."""
    depths = ctx.pick(quick=(2, 3, 5), full=(2, 6, 10))
    widths = ctx.pick(quick=(16, 64), full=(16, 64, 256, 1024))
    cfg = {**fz.LAZY, **ctx.pick(quick={"pair_seeds": 5}, full={"pair_seeds": 10, "n": 100, "n_test": 1000, "steps": 3000})}
    items = tuple(sorted(cfg.items()))
    table, res = [], {}
    for L in depths:
        r, rl, dev = [], [], []
        for m in widths:
            o = fz.ntk_he_pairs(m, L, ctx.device, ctx.dtype, ctx.seed, items)
            same0 = float(((o["ntk_P0"] - o["he_P0"]).abs() / o["he_P0"]).max())
            assert same0 < 1e-10, f"NTK and He nets of one draw must agree at init (rel. diff {same0:.3g})"
            r += (o["ntk_PT"] / o["he_PT"]).log().tolist()
            rl += (o["lecun_PT"] / o["he_PT"]).log().tolist()
            lh = o["he_PT"].log()
            dev += (lh - lh.mean()).tolist()
            table += [{"L": L, "m": m, "seed": k, "P_He(0)/eps": float(o["he_P0"][k]), "P_He(T)/eps": float(o["he_PT"][k]),
                       "P_NTK(T)/eps": float(o["ntk_PT"][k]), "P_LeCun(T)/eps": float(o["lecun_PT"][k])}
                      for k in range(len(o["he_PT"]))]
        r, rl = np.array(r), np.array(rl)
        delta = math.sqrt(float(np.sum(np.square(dev))) / (len(dev) - len(widths)))
        lo, hi, eq = _tost(r, delta)
        llo, lhi, leq = _tost(rl, delta)
        res[L] = {"mean r": float(r.mean()), "mean |r|": float(np.abs(r).mean()), "CI": (lo, hi), "delta (seed SD)": delta,
                  "similar": eq, "LeCun mean r": float(rl.mean()), "LeCun CI": (llo, lhi), "LeCun similar (mutation)": leq}
    deep = [L for L in depths if L >= 3]
    worst = max(max(abs(res[L]["CI"][0]), abs(res[L]["CI"][1])) / res[L]["delta (seed SD)"] for L in deep)
    record("holds" if all(res[L]["similar"] for L in deep) else "violated", observed=worst, bound=1.0, ratio=worst,
           tightness="max over L ≥ 3 of (largest |end| of the 98 % CI of mean log(P_NTK/P_He)) / δ_L (< 1: similar)",
           table=table, hypotheses={f"L={L}": v for L, v in res.items()} | {
               "L=2 mean |r| larger than every deeper depth": res[depths[0]]["mean |r|"] > max(res[L]["mean |r|"] for L in deep)},
           config={"depths": depths, "widths": widths, **cfg, "alpha per one-sided test": E6_ALPHA},
           note="stand-in: random-target regression on the sphere, not MNIST; paired NTK/He draws")
    assert all(res[L]["similar"] for L in deep), res
    assert not any(res[L]["LeCun similar (mutation)"] for L in deep), res


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
