"""Activations with an explicit derivative convention at 0.

Piecewise-linear activations are written as ``z * s(z)`` with the slope mask
``s`` computed from ``z.detach()``: autograd, ``torch.func`` (jvp/vjp/vmap)
and double backward then all see the derivative ``s(z)``, including the
chosen value at 0 (Kou et al.: σ'(0)=1; Wang et al.: 1{z≥0}; Bantzis et al.: 0).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Activation:
    """σ with slope ``gamma`` on the negative side (0: ReLU, 1: linear).

    ``grad_at_zero`` is σ'(0) (1 or ``gamma``). ``kind`` is ``"pl"`` for
    piecewise-linear or a smooth name (``tanh``, ``softplus``). Made by :func:`get`.

    >>> import torch
    >>> relu = get("relu", grad_at_zero=0.0)
    >>> relu(torch.tensor([-1.0, 0.0, 2.0])).tolist(), relu.slope(torch.tensor([-1.0, 0.0, 2.0])).tolist()
    ([-0.0, 0.0, 2.0], [0.0, 0.0, 1.0])
    """

    name: str
    gamma: float = 0.0
    grad_at_zero: float = 1.0
    kind: str = "pl"

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        if self.kind == "tanh":
            return torch.tanh(z)
        if self.kind == "softplus":
            return torch.nn.functional.softplus(z)
        if self.gamma == 1.0:
            return z
        return z * self.slope(z.detach())

    def slope(self, z: torch.Tensor) -> torch.Tensor:
        """σ'(z) elementwise at the tensor ``z``, with the stated value at 0."""
        if self.kind == "tanh":
            return 1 - torch.tanh(z) ** 2
        if self.kind == "softplus":
            return torch.sigmoid(z)
        one, g = z.new_tensor(1.0), z.new_tensor(self.gamma)
        if self.grad_at_zero == 1.0:
            return torch.where(z >= 0, one, g)
        if self.grad_at_zero == self.gamma:
            return torch.where(z > 0, one, g)
        return torch.where(z > 0, one, torch.where(z < 0, g, z.new_tensor(self.grad_at_zero)))

    def slope_into(self, z: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """σ'(z) written into ``out`` (same shape and dtype), for hot loops outside autograd/vmap.

        Piecewise-linear case without boolean masks (``torch.where`` on a mask is ~7× slower on CPU):
        ``out = 1{z ≥ 0}`` (or ``1{z > 0}``) as 0/1, then ``out·(1−γ) + γ``. Exact: 0 ↦ γ, and
        fl(fl(1−γ) + γ) = 1 for every γ ∈ [0, 1] (Sterbenz for γ ≥ ½; otherwise the error of 1−γ is at most
        2⁻⁵⁴ and rounds back to 1). The three-valued case falls back to :meth:`slope`.
        """
        if self.kind != "pl" or self.grad_at_zero not in (1.0, self.gamma):
            return out.copy_(self.slope(z))
        (torch.ge if self.grad_at_zero == 1.0 else torch.gt)(z, 0, out=out)
        if self.gamma != 0.0:
            out.mul_(1.0 - self.gamma).add_(self.gamma)
        return out

    @property
    def is_linear(self) -> bool:
        """True for the identity (slope 1 on both sides)."""
        return self.kind == "pl" and self.gamma == 1.0


@dataclass(frozen=True, eq=False)
class MemberSlopes:
    """Piecewise-linear σ_e(z) = z·(1{z ≥ 0} + γ_e 1{z < 0}) with its own negative-side slope γ_e per
    ensemble member (axis 0 of every input), σ'(0) = 1 as in Kou et al.; γ_e = 0 is ReLU.

    Lets configurations that differ only in the slope (Kou et al. §6, Fig. 1: srank vs γ) share the
    ensemble axis with the seeds, instead of one run per γ. Same arithmetic as :class:`Activation`
    (``slope_into`` is exact: 0 ↦ γ_e, 1 ↦ 1). Made by :func:`member_slopes`.

    >>> import torch
    >>> act = member_slopes([0.0, 0.5])
    >>> act(torch.tensor([[-2.0], [-2.0]], dtype=torch.float64)).flatten().tolist()
    [-0.0, -1.0]
    """

    gammas: torch.Tensor
    name: str = "leaky_relu[per-member]"
    grad_at_zero: float = 1.0
    kind: str = "pl"
    is_linear: bool = False

    def _g(self, z: torch.Tensor) -> torch.Tensor:
        if z.dim() < 1 or z.shape[0] != self.gammas.shape[0]:
            raise ValueError(f"per-member slopes: input has leading axis {tuple(z.shape)[:1]}, expected the "
                             f"ensemble axis E = {self.gammas.shape[0]}")
        return self.gammas.to(dtype=z.dtype, device=z.device).view(-1, *([1] * (z.dim() - 1)))

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        return z * self.slope(z.detach())

    def slope(self, z: torch.Tensor) -> torch.Tensor:
        """σ_e'(z) elementwise (1 at z = 0)."""
        g = self._g(z)
        return torch.where(z >= 0, torch.ones_like(g), g)

    def slope_into(self, z: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """σ_e'(z) into ``out``: 1{z ≥ 0}·(1 − γ_e) + γ_e (exact, see :meth:`Activation.slope_into`)."""
        g = self._g(z)
        torch.ge(z, 0, out=out)
        return out.mul_(1.0 - g).add_(g)


def member_slopes(gammas) -> MemberSlopes:
    """:class:`MemberSlopes` from E negative-side slopes in [0, 1) (0: ReLU).

    Args:
        gammas: one slope per ensemble member (a list or 1-d tensor).

    >>> member_slopes([0.0, 0.1, 0.2]).gammas.tolist()
    [0.0, 0.1, 0.2]
    """
    g = torch.as_tensor(gammas, dtype=torch.float64, device="cpu")
    if g.dim() != 1 or g.numel() == 0:
        raise ValueError(f"member_slopes needs a 1-d, non-empty list of slopes, got shape {tuple(g.shape)}")
    if not bool(torch.isfinite(g).all()) or bool(((g < 0) | (g >= 1)).any()):
        raise ValueError(f"member slopes must lie in [0, 1) (0 = ReLU), got {g.tolist()}")
    return MemberSlopes(g)


def get(name: str, gamma: float | None = None, grad_at_zero: float = 1.0) -> Activation:
    """The activation called ``name``: ``linear``, ``relu``, ``leaky_relu`` (needs ``gamma`` in (0,1)), ``tanh``,
    ``softplus``.

    Args:
        name: one of the five names above (models accept the same names for ``act=``).
        gamma: the negative-side slope of ``leaky_relu``.
        grad_at_zero: σ'(0) for the piecewise-linear ones: 0 or 1 for ``relu``; 1 or ``gamma`` for ``leaky_relu``.

    >>> get("leaky_relu", gamma=0.1)
    Activation(name='leaky_relu', gamma=0.1, grad_at_zero=1.0, kind='pl')
    >>> get("tanh").kind, get("linear").is_linear
    ('tanh', True)
    """
    if name == "linear":
        return Activation("linear", 1.0, 1.0)
    if name == "relu":
        if grad_at_zero not in (0.0, 1.0):
            raise ValueError(f"relu grad_at_zero must be 0 or 1, got {grad_at_zero}")
        return Activation("relu", 0.0, float(grad_at_zero))
    if name == "leaky_relu":
        if gamma is None or not (0.0 < gamma < 1.0):
            raise ValueError(f"leaky_relu needs a slope gamma in (0, 1), got {gamma!r}")
        return Activation("leaky_relu", float(gamma), 1.0 if grad_at_zero == 1.0 else float(gamma))
    if name in ("tanh", "softplus"):
        return Activation(name, kind=name)
    raise ValueError(f"unknown activation {name!r}: linear, relu, leaky_relu, tanh, softplus")
