"""Run mutants against the paper checks and tabulate what they catch (``python -m theory mutate``).

The repository's committed tree (``git archive HEAD``) is unpacked into a scratch folder once; each mutant is
written into its file there, the selected checks run in a subprocess (``pytest FILES -x -p no:xdist --report
none``, with a time limit), and the file is restored. Outcomes:

- ``caught``: a check failed (a violated claim, a companion no longer rejecting, an xfail that now passes);
- ``crashed``: collection or import failed (caught, trivially: the mistake breaks the code);
- ``survived``: every selected check passed;
- ``timeout``: the checks ran past the limit (counted apart, neither caught nor survived);
- ``no checks``: no paper check mentions the function (reported: such code is untested by the papers' checks).

Mutants are sampled with a fixed seed, stratified by file, so an audit is reproducible and spread over the code.
"""
from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import sys
import tarfile
import io
import time
from dataclasses import asdict

from . import ops, targets

DEFAULT_PATHS = ("theory/papers", "theory/sim/jacobian.py", "theory/sim/spectra.py", "theory/sim/ntk.py",
                 "theory/sim/heun.py", "theory/sim/losses.py", "theory/sim/ball.py", "theory/sim/activations.py", "theory/stats.py")


def scratch_copy(repo: pathlib.Path, dest: pathlib.Path, rev: str = "HEAD") -> pathlib.Path:
    """The committed tree at ``rev`` unpacked into ``dest`` (a fresh folder)."""
    dest.mkdir(parents=True, exist_ok=False)
    blob = subprocess.run(["git", "-C", str(repo), "archive", rev], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as t:
        t.extractall(dest)
    return dest


def candidates(root: pathlib.Path, paths=DEFAULT_PATHS) -> list[ops.Mutant]:
    files = []
    for p in paths:
        q = root / p
        files += sorted(q.rglob("*.py")) if q.is_dir() else [q]
    out = []
    for f in files:
        out += ops.mutants(str(f.relative_to(root)), f.read_text(encoding="utf-8"))
    return out


def sample(ms: list[ops.Mutant], n: int, seed: int = 0) -> list[ops.Mutant]:
    """``n`` mutants, round-robin over files (each file's mutants shuffled with ``seed``)."""
    rng = random.Random(seed)
    by_file: dict[str, list] = {}
    for m in ms:
        by_file.setdefault(m.path, []).append(m)
    for v in by_file.values():
        rng.shuffle(v)
    order = sorted(by_file)
    rng.shuffle(order)
    out, i = [], 0
    while len(out) < min(n, len(ms)):
        f = order[i % len(order)]
        if by_file[f]:
            out.append(by_file[f].pop())
        i += 1
    return out


def file_seconds(repo: pathlib.Path) -> dict[str, float]:
    """Seconds per check file from the first report under ``reports/`` (per-test seconds as
    :func:`theory.runs.durations.durations` reads them), so that the selected checks run fastest first and ``-x``
    stops a caught mutant early; empty when there is none."""
    from ..runs.durations import durations

    for f in sorted((repo / "reports").glob("**/results.json")):
        try:
            per_test = durations([json.loads(f.read_text())])
        except (OSError, ValueError):
            continue
        out: dict[str, float] = {}
        for node, sec in per_test.items():
            out[node.split("::")[0]] = out.get(node.split("::")[0], 0.0) + sec
        return out
    return {}


def run_one(root: pathlib.Path, m: ops.Mutant, graph, *, timeout: float, seed: int = 0,
            seconds: dict[str, float] | None = None) -> dict:
    files = targets.ranked_check_files(root, targets.name_levels(m.function, graph), seconds)
    res = {**asdict(m), "key": m.key, "checks": files}
    if not files:
        return {**res, "outcome": "no checks", "seconds": 0.0, "failed": ""}
    path = root / m.path
    original = path.read_text(encoding="utf-8")
    path.write_text(m.apply(original), encoding="utf-8")
    t0 = time.time()
    try:
        r = subprocess.run([sys.executable, "-m", "pytest", *files, "-x", "-q", "-p", "no:xdist", "-p",
                            "no:cacheprovider", "--report", "none", "--seed", str(seed)],
                           cwd=root, capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"})
        outcome = {0: "survived", 1: "caught"}.get(r.returncode, "crashed")
        failed = next((ln for ln in r.stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))), "")
    except subprocess.TimeoutExpired:
        outcome, failed = "timeout", ""
    finally:
        path.write_text(original, encoding="utf-8")
    return {**res, "outcome": outcome, "seconds": round(time.time() - t0, 1), "failed": failed[:300]}


def summary(results: list[dict]) -> dict:
    n = {k: sum(r["outcome"] == k for r in results) for k in ("caught", "crashed", "survived", "timeout", "no checks")}
    judged = n["caught"] + n["crashed"] + n["survived"]
    return {**n, "total": len(results), "catch_rate": (n["caught"] + n["crashed"]) / judged if judged else None}


def markdown(results: list[dict]) -> str:
    s = summary(results)
    rate = "—" if s["catch_rate"] is None else f"{100 * s['catch_rate']:.0f} %"
    lines = [f"caught {s['caught']}, crashed {s['crashed']}, survived {s['survived']}, timeout {s['timeout']}, "
             f"no checks {s['no checks']} of {s['total']}: catch rate {rate} (caught + crashed over judged)", "",
             "| mutant | function | op | old → new | outcome | s | first failure |", "|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['path']}:{r['line']} | {r['function']} | {r['op']} | `{r['old'][:40]}` → `{r['new'][:40]}` | "
                     f"{r['outcome']} | {r['seconds']} | {r['failed'].replace('|', '/')[:120]} |")
    return "\n".join(lines) + "\n"


def audit(repo: pathlib.Path, out: pathlib.Path, *, n: int, seed: int, timeout: float, paths=DEFAULT_PATHS,
          rev: str = "HEAD", keys: list[str] | None = None, skip: list[str] | None = None,
          log=print) -> list[dict]:
    """Sample ``n`` mutants (or the ``keys`` given) of the committed tree and run each; writes
    ``out/mutants.json`` (after every mutant, so an interrupted audit keeps what it measured) and ``out/mutants.md``."""
    out.mkdir(parents=True, exist_ok=True)
    root = scratch_copy(repo, out / "tree", rev)
    pool = candidates(root, paths)
    chosen = sample(pool, n, seed)
    if keys:
        chosen = [m for m in pool if m.key in set(keys)]
    if skip:
        chosen = [m for m in chosen if m.key not in set(skip)]
    graph = targets.name_graph(root)
    seconds = file_seconds(repo)
    results = []
    for i, m in enumerate(chosen, 1):
        r = run_one(root, m, graph, timeout=timeout, seconds=seconds)
        results.append(r)
        log(f"[{i}/{len(chosen)}] {r['outcome']:9s} {r['seconds']:6.1f}s {m.key} {m.old[:30]!r} -> {m.new[:30]!r}")
        (out / "mutants.json").write_text(json.dumps({"pool": len(pool), "summary": summary(results),
                                                      "results": results}, indent=1))
    (out / "mutants.md").write_text(markdown(results))
    return results
