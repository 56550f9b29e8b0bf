"""zhu2022/thm-1 and zhu2022/lem-4: perturbation stability across width m, depth L and initialisation
(LeCun, He, γ = 1.2, NTK), at initialisation and after lazy training, against Theorem 1's decomposition
P(f,ε) ≤ E‖(J_T − J_0)(x − x̂)‖ + (E‖J_0(x − x̂)‖²)^{1/2} ≤ ε Δ₄ + ε T_init.

Quantities per ε (scalar output, closed form of def-1): P0 = P(f_0)/ε, PT = P(f_T)/ε,
dev = E‖(J_T − J_0)(x − x̂)‖/ε (the Lemma-4 term, measured), T_init = (mβ_1²β_L²γ^{2(L−2)}/2)^{1/2}.
A run is lazy when max_l ‖ΔW_l‖_F/‖W_l(0)‖_F ≤ 0.1 (catalog). The sweep (fixtures.zhu2022.lazy_sweep) fits a
residual of relative size δ = 0.03 around each net's initial function, so nearly every cell is lazy (max rel. change
≈ 0.1 only at m = 16); a cell that is not lazy at a draw is recorded as outside the hypotheses and not judged (never
re-drawn), and the checks assert that every (init, L) keeps at least two lazy widths.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats as st

from fixtures import zhu2022 as fz
from fixtures.controls import OPNORM_EXACT_TOL, OPNORM_LANCZOS_TOL, control_text, input_grad_control
from theory import ClaimViolation, assert_claim
from theory.papers.zhu2022 import init_cells, lazy
from theory.papers.zhu2022 import perturbation as pt
from theory.papers.zhu2022 import schemes
from theory.stats import fit_power
from theory.device import draw

# tests that compute one cached run: xdist keeps each group on one worker (theory.harness.shared_runs)
SHARED_RUNS = {"zhu2022/lazy_sweep": ["test_decomposition_after_training", "test_theorem1_bound_and_trends",
                                  "test_lemma4_deviation_decay", "test_width_tradeoff_information"]}

TREND_ALPHA = 0.01  # family-wise false-alarm rate of each group of trend tests (Bonferroni inside the group)
RATIO_ALPHA = 2.5e-4  # family-wise level of the Welch lower bounds of dev(m)/dev(m_fit) (Bonferroni over the rows):
# the finding sits ~10^200 beyond them and the flat control's bound stays ≤ 0.86 (seeds 39–67 at 0.01), so the lower
# level costs no power (issue 35: 2.5e-4, was 1e-3)
LOWER = f"{100 * (1 - RATIO_ALPHA):g}%"  # the family-wise confidence of those lower bounds, for the records' labels


def _cells(ctx):
    grid = [(m, L) for L in ctx.pick(quick=(2, 3, 5), full=(2, 3, 4, 6, 8, 10))
            for m in ctx.pick(quick=(16, 64, 256), full=(16, 64, 256, 1024, 4096))]
    wide = ctx.pick(quick=[(1024, 2), (4096, 2)], full=[(16384, 2)])
    return grid + wide


def _sweep(ctx):
    cfg = ctx.pick(quick={}, full={"seeds": 5, "narrow": (64, 24), "n": 100, "n_test": 1000, "steps": 3000})
    return fz.lazy_sweep(_cells(ctx), ctx.device, ctx.dtype, ctx.seed, cfg)


def _agg(rows):
    """Per (scheme, L, m): seed means, per-seed values and the largest relative weight change."""
    out = {}
    for r in rows:
        out.setdefault((r["scheme"], r["L"], r["m"]), []).append(r)
    agg = {}
    for k, v in out.items():
        a = {q: float(np.mean([x[q] for x in v])) for q in ("P0", "PT", "dev", "T_init", "shape4", "log_shape4", "loss_ratio")}
        a.update(rel_max=max(x["rel_change"] for x in v), n=len(v), log_dev=np.log([x["dev"] for x in v]),
                 log_PT=np.log([x["PT"] for x in v]),
                 ctl={q: max(x[q] for x in v) for q in ("opnorm default vs exact", "grad norm vs exact")})
        agg[k] = a
    return agg


def _production_path(agg) -> str:
    """The sweep's opnorm controls (fixtures.zhu2022: member 0 of every ensemble, 16 test rows, ‖∇f(T)‖ vs the
    core's default opnorm and its exact SVD; asserted there), as one line for a record's hypotheses."""
    lz = max(a["ctl"]["opnorm default vs exact"] for a in agg.values())
    own = max(a["ctl"]["grad norm vs exact"] for a in agg.values())
    return (f"opnorm default (Lanczos) vs exact SVD, max over the sweep's ensembles (member 0, 16 rows): {lz:.1e} "
            f"(tol {OPNORM_LANCZOS_TOL:.0e}); the check's ‖∇f‖ vs exact: {own:.1e} (tol {OPNORM_EXACT_TOL:.0e})")


def _lazy_sweep_checked(ctx, record):
    """The aggregated sweep restricted to its lazy cells, after asserting ≥ 2 lazy widths per (init, L). A cell whose
    run left the lazy regime at this draw (max rel. weight change > 0.1 in some member: 0.101 at m = 16, L = 2 for
    LeCun and He at --seed 26) is outside the theorem's hypotheses: it is recorded (reading "outside-hypotheses",
    not applicable) and not judged, never re-drawn."""
    full = _agg(_sweep(ctx))
    agg = {k: a for k, a in full.items() if a["rel_max"] <= lazy.LAZY_MAX_REL_CHANGE}
    not_lazy = {f"{s}, L={L}, m={m}": round(a["rel_max"], 4) for (s, L, m), a in sorted(full.items()) if (s, L, m) not in agg}
    if not_lazy:
        record("not-applicable", reading="outside-hypotheses", table=_decomposition_table({k: full[k] for k in full if k not in agg}),
               evidence="consistency", inside=False,
               inside_reason=f"lazy training fails (max rel. weight change > {lazy.LAZY_MAX_REL_CHANGE}): {not_lazy}",
               config={**fz.LAZY, "cells outside the lazy regime (max rel. weight change)": not_lazy},
               note=(f"{len(not_lazy)} of {len(full)} cells left the lazy regime at this draw (max rel. weight change > "
                     f"{lazy.LAZY_MAX_REL_CHANGE}): outside the hypotheses of training in the lazy regime, not judged"))
    groups = {(s, L) for (s, L, _) in agg}
    thin = [g for g in groups if sum(1 for k in agg if k[:2] == g) < 2]
    assert not thin, f"(init, L) with fewer than two widths: {thin}"
    assert {s for s, _ in groups} == set(fz.STD_SCHEMES) | {"ntk"}, "an initialisation contributes no cells"
    return agg


def _slope_in_depth(agg, scheme, key, widths):
    """OLS of log(value) on L with a fixed effect per width, over every seed of the widths common to all depths:
    (slope per layer, its standard error, residual degrees of freedom)."""
    depths = sorted({k[1] for k in agg if k[0] == scheme})
    rows = [(L, m, v) for m in widths for L in depths for v in agg[(scheme, L, m)][key]]
    Lv = np.array([r[0] for r in rows], float)
    Xd = np.column_stack([Lv] + [np.array([r[1] == m for r in rows], float) for m in widths])
    y = np.array([r[2] for r in rows])
    coef, *_ = np.linalg.lstsq(Xd, y, rcond=None)
    dof = len(y) - Xd.shape[1]
    s2 = float(((y - Xd @ coef) ** 2).sum()) / dof
    se = math.sqrt(s2 * np.linalg.inv(Xd.T @ Xd)[0, 0])
    return float(coef[0]), se, dof


INIT_SCHEMES = ("lecun", "he", "he1", "beta:1.2", "ntk")


@pytest.mark.claim("zhu2022/thm-1")
def test_init_term_bounds_stability_at_init(ctx, record):
    """Theorem 1 at t = 0 (Lemma 5 + Jensen): P(f_0, ε) ≤ ε T_init, over m × L × init; with the depth trend
    of the init term: factor γ per layer (LeCun 1/√2: depth helps; He/NTK 1: depth-neutral).
    Companion (wrong version): the mask's factor 1/2 counted twice per hidden layer, γ² = mβ²/4, i.e.
    T_init·2^{−(L−2)/2}; it must be rejected (P0 above it) in every cell with L ≥ 4, for every initialisation."""
    d, E, N, eps = 10, ctx.pick(quick=48, full=400), ctx.pick(quick=128, full=1000), 0.1
    widths, depths = ctx.pick(quick=(64, 256), full=(64, 256, 1024)), ctx.pick(quick=(2, 3, 4, 6, 8), full=(2, 3, 4, 6, 8, 10))
    gen = record.generator({"t": "init"})
    X = draw(torch.randn, N, d, generator=gen, dtype=ctx.dtype, device=ctx.device)
    X = X / X.norm(dim=1, keepdim=True)
    fz.declare_init_cells(E, N, d, widths, depths, len(INIT_SCHEMES), ctx.dtype)  # its size, for `theory plan`
    rows, worst = [], 0.0
    for m in widths:
        for L in depths:
            for s in INIT_SCHEMES:
                # the previous cell's net goes before the next is built: two nets of the full profile's m = 1024,
                # L = 10 cell (E = 400: 25 GiB each) made this test's peak 53 GiB on an H200 (issue 33)
                net = grads = None
                P0, net, grads = init_cells.p0_over_eps(E, d, m, L, s, X, eps, generator=gen, device=ctx.device)
                st_ = schemes.stds(s, d, m, L)
                g = schemes.gamma(st_[1], m) if L > 2 else 1.0
                T = pt.init_term(m, 1, st_[0], st_[-1], g, L)
                T_wrong = T * 2.0 ** (-(L - 2) / 2)  # mutation: γ² = mβ²/4 (mask halving counted twice)
                rows.append({"m": m, "L": L, "scheme": s, "P0/eps": P0, "T_init": T, "ratio": P0 / T,
                             "ratio (mutated bound)": P0 / T_wrong})
                worst = max(worst, P0 / T)
    # ‖∇f‖ of the last cell (widest, deepest, NTK) vs the core's default opnorm and its exact SVD (member 0, 16 rows)
    ctl = input_grad_control(net, X, grads)
    series, fits = {}, {}
    for s in ("lecun", "he", "ntk"):
        sel = [r for r in rows if r["scheme"] == s and r["m"] == widths[-1]]
        Ls, P = [r["L"] for r in sel], [r["P0/eps"] for r in sel]
        fits[s] = math.exp(np.polyfit(Ls, np.log(P), 1)[0])
        series[f"P0/eps {s}"] = {"x": Ls, "y": P, "xlabel": "depth L", "ylabel": "P(f_0,eps)/eps", "logy": True,
                                 "plot": "init term vs depth"}
    # The fitted per-layer factor of P0 is γ times the drift of the Jensen slack P0/T_init, which stays within
    # [0.55, 0.8] over L = 2..8 (table): at most (0.8/0.55)^{1/6} ≈ 1.065 per layer. A ±15% band around γ therefore
    # contains the truth and still separates γ = 1/√2 (LeCun, ≤ 0.81) from γ = 1 (He/NTK, ≥ 0.85).
    trend_ok = 0.6 < fits["lecun"] < 0.8 and all(0.85 < fits[s] < 1.15 for s in ("he", "ntk"))
    ok = worst <= 1.0 and trend_ok
    record("holds" if ok else "violated", observed=worst, bound=1.0, covers=["t = 0", "term: initialization", "LeCun", "He", "NTK"],
           evidence="test", inside=True,
           inside_reason=("t = 0: Lemma 5 (init independent of the data, L ≥ 2) and Jensen invoke no event; the lazy-training "
                          "hypotheses concern the training term, absent at t = 0"),
           tightness="max over cells of P0/(ε T_init) (Jensen slack)",
           config={"d": d, "E": E, "N": N, "widths": widths, "depths": depths, "eps": eps}, table=rows, series=series,
           hypotheses={"per-layer factor of P0 (fit, widest m)": fits, "depth trend within ±15% of gamma": trend_ok,
                       f"production path (m = {widths[-1]}, L = {depths[-1]}, NTK, member 0)": control_text(ctl)})
    deep = [r for r in rows if r["L"] >= 4]
    per_scheme = {s: (sum(r["ratio (mutated bound)"] > 1 for r in deep if r["scheme"] == s),
                      sum(1 for r in deep if r["scheme"] == s)) for s in INIT_SCHEMES}
    rejected = all(k == n and n > 0 for k, n in per_scheme.values())
    record("holds" if rejected else "violated", role="companion",
           observed=min(r["ratio (mutated bound)"] for r in deep), bound=1.0,
           note=("wrong version T_init·2^{-(L-2)/2} (γ² = mβ²/4): P0 above it in "
                 + ", ".join(f"{s} {k}/{n}" for s, (k, n) in per_scheme.items()) + " cells with L ≥ 4"))
    assert worst <= 1.0
    assert trend_ok, fits
    assert rejected, per_scheme


def _decomposition_table(agg):
    table = []
    for (s, L, m), a in sorted(agg.items()):
        table.append({"scheme": s, "L": L, "m": m, "P0/eps": a["P0"], "PT/eps": a["PT"], "dev/eps": a["dev"],
                      "T_init": a["T_init"], "PT/(dev+T_init)": a["PT"] / (a["dev"] + a["T_init"]),
                      "dev share": a["dev"] / (a["dev"] + a["T_init"]), "PT/P0 - 1": a["PT"] / a["P0"] - 1,
                      "max rel change": a["rel_max"], "final/initial loss": a["loss_ratio"],
                      "m >= L^3 ln m": lazy.within_borrowed_lemmas(m, L),
                      "hypothesis status": lazy.hypothesis_status(m, L, a["rel_max"])["status"]})
    return table


def _status_summary(table) -> dict:
    """Hypothesis report of a set of sweep cells (lazy.hypothesis_status): counts per status and the undecidable
    events with their reasons. No cell is ever "inside": Lemma 4's ω range and the borrowed lemmas' events are not
    decidable from a run."""
    st_ = [r["hypothesis status"] for r in table]
    return {"cells per hypothesis status": {k: st_.count(k) for k in sorted(set(st_))},
            "unknown events (Lemma 4's proof)": dict(lazy.LEMMA4_UNKNOWN_EVENTS)}


def _companion_pt_le_p0(record, rows):
    """Companion of the decomposition: the wrong version 'PT ≤ P0' (deviation term dropped) must be violated by some
    network of every initialisation. Records it; returns (rejected, per-scheme counts)."""
    per = {s: (sum(r["PT"] > r["P0"] for r in rows if r["scheme"] == s), sum(1 for r in rows if r["scheme"] == s))
           for s in sorted({r["scheme"] for r in rows})}
    rejected = all(k > 0 for k, _ in per.values())
    record("holds" if rejected else "violated", role="companion", observed=max(r["PT"] / r["P0"] for r in rows), bound=1.0,
           note="wrong version 'PT ≤ P0' (deviation term dropped): violated by " +
                ", ".join(f"{s} {k}/{n}" for s, (k, n) in per.items()) + " networks")
    return rejected, per


@pytest.mark.claim("zhu2022/thm-1")
def test_decomposition_after_training(ctx, record):
    """After lazy training: averaged over the initialisation as in the theorem, PT ≤ dev + T_init (triangle + Jensen)
    in every cell, with the share of the deviation term. Per network PT ≤ P0 + dev is the triangle inequality (holds
    for any numbers; asserted as a code check), so what the record tests is E P0 ≤ T_init (Lemma 5 + Jensen) carried
    through training. Cells with m ≥ L³ ln m (the range of the lemmas Lemma 4 borrows) give the as-stated record; the
    others are recorded apart (reading "outside-hypotheses"). At δ = 0.03 the deviation term is a small share of the
    bound; test_decomposition_material_deviation runs a configuration where it is ≥ 25 %.
    Companion: 'PT ≤ P0' (the deviation term dropped, i.e. training cannot change P) must be violated by at least
    one network of every initialisation."""
    agg = _lazy_sweep_checked(ctx, record)
    rows = _sweep(ctx)
    tri = max(r["PT"] / (r["P0"] + r["dev"]) for r in rows)
    table = _decomposition_table(agg)
    series = {}
    for s in ("lecun", "he", "ntk"):
        for L in sorted({k[1] for k in agg}):
            ms = sorted(k[2] for k in agg if k[0] == s and k[1] == L)
            series[f"PT/eps {s} L={L}"] = {"x": ms, "y": [agg[(s, L, m)]["PT"] for m in ms], "xlabel": "width m",
                                           "ylabel": "P(f_T,eps)/eps", "logx": True, "plot": f"trained stability ({s})"}
    # rounding: P and dev are means of norms of the same float64 gradients: relative error ≪ 1e-12
    assert tri <= 1 + 1e-12, tri
    res = {}
    for inside in (True, False):
        sel = [r for r in table if r["m >= L^3 ln m"] == inside]
        worst = max(r["PT/(dev+T_init)"] for r in sel)
        res[inside] = worst
        record("holds" if worst <= 1.0 else "violated", observed=worst, bound=1.0, table=sel,
               series=series if inside else {}, reading="as-stated" if inside else "outside-hypotheses", evidence="test",
               inside=inside,
               inside_reason=(f"every cell lazy (max rel. weight change {max(r['max rel change'] for r in sel):.3f} ≤ "
                              f"{lazy.LAZY_MAX_REL_CHANGE}) and m ≥ L³ ln m; the tested steps (triangle inequality, Jensen, "
                              "Lemma 5's exact expectation) invoke no event, and the deviation term enters measured, so "
                              "Lemma 4's undecidable events (ω range, borrowed lemmas) are not used" if inside else
                              f"cells below m ≥ L³ ln m (the borrowed lemmas' range): {sorted({(r['m'], r['L']) for r in sel})}"),
               covers=["after lazy training", "term: initialization", "LeCun", "He", "NTK"] if inside else [],
               config={**fz.LAZY, "cells": sorted({(r["m"], r["L"]) for r in sel})},
               tightness="max over cells of seed-mean PT/(dev + T_init)",
               hypotheses={"events invoked by the tested steps": "none (triangle inequality, Jensen, Lemma 5's exact "
                                                                     "expectation; the deviation term is measured)",
                           **_status_summary(sel),
                           "max per-network PT/(P0 + dev) (triangle inequality)": tri,
                           "max rel. weight change": max(r["max rel change"] for r in sel),
                           "max dev share of dev + T_init": max(r["dev share"] for r in sel),
                           "max |PT/P0 - 1|": max(abs(r["PT/P0 - 1"]) for r in sel),
                           "production path": _production_path(agg)},
               note=("cells with m ≥ L³ ln m; their hypothesis status is unknown (Lemma 4's ω range and the borrowed "
                     "lemmas' events carry unspecified constants), which the tested steps do not use" if inside else
                     "cells below m ≥ L³ ln m, the range of the lemmas Lemma 4 borrows: outside the hypotheses, reported only"))
    rejected, per = _companion_pt_le_p0(record, rows)
    assert res[True] <= 1.0 and res[False] <= 1.0, res
    assert rejected, per


# A configuration where the training-deviation term is a material share of the bound dev + T_init: the residual to fit
# is MATERIAL_Y_REL × the init output scale (instead of 0.03) at widths where the run stays lazy (rel. change ≤ 0.1).
MATERIAL_Y_REL = 0.8  # dev grows a little slower than δ: at L = 2, δ = 0.03 gave dev/T_init ≈ 0.02, δ = 0.6 a share ≥ 0.24
MATERIAL_SHARE = 0.25


def _material_cells(ctx):
    # at δ = 0.8 and L = 2 (seed 0): max relative weight change 0.081 (m = 4096), 0.057 (m = 8192); deviation share
    # 0.35 (standard schemes) and 0.30 (NTK). Deeper cells at these widths (m × m hidden layers × seeds × schemes)
    # exceed the CPU budget
    return ctx.pick(quick=[(4096, 2), (8192, 2)], full=[(4096, 2), (8192, 2), (16384, 2)])


@pytest.mark.claim("zhu2022/thm-1")
def test_decomposition_material_deviation(ctx, record):
    """Theorem 1's decomposition where the training-deviation term matters: lazy runs (max rel. weight change ≤ 0.1,
    asserted) that fit a residual of relative size MATERIAL_Y_REL, in cells inside m ≥ L³ ln m, so that the deviation
    term is ≥ 25 % of dev + T_init (the precondition: at least one lazy cell reaches it; the shares run 0.25–0.35 over
    seeds 0–7, 0.246 in one cell at seed 7; a draw where no cell reaches it is reported as not applicable). Checked: seed-mean PT ≤ dev + T_init; the shares
    are recorded. The deviation term enters at its measured value: its bound by Lemma 4 (unspecified constant) stays an
    untested part of the theorem. Companion: 'PT ≤ P0' (the deviation term dropped) must be violated by some
    network of every initialisation (training changes P there)."""
    cfg = {"y_rel": MATERIAL_Y_REL, **ctx.pick(quick={}, full={"seeds": 5, "n": 100, "n_test": 1000, "steps": 3000})}
    cells = _material_cells(ctx)
    assert all(lazy.within_borrowed_lemmas(m, L) for m, L in cells)
    agg = _agg(fz.lazy_sweep(cells, ctx.device, ctx.dtype, ctx.seed, cfg))
    full_table = _decomposition_table(agg)
    # the theorem is about lazy training: a cell whose run left the lazy regime at this draw (max rel. change > 0.1;
    # 0.081 at m = 4096 for seed 0, 0.113 for seed 2) is outside its hypotheses, reported, and not judged
    table = [r for r in full_table if r["max rel change"] <= lazy.LAZY_MAX_REL_CHANGE]
    outside = [r for r in full_table if r["max rel change"] > lazy.LAZY_MAX_REL_CHANGE]
    if not table:
        record("not-applicable", table=full_table, config={**fz.LAZY, **cfg, "cells": cells}, evidence="consistency",
               inside=False, inside_reason="no cell stayed lazy at this draw (the theorem's lazy-training hypothesis)",
               note=("precondition not met at this draw: no cell stayed lazy (max rel. change "
                     f"{min(r['max rel change'] for r in full_table):.3f} > {lazy.LAZY_MAX_REL_CHANGE}); no verdict"))
        return
    rel = max(r["max rel change"] for r in table)
    share = min(r["dev share"] for r in table)
    if max(r["dev share"] for r in table) < MATERIAL_SHARE:  # the check's precondition failed at this draw: reported
        record("not-applicable", table=full_table, config={**fz.LAZY, **cfg, "cells": cells}, evidence="consistency",
               inside="unknown", inside_reason="the check's own precondition (a material deviation share) failed: no verdict",
               note=(f"precondition not met at this draw: the deviation term is below {MATERIAL_SHARE:.0%} of dev + T_init "
                     f"in every lazy cell (max {max(r['dev share'] for r in table):.3f}); no verdict"))
        return
    worst = max(r["PT/(dev+T_init)"] for r in table)
    judged = {str(r.get("scheme", "")).lower() for r in table}
    record("holds" if worst <= 1.0 else "violated", observed=worst, bound=1.0, table=table, evidence="test", inside=True,
           inside_reason=(f"the judged cells are lazy (max rel. weight change {rel:.3f} ≤ {lazy.LAZY_MAX_REL_CHANGE}) and "
                          "inside m ≥ L³ ln m; the tested steps (triangle, Jensen, Lemma 5) invoke no event and the deviation "
                          "term is measured, so Lemma 4's undecidable events are not used"),
           covers=["after lazy training", "term: initialization"]
           + [part for key, part in (("lecun", "LeCun"), ("he", "He"), ("ntk", "NTK")) if key in judged],
           config={**fz.LAZY, **cfg, "cells": cells}, tightness="max over cells of seed-mean PT/(dev + T_init)",
           hypotheses={"events invoked by the tested steps": "none (triangle inequality, Jensen, Lemma 5's exact "
                                                                 "expectation; the deviation term is measured)",
                       **_status_summary(table),
                       "min dev share of dev + T_init": share, "max dev share": max(r["dev share"] for r in table),
                       "max rel. weight change": rel, "max PT/P0": max(r["PT/P0 - 1"] for r in table) + 1,
                       "production path": _production_path(agg)},
           note=(f"training-deviation term {share:.0%}–{max(r['dev share'] for r in table):.0%} of dev + T_init (lazy: max "
                 f"rel. change {rel:.3f}); the term is measured, its Lemma-4 bound is not tested"
                 + (f"; {len(outside)} of {len(full_table)} cells left the lazy regime at this draw (rel. change > "
                    f"{lazy.LAZY_MAX_REL_CHANGE}): outside the hypotheses, recorded apart" if outside else "")))
    if outside:  # the cells that left the lazy regime at this draw: beside the verdict, never counted
        wo = max(r["PT/(dev+T_init)"] for r in outside)
        record("holds" if wo <= 1.0 else "violated", reading="outside-hypotheses", observed=wo, bound=1.0, table=outside,
               evidence="test", inside=False,
               inside_reason=f"lazy training fails: max rel. weight change {max(r['max rel change'] for r in outside):.3f} > "
                             f"{lazy.LAZY_MAX_REL_CHANGE}",
               config={**fz.LAZY, **cfg, "cells": cells}, tightness="max over the non-lazy cells of seed-mean PT/(dev + T_init)")
    rows = fz.lazy_sweep(cells, ctx.device, ctx.dtype, ctx.seed, cfg)
    rejected, per = _companion_pt_le_p0(record, rows)
    assert worst <= 1.0, worst
    assert rejected, per


def _log_g(s: str, m: int, L: int) -> float:
    """log of Lemma 4's shape g(m, L) = √(L³(m+1)) e^{−m²/((m+1)L³)} β_1 β_L γ^{L−2} √m, written here apart from
    ``lazy.lemma4_shape`` / ``lazy.lemma4_log_shape`` (the stds and γ of the scheme from ``schemes``)."""
    st_ = schemes.stds(s, fz.LAZY["d"], m, L)
    gam = schemes.gamma(st_[1], m) if L > 2 else 1.0
    return (1.5 * math.log(L) + 0.5 * math.log(m + 1) - m * m / ((m + 1) * L ** 3) + math.log(st_[0])
            + math.log(st_[-1]) + (L - 2) * math.log(gam) + 0.5 * math.log(m))


def _shape_pin(agg) -> float:
    """Largest relative gap of the sweep's g (and log g) against :func:`_log_g` over the cells."""
    gap = 0.0
    for (s, L, m), a in agg.items():
        lg = _log_g(s, m, L)
        gap = max(gap, abs(a["log_shape4"] - lg) / max(1.0, abs(lg)))
        if a["shape4"] > 1e-250:
            gap = max(gap, abs(a["shape4"] / math.exp(lg) - 1))
    return gap


@pytest.mark.claim("zhu2022/thm-1")
def test_theorem1_bound_and_trends(ctx, record):
    """Reading "reconstructed" (both records): the Lemma-4 constant is an unspecified O(·), so it is fitted here, and the
    depth consequences are the abstract's, not a printed statement of the source.
    Theorem 1's bound with the Lemma-4 constant Ĉ fitted on the smallest width of each (init, L):
    PT ≤ Ĉ g(m, L) + T_init on every (lazy) cell; companion: T_init replaced by the wrong T_init·2^{−(L−2)/2}
    (γ² = mβ²/4) must be violated on every initialisation at the deepest L.
    Depth consequences (second record), each a 99% (Bonferroni over the three) CI of the per-layer slope of a
    log-quantity, fitted over all seeds of the widths common to all depths with a fixed effect per width:
    LeCun 'depth helps' — slope of log PT < 0; He/NTK 'depth hurts' — carried in the theorem by the lazy term
    (T_init does not depend on L), so judged on the measured deviation term: slope of log dev > 0
    (the slope of log PT is reported: at δ = 0.03 it is dominated by the init term's Jensen slack)."""
    agg = _lazy_sweep_checked(ctx, record)
    shape_gap = _shape_pin(agg)  # the g(m, L) the bound uses against its formula written in this file
    table, worst, worst_mut = [], 0.0, {}
    Lmax = max(k[1] for k in agg)
    for (s, L) in sorted({(k[0], k[1]) for k in agg}):
        ms = sorted(k[2] for k in agg if k[:2] == (s, L))
        a0 = agg[(s, L, ms[0])]
        C = a0["dev"] / a0["shape4"]
        for m in ms:
            a = agg[(s, L, m)]
            bound = C * a["shape4"] + a["T_init"]
            worst = max(worst, a["PT"] / bound)
            if L == Lmax:
                b_mut = C * a["shape4"] + a["T_init"] * 2.0 ** (-(L - 2) / 2)
                worst_mut[s] = max(worst_mut.get(s, 0.0), a["PT"] / b_mut)
            table.append({"scheme": s, "L": L, "m": m, "PT/eps": a["PT"], "C_hat g": C * a["shape4"], "T_init": a["T_init"],
                          "PT/bound": a["PT"] / bound, "init-term share of bound": a["T_init"] / bound})
    # The catalog's vacuity criterion: the bound exceeds the trivial ε E‖J_T‖ = PT/c_d (|gᵀu| ≤ ε‖g‖).
    cd = pt.c_d(fz.LAZY["d"])
    vac = [(r["scheme"], r["L"], r["m"]) for r in table if r["PT/eps"] / r["PT/bound"] > r["PT/eps"] / cd]
    ok_bound = worst <= 1.0
    verdict = ("vacuous" if vac else "holds") if ok_bound else "violated"
    below = sorted({(m, L) for (_, L, m) in agg if not lazy.within_borrowed_lemmas(m, L)})
    inside_fit = (False if below else "unknown")
    why_fit = ((f"cells below m ≥ L³ ln m are included: {below}; " if below else "") + "Lemma 4's events (ω range, "
               "borrowed lemmas) are undecidable from a run, and its constant is fitted here")
    record(verdict, observed=worst, bound=1.0, table=table, reading="reconstructed", evidence="test",
           inside=inside_fit, inside_reason=why_fit,
           finding_type="vacuous" if verdict == "vacuous" else "",
           tightness="max over cells of PT/(Ĉ g + T_init), Ĉ fitted on the smallest width of each (init, L)",
           config={**fz.LAZY, "cells": _cells(ctx)},
           hypotheses={"cells where the bound exceeds the trivial eps E|J_T|": vac, "production path": _production_path(agg),
                       "max rel. gap of g(m, L) against its formula in the check": shape_gap,
                       **_status_summary(_decomposition_table(agg))},
           finding=(f"the bound exceeds the trivial ε E‖J_T‖ in {len(vac)} cells" if vac else ""),
           note=(f"every judged cell lazy (max rel. weight change {max(a['rel_max'] for a in agg.values()):.3f}); the deviation "
                 f"term is at most {max(r['C_hat g'] / (r['C_hat g'] + r['T_init']) for r in table):.1%} of the bound, "
                 "so the bound is carried by the exact init term (Lemma 4's shape is checked in test_lemma4_deviation_decay)"))
    rej = all(v > 1 for v in worst_mut.values())
    record("holds" if rej else "violated", role="companion", observed=min(worst_mut.values()), bound=1.0,
           note=f"wrong init term T_init·2^(-(L-2)/2) at L={Lmax}: min over initialisations of max PT/bound = "
                f"{min(worst_mut.values()):.3f} (> 1: rejected) " + str({k: round(v, 3) for k, v in worst_mut.items()}))
    # depth consequences
    # per initialisation: the lazy widths common to all its depths (a non-lazy cell drops out of its own scheme only)
    common = {s: sorted(set.intersection(*[{k[2] for k in agg if k[0] == s and k[1] == L}
                                            for L in {k[1] for k in agg if k[0] == s}])) for s in ("lecun", "he", "ntk")}
    tcrit = lambda dof: float(st.t.ppf(1 - TREND_ALPHA / (2 * 3), dof))
    trends = {}
    for s, key, sign in (("lecun", "log_PT", -1), ("he", "log_dev", 1), ("ntk", "log_dev", 1)):
        b, se, dof = _slope_in_depth(agg, s, key, common[s])
        lo, hi = b - tcrit(dof) * se, b + tcrit(dof) * se
        trends[f"{s}: slope of {key[4:]} per layer"] = {"slope": b, "CI": (lo, hi), "claimed sign": sign,
                                                        "confirmed": (hi < 0) if sign < 0 else (lo > 0)}
    for s in ("he", "ntk"):
        b, se, dof = _slope_in_depth(agg, s, "log_PT", common[s])
        trends[f"{s}: slope of PT per layer (reported)"] = {"slope": b, "CI": (b - tcrit(dof) * se, b + tcrit(dof) * se)}
    ok_trend = all(v["confirmed"] for v in trends.values() if "confirmed" in v)
    record("holds" if ok_trend else "violated", observed=trends["lecun: slope of PT per layer"]["slope"], bound=0.0,
           ratio=None, hypotheses={"widths": common, **trends}, reading="reconstructed", evidence="test",
           rejects=("the wrong signs: 'LeCun depth hurts' (slope of log PT ≥ 0) and 'He/NTK depth helps' (slope of log dev "
                    "≤ 0), each excluded by its 99 % family-wise interval (note)"),
           inside=inside_fit, inside_reason=why_fit,
           tightness="per-layer slopes of log PT (LeCun) and log dev (He, NTK) with 99% family-wise CIs",
           note="; ".join(f"{k}: {v['slope']:+.3f} [{v['CI'][0]:+.3f}, {v['CI'][1]:+.3f}]" for k, v in trends.items()))
    assert ok_bound, worst
    assert rej, worst_mut
    assert ok_trend, trends
    assert shape_gap <= 1e-12, shape_gap


def _welch_less(a, b):
    """One-sided Welch t-test of H0: mean(a) ≥ mean(b) against mean(a) < mean(b); p-value."""
    return float(st.ttest_ind(a, b, equal_var=False, alternative="less").pvalue)


def _ratio_rows(agg, s, L, ms, nrows):
    """Rows comparing dev(m) with dev(m_fit = ms[0]) for m in ms[1:]: Welch lower 1 − RATIO_ALPHA (Bonferroni over nrows) bound of
    log dev(m)/dev(m_fit) minus the log of the predicted ratio g(m)/g(m_fit)."""
    out = []
    a0 = agg[(s, L, ms[0])]
    for m in ms[1:]:
        a = agg[(s, L, m)]
        d_ = a["log_dev"].mean() - a0["log_dev"].mean()
        v1, v0 = a["log_dev"].var(ddof=1) / a["n"], a0["log_dev"].var(ddof=1) / a0["n"]
        dof = (v1 + v0) ** 2 / (v1 ** 2 / (a["n"] - 1) + v0 ** 2 / (a0["n"] - 1))
        lo = d_ - float(st.t.ppf(1 - RATIO_ALPHA / nrows, dof)) * math.sqrt(v1 + v0)
        pred = a["log_shape4"] - a0["log_shape4"]  # log of g(m)/g(m_fit); g underflows for m ≫ L³
        out.append({"scheme": s, "L": L, "m_fit": ms[0], "m": m, "dev(m_fit)": a0["dev"], "dev(m)": a["dev"],
                    "log10 predicted dev(m)/dev(m_fit)": pred / math.log(10), "measured dev(m)/dev(m_fit)": math.exp(d_),
                    f"log10 lower {LOWER} bound of measured/predicted": (lo - pred) / math.log(10), "_lo": lo, "_pred": pred})
    return out


LEM4_MIN_LOG10 = 20.0  # size pinned: the shape is refuted by a factor of at least 10^20 (observed ~10^200 at L = 2)


@pytest.mark.claim("zhu2022/lem-4")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="Lemma 4's shape √(L³(m+1))e^{−m²/((m+1)L³)} (read from Eq. (10); the statement line is illegible): "
                          "its decay in m is contradicted on lazy runs inside the borrowed lemmas' width range m ≥ L³ ln m "
                          "(the deviation is nearly width-independent)")
def test_lemma4_deviation_decay(ctx, record):
    """lem-4 (reading "reconstructed": the statement line is illegible, the shape is Eq. (10) of the proof): fit the
    constant of g(m, L) = √(L³(m+1)) e^{−m²/((m+1)L³)} β_1β_Lγ^{L−2}√m on the smallest admissible width of each (init, L)
    and compare at the larger admissible widths: the shape requires dev(m)/dev(m_fit) ≤ g(m)/g(m_fit). Admissible: the
    range of the Allen-Zhu–Li–Song lemmas the proof borrows, m ≥ L³ ln m (lazy.within_borrowed_lemmas); the same
    comparison on cells below it is reported apart (reading "outside-hypotheses"), never counted. Refuted where the
    lower 1 − RATIO_ALPHA (Bonferroni over the rows) confidence bound of dev(m)/dev(m_fit) (Welch interval on log dev over seeds)
    exceeds g(m)/g(m_fit); the size is pinned: by a factor ≥ 10^20. Control (plain assert): the same procedure
    accepts a width-independent shape."""
    agg = _lazy_sweep_checked(ctx, record)
    groups = sorted({(k[0], k[1]) for k in agg})
    inside = {g: sorted(k[2] for k in agg if k[:2] == g and lazy.within_borrowed_lemmas(k[2], g[1])) for g in groups}
    outside = {g: sorted(k[2] for k in agg if k[:2] == g) for g in groups if any(
        not lazy.within_borrowed_lemmas(k[2], g[1]) for k in agg if k[:2] == g)}
    nrows = sum(max(0, len(ms) - 1) for ms in inside.values())
    assert nrows > 0, "no (init, L) with two widths inside m ≥ L³ ln m: extend the grid"
    table = [r for g, ms in inside.items() if len(ms) > 1 for r in _ratio_rows(agg, *g, ms, nrows)]
    worst_lo = max(r["_lo"] - r["_pred"] for r in table)
    flat_lo = max(r["_lo"] for r in table)
    meas = [r["measured dev(m)/dev(m_fit)"] for r in table]
    devfits = {}
    for s in ("he", "ntk", "lecun"):
        ms = inside[(s, 2)]
        f = fit_power(ms, [agg[(s, 2, m)]["dev"] for m in ms])
        devfits[s] = {"slope": f.exponent, "ci": f.ci}
    slopes = ", ".join(f"{k} {v['slope']:.2f}" for k, v in devfits.items())
    lem4_ok = worst_lo <= 0.0
    for r in table:
        r.pop("_lo"), r.pop("_pred")
    record("holds" if lem4_ok else "expected-failure", observed=worst_lo / math.log(10), bound=0.0, ratio=None,
           reading="reconstructed", finding_type="" if lem4_ok else "proof-gap", covers=["decay in m"],
           evidence="test", inside="unknown",
           inside_reason=("every compared cell is lazy (rel. weight change ≤ 0.1) and inside m ≥ L³ ln m; Lemma 4's own "
                          "events (‖W′_l − W_l‖₂ ≤ ω in the borrowed range, the Allen-Zhu–Li–Song events) carry "
                          "unspecified constants and are undecidable from a run"),
           false_alarm=RATIO_ALPHA,  # the control assert flat_lo <= 0 (a deviation not rising in m) fails at most this often
           table=table, hypotheses={**_status_summary([r for r in _decomposition_table(agg) if r["m >= L^3 ln m"]]),
                                    "log-log slope of dev vs m at L=2 (admissible widths)": devfits,
                                    "range of measured dev(m)/dev(m_fit)": [min(meas), max(meas)],
                                    "admissible widths per (init, L)": {f"{g[0]} L={g[1]}": ms for g, ms in inside.items()},
                                    "control: max lower bound of dev(m)/dev(m_fit) (flat shape accepted if <= 1)": math.exp(min(flat_lo, 700.0))},
           config={**fz.LAZY, "cells": _cells(ctx), "admissible": "m >= L^3 ln m"},
           tightness=f"log10 of the max over admissible rows of the lower {LOWER} bound of (measured dev ratio)/(predicted g ratio); > 0 refutes",
           finding=("" if lem4_ok else
                    f"On lazy runs (rel. weight change ≤ 0.1) inside the borrowed lemmas' range m ≥ L³ ln m, the deviation term "
                    f"decays far more slowly in m than e^(-m²/((m+1)L³)): the measured ratio dev(m)/dev(m_fit) exceeds the "
                    f"predicted one by a factor of at least 10^{worst_lo / math.log(10):.1f} ({LOWER} bound); measured ratios lie in "
                    f"[{min(meas):.2f}, {max(meas):.2f}]; dev ∝ m^slope at L=2 with slopes {slopes}. Reconstruction: the "
                    "statement line is illegible, the shape is Eq. (10). Hypothesis status of these runs: unknown (the "
                    "proof's ω range and the borrowed lemmas' events carry unspecified constants)."))
    out_rows = [r for g, ms in outside.items() if len(ms) > 1 for r in _ratio_rows(agg, *g, ms, max(1, nrows))]
    out_rows = [r for r in out_rows if not (lazy.within_borrowed_lemmas(r["m_fit"], r["L"]) and lazy.within_borrowed_lemmas(r["m"], r["L"]))]
    for r in out_rows:
        r.pop("_lo"), r.pop("_pred")
    record("not-applicable", reading="outside-hypotheses", table=out_rows, config={"below": "m < L^3 ln m"},
           evidence="consistency", inside=False, inside_reason="m_fit or m below m ≥ L³ ln m (the borrowed lemmas' range)",
           note=("the same comparison where m_fit or m lies below the borrowed lemmas' range m ≥ L³ ln m (reported, not "
                 "counted): log10 lower bounds of measured/predicted " +
                 ", ".join(f"{r['scheme']} L={r['L']} m={r['m']}: {r[f'log10 lower {LOWER} bound of measured/predicted']:+.1f}"
                           for r in out_rows)))
    assert flat_lo <= 0.0, "control: the check must accept a width-independent deviation"
    assert lem4_ok or worst_lo / math.log(10) >= LEM4_MIN_LOG10, f"finding size 10^{worst_lo / math.log(10):.1f} below 10^20"
    assert_claim(lem4_ok, "Lemma 4's width shape (exponential decay in m) contradicted on lazy runs inside m ≥ L³ ln m")


@pytest.mark.claim("zhu2022/thm-1")
def test_width_tradeoff_information(ctx, record):
    """Information, never a finding against the paper (reading "reconstructed"): the width trade-off that the abstract
    reads off Theorem 1 (the lazy term ∝ √m e^{−m/L³} rises up to m ≈ L³/2, then falls) is the shape of an upper bound
    with an unspecified constant; without a matching lower bound it predicts nothing about the measured deviation. And
    the whole rise region lies below m ≥ L³ ln m, the range of the lemmas the proof borrows (outside the hypotheses).
    Reported: per (init, L) whose g peaks inside the grid, the measured dev ratio between the smallest width and the
    grid's argmax of g vs the shape's ratio, with a one-sided Welch p-value of 'dev falls'. Control (plain assert):
    the same Welch test on data planted with g's shape does not call it falling."""
    agg = _lazy_sweep_checked(ctx, record)
    groups = sorted({(k[0], k[1]) for k in agg})
    tests = []
    for (s, L) in groups:
        ms = sorted(k[2] for k in agg if k[:2] == (s, L))
        g = [agg[(s, L, m)]["log_shape4"] for m in ms]
        mp = ms[int(np.argmax(g))]
        if mp == ms[0]:
            continue
        a0, ap = agg[(s, L, ms[0])], agg[(s, L, mp)]
        planted = a0["log_dev"] + (ap["log_shape4"] - a0["log_shape4"])
        tests.append({"scheme": s, "L": L, "m_small": ms[0], "argmax g on grid": mp, "L^3/2": L ** 3 / 2,
                      "both widths m >= L^3 ln m": lazy.within_borrowed_lemmas(ms[0], L) and lazy.within_borrowed_lemmas(mp, L),
                      "measured argmax dev": ms[int(np.argmax([agg[(s, L, m)]["dev"] for m in ms]))],
                      "shape's dev ratio": math.exp(ap["log_shape4"] - a0["log_shape4"]), "measured dev ratio": ap["dev"] / a0["dev"],
                      "p (dev falls)": _welch_less(ap["log_dev"], a0["log_dev"]),
                      "p planted (control)": _welch_less(planted, a0["log_dev"])})
    assert tests, "no (init, L) whose g peaks inside the width grid: extend the grid"
    lvl = TREND_ALPHA / len(tests)
    falls = [t for t in tests if t["p (dev falls)"] < lvl]
    inside = sum(t["both widths m >= L^3 ln m"] for t in tests)
    record("not-applicable", reading="reconstructed", observed=max(t["measured dev ratio"] for t in tests), bound=None,
           ratio=None, table=tests, config={"alpha (family)": TREND_ALPHA, "per test": lvl}, evidence="consistency",
           inside=False, inside_reason=(f"information: {len(tests) - inside}/{len(tests)} comparisons lie below m ≥ L³ ln m "
                                        "(the rise region m ≲ L³/2 is below the borrowed lemmas' range); no bound"),
           # no false_alarm: the planted control is the a0 sample shifted up by the shape's rise (> 0 at argmax g), so
           # its one-sided Welch p of 'falls' is > 1/2 on every draw; it can fail only if the test's direction is wrong
           tightness="measured dev(argmax g)/dev(smallest m) beside the shape's ratio (information)",
           note=(f"upper-bound shape, not a prediction: the measured deviation falls (one-sided Welch, family-wise "
                 f"{TREND_ALPHA}) in {len(falls)}/{len(tests)} (init, L) where the shape rises; {inside}/{len(tests)} of these "
                 "comparisons lie inside m ≥ L³ ln m (the rise region m ≲ L³/2 is below the borrowed lemmas' range). "
                 "Not held against Theorem 1."))
    assert all(t["p planted (control)"] >= lvl for t in tests), "control: planted g-shaped data must not be called falling"
