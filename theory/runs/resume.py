"""``--resume DIR``: continue an interrupted run where it stopped.

While a run goes, the controller appends one line per finished test (after its teardown, so every record
the test wrote is already on disk) to ``DIR/.records/<run>/tests.done``, beside the run's metadata
(``run.json``) and the per-process record files. A run that ends normally, or by Ctrl-C, writes
``results.json`` whose ``run.tests`` entries say ``"complete": true``; a run that was killed (a Slurm time
limit, a lost node) leaves only ``.records/<run>/``. ``--resume DIR`` reads both:

- a test is complete when ``results.json`` says so (or the run finished with exit status 0 or 1 and has no
  completion flags, an older document) or a ``tests.done`` line names it; the first source that has it wins;
- complete tests are deselected (after pytest-split chose the shard's tests, so a resumed shard keeps
  its share) and their records are kept; records of any other test are dropped, so a test that was running
  when the run was cut off runs again from the start;
- the earlier run must have this run's profile, seed, code and registries (else a usage error);
- a DIR with nothing in it (or none at all) resumes nothing: the whole run goes, so a job script that may be
  requeued can always pass ``--resume``;
- at the end the kept records and tests join this run's, ``results.json`` and the page are rewritten, and
  the leftover ``.records/<run>/`` folders that were read are removed.
"""
from __future__ import annotations

import json
import os
import pathlib
from dataclasses import dataclass, field

import pytest

from ..records import read_records
from . import compat
from .load import RunsError, load as load_doc

DONE = "tests.done"
RUN = "run.json"


def _append(path: pathlib.Path, obj: dict) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(obj, sort_keys=True, default=str) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def mark_done(config, nodeid: str, test: dict) -> None:
    """Controller side, after a test's teardown: note it complete (``run.json`` is written first, once)."""
    records = getattr(config, "_theory_records", None)
    if not records:
        return
    d = pathlib.Path(records)
    d.mkdir(parents=True, exist_ok=True)
    if not (d / RUN).exists():
        from ..harness.plugin import run_metadata

        (d / RUN).write_text(json.dumps(run_metadata(config), sort_keys=True, default=str), encoding="utf-8")
    _append(d / DONE, dict(test, nodeid=nodeid, complete=True))


@dataclass
class State:
    """What an earlier run in ``dir`` completed."""

    dir: str
    tests: dict = field(default_factory=dict)      # node id -> its run.tests entry
    records: list = field(default_factory=list)    # the records of those tests
    runs: list = field(default_factory=list)       # run metadata of every source (for the compatibility check)
    consumed: list = field(default_factory=list)   # leftover .records/<run> folders read


def _read_lines(p: pathlib.Path) -> list[dict]:
    out = []
    if p.exists():
        for line in p.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:  # a torn last line: that test is not complete
                continue
    return out


def load(directory, exclude=None) -> State:
    """The complete tests of the earlier run(s) in ``directory`` (``exclude``: this run's own records folder)."""
    d = pathlib.Path(directory)
    st = State(str(d))

    def take(tests: dict, records: list[dict]):
        new = {k: t for k, t in tests.items() if k not in st.tests}
        st.tests.update(new)
        st.records += [r for r in records if r.get("test") in new]

    if (d / "results.json").exists():
        doc = load_doc(d)
        run = doc.get("run") or {}
        legacy = run.get("exitstatus") in (0, 1)
        tests = {k: t for k, t in (run.get("tests") or {}).items()
                 if t.get("complete") or (legacy and "complete" not in t and t.get("outcome") != "deselected")}
        take(tests, doc["records"])
        st.runs.append({"run": run, "registry": doc.get("registry"), "_source": str(d / "results.json")})
    leftovers = d / ".records"
    if leftovers.is_dir():
        skip = pathlib.Path(exclude).resolve() if exclude else None
        for sub in sorted((p for p in leftovers.iterdir() if p.is_dir()), key=lambda p: (p.stat().st_mtime, p.name)):
            if skip is not None and sub.resolve() == skip:
                continue
            done = {t["nodeid"]: {k: v for k, v in t.items() if k != "nodeid"}
                    for t in _read_lines(sub / DONE) if t.get("nodeid")}
            take(done, read_records(sub))
            if (sub / RUN).exists():
                st.runs.append({"run": json.loads((sub / RUN).read_text(encoding="utf-8")), "_source": str(sub)})
            st.consumed.append(str(sub))
    return st


def check(st: State, run: dict) -> None:
    """Refuse to resume a run of another profile, seed, code version or registry."""
    docs = st.runs + [{"run": run, "_source": "this run"}]
    compat.check(docs, "resume")
    seeds = {(x["run"] or {}).get("seed") for x in docs} - {None}
    if len(seeds) > 1:
        raise RunsError(f"cannot resume: the run in {st.dir} used --seed {sorted(seeds)[0]}, this one a different seed "
                        f"({sorted(seeds)}); resume with the same --seed")


class Deselect:
    """Deselects the complete tests after every other collection hook (pytest-split's shard choice included)."""

    def __init__(self, done):
        self.done = set(done)

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, session, config, items):
        res = yield
        gone = [i for i in items if i.nodeid in self.done]
        if gone:
            items[:] = [i for i in items if i.nodeid not in self.done]
            config.hook.pytest_deselected(items=gone)
        return res


def start(config) -> None:
    """``pytest_configure``: load DIR (controller), hand the complete tests to xdist workers, deselect them."""
    winput = getattr(config, "workerinput", None)
    if winput is not None:
        done = winput.get("theory_resume_done") or []
    else:
        directory = config.getoption("--resume")
        if not directory:
            return
        try:  # an empty or missing DIR resumes nothing: the whole run (so a job script may always pass it)
            st = load(directory, exclude=config._theory_records)
            from ..harness.plugin import run_metadata

            check(st, run_metadata(config))
        except RunsError as e:
            raise pytest.UsageError(str(e)) from None
        config._theory_resume = st
        done = sorted(st.tests)
    if done:
        config.pluginmanager.register(Deselect(done), "theory-resume-deselect")


def configure_node(node) -> None:
    """xdist: the workers deselect the same tests."""
    st = getattr(node.config, "_theory_resume", None)
    node.workerinput["theory_resume_done"] = sorted(st.tests) if st else []


def finish(config, doc: dict, out_path) -> dict:
    """``pytest_sessionfinish``: add the kept tests and records to this run's document and rewrite it."""
    st = getattr(config, "_theory_resume", None)
    if st is None:
        return doc
    import shutil

    from ..records import write_results
    from ..analysis import complete
    from .merge import record_key

    run = doc["run"]
    run["tests"] = {**st.tests, **(run.get("tests") or {})}
    run["resumed"] = {"from": st.dir, "tests kept": len(st.tests), "records kept": len(st.records)}
    doc["records"] = sorted(st.records + doc["records"], key=record_key)
    doc = complete(doc)
    write_results(doc, out_path)
    for sub in st.consumed:
        shutil.rmtree(sub, ignore_errors=True)
    return doc
