"""Core (issue 34): an API reference that cannot go stale.

Every public function and class of the user-facing modules has a docstring that names its arguments and a
short example; the examples run here as doctests (so a changed signature or result fails the suite), and the
reference pages are built from the same docstrings with pdoc (``python -m theory docs OUT``).
"""
import doctest
import importlib
import inspect
import re

import pytest

# The modules of the reference whose public names must each carry an example (theory.cli.docs_cmd.API renders
# them, and more). The engines behind train.gd (theory.sim.gd_blocks, theory.sim.mlp_backprop) are internal.
API_MODULES = ("theory.sim.activations", "theory.sim.ball", "theory.sim.extrapolate", "theory.sim.flow",
               "theory.sim.heun", "theory.sim.jacobian", "theory.sim.losses", "theory.sim.models", "theory.sim.ntk",
               "theory.sim.spectra", "theory.sim.train", "theory.sim.trajectory", "theory.sim.graph_step", "theory.stats", "theory.records",
               "theory.data", "theory.data.synthetic", "theory.data.real", "theory.cli", "theory.cli.scaffold",
               "theory.cli.registry", "theory.cli.docs_cmd", "theory.cli.gpu_split")
# the command modules' plumbing: their usage is the module docstring and --help
CLI_PLUMBING = {"register", "run"}
# Names still without an example or with undocumented arguments, each to be removed from this list when done
# (the test fails both ways).
PENDING: set[str] = set()
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _public(mod):
    """(qualified name, object) of the public functions and classes defined in ``mod``, and of their public methods."""
    for name, obj in sorted(vars(mod).items()):
        if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
            continue
        if mod.__name__.startswith("theory.cli.") and name in CLI_PLUMBING:
            continue
        if inspect.isfunction(obj):
            yield f"{mod.__name__}.{name}", obj, True
        elif inspect.isclass(obj):
            yield f"{mod.__name__}.{name}", obj, True
            for mname, m in sorted(vars(obj).items()):
                if mname.startswith("_"):
                    continue
                f = m.__func__ if isinstance(m, (classmethod, staticmethod)) else m.fget if isinstance(m, property) else m
                if inspect.isfunction(f):
                    yield f"{mod.__name__}.{name}.{mname}", f, False


def _params(obj) -> list[str]:
    if inspect.isclass(obj):
        return []
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values() if p.name not in ("self", "cls")
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _problems(qual, obj, needs_example) -> list[str]:
    doc = inspect.getdoc(obj) or ""
    if not doc:
        return [f"{qual}: no docstring"]
    out = []
    if needs_example and ">>>" not in doc:
        out.append(f"{qual}: no example (a '>>>' doctest)")
    missing = [p for p in _params(obj) if not re.search(rf"(?<![A-Za-z0-9_]){re.escape(p)}(?![A-Za-z0-9_])", doc)]
    if missing:
        out.append(f"{qual}: arguments not named in the docstring: {missing}")
    return out


def _all_problems() -> dict[str, list[str]]:
    found = {}
    for name in API_MODULES:
        for qual, obj, top in _public(importlib.import_module(name)):
            probs = _problems(qual, obj, top)
            if probs:
                found[qual] = probs
    return found


def test_every_public_name_has_its_arguments_and_an_example():
    found = _all_problems()
    new = {q: p for q, p in found.items() if q not in PENDING}
    assert not new, "undocumented public API:\n  " + "\n  ".join(x for p in new.values() for x in p)
    done = sorted(PENDING - set(found))
    assert not done, f"documented now: remove from PENDING: {done}"


@pytest.mark.parametrize("name", API_MODULES)
def test_the_examples_run(name, capsys):
    """Every example of the reference runs as written (doctest, with ELLIPSIS and NORMALIZE_WHITESPACE)."""
    mod = importlib.import_module(name)
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=FLAGS)
    report = []
    for test in finder.find(mod, name):
        runner.run(test, out=report.append)
    res = runner.summarize(verbose=False)
    capsys.readouterr()
    assert res.failed == 0, "".join(report)
    assert res.attempted > 0, f"{name} has no example"


@pytest.mark.e2e  # the whole reference (8 s on 2 busy cores): with --e2e, as CI runs it
def test_reference_pages_build_from_the_docstrings(tmp_path):
    pytest.importorskip("pdoc", reason="pdoc (the test/docs extra) builds the API reference")
    from theory.cli import docs_cmd

    index = docs_cmd.build(tmp_path, docs_cmd.API)
    flow = (tmp_path / "theory" / "sim" / "flow.html").read_text(encoding="utf-8")
    assert index.exists() and "max_evals" in flow and "FlowBudgetError" in flow
    models = (tmp_path / "theory" / "sim" / "models.html").read_text(encoding="utf-8")
    assert "dims" in models and "DeepMLP" in models
    for page in ("stats", "records", "data", "cli"):
        assert (tmp_path / "theory" / f"{page}.html").exists(), page
