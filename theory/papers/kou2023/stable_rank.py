"""Kou et al. (2023) stable-rank quantities: limits, rates, certificates and derived constants.

Claims served: thm-4.1 (leaky: Θ(log t) norms, srank → 1, loss rate), lem-C.3 (rate O(1/log t) and
the rank-one certificate), thm-4.3 / lem-F.1 (ReLU bounded stable rank; the proof's certificate),
lem-F.2 / lem-F.3 / rem-4.4 (orthogonal data: frozen pattern, predicted finite-(m, n) limit),
def-srank (the definition).

Layout as in :mod:`theory.papers.kou2023.setup`: ρ, Z are (…, E, 2, m, n), class index 0 is j=+1.
All quantities are computed from m×m / m×n blocks, never from d-dimensional weights.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from theory.stats import fit_affine
from ...device import draw_device, tensor


# --- definition -------------------------------------------------------------------------------
def srank_and_norm_from_gram(M: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(srank(W), ‖W‖₂) from the Gram matrix M = WWᵀ (…, m, m) by one eigendecomposition (d-free):
    srank = tr(M)/λ_max(M) (def-srank), ‖W‖₂ = √λ_max(M)."""
    ev = torch.linalg.eigvalsh(M).clamp_min(0)
    top = ev[..., -1]
    return ev.sum(-1) / top, top.sqrt()


def srank_from_gram(M: torch.Tensor) -> torch.Tensor:
    """srank(W) = tr(WWᵀ)/λ_max(WWᵀ) from the Gram matrix M = WWᵀ (…, m, m) (def-srank)."""
    return srank_and_norm_from_gram(M)[0]


# --- fitting windows --------------------------------------------------------------------------
def window(t, decades: float = 2.0, end: float | None = None) -> np.ndarray:
    """Boolean mask of grid times in [T/10^decades, T] (T = ``end`` or max t), t ≥ 1."""
    t = np.asarray(t, float)
    T = float(t.max() if end is None else end)
    return (t >= T / 10 ** decades) & (t <= T) & (t >= 1)


def log_slope(t, y, *, decades: float = 2.0):
    """Fit y = a log t + b on the last ``decades`` decades; also the slopes on the two halves
    (stability check). Returns (fit, slope_first_half, slope_second_half)."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    w = window(t, decades)
    T = t.max()
    f = fit_affine(np.log(t[w]), y[w])
    w1 = window(t, decades / 2, end=T / 10 ** (decades / 2))
    w2 = window(t, decades / 2)
    return f, fit_affine(np.log(t[w1]), y[w1]).slope, fit_affine(np.log(t[w2]), y[w2]).slope


def limit_inverse_log(t, y, *, decades: float = 2.0):
    """Extrapolated limit L∞ from y(t) = L∞ + b/log t on the last ``decades`` decades (AffineFit;
    L∞ is the intercept)."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    w = window(t, decades)
    return fit_affine(1.0 / np.log(t[w]), y[w])


@dataclass(frozen=True)
class LimitFit:
    """Extrapolated limit of y(t) = L∞ + Σ_{k=1}^{degree} b_k x^k, x = 1/(log t + shift) (OLS).

    ``truncation`` = |L∞ of the degree+1 fit − L∞|: the size of the first neglected term's effect on
    the intercept (for a fit through the window it is ≈ c_{k+1}·Π x over the window), i.e. an estimate
    of the fit-model error that a tolerance on L∞ must exceed."""

    intercept: float
    intercept_se: float
    truncation: float
    degree: int
    shift: float
    x_range: tuple


def _poly_intercept(x, y, degree):
    A = np.vander(x, degree + 1, increasing=True)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    dof = max(x.size - degree - 1, 1)
    s2 = float(((y - A @ coef) ** 2).sum() / dof)
    cov = s2 * np.linalg.pinv(A.T @ A)
    return float(coef[0]), math.sqrt(max(float(cov[0, 0]), 0.0))


def limit_log_poly(t, y, *, shift: float = 0.0, degree: int = 2, decades: float = 2.0) -> LimitFit:
    """L∞ from y(t) = L∞ + b₁x + … + b_degree x^degree with x = 1/(log t + shift), fitted by OLS on the
    last ``decades`` decades of the grid (see :class:`LimitFit`). ``shift`` puts the natural time scale
    into the logarithm (e.g. log K for a process that grows like log(K t)); the limit x → 0 is the same
    for every shift, but the Taylor coefficients, and so the extrapolation error, are not."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    if t.shape != y.shape or t.ndim != 1:
        raise ValueError(f"limit_log_poly needs matching 1-d t and y, got {t.shape}, {y.shape}")
    if not isinstance(degree, int) or degree < 1:
        raise ValueError(f"degree must be a positive integer, got {degree!r}")
    w = window(t, decades)
    u = np.log(t[w]) + shift
    if w.sum() < degree + 4 or not np.all(u > 0) or not np.all(np.isfinite(y[w])):
        raise ValueError(f"limit_log_poly needs ≥ {degree + 4} finite points with log t + shift > 0 in the window "
                         f"(got {int(w.sum())} points, min log t + shift = {u.min() if u.size else float('nan'):.3g})")
    x = 1.0 / u
    L, se = _poly_intercept(x, y[w], degree)
    L_next, _ = _poly_intercept(x, y[w], degree + 1)
    return LimitFit(L, se, abs(L_next - L), degree, float(shift), (float(x.min()), float(x.max())))


# --- leaky ReLU (thm-4.1, lem-C.3, rem-4.2) ----------------------------------------------------
def leaky_norm_slope_ref(y: torch.Tensor, norms2: torch.Tensor, gamma: float) -> np.ndarray:
    """Derived (p = 0) slope of ‖w_{j,r}(t)‖ against log t, per class j (index 0: j=+1):
    √(Σ_{y_i=j}‖x_i‖⁻² + γ²Σ_{y_i=−j}‖x_i‖⁻²)/(1+γ²) (Lemma 5.7 + Lemma 5.3; not in the paper)."""
    inv = (1.0 / norms2).cpu().numpy()
    yy = y.cpu().numpy()
    out = []
    for j in (1, -1):
        s = inv[yy == j].sum() + gamma ** 2 * inv[yy == -j].sum()
        out.append(math.sqrt(s) / (1 + gamma ** 2))
    return np.array(out)


def leaky_tL_ref(m: int, eta, gamma: float, norms2: torch.Tensor) -> np.ndarray:
    """Derived (p = 0) limit of t·L_S(W(t)): m/((1+γ²)η)·Σ_i‖x_i‖⁻² (Remark 4.2, sharp form)."""
    return m / ((1 + gamma ** 2) * np.asarray(eta, float)) * float((1.0 / norms2).sum())


def leaky_alpha(eps: float, c1: float, gamma: float) -> float:
    """α = (1 − c₁⁻¹γ⁻²ε)/(1 + c₁⁻¹γ⁻²ε) of Theorem 4.1(c) / Lemma D.2 (ε = R_min⁻²pn)."""
    k = eps / (c1 * gamma ** 2)
    return (1 - k) / (1 + k)


def spread_blocks(W0W0t: torch.Tensor, Z0: torch.Tensor, C: torch.Tensor, G: torch.Tensor):
    """For E_j = W_j − 1 w_{j,1}ᵀ (rows w_{j,r} − w_{j,1}): ‖E_j‖_F² and the coefficient part
    C_{j,r} − C_{j,1} (whose constancy in t is Lemma C.2). Shapes: W0W0ᵀ (E,2,m,m), Z0 = W0Xᵀ
    (E,2,m,n), C (E,2,m,n) with W = W0 + C X."""
    dC = C - C[..., :1, :]
    # ‖e_r‖² = ‖w0_r − w0_1‖² + 2 (Z0_r − Z0_1)·dC_r + dC_r G dC_rᵀ
    d0 = W0W0t.diagonal(dim1=-2, dim2=-1)
    base = d0 - 2 * W0W0t[..., :, 0] + d0[..., :1]
    dZ = Z0 - Z0[..., :1, :]
    fro = (base + 2 * (dZ * dC).sum(-1) + ((dC @ G) * dC).sum(-1)).sum(-1)
    return fro, dC


# --- ReLU (thm-4.3, lem-F.1, lem-F.2, lem-F.3) --------------------------------------------------
def f1_certificate(C: torch.Tensor, G: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Lemma F.1's certificate cert = ‖ΔW‖_F²‖v‖²/‖ΔW v‖² ≥ srank(ΔW), v = XᵀG⁻¹1, with ΔW = C X:
    ΔW v = C·1 and ‖v‖² = 1ᵀG⁻¹1, so everything is d-free. Returns (cert, srank(ΔW)), (…, E, 2)."""
    one = torch.ones(G.shape[0], dtype=G.dtype, device=G.device)
    v2 = float(one @ torch.linalg.solve(G, one))
    D = C @ G @ C.transpose(-1, -2)
    fro = D.diagonal(dim1=-2, dim2=-1).sum(-1)
    c1 = (C.sum(-1) ** 2).sum(-1)
    return fro * v2 / c1, srank_from_gram(D)


def orthogonal_limit_matrix(Z0: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Lemma F.3's A (class +1) and B (class −1) as one (E, 2, m, n) tensor M with
    M_{j,r,i} = 1[y_i = j]·1[⟨w_{j,r}(0), x_i⟩ > 0]·m/|S_i^(0)| (limit of ρ̄/log t, Lemma F.2(d))."""
    m = Z0.shape[-2]
    jy = torch.stack([y, -y]).view(1, 2, 1, -1)
    act = (Z0 > 0) & (jy > 0)
    S = act.sum(-2, keepdim=True).clamp_min(1)
    return act.to(Z0.dtype) * m / S


def orthogonal_limit_srank(Z0: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Predicted limits for orthonormal data: (srank(A), srank(B)) as (E, 2), and the stacked
    W = [W₊; W₋] limit (E,) = (‖A‖_F²+‖B‖_F²)/max(‖A‖₂², ‖B‖₂²) (the blocks have disjoint columns)."""
    M = orthogonal_limit_matrix(Z0, y)
    Gm = M @ M.transpose(-1, -2)
    ev = torch.linalg.eigvalsh(Gm)
    fro, top = ev.clamp_min(0).sum(-1), ev[..., -1]
    return fro / top, fro.sum(-1) / top.max(-1).values


def orthogonal_log_shift(eta, S0: torch.Tensor, norms2: torch.Tensor, y: torch.Tensor, m: int) -> np.ndarray:
    """Natural log-time offset per (member, class), (E, 2): mean over the class's own samples of log K_i,
    K_i = η|S_i^(0)|‖x_i‖²/(n m²) (catalog lem-F.2: for p = 0 after T_stab the margin follows
    q ← q + K_i/(1+e^q) exactly, so e^q + q = K_i t + O(1) and ρ̄_{y_i,r,i} = (m/|S_i|)(log(K_i t) − c_i) + o(1)).
    ``S0`` is (E, n) of |S_i^(0)|."""
    eta = np.asarray(tensor(eta, device="cpu")).reshape(-1)
    S = S0.cpu().numpy().astype(float)
    n = S.shape[-1]
    if np.any(S <= 0):
        raise ValueError("orthogonal_log_shift needs |S_i^(0)| ≥ 1 for every sample (a sample no neuron learns)")
    logK = np.log(eta[:, None] * S * norms2.cpu().numpy()[None] / (n * m ** 2))
    yy = y.cpu().numpy()
    return np.stack([logK[:, yy > 0].mean(1), logK[:, yy < 0].mean(1)], 1)


def srank_A_montecarlo(m: int, n: int, draws: int, *, generator=None, dtype=torch.float64) -> torch.Tensor:
    """srank(A) for ``draws`` initial patterns (no training): A is m×(n/2) with i.i.d. Bernoulli(½)
    activity (orthonormal data, symmetric Gaussian init), column i scaled by m/|S_i^(0)|."""
    k = n // 2
    act = torch.rand(draws, m, k, generator=generator, dtype=dtype, device=draw_device(generator)) > 0.5
    S = act.sum(-2, keepdim=True).clamp_min(1)
    A = act.to(dtype) * m / S
    small = A.transpose(-1, -2) @ A if k <= m else A @ A.transpose(-1, -2)
    return srank_from_gram(small)


def relu_tL_ref(m: int, eta, S0: torch.Tensor, norms2: torch.Tensor) -> np.ndarray:
    """Derived (p = 0, ReLU) limit of t·L_S: (1/n)Σ_i n·m²/(η|S_i^(0)|‖x_i‖²)·(1/n)... written out:
    L ≈ (1/n)Σ_i e^{−q_i}, q_i ≈ log(K_i t), K_i = η|S_i|‖x_i‖²/(n m²) ⇒ tL → (1/n)Σ_i 1/K_i =
    Σ_i m²/(η|S_i|‖x_i‖²). ``S0`` is (E, n) of |S_i^(0)|."""
    eta = np.asarray(eta, float).reshape(-1)
    return (m ** 2 / (eta[:, None] * S0.cpu().numpy() * norms2.cpu().numpy()[None, :])).sum(-1)
