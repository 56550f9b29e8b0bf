"""Uniform sampling of Euclidean balls, shared by the papers' perturbation draws (Zhu et al. Def. 1: x̂ uniform in
the ε-ball around x, catalog ``zhu2022/def-1``) and the random restarts of Wang et al.'s L2 PGD (``wang2024/def-3.1``)."""
from __future__ import annotations

import torch
from ..device import draw


def sample_ball(shape, d: int, eps: float, *, generator=None, dtype=torch.float64, device=None) -> torch.Tensor:
    """Uniform samples of the closed ε-ball of R^d: ε U^{1/d} g/‖g‖ (g standard normal, U uniform on [0, 1]), shape
    (*shape, d). The normal draw comes first, then the uniform one.

    Args:
        shape: the batch shape (a tuple); d: the dimension; eps: the radius (> 0).
        generator: the torch.Generator to draw from; dtype, device: of the result.

    >>> import torch
    >>> x = sample_ball((1000,), 3, 0.5, generator=torch.Generator().manual_seed(0), device="cpu")
    >>> tuple(x.shape), bool(x.norm(dim=-1).max() <= 0.5)
    ((1000, 3), True)
    """
    if not eps > 0:
        raise ValueError(f"radius eps must be positive, got {eps!r}")
    if not (isinstance(d, int) and d >= 1):
        raise ValueError(f"dimension d must be a positive integer, got {d!r}")
    g = draw(torch.randn, *shape, d, generator=generator, dtype=dtype, device=device)
    r = draw(torch.rand, *shape, 1, generator=generator, dtype=dtype, device=device) ** (1.0 / d)
    return eps * r * g / g.norm(dim=-1, keepdim=True)
