"""zhu2022/thm-1 and zhu2022/lem-4: perturbation stability across width m, depth L and initialisation
(LeCun, He, γ = 1.2, NTK), at initialisation and after training, against Theorem 1's decomposition
P(f,ε) ≤ E‖(J_T − J_0)(x − x̂)‖ + (E‖J_0(x − x̂)‖²)^{1/2} ≤ ε Δ₄ + ε T_init.

Quantities per ε (scalar output, closed form of def-1): P0 = P(f_0)/ε, PT = P(f_T)/ε,
dev = E‖(J_T − J_0)u‖/ε (the Lemma-4 term, measured), T_init = (mβ_1²β_L²γ^{2(L−2)}/2)^{1/2}.
A run is lazy when max_l ‖ΔW_l‖_F/‖W_l(0)‖_F ≤ 0.1 (catalog); shape claims are judged on lazy cells only.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fixtures import zhu2022 as fz
from theory.papers.zhu2022 import lazy
from theory.papers.zhu2022 import perturbation as pt
from theory.papers.zhu2022 import schemes
from theory.records import verdict_for
from theory.stats import fit_power, rank_trend


def _cells(ctx):
    grid = [(m, L) for L in ctx.pick(quick=(2, 3, 5), full=(2, 3, 4, 6, 8, 10))
            for m in ctx.pick(quick=(16, 64, 256), full=(16, 64, 256, 1024, 4096))]
    wide = ctx.pick(quick=[(1024, 2), (4096, 2)], full=[(16384, 2)])
    return grid + wide


def _sweep(ctx):
    cfg = ctx.pick(quick={}, full={"seeds": 5, "n": 100, "n_test": 1000, "steps": 3000})
    return fz.lazy_sweep(_cells(ctx), ctx.device, ctx.dtype, ctx.seed, cfg)


def _agg(rows):
    out = {}
    for r in rows:
        out.setdefault((r["scheme"], r["L"], r["m"]), []).append(r)
    return {k: {q: float(np.mean([x[q] for x in v])) for q in ("P0", "PT", "dev", "T_init", "shape4", "loss_ratio")}
            | {"rel_max": max(x["rel_change"] for x in v), "n": len(v)} for k, v in out.items()}


INIT_SCHEMES = ("lecun", "he", "he1", "beta:1.2", "ntk")


@pytest.mark.claim("zhu2022/thm-1")
def test_init_term_bounds_stability_at_init(ctx, record):
    """Theorem 1 at t = 0 (Lemma 5 + Jensen): P(f_0, ε) ≤ ε T_init, over m × L × init; with the depth trend
    of the init term: factor γ per layer (LeCun 1/√2: depth helps; He/NTK 1: depth-neutral)."""
    d, E, N, eps = 10, ctx.pick(quick=48, full=400), ctx.pick(quick=128, full=1000), 0.1
    widths, depths = ctx.pick(quick=(64, 256), full=(64, 256, 1024)), ctx.pick(quick=(2, 3, 4, 6, 8), full=(2, 3, 4, 6, 8, 10))
    gen = record.generator({"t": "init"})
    X = torch.randn(N, d, generator=gen, dtype=ctx.dtype, device=ctx.device)
    X = X / X.norm(dim=1, keepdim=True)
    rows, worst, wrong_rejected = [], 0.0, 0
    for m in widths:
        for L in depths:
            for s in INIT_SCHEMES:
                net = schemes.build(E, d, m, L, 1, s, generator=gen, device=ctx.device)
                P0 = float(pt.stability_scalar(pt.input_grads(net, X), eps).mean()) / eps
                st_ = schemes.stds(s, d, m, L)
                g = schemes.gamma(st_[1], m) if L > 2 else 1.0
                T = pt.init_term(m, 1, st_[0], st_[-1], g, L)
                T_wrong = T * g ** (L - 2)  # mutation: depth exponent doubled, γ^{2(L−2)} → γ^{4(L−2)}
                rows.append({"m": m, "L": L, "scheme": s, "P0/eps": P0, "T_init": T, "ratio": P0 / T,
                             "ratio (mutated bound)": P0 / T_wrong})
                worst = max(worst, P0 / T)
                wrong_rejected += P0 > T_wrong
    series, fits = {}, {}
    for s in ("lecun", "he", "ntk"):
        sel = [r for r in rows if r["scheme"] == s and r["m"] == widths[-1]]
        Ls, P = [r["L"] for r in sel], [r["P0/eps"] for r in sel]
        slope = np.polyfit(Ls, np.log(P), 1)[0]
        fits[s] = math.exp(slope)
        series[f"P0/eps {s}"] = {"x": Ls, "y": P, "xlabel": "depth L", "ylabel": "P(f_0,eps)/eps", "logy": True,
                                 "plot": "init term vs depth"}
    record(verdict_for(worst, 1.0), observed=worst, bound=1.0, tightness="max over cells of P0/(ε T_init) (Jensen slack)",
           config={"d": d, "E": E, "N": N, "widths": widths, "depths": depths, "eps": eps}, table=rows, series=series,
           hypotheses={"per-layer factor of P0 (fit, widest m)": fits},
           note=f"mutated bound (depth exponent doubled) violated in {wrong_rejected} cells")
    assert worst <= 1.0
    assert wrong_rejected > 0
    # LeCun: P0 decays ≈ 1/√2 per layer; He/NTK: flat (within ±15% per layer)
    assert 0.6 < fits["lecun"] < 0.8 and all(0.85 < fits[s] < 1.15 for s in ("he", "ntk"))


@pytest.mark.claim("zhu2022/thm-1")
def test_decomposition_after_training(ctx, record):
    """After training: PT ≤ dev + T_init (triangle + Jensen, seed-averaged; must hold) in every cell; the share
    of the deviation term; and the relative weight movement (lazy or not) — one row per (init, L, m)."""
    agg = _agg(_sweep(ctx))
    table, worst = [], 0.0
    for (s, L, m), a in sorted(agg.items()):
        r = a["PT"] / (a["dev"] + a["T_init"])
        worst = max(worst, r)
        table.append({"scheme": s, "L": L, "m": m, "P0/eps": a["P0"], "PT/eps": a["PT"], "dev/eps": a["dev"],
                      "T_init": a["T_init"], "PT/(dev+T_init)": r, "dev share": a["dev"] / (a["dev"] + a["T_init"]),
                      "max rel change": a["rel_max"], "lazy": a["rel_max"] <= lazy.LAZY_MAX_REL_CHANGE,
                      "final/initial loss": a["loss_ratio"]})
    series = {}
    for s in ("lecun", "he", "ntk"):
        for L in sorted({k[1] for k in agg}):
            ms = sorted(k[2] for k in agg if k[0] == s and k[1] == L)
            series[f"PT/eps {s} L={L}"] = {"x": ms, "y": [agg[(s, L, m)]["PT"] for m in ms], "xlabel": "width m",
                                           "ylabel": "P(f_T,eps)/eps", "logx": True, "plot": f"trained stability ({s})"}
    # mutation: dropping the deviation term (PT ≤ T_init alone) is violated somewhere
    dropped = max(a["PT"] / a["T_init"] for a in agg.values())
    record(verdict_for(worst, 1.0), observed=worst, bound=1.0, table=table, series=series,
           config={**fz.LAZY, "cells": _cells(ctx)}, tightness="max PT/(dev + T_init) over cells",
           note=f"mutation 'PT ≤ T_init' (no deviation term): max ratio {dropped:.3f}")
    assert worst <= 1.0
    assert dropped > 1.0


@pytest.mark.claim("zhu2022/thm-1")
def test_theorem1_bound_and_trends(ctx, record):
    """Theorem 1's bound with the Lemma-4 constant Ĉ fitted on the smallest width of each (init, L):
    PT ≤ Ĉ g(m, L) + T_init, judged on lazy cells; plus the claimed depth trends of the trained stability
    (LeCun: decreasing in L — asserted, it is carried by the exact init term; He/NTK "depth hurts": reported)."""
    agg = _agg(_sweep(ctx))
    table, worst_lazy = [], 0.0
    for (s, L) in sorted({(k[0], k[1]) for k in agg}):
        ms = sorted(k[2] for k in agg if k[:2] == (s, L))
        a0 = agg[(s, L, ms[0])]
        C = a0["dev"] / a0["shape4"]
        for m in ms:
            a = agg[(s, L, m)]
            bound = C * a["shape4"] + a["T_init"]
            is_lazy = a["rel_max"] <= lazy.LAZY_MAX_REL_CHANGE
            if is_lazy:
                worst_lazy = max(worst_lazy, a["PT"] / bound)
            table.append({"scheme": s, "L": L, "m": m, "PT/eps": a["PT"], "C_hat g": C * a["shape4"], "T_init": a["T_init"],
                          "PT/bound": a["PT"] / bound, "lazy": is_lazy, "init-term share of bound": a["T_init"] / bound})
    depths = {k[1] for k in agg}
    mw = max(m for m in {k[2] for k in agg} if all(("he", L, m) in agg for L in depths))  # widest m at every depth
    trends = {}
    for s in ("lecun", "he", "ntk", "beta:1.2"):
        Ls = sorted(k[1] for k in agg if k[0] == s and k[2] == mw)
        rho, p, _ = rank_trend(Ls, [agg[(s, L, mw)]["PT"] for L in Ls], alternative="two-sided") if len(Ls) >= 3 else (np.nan, np.nan, False)
        trends[s] = {"depths": Ls, "PT": [agg[(s, L, mw)]["PT"] for L in Ls], "spearman": rho}
    lecun_dec = all(np.diff(trends["lecun"]["PT"]) < 0)
    verdict = verdict_for(worst_lazy, 1.0)
    record(verdict, observed=worst_lazy, bound=1.0, table=table, hypotheses={"depth trends at m=%d" % mw: trends},
           tightness="max PT/(Ĉ g + T_init) over lazy cells",
           note=("The bound holds on lazy cells only because the exact init term alone exceeds PT there; its lazy part "
                 "is wrong in shape (see lem-4). He/NTK 'depth hurts' is not visible at this scale (flat in L)."))
    assert worst_lazy <= 1.0
    assert lecun_dec


@pytest.mark.claim("zhu2022/lem-4")
@pytest.mark.xfail(strict=True, reason="Lemma 4's e^{-m²/((m+1)L³)} decay of the deviation term is contradicted "
                                       "on lazy runs with m ≫ L³ (deviation nearly width-independent)")
def test_lemma4_deviation_decay(ctx, record):
    """Fit the constant of g(m, L) = √(L³(m+1)) e^{−m²/((m+1)L³)} β_1β_Lγ^{L−2}√m on the smallest lazy width of
    each (init, L) and compare at the larger lazy widths: the printed shape requires ratio ≤ 1."""
    agg = _agg(_sweep(ctx))
    table, worst, control = [], 0.0, 0.0
    for (s, L) in sorted({(k[0], k[1]) for k in agg}):
        ms = sorted(m for (s2, L2, m) in agg if (s2, L2) == (s, L) and agg[(s, L, m)]["rel_max"] <= lazy.LAZY_MAX_REL_CHANGE)
        if len(ms) < 2:
            continue
        a0 = agg[(s, L, ms[0])]
        C = a0["dev"] / a0["shape4"] if a0["shape4"] > 0 else math.inf
        for m in ms[1:]:
            a = agg[(s, L, m)]
            ratio = a["dev"] / (C * a["shape4"]) if a["shape4"] > 0 else math.inf
            flat = a["dev"] / a0["dev"]  # control: a width-independent deviation (NTK reasoning) is not rejected
            worst, control = max(worst, ratio), max(control, flat)
            table.append({"scheme": s, "L": L, "m_fit": ms[0], "m": m, "dev(m_fit)": a0["dev"], "dev(m)": a["dev"],
                          "predicted dev(m)": C * a["shape4"], "measured/predicted": ratio, "dev(m)/dev(m_fit)": flat})
    devfits = {}
    for s in ("he", "ntk", "lecun"):
        ms = sorted(k[2] for k in agg if k[0] == s and k[1] == 2)
        f = fit_power(ms, [agg[(s, 2, m)]["dev"] for m in ms])
        devfits[s] = {"slope": f.exponent, "ci": f.ci}
    slopes = ", ".join(f"{k} {v['slope']:.2f}" for k, v in devfits.items())
    finding = (f"On lazy runs (rel. weight change ≤ 0.1) the deviation term stays of the order of the init term: "
               f"measured/predicted up to {worst:.3g} after fitting the constant at the smallest lazy width, and "
               f"dev ∝ m^slope with slopes {slopes} at L=2.")
    record("expected-failure" if worst > 1 else "holds", observed=worst, bound=1.0, table=table, finding=finding,
           hypotheses={"log-log slope of dev vs m at L=2": devfits}, config={**fz.LAZY, "cells": _cells(ctx)},
           tightness="measured/(Ĉ g(m,L)) on lazy cells")
    assert table, "no (init, L) with two lazy widths: enlarge the sweep"
    assert control <= 1.25  # the check accepts a width-independent deviation (seed noise margin 25%)
    assert worst <= 1.0
