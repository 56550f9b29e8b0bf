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

import ast

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


# -- draws that a CUDA run would make on the device (issue 33: the same data on every device) -----------------------
# The policy's generators are CPU generators (theory.device.generator, ctx.generator): every seeded draw is made on
# the CPU and moved (theory.device.draw). A CPU run cannot see a call that draws on the run's device instead: there
# both are the CPU. :func:`device_draws` finds them in the source.

RANDOM_FACTORIES = {"randn", "rand", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson",
                    "rand_like", "randn_like", "randint_like"}
RANDOM_METHODS = {"normal_", "uniform_", "random_", "bernoulli_", "exponential_", "geometric_", "cauchy_",
                  "log_normal_"}
DRAW_KINDS = {
    "device-draw": "torch.<random>(…, generator=g, device=D) with D neither the generator's device nor 'cpu': "
                   "fails in a CUDA run (a CPU generator cannot draw on CUDA)",
    "in-place-draw": "t.<random>_(…, generator=g): draws on t's device; fails in a CUDA run when t is on CUDA",
    "tensor-draw": "torch.bernoulli/multinomial/normal/poisson of a tensor with generator=g: draws on that tensor's "
                   "device; fails in a CUDA run when it is on CUDA",
    "device-generator": "torch.Generator(device=D) with D not 'cpu': a CUDA run draws other numbers than a CPU run",
}


def _is_cpu_device(node) -> bool:
    """``"cpu"``, ``torch.device("cpu")``, ``draw_device(…)`` or ``<generator>.device`` (a CPU device under the
    policy: a draw made where the generator lives)."""
    if isinstance(node, ast.Constant):
        return node.value == "cpu"
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if name == "draw_device":
            return True
        if name == "device" and node.args and isinstance(node.args[0], ast.Constant):
            return node.args[0].value == "cpu"
    if isinstance(node, ast.Attribute) and node.attr == "device":
        base = node.value
        nm = base.id if isinstance(base, ast.Name) else (base.attr if isinstance(base, ast.Attribute) else "")
        return nm in ("g", "gen", "generator", "rng") or "gen" in nm.lower()
    return False


def device_draws(src: str) -> list[tuple[int, str, str]]:
    """(line, kind, call) of every random draw in ``src`` that a CUDA run would make on the device, or with a device
    generator (:data:`DRAW_KINDS`). Draws without a generator (torch's global RNG) are left out; so are calls on a
    line marked ``# device-scan: deliberate``."""
    out, lines = [], src.splitlines()
    for node in ast.walk(ast.parse(src)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if "device-scan: deliberate" in lines[node.lineno - 1]:
            continue
        kw = {k.arg: k.value for k in node.keywords}
        name, owner = node.func.attr, node.func.value
        is_torch = isinstance(owner, ast.Name) and owner.id == "torch"
        kind = None
        if is_torch and name == "Generator" and "device" in kw and not _is_cpu_device(kw["device"]):
            kind = "device-generator"
        elif "generator" in kw and not (isinstance(kw["generator"], ast.Constant) and kw["generator"].value is None):
            if is_torch and name in RANDOM_FACTORIES:
                if "device" in kw and not _is_cpu_device(kw["device"]):
                    kind = "device-draw"
                elif name in ("bernoulli", "multinomial", "poisson") or (
                        name == "normal" and node.args and not all(isinstance(a, ast.Constant) for a in node.args[:2])):
                    kind = "tensor-draw"
            elif not is_torch and name in RANDOM_METHODS:
                kind = "in-place-draw"
        if kind:
            out.append((node.lineno, kind, ast.get_source_segment(src, node) or name))
    return out
