"""A results document from a path: ``results.json`` itself (or gzip-compressed, ``results.json.gz``, as the committed
reference runs are) or a report folder holding one."""
from __future__ import annotations

import gzip
import json
import os
import pathlib


class RunsError(ValueError):
    """Runs that cannot be merged, resumed or compared (the message says why)."""


def results_path(path: os.PathLike | str) -> pathlib.Path:
    p = pathlib.Path(path)
    if p.is_dir():
        gz = p / "results.json.gz"
        p = gz if gz.is_file() and not (p / "results.json").is_file() else p / "results.json"
    if not p.is_file():
        raise RunsError(f"no results at {path}: expected a results.json or a report folder holding one")
    return p


def load(path: os.PathLike | str) -> dict:
    """The parsed results document at ``path`` (a file or a folder), with ``doc["_source"]`` = its path."""
    p = results_path(path)
    try:
        raw = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        doc = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, gzip.BadGzipFile, UnicodeDecodeError) as e:
        raise RunsError(f"{p} is not a results document: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("records"), list):
        raise RunsError(f"{p} is not a results document (no 'records' list)")
    doc["_source"] = str(p)
    return doc


def source(doc: dict) -> str:
    return doc.get("_source", "<document>")
