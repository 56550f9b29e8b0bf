"""``plan``: what each test of a profile would cost, estimated from its configuration without training (issue 17).

    python -m theory plan [--profile full] [--device cpu|cuda] [--calls first|all] [-k EXPR] [--seconds S] [--json PATH]

Runs ``pytest checks --profile P`` in this process with the core trainers (:func:`theory.sim.train.gd`,
:func:`~theory.sim.train.minibatch` — hence ``sgd`` and ``adam`` — and :func:`~theory.sim.train.gd_hidden`)
replaced by a stand-in that reads the model, the data and the trainer's settings, records an :class:`Estimate`
and stops the test (:class:`PlanStop`). So each test runs only its data generation and model construction, up to
its first trainer call; a test still running after ``--seconds`` (default 20) is stopped and listed as
"no trainer within S s", a test that ends without a trainer call as "no trainer" with its measured wall time and
peak resident memory (:class:`RssPeak`; CPU memory only). Tests run on the CPU whatever
``--device`` says (it picks the memory limit that the "fits" column compares with: 24 GiB for cpu, 80 GiB for
cuda); MNIST tests skip without ``$THEORY_MNIST`` as in the run itself.

The estimate (:func:`estimate`) is the working set of one trainer call with every member at once — what autograd
holds, and the analytic engine on a GPU; on a CPU the analytic engine runs members in cache-sized blocks and needs
less, so there it is an upper bound. With ``--calls all`` the stand-in does not stop
the test: it returns the real trainer's zero-step result (the model untouched, the trajectory at step 0 only), so
the test goes on to its next trainer call — a loop over growing widths, or a run trained in chunks, shows every
call; the row then gives the largest call's peak and the summed GFLOP of all calls seen within ``--seconds``
(what the test does between calls runs for real, on untrained models: its assertions fail and are ignored). With
the default ``--calls first`` it sees the first trainer call of a test only, which underestimates such tests. A test
whose peak lies outside its trainer calls tells the plan its own shape estimate (:func:`declare`; E.6 of zhu2022 does,
for the Lanczos of its step sizes): the row then shows it, and with ``--calls first`` the test stops there. ``checks/core/test_plan.py`` compares the
estimate with the measured peak memory of a trainer call on the CPU.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass

import pytest

GiB = 1 << 30
LIMITS = {"cpu": 24 * GiB, "cuda": 80 * GiB}
OPT_STATE = {"sgd": 0, "adam": 3}  # per parameter: Adam's two moments and the temporary of its denominator
                                   # (√v̂ + ε, one parameter-sized tensor per step); torch SGD without momentum: none


class PlanStop(Exception):
    """Raised by the stand-in trainer once the estimate is recorded (private to the plan)."""


class PlanTimeout(Exception):
    """A test ran ``--seconds`` without reaching a trainer."""


@dataclass
class Estimate:
    trainer: str
    shapes: str                 # E, N, d and the layers (in→out) of the model
    bytes: int                  # estimated peak of the call
    gflop_per_step: float
    steps: int                  # steps (or epochs) of this call
    dominant: str               # the largest term, with its shape

    @property
    def gflop(self) -> float:
        return self.gflop_per_step * self.steps


def _layers(params) -> tuple[int, list[tuple[int, int]]]:
    """(E, [(in, out)]) of a batched bias-free model: every parameter (E, …, out, in); a readout (E, m) is (m, 1)."""
    E = int(params[0].shape[0])
    out = []
    for p in params:
        n_in = int(p.shape[-1])
        out.append((n_in, int(p.numel()) // (E * n_in)))
    return E, out


def shapes_text(E: int, N: int, dims) -> str:
    """The plan's shape column: ensemble E, N inputs and the layers in→out of widths ``dims`` = [d, …, out].

    >>> shapes_text(2, 40, [10, 16, 1])
    'E=2 N=40 d=10 layers 10→16 16→1'
    """
    dims = [int(v) for v in dims]
    return f"E={E} N={N} d={dims[0]} layers " + " ".join(f"{i}→{o}" for i, o in zip(dims, dims[1:]))


def estimate(trainer: str, model, X, y, *, steps: int, batch: int | None = None, optimizer: str = "sgd") -> Estimate:
    """Peak bytes and FLOPs of one trainer call, from shapes only.

    bytes = itemsize × (X + y + W + G + S + K·A): W the parameters, G their gradients (= W), S the optimizer
    state (Adam 3W: two moments and its denominator's temporary; SGD 0), A = E·B·Σ widths the layer outputs of one pass over B samples (B = N for full-batch
    GD, the batch for minibatch; a full-data evaluation in batch chunks adds E·N·out), K = 3 for the
    pre-activation, σ' (or the saved input) and σ(Z) of every layer. ``gd_hidden`` (exact first-layer GD in
    coefficient space) keeps the coefficients C and pre-activations Z, (E, m_total, N) each, and two transients:
    4·E·m_total·N. FLOPs per step: 6·E·B·Σ in·out (forward 2, backward 4), ``gd_hidden`` 2·E·m_total·N² (C·XXᵀ).
    """
    params = list(model.params)
    s = params[0].element_size()
    E, layers = _layers(params)
    N = int(X.shape[-2])
    W = sum(int(p.numel()) for p in params)
    data = int(X.numel()) + (int(y.numel()) if hasattr(y, "numel") else 0)
    macs = sum(i * o for i, o in layers)
    if trainer == "gd_hidden":
        H = W // (E * int(X.shape[-1]))  # hidden units per member (W: (E, …, m, d))
        terms = {f"weights W {tuple(params[0].shape)}": W, f"inputs X {tuple(X.shape)}": data,
                 f"coefficients C, pre-activations Z (E={E}, {H}, N={N}) x4": 4 * E * H * N}
        flop = 2.0 * E * H * N * N
    else:
        B = N if batch is None else min(batch, N)
        A = E * B * sum(o for _, o in layers)
        k_opt = OPT_STATE.get(optimizer, 0) if trainer == "minibatch" else 0
        terms = {f"weights + gradients (E={E}, {W // E} per member) x{2 + k_opt}": (2 + k_opt) * W,
                 f"inputs X {tuple(X.shape)}": data,
                 f"activations (E={E}, B={B}, widths {[o for _, o in layers]}) x3": 3 * A}
        if trainer == "minibatch":
            terms[f"full-data outputs (E={E}, N={N}, {layers[-1][1]})"] = E * N * layers[-1][1]
        flop = 6.0 * E * B * macs
    dom = max(terms, key=terms.get)
    shapes = f"E={E} N={N} d={int(X.shape[-1])} layers " + " ".join(f"{i}→{o}" for i, o in layers)
    return Estimate(trainer, shapes, s * sum(terms.values()), flop / 1e9, int(steps), dom)


_DECLARED: list = []  # (sink, all_calls) of the active stand-in (stand_in_trainers), for declare()


def declare(what: str, *, bytes: int, shapes: str, dominant: str, gflop_per_step: float = 0.0, steps: int = 0) -> None:
    """A test's own estimate of a peak that no trainer call shows: work before or between its trainer calls (E.6's
    step-size Lanczos, :func:`fixtures.zhu2022.declare_ntk_he_pairs`), from shapes, with a formula its module keeps
    beside the code and a test compares with a measured peak (checks/core/test_plan.py). Outside a plan it does
    nothing. In a plan it is recorded as an :class:`Estimate` (trainer ``declared: <what>``) and, with
    ``--calls first``, stops the test as a trainer call does; with ``--calls all`` the test goes on."""
    if not _DECLARED:
        return
    sink, all_calls = _DECLARED[-1]
    sink.append(Estimate(f"declared: {what}", shapes, int(bytes), float(gflop_per_step), int(steps), dominant))
    if not all_calls:
        raise PlanStop


@contextlib.contextmanager
def stand_in_trainers(sink: list, all_calls: bool = False):
    """Replace the core trainers by the estimating stand-in; restore them on exit. The stand-in records an
    :class:`Estimate` and stops the test (:class:`PlanStop`), or with ``all_calls`` returns the real trainer's
    zero-step result so that the test reaches its next trainer call."""
    from ..sim import train

    saved = {k: getattr(train, k) for k in ("gd", "minibatch", "gd_hidden")}

    def zero_steps(name, model, X, y, kw, **length):
        if not all_calls:
            raise PlanStop
        kw = {k: v for k, v in kw.items() if k != "record"}
        return saved[name](model, X, y, record=[0], **length, **kw)

    def gd(model, X, y, *, steps, **kw):
        sink.append(estimate("gd", model, X, y, steps=steps))
        return zero_steps("gd", model, X, y, kw, steps=0)

    def minibatch(model, X, y, *, optimizer, epochs, batch, **kw):
        sink.append(estimate("minibatch", model, X, y, steps=epochs, batch=batch, optimizer=optimizer))
        return zero_steps("minibatch", model, X, y, dict(kw, optimizer=optimizer, batch=batch), epochs=0)

    def gd_hidden(model, X, y, *, steps, **kw):
        sink.append(estimate("gd_hidden", model, X, y, steps=steps))
        return zero_steps("gd_hidden", model, X, y, kw, steps=0)

    for k, f in (("gd", gd), ("minibatch", minibatch), ("gd_hidden", gd_hidden)):
        setattr(train, k, f)
    _DECLARED.append((sink, all_calls))
    try:
        yield
    finally:
        _DECLARED.pop()
        for k, f in saved.items():
            setattr(train, k, f)


class RssPeak:
    """Peak resident memory of this process while a test runs, sampled from /proc/self/statm every ``every`` s (Linux;
    elsewhere ``peak`` stays None). A test that reaches no trainer has no estimate: the plan reports what it measured
    instead, minus the resident memory at its start (CPU allocations only: a CUDA workspace is not seen)."""

    def __init__(self, every: float = 0.005):
        self.every, self.base, self.peak, self._stop, self._t = every, None, None, threading.Event(), None

    @staticmethod
    def resident() -> int | None:
        try:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError, AttributeError):
            return None

    def _loop(self):
        while not self._stop.wait(self.every):
            r = self.resident()
            if r is not None:
                self.peak = max(self.peak or 0, r)

    def start(self):
        self.base = self.peak = self.resident()
        self._stop.clear()
        if self.base is not None:
            self._t = threading.Thread(target=self._loop, daemon=True)
            self._t.start()
        self.t0 = time.perf_counter()

    def stop(self) -> tuple[float, int | None]:
        """(wall seconds, peak resident bytes above the start or None)."""
        wall = time.perf_counter() - self.t0
        self._stop.set()
        if self._t is not None:
            self._t.join()
            self._t = None
        end = self.resident()
        if self.peak is None or self.base is None:
            return wall, None
        return wall, max(self.peak, end or 0) - self.base


class PlanPlugin:
    """pytest plugin of the plan: one row per test."""

    def __init__(self, seconds: float, all_calls: bool = False):
        self.seconds, self.all_calls, self.rows, self._sink = seconds, all_calls, [], []
        self._rss = RssPeak()

    @staticmethod
    def _alarm(*_):
        raise PlanTimeout

    def pytest_configure(self, config):  # before the test modules are imported: `from ..train import gd` sees it
        self._cm = stand_in_trainers(self._sink, self.all_calls)
        self._cm.__enter__()

    def pytest_unconfigure(self, config):
        self._cm.__exit__(None, None, None)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        # from the start of setup: a fixture that trains (a module-scoped run shared by several tests) reaches the
        # stand-in there, and its estimate, memory and time belong to the test that set it up
        self._sink.clear()
        self._rss.start()
        if hasattr(signal, "SIGALRM"):
            signal.signal(signal.SIGALRM, self._alarm)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def pytest_runtest_makereport(self, item, call):
        if call.when == "teardown" or (call.when == "setup" and call.excinfo is None):
            return
        if hasattr(signal, "SIGALRM"):
            signal.setitimer(signal.ITIMER_REAL, 0)
        wall, rss = self._rss.stop()
        ran = (f"ran on the CPU for {wall:.1f} s, peak resident memory "
               f"{'+' + fmt_bytes(rss) if rss is not None else 'not measured'} (measured, not estimated)")
        exc = call.excinfo
        where = " in a fixture" if call.when == "setup" else ""
        if self._sink and self.all_calls:
            status = f"planned{where} ({len(self._sink)} call{'s' if len(self._sink) > 1 else ''}" + (
                f"; stopped after {self.seconds:g} s)" if exc is not None and exc.errisinstance(PlanTimeout) else ")")
        elif self._sink:
            status = f"planned{where}"
        elif exc is not None and exc.errisinstance(PlanTimeout):
            status = f"no trainer within {self.seconds:g} s"
        elif exc is not None and exc.typename == "Skipped":
            status = "skipped: " + str(exc.value)[:80]
        elif exc is not None and self.all_calls:
            status = (f"no trainer call of its own (its run may come from a cache an earlier test filled with a "
                      f"zero-step result); stopped by {exc.typename}: {str(exc.value)[:60]}")
        elif exc is not None and exc.typename == "ClaimViolation":
            status = f"no trainer; ended with its ClaimViolation (an expected failure's finding); {ran}"
        elif exc is not None:
            status = f"error before a trainer{where}: {exc.typename}: {str(exc.value)[:80]}; {ran}"
        else:
            status = f"no trainer; {ran}"
        peak = max(self._sink, key=lambda e: e.bytes) if self._sink else None
        self.rows.append({"test": item.nodeid, "status": status, "estimate": asdict(peak) if peak else None,
                          "calls": len(self._sink), "gflop_total": sum(e.gflop for e in self._sink),
                          "seconds": round(wall, 3), "rss_peak_bytes": rss})


def fmt_bytes(b: float) -> str:
    for unit, k in (("GiB", GiB), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k:
            return f"{b / k:.1f} {unit}"
    return f"{int(b)} B"


def time_class(gflop: float) -> str:
    """Order of magnitude of a call's FLOPs."""
    if gflop < 1:
        return "<1 GFLOP"
    e = int(math.floor(math.log10(gflop)))
    return f"1e{e}-1e{e + 1} GFLOP"


def _measured(row: dict, all_calls: bool) -> int | None:
    """With ``--calls all`` each trainer call runs for real with zero steps, so a trainer's ``observe`` callback (ϱ of
    every member at every recorded step, for instance) runs once per call at its real width: the test's measured peak
    resident memory covers it, which the shape estimate of the trainer's own tensors does not."""
    return row.get("rss_peak_bytes") if all_calls and row.get("calls") else None


def table(rows: list, device: str, all_calls: bool = False) -> str:
    lim = LIMITS[device]
    head = f"{'test':<92} {'est. peak':>10} {'GFLOP/step':>10} {'steps':>7} {'fits ' + device:>9}  dominating tensor / status"
    out = [head, "-" * len(head)]
    for r in rows:
        e = r["estimate"]
        if e is None:
            out.append(f"{r['test'][:92]:<92} {'':>10} {'':>10} {'':>7} {'':>9}  {r['status']}")
            continue
        seen = _measured(r, all_calls)
        fits = "yes" if max(e["bytes"], seen or 0) <= lim else "NO"
        calls = f", {r['calls']} calls" if r.get("calls", 1) > 1 else ""
        out.append(f"{r['test'][:92]:<92} {fmt_bytes(e['bytes']):>10} {e['gflop_per_step']:>10.3g} {e['steps']:>7} "
                   f"{fits:>9}  {e['dominant']}; {time_class(r.get('gflop_total', e['gflop_per_step'] * e['steps']))} "
                   f"({e['trainer']}{calls})" + (f"; measured +{fmt_bytes(seen)} resident (zero-step calls and their "
                                                 f"observe callbacks, run for real)" if seen is not None else ""))
    big = [r for r in rows if r["estimate"] and max(r["estimate"]["bytes"], _measured(r, all_calls) or 0) > lim]
    out.append(f"{sum(1 for r in rows if r['estimate'])} tests planned, {len(big)} over {fmt_bytes(lim)} "
               f"({device}); " + ("every trainer call seen within the time limit: the largest call's peak, the summed FLOPs"
                            if any(r.get("calls", 0) > 1 for r in rows) or all_calls else
                            "the estimate covers each test's first trainer call (--calls all: every call)"))
    return "\n".join(out)


def register(sub) -> None:
    p = sub.add_parser("plan", help="estimate each test's peak memory and FLOPs from its configuration, "
                                    "without training", description=__doc__.split("\n\n")[2])
    p.add_argument("--profile", default="full", choices=("quick", "full", "smoke"))
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="which memory limit to compare with (24 GiB cpu, 80 GiB cuda); tests run on the CPU")
    p.add_argument("-k", default=None, help="pytest -k expression")
    p.add_argument("--seconds", type=float, default=20.0, help="stop a test that reaches no trainer after S s")
    p.add_argument("--calls", default="first", choices=("first", "all"),
                   help="stop each test at its first trainer call (default), or let it go on with zero-step trainers "
                        "to see every call within --seconds")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the rows as JSON")
    p.set_defaults(func=run)


def run(ns, extra) -> int:
    from .run_report import _checks_dir

    plug = PlanPlugin(ns.seconds, all_calls=ns.calls == "all")
    args = [_checks_dir(), "--profile", ns.profile, "--device", "cpu", "--report", "none", "-p", "no:xdist",
            "-p", "no:terminal"] + (["-k", ns.k] if ns.k else [])
    pytest.main(args, plugins=[plug])
    print(table(plug.rows, ns.device, all_calls=ns.calls == "all"))
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump({"profile": ns.profile, "device": ns.device, "calls": ns.calls, "limit_bytes": LIMITS[ns.device],
                       "rows": plug.rows}, f, indent=1)
    sys.stdout.flush()
    return 0
