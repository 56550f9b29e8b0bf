"""Seed lists on the command line: ``0-19``, ``0,3,5-7``, ``4``."""
from __future__ import annotations

import re

_PART = re.compile(r"^\s*(-?\d+)\s*(?:-\s*(-?\d+)\s*)?$")


def parse(text: str) -> list[int]:
    """The seeds named by ``text``, in order, without repeats; ValueError on anything else."""
    out: list[int] = []
    for part in str(text).split(","):
        m = _PART.match(part)
        if not m:
            raise ValueError(f"bad seed list {text!r}: expected e.g. '0-19' or '0,3,5-7'")
        a, b = int(m.group(1)), int(m.group(2) if m.group(2) is not None else m.group(1))
        if b < a:
            raise ValueError(f"bad seed range {part.strip()!r}: the end is below the start")
        out += [s for s in range(a, b + 1) if s not in out]
    return out
