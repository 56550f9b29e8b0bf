"""``new``: scaffold a researcher's own paper: a registry with one example claim and its checks.

    python -m theory new <paperid> DIR

writes ``DIR/claims.toml`` (the bibliographic entry and the example claim), ``DIR/test_<paperid>.py`` (a
check that passes and its companion, which shows the check rejects a deliberately wrong version) and
``DIR/conftest.py`` (loads the harness's plugin and the registry). ``python -m pytest DIR`` then runs it
and writes ``reports/`` like the built-in papers.
"""
from __future__ import annotations

import pathlib
import sys

from ..claims import PAPER_SHAPE

TEMPLATES = pathlib.Path(__file__).resolve().parent / "templates"


def register(sub) -> None:
    n = sub.add_parser("new", help="scaffold a registry and checks for your own paper")
    n.add_argument("paper", help="paper id: letters then the 4-digit year, e.g. smith2026")
    n.add_argument("dir", help="folder to create (must not exist or be empty)")
    n.set_defaults(func=run)


def files(paper: str) -> dict[str, str]:
    """The scaffold's file names and contents for ``paper``."""
    if not PAPER_SHAPE.match(paper):
        raise ValueError(f"paper id {paper!r} must be lower-case letters then a 4-digit year, e.g. 'smith2026'")
    fill = {"paper": paper, "year": paper[-4:]}
    return {"claims.toml": (TEMPLATES / "claims.toml.tmpl").read_text(encoding="utf-8").replace("{paper}", paper)
            .replace("{year}", fill["year"]),
            f"test_{paper}.py": (TEMPLATES / "test_claims.py.tmpl").read_text(encoding="utf-8").format(**fill),
            "conftest.py": (TEMPLATES / "conftest.py.tmpl").read_text(encoding="utf-8")}


def run(ns, extra) -> int:
    out = pathlib.Path(ns.dir)
    try:
        content = files(ns.paper)
    except ValueError as e:
        print(f"theory new: {e}", file=sys.stderr)
        return 2
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        print(f"theory new: {out} exists and is not an empty folder", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for name, text in content.items():
        (out / name).write_text(text, encoding="utf-8")
    print(f"theory: wrote {', '.join(content)} in {out.resolve()}\n"
          f"next: python -m pytest {out}    (report: python -m theory report --claims {out})")
    return 0
