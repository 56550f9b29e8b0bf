"""``--device-split`` (theory/harness/device_split.py): on the CPU, a tensor built without a device lands on 'meta'
and fails where it meets the run's tensors, as it would beside CUDA tensors; named devices are untouched."""
from __future__ import annotations

import pytest
import torch

from theory.harness import device_split as ds


@pytest.fixture
def split():
    ds.enable()
    try:
        yield
    finally:
        ds.disable()


def test_deviceless_tensor_fails_beside_the_runs_tensor(split):
    run = torch.ones(3, device="cpu")
    with pytest.raises(RuntimeError) as e:
        run + torch.arange(3)  # device-scan: deliberate (on CUDA: a CPU tensor beside a CUDA one)
    assert ds.is_split_error(str(e.value))
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(3, generator=g)  # device-scan: deliberate (on CUDA: "Expected a 'cpu' device type for generator …")
    assert x.device.type == "meta"  # here the draw lands on meta and fails at its first use with the run's tensors
    with pytest.raises(RuntimeError) as e:
        run * x
    assert ds.is_split_error(str(e.value))


def test_named_devices_and_conversions_are_untouched(split):
    run = torch.ones(3, device="cpu")
    g = torch.Generator(device="cpu").manual_seed(0)
    out = run + torch.arange(3, device=run.device) + torch.randn(3, generator=g, device=g.device)
    assert out.device.type == "cpu"
    assert torch.as_tensor(run).device.type == "cpu"


def test_mode_is_off_outside_the_option():
    assert torch.zeros(2).device.type == "cpu"
    assert not ds.is_split_error("Cannot copy out of meta tensor; no data!")
