"""pytest plugin: options, the ``claim`` marker, run context, record writing, report at the end.

Options: ``--device {auto,cpu,cuda}``, ``--profile {quick,full,smoke}``, ``--scale S`` (smoke only),
``--seed N``, ``--report DIR`` (default ``reports``; ``--report none`` writes nothing).
Each process (xdist worker or the single process) appends its records to
``DIR/.records/<run>/<worker>.jsonl``; the controller merges them into
``DIR/results.json`` and writes ``DIR/index.html`` when the session ends, also
after failures or an interrupt.
"""
from __future__ import annotations

import datetime as _dt
import os
import pathlib
import platform
import shutil
import time
import uuid

import pytest
import torch

from .. import claims as _claims
from .. import device as _device
from ..coverage import NO_CLAIM_DIRS
from ..errors import ClaimViolation
from ..records import Measurement, RecordWriter, merge
from ..runs import resume as _resume
from ..runs.provenance import provenance as _provenance
from . import shared_runs
from . import smoke as _smoke
from .context import DEFAULT_SCALE, PROFILES, RunContext



def pytest_addoption(parser):
    g = parser.getgroup("theory", "theory harness")
    g.addoption("--device", default=os.environ.get("THEORY_DEVICE", "auto"), choices=("auto", "cpu", "cuda"),
                help="where tensors live (default: $THEORY_DEVICE, else auto)")
    g.addoption("--profile", default="quick", choices=PROFILES,
                help="quick (CPU-sized), full (paper scale) or smoke (the full profile at reduced size, see --scale)")
    g.addoption("--scale", type=float, default=DEFAULT_SCALE,
                help=f"smoke profile: sizes of full-only branches times S (default {DEFAULT_SCALE}; ctx.size)")
    g.addoption("--seed", type=int, default=0, help="global seed offset")
    g.addoption("--report", default="reports", help="directory for results.json and index.html ('none': off)")
    g.addoption("--claims", action="append", default=[], metavar="PATH",
                help="an extra claim registry: a claims.toml or a folder holding them (repeatable; also "
                     "$THEORY_CLAIMS_PATH, paths separated by os.pathsep)")
    g.addoption("--resume", default=None, metavar="DIR",
                help="continue the interrupted run in DIR: its complete tests are not run again and their records "
                     "are kept (the report goes to DIR unless --report names another folder)")
    g.addoption("--e2e", action="store_true", default=False,
                help="also run the end-to-end harness tests (marker e2e: pytest or the CLI in a subprocess; shards, "
                     "resume, sweeps, scaffold, browser); the default run leaves them out to stay quick")
    g.addoption("--device-split", action="store_true", default=False,
                help="find CUDA device bugs without CUDA (with --device cpu): tensors built without a device go to "
                     "'meta', so they fail where they meet the run's tensors, as on CUDA; verdicts are meaningless, "
                     "the summary lists the device splits (theory/harness/device_split.py)")
    g.addoption("--all-papers", action="store_true", default=False,
                help="the report lists every registry's claims, also papers none of whose checks ran (by default a "
                     "run of your own checks reports only the papers whose checks ran)")
    g.addoption("--theory-progress", action="store_true", default=False,
                help="print one line per finished check: claim IDs, verdicts recorded, outcome, seconds")


def _worker_index(config) -> int | None:
    wid = getattr(config, "workerinput", {}).get("workerid")
    return int(wid[2:]) if wid and wid.startswith("gw") else None


def _report_dir(config) -> pathlib.Path | None:
    r = config.getoption("--report")
    if config.getoption("--resume") and r == "reports":  # --report left at its default: continue in DIR
        r = config.getoption("--resume")
    if r in (None, "", "none") or config.getoption("collectonly"):  # --co runs nothing: keep the last report
        return None
    p = pathlib.Path(r)
    return p if p.is_absolute() else pathlib.Path(config.invocation_params.dir) / p


def pytest_configure(config):
    config.addinivalue_line("markers", "claim(id): claim ID of a registry (theory/papers/*/claims.toml, --claims)")
    config.addinivalue_line("markers", "e2e: end-to-end harness test (a subprocess run of pytest or the CLI); "
                                       "deselected unless --e2e")
    try:  # bad options and environment are one-line usage errors, never an INTERNALERROR traceback
        dev = _device.resolve(config.getoption("--device"), _worker_index(config))
        _claims.add_registries(config.getoption("--claims"))
        _claims.catalog()
    except ValueError as e:  # includes RegistryError
        raise pytest.UsageError(str(e)) from None
    _device.set_device(dev)
    if config.getoption("--device-split"):
        if dev.type != "cpu":
            raise pytest.UsageError("--device-split emulates a CUDA run on the CPU: use it with --device cpu")
        from . import device_split

        device_split.enable()
    winput = getattr(config, "workerinput", None)
    if dev.type == "cpu" and winput is not None:  # xdist: share the cores, do not oversubscribe
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(1, int(winput.get("workercount", 1)))))
    try:
        config._theory_ctx = RunContext(dev, config.getoption("--profile"), config.getoption("--seed"),
                                        scale=config.getoption("--scale"))
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    rep = _report_dir(config)
    if winput is not None:
        records = winput.get("theory_records")
        name = winput["workerid"]
    else:
        config._theory_start = time.time()
        records = str(rep / ".records" / uuid.uuid4().hex[:12]) if rep else None
        name = "main"
    config._theory_records = records
    config._theory_writer = RecordWriter(records, name) if records else None
    _resume.start(config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Tests whose modules share a run (``SHARED_RUNS``) go to one worker (:mod:`theory.harness.shared_runs`)."""
    return shared_runs.make_scheduler(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    node.workerinput["theory_records"] = node.config._theory_records
    _resume.configure_node(node)


def pytest_collection_modifyitems(session, config, items):
    problems = []
    for item in items:
        ids = [m.args[0] if m.args else None for m in item.iter_markers("claim")]
        parts = pathlib.Path(str(item.fspath)).parts
        harness_test = any(d in parts[-3:-1] for d in NO_CLAIM_DIRS)
        if not ids and not harness_test:
            problems.append(f"{item.nodeid}: a check needs @pytest.mark.claim('<paper>/<id>')")
        for cid in ids:
            try:
                _claims.get(cid)
            except ValueError as e:
                problems.append(f"{item.nodeid}: {e}")
        if not harness_test:
            problems += [f"{item.nodeid}: {p}" for p in map(_xfail_problem, item.iter_markers("xfail")) if p]
    if problems:
        _collection_error(session, config, items, "claim marker errors:\n  " + "\n  ".join(problems))
    if config._theory_ctx.smoke:  # only the modules with full-only branches (theory.harness.smoke)
        _keep_only(config, items, lambda i: _smoke.has_full_branch(i.fspath))
    if not config.getoption("--e2e"):  # the end-to-end harness tests (marker e2e) run with --e2e only
        _keep_only(config, items, lambda i: i.get_closest_marker("e2e") is None)


def _keep_only(config, items, keep) -> None:
    """Deselect the items for which ``keep(item)`` is false (reported as deselected)."""
    kept, drop = [], []
    for item in items:
        (kept if keep(item) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = kept


def _collection_error(session, config, items, msg: str) -> None:
    """Stop the run at collection with ``msg``. Without xdist: a usage error (exit code 4). In an xdist
    worker a raised error only reaches the controller as an INTERNALERROR without its text, so the worker
    reports a failed collection instead (the controller prints it; nothing runs; exit code ≠ 0)."""
    if getattr(config, "workerinput", None) is None:
        raise pytest.UsageError(msg)
    from _pytest.reports import CollectReport

    session.ihook.pytest_collectreport(report=CollectReport("checks", "failed", msg, []))
    items[:] = []


def _xfail_problem(mark) -> str | None:
    """An expected failure of a check must be strict and name ClaimViolation as what it expects:
    otherwise a crash or a failed control would pass as the paper being wrong."""
    raises = mark.kwargs.get("raises")
    kinds = raises if isinstance(raises, tuple) else (raises,)
    if not all(isinstance(k, type) and issubclass(k, ClaimViolation) for k in kinds):
        return "an expected failure needs xfail(raises=theory.ClaimViolation, strict=True, reason=...)"
    if mark.kwargs.get("strict") is not True or not mark.kwargs.get("reason"):
        return "an expected failure needs xfail(strict=True) and a reason"
    return None


@pytest.fixture(scope="session")
def ctx(request) -> RunContext:
    """The run context: device, profile, seed offset."""
    return request.config._theory_ctx


class Recorder:
    """Callable fixture: ``record(verdict=..., observed=..., bound=..., ...)`` writes a Measurement."""

    def __init__(self, request, ctx: RunContext):
        self._req, self._ctx, self._t0 = request, ctx, time.time()
        marks = [m.args[0] for m in request.node.iter_markers("claim")]
        self.claim = marks[0] if len(marks) == 1 else None
        self.records: list[Measurement] = []

    def generator(self, config=None, claim: str | None = None) -> torch.Generator:
        """A generator seeded from (this check's claim, ``config``, --seed)."""
        return self._ctx.generator(claim or self._need_claim(), config)

    def _need_claim(self) -> str:
        if self.claim is None:
            raise ValueError(f"{self._req.node.nodeid}: several claim markers; pass claim= explicitly")
        return self.claim

    def __call__(self, verdict: str, claim: str | None = None, **kw) -> Measurement:
        cid = claim or self._need_claim()
        m = Measurement(claim=cid, verdict=verdict, test=self._req.node.nodeid,
                        seconds=round(time.time() - self._t0, 3), profile=self._ctx.profile,
                        device=str(self._ctx.device), seed=self._ctx.seed, **kw)
        w = self._req.config._theory_writer
        if w is not None:
            w.write(m)
        self._req.node.user_properties.append(("theory_record", {"claim": cid, "verdict": verdict}))
        self.records.append(m)
        return m


@pytest.fixture
def record(request, ctx) -> Recorder:
    """Write Measurement records for the check's claim (see :class:`Recorder`)."""
    return Recorder(request, ctx)


def run_metadata(config) -> dict:
    ctx: RunContext = config._theory_ctx
    return {
        "profile": ctx.profile, "seed": ctx.seed, "device": str(ctx.device),
        "device_name": torch.cuda.get_device_name(ctx.device) if ctx.device.type == "cuda" else platform.processor() or platform.machine(),
        "torch": torch.__version__, "python": platform.python_version(), "machine": platform.node(),
        "platform": platform.platform(), "cpus": os.cpu_count(),
        "workers": getattr(config.option, "numprocesses", None),
        "args": list(config.invocation_params.args),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(time.time() - getattr(config, "_theory_start", time.time()), 1),
        "registries": list(_claims.sources()), "registry_digest": _claims.digest(),
        **_provenance(),  # commit, tree_clean, code_digest: merge and --resume refuse mixed code
        **({"smoke": _smoke.metadata(ctx)} if ctx.smoke else {}),
        **({"all_papers": True} if config.getoption("--all-papers") else {}),
    }


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if hasattr(config, "workerinput") or not config._theory_records:
        return
    rep = _report_dir(config)
    meta = run_metadata(config)
    meta["exitstatus"] = int(exitstatus)
    meta["tests"] = getattr(config, "_theory_tests", {})
    meta["collect_errors"] = getattr(config, "_theory_collect_errors", {})
    records = pathlib.Path(config._theory_records)
    records.mkdir(parents=True, exist_ok=True)
    doc = merge(records, rep / "results.json", meta)
    doc = _resume.finish(config, doc, rep / "results.json")  # --resume: add the tests kept from DIR
    from ..report import build

    try:
        build(doc, rep)
    finally:
        shutil.rmtree(records, ignore_errors=True)
        try:
            records.parent.rmdir()  # DIR/.records, unless a concurrent run still writes there
        except OSError:
            pass
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        from collections import Counter

        counts = Counter(r["verdict"] for r in doc["records"])
        tr.write_line(f"theory: {len(doc['records'])} records ({dict(sorted(counts.items()))}) -> {rep}")


# --- per-test outcomes (for the report's "what ran") and terminal progress --------------------------

def pytest_runtest_setup(item):
    """Carry the test's claim IDs on its reports (they reach the xdist controller with them)."""
    ids = [m.args[0] for m in item.iter_markers("claim") if m.args]
    if ids:
        item.user_properties.append(("theory_claims", ids))


def _outcome(report) -> str | None:
    if report.when == "call" and any(k == _smoke.PROPERTY for k, _ in getattr(report, "user_properties", ()) or ()):
        return _smoke.OUTCOME
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if xfail:
            return "xfailed" if report.skipped else "xpassed"
        return report.outcome
    if report.failed:
        return "error"
    if report.skipped and report.when == "setup":
        return "xfailed" if xfail else "skipped"
    return None


def pytest_runtest_logreport(report):
    """Controller side: outcome, duration and claims of every test; a progress line when asked."""
    config = _CONFIG.get("config")
    if config is None or hasattr(config, "workerinput"):
        return
    tests = config.__dict__.setdefault("_theory_tests", {})
    # "incomplete" until a call (or a skipping/failing setup) decides: a test cut off in its call (SIGINT at a deadline,
    # .ci/gpu-full) never sends a call report and must not read as passed
    t = tests.setdefault(report.nodeid, {"outcome": "incomplete", "seconds": 0.0, "claims": [], "records": {}})
    t["seconds"] = round(t["seconds"] + float(getattr(report, "duration", 0.0) or 0.0), 3)
    for key, val in getattr(report, "user_properties", []) or []:
        if key == "theory_claims":
            t["claims"] = list(val)
        elif key in (PEAK_GPU, START_GPU) and report.when == "call":
            t[key] = max(int(val), int(t.get(key, 0)))
        elif key == "theory_record" and report.when == "call":
            k = f"{val['claim']}:{val['verdict']}"
            t["records"][k] = t["records"].get(k, 0) + 1
    out = _outcome(report)
    if out is not None and not (t["outcome"] in ("failed", "error") and out != "failed"):
        t["outcome"] = out
        if out in ("failed", "error"):
            crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
            t["message"] = str(getattr(crash, "message", "") or "")[:300]
    if report.when == "teardown":  # every record of the test is on disk: --resume may skip it
        t["complete"] = True
        _resume.mark_done(config, report.nodeid, t)
    if report.when == "teardown" and config.getoption("--theory-progress"):
        tr = config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            finished = config.__dict__.setdefault("_theory_finished", set())
            finished.add(report.nodeid)
            done = len(finished)
            total = getattr(getattr(tr, "_session", None), "testscollected", 0) or "?"
            recs = ", ".join(f"{k.split(':', 1)[1]}×{n}" for k, n in sorted(t["records"].items())) or "no record"
            tr.write_line(f"theory [{done}/{total}] {' '.join(t['claims']) or report.nodeid}: {recs}; "
                          f"{t['outcome']} in {t['seconds']:.1f} s")


def pytest_collectreport(report):
    """Controller side: modules that failed to collect (their claims would otherwise look 'not encoded')."""
    config = _CONFIG.get("config")
    if config is None or hasattr(config, "workerinput") or not report.failed:
        return
    text = str(getattr(report, "longreprtext", "") or report.longrepr or "")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    config.__dict__.setdefault("_theory_collect_errors", {})[report.nodeid] = (lines[-1] if lines else "")[:300]


PEAK_GPU = "peak_gpu_bytes"
START_GPU = "gpu_bytes_at_start"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Worker side, on CUDA: the test's peak allocated GPU memory (torch's allocator, all devices of the
    process), reset before the call and carried to the controller as ``run.tests[id].peak_gpu_bytes``, with the
    bytes already allocated when the call began (``gpu_bytes_at_start``: tensors that earlier tests of the same
    worker keep alive, module caches for instance). The peak counts them, so the test's own share is the
    difference; a 0.05 s test with a 3 GiB peak in the H200 run of 2026-11-27 was such a case."""
    cuda = _device.get_device().type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats()
        item.user_properties.append((START_GPU, int(torch.cuda.memory_allocated())))
    yield
    if cuda:
        item.user_properties.append((PEAK_GPU, int(torch.cuda.max_memory_allocated())))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Smoke run: a verdict (failed assertion, ClaimViolation, expected failure, strict XPASS) is not judged."""
    outcome = yield
    if item.config._theory_ctx.smoke:
        _smoke.unjudge(item, call, outcome.get_result())


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """--device-split: the failed tests whose message is a device split (what a CUDA run would hit)."""
    if not config.getoption("--device-split") or hasattr(config, "workerinput"):
        return
    from .device_split import is_split_error

    tests = getattr(config, "_theory_tests", {})
    failed = {k: t.get("message", "") for k, t in tests.items() if t.get("outcome") in ("failed", "error")}
    split = sorted(k for k, m in failed.items() if is_split_error(m))
    terminalreporter.write_sep("=", f"device split: {len(split)} of {len(failed)} failed tests")
    for k in split:
        terminalreporter.write_line(f"{k}: {failed[k][:160]}")
    if len(failed) > len(split):
        terminalreporter.write_line(f"({len(failed) - len(split)} other failures: CPU-only helpers reading a meta "
                                    "tensor's data, or verdicts, which mean nothing in this mode)")


_CONFIG: dict = {}


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    _CONFIG["config"] = session.config
