"""Issue 3 end to end: pytest writes the page from the run's records (xdist, partial and interrupted runs)."""
from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from theory import claims

from ._html import Page

pytestmark = pytest.mark.e2e  # subprocess runs of pytest / the CLI: deselected unless --e2e

ROOT = pathlib.Path(__file__).resolve().parents[2]

BODY = """import pytest, math
from theory import ClaimViolation, assert_claim
@pytest.mark.claim('kou2023/lem-C.3')
@pytest.mark.parametrize('k', [1, 2, 4])
def test_rate(record, k):
    t = [2.0 ** i for i in range(1, 12)]
    record('holds', evidence='test', inside=True, inside_reason='demo run', observed=-2.0 + 0.01 * k, bound=-1.0, config={'k': k}, tightness='fitted exponent vs stated',
           series={'srank-1': {'x': t, 'y': [k / math.log(1 + v) ** 2 for v in t], 'logx': True, 'logy': True}})

@pytest.mark.claim('kou2023/lem-5.3')
@pytest.mark.xfail(strict=True, raises=ClaimViolation, reason='printed bound is false')
def test_printed(record):
    record('expected-failure', evidence='test', inside=True, inside_reason='demo run', observed=35, bound=0, finding='printed exp(-x0) should be exp(x0)', finding_type='typo')
    assert_claim(False, 'printed bound fails for 35 sequences')

@pytest.mark.claim('kou2023/lem-A.1')
def test_crashes_before_recording(record):
    raise RuntimeError('simulated crash')
"""


def _run(tmp_path, body, *args, timeout=180):
    d = tmp_path / "checks" / "kou2023"
    d.mkdir(parents=True, exist_ok=True)
    (tmp_path / "checks" / "__init__.py").write_text("")
    (d / "__init__.py").write_text("")
    (d / "test_x.py").write_text(body)
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    cmd = [sys.executable, "-m", "pytest", "checks", "-q", "-p", "no:cacheprovider", "--report",
           str(tmp_path / "rep"), *args]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def _page(tmp_path, every_paper=False):
    text = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    page = Page(text)
    assert page.errors == []
    # the page covers the papers whose checks ran (here kou2023's), every claim of them; the whole registry when
    # nothing ran (issue 34)
    assert sorted(page.summary_claims) == sorted(c for c in claims.catalog() if every_paper or c.startswith("kou2023/"))
    return text, json.loads((tmp_path / "rep" / "results.json").read_text())


def test_run_writes_page_with_what_ran(tmp_path):
    """Under xdist (the single-process path is exercised by the partial and interrupted runs below)."""
    r = _run(tmp_path, BODY, "--theory-progress", "-n", "2")
    assert r.returncode == 1, r.stdout + r.stderr  # the crashing check fails the run
    text, doc = _page(tmp_path)
    tests = doc["run"]["tests"]
    assert {t["outcome"] for t in tests.values()} == {"passed", "xfailed", "failed"}
    crash = next(t for k, t in tests.items() if k.endswith("test_crashes_before_recording"))
    assert crash["claims"] == ["kou2023/lem-A.1"] and "simulated crash" in crash["message"]
    row = text[text.index('data-claim="kou2023/lem-A.1"'):]
    assert '>error</span>' in row[:row.index("</tr>")]
    assert "printed exp(-x0) should be exp(x0)" in text
    assert "observed vs bound across k" in text and text.count("<svg") >= 4
    assert "theory [5/5]" in r.stdout and "kou2023/lem-C.3: holds×1" in r.stdout  # progress lines


def test_partial_run_with_k_and_rerun_gives_identical_plots(tmp_path):
    r = _run(tmp_path, BODY, "-k", "rate")
    assert r.returncode == 0, r.stdout + r.stderr
    text, doc = _page(tmp_path)
    assert {x["claim"] for x in doc["records"]} == {"kou2023/lem-C.3"}
    row = text[text.index('data-claim="kou2023/lem-5.3"'):]
    assert ">not encoded</span>" in row[:row.index("</tr>")]
    svgs = re.findall(r"<svg.*?</svg>", text, re.S)
    r = _run(tmp_path, BODY, "-k", "rate", "-n", "2")  # same seed, other scheduling: same plots, byte for byte
    assert r.returncode == 0, r.stdout + r.stderr
    again = re.findall(r"<svg.*?</svg>", _page(tmp_path)[0], re.S)
    assert len(svgs) == 5 and again == svgs  # the overview figure (issue 16) and the four plots


def test_interrupted_run_still_writes_page(tmp_path):
    body = BODY + ("\n@pytest.mark.claim('kou2023/lem-A.2')\ndef test_zz_interrupt(record):\n"
                   "    record('holds', evidence='test', inside=True, inside_reason='demo run', observed=0.5, bound=0.6)\n    raise KeyboardInterrupt\n")
    r = _run(tmp_path, body)
    assert r.returncode == 2, r.stdout + r.stderr
    text, doc = _page(tmp_path)
    assert doc["run"]["exitstatus"] == 2 and "interrupted" in text
    assert "kou2023/lem-A.2" in {x["claim"] for x in doc["records"]}


def test_collection_error_still_writes_page(tmp_path):
    (tmp_path / "checks" / "kou2023").mkdir(parents=True)
    (tmp_path / "checks" / "kou2023" / "test_broken.py").write_text("import no_such_module_xyz\n")
    r = _run(tmp_path, BODY)
    assert r.returncode == 2, r.stdout + r.stderr  # pytest stops on collection errors
    text, doc = _page(tmp_path, every_paper=True)  # nothing ran
    assert list(doc["run"]["collect_errors"]) == ["checks/kou2023/test_broken.py"]
    assert "Collection errors" in text and "no_such_module_xyz" in text
