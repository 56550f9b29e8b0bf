"""``new``: scaffold a researcher's own paper: a registry with two example claims and their checks.

    python -m theory new <paperid> DIR

writes ``DIR/claims.toml`` (the bibliographic entry and the two example claims), ``DIR/test_<paperid>.py`` (a
Monte Carlo check that passes, and its companion, which shows the check rejects a deliberately wrong version),
``DIR/test_<paperid>_training.py`` (a check that trains networks with the core's models and ``gd``, fits a rate
with its confidence interval, and its companion) and ``DIR/conftest.py`` (loads the harness's plugin and the
registry, writes the report to ``DIR/reports``, and stops with a one-line hint when a folder named ``theory``
shadows the harness). ``python -m pytest DIR`` then runs it and writes ``DIR/reports/`` like the built-in papers.

Example (the files it would write):

>>> sorted(files("smith2026"))
['claims.toml', 'conftest.py', 'test_smith2026.py', 'test_smith2026_training.py']
>>> 'id = "smith2026/thm-2"' in files("smith2026")["claims.toml"]
True
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
    """The scaffold's file names and contents for ``paper`` (templates in ``theory/cli/templates``, where
    ``{paper}`` and ``{year}`` are filled in; nothing else in them is a placeholder).

    Args:
        paper: the paper id, lower-case letters then a 4-digit year (``smith2026``).

    Raises ValueError for another shape.

    >>> files("smith2026")["test_smith2026_training.py"].count('CLAIM = "smith2026/thm-2"')
    1
    """
    if not PAPER_SHAPE.match(paper):
        raise ValueError(f"paper id {paper!r} must be lower-case letters then a 4-digit year, e.g. 'smith2026'")

    def fill(template: str) -> str:
        return (TEMPLATES / template).read_text(encoding="utf-8").replace("{paper}", paper).replace("{year}", paper[-4:])

    return {"claims.toml": fill("claims.toml.tmpl"),
            f"test_{paper}.py": fill("test_claims.py.tmpl"),
            f"test_{paper}_training.py": fill("test_training.py.tmpl"),
            "conftest.py": fill("conftest.py.tmpl")}


def run(ns, extra) -> int:
    """``python -m theory new PAPER DIR``: write :func:`files` into DIR (created; it must not exist or be empty).
    Returns the exit status: 0, or 2 (bad paper id, DIR not empty) with the reason on stderr."""
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
          f"next: python -m pytest {out}    (writes {out / 'reports'}; with the built-in papers: "
          f"python -m theory report --claims {out})")
    return 0
