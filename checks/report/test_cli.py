"""``python -m theory report`` is a thin wrapper: it runs ``pytest checks`` with the report options."""
from __future__ import annotations

import json

import pytest

import argparse

from theory import cli
from theory.cli import run_report

from . import _synthetic


def test_report_runs_pytest_checks_with_the_options(tmp_path, monkeypatch, capsys):
    seen = {}

    def fake_main(args):
        seen["args"] = args
        (tmp_path / "index.html").write_text("<!doctype html>")
        return 1

    monkeypatch.setattr(pytest, "main", fake_main)
    rc = cli.main(["report", "--profile", "full", "--device", "cpu", "--seed", "3", "--out", str(tmp_path),
                   "-k", "kou2023", "-n", "2", "-x"])
    a = seen["args"]
    assert rc == 1  # pytest's status is passed through
    assert a[0].endswith("checks") and a[a.index("--report") + 1] == str(tmp_path)
    assert [a[a.index(o) + 1] for o in ("--profile", "--device", "--seed", "-k", "-n")] == \
        ["full", "cpu", "3", "kou2023", "2"]
    assert "--theory-progress" in a and a[-1] == "-x"
    assert f"report written to {(tmp_path / 'index.html').resolve()}" in capsys.readouterr().out


def test_single_process_drops_xdist(tmp_path):
    ns = argparse.Namespace(out=str(tmp_path), profile="quick", device="auto", seed=0, n="1", k=None, claims=[])
    assert "-n" not in run_report.pytest_args(ns, [])


def test_render_rebuilds_from_results_json(tmp_path, capsys):
    p = tmp_path / "results.json"
    p.write_text(json.dumps(_synthetic.doc()))
    assert cli.main(["render", str(p)]) == 0
    assert (tmp_path / "index.html").read_text().startswith("<!doctype html>")
