"""Beyond one run (issue 16): shards, merge, resume, seed sweeps and run-to-run diffs.

Built on pytest and pytest-split (no scheduler of our own). One job per module:

- :mod:`.provenance` — the code version of a run (git commit, clean tree, digest of the code).
- :mod:`.load` — a results document from a ``results.json`` or a report folder.
- :mod:`.compat` — refuse to combine runs of different code, profiles or registries.
- :mod:`.merge` — shards (and runs at several seeds) into one results document.
- :mod:`.seeds` — seed lists such as ``0-19`` or ``0,3,5-7``.
- :mod:`.sweep` — one document per seed, verdict counts across seeds, tightness spreads, the seeds × checks table.
- :mod:`.tables` — that table as ``sweep.csv`` and ``sweep.md``.
- :mod:`.seed_runs` — ``report --seeds``: one pytest process per seed, then the merge.
- :mod:`.durations` — per-test seconds for pytest-split's ``--durations-path``.
- :mod:`.resume` — ``--resume DIR``: the tests already complete in DIR and their records.
- :mod:`.diff` — verdict changes, companions that stopped rejecting, tightness moves; regressions.
- :mod:`.write` — write a (merged or sweep) document: results.json, index.html and the sweep tables.
"""
