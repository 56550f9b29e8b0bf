"""``report``: run the checks and write the HTML tightness report; ``render``: rebuild it from results.json.

    python -m theory report [--profile quick|full] [--device auto|cpu|cuda] [--seed N] [--claims PATH]
                            [--out reports] [-k EXPR] [-n WORKERS] [--seeds 0-19] [--resume DIR]
                            [pytest args...]

is exactly ``pytest checks -n WORKERS --report OUT --profile ... --theory-progress`` run in-process (one
code path: the report is written by the pytest plugin at session end). ``--seeds LIST`` runs it once per seed
(into OUT/seed-<s>/) and writes one report across the seeds (:mod:`theory.runs.seed_runs`); ``--resume DIR``
continues the interrupted run in DIR (the report goes there unless --out says otherwise).

    python -m theory render [reports/results.json]
"""
from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys

from ..harness.context import PROFILES


def _checks_dir() -> str:
    here = pathlib.Path(__file__).resolve().parent.parent.parent / "checks"
    return str(here) if here.is_dir() else "checks"


def pytest_args(ns: argparse.Namespace, extra: list[str]) -> list[str]:
    """The pytest command line for a ``report`` invocation."""
    args = [_checks_dir(), "--report", ns.out, "--profile", ns.profile, "--device", ns.device,
            "--seed", str(ns.seed), "--theory-progress"]
    if getattr(ns, "resume", None):
        args += ["--resume", ns.resume]
    for c in ns.claims or []:  # a researcher's registry: load it, and run the checks in its folder
        folder = pathlib.Path(c) if pathlib.Path(c).is_dir() else pathlib.Path(c).parent
        args += ["--claims", c, str(folder)]
    workers = ns.n
    if workers not in (None, "0", "1") and importlib.util.find_spec("xdist") is not None:
        args += ["-n", workers]
    if ns.k:
        args += ["-k", ns.k]
    return args + list(extra)


def register(sub) -> None:
    r = sub.add_parser("report", help="run the checks and write OUT/index.html and OUT/results.json")
    r.add_argument("--profile", default="quick", choices=PROFILES)
    r.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--claims", action="append", default=[], metavar="PATH",
                   help="an extra claim registry (claims.toml or a folder holding them); repeatable")
    r.add_argument("--out", default=None, help="report directory (default: reports, or DIR of --resume)")
    r.add_argument("--seeds", default=None, metavar="LIST",
                   help="run once per seed (e.g. 0-19 or 0,3,5-7) into OUT/seed-<s>/ and write one report across "
                        "the seeds: verdict counts per claim, tightness spreads, the seeds × checks table")
    r.add_argument("--resume", default=None, metavar="DIR",
                   help="continue the interrupted run in DIR: complete tests are not run again, their records kept")
    r.add_argument("-k", default=None, help="pytest -k expression (partial run)")
    r.add_argument("-n", default="auto", help="xdist workers (default auto; 0 or 1: no xdist)")
    r.set_defaults(func=run, passthrough=True)
    g = sub.add_parser("render", help="rebuild index.html from an existing results.json",
                       description="Rebuild index.html beside RESULTS (a results.json, results.json.gz or a report "
                                   "folder) from its records alone: nothing is run. The verdicts are derived again by "
                                   "theory.analysis, so a page rebuilt by newer code shows that code's verdict rules.")
    g.add_argument("results", nargs="?", default="reports/results.json")
    g.set_defaults(func=render)


def render(ns, extra) -> int:
    from ..report import build_from_json

    from ..runs.load import RunsError

    try:
        out = build_from_json(ns.results)
    except RunsError as e:
        print(f"theory render: {e}", file=sys.stderr)
        return 2
    print(f"theory: report written to {out.resolve()}")
    return 0


def run(ns, extra) -> int:
    import pytest

    ns.out = ns.out or ns.resume or "reports"
    if ns.seeds:
        from ..runs.seed_runs import run_seeds

        return run_seeds(ns, extra, pytest_args)
    args = pytest_args(ns, extra)
    print("theory: pytest " + " ".join(args), flush=True)
    rc = int(pytest.main(args))
    index = pathlib.Path(ns.out) / "index.html"
    if index.exists():
        print(f"theory: report written to {index.resolve()} (pytest exit status {rc})")
    else:
        print(f"theory: no report was written (pytest exit status {rc})", file=sys.stderr)
    return rc
