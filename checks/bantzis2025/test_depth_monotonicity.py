"""Depth monotonicity of the optimal escape speed (``bantzis2025/prop-3.2``, ``bantzis2025/prop-A.3``).

The proof is a construction (EXTEND): from any depth-L θ with L0(θ) < 0 a depth-(L+k) θ' on its sphere
with L0(θ') ≤ L0(θ) and rank-one layers from L−1 on. The construction is checked on random θ, on
OPT-SPEED optima, on its equality case and at the worst s(θ)/s(θ') an adversarial search finds; s*(L) itself is
bracketed: exact at L = 2 (F6), certified lower bounds above (every reported speed is achieved by an explicit
point). Monotonicity of s*(L) is tested without the construction: cold-start ŝ(3) against the exact s*(2) on several
data sets (a certificate, ŝ(3) ≤ s*(3)); the cold-start pairs at L ≥ 3 (circle data) are recorded information; the warm-started chain ŝ_ws(L) = max(cold start, polish of EXTEND(θ̂_{L−1})) is non-decreasing because the
construction is (a consistency record).
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
from ._shared import COLD_R, COLD_STEPS, COLD_WIDTH, POLISH_STEPS, POLISH_TOP, circle_cold_depths

# tests that compute one cached run: xdist keeps each group on one worker (theory.harness.shared_runs)
SHARED_RUNS = {"bantzis2025/circle_cold_depths": ["test_optimal_speed_non_decreasing_in_depth",
                                                "test_cold_start_speed_non_decreasing_in_depth",
                                                "test_cold_start_depth_three_certifies_s2"]}

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


def _inverse_gain_search(X, G, L, width, k, starts, steps, gen, lr=0.02):
    """Projected Adam (rescaled onto ‖θ‖² = L after each step) maximizing s(θ)/s(θ') = L0(θ)/L0(EXTEND(θ, k)) from
    random sphere points with L0 < 0; the best value per start over all iterates with L0(θ) < 0."""
    th = _negative_random(starts, [X.shape[1]] + [width] * (L - 1) + [1], X, G, gen)
    th = [w.clone().requires_grad_(True) for w in th]
    opt = torch.optim.Adam(th, lr=lr)
    best = torch.full((starts,), -math.inf, dtype=X.dtype, device=X.device)
    for _ in range(steps + 1):
        v = loc.localized_loss(th, X, G)
        v2 = loc.localized_loss(EX.extend(th, X, G, k).params, X, G)
        live = v < 0
        r = torch.where(live, v / torch.where(live, v2, torch.ones_like(v2)), torch.zeros_like(v))
        best = torch.where(live, torch.maximum(best, r.detach()), best)
        opt.zero_grad()
        (-r.sum()).backward()
        opt.step()
        with torch.no_grad():
            for w, q in zip(th, loc.to_sphere([w.detach() for w in th])):
                w.copy_(q)
    return best[torch.isfinite(best)]


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
    # the proof's case of equality: a balanced width-one network (one neuron, a = b, S = 1, λ = 1) has gain exactly 1
    eq = []
    for L in (2, 3, 5):
        w = torch.randn(1, 1, 3, generator=gen, dtype=X.dtype, device=gen.device).to(X.device)
        th = [w / w.norm()] + [torch.ones(1, 1, 1, dtype=X.dtype, device=X.device) for _ in range(L - 1)]
        if float(loc.localized_loss(th, X, G)) > 0:
            th[-1] = -th[-1]
        for k in (1, 2, 3):
            r = _construction_report(th, X, G, k)
            rows.append({"source": "equality case (balanced width-one net)", "L": L, "k": k, **r})
            eq.append(r["gain_min"])
    # adversarial search: projected Adam on the sphere maximizing s(θ)/s(θ') = 1/gain (the claim says ≤ 1)
    starts, steps = ctx.pick(quick=32, full=512), ctx.pick(quick=100, full=1000)
    adv = _inverse_gain_search(X, G, 3, 6, 1, starts, steps, gen)
    ok = all(r["tilde_ok"] and r["loss_ok"] and r["rank_one"] and r["nonneg"] and r["sphere_err"] < 1e-12
             and r["gain_err"] <= REL * r["gain_max"] for r in rows)
    worst = max(max(1 / r["gain_min"] for r in rows), float(adv.max()))
    # band: the equality case reaches s(θ)/s(θ') = 1 (float rounding 1e-12), so any strengthening of L0(θ') ≤ L0(θ)
    # (a factor c < 1 on the right) is violated, and nothing found exceeds 1
    tight = max(abs(g - 1) for g in eq) <= 1e-12
    # Prop 3.2's inequality for every θ with L0(θ) < 0 is true by design of the construction: min_i T_i ≤ the weighted
    # mean L0/S (a_i b_i ≥ 0), 2a_ib_i ≤ a_i² + b_i², rescaling factor λ ≥ 1 hold for any numbers (the same inequalities
    # prop-A.3 records as consistency). The companion rejects wrong constructions (argmax selection, no rescaling), not
    # a wrong statement: this record checks the code, evidence "consistency"
    record("holds" if ok and worst <= 1 + REL else "violated", observed=worst, bound=1.0, table=rows,
           evidence="consistency", worst_case=True,
           inside=True, inside_reason="every θ on its sphere ‖θ‖² = L with L0(θ) < 0 (W_L sign-flipped; draws with "
                                      "L0 = 0, dead nets, are excluded from the gain), new widths ≥ 1, k ≥ 1",
           covers=["construction: norm ||theta'||^2 = L+k", "construction: L0(theta') <= L0(theta)",
                   "construction: rank-one layers", "construction: Z' = Z'sigma after layer L"],
           tightness="max over θ of s(θ)/s(θ') = 1/gain (≤ 1 claimed): random θ, optima, adversarial search, equality case",
           config={"random θ per depth": E, "width": 6, "k": [1, 2, 3], "search starts": starts, "search steps": steps},
           note=f"‖θ̃‖² ≤ L+k, ‖θ'‖² = L+k, L0(θ') ≤ L0(θ), W'_{{L−1..L+k}} rank one, Z'_ℓ ≥ 0 for L ≤ ℓ ≤ L+k−1 "
                f"(the output layer has no ReLU and is excluded, as the catalog notes). Worst s(θ)/s(θ') = {worst:.12f}: "
                f"the equality case (balanced width-one net) reaches 1 to {max(abs(g - 1) for g in eq):.1e}; the search "
                f"reached {float(adv.max()):.4f}. Consistency, not a test of the statement: min ≤ weighted mean, 2ab ≤ a² + b² "
                f"and λ ≥ 1 make L0(θ') ≤ L0(θ) hold for any θ (A.3's proof); the companion "
                f"(test_construction_check_rejects_wrong_constructions) shows the check detects a wrong construction.")
    assert ok and worst <= 1 + REL, rows
    assert tight, eq


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
    # (i) is an identity, (ii) min ≤ a weighted mean (a_i b_i ≥ 0), (iii) 2a_ib_i ≤ a_i² + b_i²: true for any numbers
    record("holds" if ok else "violated", observed=worst_dec, bound=1e-10, table=rows, evidence="consistency",
           inside=True, inside_reason="every θ on ‖θ‖² = L with L0(θ) < 0 (W_L sign-flipped), as A.3 assumes",
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


def _riemannian_step_error(X, G, L, width, gen, eta=0.3, normalized=False):
    """One OPT-SPEED step (production, lr = [η]) from four random sphere points against the step written here on the
    flattened θ: g_T = g − ⟨g,θ⟩θ/‖θ‖², θ' = √L (θ − η g_T)/‖θ − η g_T‖ (g by autograd of L0); ``normalized``: the
    angle step θ − η√L g_T/‖g_T‖ instead. A large η makes the step's second-order terms visible (a radial part left
    in g_T changes θ' at O(η²)). Max relative difference."""
    dims = [X.shape[1]] + [width] * (L - 1) + [loc.check_data(X, G).shape[1]]
    params = loc.random_sphere(4, dims, balanced=True, generator=gen, dtype=X.dtype, device=X.device)
    out = torch.cat([w.reshape(4, -1) for w in O.opt_speed(X, G, L, init=params, lr=np.array([eta]),
                                                          normalized=normalized).params], 1)
    th = [w.detach().clone().requires_grad_(True) for w in params]
    g = torch.cat([a.reshape(4, -1) for a in torch.autograd.grad(loc.localized_loss(th, X, G).sum(), th)], 1)
    t = torch.cat([w.detach().reshape(4, -1) for w in params], 1)
    gT = g - ((g * t).sum(1) / (t * t).sum(1))[:, None] * t
    v = t - eta * (math.sqrt(L) * gT / gT.norm(dim=1, keepdim=True) if normalized else gT)
    ref = math.sqrt(L) * v / v.norm(dim=1, keepdim=True)
    return float(((out - ref).norm(dim=1) / ref.norm(dim=1)).max())


def _depth_chain(name, ctx, gen, depths, width, R, T, step_gen, cold_runs=None):
    """The warm-started certified chain ŝ_ws(L) = max(cold start, polish of EXTEND(θ̂_{L−1})). ``cold_runs``
    (circle data): the cold starts of :func:`_shared.circle_cold_depths` instead of a fresh OPT-SPEED per depth."""
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
        if cold_runs is not None:
            c = next(c for c in cold_runs if c["L"] == L)
            best_params, best, med = c["params"], c["best"], c["median"]
        else:
            r = O.opt_speed(X, G, L, width=width, restarts=R, steps_a=T, steps_b=T, generator=gen)
            best_params, best, med = r.member(r.best_index()), r.best, float(r.speeds.median())
        cold_best = best
        ext_speed = polished = None
        if prev is not None:
            e = EX.extend(prev[0], X, G, 1, width=width)
            ext_speed = float(-loc.localized_loss(e.params, X, G))
            p = O.opt_speed(X, G, L, init=e.params, lr=np.geomspace(0.01, 1e-5, T) * scale)
            polished = p.best
            for cand, val in ((e.params, ext_speed), (p.member(0), polished)):
                if val > best:
                    best_params, best = cand, val
        cold.append(cold_best)
        chain.append(best)
        rows.append({"dataset": name, "L": L, "cold-start ŝ(L)": cold_best, "median over restarts": med,
                     "EXTEND(θ̂_{L−1}) speed": ext_speed, "after polish": polished, "certified chain ŝ_ws(L)": best,
                     "optimizer failure (cold < prev − 1e-4·prev)": bool(len(cold) > 1 and cold_best < cold[-2] * (1 - 1e-4)),
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
    cold_runs = circle_cold_depths(ctx.profile, ctx.seed, str(ctx.device)) if name == "circle" else None
    # circle: the cold starts of the cold-start test (width 8), extended and polished here; others: OPT-SPEED per depth
    depths = [c["L"] for c in cold_runs] if cold_runs else list(range(2, ctx.pick(quick=7, full=13)))
    width = COLD_WIDTH if cold_runs else ctx.pick(quick=6, full=32)
    R, T = ctx.pick(quick=12, full=4096), ctx.pick(quick=600 if name == "circle" else 400, full=5000)
    gen = record.generator({"dataset": name, "width": width})
    X, G, s2, cold, chain, rows, _ = _depth_chain(name, ctx, gen, depths, width, R, T,
                                                  record.generator({"dataset": name, "pin": "one step"}), cold_runs)
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
    # the record is a consistency check (evidence "consistency"); the monotonicity itself is tested without the
    # construction in test_cold_start_speed_non_decreasing_in_depth (circle data). A flat chain is what "non-decreasing" allows: on such
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
    pos = all(v > 0 for v in chain)
    record(verdict, observed=max(chain), bound=s2, table=rows, series=series, finding=finding, note=note,
           finding_type=ftype, evidence="consistency",
           inside=pos, inside_reason=(f"each EXTEND step starts from a depth-(L−1) point with L0 < 0 (certified speeds "
                                      f"{min(chain):.4f}..{max(chain):.4f} > 0), equal hidden width {width} at every depth"
                                      if pos else "a chain value is ≤ 0: the construction's hypothesis L0(θ) < 0 fails"),
           tightness="observed = best certified lower bound on s*(L) over L ≥ 2; bound = exact s*(2)",
           config={"dataset": name, "depths": depths, "width": width,
                   "restarts": "circle: the cold-start runs (per depth, see the cold-start record)" if cold_runs else R,
                   "steps": [T, T]})
    assert sane, (cold[0], s2)
    assert ok, chain
    if name == "circle":
        assert strict, (chain, s2)


# Cold-start depth monotonicity (prop-3.2, "s*(L) non-decreasing", tested without the construction). Each depth's
# best cold-start speed ŝ(L) is an explicit point of the sphere (a certified lower bound on s*(L)). A depth is
# *reached* when ŝ(L) is within REACH (relative) of the value certified at that depth: the exact s*(2) at L = 2,
# Eq. (2)'s 1/2 at L = 3 (Example 1, width 4 embedded at width 8), at L ≥ 4 Eq. (2) carried up by EXTEND (a
# certified point of speed 1/2). Over seeds 0–5 the polished cold starts fell 2.1e-5 (L = 2) and 1.6e-5..8.8e-5
# (L ≥ 3) short of those values, so REACH = 2e-4 leaves ≥ 2×. Between reached depths the claim is asserted as
# ŝ(L+1) ≥ ŝ(L)(1 − MONO_TOL): two reached values can differ by under-convergence alone by at most REACH
# relative, and MONO_TOL = 5·REACH; a drop of s* by more than that between reached depths would fail it.
REACH = 2e-4
MONO_TOL = 5 * REACH


@pytest.mark.claim("bantzis2025/prop-3.2")
def test_cold_start_speed_non_decreasing_in_depth(record, ctx):
    X, G = dataset("circle", ctx)
    step_err = _riemannian_step_error(X, G, 3, COLD_WIDTH, record.generator({"pin": "normalized step"}), normalized=True)
    assert step_err <= 1e-12, f"normalized OPT-SPEED step differs from the angle step written here: {step_err:.3g}"
    runs = circle_cold_depths(ctx.profile, ctx.seed, str(ctx.device))
    s2 = ex.exact_s2_enumerated(X, G)[0]
    eq2 = ex.to_torch(ex.rank_two_weights(-1), width=COLD_WIDTH, dtype=X.dtype, device=X.device)
    rows, refs = [], {}
    for c in runs:
        L = c["L"]
        if L == 2:
            ref, src = s2, "exact s*(2) (activation-pattern enumeration)"
        else:
            th = eq2 if L == 3 else EX.extend(eq2, X, G, L - 3, width=COLD_WIDTH).params
            assert abs(float(loc.sq_norm(th)) - L) <= 1e-12 * L
            ref = float(-loc.localized_loss(th, X, G))
            src = "Eq. (2) (Example 1)" if L == 3 else f"EXTEND(Eq. (2), {L - 3})"
        refs[L] = ref
        assert c["best"] <= ref * (1 + 1e-9) or L > 2, (c["best"], s2)   # nothing above the exact s*(2)
        rows.append({"L": L, "cold-start ŝ(L)": c["best"], "before polish": c["before polish"],
                     "certified reference": ref, "reference": src, "deficit (relative)": 1 - c["best"] / ref,
                     "reached (deficit ≤ REACH)": c["best"] >= ref * (1 - REACH), "restarts": c["restarts"],
                     "restarts above 0.499": c["restarts above 0.499"], "median over restarts": c["median"]})
    reached = {r["L"]: r["reached (deficit ≤ REACH)"] for r in rows}
    sh = {r["L"]: r["cold-start ŝ(L)"] for r in rows}
    depths = [r["L"] for r in rows]
    pairs, untested = [], []
    for a, b in zip(depths, depths[1:]):
        if reached[a] and reached[b]:
            pairs.append({"pair": f"{a}→{b}", "ŝ(L+1)/ŝ(L)": sh[b] / sh[a], "holds": sh[b] >= sh[a] * (1 - MONO_TOL)})
        else:
            why = ", ".join(f"L = {x}: cold start {sh[x]:.6f} is {1 - sh[x] / refs[x]:.1e} below its certified "
                            f"{refs[x]:.6f} (> REACH)" for x in (a, b) if not reached[x])
            untested.append(f"{a}→{b} untested ({why}; the full profile's budget is larger)")
    assert reached[2], rows      # every restart converges at L = 2; a miss here is a broken solver, not data
    assert pairs, rows
    observed = min(p["ŝ(L+1)/ŝ(L)"] for p in pairs)
    ok = all(p["holds"] for p in pairs)
    # the wrong version "s*(L) non-increasing / constant in L" is rejected on the same runs: ŝ(3) certifies s*(3) above
    # the exact s*(2) (by more than REACH: not a rounding effect)
    strict = sh[3] > s2 * (1 + REACH)
    series = {"cold start ŝ(L)": {"x": depths, "y": [sh[L] for L in depths], "xlabel": "depth L",
                                  "ylabel": "escape speed", "plot": "depth-circle-cold"},
              "certified reference": {"x": depths, "y": [refs[L] for L in depths], "xlabel": "depth L",
                                      "ylabel": "escape speed", "plot": "depth-circle-cold"}}
    # recorded information, not a test: once both depths passed the REACH gate (ŝ ≥ ref(1 − REACH), ref = 1/2 at L ≥ 3
    # on these data), ŝ(L+1)/ŝ(L) ≥ (1 − REACH)/2/ŝ(L) ≥ 1 − MONO_TOL unless ŝ(L) > (1 − REACH)/(2(1 − MONO_TOL)): the
    # pair assertion is implied by the construction's 1/2 plateau. The certified comparison is the 2→3 record
    # (test_cold_start_depth_three_certifies_s2)
    floor = (1 - REACH) / (2 * (1 - MONO_TOL))
    record("holds" if ok else "violated", observed=observed, bound=1 - MONO_TOL, table=rows + pairs, series=series,
           evidence="consistency", covers=[],
           inside=True, inside_reason=(f"equal hidden width {COLD_WIDTH} at every depth, L ≥ 2, every cold-start "
                                       f"speed > 0 (min {min(sh.values()):.4f}); the claim is judged only between "
                                       f"depths whose cold start reached its certified value (REACH = {REACH:g})"),
           tightness=f"min over tested depth pairs of ŝ(L+1)/ŝ(L) against 1 − MONO_TOL = {1 - MONO_TOL:g}",
           config={"data": "circle (Example 1)", "width": COLD_WIDTH, "depths": depths,
                   "restarts per depth": {r["L"]: r["restarts"] for r in rows},
                   "optimizer": f"normalized OPT-SPEED, angle 0.1→1e-4 over {COLD_STEPS} steps, then the best "
                                f"{POLISH_TOP} restarts 1e-4→1e-8 over {POLISH_STEPS}", "init": "balanced Gaussian (cold)",
                   "REACH": REACH, "MONO_TOL": MONO_TOL},
           note=("Cold start at every depth (no warm start, no construction; restarts batched on the ensemble axis): "
                 + ", ".join(f"ŝ({L}) = {sh[L]:.6f}" for L in depths) + f". Tested pairs: {len(pairs)} of "
                 f"{len(depths) - 1}" + ("; " + "; ".join(untested) if untested else "") + ". The L ≥ 3 pairs are "
                 f"not certificates (s*(L) is not known there): after the REACH gate a pair can fail only if ŝ(L) > "
                 f"{floor:.4f}, above the plateau 1/2 that Eq. (2) and EXTEND certify, so the pairs record information "
                 "(the certified 2→3 comparison on several data sets is test_cold_start_depth_three_certifies_s2)."))
    record("holds" if strict else "violated", role="companion", observed=sh[3], bound=s2 * (1 + REACH),
           config={"wrong version": "s*(L) non-increasing in L (s*(3) ≤ s*(2))"},
           note=f"the cold-start ŝ(3) = {sh[3]:.6f} is a certified lower bound on s*(3) above the exact s*(2) = {s2:.6f}: "
                "the wrong version is rejected on the same runs")
    assert ok, pairs
    assert strict, (sh, s2)


def _batched_cold_depth3(sets, R, width, steps, gen):
    """Cold-start normalized angle steps (0.1 → 1e-4 rad, then 1e-4 → 1e-8) at depth 3 on several data sets of one
    shape at once (data set × restart on the ensemble axis, ``_strong_control._angle_steps``). Per data set: the best
    member (a point of the sphere ‖θ‖² = 3) and its speed re-evaluated on that data set alone."""
    from . import _strong_control as SC

    X = torch.stack([x for x, _ in sets])
    G = torch.stack([g for _, g in sets])
    n, _, d = X.shape
    Xr, Gr = X.repeat_interleave(R, 0), G.repeat_interleave(R, 0)
    th = loc.random_sphere(n * R, [d] + [width] * 2 + [1], balanced=True, generator=gen, dtype=X.dtype, device=X.device)
    etas = np.concatenate([O.angle_schedule(steps[0], 0.1, 1e-4), O.angle_schedule(steps[1], 1e-4, 1e-8)])
    th = SC._angle_steps(th, Xr, Gr, etas.tolist())
    idx = SC.batched_speed(th, Xr, Gr).view(n, R).argmax(1) + torch.arange(n, device=X.device) * R
    out = []
    for b in range(n):
        pt = [w[int(idx[b]):int(idx[b]) + 1] for w in th]
        assert abs(float(loc.sq_norm(pt)) - 3) <= 1e-12 * 3, float(loc.sq_norm(pt))
        out.append(float(-loc.localized_loss(pt, sets[b][0], sets[b][1])))
    return out


# The certified 2→3 comparison of prop-3.2 ("s*(L) non-decreasing"): a cold start (no construction) at L = 3 is an
# explicit point of the sphere, so ŝ(3) ≤ s*(3); s*(2) is exact (enumeration, d ≤ 3). ŝ(3) ≥ s*(2)(1 − REACH) is then
# a certificate that s*(3) ≥ s*(2)(1 − REACH), and a paper wrong by more than REACH at L = 2→3 on any of these data sets
# would fail it. REACH is the solver's reach (documented above: polished cold starts fall ≤ 8.8e-5 short of certified
# values); on data whose optimum is one neuron (Gaussian: s*(3) = s*(2), the equality case of the claim) the ratio sits
# at 1 − (solver deficit), the hardest place for this record.
@pytest.mark.claim("bantzis2025/prop-3.2")
def test_cold_start_depth_three_certifies_s2(record, ctx):
    runs = circle_cold_depths(ctx.profile, ctx.seed, str(ctx.device))
    Xc, Gc = dataset("circle", ctx)
    R, steps = ctx.pick(quick=8, full=64), ctx.pick(quick=(300, 200), full=(800, 600))
    gen = record.generator({"test": "2→3 certified", "R": R, "steps": list(steps)})
    gauss = [("gaussian (the chain's data)", dataset("gaussian", ctx))] + \
        [(f"gaussian #{i}", dataset("gaussian", ctx, generator=record.generator({"data": "gaussian", "i": i})))
         for i in range(1, 4)]
    fixed = [(f"integer d = 2 #{i}", (torch.tensor(x, dtype=ctx.dtype, device=ctx.device),
                                      torch.tensor(g, dtype=ctx.dtype, device=ctx.device)))
             for i, (x, g) in enumerate(S2_FIXED)]
    s3 = {"circle (Example 1)": next(c["best"] for c in runs if c["L"] == 3)}
    for group in (gauss, fixed):
        s3.update(zip([nm for nm, _ in group], _batched_cold_depth3([ds for _, ds in group], R, COLD_WIDTH, steps, gen)))
    data = dict([("circle (Example 1)", (Xc, Gc))] + gauss + fixed)
    rows = []
    for nm, (X, G) in data.items():
        s2 = ex.exact_s2_enumerated(X, G)[0]
        rows.append({"data": nm, "N": X.shape[0], "d": X.shape[1], "exact s*(2)": s2, "cold-start ŝ(3)": s3[nm],
                     "ŝ(3)/s*(2)": s3[nm] / s2})
    worst = min(rows, key=lambda r: r["ŝ(3)/s*(2)"])
    ok = worst["ŝ(3)/s*(2)"] >= 1 - REACH
    rise = [r for r in rows if r["ŝ(3)/s*(2)"] > 1 + REACH]
    record("holds" if ok else "violated", observed=worst["ŝ(3)/s*(2)"], bound=1 - REACH, table=rows,
           evidence="test", covers=["s*(L) non-decreasing"],
           inside=True, inside_reason=(f"equal hidden width {COLD_WIDTH} at L = 2 and 3, d ≤ 3 (s*(2) exact by "
                                       f"enumeration), every ŝ(3) > 0 (min {min(s3.values()):.4f}) is an explicit point "
                                       "with ‖θ‖² = 3 (checked)"),
           tightness=f"min over {len(rows)} data sets of ŝ(3)/s*(2) against 1 − REACH = {1 - REACH:g} (at {worst['data']})",
           config={"data sets": list(data), "width": COLD_WIDTH, "restarts per data set": R,
                   "angle steps": f"0.1→1e-4 over {steps[0]}, then 1e-4→1e-8 over {steps[1]} (circle: the cold-start "
                                  "runs of test_cold_start_speed_non_decreasing_in_depth)", "REACH": REACH},
           note=(f"Certified: ŝ(3) ≤ s*(3), so ŝ(3)/s*(2) ≥ 1 − REACH certifies s*(3) ≥ s*(2)(1 − REACH) on every data set "
                 f"(cold starts, no construction). Strict rise certified on {len(rise)} of {len(rows)} data sets "
                 f"({', '.join(r['data'] for r in rise)}); on the others s*(3) = s*(2) to the solver's reach (the "
                 "equality case of 'non-decreasing'). No data set was found cheaply on which s*(L) keeps rising past "
                 "L = 3: the circle data plateau at Eq. (2)'s 1/2 (cold-start record)."))
    assert ok, rows


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

    from theory import data

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
    record("holds" if ok else "violated", observed=max(worst, circ_err), bound=1e-12, table=rows, evidence="consistency",
           inside=True, inside_reason="a check of the code (exact s*(2) by enumeration against rational arithmetic); "
                                      "s*(2) is defined for any data, no hypothesis of the paper is involved",
           config={"datasets": len(sets) + 1},
           note=f"exact s*(2) by activation-pattern enumeration (float) equals the rational evaluation on "
                f"{len(sets)} integer datasets (d = 2, and rotated into d = 3) and √2 − 1 on the circle data; a "
                f"kink-only evaluation is off by {wrong:.3f} on the first fixed dataset (the comparison rejects it).")
    assert wrong > 1e-3, wrong
    assert ok, rows
