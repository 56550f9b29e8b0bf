"""Concentration statements (Wang et al. Lemma B.2 Eqs. 36–57, Lemma C.2 Eqs. 91–99, Eq. 110).

Each function returns the printed deviation bound (explicit constants read off the proofs, see the catalog)
for a failure probability δ, so a check can count draws whose deviation exceeds it.
"""
from __future__ import annotations

import math

import torch
from ...stats import holm  # noqa: F401  (Holm's procedure, one copy for every paper)


def lemB2_bounds(m: int, n: int, q: float, delta: float) -> dict:
    """Deviation bounds of Lemma B.2 items 1–3 (each w.p. ≥ 1−δ) around the centre m^{-q} (resp. m^{-2q})."""
    if not (0 < delta < 1) or m < 1 or n < 1:
        raise ValueError(f"need m, n ≥ 1 and δ ∈ (0,1), got m={m}, n={n}, δ={delta}")
    e = 8 * math.log(2 / delta) / (m * n)
    return {"item1": m ** -q * math.sqrt(8 * math.log(2 * n / delta) / m),
            "item2": m ** (-2 * q) * max(e, math.sqrt(e)),
            "item3": m ** -q * math.sqrt(e)}


def lemB2_deviations(Z: torch.Tensor, q: float) -> dict:
    """|avg‖z_i‖ − m^{-q}|, |avg‖z_i‖² − m^{-2q}|, |(avg‖z_i‖²)^{1/2} − m^{-q}| for Z (R, n, m)."""
    m = Z.shape[-1]
    nrm2 = Z.pow(2).sum(-1)
    return {"item1": (nrm2.sqrt().mean(-1) - m ** -q).abs(),
            "item2": (nrm2.mean(-1) - m ** (-2 * q)).abs(),
            "item3": (nrm2.mean(-1).sqrt() - m ** -q).abs()}


def lemC2_epsilon(m: int, delta: float, width: float = 1.0, factor: float = 2.0) -> float:
    """ε solving 2exp(−mε²/(factor·(u−l)²)) = δ; the printed Lemma C.2 has factor 2 (Hoeffding: 1/2)."""
    return width * math.sqrt(factor * math.log(2 / delta) / m)


def lemC2_statistic(Xs: torch.Tensor, a: torch.Tensor, v: torch.Tensor, mu: float) -> torch.Tensor:
    """|(1/√m)Σ a_r v_r X_r − (1/√m) aᵀv μ| for draws Xs (R, m)."""
    m = Xs.shape[-1]
    return ((Xs * (a * v)).sum(-1) - (a * v).sum() * mu).abs() / math.sqrt(m)


def eq110_epsilon(m: int, delta: float, M: float = 1.0, factor: float = 2.0) -> float:
    """Eq. (110): deviation √(factor·M⁴ log(2/δ)/m) (printed factor 2; Hoeffding would be 1/2)."""
    return math.sqrt(factor * M ** 4 * math.log(2 / delta) / m)

