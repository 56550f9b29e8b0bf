"""Formulas of Appendix D written apart from :mod:`theory.papers.zhu2022.two_layer` (numpy, float64), so that the checks
can pin the production code against them."""
from __future__ import annotations

import numpy as np
import torch


def k_reference(X) -> np.ndarray:
    """K_ij = x_iᵀx_j (π − θ_ij)/(2π), θ_ij the angle between x_i and x_j (θ_ii = 0 exactly: arccos is ill-conditioned
    at 1), so that H^∞ = (m β₂²/α²) K."""
    X = np.asarray(X.detach().cpu() if isinstance(X, torch.Tensor) else X, dtype=np.float64)
    G = X @ X.T
    nx = np.sqrt(np.diag(G))
    theta = np.arccos(np.clip(G / np.outer(nx, nx), -1.0, 1.0))
    np.fill_diagonal(theta, 0.0)
    return G * (np.pi - theta) / (2 * np.pi)
