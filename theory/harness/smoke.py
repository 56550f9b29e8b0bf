"""The smoke run (``--profile smoke``): the full profile's configuration at reduced size, to test that its code runs.

One rule derives it from ``full`` (:mod:`.context`): ``ctx.full`` is True, ``ctx.pick`` gives the quick value and
``ctx.size(n, floor)`` shrinks the sizes that exist only in full-only branches by ``--scale``. Here:

- :func:`has_full_branch` — which tests run (the plugin deselects the rest): those of the modules that read ``ctx.full``, ``ctx.smoke``, ``ctx.size`` or
  ``ctx.sizes`` (the modules with full-only branches); the others run the same code at the same sizes in the quick
  profile and are deselected.
- :func:`unjudge` — a verdict at reduced size is not a finding: a failed assertion, a ``ClaimViolation``, an
  expected failure or a strict XPASS of a check becomes the outcome ``not-judged (smoke)`` (shown as a skip);
  any other exception (a shape error, a TypeError, a divergence, a fixture error) still fails the run.
- :func:`metadata` — what the report and ``results.json`` say about the run (``run.smoke``).
"""
from __future__ import annotations

import os
import pathlib
import re

from ..errors import ClaimViolation

PROPERTY = "theory_smoke_unjudged"
OUTCOME = "not-judged (smoke)"
REASON = "smoke run: verdict not judged at reduced size"
NOTE = ("Smoke run: the full profile's configuration with every size of a full-only branch shrunk by the scale "
        "(ctx.size) and the quick grids elsewhere. It tests that the full profile's code runs; its verdicts are NOT "
        "compared with the papers (a failed assertion, a claim violation or an expected failure is recorded as "
        f"'{OUTCOME}'; any other exception fails the run).")
_FULL_BRANCH = re.compile(r"\bctx\.(full|smoke|size|sizes)\b")
_SOURCE: dict = {}


def has_full_branch(path) -> bool:
    """Whether the test module at ``path`` has a full-only branch (reads ctx.full / ctx.smoke / ctx.size)."""
    key = str(path)
    if key not in _SOURCE:
        try:
            _SOURCE[key] = bool(_FULL_BRANCH.search(pathlib.Path(key).read_text(encoding="utf-8")))
        except OSError:
            _SOURCE[key] = False
    return _SOURCE[key]


def unjudge(item, call, rep) -> None:
    """Turn a verdict of a check (call phase only) into the not-judged outcome."""
    if rep.when != "call":
        return
    if rep.failed and call.excinfo is None:
        what = "XPASS(strict): the expected failure did not occur"
    elif rep.failed and call.excinfo.errisinstance((AssertionError, ClaimViolation)):
        what = f"{call.excinfo.typename}: {str(call.excinfo.value).splitlines()[0][:160] if str(call.excinfo.value) else ''}"
    elif rep.skipped and hasattr(rep, "wasxfail"):
        what = "expected failure (ClaimViolation)"
    else:
        return
    if hasattr(rep, "wasxfail"):
        del rep.wasxfail
    rep.outcome = "skipped"
    rep.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {REASON} ({what})")
    rep.user_properties.append((PROPERTY, what))


def metadata(ctx) -> dict:
    return {"scale": ctx.scale, "note": NOTE,
            "selection": "tests of the modules with full-only branches (reading ctx.full, ctx.smoke or ctx.size)",
            "mnist": os.environ.get("THEORY_MNIST_SMOKE_INFO", "")}
