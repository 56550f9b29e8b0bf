"""``diff OLD NEW``: claims added or removed, verdict changes, companions that stopped rejecting, tightness moves.

    python -m theory diff OLD NEW [--threshold 0.1] [--html PATH]

OLD and NEW are results.json files or report folders. Exit status 1 on a regression (holds → violated or
error, expected failure → holds, a wrong version no longer rejected), 2 when the runs cannot be read or
compared, else 0 — so a research group can put it in CI.
"""
from __future__ import annotations

import sys


def register(sub) -> None:
    d = sub.add_parser("diff", help="compare two runs; exit status 1 on a verdict regression")
    d.add_argument("old", metavar="OLD", help="results.json or report folder of the earlier run")
    d.add_argument("new", metavar="NEW", help="results.json or report folder of the later run")
    d.add_argument("--threshold", type=float, default=0.10,
                   help="relative move of a tightness figure that is reported (default 0.10 = 10%%)")
    d.add_argument("--html", default=None, metavar="PATH", help="also write the diff as a page")
    d.set_defaults(func=run)


def run(ns, extra) -> int:
    from ..records import atomic_write
    from ..runs import diff as _diff
    from ..runs.load import RunsError, load

    if ns.threshold < 0:
        print("theory diff: --threshold must be ≥ 0", file=sys.stderr)
        return 2
    try:
        d = _diff.diff(load(ns.old), load(ns.new), ns.threshold)
    except RunsError as e:
        print(f"theory diff: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(_diff.text(d))
    if ns.html:
        atomic_write(ns.html, _diff.html(d))
        print(f"theory: diff page written to {ns.html}")
    return 1 if d.regressions else 0
