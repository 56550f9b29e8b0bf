"""Core: per-layer empirical tangent kernels of DeepMLP (theory.sim.ntk.layer_kernels) vs brute-force Jacobians."""
from __future__ import annotations

import pytest
import torch

from theory.sim.models import DeepMLP
from theory.sim.ntk import layer_kernels


@pytest.mark.parametrize("ntk", [False, True])
def test_layer_kernels_match_jacobian_products(ntk):
    g = torch.Generator().manual_seed(3)
    net = DeepMLP.init(2, [4, 7, 6, 1], stds="he", ntk=ntk, alpha=0.7, generator=g, device="cpu")
    X = torch.randn(5, 4, generator=g, dtype=torch.float64)
    K = layer_kernels(net, X)
    for e in range(2):
        ps = [w[e:e + 1].clone() for w in net.params]
        for l in range(3):
            def f(w, l=l):
                q = list(ps)
                q[l] = w
                return net.forward(X, q).reshape(-1)

            J = torch.autograd.functional.jacobian(f, ps[l]).reshape(5, -1)
            # same sums of products in another order: rounding only
            assert torch.allclose(J @ J.T, K[l][e], rtol=1e-12, atol=1e-13)


def test_layer_kernels_reject_vector_output():
    net = DeepMLP.init(1, [3, 4, 2], generator=torch.Generator().manual_seed(0), device="cpu")
    with pytest.raises(ValueError, match="scalar-output"):
        layer_kernels(net, torch.randn(2, 3, dtype=torch.float64))
