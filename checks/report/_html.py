"""A strict-enough HTML reader for the report tests: tag balance, IDs, attributes, summary rows."""
from __future__ import annotations

import re
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# SVG elements matplotlib writes self-closed (<path .../>): the parser reports them via handle_startendtag.
RESOURCE_ATTRS = {"src", "href", "xlink:href", "action", "data", "poster", "srcset", "background", "formaction"}


class Page(HTMLParser):
    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.ids: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []  # (tag, attr, value)
        self.tags: list[str] = []
        self.summary_claims: list[str] = []
        self._in_summary = 0
        self.style_text: list[str] = []
        self._in_style = False
        self.feed(text)
        self.close()
        if self.stack:
            self.errors.append(f"unclosed at end: {self.stack[-5:]}")

    def handle_starttag(self, tag, attrs):
        self._attrs(tag, attrs)
        if tag == "table" and dict(attrs).get("id") == "summary-table":
            self._in_summary = 1
        elif tag == "table" and self._in_summary:
            self._in_summary += 1
        if tag == "tr" and self._in_summary and dict(attrs).get("data-claim"):
            self.summary_claims.append(dict(attrs)["data-claim"])
        if tag == "style":
            self._in_style = True
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self._attrs(tag, attrs)

    def _attrs(self, tag, attrs):
        self.tags.append(tag)
        for k, v in attrs:
            self.attrs.append((tag, k, v or ""))
            if k == "id":
                self.ids.append(v)
            if k == "style":
                self.style_text.append(v or "")

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if tag == "style":
            self._in_style = False
        if tag == "table" and self._in_summary:
            self._in_summary -= 1
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()

    def handle_data(self, data):
        if self._in_style:
            self.style_text.append(data)


def external_references(page: Page, text: str) -> list[str]:
    """Everything on the page that would make a browser fetch something."""
    bad = []
    for tag, k, v in page.attrs:
        if k in RESOURCE_ATTRS and not (v.startswith("#") or v.startswith("data:")):
            bad.append(f"<{tag} {k}={v!r}>")
    if "link" in page.tags or "iframe" in page.tags or "object" in page.tags:
        bad.append("a <link>/<iframe>/<object> element")
    for css in page.style_text:
        for u in re.findall(r"url\(([^)]*)\)", css):
            if not u.strip("'\" ").startswith(("#", "data:")):
                bad.append(f"css url({u})")
        if "@import" in css or "@font-face" in css:
            bad.append("css @import/@font-face")
    if re.search(r"<script[^>]*\bsrc=", text):
        bad.append("external script")
    return bad
