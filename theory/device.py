"""Device and dtype policy: the one place that decides where tensors live.

CUDA when present and asked for (``auto``), CPU otherwise. float64 is the default
dtype for checks of exact identities; float32 only where a check says so.
Nothing in the harness requires CUDA.
"""
from __future__ import annotations

import os

import torch

DEFAULT_DTYPE = torch.float64
_CHOICES = ("auto", "cpu", "cuda")
_current: torch.device | None = None


def resolve(name: str = "auto", worker_index: int | None = None) -> torch.device:
    """Turn ``auto|cpu|cuda`` into a concrete device.

    ``worker_index`` (an xdist worker number) picks GPU ``worker_index % count``
    when several GPUs exist; with one GPU every worker shares it.
    """
    if name not in _CHOICES:
        raise ValueError(f"unknown device {name!r} (--device or $THEORY_DEVICE): choose one of {_CHOICES}")
    if name == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        if name == "cuda":
            raise ValueError("device 'cuda' requested but torch.cuda.is_available() is False")
        return torch.device("cpu")
    count = torch.cuda.device_count()
    idx = 0 if worker_index is None else worker_index % count
    return torch.device(f"cuda:{idx}")


def set_device(dev: torch.device | str) -> torch.device:
    """Set the process-wide device used by :func:`get_device`."""
    global _current
    _current = resolve(dev) if isinstance(dev, str) and dev in _CHOICES else torch.device(dev)
    return _current


def get_device() -> torch.device:
    """The process-wide device (``THEORY_DEVICE`` env var, else auto)."""
    global _current
    if _current is None:
        _current = resolve(os.environ.get("THEORY_DEVICE", "auto"))
    return _current


def tensor(data, dtype: torch.dtype = DEFAULT_DTYPE, device: torch.device | None = None) -> torch.Tensor:
    """``torch.as_tensor`` on the policy device and dtype."""
    return torch.as_tensor(data, dtype=dtype, device=device or get_device())


def draw_device(generator: torch.Generator | None, target=None):
    """Where a random draw with ``generator`` must be made: torch samples only on the generator's own device, so a
    draw goes there and is then moved to ``target`` (``torch.randn(..., generator=g, device=draw_device(g, t)).to(t)``).
    A check may pass its context's generator (CUDA in a CUDA run) to code that builds CPU tensors, or a CPU
    generator to code on the GPU; both work. Without a generator: ``target``."""
    return generator.device if generator is not None else target


def draw(sample, *args, generator: torch.Generator | None, device=None, **kwargs) -> torch.Tensor:
    """``sample(*args, generator=generator, **kwargs)`` for a torch random function (``torch.randn``, ``torch.randint``,
    ...), made on the generator's device (:func:`draw_device`) and moved to ``device``: the same numbers for a given
    generator, whatever ``device`` is."""
    return sample(*args, generator=generator, device=draw_device(generator, device), **kwargs).to(device)


def generator(seed: int, device: torch.device | None = None) -> torch.Generator:
    """A seeded torch.Generator on the given (or policy) device."""
    dev = device or get_device()
    g = torch.Generator(device=dev)
    g.manual_seed(int(seed) % (2**63))
    return g
