"""Device and dtype policy: the one place that decides where tensors live.

CUDA when present and asked for (``auto``), CPU otherwise. float64 is the default
dtype for checks of exact identities; float32 only where a check says so.
Nothing in the harness requires CUDA.

Issue 33 (the GPU pays off):

- the same data on every device: every generator of the policy is a CPU generator (:func:`generator`), and every
  draw is made on the CPU and then moved to its target (:func:`draw`), so a CUDA run judges the draws of a CPU run;
- placement by size: :func:`place` keeps a simulation on the CPU below :data:`CROSSOVER_FLOPS` per step, even in
  a CUDA run, and gives the run's device above it.
"""
from __future__ import annotations

import os

import torch

DEFAULT_DTYPE = torch.float64
CROSSOVER_FLOPS = 1e8
"""FLOPs per step (nominal: forward and backward products, :func:`theory.sim.mlp_backprop.gd_step_flops`) below
which a simulation stays on the CPU in a CUDA run (:func:`place`); ``$THEORY_CROSSOVER_FLOPS`` overrides it.

PROVISIONAL, NOT MEASURED ON A GPU: the probe meant to measure it (``step_overhead.py``, kept with the team's
GPU material) has never run on one (its README says so), and no GPU was lent when this was set. It is set on the
CPU's side, so that a wrong value costs at most the CPU run's time, never more: on the 2-core reference machine
(one thread, float64 GEMM ≈ 29 GFLOP/s) a step of 1e8 nominal FLOPs takes 3.4 ms at the GEMM rate, and 0.7 ms
for 16 Kou nets by the analytic engine (its Gram updates execute fewer FLOPs; ``theory.bench --only step``, one
thread, load average 8), still 3–5× an eager CUDA step's launch floor (a GD step is ~25 kernels at ~5–10 µs). One Kou net (n = 10, d = 784, m = 100) costs 6.3·10⁶
FLOPs per step, so Kou runs stay on the CPU below 16 members. Replace the value by the crossover that
``python -m theory.bench --only step`` prints on a GPU machine (the smallest size at which a CUDA step beats a CPU
step), with the card and date."""
CROSSOVER_SOURCE = "provisional (not measured on a GPU): see theory.device.CROSSOVER_FLOPS"
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
    """Where a random draw with ``generator`` is made: on the generator's own device (torch samples only there), and
    without a generator on the CPU (torch's default CPU generator). The policy's generators (:func:`generator`,
    ``ctx.generator``) are CPU generators, so every seeded draw is made on the CPU and then moved to its target
    (``torch.randn(..., generator=g, device=draw_device(g)).to(t)``, or :func:`draw`): a CUDA run draws the same
    numbers as a CPU run (issue 33). ``target`` is accepted for old callers and does not change the answer."""
    return generator.device if generator is not None else torch.device("cpu")


def draw(sample, *args, generator: torch.Generator | None, device=None, **kwargs) -> torch.Tensor:
    """``sample(*args, generator=generator, **kwargs)`` for a torch random function (``torch.randn``, ``torch.randint``,
    ...), made where :func:`draw_device` says (the CPU for the policy's generators and for ``generator=None``) and
    then moved to ``device`` (left on the CPU when ``device`` is None): the same numbers for a given generator state,
    whatever ``device`` is (checks/core/test_same_draws.py). A non-CPU generator still works (its draw is made on its
    device) but gives other numbers than a CPU run: the policy never makes one."""
    return sample(*args, generator=generator, device=draw_device(generator), **kwargs).to(device)


def generator(seed: int, device=None) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded with ``seed``, whatever the run's device (issue 33: the same data on every
    device). Draw from it with :func:`draw` (made on the CPU, then moved). ``device`` is accepted for old callers and
    ignored: there is no device generator in the policy."""
    g = torch.Generator(device="cpu")
    g.manual_seed(int(seed) % (2**63))
    return g


def crossover_flops() -> float:
    """The placement crossover in FLOPs per step: ``$THEORY_CROSSOVER_FLOPS`` if set, else :data:`CROSSOVER_FLOPS`."""
    raw = os.environ.get("THEORY_CROSSOVER_FLOPS")
    if raw is None:
        return CROSSOVER_FLOPS
    try:
        v = float(raw)
    except ValueError:
        v = float("nan")
    if not v >= 0:
        raise ValueError(f"$THEORY_CROSSOVER_FLOPS must be a non-negative number, got {raw!r}")
    return v


def place(flops_per_step: float, device=None) -> torch.device:
    """Where a simulation whose step costs ``flops_per_step`` runs (issue 33, placement by size): the CPU below
    :func:`crossover_flops`, ``device`` (default: the run's, :func:`get_device`) at or above it. On a CPU run, the
    CPU. Data drawn through the policy are the same on both (:func:`draw`), so the placement changes rounding, not
    the draws. Not applied implicitly by the trainers: a caller builds its tensors on the placed device."""
    f = float(flops_per_step)
    if not f >= 0 or f == float("inf"):
        raise ValueError(f"flops_per_step must be a finite non-negative number, got {flops_per_step!r}")
    dev = get_device() if device is None else torch.device(device)
    if dev.type == "cpu" or f < crossover_flops():
        return torch.device("cpu")
    return dev
