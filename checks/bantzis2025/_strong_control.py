"""Shared pieces of the worst-case checks of strong control (``bantzis2025/prop-A.5``, ``prop-3.3``).

Notation of the paper: input X_in = uvᵀ + E (code: rows are samples, X_in = v uᵀ + Eᵀ), u, v ≥ 0, ‖E‖_F ≤ ε,
a = ‖Gv‖‖u‖, g = ‖G‖_F, sublevel set S = {‖θ‖² ≤ L, −Tr[GᵀY_θ(X_in)] ≥ a − gε} (contains θ*).

Near-equality family of A.5's sublevel bound (derived for this check from the proof's chain of inequalities):
u, v unit and positive, G = −αv + βw (w ⊥ v unit, α² + β² = 1, so g = 1, a = α), E = ε·e uᵀ with e = αv − βw.
Then X_in = (v + εe)uᵀ is rank one and non-negative, and a network whose first layer has rows q·u and √(1−q²)·x
(rest of the chain e_1e_1ᵀ, W_L = e_1ᵀ) has −Tr = q(α + ε). With x ⊥ u, tail(W_1) = 1 − q²; with x = −u, the
second unit is always off and ν_1 = 1 − q². The largest admissible 1 − q² is at q = (1 − ρ)/(1 + ρ), ρ = ε/α, and
the ratio to B_A5 = 4(1/α + 1)ε is ρ/((1 + ρ)²(ρ + ε)) → 1 as ε → 0, α → 0. The same data have s* = α + ε exactly
(the rank-one network q = 1 reaches it; A.5 (i)–(ii) bound s* by a + gε = α + ε).
"""
from __future__ import annotations

import math
from fractions import Fraction

import torch

from theory.papers.bantzis2025 import localized as loc


def family_data(N, d, alpha, eps, gen, dtype, device=None):
    """(u, v, w, G, X_in) of the near-equality family (u, v unit with entries in [0.5, 1.5]/norm)."""
    u = torch.rand(d, generator=gen, dtype=dtype, device=gen.device) + 0.5
    v = torch.rand(N, generator=gen, dtype=dtype, device=gen.device) + 0.5
    u, v = u / u.norm(), v / v.norm()
    w = torch.randn(N, generator=gen, dtype=dtype, device=gen.device)
    w = w - (w @ v) * v
    w = w / w.norm()
    beta = math.sqrt(1 - alpha ** 2)
    G = -alpha * v + beta * w
    Xin = torch.outer(v, u) + eps * torch.outer(alpha * v - beta * w, u)
    assert float((v + eps * (alpha * v - beta * w)).min()) > 0       # X_in ≥ 0: every ReLU of the chain is on
    return [t.to(device) for t in (u, v, w, G, Xin)]


def chain(u, L, width, q, second, sign=1.0):
    """One network: W_1 rows q·u and `second` (a d-vector), W_ℓ = e_1e_1ᵀ, W_L = sign·e_1ᵀ; shape (1, …)."""
    d, dt, dev = u.shape[0], u.dtype, u.device
    th = [torch.zeros(1, width, d, dtype=dt, device=dev)] + \
         [torch.zeros(1, width, width, dtype=dt, device=dev) for _ in range(L - 2)] + \
         [torch.zeros(1, 1, width, dtype=dt, device=dev)]
    th[0][0, 0] = q * u / u.norm()
    th[0][0, 1] = second
    for w in th[1:-1]:
        w[0, 0, 0] = 1.0
    th[-1][0, 0, 0] = sign
    return th


def speed(th, X, G):
    return -loc.localized_loss(th, X, G)


# --- exact rational evaluations of the printed bounds, written apart from theory/papers/bantzis2025/bounds.py ----

def exact_b33(g: float, eps: float, s: float, const: int = 8) -> Fraction:
    """8‖G‖ε/(s* − ‖G‖ε) in exact rational arithmetic at the given float inputs (Prop 3.3)."""
    g, eps, s = Fraction(g), Fraction(eps), Fraction(s)
    return const * g * eps / (s - g * eps)


def exact_bA5(g: float, gv: float, un: float, vn: float, eps: float, const: int = 2) -> Fraction:
    """2δ with δ = 2(‖G‖/(‖Gv‖‖u‖) + 1/(‖u‖‖v‖))ε, exactly (A.5's proof); const = 2 is the printed 2δ."""
    g, gv, un, vn, eps = (Fraction(x) for x in (g, gv, un, vn, eps))
    return const * 2 * (g / (gv * un) + 1 / (un * vn)) * eps


def pin(value: float, exact: Fraction) -> float:
    """Relative difference of a float evaluation from the exact rational value."""
    return float(abs(Fraction(value) - exact) / abs(exact))


PIN_TOL = 1e-14     # a float64 evaluation of a 5-term rational expression: ≤ ~10 roundings of 1.1e-16


# --- adversarial search over the sublevel set ---------------------------------------------------------------------

PARTS = ("tail(W_l)", "tail(Zsigma_l)", "nu_l")


def _tail(M):
    """1 − s_1²/Σs_i² from the smaller Gram matrix (differentiable where s_1 is simple); 0 for a zero matrix."""
    gram = M.transpose(-1, -2) @ M if M.shape[-1] <= M.shape[-2] else M @ M.transpose(-1, -2)
    tr = torch.diagonal(gram, dim1=-2, dim2=-1).sum(-1)
    top = torch.linalg.eigvalsh(gram)[..., -1]
    ok = tr > 1e-300
    return torch.where(ok, 1 - top / torch.where(ok, tr, torch.ones_like(tr)), torch.zeros_like(tr))


def part_maxima(th, X):
    """(E, 3): max over layers of tail(W_ℓ), tail(Zσ_ℓ) (ℓ = 0..L−1) and ν_ℓ (ℓ = 1..L−1) — the search objective
    only; reported values are recomputed with the reference :func:`ratios.ratios`. ``X`` is (N, d) or one data set
    per member, (E, N, d)."""
    Z, H = loc.layers(th, X)
    E = th[0].shape[0]
    tw = torch.stack([_tail(w) for w in th], 1).amax(1)
    tz = torch.stack([_tail(z) for z in [X if X.dim() == 3 else X.expand(E, *X.shape)] + H[:-1]], 1).amax(1)
    nus = []
    for z, h in zip(Z[:-1], H[:-1]):
        den = (z ** 2).sum((-1, -2))
        nus.append(torch.where(den > 1e-300, ((h - z) ** 2).sum((-1, -2)) / den.clamp_min(1e-300), torch.zeros_like(den)))
    return torch.stack([tw, tz, torch.stack(nus, 1).amax(1)], 1)


def retract(th, anchor, X, G, thr, iters=14):
    """Back into the sublevel set: per member the largest λ ∈ {0} ∪ [2^-iters, 1] (bisection) such that
    θ_λ = sphere(anchor + λ(θ − anchor)) has −Tr[GᵀY] ≥ thr; the anchor is in the set, so every result is."""
    E = th[0].shape[0]
    lo = torch.zeros(E, dtype=th[0].dtype, device=th[0].device)
    hi = torch.ones_like(lo)

    def at(lam):
        return loc.to_sphere([a + lam.view(-1, 1, 1) * (b - a) for a, b in zip(anchor, th)])

    ok = speed(at(hi), X, G) >= thr
    lo = torch.where(ok, hi, lo)
    for _ in range(iters):
        if bool(ok.all()):
            break
        mid = (lo + hi) / 2
        good = speed(at(mid), X, G) >= thr
        lo = torch.where(~ok & good, mid, lo)
        hi = torch.where(~ok & ~good, mid, hi)
    return at(lo)


def sublevel_search(X, G, u, v, eps, L, width, starts, steps, gen, lr=3e-3, amp=0.05):
    """Projected gradient ascent (Adam, then sphere and :func:`retract`) of part_j/B_A5 over S ∩ {‖θ‖² = L}
    (the ratios are scale-invariant per layer and −Tr is homogeneous, so the sphere holds the supremum over the
    ball), from ``starts`` perturbed copies of the rank-one network of A.5 (i) per part. Returns (θ_best (3·starts
    members, each a point of S), part index per member, threshold a − gε)."""
    gn, gv, un = float(G.norm()), float((G @ v).abs()), float(u.norm())
    thr = gv * un - gn * eps
    E = 3 * starts
    sign = -float(torch.sign(G @ v))
    anchor = loc.to_sphere([w.expand(E, *w.shape[1:]).clone() for w in chain(u, L, width, 1.0, torch.zeros_like(u), sign)])
    assert bool((speed(anchor, X, G) >= thr).all())              # A.5 (i)–(ii): the anchor is in S
    th = [w + amp * torch.randn(w.shape, generator=gen, dtype=w.dtype, device=gen.device).to(w.device) / math.sqrt(w[0].numel())
          for w in anchor]
    th = [w.clone().requires_grad_(True) for w in retract(loc.to_sphere(th), anchor, X, G, thr)]
    sel = torch.arange(E, device=X.device) // starts
    opt = torch.optim.Adam(th, lr=lr)
    best = torch.full((E,), -math.inf, dtype=X.dtype, device=X.device)
    keep = [w.detach().clone() for w in th]
    for _ in range(steps + 1):
        r = part_maxima(th, X)[torch.arange(E, device=X.device), sel]
        with torch.no_grad():
            imp = r > best
            best = torch.where(imp, r, best)
            for b, w in zip(keep, th):
                b[imp] = w[imp]
        opt.zero_grad()
        (-r.sum()).backward()
        opt.step()
        with torch.no_grad():
            for w, q in zip(th, retract(loc.to_sphere([w.detach() for w in th]), anchor, X, G, thr)):
                w.copy_(q)
    return keep, sel, thr


# --- Prop 3.3 as stated (at the optimum θ*), worst case over data ------------------------------------------------
# The statement is about θ* = argmin Tr[GᵀY_θ(uvᵀ + X)], so its worst case is a search over the data (u, v ≥ 0,
# ‖E‖_F = ε, G) of ratio(θ̂*)/B_3.3, with θ̂* re-optimized for every data set: a batched bilevel search. Data are
# members of the ensemble axis (R restarts per data set), the optimum is found by normalized OPT-SPEED (angle steps),
# the data take Adam steps on ratio(θ̂*)/B_3.3(s* upper end) at fixed θ̂*, then θ̂* is re-polished (warm).

def batched_speed(th, X, G):
    """−Tr[GᵀY_θ(X_e)] per member, X (E, N, d), G (E, N)."""
    return -(loc.output(th, X).squeeze(-1) * G).sum(-1)


def _angle_steps(th, X, G, etas):
    L = len(th)
    th = [w.detach() for w in th]
    for eta in etas:
        ps = [w.clone().requires_grad_(True) for w in th]
        g = torch.autograd.grad(-batched_speed(ps, X, G).sum(), ps)
        with torch.no_grad():
            coef = loc.inner(g, th) / loc.sq_norm(th)
            gT = [a - loc._bcast(coef, w) * w for a, w in zip(g, th)]
            gn = torch.sqrt(loc.sq_norm(gT))
            step = torch.where(gn > 0, float(eta) * math.sqrt(L) / gn.clamp_min(1e-300), torch.zeros_like(gn))
            th = loc.to_sphere([w - loc._bcast(step, w) * a for w, a in zip(th, gT)])
    return th


def data_params(B, N, d, gen, dtype):
    """Raw data parameters of B data sets: u = |pu|, v = |pv| (normalized), E = ε·pe/‖pe‖_F, G = pg, and the
    fraction f of the non-vacuous range (ε = f·‖Gv‖‖u‖/(8‖G‖), so that B_3.3 < 1 at the upper end of s*)."""
    def r(*shape):
        return torch.randn(*shape, generator=gen, dtype=dtype, device=gen.device)
    pu, pv, pe = r(B, d), r(B, N), r(B, N, d)
    pv_ = pv.abs() / pv.abs().norm(dim=1, keepdim=True)
    alpha = 0.2 + 0.8 * torch.rand(B, generator=gen, dtype=dtype, device=gen.device)
    pg = -alpha[:, None] * pv_ + (1 - alpha[:, None]) * r(B, N) / math.sqrt(N)
    # drawn on the generator's own device (the CPU for the policy's generators), as the other draws here
    f = torch.exp(torch.empty(B, dtype=dtype, device=gen.device).uniform_(math.log(1e-2), math.log(0.9), generator=gen))  # device-scan: deliberate
    return [pu, pv, pe, pg], f


def make_data(raw, f):
    """(u, v, eps, X_in (B, N, d) = v uᵀ + E, G (B, N), a = ‖Gv‖‖u‖, g = ‖G‖) from raw parameters."""
    pu, pv, pe, pg = raw
    u = pu.abs() / pu.abs().norm(dim=1, keepdim=True)
    v = pv.abs() / pv.abs().norm(dim=1, keepdim=True)
    g = pg.norm(dim=1)
    a = (pg * v).sum(1).abs()
    eps = f * a / (8 * g)
    E = pe / pe.flatten(1).norm(dim=1).view(-1, 1, 1) * eps.view(-1, 1, 1)
    X = v[:, :, None] * u[:, None, :] + E
    return u, v, eps, X, pg, a, g


def optimum_search(N, d, L, width, n_data, restarts, steps, rounds, polish, gen, dtype, lr=0.02):
    """Bilevel search for the data maximizing ratio(θ̂*)/B_3.3(s* = a + gε) (smallest possible bound). Returns per data
    set (final round and the best round): the data, θ̂* (best restart, in the sublevel set), the ratio and bound."""
    raw, f = data_params(n_data, N, d, gen, dtype)
    raw = [x.clone().requires_grad_(True) for x in raw]
    opt = torch.optim.Adam(raw, lr=lr)
    rep = lambda t: t.repeat_interleave(restarts, 0)                          # noqa: E731 (members of data set b)
    dims = [d] + [width] * (L - 1) + [1]
    th = loc.random_sphere(n_data * restarts, dims, generator=gen, dtype=dtype, device=gen.device)
    with torch.no_grad():
        u, v, eps, X, G, a, g = make_data(raw, f)
    th = _angle_steps(th, rep(X), rep(G), torch.logspace(-1, -5, steps).tolist())
    history = []
    for k in range(rounds + 1):
        with torch.no_grad():
            u, v, eps, X, G, a, g = make_data(raw, f)
            s = batched_speed(th, rep(X), rep(G)).view(n_data, restarts)
            best = s.argmax(1)
            idx = torch.arange(n_data, device=X.device) * restarts + best
            pts = [w[idx] for w in th]
        history.append({"u": u, "v": v, "eps": eps, "X": X, "G": G, "a": a, "g": g, "theta": pts,
                        "speed": s.max(1).values, "in S": s.max(1).values >= a - g * eps})
        if k == rounds:
            break
        # data step: ascend ratio(θ̂*)/B_3.3(a + gε) at fixed θ̂* (B_3.3 at the upper end is 8gε/a = f: constant in the data)
        u, v, eps, X, G, a, g = make_data(raw, f)
        obj = part_maxima(pts, X).amax(1) / f
        opt.zero_grad()
        (-obj.sum()).backward()
        opt.step()
        with torch.no_grad():
            u, v, eps, X, G, a, g = make_data(raw, f)
        th = _angle_steps(th, rep(X), rep(G), torch.logspace(-3, -6, polish).tolist())
    return history, f
