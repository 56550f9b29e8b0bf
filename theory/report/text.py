"""Catalog markdown (with LaTeX source) to safe HTML, offline: math is shown as its source text.

Only a small subset is handled: ``$$…$$`` display math, ``$…$`` inline math,
``**bold**``, ```code```, ``- `` list items and blank-line paragraphs. Everything
is HTML-escaped first, so catalog text can never inject markup.
"""
from __future__ import annotations

import html
import re

_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE = re.compile(r"(?<![\\$])\$([^$\n]+?)\$")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`\n]+)`")
_ITEM = re.compile(r"^\s*[-*]\s+(.*)$")


def _inline(s: str) -> str:
    s = _CODE.sub(r"<code>\1</code>", s)
    s = _INLINE.sub(r'<span class="math">\1</span>', s)
    return _BOLD.sub(r"<strong>\1</strong>", s)


def md(text: str) -> str:
    """HTML for a catalog field (escaped; LaTeX kept as source in ``.math`` spans)."""
    if not text:
        return ""
    esc = html.escape(text, quote=False)
    blocks: list[str] = []

    def stash(m):
        blocks.append(f'<span class="math display">{m.group(1).strip()}</span>')
        return f"\x00{len(blocks) - 1}\x00"

    esc = _DISPLAY.sub(stash, esc)
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
    res = "\n".join(out)
    return re.sub("\x00(\\d+)\x00", lambda m: blocks[int(m.group(1))], res)


def esc(s) -> str:
    return html.escape(str(s), quote=True)


def md_inline(text: str) -> str:
    """One-line markdown (titles): escaped, with math spans, bold and code, no paragraphs."""
    return _inline(html.escape(text or "", quote=False))
