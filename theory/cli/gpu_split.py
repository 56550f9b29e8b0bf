"""``gpu-split PLAN OUT``: which tests of a CUDA run go to the GPU, and which stay on the CPU (issue 33).

    python -m theory gpu-split PLAN.json OUT [--crossover FLOPS] [--per-process-gib G]

Reads a ``python -m theory plan --json`` file and writes ``OUT/gpu.txt`` and ``OUT/cpu.txt`` (one pytest node id per
line) and ``OUT/split.json`` (each test, its side and the reason). Placement by size, per test: a test goes to the GPU
when its planned trainer call costs at least the crossover (:func:`theory.device.crossover_flops`, FLOPs per step;
the same rule as :func:`theory.device.place`) and its planned peak fits one GPU process's share of the card
(``--per-process-gib``, default 40: two processes on an 80 GB card). Every other test stays on the CPU: below the
crossover a GPU step is slower than a CPU step, and a test the plan could not size (no trainer, stopped, errors)
is not known to pay. Tests that share a cached run (a ``SHARED_RUNS`` group, :mod:`theory.harness.shared_runs`)
follow their group's GPU test, so the run is computed once. ``.ci/gpu-full`` then runs the GPU list in a bounded number of CUDA processes and the CPU list
beside it with ``--device cpu``, and merges the two reports: the draws are the same on both devices
(:func:`theory.device.draw`), so the merged verdicts are those of one run.
"""
from __future__ import annotations

import json
import os
import pathlib
import sys

GiB = 1 << 30
PER_PROCESS_GIB = 40.0


def split(rows: list[dict], crossover: float, per_process_bytes: float, group_of=None) -> list[dict]:
    """One decision per plan row: ``{"test", "side": "gpu" | "cpu", "reason"}``.

    Args:
        rows: the ``rows`` of a plan JSON (each with ``test``, ``status`` and ``estimate``: ``gflop_per_step``,
            ``bytes``, or None where the plan could not size the test).
        crossover: FLOPs per step from which a test goes to the GPU.
        per_process_bytes: the largest planned peak a GPU test may have (one GPU process's share of the card).
        group_of: a test's shared-run group or None (:func:`theory.harness.shared_runs.group_of`): the tests of a
            group compute one cached run, so when one of them goes to the GPU the others follow (unless their own
            planned peak is over the share), and the run is computed on one side only.

    >>> rows = [{"test": "a", "status": "planned", "estimate": {"gflop_per_step": 2.0, "bytes": 1 << 30}},
    ...         {"test": "b", "status": "planned", "estimate": {"gflop_per_step": 1e-3, "bytes": 1 << 20}},
    ...         {"test": "c", "status": "planned", "estimate": {"gflop_per_step": 50.0, "bytes": 90 << 30}},
    ...         {"test": "d", "status": "no trainer; 0.1 s", "estimate": None}]
    >>> [(r["test"], r["side"]) for r in split(rows, 1e8, 40 << 30)]
    [('a', 'gpu'), ('b', 'cpu'), ('c', 'cpu'), ('d', 'cpu')]
    >>> [(r["test"], r["side"]) for r in split(rows, 1e8, 40 << 30, {"a": "g", "b": "g", "c": "g", "d": "g"}.get)]
    [('a', 'gpu'), ('b', 'gpu'), ('c', 'cpu'), ('d', 'gpu')]
    """
    if not (crossover >= 0 and per_process_bytes > 0):
        raise ValueError(f"need crossover >= 0 and a positive per-process share, got {crossover}, {per_process_bytes}")
    out = []
    for r in rows:
        est = r.get("estimate")
        if not est:
            out.append({"test": r["test"], "side": "cpu", "reason": f"not sized by the plan ({r.get('status', '?')})"})
            continue
        flops = float(est["gflop_per_step"]) * 1e9
        if flops < crossover:
            side, why = "cpu", f"{flops:.3g} FLOPs per step < crossover {crossover:.3g}"
        elif est["bytes"] > per_process_bytes:
            side, why = "cpu", (f"planned peak {est['bytes'] / GiB:.1f} GiB > one GPU process's share "
                                f"{per_process_bytes / GiB:.0f} GiB")
        else:
            side, why = "gpu", f"{flops:.3g} FLOPs per step ≥ crossover {crossover:.3g}; peak {est['bytes'] / GiB:.2f} GiB"
        out.append({"test": r["test"], "side": side, "reason": why})
    if group_of is not None:
        on_gpu = {group_of(r["test"]) for r in out if r["side"] == "gpu"} - {None}
        for r, row in zip(out, rows):
            g = group_of(r["test"])
            est = row.get("estimate") or {}
            if r["side"] == "cpu" and g in on_gpu and est.get("bytes", 0) <= per_process_bytes:
                r.update(side="gpu", reason=f"shares the run of group {g!r} with a GPU test ({r['reason']})")
    return out


def register(sub) -> None:
    p = sub.add_parser("gpu-split", help="split a plan's tests into a GPU list and a CPU list by size (issue 33)")
    p.add_argument("plan", metavar="PLAN", help="a `python -m theory plan --json` file")
    p.add_argument("out", metavar="OUT", help="folder for gpu.txt, cpu.txt and split.json")
    p.add_argument("--crossover", type=float, default=None,
                   help="FLOPs per step from which a test goes to the GPU (default: theory.device.crossover_flops())")
    p.add_argument("--per-process-gib", type=float, default=PER_PROCESS_GIB,
                   help=f"largest planned peak of a GPU test, GiB (default {PER_PROCESS_GIB:g}: two per 80 GB card)")
    p.set_defaults(func=run)


def run(ns, extra) -> int:
    from .. import device
    from ..harness import shared_runs

    try:
        with open(ns.plan) as f:
            rows = json.load(f)["rows"]
        cross = device.crossover_flops() if ns.crossover is None else ns.crossover
        root = pathlib.Path.cwd()
        res = split(rows, cross, ns.per_process_gib * GiB, lambda t: shared_runs.group_of(t, root))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"theory gpu-split: cannot split {ns.plan!r}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    os.makedirs(ns.out, exist_ok=True)
    for side in ("gpu", "cpu"):
        with open(os.path.join(ns.out, f"{side}.txt"), "w") as f:
            f.writelines(r["test"] + "\n" for r in res if r["side"] == side)
    with open(os.path.join(ns.out, "split.json"), "w") as f:
        json.dump({"plan": ns.plan, "crossover_flops": cross, "per_process_gib": ns.per_process_gib, "tests": res},
                  f, indent=1)
    n_gpu = sum(r["side"] == "gpu" for r in res)
    print(f"gpu-split: {n_gpu} tests to the GPU, {len(res) - n_gpu} to the CPU (crossover {cross:.3g} FLOPs per step)")
    return 0
