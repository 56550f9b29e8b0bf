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


def test_a_shared_run_follows_its_gpu_test():
    """Tests of one SHARED_RUNS group go where the group's GPU test goes (the run is computed on one side), unless
    their own planned peak is over the share; a group with no GPU test stays on the CPU."""
    c = device.crossover_flops()
    rows = [_row("big", 10 * c / 1e9, 1), _row("small", 1e-6, 0.1), _row("huge", 1e-6, 41),
            {"test": "unsized", "status": "no trainer; 0.2 s", "estimate": None}, _row("other", 1e-6, 0.1),
            _row("alone", 1e-6, 0.1)]
    groups = {"big": "g", "small": "g", "huge": "g", "unsized": "g", "other": "h"}
    got = {r["test"]: r["side"] for r in split(rows, c, 40 * GiB, groups.get)}
    assert got == {"big": "gpu", "small": "gpu", "huge": "cpu", "unsized": "gpu", "other": "cpu", "alone": "cpu"}
    assert {r["test"]: r["side"] for r in split(rows, c, 40 * GiB)}["small"] == "cpu"  # without groups: by size


def test_reference_plan_keeps_groups_on_one_side(tmp_path):
    """On the kept full-profile plan, no shared-run group is split between the GPU and the CPU list: kou's orthogonal
    pair goes to the GPU whole (all five of its tests are over the crossover), and so does wang's figure grid (two of
    its tests are sized by every trainer call, up to m = 8192; the other tests that read the grid follow them)."""
    import pathlib

    from theory.harness import shared_runs

    root = pathlib.Path(__file__).resolve().parents[2]
    rows = json.loads((root / "reference" / "plan" / "full.json").read_text())["rows"]
    res = split(rows, device.CROSSOVER_FLOPS, 40 * GiB, lambda t: shared_runs.group_of(t, root))
    sides: dict = {}
    for r in res:
        g = shared_runs.group_of(r["test"], root)
        if g:
            sides.setdefault(g, set()).add(r["side"])
    assert all(len(s) == 1 for s in sides.values()), sides
    assert sides["kou2023/orth_pair"] == {"gpu"}, sides
    assert sides["wang2024/figure_grids"] == {"gpu"}, sides
