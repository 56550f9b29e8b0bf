"""Losses as functions of outputs u (shape (E, N[, o])) and targets, mean over samples.

- ``logistic``: labels y ∈ {±1}, ℓ = log(1+exp(-y u)) (Kou et al.).
- ``bce``: labels y ∈ {0,1}, ℓ = softplus(-(2y-1) u) (Wang et al., Eq. 2).
- ``squared``: ℓ = ½‖u - y‖² (Zhu et al.).
- ``cross_entropy``: class indices y ∈ {0..K−1} (int64), outputs (E, N, K), ℓ = logsumexp(u) − u_y
  (the multi-class experiments of Wang et al. Sec. 6).
Each returns per-network losses of shape (E,). ``derivative`` gives ∂ℓ/∂u per sample.
The labels are checked (ValueError naming the loss's label set) once per labels tensor and version, not at every
call: a training loop that passes the same labels at every step reads them on the host once (issue 33).
"""
from __future__ import annotations

import weakref

import torch
import torch.nn.functional as F

NAMES = ("logistic", "bce", "squared", "cross_entropy")


class _CheckedOnce:
    """Tensors whose contents passed a check, remembered by identity and version counter (issue 33).

    A loop that passes the same tensor at every step (GD's labels and inputs) then reads it on the host once, not
    once per step (each read is a host synchronisation on CUDA); a new tensor, or one changed in place since (its
    ``_version`` moved), is checked again. A change that bypasses the version counter (through ``.data`` or a
    NumPy view) is not seen, and inference tensors (no version counter) are checked every time. Entries go with
    their tensors (weak references). Shared with :func:`theory.sim.models.check_inputs`."""

    def __init__(self):
        self._seen: dict[int, tuple] = {}

    @staticmethod
    def _version(t):
        try:
            return t._version
        except (RuntimeError, AttributeError):  # inference tensors, non-tensors: no version to trust
            return None

    def hit(self, t, key) -> bool:
        """Whether ``t``, unchanged, passed the check ``key``."""
        e = self._seen.get(id(t))
        return e is not None and e[0]() is t and e[1] == key and self._version(t) == e[2]

    def add(self, t, key) -> None:
        """Remember that ``t`` passed the check ``key`` at its current version."""
        v = self._version(t)
        if v is None:
            return
        i, seen = id(t), self._seen
        try:
            ref = weakref.ref(t, lambda _r, i=i, seen=seen: seen.pop(i, None))
        except TypeError:
            return
        seen[i] = (ref, key, v)


_LABELS_OK = _CheckedOnce()


def _check(name: str, u: torch.Tensor, y: torch.Tensor) -> None:
    """The loss name and the labels, with clear errors. Shapes are host metadata, checked at every call; the
    label values (a host read) once per labels tensor and version (:class:`_CheckedOnce`)."""
    if name not in NAMES:
        raise ValueError(f"unknown loss {name!r}: choose one of {NAMES}")
    if name == "cross_entropy" and (u.dim() != 3 or y.dtype != torch.long or y.shape != u.shape[1:2]):
        raise ValueError(f"cross_entropy needs outputs (E, N, K) and int64 class indices (N,), got "
                         f"{tuple(u.shape)} and {y.dtype} {tuple(y.shape)}")
    if name == "squared":
        return
    key = (name, u.shape[-1] if name == "cross_entropy" else None)
    if _LABELS_OK.hit(y, key):
        return
    if name == "logistic" and not bool(torch.all((y == 1) | (y == -1))):
        raise ValueError("logistic loss needs labels in {-1, +1}")
    if name == "bce" and not bool(torch.all((y == 0) | (y == 1))):
        raise ValueError("bce loss needs labels in {0, 1}")
    if name == "cross_entropy" and bool(((y < 0) | (y >= u.shape[-1])).any()):
        raise ValueError(f"cross_entropy class indices must lie in 0..{u.shape[-1] - 1}")
    _LABELS_OK.add(y, key)


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
