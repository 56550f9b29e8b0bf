"""Refuse to combine runs that are not of one code version, profile and registry.

Used by :mod:`.merge` (shards and seed sweeps) and :mod:`.resume`. Seeds may differ (a sweep), and so may
the machine, device and worker count; a document that does not record a field is not judged on it (a
recorded ``None``, e.g. no git commit outside a checkout, is a value like any other).
"""
from __future__ import annotations

from .load import RunsError, source

# (field of doc["run"], what the message calls it)
FIELDS = (("profile", "profile"), ("commit", "git commit"), ("code_digest", "code (digest of theory/ and checks/)"),
          ("registry_digest", "claim registries (digest)"))


def registry_digest(doc: dict) -> str | None:
    run = doc.get("run") or {}
    return run.get("registry_digest") or (doc.get("registry") or {}).get("digest")


MISSING = object()


def value(doc: dict, key: str):
    if key == "registry_digest":
        return registry_digest(doc) or MISSING
    return (doc.get("run") or {}).get(key, MISSING)


def check(docs: list[dict], what: str = "merge") -> None:
    """Raise :class:`RunsError` naming the field and the runs when ``docs`` disagree on one of :data:`FIELDS`."""
    for key, label in FIELDS:
        seen = {}
        for d in docs:
            v = value(d, key)
            if v is not MISSING:
                seen.setdefault(v, []).append(source(d))
        if len(seen) > 1:
            lines = "\n".join(f"  {label} = {_short(v)}: {', '.join(srcs)}" for v, srcs in seen.items())
            raise RunsError(f"cannot {what}: the runs differ in their {label}:\n{lines}\n"
                            f"Run every shard (and every seed) from one checkout with one --profile and one set of "
                            f"registries.")


def _short(v) -> str:
    s = str(v)
    return s[:12] if len(s) == 64 or len(s) == 40 else s
