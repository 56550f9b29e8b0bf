"""``theory.runs.load``: a results document from ``results.json``, its gzip form ``results.json.gz`` (how the
reference runs under ``reference/`` are committed) or a folder holding either; anything else is a RunsError."""
from __future__ import annotations

import gzip
import json

import pytest

from theory.runs.load import RunsError, load


def test_plain_gzip_and_folder_give_the_same_document(tmp_path):
    doc = {"records": [{"claim": "demo/x", "verdict": "holds"}], "run": {"seed": 3}}
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    (tmp_path / "gz").mkdir()
    (tmp_path / "gz" / "results.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    for path in (tmp_path / "plain", tmp_path / "plain" / "results.json", tmp_path / "gz",
                 tmp_path / "gz" / "results.json.gz"):
        got = load(path)
        assert got["records"] == doc["records"] and got["run"] == doc["run"], path


def test_broken_documents_are_refused(tmp_path):
    (tmp_path / "results.json.gz").write_bytes(b"not gzip")
    with pytest.raises(RunsError, match="not a results document"):
        load(tmp_path / "results.json.gz")
    (tmp_path / "x.json.gz").write_bytes(gzip.compress(b'{"no": "records"}'))
    with pytest.raises(RunsError, match="no 'records' list"):
        load(tmp_path / "x.json.gz")
    with pytest.raises(RunsError, match="no results at"):
        load(tmp_path / "missing")
