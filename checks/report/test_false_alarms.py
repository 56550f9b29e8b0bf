"""Issue 15, "report that expected count openly next to the sweep": records declare ``false_alarm`` (the rate at
which a statistical check fails although its claim holds); a run or sweep sums them per test (union bound) and over
the seeds. Expected sums are worked out by hand here."""
from __future__ import annotations

import pytest

from theory.records import Measurement
from theory.runs.sweep import false_alarms


def test_false_alarm_is_a_probability():
    Measurement(claim="kou2023/lem-5.2", verdict="holds", evidence="test", inside=True, inside_reason="unit test", observed=1, bound=2, false_alarm=1e-3)
    for bad in (0, 1, 1.5, -0.1, float("nan"), "often"):
        with pytest.raises(ValueError, match="false_alarm must be a probability"):
            Measurement(claim="kou2023/lem-5.2", verdict="holds", evidence="test", inside=True, inside_reason="unit test", observed=1, bound=2, false_alarm=bad)


def test_union_bound_per_test_and_over_seeds():
    recs = [dict(test="a", false_alarm=1e-3), dict(test="a", false_alarm=2e-3),  # one test, two decisions: 3e-3
            dict(test="b", false_alarm=0.01), dict(test="c"),                    # c: deterministic, not counted
            dict(test="d", false_alarm=0.7), dict(test="d", false_alarm=0.6)]    # capped at 1
    fa = false_alarms(recs, seeds=20)
    assert fa.tests == pytest.approx({"a": 3e-3, "b": 0.01, "d": 1.0})
    assert fa.per_seed == pytest.approx(1.013) and fa.expected == pytest.approx(20.26)
    t = fa.text(failed=2)
    assert "3 tests" in t and "Σα = 1 per seed" in t and "≤ 20" in t and "P(any such failure) ≤ 1" in t
    assert t.endswith("failed tests observed: 2.")
    assert false_alarms([dict(test="c")]).text() == "No record declares a false-alarm rate."
