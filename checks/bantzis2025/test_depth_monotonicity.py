"""Depth monotonicity of the optimal escape speed (``bantzis2025/prop-3.2``, ``bantzis2025/prop-A.3``).

The proof is a construction (EXTEND): from any depth-L θ with L0(θ) < 0 a depth-(L+k) θ' on its sphere
with L0(θ') ≤ L0(θ) and rank-one layers from L−1 on. The construction is checked on random θ and on
OPT-SPEED optima; s*(L) itself is bracketed: exact at L = 2 (F6), certified lower bounds above (every
reported speed is achieved by an explicit point), and the warm-started chain ŝ_ws(L) =
max(cold start, polish of EXTEND(θ̂_{L−1})) is non-decreasing because the construction is.
"""
import math

import numpy as np
import pytest
import torch

from theory.papers.bantzis2025 import example1 as ex
from theory.papers.bantzis2025 import extend as EX
from theory.papers.bantzis2025 import localized as loc
from theory.papers.bantzis2025 import opt_speed as O

from ._data import dataset

REL = 1e-12  # float64: L0 is a sum of O(N·width) products of O(1) terms; rounding ≪ 1e-12 relative


def _negative_random(E, dims, X, G, gen):
    th = loc.random_sphere(E, dims, generator=gen, dtype=X.dtype, device=X.device)
    v = loc.localized_loss(th, X, G)
    th[-1] = th[-1] * torch.where(v > 0, -1.0, 1.0).view(-1, 1, 1)   # flip W_L: L0 < 0 (F-sign symmetry)
    return th


def _construction_report(th, X, G, k):
    L = len(th)
    v = loc.localized_loss(th, X, G)
    e = EX.extend(th, X, G, k)
    v2 = loc.localized_loss(e.params, X, G)
    Z, _ = loc.layers(e.params, X)
    ranks = torch.stack([EX.numerical_rank(e.params[l]) for l in range(L - 2, L + k)], 1)
    minZ = torch.stack([Z[l].amin((-1, -2)) for l in range(L - 1, L + k - 1)], 1)  # Z'_ℓ, ℓ = L..L+k−1
    return {
        "tilde_ok": bool((e.tilde_sq_norm <= (L + k) * (1 + REL)).all()),
        "sphere_err": float((loc.sq_norm(e.params) - (L + k)).abs().max()),
        "loss_ok": bool((v2 <= v + REL * v.abs()).all()),
        "rank_one": bool((ranks == 1).all()),
        "nonneg": bool((minZ >= 0).all()),
        # the gain s(θ')/s(θ) over the draws with L0(θ) ≠ 0 (a random deep net can have every ReLU off on X: 0/0),
        # and against L0(θ')/L0(θ) from the two losses evaluated here
        "L0 = 0 draws": int((v == 0).sum()),
        "gain_min": float(e.gain[v != 0].min()), "gain_median": float(e.gain[v != 0].median()),
        "gain_max": float(e.gain[v != 0].max()),
        "gain_err": float((e.gain - v2 / v)[v != 0].abs().max()),
    }


@pytest.mark.claim("bantzis2025/prop-3.2")
def test_extend_construction_on_random_and_optimal_parameters(record, ctx):
    X, G = dataset("gaussian", ctx)
    gen = record.generator({"test": "extend-random"})
    E = ctx.pick(quick=200, full=10_000)
    rows = []
    for L in (2, 3, 5):
        th = _negative_random(E, [3] + [6] * (L - 1) + [1], X, G, gen)
        for k in (1, 2, 3):
            r = _construction_report(th, X, G, k)
            rows.append({"source": "random", "L": L, "k": k, **r})
    # OPT-SPEED optima (circle data, depth 3): the gain is ≈1 there
    Xc, Gc = dataset("circle", ctx)
    opt = O.opt_speed(Xc, Gc, 3, width=6, restarts=16, steps_a=500, steps_b=500, generator=gen)
    good = opt.speeds > 0.1
    th = [w[good] for w in opt.params]
    for k in (1, 2, 3):
        rows.append({"source": "OPT-SPEED (circle, L=3)", "L": 3, "k": k, **_construction_report(th, Xc, Gc, k)})
    ok = all(r["tilde_ok"] and r["loss_ok"] and r["rank_one"] and r["nonneg"] and r["sphere_err"] < 1e-12
             and r["gain_err"] <= REL * r["gain_max"] for r in rows)
    # a construction that works for every θ by design (Prop 3.2 is proved by it): a consistency check of EXTEND
    record("holds" if ok else "violated", observed=min(r["gain_min"] for r in rows), bound=1.0, table=rows,
           evidence="identity",
           covers=["construction: norm ||theta'||^2 = L+k", "construction: L0(theta') <= L0(theta)",
                   "construction: rank-one layers", "construction: Z' = Z'sigma after layer L"],
           tightness="gain s(θ')/s(θ) ≥ 1 (min over all θ); ≈1 at optima, >1 on random θ",
           config={"random θ per depth": E, "width": 6, "k": [1, 2, 3]},
           note="‖θ̃‖² ≤ L+k, ‖θ'‖² = L+k, L0(θ') ≤ L0(θ), W'_{L−1..L+k} rank one, Z'_ℓ ≥ 0 for L ≤ ℓ ≤ L+k−1 "
                "(the output layer has no ReLU and is excluded, as the catalog notes).")
    assert ok, rows


@pytest.mark.claim("bantzis2025/prop-3.2")
def test_construction_check_rejects_wrong_constructions(record, ctx):
    X, G = dataset("gaussian", ctx)
    th = _negative_random(200, [3, 6, 6, 1], X, G, record.generator({"test": "wrong"}))
    v = loc.localized_loss(th, X, G)
    worst = EX.extend(th, X, G, 1, select="max")            # pick the worst neuron instead of argmin T_i
    n_bad = int((loc.localized_loss(worst.params, X, G) > v + REL * v.abs()).sum())
    norescale = EX.extend(th, X, G, 1, rescale=False)         # forget the final rescaling
    sphere_err = float((loc.sq_norm(norescale.params) - 4).abs().max())
    rejected = n_bad > 0 and sphere_err > 1e-6
    record("holds" if rejected else "violated", role="companion", observed=n_bad, bound=0,
           config={"random θ": 200, "L": 3, "k": 1},
           note=f"argmax-T_i selection violates L0(θ') ≤ L0(θ) on {n_bad}/200 θ; without the rescaling "
                f"‖θ'‖² misses L+k by up to {sphere_err:.3f}: the construction test detects both.")
    assert rejected, (n_bad, sphere_err)


@pytest.mark.claim("bantzis2025/prop-A.3")
def test_neuron_decomposition_selection_and_norm(record, ctx):
    X, G = dataset("gaussian", ctx)
    gen = record.generator({"test": "decomposition"})
    E = ctx.pick(quick=300, full=10_000)
    rows, worst_dec, worst_norm = [], 0.0, 0.0
    for L in (2, 3, 5):
        th = _negative_random(E, [3] + [6] * (L - 1) + [1], X, G, gen)
        v = loc.localized_loss(th, X, G)
        d = EX.decompose(th, X, G)
        T = torch.where(torch.isinf(d.T), torch.zeros_like(d.T), d.T)
        dec_err = float(((d.a * d.b * T).sum(1) - v).abs().max() / v.abs().max())
        e = EX.extend(th, X, G, 1)
        S = (d.a * d.b).sum(1)
        sel = S * d.T.min(1).values
        sel_ok = bool((sel <= v + REL * v.abs()).all())
        lower = sum(loc.layer_sq_norms(th)[:, : L - 2].T) if L > 2 else torch.zeros_like(S)
        norm_err = float((e.tilde_sq_norm - (lower + 2 * S + 1)).abs().max())
        ineq_ok = bool((e.tilde_sq_norm <= loc.sq_norm(th) + 1 + 1e-12).all())
        # equality iff per-neuron balance a_i = b_i: build a balanced θ by neuron rescaling (F3) and re-test
        scale = torch.sqrt(d.a / d.b.clamp_min(1e-300))
        bal = [w.clone() for w in th]
        bal[-2] = bal[-2] * scale.unsqueeze(-1)
        bal[-1] = bal[-1] / scale.unsqueeze(1)
        same_f = float((loc.localized_loss(bal, X, G) - v).abs().max() / v.abs().max())
        eb = EX.extend(bal, X, G, 1)
        eq_err = float((eb.tilde_sq_norm - (loc.sq_norm(bal) + 1)).abs().max())
        worst_dec, worst_norm = max(worst_dec, dec_err), max(worst_norm, norm_err, eq_err)
        rows.append({"L": L, "decomposition rel err": dec_err, "selection S·T_i* ≤ L0": sel_ok,
                     "‖θ̃‖² identity err": norm_err, "‖θ̃‖² ≤ ‖θ‖²+k": ineq_ok,
                     "balanced: ‖θ̃‖² = ‖θ‖²+k err": eq_err, "rescaling keeps f (rel)": same_f,
                     "ok": dec_err <= 1e-10 and sel_ok and ineq_ok and norm_err <= 1e-10 and eq_err <= 1e-10
                     and same_f <= 1e-12})
    # float64 sums of ≤ 6·N products: relative errors ~1e-15; 1e-10 leaves room for cancellation in L0
    ok = all(r["ok"] for r in rows)
    record("holds" if ok else "violated", observed=worst_dec, bound=1e-10, table=rows, evidence="identity",
           covers=["(i) neuron decomposition", "(ii) selection S T_i* <= L0", "(iii) norm of the construction"],
           config={"θ per depth": E, "width": 6},
           note="(i) L0 = Σ a_i b_i T_i; (ii) S·T_{i*} ≤ L0; (iii) ‖θ̃‖² = Σ_{ℓ≤L−2}‖W_ℓ‖² + 2S + k ≤ ‖θ‖² + k, "
                "with equality after per-neuron balancing (a_i = b_i). The final rescaling λ ≥ 1 is implicit in A.3.")
    assert ok, rows


@pytest.mark.claim("bantzis2025/prop-A.3")
def test_decomposition_check_rejects_perturbed_identity(record, ctx):
    X, G = dataset("gaussian", ctx)
    th = _negative_random(300, [3, 6, 6, 1], X, G, record.generator({"test": "perturbed"}))
    v = loc.localized_loss(th, X, G)
    d = EX.decompose(th, X, G)
    T = torch.where(torch.isinf(d.T), torch.zeros_like(d.T), d.T)
    wrong = (d.a ** 2 * T).sum(1)                      # a_i² instead of a_i b_i
    err = float((wrong - v).abs().max() / v.abs().max())
    rejected = err > 1e-10
    record("holds" if rejected else "violated", role="companion", observed=err, bound=1e-10,
           note=f"perturbed identity Σ a_i² T_i for Σ a_i b_i T_i: relative error {err:.2g} > 1e-10, the "
                "decomposition test rejects it")
    assert rejected


def _riemannian_step_error(X, G, L, width, gen, eta=0.3):
    """One OPT-SPEED step (production, lr = [η]) from four random sphere points against the step written here on the
    flattened θ: g_T = g − ⟨g,θ⟩θ/‖θ‖², θ' = √L (θ − η g_T)/‖θ − η g_T‖ (g by autograd of L0). A large η makes the
    step's second-order terms visible (a radial part left in g_T changes θ' at O(η²)). Max relative difference."""
    dims = [X.shape[1]] + [width] * (L - 1) + [loc.check_data(X, G).shape[1]]
    params = loc.random_sphere(4, dims, balanced=True, generator=gen, dtype=X.dtype, device=X.device)
    out = torch.cat([w.reshape(4, -1) for w in O.opt_speed(X, G, L, init=params, lr=np.array([eta])).params], 1)
    th = [w.detach().clone().requires_grad_(True) for w in params]
    g = torch.cat([a.reshape(4, -1) for a in torch.autograd.grad(loc.localized_loss(th, X, G).sum(), th)], 1)
    t = torch.cat([w.detach().reshape(4, -1) for w in params], 1)
    v = t - eta * (g - ((g * t).sum(1) / (t * t).sum(1))[:, None] * t)
    ref = math.sqrt(L) * v / v.norm(dim=1, keepdim=True)
    return float(((out - ref).norm(dim=1) / ref.norm(dim=1)).max())


def _depth_chain(name, ctx, gen, depths, width, R, T, step_gen):
    X, G = dataset(name, ctx)
    # the production step against the Riemannian step written in _riemannian_step_error (float64 rounding: 1e-12)
    step_err = _riemannian_step_error(X, G, 3, width, step_gen)
    assert step_err <= 1e-12, f"OPT-SPEED's step differs from the projected-gradient step: {step_err:.3g} (relative)"
    s2, _, n_cand = ex.exact_s2_enumerated(X, G)    # exact s*(2) (F6), activation-pattern enumeration
    # cross-check: an independent search (angle sweep / random directions + Nelder–Mead) only finds achieved
    # values, so it can never exceed the exact maximum (1e-12: float rounding of the two evaluations)
    s2_search, w_search = ex.exact_s2(X, G, sweep=20_000)
    assert s2_search <= s2 * (1 + 1e-12), (s2_search, s2)
    # the returned maximizer is a point of the sphere that achieves the returned value, ‖Gᵀσ(Xw)‖ written out here
    Xn, Gn = X.cpu().numpy(), G.cpu().numpy().reshape(X.shape[0], -1)
    at_w = float(np.linalg.norm(Gn.T @ np.maximum(0.0, Xn @ w_search)))
    assert abs(np.linalg.norm(w_search) - 1) <= 1e-12 and abs(at_w - s2_search) <= 1e-12 * s2_search, (w_search, at_w)
    if X.shape[1] == 2:
        # and it must reach it: s*(2) is invariant under rotating the inputs, and rotated by 1 rad the maximizer is off
        # the 20000-angle grid, where the grid alone misses it by ≥ 5e-5 (relative; circle data, five rotations) and
        # the refined search by ≤ 6e-8: the rotated search must match the exact value to 1e-6
        rot = torch.tensor([[math.cos(1.0), -math.sin(1.0)], [math.sin(1.0), math.cos(1.0)]], dtype=X.dtype, device=X.device)
        s2_rot, _ = ex.exact_s2(X @ rot, G, sweep=20_000)
        assert abs(s2_rot - s2) <= 1e-6 * s2, f"search on rotated inputs {s2_rot!r} vs exact s*(2) {s2!r}"
    scale = 10.0 / float(X.norm() * G.norm())
    cold, chain, rows, prev = [], [], [], None
    for L in depths:
        r = O.opt_speed(X, G, L, width=width, restarts=R, steps_a=T, steps_b=T, generator=gen)
        best_params, best = r.member(r.best_index()), r.best
        ext_speed = polished = None
        if prev is not None:
            e = EX.extend(prev[0], X, G, 1, width=width)
            ext_speed = float(-loc.localized_loss(e.params, X, G))
            p = O.opt_speed(X, G, L, init=e.params, lr=np.geomspace(0.01, 1e-5, T) * scale)
            polished = p.best
            for cand, val in ((e.params, ext_speed), (p.member(0), polished)):
                if val > best:
                    best_params, best = cand, val
        cold.append(r.best)
        chain.append(best)
        rows.append({"dataset": name, "L": L, "cold-start ŝ(L)": r.best, "median over restarts": float(r.speeds.median()),
                     "EXTEND(θ̂_{L−1}) speed": ext_speed, "after polish": polished, "certified chain ŝ_ws(L)": best,
                     "optimizer failure (cold < prev − 1e-4·prev)": bool(len(cold) > 1 and r.best < cold[-2] * (1 - 1e-4)),
                     "exact s*(2) (F6, pattern enumeration)": s2 if L == 2 else None,
                     "s*(2) by search (≤ exact)": s2_search if L == 2 else None,
                     "enumeration candidates": n_cand if L == 2 else None})
        prev = (best_params, best)
    return X, G, s2, cold, chain, rows, ext_speed


@pytest.mark.claim("bantzis2025/prop-3.2")
@pytest.mark.parametrize("name", ["circle", "gaussian", "xor"])
def test_optimal_speed_non_decreasing_in_depth(record, ctx, name):
    if name == "xor" and not ctx.full:
        pytest.skip("XOR-like data (a second plateau dataset) runs in the full profile only")
    depths = list(range(2, ctx.pick(quick=7, full=13)))
    width = ctx.pick(quick=6, full=32)
    R, T = ctx.pick(quick=24 if name == "circle" else 12, full=4096), ctx.pick(quick=600 if name == "circle" else 400,
                                                                              full=5000)
    gen = record.generator({"dataset": name, "width": width})
    X, G, s2, cold, chain, rows, _ = _depth_chain(name, ctx, gen, depths, width, R, T,
                                                  record.generator({"dataset": name, "pin": "one step"}))
    U = ex.lipschitz_bound(X, G)
    # (a) s*(2) is exact (every candidate of the enumeration is a sphere point and the maximizer is one of
    # them), so no certified lower bound may exceed it (1e-9: float rounding of the solver's last step);
    # the solver gets close to it (quick budgets are under-converged: 1e-2, as the catalog's cheap config)
    sane = cold[0] <= s2 * (1 + 1e-9) and cold[0] >= s2 * (1 - ctx.pick(quick=1e-2, full=1e-6))
    # (b) the certified chain is non-decreasing: each step is an EXTEND (L0 can only decrease) then a polish
    inc = np.diff(chain)
    mono = bool(np.all(inc >= -REL * np.abs(chain[:-1])))
    below_U = max(chain) <= U + 1e-9        # every chain value is achieved on the sphere: ≤ the LP upper bound
    ok = mono and below_U
    # strict increase somewhere: a certified lower bound on s*(L), L ≥ 3, above the exact s*(2)
    i_best = int(np.argmax(chain[1:])) + 1
    strict = chain[i_best] > s2 * (1 + 1e-3)
    series = {f"{name}: certified ŝ_ws(L)": {"x": depths, "y": chain, "xlabel": "depth L", "ylabel": "escape speed",
                                             "plot": f"depth-{name}"},
              f"{name}: cold start ŝ(L)": {"x": depths, "y": cold, "xlabel": "depth L", "ylabel": "escape speed",
                                          "plot": f"depth-{name}"}}
    # The certified chain is non-decreasing by construction (EXTEND, then a polish that only keeps improvements), so
    # the record is a consistency check (evidence "identity"). A flat chain is what "non-decreasing" allows: on such
    # data the test has no power (verdict "inconclusive"), it says nothing against the claim and the claim is not
    # vacuous. The circle data certify a strict increase (asserted below), and give the claim its verdict.
    if not ok:
        verdict, finding, ftype = "violated", "", ""
    elif strict:
        verdict, finding, ftype = "holds", "", ""
    else:
        verdict, ftype = "inconclusive", "inconclusive"
        finding = (f"On {name} data no depth is certified above s*(2) = {s2:.6f} (exact): the best certified value "
                   f"max_L ŝ_ws(L) = {max(chain[1:]):.6f} (L = {depths[i_best]}) is within "
                   f"{(max(chain[1:]) / s2 - 1):+.1e} (relative) of it. A flat s*(L) is consistent with 'non-decreasing', "
                   f"so this dataset gives the monotonicity test no power; it is not evidence against the claim.")
    note = (f"s*(2) = {s2:.6f} exact (F6, enumeration of activation patterns); certified chain "
            f"{', '.join(f'L={L}: {v:.6f}' for L, v in zip(depths, chain))}; "
            + (f"strict increase certified: s*({depths[i_best]}) ≥ {chain[i_best]:.6f} > s*(2); " if strict else "")
            + f"upper bound (Lipschitz LP) {U:.4f}; cold-start OPT-SPEED at L=2 reached {cold[0]:.6f}.")
    record(verdict, observed=max(chain), bound=s2, table=rows, series=series, finding=finding, note=note,
           finding_type=ftype, evidence="identity", covers=["s*(L) non-decreasing"],
           tightness="observed = best certified lower bound on s*(L) over L ≥ 2; bound = exact s*(2)",
           config={"dataset": name, "depths": depths, "width": width, "restarts": R, "steps": [T, T]})
    assert sane, (cold[0], s2)
    assert ok, chain
    if name == "circle":
        assert strict, (chain, s2)


# Fixed integer datasets on which plausible slips of the enumeration change the maximum (found by trying them
# against the reference): on S2_FIXED[0] (d = 2) reading the pattern at the wrong point of an arc misses the optimal
# arc (error 1.7%); on S2_FIXED[1] (d = 2) kinks that are not perpendicular to the data do (29%); on S2_FIXED[2]
# lifted to d = 3 a wrong projection onto a kink's great circle does (1.5%).
S2_FIXED = [([[3, 0], [0, 3], [2, -1]], [1, 1, 2]),
            ([[-2, -2], [1, -3], [0, 1]], [1, -1, -2]),
            ([[3, -2], [3, 2], [2, -3]], [-1, 1, 0])]
# A rotation of R^3 with rational entries (Pythagorean triples): the planar data x ↦ R(x, 0) in d = 3 have the same
# s*(2) (f depends on w only through its projection on the data plane), with the optimum off the coordinate axes.
R3 = (np.array([[3, 4, 0], [-4, 3, 0], [0, 0, 5]]) / 5) @ (np.array([[13, 0, 0], [0, 5, 12], [0, -12, 5]]) / 13)


@pytest.mark.claim("bantzis2025/prop-3.2")
def test_exact_s2_enumeration_matches_rational_reference(record, ctx):
    """The exact s*(2) that bounds the depth chain (F6, ``example1.exact_s2_enumerated``) against an independent
    exact evaluation: integer data in d = 2, rational arithmetic (``_s2_reference``); the same data rotated into
    d = 3 (the branch the Gaussian data use); and the closed form s*(2) = √2 − 1 of the circle data (Eq. (6): the
    depth-2 speed of direction φ is |S(φ)|, max √2 − 1)."""
    import math

    from fixtures import data

    from ._s2_reference import s2_squared

    gen = record.generator({"test": "exact s*(2) reference"})
    sets = [(X, G, "fixed") for X, G in S2_FIXED]
    while len(sets) < len(S2_FIXED) + 12:
        N = int(torch.randint(3, 9, (1,), generator=gen, device=gen.device))
        X = torch.randint(-5, 6, (N, 2), generator=gen, device=gen.device).cpu()
        G = torch.randint(-3, 4, (N,), generator=gen, device=gen.device).cpu()
        if int(torch.linalg.matrix_rank(X.double())) == 2:      # non-collinear (arcs < π), else redraw
            sets.append((X.tolist(), G.tolist(), "random"))
    rows, worst = [], 0.0
    for X, G, kind in sets:
        ref = math.sqrt(s2_squared(X, G))
        X2 = np.array(X, float)
        for d, Xd in ((2, X2), (3, np.concatenate([X2, np.zeros((len(X), 1))], 1) @ R3.T)):
            s, w, n = ex.exact_s2_enumerated(torch.tensor(Xd, dtype=torch.float64), torch.tensor(G, dtype=torch.float64))
            # the returned maximizer is a unit vector that attains the returned value
            att = abs(float(np.dot(np.maximum(0.0, Xd @ w), np.array(G, float))))
            err = abs(s - ref) / max(ref, 1.0)
            worst = max(worst, err, abs(att - s) / max(ref, 1.0), abs(float(np.linalg.norm(w)) - 1))
            rows.append({"data": kind, "N": len(X), "d": d, "exact s*(2) (rational)": ref, "enumeration": s,
                         "rel err": err, "candidates": n})
    Xc, Gc = data.unit_circle_8(dtype=torch.float64, device=torch.device("cpu"))
    sc = ex.exact_s2_enumerated(Xc, Gc)[0]
    circ_err = abs(sc - (math.sqrt(2) - 1))
    rows.append({"data": "circle (Example 1)", "N": 8, "d": 2, "exact s*(2) (rational)": math.sqrt(2) - 1,
                 "enumeration": sc, "rel err": circ_err})
    # the comparison has power: dropping the interior maxima (kink points only) is off on the fixed data
    wrong = abs(math.sqrt(s2_squared(*S2_FIXED[0], endpoints_only=True)) - math.sqrt(s2_squared(*S2_FIXED[0])))
    # float64: each value is a sum of ≤ 8 products of integers ≤ 5 (rotated: entries rounded once) with a unit vector,
    # relative rounding ~1e-15; the circle points are float64 literals (√2/2 rounded once): 1e-14 absolute
    ok = worst <= 1e-12 and circ_err <= 1e-14
    record("holds" if ok else "violated", observed=max(worst, circ_err), bound=1e-12, table=rows, evidence="identity",
           config={"datasets": len(sets) + 1},
           note=f"exact s*(2) by activation-pattern enumeration (float) equals the rational evaluation on "
                f"{len(sets)} integer datasets (d = 2, and rotated into d = 3) and √2 − 1 on the circle data; a "
                f"kink-only evaluation is off by {wrong:.3f} on the first fixed dataset (the comparison rejects it).")
    assert wrong > 1e-3, wrong
    assert ok, rows
