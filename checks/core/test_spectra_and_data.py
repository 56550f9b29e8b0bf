"""Core: stable rank / tail energy on known matrices; data generators meet their statistics; loaders."""
import numpy as np
import pytest
import torch

from theory import data
from theory.data import real
from theory.sim import spectra

DT = torch.float64


def test_stable_rank_known_matrices():
    D = torch.diag(torch.tensor([3.0, 1.0, 1.0], dtype=DT))
    assert float(spectra.stable_rank(D)) == pytest.approx(11 / 9, rel=1e-14)
    assert float(spectra.tail_energy(D)) == pytest.approx(2 / 11, rel=1e-14)
    u, v = torch.randn(6, 1, dtype=DT), torch.randn(1, 4, dtype=DT)
    assert float(spectra.stable_rank(u @ v)) == pytest.approx(1.0, rel=1e-12)
    assert float(spectra.stable_rank(torch.eye(5, dtype=DT))) == pytest.approx(5.0, rel=1e-14)
    batch = torch.stack([D, torch.eye(3, dtype=DT)])
    torch.testing.assert_close(spectra.stable_rank(batch), torch.tensor([11 / 9, 3.0], dtype=DT))
    # tail = 1 - 1/srank
    Q = torch.randn(7, 5, dtype=DT)
    torch.testing.assert_close(spectra.tail_energy(Q), 1 - 1 / spectra.stable_rank(Q))


def test_gram_controlled_meets_its_statistics(ctx):
    X, s = data.gram_controlled(10, 40, 0.02, generator=ctx.generator("core/data", "gram"))
    G = X @ X.T
    assert float((G.diagonal() - 1).abs().max()) < 1e-13
    off = G[~torch.eye(10, dtype=torch.bool)].abs()
    assert float((off - 0.02).abs().max()) < 1e-13  # every off-diagonal is exactly ±p
    assert s.p == pytest.approx(0.02, abs=1e-13) and s.diag_dominant and s.R == pytest.approx(1, abs=1e-13)
    assert s.epsilon == pytest.approx(0.02 * 10, rel=1e-12)


def test_orthonormal_and_gaussian_rows(ctx):
    X = data.orthonormal(5, 9, random_rotation=True, generator=ctx.generator("core/data", "orth"))
    torch.testing.assert_close(X @ X.T, torch.eye(5, dtype=DT), atol=1e-14, rtol=0)
    assert data.stats(X).p < 1e-14
    Y, s = data.gaussian_rows(10, 400, generator=ctx.generator("core/data", "gr"))
    n = Y.norm(dim=1)
    assert s.R_min == pytest.approx(float(n.min())) and s.R_max == pytest.approx(float(n.max()))
    assert 0.7 < s.R_min <= s.R_max < 1.3  # ‖x‖² ~ χ²_400/400


def test_unit_circle_exact_literals(circle8):
    X, G = circle8
    assert X.shape == (8, 2) and G.tolist() == [(-1.0) ** j for j in range(1, 9)]
    assert (X == 0).sum().item() == 4  # exact zeros at the axis points
    torch.testing.assert_close(X.norm(dim=1), torch.ones(8, dtype=DT), atol=1e-15, rtol=0)


def test_binary_digits(ctx):
    X, y = real.binary_digits(3, 8, n=40, generator=ctx.generator("core/data", "digits"))
    assert X.shape == (40, 64) and int((y == 1).sum()) == 20 and int((y == -1).sum()) == 20
    torch.testing.assert_close(X.norm(dim=1), torch.ones(40, dtype=DT))
    X2, y2 = real.binary_digits(3, 8, zero_one=True, unit_norm=False)
    assert set(y2.tolist()) == {0.0, 1.0} and float(X2.max()) <= 1.0


def test_mnist_loader_on_written_idx_and_npz(tmp_path):
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8)
    labs = rng.integers(0, 10, size=5, dtype=np.uint8)
    real.write_idx(tmp_path / "img.idx", imgs)
    real.write_idx(tmp_path / "lab.idx", labs)
    X, y = real.load_mnist(tmp_path / "img.idx", tmp_path / "lab.idx")
    assert X.shape == (5, 784) and float(X.max()) <= 1.0
    np.testing.assert_allclose(X.cpu().numpy() * 255, imgs.reshape(5, -1), atol=1e-9)
    assert y.tolist() == labs.tolist()
    np.savez(tmp_path / "m.npz", x=imgs, y=labs)
    X2, y2 = real.load_mnist(tmp_path / "m.npz")
    torch.testing.assert_close(X, X2)
    (tmp_path / "bad.idx").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="not an IDX file"):
        real.load_mnist(tmp_path / "bad.idx", tmp_path / "lab.idx")
    with pytest.raises(FileNotFoundError, match="nothing is downloaded"):
        real.load_mnist(tmp_path / "missing.idx", tmp_path / "lab.idx")

