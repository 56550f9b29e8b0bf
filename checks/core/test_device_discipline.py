"""Device discipline of every random draw and every tensor → numpy conversion (issue 17: the full profile on CUDA).

torch samples only on a generator's own device: ``torch.randn(..., generator=g)`` without ``device=`` makes a CPU
tensor and fails with a CUDA generator ("Expected a 'cpu' device type for generator but found 'cuda'"). A CUDA run of
the full profile failed 100 tests this way, and a CPU run cannot see it. So the rule is checked on the source:

- every ``torch.<random>(..., generator=g)`` in ``theory/``, ``fixtures/`` and the paper checks names its device:
  ``device=g.device``, or ``"cpu"`` with an explicit CPU generator; shared code that draws for a target device
  calls :func:`theory.device.draw` (made on the generator's device, then moved to the target);
- ``.numpy()`` only after ``.cpu()`` (a CUDA tensor has no ``.numpy()``);
- in the shared code (``theory/sim``, ``theory/papers``, ``fixtures``) every fresh allocation
  (``torch.zeros/ones/eye/arange/linspace/full/empty/tensor``) names its device (or passes ``**opts`` that do): a
  second CUDA run failed 32 tests on tensors built on the CPU beside CUDA ones ("Expected all tensors to be on the
  same device"). ``torch.as_tensor`` converts and keeps a tensor's device, so it is not flagged.
"""
from __future__ import annotations

import ast
import pathlib

import pytest
import torch

from theory.device import draw, draw_device

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ("theory", "fixtures", "checks/bantzis2025", "checks/kou2023", "checks/wang2024", "checks/zhu2022",
           "checks/core")
SHARED = ("theory/sim", "theory/papers", "fixtures")
ALLOC = {"zeros", "ones", "eye", "arange", "linspace", "logspace", "full", "empty", "tensor"}
PRAGMA = "device-scan: deliberate"
RANDOM = {"randn", "rand", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson"}


def _files():
    for root in SOURCES:
        yield from sorted((ROOT / root).rglob("*.py"))


def _torch_calls(src: str, names: set[str], flagged) -> list[tuple[int, str]]:
    """(line, call) of every ``torch.<name>(...)`` call whose keyword names (``None`` for ``**kwargs``) are
    ``flagged``; a line marked ``# device-scan: deliberate`` (a test of the fault itself) is left out."""
    out, lines = [], src.splitlines()
    for node in ast.walk(ast.parse(src)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"
                and flagged({k.arg for k in node.keywords}) and PRAGMA not in lines[node.lineno - 1]):
            out.append((node.lineno, ast.get_source_segment(src, node) or node.func.attr))
    return out


def _draws_without_device(src: str) -> list[tuple[int, str]]:
    """(line, call) of every torch random call with a generator and no device."""
    return _torch_calls(src, RANDOM, lambda kws: "generator" in kws and "device" not in kws)


def _allocations_without_device(src: str) -> list[tuple[int, str]]:
    """(line, call) of every fresh torch allocation with neither ``device=`` nor ``**kwargs``."""
    return _torch_calls(src, ALLOC, lambda kws: "device" not in kws and None not in kws)


def _numpy_without_cpu(src: str) -> list[tuple[int, str]]:
    """(line, expression) of every ``x.numpy()`` whose receiver is not ``….cpu()``."""
    out = []
    for node in ast.walk(ast.parse(src)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "numpy"
                and not node.args):
            recv = node.func.value
            if not (isinstance(recv, ast.Call) and isinstance(recv.func, ast.Attribute) and recv.func.attr == "cpu"):
                out.append((node.lineno, ast.get_source_segment(src, node) or "numpy()"))
    return out


def test_every_random_draw_names_its_device():
    bad = [f"{p.relative_to(ROOT)}:{ln}: {code[:90]}" for p in _files()
           for ln, code in _draws_without_device(p.read_text(encoding="utf-8"))]
    assert not bad, "random draws with a generator but no device= (they fail with a CUDA generator):\n" + "\n".join(bad)


def test_numpy_only_after_cpu():
    bad = [f"{p.relative_to(ROOT)}:{ln}: {code[:90]}" for p in _files()
           for ln, code in _numpy_without_cpu(p.read_text(encoding="utf-8"))]
    assert not bad, ".numpy() on a tensor that may live on CUDA:\n" + "\n".join(bad)


def test_shared_code_allocates_on_a_named_device():
    bad = [f"{p.relative_to(ROOT)}:{ln}: {code[:90]}" for root in SHARED for p in sorted((ROOT / root).rglob("*.py"))
           for ln, code in _allocations_without_device(p.read_text(encoding="utf-8"))]
    assert not bad, "allocations with no device= in shared code (CPU beside CUDA tensors):\n" + "\n".join(bad)


def test_the_scanners_see_the_faults_they_name():
    """Control: the two scanners flag the patterns that broke the CUDA run and pass their fixed forms."""
    assert _draws_without_device("import torch\nx = torch.randn(3, generator=g, dtype=d)\n")
    assert not _draws_without_device("import torch\nx = torch.randn(3, generator=g, device=g.device)\n")
    assert not _draws_without_device("import torch\nx = torch.randn(3, device=dev)\n")  # no generator: default RNG
    assert _numpy_without_cpu("y = x.numpy()\n") and _numpy_without_cpu("y = x.detach().numpy()\n")
    assert not _numpy_without_cpu("y = x.detach().cpu().numpy()\n")
    assert _allocations_without_device("import torch\nz = torch.zeros(3, dtype=d)\n")
    assert not _allocations_without_device("import torch\nz = torch.zeros(3)  # device-scan: deliberate\n")
    assert not _allocations_without_device("import torch\nz = torch.zeros(3, **opts)\n")
    assert not _allocations_without_device("import torch\nz = torch.as_tensor(x)\n")


def test_draw_device_follows_the_generator():
    g = torch.Generator().manual_seed(0)
    assert draw_device(g, "cuda") == torch.device("cpu")  # the draw is made where the generator lives, then moved
    assert draw_device(None, "cpu") == "cpu"
    x = draw(torch.randn, 4, generator=g, device="cpu")
    g.manual_seed(0)
    assert torch.equal(x, torch.randn(4, generator=g, device="cpu"))  # same stream as a plain CPU draw: CPU results unchanged


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: a CUDA generator drawing for a CPU target")
def test_cuda_generator_draws_for_a_cpu_target():
    g = torch.Generator(device="cuda").manual_seed(0)
    x = draw(torch.randn, 4, generator=g, device="cpu")
    assert x.device.type == "cpu"
