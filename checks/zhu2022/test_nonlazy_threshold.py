"""zhu2022/thm-2 (Appendix C): a large output scale α forces non-lazy training.

f = (1/α) W_L φ(⋯φ(W_1x)), 𝓛 = (1/2n)Σ(f − y)², GD to 𝓛 < 1/(8n) (so f_1 ≥ c₀ = 1/4 when y_1 ≥ 1).
Chain: (13) α c₀ ≤ α f_1 ≤ ‖x_1‖Π‖W_l‖₂ ≤ Π‖W_l‖_F; (14) ‖W_l(T*)‖ ≤ ‖W_{l*}(T*)‖ + ‖W_l(0)‖ (balance;
under GD up to the exact O(η) drift of eq-balance); (15) ‖W_{l*}(T*)‖ ≥ (αc₀)^{1/L} − (1/L)Σ‖W_l(0)‖;
item 5: rel. change ≥ ((αc₀)^{1/L} − (1/L)ΣB_l)/B_{l*} − 1 with B_l = √(3/2) m^{3/2} β_l.
"""
from __future__ import annotations

import math

import pytest
import torch

from theory.papers.zhu2022 import nonlazy
from theory.papers.zhu2022 import schemes
from theory.sim.models import DeepMLP
from theory.sim.train import gd, geometric_grid
from theory.device import draw

L, M, D, N = 3, 16, 5, 10
INIT_SCALE = 0.05


def _betas():
    return [INIT_SCALE * s for s in schemes.stds("he1", D, M, L)]


def _train(ctx, gen, alpha, E, steps, lr0=0.05):
    X = draw(torch.randn, N, D, generator=gen, dtype=ctx.dtype, device=ctx.device)
    X = X / X.norm(dim=1, keepdim=True)
    y = 1 + draw(torch.rand, N, generator=gen, dtype=ctx.dtype, device=ctx.device)  # targets in [1, 2], y_1 ≥ 1
    net = DeepMLP.init(E, [D, M, M, 1], stds=_betas(), alpha=1 / alpha, generator=gen, device=ctx.device)
    w0 = [w.clone() for w in net.weights]
    # Lemma 3: α-scaled GD with rate η α^{2/L} has the dynamics of the α = 1 net from init W(0)/α^{1/L}
    lr = lr0 * alpha ** (2 / L)
    keep = lambda t, ps, u: {"W": [p.detach().clone() for p in ps], "f1": u[:, 0]}
    tr = gd(net, X, y, loss="squared", lr=lr, steps=steps, record=geometric_grid(steps, 80), observe=keep)
    return X, y, w0, tr


def _chain(X, w0, tr, alpha):
    """Per member: T* (first recorded step with loss < 1/(8n)) and the chain's quantities there."""
    thr = 1 / (8 * N)
    losses = tr.loss_tensor()  # (T, E)
    E = losses.shape[1]
    rows = []
    Bs = [nonlazy.B_l(M, b) for b in _betas()]
    for e in range(E):
        hit = (losses[:, e] < thr).nonzero()
        if len(hit) == 0:
            rows.append({"member": e, "reached": False})
            continue
        k = int(hit[0])
        W = [w[e] for w in tr.obs["W"][k]]
        W0 = [w[e] for w in w0]
        fro = [float(w.norm()) for w in W]
        spec = [float(torch.linalg.matrix_norm(w, 2)) for w in W]
        n0 = [float(w.norm()) for w in W0]
        af1 = alpha * float(tr.obs["f1"][k][e])
        sup_rel = max(float((tr.obs["W"][j][0][e] - W0[0]).norm()) / n0[0] for j in range(len(tr.steps)))
        drift = [abs((fro[l] ** 2 - fro[0] ** 2) - (n0[l] ** 2 - n0[0] ** 2)) for l in range(L)]
        pairs = [(l, ls) for l in range(L) for ls in range(L) if l != ls]
        # (14) as stated, for every ordered pair (l, l*), without any allowance for the GD balance drift (measured
        # and reported; the slack of (14) is ≈ ‖W_l(0)‖_F, much larger than the drift)
        slack14 = min(fro[ls] + n0[l] - fro[l] for l, ls in pairs)
        # issue 19, shares of the terms: (14) ‖W_l(0)‖/(‖W_l*(T*)‖ + ‖W_l(0)‖), largest over the pairs; (15) the init
        # term (1/L)Σ‖W_l(0)‖ in (αc₀)^{1/L} + (1/L)Σ‖W_l(0)‖ (the sum of the absolute terms of the difference)
        share14 = max(n0[l] / (fro[ls] + n0[l]) for l, ls in pairs)
        fit15, init15 = (alpha * nonlazy.C0) ** (1 / L), sum(n0) / L
        # wrong version of (14) without ‖W_l(0)‖: balance predicts it fails exactly where ‖W_l(0)‖ > ‖W_{l*}(0)‖
        mut14 = sum(fro[l] > fro[ls] for l, ls in pairs)
        rows.append({"member": e, "reached": True, "T*": tr.steps[k], "alpha c0": alpha * nonlazy.C0, "alpha f1": af1,
                     "|x1| prod spec": float(X[0].norm()) * math.prod(spec), "prod fro": math.prod(fro),
                     "(14) slack": slack14, "(14) without |W_l(0)|: violated pairs": mut14,
                     "balance drift (rel)": max(drift) / max(f ** 2 for f in fro),
                     "|W1(0)|": n0[0],
                     "|W1(T*)|": fro[0], "(15) rhs measured": (alpha * nonlazy.C0) ** (1 / L) - sum(n0) / L,
                     "(15) rhs with B_l": (alpha * nonlazy.C0) ** (1 / L) - sum(Bs) / L,
                     "(14) max share of |W_l(0)|": share14, "(15) share of (1/L) sum |W_l(0)|": init15 / (fit15 + init15),
                     "sup rel change W1": sup_rel, "item5 LB measured": ((alpha * nonlazy.C0) ** (1 / L) - sum(n0) / L) / n0[0] - 1,
                     "item5 LB with B_l": nonlazy.item5_lower_bound(alpha, Bs, 0)})
    return rows


ALPHAS = (1.0, 4.0, 100.0)
# Readings of the factor K between m^{3/2} and Σβ_l in the threshold α > (K m^{3/2} Σ_l β_l)^L, printed illegibly
# ("(m3/2 325 | B;)E" in the OCR: "32" before a Σ read as "5"): the factor dropped (the earlier reading here), √(3/2)
# or 3/2 (a fraction whose bar or radical was lost), 3·2, and 32 as printed. The proof's last step closes at every
# L ≥ 2 iff K ≥ 3√(3/2) (nonlazy.threshold_factor_closing): the readings disagree, so the step is inconclusive.
THRESHOLD_READINGS = {"1 (factor dropped)": 1.0, "sqrt(3/2)": math.sqrt(1.5), "3/2": 1.5, "3*2": 6.0, "32": 32.0}


def _threshold(reading: str) -> float:
    """α_thr of the runs' init under a reading of the illegible factor."""
    return nonlazy.alpha_threshold(M, _betas(), THRESHOLD_READINGS[reading])


MATERIAL = 0.25  # issue 19: a term is a material share of a bound at ≥ 25 % of it
NONVACUOUS = 0.1  # a (15) share counts where its right side is ≥ 10 % of its fit term (share of the init term ≤ 0.45)
TERMS = {"14 trained": "term: |W_l*(T*)|_F (trained level, Eq. 14)", "14 init": "term: |W_l(0)|_F (init level, Eq. 14)",
         "15 fit": "term: (alpha c0)^(1/L) (fit level, Eq. 15)", "15 init": "term: (1/L) sum |W_l(0)|_F (init level, Eq. 15)"}


def _links(r):
    """The links of the chain checked on a member that reached the loss level (True: holds)."""
    return {"f1>=c0": r["alpha f1"] >= r["alpha c0"],
            "(13a)": r["alpha f1"] <= r["|x1| prod spec"] * (1 + 1e-12),
            "(13b)": r["|x1| prod spec"] <= r["prod fro"] * (1 + 1e-12),
            "(14)": r["(14) slack"] >= -1e-12,
            "(15)": r["|W1(T*)|"] >= r["(15) rhs measured"] - 1e-12,
            "item5": r["sup rel change W1"] >= r["item5 LB measured"] - 1e-12}


def _term_shares(reached):
    """Largest share of each term of (14) and (15) over the members (the (15) shares only where its right side is at
    least NONVACUOUS of its fit term (αc₀)^{1/L}: at α = 0.03 the right side is ≈ 0 (−0.02…0.003), the link says
    nothing there, and a share of ≈ ½ would count a near-vacuous bound) and the parts covered (share ≥ MATERIAL)."""
    s14 = [r["(14) max share of |W_l(0)|"] for r in reached]
    s15 = [r["(15) share of (1/L) sum |W_l(0)|"] for r in reached
           if r["(15) rhs measured"] >= NONVACUOUS * r["alpha c0"] ** (1 / L)]
    sh = {"14 trained": 1 - min(s14, default=1.0), "14 init": max(s14, default=0.0),
          "15 fit": 1 - min(s15, default=1.0), "15 init": max(s15, default=0.0)}
    return sh, [TERMS[k] for k, v in sh.items() if v >= MATERIAL]


# The conclusion (sup_t rel. change of W_1 ≥ 1) is judged as stated only where α exceeds the threshold under every
# reading of its illegible constant (THRESHOLD_READINGS): α_thr = (K m^{3/2} Σβ_l)^L, largest at K = 32 (2.0e6 here).
# By Lemma 3 the α-scaled run is the α = 1 run from W(0)/α^{1/L}, so a large α is a tiny effective init and a long
# plateau: at rate 0.05·α^{2/L} the loss level takes ~80 000 steps; at 0.5·α^{2/L} it takes 7 500–10 700 (seeds 5, 7;
# 13 s on a loaded CPU). A member still above the loss level at the step budget is reported (Assumption 2 unmet in the
# budget) and not judged.
ALPHA_BIG, BIG_LR0, BIG_STEPS = 3e6, 0.5, 12000


def _gd_stand_in(rows) -> str:
    """The largest relative balance drift of GD (the flow's exact balance, Eq. 14's step) on the members that reached."""
    return f"{max((r['balance drift (rel)'] for r in rows if r['reached']), default=float('nan')):.2e}"


@pytest.mark.claim("zhu2022/thm-2")
def test_chain_13_to_15_along_gd(ctx, record):
    """Every link of the Appendix-C chain on GD runs that reach 𝓛 < 1/(8n), for α ∈ ALPHAS. (14) is checked as stated for
    every ordered pair (l, l*), without an allowance for the O(η) GD balance drift (reported). The links are standard
    inequalities (norm submultiplicativity, balance, AM–GM, triangle) that hold on any run reaching the loss level:
    consistency. The conclusion (sup_t rel. change of W_1 ≥ 1) is the test: judged as stated on GD runs at
    α = ALPHA_BIG, above the threshold under every reading of its illegible constant (THRESHOLD_READINGS), on the
    members that reach the loss level and are on the init events ‖W_l(0)‖_F ≤ B_l; the α ∈ ALPHAS runs lie above the
    threshold only under some readings (recorded apart, inside "unknown").
    Companions (wrong versions that must be rejected on every member that reached the loss level): (13) flipped,
    αf_1 ≥ Π‖W_l‖_F; (14) without ‖W_l(0)‖_F; (15) and item 5 at t = 0 (the fit of Assumption 2 dropped)."""
    E, steps = ctx.pick(quick=4, full=16), ctx.pick(quick=4500, full=40000)
    thr = {k: _threshold(k) for k in THRESHOLD_READINGS}
    table, viol, above = [], [], []
    mut = {"(13) flipped": 0, "(14) without |W_l(0)|": 0, "(15) at t=0": 0, "item 5 at t=0": 0}
    for a in ALPHAS:
        X, y, w0, tr = _train(ctx, record.generator({"alpha": a}), a, E, steps)
        for r in _chain(X, w0, tr, a):
            r["alpha"] = a
            table.append(r)
            if not r["reached"]:
                continue
            ok = _links(r)
            viol += [(a, r["member"], k) for k, v in ok.items() if not v]
            mut["(13) flipped"] += r["alpha f1"] < r["prod fro"]
            mut["(14) without |W_l(0)|"] += r["(14) without |W_l(0)|: violated pairs"] > 0
            mut["(15) at t=0"] += r["|W1(0)|"] < r["(15) rhs measured"]
            mut["item 5 at t=0"] += 0.0 < r["item5 LB measured"]  # sup over [0, 0] of the relative change is 0
            above.append((a, r["sup rel change W1"]))
    reached = [r for r in table if r["reached"]]
    ok = len(reached) >= len(table) // 2 and not viol
    shares, covered = _term_shares(reached)
    record("holds" if ok else "violated", observed=len(viol), bound=0, ratio=None, table=table,
           covers=["chain (13)-(15)"] + covered, evidence="consistency", inside=True,
           inside_reason=(f"Assumption 2 (𝓛 < 1/(8n) reached, y_1 ≥ 1) holds on the {len(reached)}/{len(table)} judged "
                          f"members (the others reported); ‖x_i‖ ≤ 1; GD stand-in for the flow (max relative balance "
                          f"drift {_gd_stand_in(table)})"),
           config={"L": L, "m": M, "d": D, "n": N, "init": f"{INIT_SCALE} x He (beta_L^2=1/m)", "alphas": ALPHAS,
                   "alpha_thr per reading of its constant": thr, "steps": steps},
           hypotheses={"runs reaching loss<1/(8n)": f"{len(reached)}/{len(table)}", "violated links": viol,
                       "sup rel change of W1 per (alpha, member)": above,
                       "max relative GD balance drift": max(r["balance drift (rel)"] for r in reached),
                       "largest term shares of (14), (15)": shares,
                       "(14) max share of |W_l(0)| per alpha": {str(a): max((r["(14) max share of |W_l(0)|"] for r in reached
                                                                            if r["alpha"] == a), default=None) for a in ALPHAS}},
           tightness="links violated (count); every link is a standard inequality on a run reaching the loss level",
           note="runs that do not reach the loss level are reported, not counted (Assumption 2 fails for them). "
                "The init terms of (14), (15) shrink as α grows (non-lazy: trained norms ≫ init; at α = 100 they are "
                "< 10 % of their bound); they are tested at a material share in test_chain_init_terms_material.")
    rejected = all(v == len(reached) for v in mut.values())
    record("holds" if rejected else "violated", role="companion", observed=min(mut.values()), bound=len(reached), ratio=None,
           note="wrong versions rejected on members (of %d reaching the loss level): " % len(reached)
                + ", ".join(f"{k} {v}" for k, v in mut.items()))
    # the ALPHAS runs against the conclusion: above the threshold under the readings whose α_thr is below α only
    mid = [(a, s_) for a, s_ in above if a > min(thr.values())]
    if mid:
        record("holds" if min(s_ for _, s_ in mid) >= 1.0 else "violated", observed=min(s_ for _, s_ in mid), bound=1.0,
               ratio=1.0 / max(min(s_ for _, s_ in mid), 1e-300), evidence="test", inside="unknown",
               inside_reason=(f"α ∈ {sorted({a for a, _ in mid})} exceeds α_thr under the readings "
                              f"{[k for k, v in thr.items() if v < min(a for a, _ in mid)]} of the illegible constant only "
                              f"(thresholds {thr}); Assumption 2 holds on these members (they reached the loss level)"),
               covers=[], tightness="1 / min sup_t rel. change of W_1 (≤ 1 holds)",
               note="the conclusion on runs whose place against the threshold depends on the reading: beside the verdict")
    # the conclusion as stated: α = ALPHA_BIG exceeds α_thr under every reading
    assert ALPHA_BIG > max(thr.values()), (ALPHA_BIG, thr)
    X, y, w0, tr = _train(ctx, record.generator({"alpha": ALPHA_BIG}), ALPHA_BIG, E, ctx.pick(quick=BIG_STEPS, full=4 * BIG_STEPS),
                          lr0=BIG_LR0)
    big = _chain(X, w0, tr, ALPHA_BIG)
    Bs = [nonlazy.B_l(M, b) for b in _betas()]
    init_ok = [all(float(w[e].norm()) <= b for w, b in zip(w0, Bs)) for e in range(E)]
    judged = [r for r, ok0 in zip(big, init_ok) if r["reached"] and ok0]
    assert judged, f"no member at α = {ALPHA_BIG:g} reached the loss level on the init events: {big}"
    worst = min(r["sup rel change W1"] for r in judged)
    ok_c = worst >= 1.0
    record("holds" if ok_c else "violated", observed=worst, bound=1.0, ratio=1.0 / worst, covers=["conclusion above threshold"],
           evidence="test", inside=True,
           inside_reason=(f"α = {ALPHA_BIG:g} > α_thr under every reading of the illegible constant (largest "
                          f"{max(thr.values()):.3g}, factor 32); Assumption 2 reached on {len(judged)}/{E} members (the "
                          f"others not judged: {sum(not r['reached'] for r in big)} above the loss level at the step budget, "
                          f"{sum(not v for v in init_ok)} off the init events); init events ‖W_l(0)‖_F ≤ B_l hold on them; "
                          f"GD stand-in for the flow (rate {BIG_LR0}·α^(2/L), max relative balance drift {_gd_stand_in(big)})"),
           table=[{k: r.get(k) for k in ("member", "reached", "T*", "sup rel change W1", "balance drift (rel)")} for r in big],
           config={"L": L, "m": M, "d": D, "n": N, "alpha": ALPHA_BIG, "lr0": BIG_LR0, "steps": tr.steps[-1],
                   "alpha_thr per reading": thr},
           tightness="1 / min over the judged members of sup_t ‖W_1(t) − W_1(0)‖_F/‖W_1(0)‖_F (≤ 1 holds)",
           note=f"the conclusion holds by a factor {worst:.3g} or more: far above the threshold the run is deeply non-lazy")
    assert len(reached) >= len(table) // 2
    assert not viol, viol
    assert ok_c and all(s_ >= 1.0 for _, s_ in mid), (worst, mid)
    assert rejected, mut


# issue 19: the output scales at which the init terms of (14) and (15) are a material share (≥ 25 %) of their bound.
# The links are deterministic consequences of balance and AM–GM on any run that reaches 𝓛 < 1/(8n), so small α (an
# init large against the fitted weights, Lemma 3) exercises them where ‖W_l(0)‖_F matters. Seeds 0, 3, 11, 17: (14)
# init share 0.33–0.38 at α = 0.03 (0.25–0.28 at 0.1); (15) init share 0.40–0.43 at α = 0.1, where its right side is
# 0.07–0.10. A (15) share counts only where the right side is ≥ 10 % of (αc₀)^{1/L}: at α = 0.03 it is ≈ 0.
ALPHAS_SMALL = (0.03, 0.1)


@pytest.mark.claim("zhu2022/thm-2")
def test_chain_init_terms_material(ctx, record):
    """Links (13)–(15) of the Appendix-C chain at small α, where the init terms ‖W_l(0)‖_F of (14) and
    (1/L)Σ‖W_l(0)‖_F of (15) are ≥ 25 % of their bound (shares recorded; a term is covered where it reaches 25 %).
    The conclusion is not asserted here (α is far below α_thr); item 5 is checked but vacuous (its bound is < 0)."""
    E, steps = ctx.pick(quick=4, full=16), ctx.pick(quick=4500, full=40000)
    table, viol = [], []
    for a in ALPHAS_SMALL:
        X, y, w0, tr = _train(ctx, record.generator({"alpha": a}), a, E, steps)
        for r in _chain(X, w0, tr, a):
            r["alpha"] = a
            table.append(r)
            if r["reached"]:
                viol += [(a, r["member"], k) for k, v in _links(r).items() if not v]
    reached = [r for r in table if r["reached"]]
    shares, covered = _term_shares(reached)
    ok = len(reached) >= len(table) // 2 and not viol
    keys = ("alpha", "member", "reached", "T*", "(14) slack", "(14) max share of |W_l(0)|",
            "(14) without |W_l(0)|: violated pairs", "(15) rhs measured", "(15) share of (1/L) sum |W_l(0)|", "|W1(0)|",
            "|W1(T*)|", "sup rel change W1", "item5 LB measured")
    missing = [v for v in TERMS.values() if v not in covered]
    record("holds" if ok else "violated", observed=len(viol), bound=0, ratio=None,
           table=[{k: r[k] for k in keys if k in r} for r in table],
           covers=["chain (13)-(15)"] + covered, evidence="consistency", inside=True,
           inside_reason=(f"Assumption 2 (𝓛 < 1/(8n) reached, y_1 ≥ 1) holds on the {len(reached)}/{len(table)} judged "
                          f"members; ‖x_i‖ ≤ 1; the links are standard inequalities on such a run (GD stand-in, max "
                          f"relative balance drift {_gd_stand_in(table)})"),
           config={"L": L, "m": M, "d": D, "n": N, "init": f"{INIT_SCALE} x He (beta_L^2=1/m)", "alphas": ALPHAS_SMALL,
                   "steps": steps, "material share": MATERIAL},
           hypotheses={"runs reaching loss<1/(8n)": f"{len(reached)}/{len(table)}", "violated links": viol,
                       "largest term shares of (14), (15)": shares,
                       "(15) share of (1/L) sum |W_l(0)| per alpha (right side ≥ 10 % of fit term)": {
                           str(a): max((r["(15) share of (1/L) sum |W_l(0)|"] for r in reached if r["alpha"] == a
                                        and r["(15) rhs measured"] >= NONVACUOUS * r["alpha c0"] ** (1 / L)), default=None)
                           for a in ALPHAS_SMALL}},
           tightness="links violated (count) where the init terms are a material share of (14), (15)",
           note=(f"largest shares: (14) init {shares['14 init']:.2f}, trained {shares['14 trained']:.2f}; (15) init "
                 f"{shares['15 init']:.2f}, fit {shares['15 fit']:.2f} (where its right side is ≥ 10 % of its fit term)"
                 + (f"; below {MATERIAL:.0%} at this draw, not covered: {missing}" if missing else "")))
    assert len(reached) >= len(table) // 2, table
    assert not viol, viol


@pytest.mark.claim("zhu2022/thm-2")
def test_init_norm_events(ctx, record):
    """‖W_l(0)‖_F ≤ B_l = √(3/2) m^{3/2} β_l over many inits (expected: always; loose by ≈ √m).
    Companion: the bound tightened to 0.9·√(#entries)·β_l (below the typical norm √(#entries)·β_l) must fail for
    most draws of every layer."""
    E = ctx.pick(quick=2000, full=20000)
    net = DeepMLP.init(E, [D, M, M, 1], stds=_betas(), generator=record.generator({"t": "norms"}), device=ctx.device)
    rows, fails = [], 0
    for l, (w, b) in enumerate(zip(net.weights, _betas())):
        r = w.flatten(1).norm(dim=1) / nonlazy.B_l(M, b)
        fails += int((r > 1).sum())
        rows.append({"layer": l + 1, "mean |W|/B": float(r.mean()), "max |W|/B": float(r.max())})
    tight = [(w.flatten(1).norm(dim=1) > 0.9 * math.sqrt(w[0].numel()) * b).float().mean().item()
             for w, b in zip(net.weights, _betas())]
    ok = fails == 0
    record("holds" if ok else "violated", observed=max(x["max |W|/B"] for x in rows), bound=1.0, table=rows,
           covers=["init norm events"], evidence="consistency",
           note=("consistency: ‖W_l(0)‖_F concentrates at √(#entries)β_l, about √m below B_l = √(3/2)m^{3/2}β_l, so an "
                 "exceedance has probability e^{−Θ(m²)}: the record can fail only by a bug in the init or in B_l"),
           inside=True, inside_reason="Gaussian init of Eq. (2) (0.05 × He, β_L² = 1/m): the events' only hypothesis",
           config={"E": E, "m": M, "d": D, "L": L}, tightness="max over draws and layers of ‖W_l(0)‖_F / B_l")
    record("holds" if min(tight) > 0.5 else "violated", role="companion", observed=min(tight), bound=0.5,
           note=f"wrong bound 0.9·√(#entries)·β_l: failure rates per layer {[round(t, 3) for t in tight]} (> 0.5: rejected)")
    assert ok, fails
    assert min(tight) > 0.5


@pytest.mark.claim("zhu2022/thm-2")
def test_threshold_constant_readings(ctx, record):
    """Proof step under each reading of the illegible threshold factor K (reading "reconstructed", one record each): at
    α = α_thr = (K m^{3/2} Σβ_l)^L with equal β_l the item-5 bound equals K L c₀^{1/L}/√(3/2) − 2 (m, β cancel); the
    proof delivers 'relative change ≥ 1' only where it is ≥ 1. It increases in L, so it holds at every L ≥ 2 iff at L = 2,
    iff K ≥ 3√(3/2). Under the readings 3·2 and 32 the step closes at every L; under 1, √(3/2) and 3/2 it fails for
    small L: the constant decides, and it is illegible, so the threshold part is inconclusive (finding "inconclusive"),
    not a proof gap. Values checked for L = 2..8 against the general formula (nonlazy.item5_lower_bound at
    nonlazy.alpha_threshold) and against K·L·4^{−1/L}/√1.5 − 2 written here."""
    kstar = nonlazy.threshold_factor_closing()
    assert abs(kstar - 3 * math.sqrt(1.5)) < 1e-12, kstar  # written here: 3√(3/2) at c₀ = 1/4
    closes, fails = [], []
    for name, K in THRESHOLD_READINGS.items():
        rows = []
        for Lx in range(2, 9):
            closed = nonlazy.item5_at_threshold_equal_betas(Lx, factor=K)
            betas = [0.01] * Lx
            numeric = nonlazy.item5_lower_bound(nonlazy.alpha_threshold(M, betas, K), [nonlazy.B_l(M, b) for b in betas], 0)
            assert abs(closed - numeric) < 1e-9 * max(1, abs(closed)), (name, Lx, closed, numeric)
            pinned = K * Lx * 4.0 ** (-1.0 / Lx) / math.sqrt(1.5) - 2  # independent: (α_thr/4)^{1/L} = 4^{-1/L} K L m^{3/2} β
            assert abs(closed - pinned) < 1e-12 * max(1, abs(closed)), (name, Lx, closed, pinned)
            rows.append({"L": Lx, "item-5 bound at alpha_thr": closed})
        assert all(a["item-5 bound at alpha_thr"] < b["item-5 bound at alpha_thr"] for a, b in zip(rows, rows[1:]))
        low = rows[0]["item-5 bound at alpha_thr"]  # the minimum over L (increasing in L)
        bad = [r["L"] for r in rows if r["item-5 bound at alpha_thr"] < 1]
        assert (not bad) == (K >= kstar), (name, K, bad)
        (fails if bad else closes).append(name)
        record("inconclusive" if bad else "holds", reading="reconstructed", finding_type="inconclusive" if bad else "",
               observed=low, bound=1.0, ratio=(1.0 / low if low > 0 else float("inf")), covers=["threshold constant"],
               evidence="test", inside=True,
               inside_reason=("arithmetic on the proof's last inequality at α = α_thr with equal β_l (m and β cancel): "
                              "no run and no event"),
               config={"reading of the factor": name, "K": K, "K needed for every L >= 2 (3 sqrt(3/2))": kstar},
               table=rows, tightness="item-5 lower bound at α = α_thr, its minimum over L ≥ 2 (at L = 2; needs ≥ 1)",
               note=((f"under this reading the proof's bound at the threshold is below 1 for L in {bad}; under the readings "
                      "where K ≥ 3√(3/2) it closes at every L: the factor is illegible, so inconclusive (not a gap)")
                     if bad else "under this reading the proof's last step closes at every L ≥ 2"))
    assert closes and fails, (closes, fails)  # the readings disagree: that is the finding (inconclusive)
