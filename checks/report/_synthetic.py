"""Synthetic results documents for the report tests: real registry IDs, every verdict, series, tables.

The document carries its own registry snapshot: the packaged one with ``parts``, ``identity`` and reviews
cleared, so the tests of the page do not move when a registry entry gains parts; :func:`registry` lets a
test set them on purpose.
"""
from __future__ import annotations

import copy
import math

from theory.records import Measurement, _jsonable
from theory.analysis import registry as registry_info


def registry(**entries) -> dict:
    """The packaged registry snapshot, neutralised, with ``entries`` ({claim ID: {field: value}}) applied."""
    reg = copy.deepcopy(registry_info.snapshot())
    for c in reg["claims"].values():
        c.update(parts=[], identity=False, review={})
    for cid, fields in entries.items():
        reg["claims"][cid].update(fields)
    return reg

RUN = {"profile": "quick", "seed": 0, "device": "cpu", "device_name": "x86_64", "torch": "2.x", "python": "3.11",
       "machine": "testbox", "platform": "Linux", "cpus": 2, "workers": 2, "args": ["checks", "-n", "2"],
       "date": "2026-01-01T00:00:00+00:00", "seconds": 12.5, "exitstatus": 1}


def _rec(claim, verdict, **kw) -> dict:
    kw.setdefault("test", f"checks/{claim.split('/')[0]}/test_synth.py::test_{claim.split('/')[1]}")
    kw.setdefault("seconds", 0.25)
    if kw.get("role", "check") == "check":  # stated on every check record (issue 32)
        kw.setdefault("evidence", "test" if kw.get("observed") is not None and kw.get("bound") is not None
                      else "consistency")
        kw.setdefault("inside", True)
        kw.setdefault("inside_reason", "synthetic run: every hypothesis taken as checked")
    return Measurement(claim=claim, verdict=verdict, profile="quick", device="cpu", seed=0, **kw).to_json()


def records() -> list[dict]:
    t = [2.0 ** k for k in range(1, 15)]
    out = [
        _rec("kou2023/lem-5.3", "holds", observed=-1.1e-16, bound=0.0, tightness="min slack of the corrected bounds",
             config={"sequences": 60, "T": 100000},
             series={"upper gap": {"x": t, "y": [math.log(1 + v) / 10 for v in t], "xlabel": "t",
                                   "ylabel": "gap", "logx": True, "plot": "gaps"},
                     "lower gap": {"x": t, "y": [math.log(1 + v) / 20 for v in t], "xlabel": "t",
                                   "ylabel": "gap", "logx": True, "plot": "gaps"}}),
        _rec("kou2023/lem-5.3", "expected-failure", observed=35, bound=0, ratio=None, finding_type="typo",
             finding="The printed upper bound uses exp(-x0) instead of exp(x0); it fails for 35 of 60 "
                     "sequences with x0>0.", config={"sequences": 60}),
        _rec("kou2023/lem-C.3", "holds", observed=-1.98, bound=-1.0, tightness="fitted exponent vs stated",
             hypotheses={"p": 0.005, "effective C_orth": 0.37, "gamma": 0.1},
             series={"stable rank - 1": {"x": t, "y": [1 / math.log(v + 1) ** 2 for v in t], "xlabel": "t",
                                         "ylabel": "srank-1", "logx": True, "logy": True},
                     "with nan": {"x": [1, 2, 3, 4], "y": [1.0, "nan", 3.0, "inf"], "xlabel": "k"}}),
        _rec("kou2023/lem-5.2", "holds", observed=3e-15, bound=1e-12,
             table=[{"n": 10, "err": 3e-15, "ci": [0.1, 0.2], "ok": True}, {"n": 20, "err": "nan", "note": "x<y&z"}]),
        _rec("wang2024/thm-4.5", "holds", observed=1e-13, bound=1e-12),
        _rec("wang2024/thm-4.5", "violated", observed=2.0, bound=1.0, tightness="observed / bound",
             config={"model": "mlp"}),
        _rec("bantzis2025/prop-3.2", "vacuous", observed=0.99, bound=1.0, finding_type="vacuous",
             finding="The bound holds but equals the trivial one on the plateau data set."),
        _rec("zhu2022/rem-D.2", "not-applicable", note="A remark with no checkable content."),
        # companions: wrong versions run through the check (rejected: "holds"; not rejected: "violated")
        _rec("kou2023/lem-C.3", "holds", role="companion", observed=-1.0, bound=-1.98,
             note="exponent -1 (the paper's rate) is outside the fitted CI"),
        _rec("zhu2022/lem-3", "violated", role="companion", observed=1e-13, bound=1e-10,
             note="learning rate eta/c passes too"),
        # a holds record written before an assertion that then failed
        _rec("zhu2022/lem-5", "holds", observed=0.5, bound=1.0,
             test="checks/zhu2022/test_synth.py::test_failed_after_record"),
    ]
    for c in (0.5, 1.0, 2.0, 4.0):  # a one-parameter sweep: observed vs bound plot
        out.append(_rec("zhu2022/lem-3", "holds", observed=c * 1e-13, bound=1e-10, config={"c": c, "steps": 200},
                        tightness="max rel err / tolerance"))
    return out


def doc(extra_records=(), registry_entries=None, **run) -> dict:
    tests = {"checks/bantzis2025/test_synth.py::test_crash": {"outcome": "failed", "seconds": 0.1,
                                                             "claims": ["bantzis2025/ex-1"], "records": {},
                                                             "message": "RuntimeError: boom"},
             "checks/zhu2022/test_synth.py::test_failed_after_record": {
                 "outcome": "failed", "seconds": 0.1, "claims": ["zhu2022/lem-5"],
                 "records": {"zhu2022/lem-5:holds": 1}, "message": "AssertionError: assert 0.5 < 0.4"}}
    return {"schema": 3, "generated": "2026-01-01T00:00:12+00:00",
            "run": _jsonable(dict(RUN, tests=tests, **run)),
            "registry": registry(**(registry_entries or {})),
            "records": records() + list(extra_records)}
