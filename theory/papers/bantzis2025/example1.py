"""Example 1 and Eq. (6) of Bantzis et al. (``bantzis2025/ex-1``, ``eq-6``, ``fig-2``), exactly.

Data: x_j = (sin 2πj/8, cos 2πj/8), j = 1..8, G_j = (−1)^j (core fixture
``fixtures.data.unit_circle_8`` holds the same points as float64 literals). Depth 3.

- Rank-one family: W_1 = [cos φ, sin φ], W_2 = [1], W_3 = [±1]; S(φ) = Σ_j (−1)^j σ(sin(2πj/8 + φ)),
  speed |S(φ)| (Eq. 6: |cos(ξ+π/4) − cos ξ + cos(ξ−π/4) − cos(ξ−π/2)|, ξ = φ mod π/4).
- Rank-two direction (Eq. 2): W_1 = ½[[1,0],[0,1],[−1,0],[0,−1]], W_2 = ½[1,−1,1,−1], W_3 = [w3].
  With G_j = (−1)^j the speed is +½ for w3 = −1 and −½ for the printed w3 = +1.

Also the two upper bounds of the catalog (F5): ‖X‖_F‖G‖_F and the Lipschitz LP bound, and the
exact depth-2 optimum (F6) s*(2) = max_{‖w‖=1} ‖G σ(Xw)‖ by an angle sweep (d = 2).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch
from ...device import draw


def exact_data():
    """(X as a sympy 8×2 Matrix, G as a sympy 8-vector); exact trigonometric values."""
    X = sp.Matrix([[sp.sin(2 * sp.pi * j / 8), sp.cos(2 * sp.pi * j / 8)] for j in range(1, 9)])
    G = sp.Matrix([(-1) ** j for j in range(1, 9)])
    return X, G


def relu(M):
    return M.applyfunc(lambda z: sp.Max(0, z))


def exact_forward(Ws, X):
    """Y_θ (N × d_out, exact) for sympy weights W_ℓ (n_ℓ × n_{ℓ−1}); rows of X are samples."""
    H = X.T
    for l, W in enumerate(Ws):
        Z = (W * H).applyfunc(sp.nsimplify)
        H = relu(Z) if l < len(Ws) - 1 else Z
    return H.T


def exact_pre_activations(Ws, X):
    """[Z_1, …, Z_L] exact (n_ℓ × N)."""
    H, out = X.T, []
    for l, W in enumerate(Ws):
        Z = (W * H).applyfunc(sp.simplify)
        out.append(Z)
        H = relu(Z) if l < len(Ws) - 1 else Z
    return out


def rank_two_weights(w3: int = -1):
    """Eq. (2) with last weight ``w3`` (the paper prints +1; −1 makes the speed positive for G_j=(−1)^j)."""
    h = sp.Rational(1, 2)
    W1 = h * sp.Matrix([[1, 0], [0, 1], [-1, 0], [0, -1]])
    W2 = h * sp.Matrix([[1, -1, 1, -1]])
    W3 = sp.Matrix([[w3]])
    return [W1, W2, W3]


def exact_L0(Ws, X, G):
    """L0 = Σ_j G_j f(x_j), exact."""
    Y = exact_forward(Ws, X)
    return sp.nsimplify(sp.simplify((G.T * Y)[0, 0]))


def S_rank_one(phi):
    """S(φ) = Σ_j (−1)^j σ(sin(2πj/8 + φ)) (sympy or numpy by argument type)."""
    if isinstance(phi, (np.ndarray, float, int)) and not isinstance(phi, sp.Basic):
        phi = np.asarray(phi, float)
        return sum((-1) ** j * np.maximum(0.0, np.sin(2 * np.pi * j / 8 + phi)) for j in range(1, 9))
    return sum((-1) ** j * sp.Max(0, sp.sin(2 * sp.pi * j / 8 + phi)) for j in range(1, 9))


def eq6_rhs(phi):
    """Eq. (6) right-hand side inside the absolute value, ξ = φ mod π/4 (numpy)."""
    xi = np.mod(np.asarray(phi, float), np.pi / 4)
    return np.cos(xi + np.pi / 4) - np.cos(xi) + np.cos(xi - np.pi / 4) - np.cos(xi - np.pi / 2)


def eq6_rhs_symbolic(xi):
    return sp.cos(xi + sp.pi / 4) - sp.cos(xi) + sp.cos(xi - sp.pi / 4) - sp.cos(xi - sp.pi / 2)


RANK_ONE_SPEED = sp.sqrt(2) - 1
RANK_TWO_SPEED = sp.Rational(1, 2)


def to_torch(Ws, width: int | None = None, dtype=torch.float64, device=None):
    """Sympy weights → batched torch params (E = 1), optionally zero-padded to hidden ``width``."""
    ps = [torch.tensor(np.array(W.evalf(30).tolist(), dtype=float), dtype=dtype, device=device).unsqueeze(0)
          for W in Ws]
    if width is not None:
        from .localized import embed

        dims = [ps[0].shape[2]] + [width] * (len(ps) - 1) + [ps[-1].shape[1]]
        ps = embed(ps, dims)
    return ps


def frobenius_bound(X: torch.Tensor, G: torch.Tensor) -> float:
    """s* ≤ ‖X‖_F‖G‖_F (F5)."""
    return float(X.norm() * G.norm())


def lipschitz_bound(X: torch.Tensor, G: torch.Tensor) -> float:
    """F5 LP bound for d_out = 1: max −Σ G_j y_j s.t. |y_i − y_k| ≤ ‖x_i − x_k‖, |y_j| ≤ ‖x_j‖."""
    from scipy.optimize import linprog

    Xn, g = X.detach().cpu().numpy(), G.detach().cpu().numpy().reshape(-1)
    N = len(g)
    A, b = [], []
    for i in range(N):
        for k in range(N):
            if i != k:
                row = np.zeros(N)
                row[i], row[k] = 1.0, -1.0
                A.append(row)
                b.append(np.linalg.norm(Xn[i] - Xn[k]))
    bounds = [(-np.linalg.norm(x), np.linalg.norm(x)) for x in Xn]
    res = linprog(g, A_ub=np.array(A), b_ub=np.array(b), bounds=bounds, method="highs")
    if not res.success:
        raise ValueError(f"Lipschitz LP failed: {res.message}")
    return float(-res.fun)


def exact_s2(X: torch.Tensor, G: torch.Tensor, sweep: int = 200_000) -> tuple[float, np.ndarray]:
    """s*(2) = max_{‖w‖=1} ‖Gᵀσ(Xw)‖ (F6) and its maximizer, for d = 2 (angle sweep + golden refinement)
    or d > 2 (random directions + Nelder–Mead polish)."""
    from scipy.optimize import minimize, minimize_scalar

    Xn = X.detach().cpu().numpy()
    Gn = G.detach().cpu().numpy()
    Gn = Gn.reshape(len(Gn), -1)

    def f(w):
        w = w / np.linalg.norm(w)
        return np.linalg.norm(Gn.T @ np.maximum(0.0, Xn @ w))

    d = Xn.shape[1]
    if d == 2:
        ang = np.linspace(0, 2 * np.pi, sweep, endpoint=False)
        W = np.stack([np.cos(ang), np.sin(ang)], 1)
        vals = np.linalg.norm(np.maximum(0.0, W @ Xn.T) @ Gn, axis=1)
        best, arg = float(vals.max()), ang[vals.argmax()]
        h = 2 * np.pi / sweep
        r = minimize_scalar(lambda a: -f(np.array([np.cos(a), np.sin(a)])), bounds=(arg - 2 * h, arg + 2 * h),
                            method="bounded", options={"xatol": 1e-14})
        if -r.fun > best:
            best, arg = float(-r.fun), r.x
        return best, np.array([np.cos(arg), np.sin(arg)])
    rng = np.random.default_rng(0)
    W = rng.standard_normal((min(sweep, 50_000), d))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    vals = np.linalg.norm(np.maximum(0.0, W @ Xn.T) @ Gn, axis=1)
    best_i = np.argsort(vals)[-20:]
    best, bw = float(vals.max()), W[vals.argmax()]
    for i in best_i:
        r = minimize(lambda w: -f(w), W[i], method="Nelder-Mead", options={"xatol": 1e-13, "fatol": 1e-15,
                                                                           "maxiter": 4000})
        if -r.fun > best:
            best, bw = float(-r.fun), r.x / np.linalg.norm(r.x)
    return best, bw


def exact_s2_enumerated(X: torch.Tensor, G: torch.Tensor) -> tuple[float, np.ndarray, int]:
    """s*(2) = max_{‖w‖=1} |Σ_j G_j σ(x_jᵀw)| (F6, d_out = 1) exactly, for d = 2 (any N) or d = 3 (N ≤ 16).

    The maximizer w* either lies inside an activation region, where f(w) = |m_Sᵀw| with
    m_S = Σ_{j∈S} G_j x_j (S = {j : x_jᵀw* > 0}), so w* = ±m_S/‖m_S‖; or on a kink x_jᵀw = 0. For d = 2
    the kinks are the points ±x_j^⊥ and the regions are the 2N arcs between them (S read off at each
    arc's midpoint). For d = 3, on one kink f restricted to the great circle x_j^⊥ is
    |m_Sᵀw| = |(P_j m_S)ᵀw| (the x_j term vanishes there), so w* = ±P_j m_S/‖P_j m_S‖, and on two kinks
    w* = ±x_i × x_k/‖·‖; every subset S (2^N − 1) is enumerated. Either way the finite candidate set
    consists of sphere points and contains w*: max f over it is ≤ s*(2) and ≥ s*(2), i.e. exact up to
    float rounding (~1e-15 relative). Returns (s*(2), w*, #candidates).
    """
    import itertools

    Xn = X.detach().cpu().numpy().astype(float)
    g = G.detach().cpu().numpy().astype(float)
    if g.ndim != 1 and not (g.ndim == 2 and g.shape[1] == 1):
        raise ValueError(f"exact_s2_enumerated needs d_out = 1 (G of shape (N,)), got {g.shape}")
    g = g.reshape(-1)
    N, d = Xn.shape
    xs = Xn[np.linalg.norm(Xn, axis=1) > 0]
    xh = xs / np.linalg.norm(xs, axis=1, keepdims=True)
    if d == 2:
        perp = np.stack([-xh[:, 1], xh[:, 0]], 1)
        kinks = np.concatenate([perp, -perp])
        ang = np.sort(np.mod(np.arctan2(kinks[:, 1], kinks[:, 0]), 2 * np.pi))
        mid = 0.5 * (ang + np.roll(ang, -1) + np.where(np.arange(ang.size) == ang.size - 1, 2 * np.pi, 0.0))
        W = np.stack([np.cos(mid), np.sin(mid)], 1)
        M = ((W @ Xn.T) > 0).astype(float) * g @ Xn                # m_S of every arc
        C = np.concatenate([M, kinks])
    elif d == 3:
        if N > 16:
            raise ValueError(f"exact_s2_enumerated: d = 3 enumerates 2^N patterns, needs N <= 16, got {N}")
        pats = np.array(list(itertools.product([0.0, 1.0], repeat=N)))[1:]
        M = (pats * g) @ Xn                                      # m_S for every S, (P, d)
        cands = [M] + [M - np.outer(M @ x, x) for x in xh]         # interior, and P_j m_S on each kink
        cands.append(np.cross(xh[:, None, :], xh[None, :, :]).reshape(-1, 3))
        C = np.concatenate(cands)
    else:
        raise ValueError(f"exact_s2_enumerated handles d in (2, 3), got d={d}")
    nrm = np.linalg.norm(C, axis=1)
    C = C[nrm > 1e-300] / nrm[nrm > 1e-300, None]
    C = np.concatenate([C, -C])
    vals = np.abs(np.maximum(0.0, C @ Xn.T) @ g)
    i = int(vals.argmax())
    return float(vals[i]), C[i], int(C.shape[0])


SQRT2_MINUS_1 = math.sqrt(2) - 1


def low_rank_search(X: torch.Tensor, G: torch.Tensor, depth: int, width: int, *, rank: int = 1,
                    restarts: int = 64, steps: int = 1000, lr: float = 0.02, generator=None) -> torch.Tensor:
    """Maximize the scale-invariant speed −L0(θ)(L/‖θ‖²)^{L/2} over networks whose layers are all of rank
    ≤ ``rank`` (W_ℓ = A_ℓ B_ℓᵀ, hidden width ``width``), with Adam over the factors; returns the final
    speeds (restarts,). ``ex-1`` (a): for rank 1 the maximum is √2−1 on the circle data (rank-one layers
    can realize Aσ(vᵀx) + Bσ(−vᵀx), not only one neuron)."""
    from . import localized as loc

    dims = [X.shape[1]] + [width] * (depth - 1) + [1]
    fac = []
    for l in range(depth):
        a = draw(torch.randn, restarts, dims[l + 1], rank, generator=generator, dtype=X.dtype, device=X.device)
        b = draw(torch.randn, restarts, dims[l], rank, generator=generator, dtype=X.dtype, device=X.device)
        fac += [a.requires_grad_(True), b.requires_grad_(True)]
    opt = torch.optim.Adam(fac, lr=lr)

    def speed():
        ws = [fac[2 * l] @ fac[2 * l + 1].transpose(-1, -2) for l in range(depth)]
        return -loc.localized_loss(ws, X, G) * (depth / loc.sq_norm(ws)) ** (depth / 2)

    for _ in range(steps):
        opt.zero_grad()
        (-speed().sum()).backward()
        opt.step()
    with torch.no_grad():
        return speed()
