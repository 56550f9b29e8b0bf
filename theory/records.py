"""Measurement records: what each check measured, written as JSON lines.

Every check writes one or more :class:`Measurement` with its claim ID,
configuration, observed value, bound, ratio, verdict and plot series. Each
process appends to its own ``*.jsonl`` file (one ``write`` + ``fsync`` per
record, so an interrupted run leaves every finished record readable); the
session merges them into ``results.json`` (written atomically).
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
import pathlib
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Any

from .claims import FINDING_TYPES, READINGS, get  # one list each, shared with the registries

VERDICTS = ("holds", "violated", "vacuous", "expected-failure", "inconclusive", "not-applicable")
# READINGS (how a record reads the paper): only "as-stated" records (the statement as printed, under the paper's
# hypotheses) give a claim its verdict; the others (a strict reading of "≲", a sentence of the abstract, a proof
# step, a reconstruction, runs outside the hypotheses) are shown beside it, never counted against the paper.
# FINDING_TYPES: every record whose verdict is one of these carries one; "loose" may also qualify a "holds".
NEEDS_FINDING_TYPE = ("expected-failure", "vacuous", "inconclusive")
# Every check record states its evidence, never by default (issue 32). "test": some data would make the record
# fail: a finite observed/bound (or ratio) that the paper's statement compares, or a wrong version of the same
# statement rejected on the same data (named in ``rejects``). "consistency": it holds for any numbers (an algebraic
# identity, Cauchy–Schwarz, a triangle inequality, a certificate true for any matrix, a construction true by
# design): a check of the code, never on its own evidence that the paper is right.
EVIDENCE = ("test", "consistency")
# Whether the run behind a record is inside the paper's hypotheses (every event the proof invokes checked and
# holding): True, False or "unknown", always with ``inside_reason``. Only inside records of the statement as
# printed give a claim its verdict (theory.analysis).
INSIDE = (True, False, "unknown")
# The comparable tightness figure a check declares for its record (theory.analysis.tightness): "slack" (an
# inequality, bound ÷ observed), "err/tol" (an identity), "exponent" (a rate or limit: fitted − claimed),
# "discrepancy" (an expected failure: the factor off). Left empty, the report infers it from the record.
FIGURE_KINDS = ("slack", "err/tol", "exponent", "discrepancy")
# "check": a measurement of the claim. "companion": a wrong version of the claim (tightened constant,
# flipped sign, perturbed identity) run through the same check; its verdict is "holds" when the check
# rejected the wrong version and "violated" when it did not (the check is then too weak to fail).
ROLES = ("check", "companion")
SCHEMA_VERSION = 3  # 2: registry snapshot and per-claim section; 3: evidence stated, inside/inside_reason, worst_case


def _jsonable(x: Any) -> Any:
    """Convert tensors / numpy scalars / tuples to plain JSON (NaN/inf as strings)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().tolist()
    elif hasattr(x, "tolist") and not isinstance(x, (list, tuple, dict, str)):
        x = x.tolist()
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    return repr(x)


@dataclass
class Measurement:
    """One measured figure of one claim.

    ``ratio`` defaults to observed/bound when both are finite numbers and bound≠0.
    ``series`` holds plot data: ``{"name": {"x": [...], "y": [...], "xlabel": .., "ylabel": ..,
    "logx": bool, "logy": bool}}``. ``finding`` is the one- or two-sentence
    statement of what is wrong with the paper when the verdict is ``expected-failure``
    or ``vacuous``. ``false_alarm`` is the declared probability that a statistical check fails although the
    claim holds (its test's level α, or the union bound of its tests); a sweep sums these into the number of
    failures expected by chance (:func:`theory.runs.sweep.false_alarms`). ``role="companion"`` marks the record of a wrong-version test (see
    :data:`ROLES`): the report lists it apart and never takes the claim's verdict or
    headline figure from it.

    Stated on every check record, never defaulted (issue 32; the verdict is derived from them in
    :mod:`theory.analysis`):

    - ``evidence``: ``"test"`` (some data would make it fail: a finite observed/bound or ratio, or ``rejects``
      naming the wrong version of the statement it rejects on the same data) or ``"consistency"`` (true for any
      numbers). A test record with neither is a ``ValueError``.
    - ``inside`` (True, False or ``"unknown"``) and ``inside_reason``: whether every event the proof invokes was
      checked and held on this run, and which with their values. Only inside records of the statement as
      printed set the claim's verdict; the others are shown beside it. ``reading="outside-hypotheses"``
      implies ``inside=False``.
    - ``worst_case``: the record's observed/bound is the largest over random points, optima and an
      adversarial search including the proof's equality cases (what a registry ``forall`` claim needs).

    Every other keyword is listed in the README's "Adding a claim" table. In a check, the ``record`` fixture
    fills ``claim``, ``test``, ``seconds``, ``profile``, ``device`` and ``seed``.

    >>> m = Measurement(claim="kou2023/lem-5.2", verdict="holds", observed=0.5, bound=2.0, evidence="test",
    ...                 inside=True, inside_reason="C_sigma >= 10 and the width condition of Lemma A.2 hold")
    >>> m.ratio, m.falsifiable
    (0.25, True)
    >>> Measurement(claim="kou2023/lem-5.2", verdict="holds")
    Traceback (most recent call last):
    ...
    ValueError: kou2023/lem-5.2: evidence= is required on a check record, ...
    """

    claim: str
    verdict: str
    observed: Any = None
    bound: Any = None
    ratio: Any = None
    tightness: str = ""
    units: str = ""
    config: dict = field(default_factory=dict)
    hypotheses: dict = field(default_factory=dict)
    series: dict = field(default_factory=dict)
    table: list = field(default_factory=list)
    finding: str = ""
    note: str = ""
    test: str = ""
    seconds: float | None = None
    profile: str = ""
    device: str = ""
    seed: int | None = None
    role: str = "check"
    reading: str = "as-stated"
    finding_type: str = ""
    evidence: str = ""
    inside: Any = None
    inside_reason: str = ""
    rejects: str = ""
    worst_case: bool = False
    covers: list = field(default_factory=list)
    figure_kind: str = ""
    false_alarm: float | None = None

    def __post_init__(self):
        entry = get(self.claim)  # unknown claim ID -> UnknownClaimError
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")
        if self.role not in ROLES:
            raise ValueError(f"role {self.role!r} is not one of {ROLES}")
        if self.role == "companion" and self.verdict not in ("holds", "violated"):
            raise ValueError(f"{self.claim}: a companion record is 'holds' (wrong version rejected) or "
                             f"'violated' (not rejected), got {self.verdict!r}")
        if self.verdict == "expected-failure" and not self.finding:
            raise ValueError(f"{self.claim}: an expected-failure record must state its finding")
        if self.reading not in READINGS:
            raise ValueError(f"{self.claim}: reading {self.reading!r} is not one of {READINGS}")
        self._check_evidence_and_inside()
        if self.finding_type and self.finding_type not in FINDING_TYPES:
            raise ValueError(f"{self.claim}: finding_type {self.finding_type!r} is not one of {FINDING_TYPES}")
        if self.role == "check" and self.verdict in NEEDS_FINDING_TYPE and not self.finding_type:
            raise ValueError(f"{self.claim}: a {self.verdict!r} record needs finding_type= (one of {FINDING_TYPES})")
        if self.figure_kind and self.figure_kind not in FIGURE_KINDS:
            raise ValueError(f"{self.claim}: figure_kind {self.figure_kind!r} is not one of {FIGURE_KINDS}")
        if self.false_alarm is not None:
            if not _is_num(self.false_alarm) or not 0 < float(self.false_alarm) < 1:
                raise ValueError(f"{self.claim}: false_alarm must be a probability in (0, 1) (the declared rate at "
                                 f"which this check fails when the claim holds), got {self.false_alarm!r}")
            self.false_alarm = float(self.false_alarm)
        if not isinstance(self.covers, (list, tuple)) or not all(isinstance(c, str) for c in self.covers):
            raise ValueError(f"{self.claim}: covers must be a list of part names of the registry entry")
        unknown = [c for c in self.covers if c not in entry.parts]
        if unknown:
            raise ValueError(f"{self.claim}: covers names {unknown}, not parts of its registry entry {list(entry.parts)}")
        self.covers = list(self.covers)
        if self.ratio is None and _is_num(self.observed) and _is_num(self.bound) and float(self.bound) != 0:
            self.ratio = float(self.observed) / float(self.bound)
        if self.role == "check" and self.evidence == "test" and not (self.falsifiable or self.rejects.strip()):
            raise ValueError(f"{self.claim}: a test record needs a finite observed and bound (or ratio) that could "
                             f"cross, or rejects= naming the wrong version it rejects on the same data; a record that "
                             f"no data could fail is evidence='consistency'")

    @property
    def falsifiable(self) -> bool:
        """A numeric observed/bound (or ratio): some data would put it on the wrong side."""
        return _is_num(self.ratio) or (_is_num(self.observed) and _is_num(self.bound))

    def _check_evidence_and_inside(self) -> None:
        """Evidence and the hypothesis report are stated on every check record (issue 32); companions may omit."""
        if self.evidence == "identity":
            raise ValueError(f"{self.claim}: evidence 'identity' is now 'consistency' (it holds for any numbers)")
        if self.role == "companion":
            if self.evidence and self.evidence not in EVIDENCE:
                raise ValueError(f"{self.claim}: evidence {self.evidence!r} is not one of {EVIDENCE}")
            if self.inside is None:
                self.inside = "unknown"
            return
        if self.evidence not in EVIDENCE:
            raise ValueError(f"{self.claim}: evidence= is required on a check record, one of {EVIDENCE} "
                             f"(got {self.evidence!r}): 'test' if some data would make it fail, else 'consistency'")
        if self.inside is None and self.reading == "outside-hypotheses":
            self.inside = False
            self.inside_reason = self.inside_reason or "a reading outside the paper's hypotheses"
        if self.inside not in INSIDE or isinstance(self.inside, int) and not isinstance(self.inside, bool):
            raise ValueError(f"{self.claim}: inside= is required on a check record: True, False or 'unknown' (whether "
                             f"every event the proof invokes was checked and held on this run), got {self.inside!r}")
        if not str(self.inside_reason).strip():
            raise ValueError(f"{self.claim}: inside_reason= is required: which hypotheses were checked, and their values")
        if self.reading == "outside-hypotheses" and self.inside is True:
            raise ValueError(f"{self.claim}: a record read outside the hypotheses cannot say inside=True")
        if not isinstance(self.worst_case, bool):
            raise ValueError(f"{self.claim}: worst_case must be True or False")

    def to_json(self) -> dict:
        """The record as plain JSON (tensors and numpy values as lists and floats, NaN/inf as strings).

        >>> Measurement(claim="kou2023/lem-5.2", verdict="holds", observed=float("nan"), evidence="consistency",
        ...             inside=False, inside_reason="outside").to_json()["observed"]
        'nan'
        """
        return _jsonable(asdict(self))


def _is_num(x) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def verdict_for(observed: float, bound: float, relation: str = "<=", *, rtol: float = 0.0,
                vacuous_if: bool = False) -> str:
    """``holds``/``violated`` for ``observed <relation> bound`` (``vacuous`` if flagged).

    Args:
        observed, bound: finite numbers.
        relation: one of ``<=``, ``>=``, ``<``, ``>``, ``==``.
        rtol: the float tolerance that the arithmetic justifies (relative to the larger magnitude), not slack.
        vacuous_if: report a bound that holds as ``vacuous`` (the caller decided it says nothing).

    >>> verdict_for(0.9, 1.0), verdict_for(1.0 + 1e-15, 1.0, rtol=1e-12), verdict_for(2.0, 1.0)
    ('holds', 'holds', 'violated')
    """
    if not (_is_num(observed) and _is_num(bound)):
        raise ValueError(f"verdict_for needs finite numbers, got observed={observed!r}, bound={bound!r}")
    o, b = float(observed), float(bound)
    slack = rtol * max(abs(b), abs(o))
    ok = {"<=": o <= b + slack, ">=": o >= b - slack, "<": o < b + slack, ">": o > b - slack,
          "==": abs(o - b) <= slack}.get(relation)
    if ok is None:
        raise ValueError(f"unknown relation {relation!r}")
    if vacuous_if and ok:
        return "vacuous"
    return "holds" if ok else "violated"


class RecordWriter:
    """Appends records of one process to ``<directory>/<name>.jsonl`` (``directory`` is created; ``name`` is the
    process's, e.g. an xdist worker id).

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> RecordWriter(d, "main").write(Measurement(claim="kou2023/lem-5.2", verdict="holds", observed=1, bound=2,
    ...                               evidence="test", inside=True, inside_reason="doctest"))
    >>> [r["ratio"] for r in read_records(d)]
    [0.5]
    """

    def __init__(self, directory: os.PathLike | str, name: str):
        self.path = pathlib.Path(directory) / f"{name}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, m: Measurement) -> None:
        """Append record ``m`` as one JSON line (one ``write`` and ``fsync``: a kill leaves whole lines).

        >>> import tempfile
        >>> w = RecordWriter(tempfile.mkdtemp(), "gw0")
        >>> w.write(Measurement(claim="kou2023/lem-5.2", verdict="holds", evidence="consistency", inside="unknown",
        ...                     inside_reason="doctest")); w.path.name
        'gw0.jsonl'
        """
        line = json.dumps(m.to_json(), sort_keys=True) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)


def read_records(directory: os.PathLike | str) -> list[dict]:
    """All complete records of the ``*.jsonl`` files under ``directory`` (a torn last line is skipped), sorted by
    claim, test and configuration.

    >>> import tempfile
    >>> read_records(tempfile.mkdtemp())
    []
    """
    out = []
    for p in sorted(pathlib.Path(directory).glob("*.jsonl")):
        for line in p.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    out.sort(key=lambda r: (r.get("claim", ""), r.get("test", ""), json.dumps(r.get("config", {}), sort_keys=True)))
    return out


def atomic_write(path: os.PathLike | str, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file and ``os.replace``: never a truncated file.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a" / "b.txt"
    >>> atomic_write(p, "x"); p.read_text()
    'x'
    """
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def collect(records_dir: os.PathLike | str, run: dict | None = None) -> dict:
    """The results document of the per-process JSONL records under ``records_dir`` and the ``run`` metadata
    (schema in reports/README.md), not yet written nor judged.

    >>> import tempfile
    >>> doc = collect(tempfile.mkdtemp(), {"profile": "quick"})
    >>> doc["schema"], doc["records"]
    (3, [])
    """
    return {
        "schema": SCHEMA_VERSION,
        "run": _jsonable(run or {}),
        "generated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "records": read_records(records_dir),
    }


def write_results(doc: dict, out_path: os.PathLike | str) -> None:
    """Write the results document ``doc`` to ``out_path`` atomically (JSON, NaN/inf as strings).

    >>> import json, pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "results.json"
    >>> write_results({"schema": 3, "records": []}, p); json.loads(p.read_text())["schema"]
    3
    """
    atomic_write(out_path, json.dumps(_jsonable(doc), indent=1, sort_keys=True))


def merge(records_dir: os.PathLike | str, out_path: os.PathLike | str, run: dict | None = None) -> dict:
    """Merge the per-process JSONL records under ``records_dir`` into ``out_path`` (a ``results.json``) with the
    ``run`` metadata, the registry snapshot and the ``claims`` section that :mod:`theory.analysis` derives.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> RecordWriter(d, "main").write(Measurement(claim="kou2023/lem-5.2", verdict="holds", observed=1, bound=2,
    ...                               evidence="test", inside=True, inside_reason="doctest"))
    >>> merge(d, d / "results.json")["claims"]["kou2023/lem-5.2"]["evidence"]
    {'test': 1}
    """
    from .analysis import complete

    doc = complete(collect(records_dir, run))
    write_results(doc, out_path)
    return doc
