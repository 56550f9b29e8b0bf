"""Issue 13: a researcher's own paper, scaffolded outside the repository, runs through the same plugin and report."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

from theory.report import page

pytestmark = pytest.mark.e2e  # subprocess runs of pytest / the CLI: deselected unless --e2e

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _run(args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("THEORY_CLAIMS_PATH", None)
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def test_new_paper_end_to_end_outside_the_repository(tmp_path):
    paper = tmp_path / "mypaper"
    r = _run(["-m", "theory", "new", "smith2026", str(paper)], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(p.name for p in paper.iterdir()) == ["claims.toml", "conftest.py", "test_smith2026.py"]
    assert _run(["-m", "theory", "new", "smith2026", str(paper)], tmp_path).returncode == 2  # never overwrites

    r = _run(["-m", "pytest", str(paper), "-q", "-p", "no:cacheprovider", "--report", str(tmp_path / "out")],
             tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    c = doc["claims"]["smith2026/lem-1"]
    assert c["verdict"] == "holds" and c["companions"] == {"rejected": 1, "tried": 1} and c["untested"] == []
    assert doc["registry"]["papers"]["smith2026"]["title"] == "Title of your paper"
    html = (tmp_path / "out" / "index.html").read_text()
    assert f'id="{page.anchor("smith2026/lem-1")}"' in html and "Section 2, Lemma 1" in html


def test_new_paper_lands_in_the_same_report_as_the_built_in_ones(tmp_path):
    paper = tmp_path / "mypaper"
    assert _run(["-m", "theory", "new", "smith2026", str(paper)], tmp_path).returncode == 0
    builtin = ROOT / "checks" / "zhu2022" / "test_definitions.py"
    r = _run(["-m", "pytest", str(builtin), str(paper), "-q", "-p", "no:cacheprovider",
              "--report", str(tmp_path / "out")], ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    verdicts = {cid: c["verdict"] for cid, c in doc["claims"].items()}
    assert verdicts["smith2026/lem-1"] == "holds"
    assert any(cid.startswith("zhu2022/") and v != "not-encoded" for cid, v in verdicts.items())
    assert len([c for c in verdicts if c.startswith(("bantzis2025/", "kou2023/", "wang2024/", "zhu2022/"))]) >= 113


def test_scaffold_refuses_a_bad_paper_id(tmp_path):
    r = _run(["-m", "theory", "new", "Smith", str(tmp_path / "x")], tmp_path)
    assert r.returncode == 2 and "paper id 'Smith'" in r.stderr and not (tmp_path / "x").exists()
