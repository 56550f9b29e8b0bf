"""Core: the smoke profile (issue 17) — the full profile's configuration at reduced size, derived by one rule.

Unit tests of the rule (``ctx.full``, ``ctx.pick``, ``ctx.size``), of the MNIST-format file it writes, and one
pytest run in a subprocess: a failed assertion, a ClaimViolation, an expected failure and a strict XPASS are
'not judged', any other exception fails the run, modules without a full-only branch are deselected, the MNIST
branch reads the written file, and the report says it is a smoke run.
"""
import json
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

from theory.data import real
from theory.harness.context import DEFAULT_SCALE, RunContext

ROOT = pathlib.Path(__file__).resolve().parents[2]
CPU = torch.device("cpu")


def test_smoke_rule():
    q, f, s = (RunContext(CPU, p) for p in ("quick", "full", "smoke"))
    assert (q.full, f.full, s.full) == (False, True, True) and (q.smoke, f.smoke, s.smoke) == (False, False, True)
    assert [c.pick(quick="q", full="f") for c in (q, f, s)] == ["q", "f", "q"]
    grid = [2 ** k for k in range(4, 14)]
    for c in (q, f):  # quick and full: the written value itself, unchanged
        assert c.size(20_000, floor=200) == 20_000 and c.size(2e9) == 2e9 and c.sizes(grid, floor=16) == grid
    assert DEFAULT_SCALE == 0.01 and s.scale == DEFAULT_SCALE
    # smoke: max(floor, ceil(n * scale)); ints stay ints
    assert s.size(20_000, floor=200) == 200 and s.size(60_000) == 600 and s.size(1000, floor=8) == 10
    assert s.size(8, floor=2) == 2 and isinstance(s.size(8), int) and s.size(2e9) == 2e7
    assert s.sizes(grid, floor=16) == [16, 21, 41, 82]          # duplicates dropped, order kept
    s10 = RunContext(CPU, "smoke", scale=0.1)
    assert s10.size(512, floor=32) == math.ceil(51.2) == 52
    with pytest.raises(ValueError, match="scale"):
        RunContext(CPU, "smoke", scale=0.0)


def test_mnist_like_file_round_trip(tmp_path):
    from sklearn.datasets import load_digits

    n = 2000  # more than the 1797 digits: cycled
    images, labels = real.write_mnist_like(tmp_path, n)
    X, lab = real.load_mnist(images, labels, device="cpu")
    d = load_digits()
    assert X.shape == (n, 784) and lab.shape == (n,) and float(X.min()) == 0.0 and float(X.max()) == 1.0
    assert lab.tolist() == np.resize(d.target, n).tolist()
    # pixel (r, c) of the 28x28 image is the 8x8 pixel ((r-2)//3, (c-2)//3), 0..16 mapped to 0..255, rounded
    img = X[5].reshape(28, 28).cpu().numpy()
    ref = np.round(d.images[5] * 255.0 / 16.0) / 255.0
    assert np.array_equal(img[2:26, 2:26][::3, ::3], ref) and img[:2].sum() == 0 and img[:, 26:].sum() == 0


BODY = '''
import os
import pytest
from theory.data import real
from theory import ClaimViolation, assert_claim

@pytest.mark.claim("kou2023/lem-5.2")
def test_passes(record, ctx):
    X, lab = real.load_mnist(os.environ["THEORY_MNIST"], os.environ["THEORY_MNIST_LABELS"])
    assert ctx.full and ctx.smoke and ctx.pick(quick=1, full=2) == 1
    record("holds", evidence="test", inside=True, inside_reason="demo run", observed=float(X.shape[0]), bound=float(ctx.size(60_000)))

@pytest.mark.claim("kou2023/lem-5.2")
def test_failed_assert(record, ctx):
    record("violated", evidence="test", inside=True, inside_reason="demo run", observed=2.0, bound=1.0)
    assert ctx.size(100) > 50, "verdict at reduced size"

@pytest.mark.claim("kou2023/lem-5.2")
def test_claim_violation(ctx):
    assert_claim(False, "printed claim fails at reduced size")

@pytest.mark.claim("kou2023/lem-5.2")
@pytest.mark.xfail(strict=True, raises=ClaimViolation, reason="paper wrong")
def test_expected_failure(ctx):
    assert_claim(False, "as in the full profile")

@pytest.mark.claim("kou2023/lem-5.2")
@pytest.mark.xfail(strict=True, raises=ClaimViolation, reason="paper wrong")
def test_strict_xpass(ctx):
    assert_claim(True, "the discrepancy does not show at reduced size")

@pytest.mark.claim("kou2023/lem-5.2")
def test_crash(ctx):
    raise TypeError("a shape error is a bug in every profile")
'''


@pytest.mark.e2e
def test_smoke_run_end_to_end(tmp_path):
    d = tmp_path / "checks" / "kou2023"
    d.mkdir(parents=True)
    (tmp_path / "checks" / "__init__.py").write_text("")
    (d / "__init__.py").write_text("")
    (d / "test_full_branch.py").write_text(BODY)
    (d / "test_quick_only.py").write_text("import pytest\n@pytest.mark.claim('kou2023/lem-5.2')\n"
                                          "def test_q(record):\n    record('holds', evidence='test', inside=True, inside_reason='demo run', observed=1.0, bound=2.0)\n")
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    rep = tmp_path / "rep"
    cmd = [sys.executable, "-m", "pytest", "checks", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-rs",
           "--profile", "smoke", "--report", str(rep)]
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT), "THEORY_MNIST": "", "OMP_NUM_THREADS": "1"}
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out  # the TypeError, and only it, fails the run
    assert "1 failed, 1 passed, 4 skipped, 1 deselected" in out, out
    assert out.count("smoke run: verdict not judged at reduced size") == 4, out
    doc = json.loads((rep / "results.json").read_text())
    tests = {k.split("::")[-1]: v["outcome"] for k, v in doc["run"]["tests"].items()}
    nj = "not-judged (smoke)"
    assert tests == {"test_passes": "passed", "test_failed_assert": nj, "test_claim_violation": nj,
                     "test_expected_failure": nj, "test_strict_xpass": nj, "test_crash": "failed"}, tests
    assert doc["run"]["profile"] == "smoke" and doc["run"]["smoke"]["scale"] == 0.01
    assert "NOT compared with the papers" in doc["run"]["smoke"]["note"]
    assert "600 images" in doc["run"]["smoke"]["mnist"]
    recs = doc["records"]
    assert {m["profile"] for m in recs} == {"smoke"} and len(recs) == 2
    assert [m["observed"] for m in recs if m["test"].endswith("test_passes")] == [600.0]  # the written MNIST file
    assert 'id="smoke-run"' in (rep / "index.html").read_text() and "verdicts are not compared" in \
        (rep / "index.html").read_text()
