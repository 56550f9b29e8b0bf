"""Initialisations of Eq. (2) (catalog ``zhu2022/eq-2``) and the per-layer gain γ.

f(x) = W_L φ(W_{L-1} ⋯ φ(W_1 x)), [W_1]_ij ~ N(0, β_1²), [W_l]_ij ~ N(0, β²) (2 ≤ l ≤ L-1),
[W_L]_ij ~ N(0, β_L²); γ := β√(m/2) is the gain of E‖t‖² through one masked hidden layer.
Named schemes (conventional, the main-text table is not in the appendix):
LeCun β_1²=1/d, β²=β_L²=1/m (γ = 1/√2); He β_1²=2/d, β²=2/m, β_L² = 2/m (``he``) or 1/m
(``he1``) (γ = 1); ``beta:<g>`` is He with every hidden/output variance multiplied so that
γ = g; NTK is He's function with N(0,1) weights and forward multipliers (``ntk=True``).
"""
from __future__ import annotations

import math

import torch

from theory.sim.models import DeepMLP

SCHEMES = ("lecun", "he", "he1", "ntk")


def stds(scheme: str, d: int, m: int, L: int) -> list[float]:
    """Per-layer standard deviations [β_1, β, …, β, β_L] for depth L ≥ 2."""
    if L < 2:
        raise ValueError(f"depth L must be at least 2, got {L}")
    if scheme == "lecun":
        b1, b, bL = 1 / d, 1 / m, 1 / m
    elif scheme in ("he", "ntk"):
        b1, b, bL = 2 / d, 2 / m, 2 / m
    elif scheme == "he1":
        b1, b, bL = 2 / d, 2 / m, 1 / m
    elif scheme.startswith("beta:"):
        g = float(scheme.split(":", 1)[1])
        if not g > 0:
            raise ValueError(f"beta scheme needs a positive gain, got {scheme!r}")
        b1, b, bL = 2 / d, 2 * g * g / m, 2 * g * g / m
    else:
        raise ValueError(f"unknown scheme {scheme!r}: one of {SCHEMES} or 'beta:<gamma>'")
    return [math.sqrt(b1)] + [math.sqrt(b)] * (L - 2) + [math.sqrt(bL)]


def gamma(beta: float, m: int) -> float:
    """γ = β√(m/2) (proof of Lemma 5)."""
    return beta * math.sqrt(m / 2)


def build(E: int, d: int, m: int, L: int, o: int, scheme: str, *, generator=None, dtype=torch.float64,
          device=None, alpha: float = 1.0) -> DeepMLP:
    """E independent Eq.-(2) networks [d, m, …, m, o] (NTK parameterisation for ``ntk``)."""
    return DeepMLP.init(E, [d] + [m] * (L - 1) + [o], stds=stds(scheme, d, m, L), ntk=(scheme == "ntk"),
                        alpha=alpha, generator=generator, dtype=dtype, device=device)


def stacked(models: list[DeepMLP]) -> DeepMLP:
    """One DeepMLP whose ensemble axis concatenates standard-parameterised ``models`` (same dims)."""
    if any(mo.multipliers for mo in models):
        raise ValueError("stacked() needs standard-parameterised models (NTK multipliers are per model)")
    if len({mo.alpha for mo in models}) != 1:
        raise ValueError("stacked() needs a common output scale alpha")
    ws = [torch.cat([mo.weights[l] for mo in models]) for l in range(models[0].depth)]
    return DeepMLP(ws, models[0].act, models[0].alpha)
