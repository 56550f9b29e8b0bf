"""Core (issue 33): a CUDA run sends a test to the GPU only when its planned step costs at least the crossover and its
planned peak fits one GPU process's share; everything else stays on the CPU (``python -m theory gpu-split``)."""
import json

from theory import device
from theory.cli import main
from theory.cli.gpu_split import GiB, split


def _row(test, gflop, gib, status="planned"):
    return {"test": test, "status": status, "estimate": {"gflop_per_step": gflop, "bytes": int(gib * GiB)}}


def test_split_by_crossover_and_share():
    c = device.crossover_flops()
    rows = [_row("at", c / 1e9, 1), _row("below", 0.999 * c / 1e9, 1), _row("big", 100 * c / 1e9, 40.01),
            _row("fits", 100 * c / 1e9, 40), {"test": "unsized", "status": "no trainer; 0.2 s", "estimate": None}]
    got = {r["test"]: r["side"] for r in split(rows, c, 40 * GiB)}
    assert got == {"at": "gpu", "below": "cpu", "big": "cpu", "fits": "gpu", "unsized": "cpu"}


def test_cli_writes_both_lists(tmp_path, capsys):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"rows": [_row("checks/a.py::t[1]", 5.0, 2), _row("checks/b.py::u", 1e-4, 0.1)]}))
    assert main(["gpu-split", str(plan), str(tmp_path / "out"), "--crossover", "1e8"]) == 0
    assert (tmp_path / "out" / "gpu.txt").read_text() == "checks/a.py::t[1]\n"
    assert (tmp_path / "out" / "cpu.txt").read_text() == "checks/b.py::u\n"
    doc = json.loads((tmp_path / "out" / "split.json").read_text())
    assert doc["crossover_flops"] == 1e8 and [t["side"] for t in doc["tests"]] == ["gpu", "cpu"]
    assert "1 tests to the GPU, 1 to the CPU" in capsys.readouterr().out


def test_cli_names_a_bad_plan(tmp_path, capsys):
    bad = tmp_path / "plan.json"
    bad.write_text("{}")
    assert main(["gpu-split", str(bad), str(tmp_path / "out")]) == 2
    assert "cannot split" in capsys.readouterr().err and not (tmp_path / "out").exists()
    assert main(["gpu-split", str(tmp_path / "missing.json"), str(tmp_path / "out")]) == 2
