"""``python -m theory <command>``: one module per command, each with ``register(subparsers)``.

A command module adds its sub-parser with ``set_defaults(func=run)``; ``run(ns, extra)`` returns the
exit status (``extra``: arguments the parser did not know, passed on to pytest by ``report``).
"""
from __future__ import annotations

import argparse
import importlib

# Command modules, in the order ``--help`` lists them.
MODULES = ("run_report", "registry", "scaffold", "merge_cmd", "diff_cmd", "mutate_cmd", "plan", "gpu_split", "docs_cmd")


def parser() -> argparse.ArgumentParser:
    """The ``python -m theory`` argument parser, one sub-command per module of :data:`MODULES`.

    >>> ns = parser().parse_args(["new", "smith2026", "my-checks"])
    >>> ns.cmd, ns.paper, ns.dir
    ('new', 'smith2026', 'my-checks')
    """
    p = argparse.ArgumentParser(prog="python -m theory",
                                description="Numerical checks of deep-learning theory: run, report, registries.")
    sub = p.add_subparsers(dest="cmd", required=True)
    for m in MODULES:
        importlib.import_module(f"theory.cli.{m}").register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one command of ``python -m theory`` and return its exit status (0: success).

    Args:
        argv: the arguments after ``python -m theory`` (default: ``sys.argv[1:]``); ``--help`` lists the
            commands: ``report``, ``render``, ``claims``, ``new``, ``merge``, ``durations``, ``diff``, ``mutate``,
            ``plan``, ``gpu-split``, ``docs``.

    >>> main(["new", "Smith", "unused-folder"])   # a bad paper id: status 2, the reason on stderr
    2
    """
    p = parser()
    ns, extra = p.parse_known_args(argv)
    if extra and not getattr(ns, "passthrough", False):
        p.error(f"unrecognized arguments: {extra}")
    return int(ns.func(ns, extra) or 0)
