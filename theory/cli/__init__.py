"""``python -m theory <command>``: one module per command, each with ``register(subparsers)``.

A command module adds its sub-parser with ``set_defaults(func=run)``; ``run(ns, extra)`` returns the
exit status (``extra``: arguments the parser did not know, passed on to pytest by ``report``).
"""
from __future__ import annotations

import argparse
import importlib

# Command modules, in the order ``--help`` lists them.
MODULES = ("run_report", "registry", "scaffold", "merge_cmd", "diff_cmd", "mutate_cmd", "plan")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m theory",
                                description="Numerical checks of deep-learning theory: run, report, registries.")
    sub = p.add_subparsers(dest="cmd", required=True)
    for m in MODULES:
        importlib.import_module(f"theory.cli.{m}").register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    ns, extra = p.parse_known_args(argv)
    if extra and not getattr(ns, "passthrough", False):
        p.error(f"unrecognized arguments: {extra}")
    return int(ns.func(ns, extra) or 0)
