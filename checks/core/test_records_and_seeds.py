"""Core: seeds, Measurement records, JSONL writing and merging, atomic writes, statistics helpers."""
import json
import os

import pytest

from theory import records, seeding, stats
from theory.records import Measurement, RecordWriter


def test_seed_depends_only_on_claim_config_offset():
    a = seeding.derive_seed("kou2023/lem-5.2", {"n": 10, "m": 20}, 0)
    assert a == seeding.derive_seed("kou2023/lem-5.2", {"m": 20, "n": 10}, 0)  # key order irrelevant
    assert a != seeding.derive_seed("kou2023/lem-5.2", {"n": 10, "m": 21}, 0)
    assert a != seeding.derive_seed("kou2023/lem-5.2", {"n": 10, "m": 20}, 1)
    assert a != seeding.derive_seed("kou2023/lem-5.4", {"n": 10, "m": 20}, 0)
    assert 0 <= a < 2 ** 63


def test_ctx_generator_reproducible(ctx):
    import torch
    from theory.device import draw
    x = draw(torch.randn, 3, generator=ctx.generator("zhu2022/lem-5", {"m": 4}), device=ctx.device)
    y = draw(torch.randn, 3, generator=ctx.generator("zhu2022/lem-5", {"m": 4}), device=ctx.device)
    assert torch.equal(x, y) and x.device == ctx.device


def test_measurement_ratio_and_json():
    m = Measurement(claim="wang2024/thm-4.5", verdict="holds", evidence="test", inside=True, inside_reason="unit test", observed=2.0, bound=4.0,
                    series={"s": {"x": [1, 2], "y": [float("inf"), 1.0]}})
    assert m.ratio == 0.5
    j = m.to_json()
    assert j["series"]["s"]["y"][0] == "inf"
    json.dumps(j, allow_nan=False)


def test_verdict_for():
    assert records.verdict_for(1.0, 2.0, "<=") == "holds"
    assert records.verdict_for(2.0 + 1e-13, 2.0, "<=", rtol=1e-12) == "holds"
    assert records.verdict_for(2.1, 2.0, "<=") == "violated"
    assert records.verdict_for(1.0, 2.0, ">=") == "violated"
    assert records.verdict_for(1.0, 2.0, "<=", vacuous_if=True) == "vacuous"
    with pytest.raises(ValueError):
        records.verdict_for(float("nan"), 1.0)


def test_writer_merge_survives_torn_line(tmp_path):
    w1, w2 = RecordWriter(tmp_path / "rec", "gw0"), RecordWriter(tmp_path / "rec", "gw1")
    w1.write(Measurement(claim="kou2023/lem-5.2", verdict="holds", evidence="test", inside=True, inside_reason="unit test", observed=1e-15, bound=1e-12))
    w2.write(Measurement(claim="bantzis2025/ex-1", verdict="holds", evidence="test", inside=True, inside_reason="unit test", observed=0.5, bound=0.5))
    with open(w2.path, "a") as f:
        f.write('{"claim": "torn')  # an interrupted write
    doc = records.merge(tmp_path / "rec", tmp_path / "results.json", {"profile": "quick"})
    assert [r["claim"] for r in doc["records"]] == ["bantzis2025/ex-1", "kou2023/lem-5.2"]
    assert json.loads((tmp_path / "results.json").read_text())["schema"] == records.SCHEMA_VERSION


def test_atomic_write_never_truncates(tmp_path, monkeypatch):
    p = tmp_path / "index.html"
    records.atomic_write(p, "old complete page")

    class Boom(RuntimeError):
        pass

    def crash(*a, **k):
        raise Boom()

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(Boom):
        records.atomic_write(p, "new page that never lands")
    assert p.read_text() == "old complete page"
    assert [f.name for f in tmp_path.iterdir()] == ["index.html"]  # no temp file left behind


def test_failure_rate_test_accepts_and_rejects():
    ok = stats.failure_rate_test(5, 1000, delta=0.01, alpha=1e-3)
    assert not ok.rejects and ok.upper > ok.rate
    bad = stats.failure_rate_test(40, 1000, delta=0.01, alpha=1e-3)
    assert bad.rejects
    with pytest.raises(ValueError):
        stats.failure_rate_test(5, 0, 0.1)


def test_fit_power_recovers_exponent():
    import numpy as np
    x = np.geomspace(1, 1e4, 20)
    fit = stats.fit_power(x, 3.0 * x ** -0.5 * (1 + 1e-3 * np.sin(x)))
    assert fit.exponent == pytest.approx(-0.5, abs=1e-3) and fit.constant == pytest.approx(3.0, rel=1e-2)
    assert fit.ci[0] < -0.5 < fit.ci[1]
    rho, p, sig = stats.rank_trend([1, 2, 3, 4, 5], [0.1, 0.2, 0.25, 0.4, 0.9])
    assert rho == pytest.approx(1.0) and sig
