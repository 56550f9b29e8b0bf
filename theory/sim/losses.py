"""Losses as functions of outputs u (shape (E, N[, o])) and targets, mean over samples.

- ``logistic``: labels y ∈ {±1}, ℓ = log(1+exp(-y u)) (Kou et al.).
- ``bce``: labels y ∈ {0,1}, ℓ = softplus(-(2y-1) u) (Wang et al., Eq. 2).
- ``squared``: ℓ = ½‖u - y‖² (Zhu et al.).
- ``cross_entropy``: class indices y ∈ {0..K−1} (int64), outputs (E, N, K), ℓ = logsumexp(u) − u_y
  (the multi-class experiments of Wang et al. Sec. 6).
Each returns per-network losses of shape (E,). ``derivative`` gives ∂ℓ/∂u per sample.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

NAMES = ("logistic", "bce", "squared", "cross_entropy")


def _check(name: str, u: torch.Tensor, y: torch.Tensor) -> None:
    if name not in NAMES:
        raise ValueError(f"unknown loss {name!r}: choose one of {NAMES}")
    if name == "logistic" and not bool(torch.all((y == 1) | (y == -1))):
        raise ValueError("logistic loss needs labels in {-1, +1}")
    if name == "bce" and not bool(torch.all((y == 0) | (y == 1))):
        raise ValueError("bce loss needs labels in {0, 1}")
    if name == "cross_entropy":
        if u.dim() != 3 or y.dtype != torch.long or y.shape != u.shape[1:2]:
            raise ValueError(f"cross_entropy needs outputs (E, N, K) and int64 class indices (N,), got "
                             f"{tuple(u.shape)} and {y.dtype} {tuple(y.shape)}")
        if bool(((y < 0) | (y >= u.shape[-1])).any()):
            raise ValueError(f"cross_entropy class indices must lie in 0..{u.shape[-1] - 1}")


def per_sample(name: str, u: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """ℓ(u_i, y_i), shape of u without a trailing output axis.

    Args:
        name: one of :data:`NAMES`: ``logistic`` (y ∈ {±1}), ``bce`` (y ∈ {0, 1}), ``squared``, ``cross_entropy``
            (int64 class indices, outputs (E, N, K)).
        u: outputs, (E, N) (or (E, N, o) / (E, N, K)).
        y: targets, (N,) shared or (E, N) per member.

    >>> import torch
    >>> per_sample("squared", torch.tensor([[1.0, 3.0]]), torch.tensor([0.0, 1.0])).tolist()
    [[0.5, 2.0]]
    """
    _check(name, u, y)
    if name == "logistic":
        return F.softplus(-y * u)
    if name == "bce":
        return F.softplus(-(2 * y - 1) * u)
    if name == "cross_entropy":
        return torch.logsumexp(u, -1) - u.gather(-1, y.view(1, -1, 1).expand(u.shape[0], -1, 1)).squeeze(-1)
    r = 0.5 * (u - y) ** 2
    return r.sum(-1) if r.dim() == 3 else r


def loss(name: str, u: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean loss per network, shape (E,): the mean over samples of :func:`per_sample` (same arguments).

    Args:
        name: a loss name (:data:`NAMES`); u: outputs (E, N[, o]); y: targets.

    >>> import torch
    >>> loss("logistic", torch.zeros(2, 3, dtype=torch.float64), torch.tensor([1.0, -1.0, 1.0])).tolist()
    [0.6931471805599453, 0.6931471805599453]
    """
    return per_sample(name, u, y).mean(-1)


def derivative(name: str, u: torch.Tensor, y: torch.Tensor, validate: bool = True) -> torch.Tensor:
    """∂ℓ/∂u per sample (logistic: -y·sig(-y u); bce: sig(u)-y; squared: u-y).

    Args:
        name: a loss name (:data:`NAMES`); u: outputs; y: targets.
        validate: ``False`` skips the label check (for inner loops that validated once).

    >>> import torch
    >>> derivative("squared", torch.tensor([[1.0, 3.0]]), torch.tensor([0.0, 1.0])).tolist()
    [[1.0, 2.0]]
    """
    if validate:
        _check(name, u, y)
    if name == "logistic":
        return -y * torch.sigmoid(-y * u)
    if name == "bce":
        return torch.sigmoid(u) - y
    if name == "cross_entropy":
        return torch.softmax(u, -1) - F.one_hot(y, u.shape[-1]).to(u.dtype)
    return u - y
