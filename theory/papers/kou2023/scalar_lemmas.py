"""Kou et al. (2023) scalar lemmas: the logarithmic sandwich of Lemma 5.3 / H.1 / H.2 and the
log-ratio monotonicity of Lemma H.4.

- :func:`sequence` — a sequence with x_{t+1} − x_t = u_t·C·e^{−x_t} for a chosen law of u_t
  (the hypotheses of H.1 / H.2 / 5.3 are then satisfied by construction).
- :func:`upper_h1` / :func:`lower_h2` — the bounds as proved in Appendix H:
  H.1: x_t ≤ log(e^{x_0} + C e^{C} t) if x_t ≥ 0 and x_{t+1} − x_t ≤ C e^{−x_t};
  H.2: x_t ≥ log(e^{x_0} + C t)       if x_{t+1} − x_t ≥ C e^{−x_t}.
- :func:`printed_53` — Lemma 5.3 *as printed* (eqs. (5.6)–(5.7)) with exp(−x_0) in place of e^{x_0}
  (a typo: the printed upper bound is false for every x_0 > 0, already at t = 0).
- :func:`log_ratio` — t ↦ log(1+at)/log(1+bt) of Lemma H.4 (non-decreasing when b ≥ a > 0).
- :func:`sup_h1` — the exact supremum of x_t over every sequence allowed by Lemma H.1's hypothesis (the adversarial
  worst case of H.1); the infimum for H.2 is the sequence with increments exactly C e^{−x_t} (law ``lower``).

All arithmetic is float64 numpy; the bounds use ``logaddexp`` so large x_0 or t do not overflow.
"""
from __future__ import annotations

import math

import numpy as np

LAWS = ("lower", "upper", "uniform", "signed")


def sequence(x0: float, C1: float, C2: float, T: int, law: str = "uniform", *, seed: int = 0,
             floor: float | None = None) -> np.ndarray:
    """x_0..x_T with increments c_t·e^{−x_t}, c_t = C1 (``lower``), C2 (``upper``),
    U(C1, C2) (``uniform``) or U(−C2, C2) (``signed``; then clipped at ``floor`` from below).

    With ``floor=0`` the sequence stays non-negative and still satisfies x_{t+1} − x_t ≤ C2 e^{−x_t}
    (clipping can only lower an increment), which is the setting of Lemma H.1.
    """
    if law not in LAWS:
        raise ValueError(f"law must be one of {LAWS}, got {law!r}")
    if not (T >= 1 and C1 > 0 and C2 >= C1):
        raise ValueError(f"need T >= 1 and 0 < C1 <= C2, got T={T}, C1={C1}, C2={C2}")
    rng = np.random.default_rng(seed)
    if law == "lower":
        c = np.full(T, C1)
    elif law == "upper":
        c = np.full(T, C2)
    elif law == "uniform":
        c = C1 + (C2 - C1) * rng.random(T)
    else:
        c = C2 * (2 * rng.random(T) - 1)
    out = [float(x0)]
    xt = float(x0)
    exp = math.exp
    for ct in c.tolist():  # a genuine recursion: each step depends on the last (plain floats: fast)
        xt = xt + ct * exp(-xt)
        if floor is not None and xt < floor:
            xt = floor
        out.append(xt)
    return np.asarray(out)


def _t(T: int) -> np.ndarray:
    return np.arange(T + 1, dtype=float)


def upper_h1(x0: float, C: float, T: int, *, with_exp_factor: bool = True) -> np.ndarray:
    """log(e^{x_0} + C e^{C} t), t = 0..T (Lemma H.1); without the e^{C} factor if asked (a wrong version)."""
    k = C * np.exp(C) if with_exp_factor else C
    t = _t(T)
    with np.errstate(divide="ignore"):
        return np.logaddexp(x0, np.log(k * t))


def lower_h2(x0: float, C: float, T: int) -> np.ndarray:
    """log(e^{x_0} + C t), t = 0..T (Lemma H.2)."""
    t = _t(T)
    with np.errstate(divide="ignore"):
        return np.logaddexp(x0, np.log(C * t))


def printed_53(x0: float, C1: float, C2: float, T: int) -> tuple[np.ndarray, np.ndarray]:
    """Lemma 5.3 as printed: (log(e^{−x_0} + C1 t), log(e^{−x_0} + C2 e^{C2} t))."""
    return lower_h2(-x0, C1, T), upper_h1(-x0, C2, T)


def slack(x: np.ndarray, lower: np.ndarray | None = None, upper: np.ndarray | None = None) -> float:
    """Smallest slack min(upper − x, x − lower) over t (negative: the bound is violated)."""
    out = np.inf
    if upper is not None:
        out = min(out, float(np.min(upper - x)))
    if lower is not None:
        out = min(out, float(np.min(x - lower)))
    return out


def tolerance(x: np.ndarray) -> float:
    """Rounding allowance for comparing x_t with a log bound: x_t accumulates one rounding of
    relative size 2⁻⁵³ per step (≤ T·u·max|x| in the worst case) and log/exp add a few ulps."""
    return 4 * np.finfo(float).eps * max(1.0, float(np.max(np.abs(x)))) * (len(x) + 4)


def log_ratio(a: float, b: float, t: np.ndarray) -> np.ndarray:
    """log(1+at)/log(1+bt) (Lemma H.4), computed with log1p for accuracy at small at."""
    t = np.asarray(t, float)
    return np.log1p(a * t) / np.log1p(b * t)


def sup_h1(x0: float, C: float, T: int) -> np.ndarray:
    """M_t = sup x_t over all sequences with x_t ≥ 0 and x_{t+1} − x_t ≤ C e^{−x_t} from x_0 = ``x0`` (t = 0..T).

    The reachable set is {x0} at t = 0 and [0, M_t] after (any value in [0, f(x_t)], f(x) = x + C e^{−x}, is allowed),
    and f is convex, so M_1 = f(x0) and M_{t+1} = max(f(0), f(M_t)) = max(C, M_t + C e^{−M_t}). For C > 1 the
    maximum is not always the sequence with increments exactly C e^{−x} (dropping to 0 and jumping to C can be
    higher), so this is the adversarial worst case of Lemma H.1, not one of the laws of :func:`sequence`."""
    if not (T >= 1 and C > 0 and x0 >= 0):
        raise ValueError(f"need T >= 1, C > 0 and x0 >= 0, got T={T}, C={C}, x0={x0}")
    out = [float(x0)]
    m = float(x0) + C * math.exp(-float(x0))
    out.append(m)
    exp = math.exp
    for _ in range(T - 1):
        m = max(C, m + C * exp(-m))
        out.append(m)
    return np.asarray(out)
