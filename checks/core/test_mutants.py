"""The mutation audit's machinery (issue 15): operators, sampling, test selection."""
import ast
import pathlib
import textwrap

import pytest

from theory.mutants import audit as A, ops, targets as T

ROOT = pathlib.Path(__file__).resolve().parents[2]

SRC = textwrap.dedent("""\
    import math

    SCALE = 3.0

    def bound(n, m, L):
        if n < 0:
            raise ValueError(f"layer {L + 1}: n = {n / 2}")
        return 8 * math.sqrt(n) / m * L ** 2 - (L - 1) + x[2] + f(dim=-1)

    def g(t):
        return -t
    """)


def test_every_operator_and_its_text():
    ms = ops.mutants("demo.py", SRC)
    got = {(m.op, m.old, m.new) for m in ms}
    assert ("const*2", "8", "16") in got
    assert ("drop-sqrt", "math.sqrt(n)", "(n)") in got
    assert ("drop-divisor", "8 * math.sqrt(n) / m", "(8 * math.sqrt(n))") in got
    assert ("exponent+1", "L ** 2", "(L) ** (2 + 1)") in got
    assert ("off-by-one", "L - 1", "(L)") in got
    assert ("flip-sign", "-t", "(t)") in got
    # never an index, a keyword value or a module-level constant
    idx_col = SRC.splitlines()[7].index("x[2]") + 2
    assert not any(m.line == 8 and m.col == idx_col for m in ms)
    assert not any(m.line == 7 for m in ms)  # inside the f-string of the message
    assert not any(m.old == "-1" or m.old == "3.0" for m in ms)
    assert {m.function for m in ms} == {"bound", "g"}


def test_apply_changes_only_its_segment_and_parses():
    for m in ops.mutants("demo.py", SRC):
        out = m.apply(SRC)
        ast.parse(out)
        assert out != SRC and len(out.splitlines()) == len(SRC.splitlines())
    m = next(m for m in ops.mutants("demo.py", SRC) if m.op == "exponent+1")
    assert "L ** (2 + 1)" in m.apply(SRC).replace("(L)", "L")
    with pytest.raises(ValueError, match="source changed"):
        m.apply(SRC.replace("L ** 2", "L ** 3"))


def test_sampling_is_reproducible_and_spread_over_files():
    pool = A.candidates(ROOT)
    assert len(pool) > 300
    a, b = A.sample(pool, 30, seed=4), A.sample(pool, 30, seed=4)
    assert [m.key for m in a] == [m.key for m in b] and len({m.key for m in a}) == 30
    assert len({m.path for m in a}) >= 20  # round-robin over files
    assert [m.key for m in A.sample(pool, 30, seed=5)] != [m.key for m in a]


def test_selection_follows_callers_to_the_checks():
    g = T.name_graph(ROOT)
    names = T.names_reaching("population", g)
    files = T.check_files(ROOT, names)
    assert "checks/wang2024/test_decomposition.py" in files
    assert not any(f.startswith(("checks/core", "checks/report")) for f in files)
    assert T.check_files(ROOT, {"no_such_function_anywhere"}) == []


def test_checks_that_name_the_mutated_function_run_first():
    g = T.name_graph(ROOT)
    levels = T.name_levels("pgd_l2", g)
    assert levels["pgd_l2"] == 0 and all(v >= 1 for k, v in levels.items() if k != "pgd_l2")
    files = T.ranked_check_files(ROOT, levels, seconds={"checks/wang2024/test_adversarial.py": 1e6})
    assert files[0] == "checks/wang2024/test_adversarial.py" and len(files) > 1  # names it: first, however slow
    assert set(files) == set(T.check_files(ROOT, set(levels)))


def test_summary_counts_crashes_as_caught_and_sets_timeouts_apart():
    rs = [{"outcome": o} for o in ("caught", "caught", "crashed", "survived", "timeout", "no checks")]
    s = A.summary(rs)
    assert s["catch_rate"] == pytest.approx(3 / 4) and s["timeout"] == 1 and s["no checks"] == 1
