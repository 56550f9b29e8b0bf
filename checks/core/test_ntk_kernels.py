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
    X = torch.randn(5, 4, generator=g, dtype=torch.float64, device=g.device)
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


def test_row_angles_accurate_at_zero_and_pi():
    """Angles from explicit differences: identical rows give exactly 0 (arccos of the rounded inner product
    gives ~1e-8), opposite rows exactly π, tiny angles to relative precision; bad shapes rejected."""
    import math

    from theory.sim.ntk import row_angles

    g = torch.Generator().manual_seed(3)
    A = torch.randn(5, 7, generator=g, dtype=torch.float64, device=g.device)
    assert float(row_angles(A, A).diagonal().abs().max()) == 0.0
    assert float((row_angles(A, -A).diagonal() - math.pi).abs().max()) <= 4e-16
    u = A[0] / A[0].norm()
    v = A[1] - (A[1] @ u) * u
    v = v / v.norm()
    for th in (1e-3, 1e-6, 1e-9):
        w = math.cos(th) * u + math.sin(th) * v          # rounding of w's entries moves the angle by ~1e-16
        got = float(row_angles(u[None], w[None]))
        naive = float(torch.arccos((u @ w / w.norm()).clamp(-1, 1)))
        assert abs(got - th) <= 1e-15
        if th < 1e-8:
            assert abs(naive - th) > 0.5 * th            # arccos(1 − θ²/2) has lost θ entirely
    assert float(row_angles(u[None], 3 * u[None])) == 0.0
    with pytest.raises(ValueError, match="row_angles"):
        row_angles(A, A[:, :3])
