"""Core: xdist keeps the tests that share a cached run on one worker (theory.harness.shared_runs, issue 33).

- every ``SHARED_RUNS`` declaration of the suite is well formed and names test functions of its own module (a
  renamed test would silently leave its group), and each group that spans modules spans the ones whose helpers it
  names;
- a run with two workers puts each group on one worker while the other tests still spread over both (the
  companion: xdist's default ``load`` splits the same group), and bad declarations are errors naming the module.
"""
import ast
import json
import pathlib
import subprocess
import sys

import pytest

from theory.harness import shared_runs

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _declarations() -> dict:
    out = {}
    for p in sorted((ROOT / "checks").rglob("test_*.py")):
        v = shared_runs.declared(str(p))
        if v is not None:
            out[p.relative_to(ROOT).as_posix()] = v
    return out


def test_declarations_name_tests_of_their_module():
    decl = _declarations()
    assert len(decl) >= 10, decl  # the suite's cached runs (wang figure grids, kou long runs, zhu lazy sweep, ...)
    groups: dict = {}
    for path, v in decl.items():
        tree = ast.parse((ROOT / path).read_text())
        tests = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}
        named = {v: sorted(tests)} if isinstance(v, str) else v
        for g, ts in named.items():
            missing = set(ts) - tests
            assert not missing, f"{path}: SHARED_RUNS group {g!r} names no test {sorted(missing)}"
            groups.setdefault(g, set()).add(path)
    # the runs shared across modules: kou's leaky and orthogonal runs (_rates_runs), bantzis's deep circle points
    assert groups["kou2023/leaky_long"] == groups["kou2023/orth_pair"] == {
        "checks/kou2023/test_rates.py", "checks/kou2023/test_stable_rank.py"}, groups
    assert len(groups["bantzis2025/circle_deep_points"]) == 3, groups


def test_scope_of_real_tests():
    s = lambda nid: shared_runs.scope_of(nid, ROOT)  # noqa: E731
    assert s("checks/kou2023/test_rates.py::test_leaky_loss_exponent") == s(
        "checks/kou2023/test_stable_rank.py::test_leaky_srank_rate_and_certificate") == "shared:kou2023/leaky_long"
    assert s("checks/wang2024/test_figures.py::test_fig6_wider_lower_level") == "shared:wang2024/figure_grids"
    nid = "checks/kou2023/test_stable_rank.py::test_relu_srank_bounded_over_n_sweep"  # in no group: its own unit
    assert s(nid) == nid
    assert s("checks/bantzis2025/test_depth_monotonicity.py::test_optimal_speed_non_decreasing_in_depth[xor]") == (
        "shared:bantzis2025/circle_cold_depths")


@pytest.mark.parametrize("bad", ['SHARED_RUNS = ""', "SHARED_RUNS = {'g': []}", "SHARED_RUNS = 3",
                                 "SHARED_RUNS = NAME"])
def test_bad_declaration_names_the_module(tmp_path, bad):
    p = tmp_path / "test_bad.py"
    p.write_text(bad + "\n")
    with pytest.raises(ValueError, match="test_bad.py: SHARED_RUNS must be"):
        shared_runs.declared(str(p))


BODY = '''import os, json, pathlib
import pytest
{decl}

def _log(name):
    with open(os.environ["WHERE"], "a") as f:
        f.write(json.dumps([name, os.environ.get("PYTEST_XDIST_WORKER")]) + "\\n")

@pytest.mark.claim("kou2023/lem-5.2")
@pytest.mark.parametrize("i", range(6))
def test_shared(i):
    _log(f"{mod}.shared[{{i}}]")

@pytest.mark.claim("kou2023/lem-5.2")
@pytest.mark.parametrize("i", range(6))
def test_free(i):
    import time; time.sleep(0.05)
    _log(f"{mod}.free[{{i}}]")
'''


@pytest.mark.e2e
@pytest.mark.parametrize("dist", [[], ["--dist", "load"]])
def test_two_workers_keep_a_group_together(tmp_path, dist):
    d = tmp_path / "checks" / "kou2023"
    d.mkdir(parents=True)
    (tmp_path / "checks" / "__init__.py").write_text("")
    (d / "__init__.py").write_text("")
    for mod in ("a", "b"):
        decl = 'SHARED_RUNS = {"demo/run": ["test_shared"]}'
        (d / f"test_{mod}.py").write_text(BODY.format(decl=decl, mod=mod))
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    where = tmp_path / "where.jsonl"

    def run(*extra):
        where.unlink(missing_ok=True)
        r = subprocess.run([sys.executable, "-m", "pytest", "checks", "-q", "-p", "no:cacheprovider", "-n", "2",
                            "--report", "none", *extra], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                           env={**__import__("os").environ, "PYTHONPATH": str(ROOT), "WHERE": str(where)})
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        rows = [json.loads(x) for x in where.read_text().splitlines()]
        assert len(rows) == 24, rows
        return ({w for n, w in rows if ".shared[" in n}, {w for n, w in rows if ".free[" in n})

    shared, free = run(*dist)
    assert len(shared) == 1 and len(free) == 2, (shared, free)  # the group on one worker, the rest on both
    # companion: xdist's loadgroup ignores the declaration (no xdist_group marks), so the group spreads
    shared_lg, _ = run("--dist", "loadgroup")
    assert len(shared_lg) == 2, shared_lg
