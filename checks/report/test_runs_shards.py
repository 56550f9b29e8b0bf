"""Issue 16: shards of one run (pytest-split) merged with ``python -m theory merge`` equal a one-process run.

One tiny project (``_runs_project``: its own registry, nine fast seeded checks) runs once in one process and
once as two shards balanced by the durations that the first run's results.json holds; the merged records
must equal the single run's apart from timings, and so must the tests that ran and the claims section.
Merging refuses overlapping shards and runs of another profile, code version or registry.
"""
from __future__ import annotations

import json

import pytest

from theory import cli

from . import _runs_project as P

pytestmark = pytest.mark.e2e  # subprocess runs of pytest / the CLI: deselected unless --e2e


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = P.make(tmp_path_factory.mktemp("shards"))
    r = P.pytest(tmp, "--report", "one")
    assert r.returncode == 0, r.stdout + r.stderr
    assert cli.main(["durations", str(tmp / "one"), "-o", str(tmp / "durations.json")]) == 0
    # least_duration: pytest-split 0.11's default algorithm can raise IndexError at collection when the
    # second group reaches its share while tests remain (a 0 s duration or rounding at the boundary)
    shards = P.pytest_parallel(tmp, *[["--report", f"shard{g}", "--splits", "2", "--group", str(g),
                                        "--splitting-algorithm", "least_duration",
                                        "--durations-path", str(tmp / "durations.json")] for g in (1, 2)])
    for r in shards:
        assert r.returncode == 0, r.stdout + r.stderr
    return tmp


def _doc(path):
    return json.loads((path / "results.json").read_text(encoding="utf-8"))


def test_durations_file_is_per_test_seconds(runs):
    dur = json.loads((runs / "durations.json").read_text())
    tests = _doc(runs / "one")["run"]["tests"]
    assert set(dur) == set(tests) and len(dur) == 9
    assert all(dur[k] == pytest.approx(tests[k]["seconds"]) for k in dur)


def test_two_shards_merged_equal_one_run(runs, capsys):
    one, s1, s2 = _doc(runs / "one"), _doc(runs / "shard1"), _doc(runs / "shard2")
    assert s1["run"]["tests"] and s2["run"]["tests"]  # both shards ran something
    assert not set(s1["run"]["tests"]) & set(s2["run"]["tests"])
    assert cli.main(["merge", str(runs / "merged"), str(runs / "shard1"), str(runs / "shard2")]) == 0
    assert "merged 13 records of 2 shard(s) at seed 0" in capsys.readouterr().out
    merged = _doc(runs / "merged")
    assert P.strip(merged["records"]) == P.strip(one["records"])
    assert {k: t["outcome"] for k, t in merged["run"]["tests"].items()} == \
        {k: t["outcome"] for k, t in one["run"]["tests"].items()}
    assert merged["claims"] == one["claims"]
    assert [s["tests"] for s in merged["run"]["shards"]] == [len(s1["run"]["tests"]), len(s2["run"]["tests"])]
    assert merged["run"]["exitstatus"] == 0 and "commit" in merged["run"]
    assert "tree_clean" in merged["run"] and merged["run"]["code_digest"] == one["run"]["code_digest"]
    assert 'id="overview"' in (runs / "merged" / "index.html").read_text(encoding="utf-8")


def test_merge_refuses_overlapping_shards(runs, capsys):
    assert cli.main(["merge", str(runs / "bad"), str(runs / "shard1"), str(runs / "one")]) == 2
    assert "ran in both" in capsys.readouterr().err


@pytest.mark.parametrize("field, value, words", [
    ("profile", "full", "profile"),
    ("commit", "0" * 40, "git commit"),
    ("code_digest", "f" * 64, "code"),
    ("registry_digest", "e" * 64, "claim registries"),
])
def test_merge_refuses_mixed_runs(runs, tmp_path, capsys, field, value, words):
    doc = _doc(runs / "shard2")
    doc["run"][field] = value
    (tmp_path / "results.json").write_text(json.dumps(doc))
    assert cli.main(["merge", str(tmp_path / "out"), str(runs / "shard1"), str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"the runs differ in their {words}" in err and str(tmp_path) in err
    assert not (tmp_path / "out").exists()


def test_provenance_of_this_checkout(tmp_path):
    from theory.runs import provenance as pv

    p = pv.provenance()
    assert set(p) == {"commit", "tree_clean", "code_digest"} and len(p["code_digest"]) == 64
    if p["commit"] is not None:  # a git checkout (the usual case)
        assert len(p["commit"]) == 40 and isinstance(p["tree_clean"], bool)
    (tmp_path / "theory").mkdir()
    (tmp_path / "theory" / "a.py").write_text("x = 1\n")
    before = pv.code_digest(tmp_path)
    (tmp_path / "theory" / "a.py").write_text("x = 2\n")  # a one-character change of the code
    assert pv.code_digest(tmp_path) != before
