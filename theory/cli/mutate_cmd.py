"""``python -m theory mutate OUT``: the mutation audit of the paper checks (:mod:`theory.mutants`)."""
from __future__ import annotations

import pathlib

from ..mutants import audit as A


def register(sub) -> None:
    p = sub.add_parser("mutate", help="mutation audit: run small plausible mistakes in theory/ against the paper "
                                      "checks that use the mutated function; writes OUT/mutants.md and .json")
    p.add_argument("out", help="output folder (a scratch copy of the committed tree is unpacked in OUT/tree)")
    p.add_argument("-n", type=int, default=40, help="number of mutants to sample (default 40)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant before it counts as timeout")
    p.add_argument("--path", action="append", default=None,
                   help="file or folder to mutate, relative to the repository root (repeatable; default: "
                        "theory/papers and the core routines they use)")
    p.add_argument("--key", action="append", default=None, help="run only this mutant (PATH:LINE:COL:OP; repeatable)")
    p.add_argument("--skip", action="append", default=None, help="leave this mutant out (repeatable)")
    p.add_argument("--rev", default="HEAD", help="git revision to audit (default HEAD)")
    p.set_defaults(func=run)


def run(ns, extra) -> int:
    repo = pathlib.Path(__file__).resolve().parents[2]
    res = A.audit(repo, pathlib.Path(ns.out), n=ns.n, seed=ns.seed, timeout=ns.timeout,
                  paths=tuple(ns.path) if ns.path else A.DEFAULT_PATHS, rev=ns.rev, keys=ns.key, skip=ns.skip)
    s = A.summary(res)
    print(A.markdown(res).splitlines()[0])
    return 0 if s["survived"] == 0 else 1
