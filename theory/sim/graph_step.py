"""A fixed-shape, in-place GD step replayed from a captured CUDA graph (issue 33: step loops without per-step overhead).

A small net's step on a GPU is a handful of tiny kernels, each paying a launch (~5–10 µs) and Python's dispatch;
replaying the step from a ``torch.cuda.CUDAGraph`` launches them as one. :func:`replayed` captures a step closure
that updates its state tensors in place (static addresses, no host read, no Python branch on data), after the
documented warm-up on a side stream, and checks that one replay gives the eager step's result from the same state
before it is used; a capture that fails or differs falls back to the eager step with a warning, so a CUDA run never
judges other numbers than the eager loop would. The state is restored after the warm-up and the check: the caller's
loop starts from where it was. On the CPU (and with ``$THEORY_CUDA_GRAPHS=0``) the eager step runs unchanged.
"""
from __future__ import annotations

import os
import warnings
from typing import Callable, Sequence

import torch

MIN_STEPS = 256  # below this a capture (warm-up, check) costs more than it saves
WARMUP = 3


def enabled(device: torch.device, steps: int) -> bool:
    """Whether a loop of ``steps`` steps on ``device`` replays a captured graph: CUDA, at least :data:`MIN_STEPS`
    steps, and ``$THEORY_CUDA_GRAPHS`` not ``0``.

    Args:
        device: the device of the loop's tensors.
        steps: the number of steps the loop will take.

    >>> enabled(torch.device("cpu"), 10_000)
    False
    """
    return (torch.device(device).type == "cuda" and steps >= MIN_STEPS
            and os.environ.get("THEORY_CUDA_GRAPHS", "1") != "0")


def _cuda_graph(step: Callable[[], None], device: torch.device) -> Callable[[], None]:
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        for _ in range(WARMUP):
            step()
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph.replay


def replayed(step: Callable[[], None], state: Sequence[torch.Tensor], device: torch.device, *,
             capture: Callable | None = None, rtol: float = 1e-12) -> Callable[[], None]:
    """``step`` replayed from a captured graph, or ``step`` itself where the capture fails or its replay differs.

    Args:
        step: a closure taking one step in place on ``state`` (and on scratch buffers it owns).
        state: every tensor the step changes that the loop reads afterwards; restored after the capture.
        device: the CUDA device of the state.
        capture: ``capture(step, device) -> replay`` (default: the CUDA-graph capture); tests pass a stand-in.
        rtol: the largest relative difference (to the state's largest entry) between one replay and one eager
            step from the same state; the graph runs the same kernels, so they agree to rounding.

    >>> s = torch.zeros(3)
    >>> def step():
    ...     s.add_(1.0)
    >>> f = replayed(step, [s], torch.device("cpu"), capture=lambda st, dev: st)  # a stand-in "graph": the step
    >>> f(); s.tolist()
    [1.0, 1.0, 1.0]
    """
    snap = [t.clone() for t in state]

    def restore():
        for t, v in zip(state, snap):
            t.copy_(v)

    try:
        replay = (capture or _cuda_graph)(step, device)
        restore()
        step()
        want = [t.clone() for t in state]
        restore()
        replay()
        err = max(float((a - b).abs().max() / b.abs().max().clamp_min(1e-300)) for a, b in zip(state, want))
        restore()
    except RuntimeError as e:  # a kernel that cannot be captured, out of memory in the graph pool, ...
        restore()
        warnings.warn(f"CUDA graph capture failed ({type(e).__name__}: {str(e)[:120]}); running the eager step",
                      RuntimeWarning, stacklevel=2)
        return step
    if not err <= rtol:
        warnings.warn(f"a replayed step differs from the eager step by {err:.3g} (> {rtol:g}, relative); running the "
                      "eager step", RuntimeWarning, stacklevel=2)
        return step
    return replay
