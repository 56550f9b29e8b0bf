"""Catalog markdown (with LaTeX) to safe HTML, offline: math is rendered as MathML (issue 34).

Only a small subset is handled: ``$$…$$`` display math, ``$…$`` inline math (either may span lines),
``**bold**``, ```code```, ``- `` list items and blank-line paragraphs. Text outside math is HTML-escaped, so
catalog text can never inject markup; math is converted by latex2mathml (a maintained converter, no network),
which escapes every character it emits, and browsers render MathML natively (nothing is fetched at view time).
LaTeX that the converter cannot read is shown as its source text in a ``.math`` span, never dropped.
"""
from __future__ import annotations

import functools
import html
import re

_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE = re.compile(r"(?<![\\$])\$([^$]+?)\$")
_STASHED = re.compile("\x00(\\d+)\x00")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`\n]+)`")
_ITEM = re.compile(r"^\s*[-*]\s+(.*)$")


@functools.lru_cache(maxsize=4096)
def mathml(latex: str, display: bool = False) -> str:
    """MathML for one formula (its LaTeX source, unescaped); the escaped source in a ``.math`` span when the
    converter cannot read it."""
    src = " ".join(latex.split())
    try:
        from latex2mathml.converter import convert

        out = convert(src, display="block" if display else "inline")
        return f'<span class="math{" display" if display else ""}" title="{html.escape(src, quote=True)}">{out}</span>'
    except Exception:  # unreadable LaTeX (or the converter missing): the source, never lost
        return f'<span class="math{" display" if display else ""} src">{html.escape(src, quote=False)}</span>'


def _math(esc_text: str, blocks: list[str]) -> str:
    """Replace $$…$$ and $…$ in escaped text by placeholders for their MathML (kept in ``blocks``)."""
    def stash(display):
        def f(m):
            blocks.append(mathml(html.unescape(m.group(1)), display))
            return f"\x00{len(blocks) - 1}\x00"
        return f

    return _INLINE.sub(stash(False), _DISPLAY.sub(stash(True), esc_text))


def _restore(s: str, blocks: list[str]) -> str:
    return _STASHED.sub(lambda m: blocks[int(m.group(1))], s)


def _inline(s: str) -> str:
    s = _CODE.sub(r"<code>\1</code>", s)
    return _BOLD.sub(r"<strong>\1</strong>", s)


def md(text: str) -> str:
    """HTML for a catalog field (escaped; LaTeX kept as source in ``.math`` spans)."""
    if not text:
        return ""
    blocks: list[str] = []
    esc = _math(html.escape(text, quote=False), blocks)
    out: list[str] = []
    in_list = False
    para: list[str] = []

    def flush():
        if para:
            out.append("<p>" + "<br>".join(para) + "</p>")
            para.clear()

    for line in esc.splitlines():
        m = _ITEM.match(line)
        if m:
            flush()
            if not in_list:
                out.append("<ul>")
                in_list = True
            out.append("<li>" + _inline(m.group(1)) + "</li>")
            continue
        if not line.strip():
            flush()
            if in_list:
                out.append("</ul>")
                in_list = False
            continue
        if in_list and line.startswith("  "):  # continuation of a list item
            out[-1] = out[-1][:-5] + " " + _inline(line.strip()) + "</li>"
            continue
        if in_list:
            out.append("</ul>")
            in_list = False
        para.append(_inline(line.strip()))
    flush()
    if in_list:
        out.append("</ul>")
    return _restore("\n".join(out), blocks)


def esc(s) -> str:
    return html.escape(str(s), quote=True)


def md_inline(text: str) -> str:
    """One-line markdown (titles): escaped, with MathML, bold and code, no paragraphs."""
    blocks: list[str] = []
    return _restore(_inline(_math(html.escape(text or "", quote=False), blocks)), blocks)
