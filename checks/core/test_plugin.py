"""Core: the pytest plugin — claim markers validated at collection, records merged under xdist."""
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _run(tmp_path, body, *args, env=None):
    d = tmp_path / "checks" / "kou2023"
    d.mkdir(parents=True)
    (tmp_path / "checks" / "__init__.py").write_text("")
    (d / "__init__.py").write_text("")
    (d / "test_x.py").write_text(body)
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    cmd = [sys.executable, "-m", "pytest", "checks", "-q", "-p", "no:cacheprovider",
           "--report", str(tmp_path / "rep"), *args]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT), **(env or {})})


@pytest.mark.e2e
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_unknown_claim_is_a_collection_error(tmp_path, workers):
    """With and without xdist (where an error raised in a worker would surface as a bare INTERNALERROR)."""
    bogus = "kou2023/" + "lem-77"  # built, not quoted, so the coverage tool does not count it as a reference
    r = _run(tmp_path, f"import pytest\n@pytest.mark.claim('{bogus}')\ndef test_a():\n    pass\n", *workers)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and f"unknown claim ID '{bogus}'" in out and "INTERNALERROR" not in out, out
    assert "1 passed" not in out


@pytest.mark.parametrize("how", ["option", "env"])
def test_missing_extra_registry_is_one_clear_usage_error_under_xdist(tmp_path, how):
    body = "import pytest\n@pytest.mark.claim('kou2023/lem-5.2')\ndef test_a():\n    pass\n"
    missing = str(tmp_path / "no-registry")
    r = _run(tmp_path, body, "-n", "2", *(["--claims", missing] if how == "option" else []),
             env={"THEORY_CLAIMS_PATH": missing} if how == "env" else None)
    out = r.stdout + r.stderr
    assert r.returncode == 4 and f"no claim registry at {missing}" in out and "INTERNALERROR" not in out, out


def test_malformed_registry_names_the_file_and_entry(tmp_path):
    reg = tmp_path / "reg" / "claims.toml"
    reg.parent.mkdir()
    reg.write_text('[paper]\nid = "smith2026"\nauthors = ["A"]\ntitle = "T"\nvenue = "V"\nyear = 2026\n'
                   '[[claim]]\nid = "smith2026/lem-1"\ntitle = "t"\n')
    r = _run(tmp_path, "def test_a():\n    pass\n", "--claims", str(reg))
    out = r.stdout + r.stderr
    assert r.returncode == 4 and f"claim registry {reg}, entry 'smith2026/lem-1'" in out and "'kind'" in out, out


def test_missing_claim_marker_is_an_error(tmp_path):
    r = _run(tmp_path, "def test_a():\n    pass\n")
    assert r.returncode != 0 and "needs @pytest.mark.claim" in r.stdout + r.stderr


@pytest.mark.e2e
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_records_merged_into_results_json(tmp_path, workers):
    body = ("import pytest\n"
            "@pytest.mark.claim('kou2023/lem-5.2')\n@pytest.mark.parametrize('k', range(4))\n"
            "def test_a(record, k):\n    record('holds', evidence='test', inside=True, inside_reason='demo run', observed=k * 1e-15, bound=1e-12, config={'k': k})\n")
    r = _run(tmp_path, body, *workers)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "rep" / "results.json").read_text())
    assert sorted(rec["config"]["k"] for rec in doc["records"]) == [0, 1, 2, 3]
    assert doc["run"]["profile"] == "quick"
    leftover = tmp_path / "rep" / ".records"
    assert not leftover.exists() or not any(leftover.iterdir())


@pytest.mark.e2e
def test_a_test_cut_off_in_its_call_is_incomplete_not_passed(tmp_path):
    """An interrupt inside a test's call (SIGINT at .ci/gpu-full's deadline) leaves no call report: results.json must
    say "incomplete" for that test, next to the tests that did finish."""
    body = ("import pytest\n@pytest.mark.claim('kou2023/lem-5.2')\ndef test_a(record):\n"
            "    record('holds', evidence='test', inside=True, inside_reason='demo run', observed=0.0, bound=1.0)\n"
            "@pytest.mark.claim('kou2023/lem-5.2')\ndef test_b():\n    raise KeyboardInterrupt\n")
    _run(tmp_path, body)
    doc = json.loads((tmp_path / "rep" / "results.json").read_text())
    out = {k.split("::")[-1]: t["outcome"] for k, t in doc["run"]["tests"].items()}
    assert out == {"test_a": "passed", "test_b": "incomplete"}, out


@pytest.mark.e2e
def test_collect_only_leaves_the_last_report_alone(tmp_path):
    """``--co`` runs no check: it must not replace an existing report with an empty one."""
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / "index.html").write_text("previous")
    r = _run(tmp_path, "import pytest\n@pytest.mark.claim('kou2023/lem-5.2')\ndef test_a(record):\n    pass\n", "--co")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (rep / "index.html").read_text() == "previous" and not (rep / "results.json").exists()


@pytest.mark.parametrize("mark, ok", [
    ("xfail(strict=True, reason='paper typo')", False),                          # any exception would pass
    ("xfail(strict=True, raises=AssertionError, reason='paper typo')", False),   # a failed control would pass
    ("xfail(raises=ClaimViolation, reason='paper typo')", False),                # not strict
    ("xfail(strict=True, raises=ClaimViolation, reason='paper typo')", True),
])
def test_expected_failures_must_expect_a_claim_violation(tmp_path, mark, ok):
    body = ("import pytest\nfrom theory import ClaimViolation, assert_claim\n"
            f"@pytest.mark.claim('kou2023/lem-5.3')\n@pytest.mark.{mark}\n"
            "def test_a():\n    assert_claim(1 > 2, 'printed bound fails')\n")
    r = _run(tmp_path, body)
    out = r.stdout + r.stderr
    if ok:
        assert r.returncode == 0 and "1 xfailed" in out, out
    else:
        assert r.returncode != 0 and "an expected failure needs xfail" in out, out


def test_a_failed_control_inside_an_expected_failure_is_a_failure(tmp_path):
    body = ("import pytest\nfrom theory import ClaimViolation\n"
            "@pytest.mark.claim('kou2023/lem-5.3')\n"
            "@pytest.mark.xfail(strict=True, raises=ClaimViolation, reason='paper typo')\n"
            "def test_a():\n    assert 1 > 2, 'control'\n")
    r = _run(tmp_path, body)
    assert r.returncode == 1 and "1 failed" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("args,env,msg", [
    (["--device", "cuda"], None, "device 'cuda' requested but torch.cuda.is_available() is False"),
    ([], {"THEORY_MNIST": "/nonexistent/mnist.npz"}, "local data file not found: $THEORY_MNIST=/nonexistent"),
    (["--profile", "huge"], None, "invalid choice: 'huge'"),
    ([], {"THEORY_DEVICE": "gpu"}, "unknown device 'gpu' (--device or $THEORY_DEVICE)"),
    ([], {"THEORY_DEVICE": "cuda"}, "device 'cuda' requested but torch.cuda.is_available() is False"),
])
def test_bad_options_and_environment_are_one_line_usage_errors(tmp_path, args, env, msg):
    import torch

    if ("cuda" in args or (env or {}).get("THEORY_DEVICE") == "cuda") and torch.cuda.is_available():
        pytest.skip("CUDA is present here: --device cuda is valid")
    body = "import pytest\n@pytest.mark.claim('kou2023/lem-5.2')\ndef test_a():\n    pass\n"
    r = _run(tmp_path, body, *args, env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 4 and msg in out and "INTERNALERROR" not in out and "Traceback" not in out, out


def test_gpu_peak_is_reported_with_the_bytes_held_at_the_start(monkeypatch):
    """On CUDA the call hook reports torch's peak and the bytes already allocated when the call began (tensors
    earlier tests of the worker keep alive count in the peak). Run here with torch.cuda's counters faked: a worker
    holding 3 GiB whose test adds 1 GiB reports start 3 GiB, peak 4 GiB; on the CPU it reports nothing."""
    import torch

    from theory.harness import plugin

    held, peak = [3 << 30], [3 << 30]
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda: peak.__setitem__(0, held[0]))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda: held[0])
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda: peak[0])

    class Item:
        user_properties: list = []

    for dev, want in (("cuda", {plugin.START_GPU: 3 << 30, plugin.PEAK_GPU: 4 << 30}), ("cpu", {})):
        monkeypatch.setattr(plugin._device, "get_device", lambda d=dev: torch.device(d))
        item = Item()
        item.user_properties = []
        hook = plugin.pytest_runtest_call(item)
        next(hook)
        peak[0] = held[0] + (1 << 30)  # the test's own gigabyte, freed before the call ends
        with pytest.raises(StopIteration):
            next(hook)
        assert dict(item.user_properties) == want, (dev, item.user_properties)
