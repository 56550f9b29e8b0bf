"""Core: bad input raises a ValueError that names the problem; divergence never passes silently."""
import pytest
import torch

from theory import data
from theory import DivergenceError, UnknownClaimError, claims, device
from theory.records import Measurement
from theory.sim import activations, jacobian, losses, models, spectra, train

DT = torch.float64


def _kou_task(n: int, per_class: int):
    from theory.papers.kou2023 import empirical

    X = torch.randn(2 * per_class, 6, dtype=DT)
    labels = torch.tensor([3] * per_class + [8] * per_class)
    return empirical.task_data(X, labels, 3, 8, n)


@pytest.mark.parametrize("make, match", [
    (lambda: models.TwoLayerNet.init(2, -3, 4), "width m"),
    (lambda: models.TwoClassNet.init(2, 5, 0, sigma0=0.1), "input dim d"),
    (lambda: models.TwoClassNet.init(2, 5, 4, sigma0=-1.0), "sigma0"),
    (lambda: models.DeepMLP.init(2, [4, -1, 1]), r"dims\[1\]"),
    (lambda: models.DeepMLP.init(2, [4, 3, 1], stds=[0.1]), "stds"),
    (lambda: models.DeepMLP.init(2, [4, 3, 1], stds="glorot"), "init scheme"),
    (lambda: activations.get("leaky_relu", gamma=1.5), "slope gamma"),
    (lambda: activations.get("swish"), "unknown activation"),
    (lambda: data.gram_controlled(10, 20, 0.5), "p < 1/"),
    (lambda: data.orthonormal(10, 5), "n <= d"),
    (lambda: train.geometric_grid(-1), "T>=0"),
    # a real two-class task with too few images of one class must not come back unbalanced or short
    (lambda: _kou_task(n=8, per_class=3), "need 4 images of each class, have 3 of 3 and 3 of 8"),
    (lambda: _kou_task(n=7, per_class=10), "positive even number"),
])
def test_constructors_reject_bad_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_wrong_shapes_and_nan_inputs():
    net = models.TwoLayerNet.init(2, 5, 4)
    with pytest.raises(ValueError, match=r"expected \(N, 4\)"):
        net(torch.zeros(3, 5, dtype=DT))
    with pytest.raises(ValueError, match=r"NaN or inf"):
        net(torch.full((3, 4), float("nan"), dtype=DT))
    with pytest.raises(ValueError, match="shape"):
        train.gd(net, torch.zeros(3, 4, dtype=DT), torch.zeros(3, dtype=DT), loss="bce", lr=torch.ones(3), steps=1)
    with pytest.raises(ValueError, match=r"\(N, d\) tensor"):
        jacobian.opnorm(lambda x: x, torch.zeros(4, dtype=DT))
    with pytest.raises(ValueError, match="unknown method"):
        jacobian.opnorm(lambda x: x, torch.zeros(2, 4, dtype=DT), method="svd")
    with pytest.raises(ValueError, match="NaN or inf"):
        spectra.stable_rank(torch.full((3, 3), float("nan"), dtype=DT))
    with pytest.raises(ValueError, match="labels in"):
        losses.loss("logistic", torch.zeros(1, 3, dtype=DT), torch.tensor([0.0, 1.0, 1.0], dtype=DT))


def test_nan_weights_diverge_loudly():
    X = data.unit_sphere(6, 4)
    y = data.balanced_labels(6)
    net = models.TwoClassNet.init(3, 4, 4, sigma0=0.1, act="relu")
    net.W[1, 0, 0, 0] = float("nan")
    with pytest.raises(DivergenceError, match=r"members \[1\]"):
        train.gd(net, X, y, loss="logistic", lr=0.1, steps=3)
    with pytest.raises(ValueError, match="parameter 0"):
        models.check_params(net.params)


def test_blowup_raises_divergence_error():
    X = data.unit_sphere(6, 4, generator=torch.Generator().manual_seed(0))
    Y = torch.randn(6, dtype=DT, generator=torch.Generator().manual_seed(1), device="cpu") * 10
    net = models.DeepMLP.init(2, [4, 16, 16, 1], generator=torch.Generator().manual_seed(2))
    with pytest.raises(DivergenceError, match="diverged"):
        train.gd(net, X, Y, loss="squared", lr=50.0, steps=200)


def test_unknown_claim_ids():
    bogus = "kou2023/" + "lem-99.9"  # built, not quoted: not a reference for the coverage tool
    with pytest.raises(UnknownClaimError, match=f"unknown claim ID '{bogus}'"):
        claims.get(bogus)
    with pytest.raises(UnknownClaimError, match="malformed"):
        claims.get("not a claim")
    with pytest.raises(UnknownClaimError):
        Measurement(claim="wang2024/" + "thm-0.0", verdict="holds")
    with pytest.raises(ValueError, match="verdict"):
        Measurement(claim="wang2024/thm-4.5", verdict="fine")
    with pytest.raises(ValueError, match="finding"):
        Measurement(claim="wang2024/thm-4.5", verdict="expected-failure")


def test_device_policy():
    assert device.resolve("cpu").type == "cpu"
    with pytest.raises(ValueError, match="unknown device"):
        device.resolve("tpu")
    if not torch.cuda.is_available():
        assert device.resolve("auto").type == "cpu"
        with pytest.raises(ValueError, match="cuda"):
            device.resolve("cuda")
    else:
        n = torch.cuda.device_count()
        assert device.resolve("auto", worker_index=n + 1).index == (n + 1) % n
