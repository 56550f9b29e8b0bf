"""``--device-split``: find CUDA device bugs on a machine without CUDA.

A CUDA run breaks where a tensor is built without naming its device (so on the CPU, torch's default) and then meets
the run's tensors (on CUDA): "Expected all tensors to be on the same device", or a CUDA generator drawing a CPU tensor.
A CPU run cannot see it, since there both places are the CPU. This mode recreates the split on the CPU: the run's
device stays ``cpu`` and every factory call that names no device (``torch.zeros``, ``torch.randn``, ``torch.tensor``
of non-tensor data, ...) builds on ``meta`` instead. Such a tensor then fails where it meets the run's tensors, as it
would beside CUDA tensors, and the traceback points at the line that built it.

It is a diagnostic, not a verdict: verdicts of such a run mean nothing, and code that builds CPU-only helpers
without a device (legitimate on CUDA too) fails on the meta tensor's missing data ("Cannot copy out of meta
tensor", ".item() on meta tensors") rather than on a device mismatch. :func:`is_split_error` tells the two apart.
``torch.as_tensor`` / ``torch.tensor`` of an existing tensor keep its device and are left alone.
"""
from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors

SPLIT_MESSAGES = ("is not on the expected device", "Expected all tensors to be on the same device",
                  "device type for generator")


class MetaDefault(TorchFunctionMode):
    """Factory calls that name no device build on ``meta``."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _device_constructors() and kwargs.get("device") is None:
            if not (func in (torch.as_tensor, torch.tensor) and args and isinstance(args[0], torch.Tensor)):
                kwargs["device"] = "meta"
        return func(*args, **kwargs)


def is_split_error(message: str) -> bool:
    """Whether a failure message is a device split (as a CUDA run would hit it), not a meta tensor's missing data."""
    return any(s in message for s in SPLIT_MESSAGES)


_ACTIVE: list = []


def enable() -> None:
    """Enter the mode for the rest of the process (once)."""
    if not _ACTIVE:
        mode = MetaDefault()
        mode.__enter__()
        _ACTIVE.append(mode)


def disable() -> None:
    while _ACTIVE:
        _ACTIVE.pop().__exit__(None, None, None)
