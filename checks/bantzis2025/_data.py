"""Datasets (X, G) for the escape-speed checks: circle (Example 1), Gaussian, XOR-like."""
from __future__ import annotations

import torch

from theory import data
from theory.device import draw


def dataset(name: str, ctx, generator=None):
    """(X (N, d), G (N,)). ``gaussian``: N=12, d=3 i.i.d. normal X and G (optimum is one neuron);
    ``xor``: N=32, d=2, G_j = sign(x_j1 x_j2)/√N (needs two neurons); ``circle``: Example 1."""
    if name == "circle":
        return data.unit_circle_8(device=ctx.device)
    g = generator if generator is not None else ctx.generator("bantzis2025/data", {"name": name})
    if name == "gaussian":
        X = draw(torch.randn, 12, 3, generator=g, dtype=ctx.dtype, device=ctx.device)
        G = draw(torch.randn, 12, generator=g, dtype=ctx.dtype, device=ctx.device)
        return X, G
    if name == "xor":
        X = draw(torch.randn, 32, 2, generator=g, dtype=ctx.dtype, device=ctx.device)
        G = torch.sign(X[:, 0] * X[:, 1]) / 32 ** 0.5
        return X, G
    raise ValueError(f"unknown dataset {name!r}")
