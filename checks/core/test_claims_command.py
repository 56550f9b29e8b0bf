"""Core (issue 34): ``python -m theory claims ID`` lists the tests that carry the claim marker (pytest node IDs and
the line of each test function's ``def``), not the lines where the ID string occurs (a constant, a seed label)."""
import ast
import json
import pathlib
import subprocess
import sys

import pytest

from theory.cli import registry

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "theory", *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def _marked_defs(path: pathlib.Path, cid: str) -> dict:
    """function name -> def line of the functions in ``path`` decorated with ``pytest.mark.claim(cid)``."""
    out = {}
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "claim" and d.args
                and isinstance(d.args[0], ast.Constant) and d.args[0].value == cid for d in n.decorator_list):
            out[n.name] = n.lineno
    return out


def test_def_lines_skip_the_decorators(tmp_path):
    f = tmp_path / "test_x.py"
    f.write_text('import pytest\n\n\n@pytest.mark.claim("a2020/lem-1")\n@pytest.mark.parametrize(\n    "k", [1, 2])\n'
                 'def test_k(k):\n    pass\n')
    assert registry._def_lines(str(f)) == {("test_k", 4): 7}
    lines = registry._tests_block([{"nodeid": "test_x.py::test_k[1]", "file": "test_x.py", "line": 7},
                                   {"nodeid": "test_x.py::test_k[2]", "file": "test_x.py", "line": 7}], [], "")
    assert lines[0] == "  tests with its claim marker (2 in 1 test function):" and lines[1].endswith("test_x.py:7")


@pytest.mark.e2e
def test_claims_id_lists_the_marked_tests_with_their_def_lines():
    cid = "kou2023/lem-5.2"
    r = _cli("claims", cid, "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    tests = doc["tests"]
    assert len(tests) >= 2 and "problem" not in doc
    for t in tests:
        path = (ROOT / t["file"]) if not pathlib.Path(t["file"]).is_absolute() else pathlib.Path(t["file"])
        name = t["nodeid"].split("::")[-1].split("[")[0]
        assert _marked_defs(path, cid).get(name) == t["line"], t  # a function that carries the marker, its def line
    named = {int(w.rsplit(":", 1)[1]) for w in doc["named_at"]}
    assert named - {t["line"] for t in tests}  # the ID also occurs at lines that are no test (seeds, records)
    text = _cli("claims", cid).stdout
    assert "tests with its claim marker" in text and tests[0]["nodeid"] in text


@pytest.mark.e2e
def test_claims_id_lists_the_tests_of_a_registry_outside_the_repository(tmp_path):
    assert _cli("new", "smith2026", str(tmp_path / "p"), cwd=tmp_path).returncode == 0
    r = _cli("claims", "smith2026/thm-2", "--claims", str(tmp_path / "p"), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    names = sorted(t["nodeid"].split("::")[-1] for t in json.loads(r.stdout)["tests"])
    assert names == ["test_balance_drift_is_first_order_in_the_step_size", "test_balance_drift_rejects_the_wrong_rate"]
