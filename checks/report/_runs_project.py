"""A tiny project for the end-to-end tests of shards, merge, resume, sweeps and diff (issue 16).

Its own registry (paper ``demo2026``, passed with ``--claims``) and a dozen fast checks that draw their
numbers from ``record.generator`` (so records depend on the seed and on nothing else), with an inequality, a
rate, an identity, an expected failure, companions and a claim whose verdict depends on the seed
(holds at even seeds, inconclusive at odd ones). The
bound of ``lem-1`` is read from ``$DEMO_BOUND_SCALE`` (default 1) so a test can change it deliberately.
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

REGISTRY = '''[paper]
id = "demo2026"
authors = ["A. Author"]
title = "A demonstration paper"
venue = "Nowhere"
year = 2026
arxiv = "0000.00000"

[[claim]]
id = "demo2026/lem-1"
title = "Mean below a bound"
kind = "inequality"
where = "Lemma 1"
statement = "The sample mean of uniform draws is at most 1/2 + 3/sqrt(n)."
hypotheses = "Uniform draws."
measures = "observed mean vs the bound."
checkable = "fully"

[[claim]]
id = "demo2026/thm-2"
title = "A rate"
kind = "rate"
where = "Theorem 2"
statement = "The error decays like n^-1/2."
hypotheses = "None."
measures = "fitted exponent vs -1/2."
checkable = "fully"

[[claim]]
id = "demo2026/eq-3"
title = "An identity"
kind = "exact identity"
where = "Eq. 3"
statement = "Sum of squares equals the squared norm."
hypotheses = "None."
measures = "relative error vs the float64 tolerance."
checkable = "fully"

[[claim]]
id = "demo2026/lem-4"
title = "A printed constant that is too small"
kind = "inequality"
where = "Lemma 4"
statement = "The maximum of n uniform draws is at most 1/2."
hypotheses = "n >= 10."
measures = "observed maximum vs 1/2."
checkable = "fully"

[[claim]]
id = "demo2026/rem-5"
title = "A claim the quick test cannot always decide"
kind = "empirical"
where = "Remark 5"
statement = "A coin shows heads."
hypotheses = "None."
measures = "one draw."
checkable = "fully"
'''

CHECKS = '''import math
import os

import pytest
import torch

from theory import ClaimViolation, assert_claim


@pytest.mark.claim("demo2026/lem-1")
@pytest.mark.parametrize("n", [100, 400, 1600, 6400])
def test_mean_bound(record, n):
    g = record.generator({"n": n})
    x = torch.rand(n, generator=g, dtype=torch.float64)
    obs = float(x.mean())
    bound = (0.5 + 3 / math.sqrt(n)) * float(os.environ.get("DEMO_BOUND_SCALE", "1"))
    record("holds" if obs <= bound else "violated", evidence="test", inside=True, inside_reason="demo run", observed=obs, bound=bound, config={"n": n},
           tightness="observed mean / bound")
    wrong = 0.5 - 3 / math.sqrt(n)
    record("holds" if obs > wrong else "violated", role="companion", observed=obs, bound=wrong, config={"n": n},
           note="wrong version: 1/2 - 3/sqrt(n)")


@pytest.mark.claim("demo2026/thm-2")
def test_rate(record):
    g = record.generator()
    ns = torch.tensor([100.0, 400.0, 1600.0, 6400.0], dtype=torch.float64)
    err = ns ** -0.5 * torch.exp(0.05 * torch.randn(4, generator=g, dtype=torch.float64))
    lx, ly = torch.log(ns), torch.log(err)  # closed-form least squares: the same bits in any process (a LAPACK
    slope = float(((lx - lx.mean()) * (ly - ly.mean())).sum() / ((lx - lx.mean()) ** 2).sum())  # solve may not be)
    record("holds" if abs(slope + 0.5) < 0.2 else "violated", evidence="test", inside=True, inside_reason="demo run", observed=slope, bound=-0.5,
           tightness="fitted exponent vs stated", hypotheses={"99% CI": [slope - 0.1, slope + 0.1]})


@pytest.mark.claim("demo2026/eq-3")
@pytest.mark.parametrize("d", [3, 30])
def test_identity(record, d):
    g = record.generator({"d": d})
    v = torch.randn(d, generator=g, dtype=torch.float64)
    err = abs(float((v * v).sum()) - float(torch.linalg.norm(v)) ** 2) / float((v * v).sum())
    tol = 1e-13
    record("holds" if err <= tol else "violated", evidence="test", inside=True, inside_reason="demo run", observed=err, bound=tol, config={"d": d},
           tightness="relative error / tolerance")
    assert err <= tol


@pytest.mark.claim("demo2026/lem-4")
@pytest.mark.xfail(strict=True, raises=ClaimViolation, reason="the printed constant 1/2 is below the maximum")
def test_printed_constant(record):
    g = record.generator()
    mx = float(torch.rand(50, generator=g, dtype=torch.float64).max())
    record("expected-failure", evidence="test", inside=True, inside_reason="demo run", observed=mx, bound=0.5, finding="the maximum of 50 draws exceeds 1/2",
           finding_type="false-as-stated")
    assert_claim(mx <= 0.5, f"max {mx:.3f} > 1/2")


@pytest.mark.claim("demo2026/rem-5")
def test_coin(record, ctx):
    u = float(torch.rand(1, generator=record.generator(), dtype=torch.float64))
    if ctx.seed % 2 == 0:  # by construction: holds at even seeds, inconclusive at odd ones
        record("holds", evidence="test", inside=True, inside_reason="demo run", observed=u, bound=0.5)
    else:
        record("inconclusive", evidence="test", inside=True, inside_reason="demo run", observed=u, bound=0.5, finding_type="inconclusive", note="tails: no power")
'''



def make(tmp: pathlib.Path, files: dict | None = None) -> pathlib.Path:
    """Write the project into ``tmp`` with a frozen copy of the ``theory`` package (the runs import it, so
    the code they report does not change under them while someone edits the checkout); returns ``tmp``."""
    shutil.copytree(ROOT / "theory", tmp / "theory", ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    (tmp / "reg").mkdir(parents=True, exist_ok=True)
    (tmp / "reg" / "claims.toml").write_text(REGISTRY, encoding="utf-8")
    d = tmp / "checks" / "demo2026"
    d.mkdir(parents=True, exist_ok=True)
    (tmp / "checks" / "__init__.py").write_text("")
    (d / "__init__.py").write_text("")
    (d / "test_demo.py").write_text(CHECKS, encoding="utf-8")
    for name, body in (files or {}).items():  # more check files beside test_demo.py
        (d / name).write_text(body, encoding="utf-8")
    (tmp / "conftest.py").write_text('pytest_plugins = ["theory.harness.plugin"]\n')
    return tmp


def pytest(tmp: pathlib.Path, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m pytest checks --claims reg ... -p no:xdist`` in ``tmp`` (one process, no cache)."""
    cmd = [sys.executable, "-m", "pytest", "checks", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
           "--claims", str(tmp / "reg"), *args]
    return subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(tmp), **(env or {})})


def pytest_parallel(tmp: pathlib.Path, *runs: list, timeout: float = 120) -> list:
    """Several :func:`pytest` runs at once (the shards of one run); their CompletedProcess-like results."""
    cmds = [[sys.executable, "-m", "pytest", "checks", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
             "--claims", str(tmp / "reg"), *args] for args in runs]
    env = {**os.environ, "PYTHONPATH": str(tmp)}
    procs = [subprocess.Popen(c, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for c in cmds]
    out = []
    for p, c in zip(procs, cmds):
        so, se = p.communicate(timeout=timeout)
        out.append(subprocess.CompletedProcess(c, p.returncode, so, se))
    return out


def strip(records: list[dict]) -> list[dict]:
    """Records without their timings (the only field that may differ between runs of one seed)."""
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]
