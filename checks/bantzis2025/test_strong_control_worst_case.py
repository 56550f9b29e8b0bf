"""Worst case of strong control (``bantzis2025/prop-A.5``, ``bantzis2025/prop-3.3``): a near-equality family,
an adversarial search over the sublevel set, and the printed bounds pinned against exact rational evaluations.

A.5's proof bounds every ratio (tail(W_ℓ), tail(Zσ_ℓ), ν_ℓ) of every θ in the sublevel set
S = {‖θ‖² ≤ L, −Tr[GᵀY_θ(X_in)] ≥ ‖Gv‖‖u‖ − ‖G‖ε} by B_A5 = 2δ, and B_A5 ≤ B_3.3 = 8‖G‖ε/(s* − ‖G‖ε).
Solver optima sit far below B (the run's value is in test_prop33_as_stated_worst_case_over_data), where a constant 2×
(even 100×) too tight would pass. Here:

- the near-equality family of ``_strong_control`` (rank-one X_in, G almost orthogonal to v, E aligned with −G)
  reaches ratio ρ/((1+ρ)²(ρ+ε)) against B_A5 for tail(W_1) and for ν_1 (0.988 at α = 0.01, ε = 1e-5): a B_A5
  halved (δ instead of 2δ) is violated; the measured ratio equals that closed form;
- on the same data s* = α + ε is known exactly (the rank-one network reaches the upper bound of A.5 (i)–(ii)), so
  B_3.3(s*) is exact: the family reaches 1/(2(1+ρ)²) of B_3.3, and the certified optimum itself has ratios ≈ 0;
- projected gradient ascent (Adam, sphere, retraction into S along the segment to a point of S) of each ratio over
  S on two data sets; the largest value found per part is recorded; tail(Zσ_ℓ) stays ≪ B_A5 (it is second order in
  ε: relu of a perturbed rank-one non-negative input), so that part is loose and its bound is pinned instead;
- B_A5 and B_3.3 as computed by the package are compared with exact rational evaluations of the printed formulas
  at the same inputs (``_strong_control.exact_*``): a changed constant fails even where no measurement can see it.
"""
import math

import pytest
import torch

from theory.papers.bantzis2025 import bounds as B
from theory.papers.bantzis2025 import localized as loc
from theory.papers.bantzis2025.ratios import ratios

from . import _strong_control as SC

N, D, L, WIDTH = 10, 4, 4, 6
FAMILY = [(0.3, 1e-3), (0.05, 1e-4), (0.01, 1e-5)]     # (α, ε): ρ = ε/α = 3.3e-3, 2e-3, 1e-3
TAU = 1e-9          # q = (1−ρ)/(1+ρ)·(1+τ): strictly inside S (margin ≈ 1e-9·s ≫ float64 rounding of −Tr ~ 1e-16)
RATIO_TOL = 1e-9    # measured ratio vs closed form: SVD of ≤ 10×6 matrices, t ≥ 4e-3 → relative error ≲ 1e-13


def _t_closed(rho):
    """The family's ratio numerator 1 − q², q = (1−ρ)(1+τ)/(1+ρ): 4ρ/(1+ρ)² up to the margin τ."""
    return 1 - ((1 - rho) * (1 + TAU) / (1 + rho)) ** 2


def _ref_parts(th, X):
    """(E, 3) reference ratios (SVD, :func:`ratios`): max over layers of tail(W), tail(Zσ), ν."""
    r = ratios(th, X)
    return torch.stack([r.tail_W.nan_to_num(0).amax(1), r.tail_Z.nan_to_num(0).amax(1), r.nu.nan_to_num(0).amax(1)], 1)


def _family_points(ctx, gen):
    """Per (α, ε): the data, B_A5, B_3.3(s*) with s* certified, and the two near-equality networks and the optimum."""
    out = []
    for alpha, eps in FAMILY:
        u, v, w, G, X = SC.family_data(N, D, alpha, eps, gen, ctx.dtype, ctx.device)
        gn, gv, un, vn = float(G.norm()), float((G @ v).abs()), float(u.norm()), float(v.norm())
        a, rho = gv * un, gn * eps / (gv * un)
        thr = a - gn * eps
        q = (1 - rho) / (1 + rho) * (1 + TAU)
        x = torch.randn(D, generator=gen, dtype=ctx.dtype, device=gen.device).to(ctx.device)
        x = x - (x @ u) * u
        x = x / x.norm()
        nets = {"tail(W_1)": SC.chain(u, L, WIDTH, q, math.sqrt(1 - q * q) * x),
                "ν_1": SC.chain(u, L, WIDTH, q, -math.sqrt(1 - q * q) * u)}
        opt = SC.chain(u, L, WIDTH, 1.0, torch.zeros_like(u))
        s_lo, s_up = float(SC.speed(opt, X, G)), a + gn * eps
        out.append(dict(alpha=alpha, eps=eps, u=u, v=v, G=G, X=X, gn=gn, gv=gv, un=un, vn=vn, rho=rho, thr=thr, q=q,
                        nets=nets, opt=opt, s_lo=s_lo, s_up=s_up, bA5=B.bA5(gn, gv, un, vn, eps),
                        b33=B.b33(gn, eps, s_up)))
    return out


def _aligned_data(ctx, gen, eps):
    """The solver checks' data: u, v = |N(0, I)| normalized, ‖E‖_F = ε, G = −v + 0.3·N(0, I)/√N."""
    u = torch.randn(D, generator=gen, dtype=ctx.dtype, device=gen.device).abs()
    v = torch.randn(N, generator=gen, dtype=ctx.dtype, device=gen.device).abs()
    u, v = u / u.norm(), v / v.norm()
    E = torch.randn(N, D, generator=gen, dtype=ctx.dtype, device=gen.device)
    E = E / E.norm() * eps
    G = -v + 0.3 * torch.randn(N, generator=gen, dtype=ctx.dtype, device=gen.device) / math.sqrt(N)
    return [t.to(ctx.device) for t in (u, v, G, torch.outer(v, u) + E)]


@pytest.mark.claim("bantzis2025/prop-A.5")
def test_A5_sublevel_worst_case(record, ctx):
    gen = record.generator({"test": "A.5 worst case"})
    fam = _family_points(ctx, gen)
    rows, pins, found = [], [], {p: 0.0 for p in SC.PARTS}
    # (1) near-equality family: each network is in S, and its ratio equals the closed form ρ/((1+ρ)²(ρ+ε))
    for f in fam:
        # A.5 (ii) is an equality here: ‖Y(X_in) − Y(uvᵀ)‖ = ε and ΔTr = ‖G‖ε at the rank-one network
        Xr = torch.outer(f["v"], f["u"])
        dY = float((loc.output(f["opt"], f["X"]) - loc.output(f["opt"], Xr)).norm())
        dT = float((loc.localized_loss(f["opt"], f["X"], f["G"]) - loc.localized_loss(f["opt"], Xr, f["G"])).abs())
        assert abs(dY / f["eps"] - 1) <= 1e-9 and abs(dT / (f["gn"] * f["eps"]) - 1) <= 1e-9, (dY, dT)
        pins.append(SC.pin(f["bA5"], SC.exact_bA5(f["gn"], f["gv"], f["un"], f["vn"], f["eps"])))
        for name, th in f["nets"].items():
            assert float(loc.sq_norm(th)) <= L * (1 + 1e-12) and float(SC.speed(th, f["X"], f["G"])) >= f["thr"]
            t = float(_ref_parts(th, f["X"]).max())
            closed = _t_closed(f["rho"]) / (4 * (f["rho"] + f["eps"]))     # B_A5 = 4(ρ + ε): g = ‖u‖ = ‖v‖ = 1, a = α
            ratio = t / f["bA5"]
            rows.append({"points": f"near-equality, {name} carries the deficit", "α": f["alpha"], "ε": f["eps"],
                         "ρ = ‖G‖ε/(‖Gv‖‖u‖)": f["rho"], "ratio / B_A5": ratio, "closed form": closed,
                         "‖ΔY‖/ε at the rank-one net": dY / f["eps"]})
            found["tail(W_l)" if name.startswith("tail") else "nu_l"] = max(
                found["tail(W_l)" if name.startswith("tail") else "nu_l"], ratio)
            assert abs(ratio / closed - 1) <= RATIO_TOL, (ratio, closed)
    # (2) adversarial search over S on the family data (α = 0.05, ε = 1e-3) and on the solver checks' aligned data
    starts, steps = ctx.pick(quick=4, full=32), ctx.pick(quick=40, full=600)
    u, v, w, G, X = SC.family_data(N, D, 0.05, 1e-3, gen, ctx.dtype, ctx.device)
    sets = [("family data α = 0.05, ε = 1e-3", u, v, G, X, 1e-3),
            ("aligned data ε = 5e-3", *_aligned_data(ctx, gen, 5e-3), 5e-3)]
    for label, u, v, G, X, eps in sets:
        gn, gv, un, vn = float(G.norm()), float((G @ v).abs()), float(u.norm()), float(v.norm())
        bA5 = B.bA5(gn, gv, un, vn, eps)
        pins.append(SC.pin(bA5, SC.exact_bA5(gn, gv, un, vn, eps)))
        th, sel, thr = SC.sublevel_search(X, G, u, v, eps, L, WIDTH, starts, steps, gen)
        # every reported value is the reference ratio at an explicit θ of S (checked here, not assumed)
        assert bool((SC.speed(th, X, G) >= thr).all()) and bool((loc.sq_norm(th) <= L * (1 + 1e-12)).all())
        P = _ref_parts(th, X) / bA5
        row = {"points": f"adversarial search ({starts} starts × {steps} steps per part), {label}", "ε": eps,
               "B_A5": bA5}
        for j, p in enumerate(SC.PARTS):
            m = float(P[sel == j, j].max())
            row[f"max {p} / B_A5"] = m
            found[p] = max(found[p], m)
        rows.append(row)
    worst = max(found.values())
    pin_err = max(pins)
    ok = worst <= 1 + 1e-12 and pin_err <= SC.PIN_TOL
    lim = max(r["ratio / B_A5"] for r in rows if "ratio / B_A5" in r)
    record("holds" if ok else "violated", observed=worst, bound=1.0, reading="proof-step", table=rows,
           covers=list(SC.PARTS), evidence="test", worst_case=True,
           inside=True, inside_reason="every θ judged is in the sublevel set S (−Tr[GᵀY_θ(X_in)] ≥ ‖Gv‖‖u‖ − ‖G‖ε and "
                                      "‖θ‖² ≤ L, checked per point), u, v > 0 entrywise, ‖E‖_F = ε: the events step "
                                      "(iii) of A.5's proof invokes",
           config={"L": L, "width": WIDTH, "N": N, "d": D, "family (α, ε)": FAMILY, "search starts per part": starts,
                   "search steps": steps, "optimizer": "Adam lr 3e-3 + sphere + retraction into S"},
           tightness=f"largest ratio / B_A5 over S: tail(W_ℓ) {found['tail(W_l)']:.3f}, ν_ℓ {found['nu_l']:.3f} "
                     f"(near-equality family; → 1 as ε → 0), tail(Zσ_ℓ) {found['tail(Zsigma_l)']:.1e} (loose: second "
                     f"order in ε); B_A5 equals its exact rational evaluation to {pin_err:.1e}",
           note="Sublevel form of A.5 (the proof's step (iii), true for every θ in S ∋ θ*): no point of S found "
                f"exceeds B_A5; the near-equality family reaches {lim:.3f} of it (matching the closed form "
                "ρ/((1+ρ)²(ρ+ε)) to 1e-9), so B_A5 halved is violated. tail(Zσ_ℓ) never comes near (relu of a "
                "nearly rank-one non-negative input stays rank one to O(ε²)); for it the bound's value is pinned "
                "against exact arithmetic. A.5 (ii) holds with equality (‖ΔY‖ = ε, ΔTr = ‖G‖ε) at the rank-one net.")
    assert ok and lim >= 0.98, (found, pin_err, lim)


@pytest.mark.claim("bantzis2025/prop-A.5")
def test_A5_halved_bound_rejected(record, ctx):
    """Companion: B_A5 with δ in place of 2δ (the analogue of 8 → 4; evaluated by ``exact_bA5(const=1)``, not by
    the package) is violated by the near-equality points (ratio ≈ 1.98 against it), and the exact pin of the package's
    B_A5 rejects the halved formula at every configuration."""
    gen = record.generator({"test": "A.5 worst case"})
    fam = _family_points(ctx, gen)
    over, pin_rej = [], []
    for f in fam:
        half = float(SC.exact_bA5(f["gn"], f["gv"], f["un"], f["vn"], f["eps"], const=1))
        t = max(float(_ref_parts(th, f["X"]).max()) for th in f["nets"].values())
        over.append(t / half)
        pin_rej.append(SC.pin(half, SC.exact_bA5(f["gn"], f["gv"], f["un"], f["vn"], f["eps"])) > SC.PIN_TOL)
    rejected = max(over) > 1 and all(pin_rej)
    record("holds" if rejected else "violated", role="companion", observed=max(over), bound=1.0,
           config={"wrong version": "B_A5 = δ (half the proof's 2δ)"},
           note=f"δ in place of 2δ: the near-equality points reach {max(over):.3f} > 1 against it; the exact pin "
                "differs by 1/2 — rejected by both.")
    assert rejected, (over, pin_rej)


@pytest.mark.claim("bantzis2025/prop-3.3")
@pytest.mark.claim("bantzis2025/prop-A.5")
def test_prop33_worst_case_and_exact_bound(record, ctx):
    """Prop 3.3 on data whose s* is certified exactly (s* = α + ε: the rank-one network reaches A.5's upper bound).
    As stated (at the optimum): the certified optimum has every ratio ≈ 0 — B_3.3 is loose there without limit.
    Over the sublevel set S (what the proof controls, reading 'proof-step'): the near-equality points reach
    1/(2(1+ρ)²) of B_3.3(s*), so the printed constant 8 is about 2× loose even over S (a constant 4 would not be
    violated by any point found). The value of B_3.3 is therefore pinned: against its exact rational evaluation at
    every configuration, and through the measured ratio, which must equal the closed form 1/(2(1+ρ)²)."""
    gen = record.generator({"test": "A.5 worst case"}, claim="bantzis2025/prop-3.3")
    fam = _family_points(ctx, gen)
    rows, pins, at_opt, sub = [], [], [], []
    for f in fam:
        assert abs(f["s_up"] - f["s_lo"]) <= 1e-12 * f["s_up"], (f["s_lo"], f["s_up"])     # s* certified exactly
        pins.append(SC.pin(f["b33"], SC.exact_b33(f["gn"], f["eps"], f["s_up"])))
        r_opt = float(_ref_parts(f["opt"], f["X"]).max())
        t = max(float(_ref_parts(th, f["X"]).max()) for th in f["nets"].values())
        closed = _t_closed(f["rho"]) / (8 * f["rho"])                 # B_3.3(s* = α + ε) = 8ε/α = 8ρ
        at_opt.append(r_opt / f["b33"])
        sub.append(t / f["b33"])
        assert abs(sub[-1] / closed - 1) <= RATIO_TOL, (sub[-1], closed)
        rows.append({"α": f["alpha"], "ε": f["eps"], "s* (certified)": f["s_up"],
                     "B_3.3(s*)": f["b33"], "max ratio at the certified optimum": r_opt,
                     "ratio/B_3.3 at the optimum": at_opt[-1], "max ratio/B_3.3 over S (near-equality)": sub[-1],
                     "closed form 1/(2(1+ρ)²)": closed, "B_3.3 vs exact rational": pins[-1]})
    pin_err = max(pins)
    ok_opt = max(at_opt) <= 1
    worst_row = max(rows, key=lambda r: r["ratio/B_3.3 at the optimum"])      # observed and bound of one row
    # as stated, at certified optima (the only points where θ = θ* is known): on a non-negative rank-one input every
    # optimum is a rank-one chain with Z = Zσ (‖f(u)‖ ≤ Π‖W_ℓ‖_op‖u‖ ≤ Π‖W_ℓ‖_F‖u‖ with equality only so), ratios 0
    cert = dict(observed=worst_row["max ratio at the certified optimum"], bound=worst_row["B_3.3(s*)"],
                covers=["tail(W_l)", "tail(Zsigma_l)", "nu_l"], table=rows, finding_type="loose", evidence="consistency",
                inside=True, inside_reason=(f"θ* certified: the rank-one network reaches the upper bound ‖Gv‖‖u‖ + ‖G‖ε "
                                            f"on s* (A.5 (i)–(ii)) to {max(abs(f['s_up'] - f['s_lo']) / f['s_up'] for f in fam):.1e}; "
                                            "u, v > 0, ‖E‖_F = ε, ‖θ‖² = L"),
                config={"L": L, "width": WIDTH, "family (α, ε)": FAMILY,
                        "data": "rank-one X_in, G almost ⊥ v (see module)"},
                tightness=f"at certified optima every ratio ≤ {max(at_opt):.1e}·B_3.3(s*) (loose without limit); over "
                          f"the sublevel set the worst found is {max(sub):.3f}·B_3.3 (≈ 1/2: the constant 8 is 2× loose there)",
                note="s* is certified exactly (lower = upper bound to 1e-12), so θ* is a certified optimum and B_3.3(s*) is "
                     "exact. Consistency, not a test: the input is exactly rank one and non-negative, so every ratio at "
                     "the optimum is 0 by construction and no B could fail here; the worst case over data at solver optima "
                     "is in test_prop33_as_stated_worst_case_over_data (optimality not certified there), the worst "
                     "case over S in the proof-step record.")
    record("holds" if ok_opt else "violated", claim="bantzis2025/prop-3.3", **cert)
    record("holds" if ok_opt else "violated", claim="bantzis2025/prop-A.5", **cert)
    ok_sub = max(sub) <= 1 and pin_err <= SC.PIN_TOL
    record("holds" if ok_sub else "violated", claim="bantzis2025/prop-3.3", observed=max(sub), bound=1.0,
           reading="proof-step", table=rows, finding_type="loose", evidence="test",
           inside=True, inside_reason="every θ judged is in the sublevel set S (checked per point), s* certified "
                                      "exactly, u, v > 0, ‖E‖_F = ε",
           tightness=f"worst ratio/B_3.3(s*) over S found {max(sub):.4f} = 1/(2(1+ρ)²) (closed form to 1e-9); "
                     f"B_3.3 equals its exact rational evaluation to {pin_err:.1e}",
           note="B_3.3 applied to every θ of the sublevel set (the proof gives ratio ≤ B_A5 ≤ B_3.3 there). The "
                "near-equality family reaches ≈ 1/2 of it, so the printed 8 is about 2× loose even over S and a "
                "constant 4 would not be caught by any measurement; a changed constant is caught by the exact "
                "rational pin and by the closed-form match of the measured ratio (it would move by the same factor).")
    assert ok_opt and ok_sub and max(sub) >= 0.49, (rows, pin_err)


@pytest.mark.claim("bantzis2025/prop-3.3")
def test_prop33_wrong_constants_rejected(record, ctx):
    """Companion: B_3.3 with 8 → 4 is rejected by the exact pin and by the closed-form match of the measured ratio
    (not by the measured ratio alone: it stays ≈ 1/(1+ρ)² < 1 — the printed 8 is ~2× loose); with 8 → 2 the
    near-equality points violate the bound over S (ratio ≈ 2)."""
    gen = record.generator({"test": "A.5 worst case"})
    fam = _family_points(ctx, gen)
    rows = []
    for f in fam:
        t = max(float(_ref_parts(th, f["X"]).max()) for th in f["nets"].values())
        closed = _t_closed(f["rho"]) / (8 * f["rho"])
        for c in (4, 2):
            wrong = float(SC.exact_b33(f["gn"], f["eps"], f["s_up"], const=c))
            rows.append({"ε": f["eps"], "constant": c, "measured ratio over S": t / wrong,
                         "pin rejects": SC.pin(wrong, SC.exact_b33(f["gn"], f["eps"], f["s_up"])) > SC.PIN_TOL,
                         "closed-form match rejects": abs((t / wrong) / closed - 1) > RATIO_TOL,
                         "measurement rejects": t / wrong > 1})
    r4 = [r for r in rows if r["constant"] == 4]
    r2 = [r for r in rows if r["constant"] == 2]
    rejected = all(r["pin rejects"] and r["closed-form match rejects"] for r in rows) and \
        all(r["measurement rejects"] for r in r2)
    record("holds" if rejected else "violated", role="companion", observed=max(r["measured ratio over S"] for r in r2),
           bound=1.0, table=rows, config={"wrong versions": "8 → 4, 8 → 2"},
           note=f"8 → 4: measured ratio over S up to {max(r['measured ratio over S'] for r in r4):.3f} (< 1, not visible "
                "to a measurement: the printed constant is ~2× loose), rejected by the exact pin and the closed form; "
                f"8 → 2: violated over S (ratio {max(r['measured ratio over S'] for r in r2):.3f}).")
    assert rejected, rows


@pytest.mark.claim("bantzis2025/prop-3.3")
@pytest.mark.claim("bantzis2025/prop-A.5")
def test_prop33_as_stated_worst_case_over_data(record, ctx):
    """Prop 3.3 (= Prop A.5's statement) as stated, at θ*, judged at the worst data found: a batched bilevel search
    (``_strong_control.optimum_search``) over u, v ≥ 0, E with ‖E‖_F = ε and G, ε anywhere in the non-vacuous range
    (B_3.3 < 1 at the upper end of s*), with θ̂* re-optimized (normalized OPT-SPEED, restarts on the ensemble axis)
    for every data set; observed = max over data sets and rounds of every ratio at θ̂* (reference SVD) over
    B_3.3(s* = ‖Gv‖‖u‖ + ‖G‖ε), the smallest value the bound can take. Only θ̂* in the sublevel set S are judged. θ̂* is
    a solver point, not a certified optimum: the record is shown beside the verdict (inside "unknown"); at certified
    optima (test_prop33_worst_case_and_exact_bound) every ratio is 0."""
    gen = record.generator({"test": "3.3 worst case over data"}, claim="bantzis2025/prop-3.3")
    n_data, restarts = ctx.pick(quick=24, full=256), ctx.pick(quick=8, full=64)
    steps, rounds, polish = ctx.pick(quick=400, full=3000), ctx.pick(quick=6, full=30), ctx.pick(quick=100, full=500)
    hist, f = SC.optimum_search(N, D, L, WIDTH, n_data, restarts, steps, rounds, polish, gen, ctx.dtype, lr=0.1)
    best, rows, judged = 0.0, [], 0
    for k, h in enumerate(hist):
        vals = []
        for b in range(n_data):
            if not bool(h["in S"][b]):
                continue
            th = [w[b:b + 1] for w in h["theta"]]
            # the events of the proof on this point: ‖θ‖² = L, u, v ≥ 0, ‖E‖_F = ε
            assert abs(float(loc.sq_norm(th)) - L) <= 1e-9 * L and float(h["u"][b].min()) >= 0 and float(h["v"][b].min()) >= 0
            vals.append(float(_ref_parts(th, h["X"][b]).max()) / float(f[b]))
        judged += len(vals)
        if vals:
            best = max(best, max(vals))
        rows.append({"round": k, "data sets with θ̂* in S (judged)": len(vals), "of": n_data,
                     "max ratio / B_3.3": max(vals) if vals else None,
                     "median ratio / B_3.3": float(torch.tensor(vals).median()) if vals else None})
    assert rows[0]["data sets with θ̂* in S (judged)"] >= n_data // 2, rows
    ok = best <= 1
    cfg = {"L": L, "width": WIDTH, "N": N, "d": D, "data sets": n_data, "restarts per data set": restarts,
           "solver steps": steps, "rounds (data step + re-polish)": rounds, "polish steps": polish,
           "ε": "f·‖Gv‖‖u‖/(8‖G‖), f log-uniform in [0.01, 0.9] (B_3.3 at the upper end of s* equals f)"}
    common = dict(observed=best, bound=1.0, table=rows, evidence="test", worst_case=True, finding_type="loose",
                  covers=list(SC.PARTS), config=cfg,
                  inside="unknown", inside_reason="θ̂* is a solver point in the sublevel set S (checked), not a certified "
                                                  "global optimum; u, v ≥ 0, ‖E‖_F = ε and ‖θ‖² = L checked",
                  tightness=f"max over data and rounds of ratio(θ̂*)/B_3.3 at the smallest possible bound: {best:.2e} "
                            f"({judged} judged points): the printed bound is loose by ~{1 / max(best, 1e-300):.0f}× at "
                            "solver optima",
                  note="At θ* the ratios come from the perturbation at second order while B_3.3 is first order in ε; no "
                       "measurement at an optimum can see the constant 8 (the proof-step records over S pin it).")
    record("holds" if ok else "violated", claim="bantzis2025/prop-3.3", **common)
    record("holds" if ok else "violated", claim="bantzis2025/prop-A.5", **common)
    assert ok, rows
