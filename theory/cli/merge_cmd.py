"""``merge OUT DIR…``: shard folders (or runs at several seeds) into one report; ``durations``: pytest-split's file.

    python -m theory merge OUT DIR [DIR ...]
    python -m theory durations RESULTS [RESULTS ...] [-o .test_durations]

``merge`` writes ``OUT/results.json`` and ``OUT/index.html`` (for several seeds: the sweep page, ``sweep.md``,
``sweep.csv`` and ``OUT/seed-<s>/``); it refuses runs of different code, profiles or registries, and shards
that overlap. ``durations`` prints ``{node id: seconds}`` from ``run.tests`` for ``--durations-path``.
"""
from __future__ import annotations

import sys


def register(sub) -> None:
    m = sub.add_parser("merge", help="merge shard report folders (or runs at several seeds) into one report")
    m.add_argument("out", metavar="OUT", help="folder for the merged results.json and index.html")
    m.add_argument("dirs", metavar="DIR", nargs="+", help="report folders (or results.json files) to merge")
    m.set_defaults(func=run)
    d = sub.add_parser("durations", help="per-test seconds from results.json, for pytest-split's --durations-path")
    d.add_argument("results", metavar="RESULTS", nargs="+", help="results.json files or report folders")
    d.add_argument("-o", "--output", default=None, help="write to this file instead of standard output")
    d.set_defaults(func=durations)


def run(ns, extra) -> int:
    from ..runs.load import RunsError, load
    from ..runs.merge import merge
    from ..runs.sweep import is_sweep, seeds
    from ..runs.write import write

    try:
        docs = [load(p) for p in ns.dirs]
        doc = merge(docs)
    except RunsError as e:
        print(f"theory merge: {e}", file=sys.stderr)
        return 2
    page = write(doc, ns.out, inputs=ns.dirs)
    what = (f"{len(seeds(doc))} seeds (sweep.md, sweep.csv beside it)" if is_sweep(doc) else
            f"{len(docs)} shard(s) at seed {seeds(doc)[0]}")
    print(f"theory: merged {len(doc['records'])} records of {what} -> {page.resolve()}")
    return 0


def durations(ns, extra) -> int:
    from ..records import atomic_write
    from ..runs.durations import text
    from ..runs.load import RunsError, load

    try:
        out = text([load(p) for p in ns.results])
    except RunsError as e:
        print(f"theory durations: {e}", file=sys.stderr)
        return 2
    if ns.output:
        atomic_write(ns.output, out)
    else:
        sys.stdout.write(out)
    return 0
