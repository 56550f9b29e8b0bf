"""Adversarial search on the log-stable-rank budget of Prop A.4's proof (``bantzis2025/prop-A.4``), and Prop 3.4 /
A.4's count at its worst case (``bantzis2025/prop-3.4``, ``prop-A.4``; :func:`count_ratio`, test_count_worst_case).

For every θ with ‖θ‖² ≤ L and c_0 = −Tr[GᵀZ_L] > 0 the proof shows Σ_{ℓ=0}^{L−1} log srank(Zσ_ℓ) ≤ 2 log(‖X‖‖G‖/c_0).
Random θ and solver optima reach a budget ratio Σ log srank / (2 log R(c_0)) well below 1/2 (the run's values are in
the records), so a constant 2× too tight would pass there. Here the ratio is maximised over the sphere ‖θ‖² = L (the ratio grows with ‖θ‖, so the
maximum over the ball is on the sphere) by projected gradient ascent from many starts, and the proof's case of
equality is built explicitly:

    data with a non-negative top right singular vector v_1 of X (Perron: X ≥ 0 entrywise), G = −v_1, and the rank-one
    network W_1 = e_1u_1ᵀ (u_1 the top left singular vector), W_ℓ = e_1e_1ᵀ, W_L = e_1ᵀ. Then Zσ_ℓ (ℓ ≥ 1) are rank
    one, Z_L = s_1v_1ᵀ, c_0 = s_1‖v_1‖² = ‖G‖‖Z_L‖ (Cauchy–Schwarz tight), ‖Z_ℓ‖_F = ‖W_ℓ‖_F‖Zσ_{ℓ−1}‖_op, Π‖W_ℓ‖_F = 1,
    and both sides equal log srank(X): ratio 1.

Every value the search reports is the ratio at an explicit θ with ‖θ‖² = L and c_0 > 0, so a value above 1 would
be a counterexample. The top singular value is taken from the eigenvalues of the small Gram matrix (differentiable).
"""
import math

import pytest
import torch

from theory.papers.bantzis2025 import localized as loc

# tests that compute one cached run: xdist keeps each group on one worker (theory.harness.shared_runs)
SHARED_RUNS = {"bantzis2025/circle_deep_points": ["test_count_worst_case"]}

SLACK = 1e-9     # float64: log-ratios of norms of ≤ 12×8 matrices, relative rounding ~1e-14


def budget_ratio(th, X, G):
    """(Σ_{ℓ=0}^{L−1} log srank(Zσ_ℓ) / (2 log(‖X‖‖G‖/c_0)), c_0, valid) per member; valid = c_0 > 0 and no dead layer.
    Invalid members get ratio 0 through finite placeholders, so their gradients are 0 (no NaN)."""
    E = th[0].shape[0]
    _, H = loc.layers(th, X)
    Zs = [X.expand(E, *X.shape)] + H[:-1]
    c0 = -loc.localized_loss(th, X, G)
    logs, valid = [], c0 > 0
    for z in Zs:
        gram = z.transpose(-1, -2) @ z
        fro2 = torch.diagonal(gram, dim1=-2, dim2=-1).sum(-1)
        op2 = torch.linalg.eigvalsh(gram)[..., -1]
        ok = (fro2 > 1e-30) & (op2 > 1e-30)
        valid = valid & ok
        logs.append(torch.log(torch.where(ok, fro2, torch.ones_like(fro2)) / torch.where(ok, op2, torch.ones_like(op2))))
    top = 2 * torch.log(X.norm() * G.norm() / torch.where(valid, c0, torch.ones_like(c0)))
    top = torch.where(valid, top, torch.ones_like(top))
    r = torch.where(valid, sum(logs) / top, torch.zeros_like(top))
    return r, c0, valid


def _tails(th, X):
    """(E, L) tail(Zσ_ℓ), ℓ = 0..L−1, from the Gram matrices (differentiable where s_1 is simple), and (E,) whether
    every layer is non-zero."""
    E = th[0].shape[0]
    _, H = loc.layers(th, X)
    out, ok = [], torch.ones(E, dtype=torch.bool, device=X.device)
    for z in [X.expand(E, *X.shape)] + H[:-1]:
        gram = z.transpose(-1, -2) @ z
        fro2 = torch.diagonal(gram, dim1=-2, dim2=-1).sum(-1)
        op2 = torch.linalg.eigvalsh(gram)[..., -1]
        good = fro2 > 1e-30
        ok = ok & good
        out.append(torch.where(good, 1 - op2 / torch.where(good, fro2, torch.ones_like(fro2)), torch.zeros_like(fro2)))
    return torch.stack(out, 1), ok


def count_ratio(th, X, G):
    """Prop 3.4 at its worst p, per member: (max_k t_(k)(L − k + 1) / (2 log(‖X‖‖G‖/c_0)), c_0, valid), t_(1) ≤ … ≤
    t_(L) the sorted tail(Zσ_ℓ), ℓ = 0..L−1. The count "≥ (1−p)L layers with tail ≤ 2 log R/(pL)" holds for every
    p ∈ (0, 1) iff this is ≤ 1: for (1−p)L ∈ (k−1, k] it asks t_(k) ≤ 2 log R/(pL), hardest as p ↑ 1 − (k−1)/L."""
    L = len(th)
    t, ok = _tails(th, X)
    c0 = -loc.localized_loss(th, X, G)
    valid = ok & (c0 > 0)
    top = 2 * torch.log(X.norm() * G.norm() / torch.where(valid, c0, torch.ones_like(c0)))
    valid = valid & (top > 0)
    ts = torch.sort(t, dim=1).values
    w = torch.arange(L, 0, -1, dtype=X.dtype, device=X.device)          # L − k + 1 for k = 1..L
    r = (ts * w).amax(1) / torch.where(valid, top, torch.ones_like(top))
    return torch.where(valid, r, torch.zeros_like(r)), c0, valid


def count_ratio_on_grid(th, X, G, ps):
    """The same worst case read off the count itself on a grid of p (a pin of :func:`count_ratio`'s reduction):
    max_p t_(⌈(1−p)L⌉)·pL/(2 log R) over the members (valid ones only)."""
    import numpy as np

    L = len(th)
    t, _ = _tails(th, X)
    c0 = -loc.localized_loss(th, X, G)
    top = 2 * torch.log(X.norm() * G.norm() / c0)
    ts = torch.sort(t, dim=1).values
    best = torch.zeros_like(c0)
    for p in ps:
        k = int(np.ceil(round((1 - p) * L, 12)))
        if 1 <= k <= L:
            best = torch.maximum(best, ts[:, k - 1] * p * L / top)
    return best


def adversarial_search(X, G, L, width, starts, steps, gen, lr=0.03, objective=None):
    """Projected gradient ascent (Adam, then rescaling onto ‖θ‖² = L) of the budget ratio (or ``objective``, same
    signature) from ``starts`` random sphere points (W_L flipped so that c_0 > 0). Returns the best ratio per start
    over all iterates (each a valid point)."""
    objective = objective or budget_ratio
    th = loc.random_sphere(starts, [X.shape[1]] + [width] * (L - 1) + [1], generator=gen, dtype=X.dtype,
                           device=X.device)
    v = loc.localized_loss(th, X, G)
    th[-1] = th[-1] * torch.where(v > 0, -1.0, 1.0).view(-1, 1, 1)
    th = [w.clone().requires_grad_(True) for w in th]
    opt = torch.optim.Adam(th, lr=lr)
    best = torch.full((starts,), -math.inf, dtype=X.dtype, device=X.device)
    for _ in range(steps + 1):
        r, _, valid = objective(th, X, G)
        best = torch.where(valid, torch.maximum(best, r.detach()), best)
        opt.zero_grad()
        (-r.sum()).backward()
        opt.step()
        with torch.no_grad():
            for w, q in zip(th, loc.to_sphere([w.detach() for w in th], float(L))):
                w.copy_(q)
    return best


def equality_data(N, d, gen, dtype):
    """X ≥ 0 (so its top right singular vector v_1 is non-negative, Perron) and G = −v_1 (‖G‖ = 1)."""
    X = torch.randn(N, d, generator=gen, dtype=dtype, device=gen.device).abs()          # rows are samples: paper X = this.T
    U, S, Vh = torch.linalg.svd(X, full_matrices=False)
    v1 = U[:, 0] * torch.sign(U[:, 0].sum())                          # over samples (paper: right singular vector)
    u1 = Vh[0] * torch.sign(U[:, 0].sum())                            # over features (paper: left singular vector)
    assert float(v1.min()) >= 0 and float(u1.min()) >= 0
    return X, -v1, u1


def equality_point(u1, L, width, dtype):
    """W_1 = e_1u_1ᵀ, W_ℓ = e_1e_1ᵀ (2 ≤ ℓ ≤ L−1), W_L = e_1ᵀ: every ‖W_ℓ‖_F = 1, ‖θ‖² = L."""
    d = u1.shape[0]
    dev = u1.device
    th = [torch.zeros(1, width, d, dtype=dtype, device=dev)] + [torch.zeros(1, width, width, dtype=dtype, device=dev)
                                                                 for _ in range(L - 2)] \
        + [torch.zeros(1, 1, width, dtype=dtype, device=dev)]
    th[0][0, 0] = u1
    for w in th[1:-1]:
        w[0, 0, 0] = 1.0
    th[-1][0, 0, 0] = 1.0
    return th


@pytest.mark.claim("bantzis2025/prop-A.4")
def test_budget_adversarial_search_and_equality_case(record, ctx):
    gen = record.generator({"test": "budget adversarial"})
    starts, steps = ctx.pick(quick=24, full=256), ctx.pick(quick=250, full=2000)
    rows, best_all = [], -math.inf
    Xg = torch.randn(12, 3, generator=gen, dtype=ctx.dtype, device=gen.device)
    Gg = torch.randn(12, generator=gen, dtype=ctx.dtype, device=gen.device)
    Xe, Ge, u1 = equality_data(12, 3, gen, ctx.dtype)
    eq_rows = []
    for L in (3, 6):
        # the proof's case of equality: ratio exactly 1 (both sides = log srank(X))
        th = equality_point(u1, L, 8, ctx.dtype)
        assert abs(float(loc.sq_norm(th)) - L) <= 1e-12
        r_eq, c0_eq, ok_eq = budget_ratio(th, Xe, Ge)
        assert bool(ok_eq.all())
        eq_rows.append({"L": L, "equality point ratio": float(r_eq[0]), "c_0": float(c0_eq[0]),
                        "top singular value s_1(X)": float(torch.linalg.matrix_norm(Xe, ord=2))})
        for name, X, G in (("Gaussian X, G", Xg, Gg), ("X ≥ 0, G = −v_1 (equality data)", Xe, Ge)):
            b = adversarial_search(X, G, L, 8, starts, steps, gen)
            b = b[torch.isfinite(b)]
            best_all = max(best_all, float(b.max()))
            rows.append({"data": name, "L": L, "starts": starts, "ascent steps": steps, "max ratio": float(b.max()),
                         "median of per-start max": float(b.median())})
    eq_err = max(abs(r["equality point ratio"] - 1) for r in eq_rows)
    ok = best_all <= 1 + SLACK and eq_err <= SLACK
    record("holds" if ok else "violated", observed=max(best_all, max(r["equality point ratio"] for r in eq_rows)),
           bound=1.0, reading="proof-step", table=rows + eq_rows, evidence="test", worst_case=True,
           inside=True, inside_reason="every θ judged has ‖θ‖² = L and c_0 > 0 with no dead layer (checked per "
                                      "iterate; others are not counted)",
           config={"width": 8, "depths": [3, 6], "starts": starts, "steps": steps, "optimizer": "Adam lr 0.03 + projection"},
           tightness=f"largest budget ratio found by the search {best_all:.4f}; the proof's equality case reaches "
                     f"1 to {eq_err:.1e}: a constant tightened by any factor > 1 + {SLACK:g} is rejected",
           note="Budget Σ log srank(Zσ_ℓ) ≤ 2 log(‖X‖‖G‖/c_0) (a step of Prop A.4's proof): projected gradient ascent of "
                "the ratio over ‖θ‖² = L from many starts never exceeds 1; the explicit rank-one network on data with "
                "G = −v_1 attains 1 (Cauchy–Schwarz and every norm inequality of the proof tight).")
    assert ok, (rows, eq_rows)


@pytest.mark.claim("bantzis2025/prop-A.4")
def test_budget_check_rejects_halved_budget(record, ctx):
    """Companion: the budget with log R in place of 2 log R (2× too tight) is violated by the equality point (ratio 2
    against it); random θ and solver optima (ratio ≤ 0.35) would not notice, the adversarial search on Gaussian data
    (ratio ≈ 0.5) only barely."""
    gen = record.generator({"test": "budget adversarial"})
    torch.randn(12, 3, generator=gen, dtype=ctx.dtype, device=gen.device), torch.randn(12, generator=gen, dtype=ctx.dtype, device=gen.device)
    Xe, Ge, u1 = equality_data(12, 3, gen, ctx.dtype)
    r_eq = [float(budget_ratio(equality_point(u1, L, 8, ctx.dtype), Xe, Ge)[0][0]) for L in (3, 6)]
    rejected = all(2 * r > 1 + SLACK for r in r_eq)
    record("holds" if rejected else "violated", role="companion", observed=2 * min(r_eq), bound=1.0,
           config={"wrong version": "Σ log srank ≤ log R (half the budget)"},
           note=f"halved budget: the equality points (L = 3, 6) have ratio {2 * min(r_eq):.3f} > 1 against it — rejected.")
    assert rejected, r_eq


def near_rank_one_data(N, d, eta, gen, dtype):
    """X = a bᵀ + η|Z| ≥ 0 (a, b, Z entrywise |N(0, 1)|; srank(X) → 1 as η → 0) and G = −v_1: the data of the proof's
    equality case with X nearly rank one, where the count's ratio (1 − 1/srank(X))/log srank(X) tends to 1."""
    a = torch.randn(N, generator=gen, dtype=dtype, device=gen.device).abs()
    b = torch.randn(d, generator=gen, dtype=dtype, device=gen.device).abs()
    X = torch.outer(a, b) + eta * torch.randn(N, d, generator=gen, dtype=dtype, device=gen.device).abs()
    U, S, Vh = torch.linalg.svd(X, full_matrices=False)
    sg = torch.sign(U[:, 0].sum())
    v1, u1 = U[:, 0] * sg, Vh[0] * sg
    assert float(v1.min()) >= 0 and float(u1.min()) >= 0
    return X, -v1, u1


# Prop 3.4 / A.4 judged at the worst p and the worst θ found. Band: the near-rank-one equality family reaches
# (1 − 1/s)/log s ≥ COUNT_BAND (s = srank(X) ≤ 1.03); with the constant 2 doubled every ratio would be ≤ 1/2
# (outside the band), halved the family would stand at ≈ 2 (violated): a factor-2 error in the constant fails.
COUNT_BAND = 0.95
FAMILY_ETA = (0.2, 0.05, 0.01)


@pytest.mark.claim("bantzis2025/prop-3.4")
@pytest.mark.claim("bantzis2025/prop-A.4")
def test_count_worst_case(record, ctx):
    import numpy as np

    from theory import data as tdata

    from ._shared import circle_deep_points

    gen = record.generator({"test": "count worst case"}, claim="bantzis2025/prop-3.4")
    starts, steps = ctx.pick(quick=12, full=256), ctx.pick(quick=100, full=2000)
    Xg = torch.randn(12, 3, generator=gen, dtype=ctx.dtype, device=gen.device)
    Gg = torch.randn(12, generator=gen, dtype=ctx.dtype, device=gen.device)
    rows, worst, pins = [], 0.0, []
    # random θ (typical case), with the grid pin of the worst-p reduction
    for L in (3, 6, 10):
        th = loc.random_sphere(ctx.pick(quick=100, full=5000), [3] + [8] * (L - 1) + [1], generator=gen, dtype=ctx.dtype)
        v = loc.localized_loss(th, Xg, Gg)
        th[-1] = th[-1] * torch.where(v > 0, -1.0, 1.0).view(-1, 1, 1)
        r, c0, ok = count_ratio(th, Xg, Gg)
        keep = [w[ok] for w in th]
        grid = count_ratio_on_grid(keep, Xg, Gg, np.concatenate([np.linspace(0.001, 0.999, 999),
                                                                  [1 - k / L - 1e-12 for k in range(L)]]))
        pins.append(float(((grid - r[ok]).abs() / r[ok].clamp_min(1e-300)).max()))
        worst = max(worst, float(r[ok].max()))
        rows.append({"points": f"random θ, Gaussian data, L={L}", "θ (c_0 > 0)": int(ok.sum()),
                     "max ratio": float(r[ok].max()), "median ratio": float(r[ok].median())})
    # solver optima (circle data)
    Xc, Gc = tdata.unit_circle_8(device=ctx.device)
    for pt in circle_deep_points(ctx.profile, ctx.seed, str(ctx.device)):
        r, _, ok = count_ratio(pt["params"], Xc, Gc)
        assert bool(ok.all())
        worst = max(worst, float(r.max()))
        rows.append({"points": f"circle optimum, {pt['source'].split(' (')[0]}, L={pt['L']}", "max ratio": float(r.max())})
    # the proof's equality case on nearly rank-one X ≥ 0: ratio (1 − 1/s)/log s, s = srank(X)
    fam = []
    for eta in FAMILY_ETA:
        Xe, Ge, u1 = near_rank_one_data(12, 3, eta, gen, ctx.dtype)
        s = float(Xe.norm() ** 2 / torch.linalg.matrix_norm(Xe, ord=2) ** 2)
        closed = (1 - 1 / s) / math.log(s)
        for L in (3, 6):
            th = equality_point(u1, L, 8, ctx.dtype)
            r, c0, ok = count_ratio(th, Xe, Ge)
            assert bool(ok.all()) and abs(float(loc.sq_norm(th)) - L) <= 1e-12
            fam.append(float(r[0]))
            worst = max(worst, float(r[0]))
            rows.append({"points": f"equality case, X = abᵀ + {eta}|Z|, L={L}", "srank(X)": s, "ratio": float(r[0]),
                         "closed form (1 − 1/s)/log s": closed, "rel. diff": abs(float(r[0]) / closed - 1)})
            assert abs(float(r[0]) / closed - 1) <= 1e-9, (float(r[0]), closed)
    # adversarial search over the sphere (Gaussian data and the nearly rank-one equality data)
    Xe, Ge, _ = near_rank_one_data(12, 3, FAMILY_ETA[0], gen, ctx.dtype)
    for name, X, G in (("Gaussian X, G", Xg, Gg), (f"X = abᵀ + {FAMILY_ETA[0]}|Z|, G = −v_1", Xe, Ge)):
        for L in (3, 6):
            b = adversarial_search(X, G, L, 8, starts, steps, gen, objective=count_ratio)
            b = b[torch.isfinite(b)]
            worst = max(worst, float(b.max()))
            rows.append({"points": f"adversarial search, {name}, L={L}", "starts": starts, "steps": steps,
                         "max ratio": float(b.max()), "median of per-start max": float(b.median())})
    pin = max(pins)
    ok = worst <= 1 + SLACK and pin <= 1e-9
    in_band = COUNT_BAND <= worst <= 1 + SLACK
    cfg = {"p": "every p ∈ (0, 1) (worst p in closed form, pinned against a 1000-point grid)", "width": 8,
           "search starts": starts, "search steps": steps, "family η": FAMILY_ETA}
    common = dict(observed=worst, bound=1.0, table=rows, evidence="test", worst_case=True,
                  covers=["every theta with ||theta||^2 <= L, c_0 > 0", "every p in (0,1)"],
                  rejects=f"the threshold halved (constant 1 for 2): the equality family stands at {2 * max(fam):.3f} > 1",
                  inside=True, inside_reason="every θ judged has ‖θ‖² = L (the sphere: ‖θ‖² ≤ L holds) and "
                                             "c_0 = −Tr[GᵀZ_L] > 0 (checked per point; others are not judged)",
                  config=cfg)
    tight = (f"max over θ and p of the k-th smallest tail(Zσ_ℓ) over its threshold = {worst:.4f}: random θ, optima, "
             f"adversarial search, equality family (→ 1 as srank(X) → 1); band [{COUNT_BAND}, 1]")
    record("holds" if ok else "violated", claim="bantzis2025/prop-3.4", tightness=tight,
           note="As stated, at the worst p of every θ: the count holds for all p iff max_k t_(k)(L−k+1) ≤ 2 log R(c_0). "
                f"Largest ratio {worst:.4f} (equality family up to {max(fam):.4f}); worst-p reduction pinned against "
                f"the count on a p grid to {pin:.1e}.", **common)
    record("holds" if ok else "violated", claim="bantzis2025/prop-A.4", tightness=tight,
           note="Eq. (3)'s count (threshold 2(log‖X‖ + log‖G‖ − log c_0)/(pL), the same number as Prop 3.4's) at its "
                f"worst case: {worst:.4f}.", **common)
    record("holds" if 2 * max(fam) > 1 + SLACK else "violated", claim="bantzis2025/prop-3.4", role="companion",
           observed=2 * max(fam), bound=1.0, config={"wrong version": "threshold log R/(pL) (constant 1 for 2)"},
           note=f"halved threshold: the equality family reaches {2 * max(fam):.3f} > 1 against it — rejected")
    assert ok, (rows, pin)
    assert in_band, (worst, COUNT_BAND)
