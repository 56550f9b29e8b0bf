"""``python -m theory report --seeds 0-19``: one run per seed, each in ``OUT/seed-<s>/``, then one report.

Each seed runs as its own ``python -m pytest`` process (the same pytest command line as ``report``, with
``--seed s --report OUT/seed-<s>``), so one seed's state never leaks into the next; then the seed folders are
merged into OUT exactly as ``python -m theory merge OUT OUT/seed-*`` would (one mechanism: the sweep page,
``sweep.md`` and ``sweep.csv``). With ``--resume DIR`` each seed continues ``DIR/seed-<s>`` when it exists.
"""
from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys

from .seeds import parse


def worst_status(codes: list[int]) -> int:
    bad = [c for c in codes if c not in (0, 5)]
    return max(bad) if bad else (5 if codes and all(c == 5 for c in codes) else 0)


def run_seeds(ns: argparse.Namespace, extra: list[str], pytest_args) -> int:
    from .load import RunsError, load
    from .merge import merge
    from .write import write

    try:
        seeds = parse(ns.seeds)
    except ValueError as e:
        print(f"theory report: {e}", file=sys.stderr)
        return 2
    out = pathlib.Path(ns.out)
    dirs, codes = [], []
    for s in seeds:
        d = out / f"seed-{s}"
        one = argparse.Namespace(**{**vars(ns), "seed": s, "out": str(d), "resume": None})
        args = pytest_args(one, extra)
        if ns.resume and (pathlib.Path(ns.resume) / f"seed-{s}").is_dir():
            args += ["--resume", str(pathlib.Path(ns.resume) / f"seed-{s}")]
        print(f"theory: seed {s}: pytest " + " ".join(args), flush=True)
        rc = subprocess.run([sys.executable, "-m", "pytest", *args]).returncode
        codes.append(0 if rc == 5 and ns.resume else rc)
        if (d / "results.json").exists():
            dirs.append(str(d))
    if not dirs:
        print("theory: no seed wrote a report", file=sys.stderr)
        return worst_status(codes) or 1
    try:
        doc = merge([load(d) for d in dirs])
    except RunsError as e:
        print(f"theory report: {e}", file=sys.stderr)
        return 2
    page = write(doc, out, inputs=dirs)
    print(f"theory: report across seeds {', '.join(map(str, seeds))} written to {page.resolve()} "
          f"(worst pytest exit status {worst_status(codes)})")
    return worst_status(codes)
