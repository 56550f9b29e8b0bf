"""The paper's closed forms and bounds, as printed and as corrected.

Speeds: s is the Def-2.1 speed on ‖θ‖² = L; s̄ = L^{−L/2}s is the unit-sphere speed.

- Prop 2.2 / A.2 (``prop-2.2``, ``prop-A.2``): printed ‖θ(t)‖^{2−L} = ‖θ_0‖^{2−L} + (2−L)L s t
  (e^{2st} for L = 2); corrected (2−L)L^{1−L/2} s t (e^{st}), i.e. the printed law with s̄.
- Escape time (``eq-escape-time``): printed (‖θ_0‖^{2−L} + r^{2−L})/((L−2)Ls); corrected
  (‖θ_0‖^{2−L} − r^{2−L})/((L−2)L^{1−L/2}s); L = 2: log(r/‖θ_0‖)/(2s) printed, /s corrected.
- Sec. 2.1 (``eq-stime``): ‖θ(τ)‖ = ‖θ_0‖exp(−L∫L0(θ̄)dτ) and t(τ) = ‖θ_0‖^{2−L}∫exp((L−2)L∫L0)dτ
  (both printed without the factor L).
- Thm 3.1 (``thm-3.1``): c = R*√(2 log R*), bound 8c ℓ^{−1/2}/(1 − cℓ^{−1/2}) (∞ = vacuous when
  the denominator is ≤ 0); Thm A.7 (``thm-A.7``) writes the same number two other ways.
- Prop 3.3 / A.5 (``prop-3.3``, ``prop-A.5``): B_3.3 = 8‖G‖ε/(s* − ‖G‖ε);
  B_A5 = 2δ, δ = 2(‖G‖_F/(‖Gv‖‖u‖) + 1/(‖u‖‖v‖))ε.
- Prop 3.4 / A.4 (``prop-3.4``, ``prop-A.4``): threshold 2 log R(s_0)/(pL), only for s_0 > 0.
"""
from __future__ import annotations

import math


def _check(L, s):
    if not isinstance(L, int) or L < 2:
        raise ValueError(f"depth L must be an integer >= 2, got {L!r}")
    if not s > 0:
        raise ValueError(f"escape speed must be positive, got {s!r}")


def unit_speed(s: float, L: int) -> float:
    """s̄ = L^{−L/2} s (speed on the unit sphere)."""
    return s * L ** (-L / 2)


def norm_law(t, r0: float, s: float, L: int, *, printed: bool = False):
    """‖θ(t)‖ along an escape ray from ‖θ(t_0)‖ = r0 (t measured from t_0); NaN past blow-up."""
    import numpy as np

    _check(L, s)
    t = np.asarray(t, float)
    if L == 2:
        return r0 * np.exp((2.0 if printed else 1.0) * s * t)
    k = L if printed else L ** (1 - L / 2)
    base = r0 ** (2 - L) + (2 - L) * k * s * t
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(base > 0, np.abs(base) ** (1.0 / (2 - L)), np.nan)


def blowup_time(r0: float, s: float, L: int, *, printed: bool = False) -> float:
    """Finite blow-up time of the localized flow for L > 2."""
    _check(L, s)
    if L == 2:
        return math.inf
    k = L if printed else L ** (1 - L / 2)
    return r0 ** (2 - L) / ((L - 2) * k * s)


def escape_time(r: float, r0: float, s: float, L: int, *, printed: bool = False) -> float:
    """t_1(r) − t_0 for the localized flow on the escape ray."""
    _check(L, s)
    if L == 2:
        return math.log(r / r0) / ((2.0 if printed else 1.0) * s)
    if printed:
        return (r0 ** (2 - L) + r ** (2 - L)) / ((L - 2) * L * s)
    return (r0 ** (2 - L) - r ** (2 - L)) / ((L - 2) * L ** (1 - L / 2) * s)


def escape_time_form(r: float, r0: float, s: float, L: int, *, sign: int, unit: bool) -> float:
    """The printed escape-time expression with one error switched on or off at a time (``eq-escape-time``):
    (r0^{2−L} + sign·r^{2−L})/((L−2)·L·σ), and log(r/r0)/(2σ) for L = 2, with σ = s̄ = L^{−L/2}s (``unit``,
    the corrected constant) or σ = s (the printed constant). sign = +1 is the printed '+', −1 the correct
    sign; (sign=−1, unit=True) equals :func:`escape_time`, (sign=+1, unit=False) the printed formula."""
    _check(L, s)
    if sign not in (1, -1):
        raise ValueError(f"sign must be +1 or -1, got {sign!r}")
    sig = unit_speed(s, L) if unit else s
    if L == 2:
        return math.log(r / r0) / (2 * sig)
    return (r0 ** (2 - L) + sign * r ** (2 - L)) / ((L - 2) * L * sig)


def stime_time(r0, L: int, tau, integral, *, printed: bool = False):
    """t(τ) = ‖θ_0‖^{2−L}∫_0^τ exp((L−2)·k·I(τ_1))dτ_1 (k = L corrected, k = 1 printed), by the trapezoid rule
    on samples τ_i, I(τ_i) along axis 0 (torch tensors of shape (T, ...); r0 a number or a tensor of the
    trailing shape)."""
    import torch

    f = torch.exp((L - 2) * (1.0 if printed else L) * integral)
    acc = torch.cumsum(0.5 * (f[1:] + f[:-1]) * (tau[1:] - tau[:-1]), 0)
    return r0 ** (2 - L) * torch.cat([torch.zeros_like(f[:1]), acc])


def stime_norm(r0, integral, L: int, *, printed: bool = False):
    """‖θ(τ)‖ from I(τ) = ∫_0^τ L0(θ̄)dτ': corrected r0·e^{−L I}; printed r0·e^{−I} (numbers or tensors)."""
    import torch

    k = 1.0 if printed else L
    if isinstance(integral, torch.Tensor):
        return r0 * torch.exp(-k * integral)
    return r0 * math.exp(-k * integral)


def thm31_c(x_norm: float, g_norm: float, s: float) -> float:
    """c = R√(2 log R), R = ‖X‖_F‖G‖_F/s (≥ 1 by Cauchy–Schwarz)."""
    R = x_norm * g_norm / s
    if R < 1:
        raise ValueError(f"R = ‖X‖‖G‖/s = {R} < 1 is impossible for a true speed")
    return R * math.sqrt(2 * math.log(R))


def thm31_bound(ell: float, x_norm: float, g_norm: float, s: float) -> float:
    """8c ℓ^{−1/2}/(1 − cℓ^{−1/2}); +inf where 1 − cℓ^{−1/2} ≤ 0 (no bound: vacuous)."""
    c = thm31_c(x_norm, g_norm, s)
    den = 1 - c / math.sqrt(ell)
    return math.inf if den <= 0 else 8 * c / math.sqrt(ell) / den


def thm31_bite_layer(x_norm: float, g_norm: float, s: float) -> tuple[int, int]:
    """(ℓ_pos, ℓ_nv): first ℓ with a positive denominator, first ℓ with bound < 1 (ℓ > 81c²)."""
    c = thm31_c(x_norm, g_norm, s)
    return math.floor(c * c) + 1, math.floor(81 * c * c) + 1


def thmA7_bound(ell: float, x_norm: float, g_norm: float, s: float) -> float:
    """Thm A.7's form 8c_A ℓ^{−1/2}/(s* − c_A ℓ^{−1/2}), c_A = √2‖X‖‖G‖√(log‖X‖+log‖G‖−log s*)."""
    cA = math.sqrt(2) * x_norm * g_norm * math.sqrt(math.log(x_norm) + math.log(g_norm) - math.log(s))
    den = s - cA / math.sqrt(ell)
    return math.inf if den <= 0 else 8 * cA / math.sqrt(ell) / den


def thmA7_proof_form(ell: float, x_norm: float, g_norm: float, s: float) -> float:
    """The proof's last display: 8‖G‖/(s* − c_p‖G‖/√ℓ)·c_p/√ℓ, c_p = √2‖X‖√(log R*)."""
    cp = math.sqrt(2) * x_norm * math.sqrt(math.log(x_norm * g_norm / s))
    den = s - cp * g_norm / math.sqrt(ell)
    return math.inf if den <= 0 else 8 * g_norm / den * cp / math.sqrt(ell)


def b33(g_norm: float, eps: float, s: float) -> float:
    """Prop 3.3: 8‖G‖ε/(s* − ‖G‖ε) (+inf if s* ≤ ‖G‖ε)."""
    den = s - g_norm * eps
    return math.inf if den <= 0 else 8 * g_norm * eps / den


def bA5(g_norm: float, gv_norm: float, u_norm: float, v_norm: float, eps: float) -> float:
    """Prop A.5's intermediate bound 2δ, δ = 2(‖G‖/(‖Gv‖‖u‖) + 1/(‖u‖‖v‖))ε."""
    return 4 * (g_norm / (gv_norm * u_norm) + 1 / (u_norm * v_norm)) * eps


def prop34_threshold(x_norm: float, g_norm: float, s0: float, p: float, L: int) -> float:
    """2 log R(s_0)/(pL) with R(s_0) = ‖X‖‖G‖/s_0.

    Prop 3.4 assumes Tr[GᵀZ_L] ≤ −s_0 < 0. A parameter with s_0 ≤ 0 (e.g. a dead ReLU network,
    Z_L = 0, hence L0 = 0) does not meet the hypothesis: the proposition says nothing about it and
    R(s_0) is undefined, so this raises instead of returning a number (callers filter such θ)."""
    if not (0 < p < 1):
        raise ValueError(f"p must lie in (0, 1), got {p}")
    if not s0 > 0:
        raise ValueError(f"Prop 3.4 needs Tr[G^T Z_L] <= -s_0 < 0, got s_0 = {s0!r} (hypothesis not met)")
    return 2 * math.log(x_norm * g_norm / s0) / (p * L)
