"""Issue 16: ``--resume DIR`` continues a run that was cut off — by Ctrl-C (pytest still writes results.json)
or by a kill (only ``DIR/.records/<run>/`` is left). Complete tests are not run again and their records are
kept; the test that was running when the run was cut off runs again; the result equals an uncut run's.
"""
from __future__ import annotations

import json

import pytest

from . import _runs_project as P

pytestmark = pytest.mark.e2e  # subprocess runs of pytest / the CLI: deselected unless --e2e

CUT = '''import os
import signal

import pytest


@pytest.mark.claim("demo2026/rem-5")
def test_cut(record):
    record("holds", evidence="test", inside=True, inside_reason="demo run", observed=0.1, bound=0.5, config={"part": "before the cut"})
    mode = os.environ.get("DEMO_CUT", "")
    if mode == "interrupt":
        raise KeyboardInterrupt
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    record("holds", evidence="test", inside=True, inside_reason="demo run", observed=0.2, bound=0.5, config={"part": "after the cut"})
'''
AFTER = '''import pytest


@pytest.mark.claim("demo2026/rem-5")
def test_after(record):
    record("holds", evidence="test", inside=True, inside_reason="demo run", observed=0.3, bound=0.5, config={"part": "a later file"})
'''
FILES = {"test_m_cut.py": CUT, "test_z_after.py": AFTER}
CUT_ID = "checks/demo2026/test_m_cut.py::test_cut"
AFTER_ID = "checks/demo2026/test_z_after.py::test_after"


@pytest.fixture(scope="module")
def uncut(tmp_path_factory):
    tmp = P.make(tmp_path_factory.mktemp("uncut"), FILES)
    r = P.pytest(tmp, "--report", "rep")
    assert r.returncode == 0, r.stdout + r.stderr
    return dict(json.loads((tmp / "rep" / "results.json").read_text()), _project=tmp)


def _demo(claims: dict) -> dict:
    """The claims section of the project's own paper (the packaged registries may move under a test)."""
    return {k: v for k, v in claims.items() if k.startswith("demo2026/")}


def _doc(tmp):
    return json.loads((tmp / "rep" / "results.json").read_text())


def test_resume_after_ctrl_c(tmp_path, uncut):
    tmp = P.make(tmp_path, FILES)
    r = P.pytest(tmp, "--report", "rep", env={"DEMO_CUT": "interrupt"})
    assert r.returncode == 2, r.stdout + r.stderr
    first = _doc(tmp)
    complete = {k for k, t in first["run"]["tests"].items() if t.get("complete")}
    assert len(complete) == 9 and CUT_ID not in complete and AFTER_ID not in first["run"]["tests"]
    r = P.pytest(tmp, "--resume", "rep", "-rA")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed, 9 deselected" in r.stdout  # only the cut test and the one after it ran
    doc = _doc(tmp)
    assert P.strip(doc["records"]) == P.strip(uncut["records"])  # the cut test's first record is not doubled
    assert set(doc["run"]["tests"]) == set(uncut["run"]["tests"])
    kept = [k for k in complete]
    assert all(doc["run"]["tests"][k]["seconds"] == first["run"]["tests"][k]["seconds"] for k in kept)
    assert doc["run"]["resumed"] == {"from": "rep", "tests kept": 9, "records kept": 13}
    assert _demo(doc["claims"]) == _demo(uncut["claims"])


def test_resume_after_kill(tmp_path, uncut):
    tmp = P.make(tmp_path, FILES)
    r = P.pytest(tmp, "--report", "rep", env={"DEMO_CUT": "kill"})
    assert r.returncode != 0 and not (tmp / "rep" / "results.json").exists()
    left = list((tmp / "rep" / ".records").iterdir())
    assert len(left) == 1 and {p.name for p in left[0].iterdir()} == {"main.jsonl", "tests.done", "run.json"}
    r = P.pytest(tmp, "--resume", "rep")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed, 9 deselected" in r.stdout
    doc = _doc(tmp)
    assert P.strip(doc["records"]) == P.strip(uncut["records"])
    assert not (tmp / "rep" / ".records").exists()  # the leftover was read and removed
    r = P.pytest(tmp, "--resume", "rep")  # nothing left to run: everything is kept
    assert "11 deselected" in r.stdout and P.strip(_doc(tmp)["records"]) == P.strip(uncut["records"])


def test_resume_refuses_another_seed_or_profile(uncut):
    tmp = uncut["_project"]  # the same project (and code) as the run in rep
    r = P.pytest(tmp, "--resume", "rep", "--seed", "3")
    assert r.returncode == 4 and "cannot resume" in r.stderr and "--seed" in r.stderr
    r = P.pytest(tmp, "--resume", "rep", "--profile", "full")
    assert r.returncode == 4 and "differ in their profile" in r.stderr


def test_resume_of_nothing_runs_everything(tmp_path):
    """A job script may always pass --resume: a folder without a run in it resumes nothing."""
    tmp = P.make(tmp_path, FILES)
    r = P.pytest(tmp, "--resume", "fresh")
    assert r.returncode == 0 and "10 passed, 1 xfailed" in r.stdout, r.stdout + r.stderr
    doc = json.loads((tmp / "fresh" / "results.json").read_text())
    assert doc["run"]["resumed"]["tests kept"] == 0 and len(doc["run"]["tests"]) == 11
