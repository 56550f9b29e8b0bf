"""xdist scheduling that keeps the tests sharing a run on one worker (issue 33).

Many checks share an expensive run through a per-process cache (``functools.lru_cache`` or a module-scoped
fixture): wang2024's figure grid (2043 s on one CPU core in the full profile), kou2023's 10⁶-step leaky run and
orthogonal pair, zhu2022's lazy sweep. Under xdist's default ``load`` distribution the tests of such a file go to
any worker, and every worker that gets one recomputes the run: on 14 workers the wang grid alone could take the
whole machine for half an hour.

A test module declares what it shares with a module-level string constant::

    SHARED_RUNS = "wang2024/figure_grids"

or, where only some of its tests share a run, a dict from group to test function names::

    SHARED_RUNS = {"kou2023/leaky_long": ["test_leaky_loss_exponent"], "kou2023/orth_pair": [...]}

Every test in the same group, across modules, is one unit of :class:`SharedRunScheduling` (xdist's ``loadscope``
with the group as the scope): they run on one worker, one after the other, and the run is computed once. Every
other test is its own unit, distributed as under ``load``; ``loadscope`` hands out the largest units first, so a
long group starts at the beginning of the run. The constant is read from the module's source
(:func:`declared`), without importing it: the xdist controller does not collect.

The harness uses this scheduler whenever xdist distributes with its default mode (``-n N``, no ``--dist`` or
``--dist load``); an explicit ``--dist`` (``loadfile``, ``worksteal``, ...) is left to xdist. The test IDs are not
changed (xdist's ``loadgroup`` would append ``@group`` to them).
"""
from __future__ import annotations

import ast
import functools
import pathlib

CONSTANT = "SHARED_RUNS"


@functools.lru_cache(maxsize=None)
def declared(path: str) -> str | dict | None:
    """The ``SHARED_RUNS`` value of the test module at ``path``: a group name (the whole module), a dict from group
    to test function names, or None (no constant, not a Python file, unreadable). Only a module-level literal
    counts; any other value raises ValueError naming the module."""
    p = pathlib.Path(path)
    if p.suffix != ".py":
        return None
    try:
        tree = ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if not any(isinstance(t, ast.Name) and t.id == CONSTANT for t in targets) or node.value is None:
            continue
        try:
            v = ast.literal_eval(node.value)
        except ValueError:
            v = None
        ok = (isinstance(v, str) and v) or (isinstance(v, dict) and v and all(
            isinstance(g, str) and g and isinstance(ts, (list, tuple)) and ts and all(isinstance(t, str) for t in ts)
            for g, ts in v.items()))
        if not ok:
            raise ValueError(f"{path}: {CONSTANT} must be a non-empty string or a dict from group names to lists of "
                             f"test function names, got {ast.unparse(node.value)}")
        return v
    return None


def group_of(nodeid: str, root: pathlib.Path) -> str | None:
    """The shared-run group of a test (``path::function[params]``), or None.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "test_x.py").write_text('SHARED_RUNS = {"paper/run": ["test_a"]}\\n')
    >>> _ = (d / "test_y.py").write_text('SHARED_RUNS = "paper/run"\\n')
    >>> [group_of(t, d) for t in ("test_x.py::test_a[1]", "test_x.py::test_b", "test_y.py::test_c", "test_z.py::t")]
    ['paper/run', None, 'paper/run', None]
    """
    path, _, rest = nodeid.partition("::")
    v = declared(str(root / path))
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        fn = rest.split("::")[-1].split("[", 1)[0]
        return next((g for g, ts in v.items() if fn in ts), None)
    return None


def scope_of(nodeid: str, root: pathlib.Path) -> str:
    """The scheduling unit of a test: ``shared:<group>`` when it is in one, else the test itself."""
    g = group_of(nodeid, root)
    return f"shared:{g}" if g else nodeid


def make_scheduler(config, log):
    """The :class:`SharedRunScheduling` for xdist's default distribution, else None (xdist's own)."""
    if config.getoption("dist", "load") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    root = pathlib.Path(config.rootpath)

    class SharedRunScheduling(LoadScopeScheduling):
        """``loadscope`` whose scope is a test's shared-run group (:func:`scope_of`)."""

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid, root)

    return SharedRunScheduling(config, log)
