"""Spectral summaries of (batched) matrices: singular values, stable rank, tail energy.

stable rank  srank(M) = ‖M‖_F² / ‖M‖₂²   (Kou et al. Def. srank; Bantzis et al. conventions)
tail energy  tail(M)  = Σ_{i≥2} s_i² / Σ_i s_i² = 1 − 1/srank(M)
"""
from __future__ import annotations

import torch


def _as_matrix(M: torch.Tensor) -> torch.Tensor:
    if not isinstance(M, torch.Tensor) or M.dim() < 2:
        raise ValueError(f"expected a (batched) matrix, got {getattr(M, 'shape', type(M))}")
    if not bool(torch.isfinite(M).all()):
        raise ValueError("matrix contains NaN or inf")
    return M


def singular_values(M: torch.Tensor) -> torch.Tensor:
    """Singular values in decreasing order over the last two axes of ``M`` (finite, any batch shape).

    >>> import torch
    >>> singular_values(torch.diag(torch.tensor([1.0, 3.0, 2.0]))).tolist()
    [3.0, 2.0, 1.0]
    """
    return torch.linalg.svdvals(_as_matrix(M))


def stable_rank(M: torch.Tensor) -> torch.Tensor:
    """‖M‖_F²/‖M‖₂² over the last two axes of ``M`` (error for an all-zero matrix).

    >>> import torch
    >>> stable_rank(torch.diag(torch.tensor([2.0, 1.0, 1.0], dtype=torch.float64))).item()
    1.5
    """
    s = singular_values(M)
    top = s[..., 0] ** 2
    if bool((top == 0).any()):
        raise ValueError("stable rank of a zero matrix is undefined")
    return (s ** 2).sum(-1) / top


def tail_energy(M: torch.Tensor) -> torch.Tensor:
    """Σ_{i≥2}s_i²/Σ s_i² over the last two axes of ``M`` (= 1 − 1/srank).

    >>> import torch
    >>> tail_energy(torch.diag(torch.tensor([2.0, 1.0, 1.0], dtype=torch.float64))).item()
    0.3333333333333333
    """
    s2 = singular_values(M) ** 2
    tot = s2.sum(-1)
    if bool((tot == 0).any()):
        raise ValueError("tail energy of a zero matrix is undefined")
    return s2[..., 1:].sum(-1) / tot


def spectral_norm(M: torch.Tensor) -> torch.Tensor:
    """‖M‖₂ over the last two axes of ``M`` (dense, exact).

    >>> import torch
    >>> spectral_norm(torch.tensor([[3.0, 0.0], [4.0, 0.0]], dtype=torch.float64)).item()
    5.0
    """
    return torch.linalg.matrix_norm(_as_matrix(M), ord=2)
