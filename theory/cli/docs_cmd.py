"""``docs``: the API reference, generated from the docstrings with pdoc (a static HTML folder).

    python -m theory docs OUT        writes OUT/index.html and one page per module of :data:`API`

The docstrings are the reference: every public function and class of these modules states its arguments and
has a short example, and checks/core/test_api_reference.py runs every example as a doctest and builds these
pages, so the reference cannot drift from the code. pdoc comes with the ``test`` and ``docs`` extras
(``pip install -e '.[docs]'``).
"""
from __future__ import annotations

import pathlib
import sys

# The modules of the reference (packages include their submodules): the simulators, data, statistics, records,
# the registry, errors, the device policy and the command line.
API = ("theory.sim", "theory.data", "theory.stats", "theory.records", "theory.claims", "theory.errors",
       "theory.device", "theory.cli")


def register(sub) -> None:
    d = sub.add_parser("docs", help="write the API reference (HTML, from the docstrings, by pdoc) into OUT")
    d.add_argument("out", help="output folder (created)")
    d.set_defaults(func=run)


def build(out, modules=API) -> pathlib.Path:
    """Render the API reference of ``modules`` into the folder ``out`` with pdoc; return ``out/index.html``.

    Args:
        out: the output folder (created; existing pages are overwritten).
        modules: module names (a package brings its submodules; a name prefixed with ``!`` is left out).

    Raises ModuleNotFoundError naming the extra when pdoc is not installed.

    >>> import tempfile
    >>> index = build(tempfile.mkdtemp(), ["theory.stats"])
    >>> index.name, (index.parent / "theory" / "stats.html").exists()
    ('index.html', True)
    """
    try:
        import pdoc
        import pdoc.render
    except ModuleNotFoundError:
        raise ModuleNotFoundError("the API reference needs pdoc: pip install -e '.[docs]' (or pip install pdoc)") from None
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    pdoc.render.configure(docformat="google", show_source=False, search=True,
                          footer_text="theory — numerical checks of deep-learning theory")
    pdoc.pdoc(*modules, output_directory=out)
    return out / "index.html"


def run(ns, extra) -> int:
    """``python -m theory docs OUT``: :func:`build` into OUT; exit status 0, or 2 without pdoc."""
    try:
        index = build(ns.out)
    except ModuleNotFoundError as e:
        print(f"theory docs: {e}", file=sys.stderr)
        return 2
    print(f"theory: API reference written to {index.resolve()}")
    return 0
