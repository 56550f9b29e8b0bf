"""Losses as functions of outputs u (shape (E, N[, o])) and targets, mean over samples.

- ``logistic``: labels y ∈ {±1}, ℓ = log(1+exp(-y u)) (Kou et al.).
- ``bce``: labels y ∈ {0,1}, ℓ = softplus(-(2y-1) u) (Wang et al., Eq. 2).
- ``squared``: ℓ = ½‖u - y‖² (Zhu et al.).
Each returns per-network losses of shape (E,). ``derivative`` gives ∂ℓ/∂u per sample.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

NAMES = ("logistic", "bce", "squared")


def _check(name: str, u: torch.Tensor, y: torch.Tensor) -> None:
    if name not in NAMES:
        raise ValueError(f"unknown loss {name!r}: choose one of {NAMES}")
    if name == "logistic" and not bool(torch.all((y == 1) | (y == -1))):
        raise ValueError("logistic loss needs labels in {-1, +1}")
    if name == "bce" and not bool(torch.all((y == 0) | (y == 1))):
        raise ValueError("bce loss needs labels in {0, 1}")


def per_sample(name: str, u: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """ℓ(u_i, y_i), shape of u without a trailing output axis."""
    _check(name, u, y)
    if name == "logistic":
        return F.softplus(-y * u)
    if name == "bce":
        return F.softplus(-(2 * y - 1) * u)
    r = 0.5 * (u - y) ** 2
    return r.sum(-1) if r.dim() == 3 else r


def loss(name: str, u: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean loss per network, shape (E,)."""
    return per_sample(name, u, y).mean(-1)


def derivative(name: str, u: torch.Tensor, y: torch.Tensor, validate: bool = True) -> torch.Tensor:
    """∂ℓ/∂u per sample (logistic: -y·sig(-y u); bce: sig(u)-y; squared: u-y).

    ``validate=False`` skips the label check (for inner loops that validated once).
    """
    if validate:
        _check(name, u, y)
    if name == "logistic":
        return -y * torch.sigmoid(-y * u)
    if name == "bce":
        return torch.sigmoid(u) - y
    return u - y
