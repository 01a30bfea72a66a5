"""A report's markdown as HTML a browser can show without running anything from it.

Report text is not trusted (steps print what programs and mounted servers say), so the
renderer is markdown-it-py's CommonMark with tables and strikethrough, and:

* raw HTML off: `<script>` in a report is shown as text, escaped;
* links and images only to `http:`, `https:`, `mailto:` or a relative address (no
  `javascript:`, `data:`, `vbscript:`, `file:`); links get `rel="noopener noreferrer"`;
* headings one level down, so the page keeps its single `<h1>`;
* each table cell carries its column's heading as `data-label`, so on a phone the style sheet
  can stack a row's cells under their headings instead of clipping the table.
"""

from __future__ import annotations

from functools import cache
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

SAFE_SCHEMES = ("http", "https", "mailto")


def link_allowed(url: str) -> bool:
    """Whether `url` may be a link's target: a safe scheme, or none (a relative address)."""
    cleaned = "".join(c for c in url if c.isprintable() and not c.isspace())
    try:
        scheme = urlsplit(cleaned).scheme.lower()
    except ValueError:
        return False
    if not scheme:
        # `urlsplit` reads `javascript&colon;` as a path; a colon before any slash is a scheme
        # a browser might honour, so refuse it.
        head = cleaned.split("/", 1)[0]
        return ":" not in head
    return scheme in SAFE_SCHEMES


@cache
def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = link_allowed  # type: ignore[method-assign]
    md.core.ruler.push("prixfixe_shift", _shift_and_guard)
    return md


def _shift_and_guard(state: Any) -> None:
    """Headings one level down (h1 → h2, h6 stays), links that leave the page safely, and
    table cells labelled with their column's heading."""
    tokens = state.tokens
    headings: list[str] = []
    column = 0
    for index, token in enumerate(tokens):
        if token.type in ("heading_open", "heading_close"):
            level = min(int(token.tag[1]) + 1, 6)
            token.tag = f"h{level}"
        elif token.type == "thead_open":
            headings = []
        elif token.type == "th_open":
            headings.append(_plain(tokens[index + 1]))
        elif token.type == "tr_open":
            column = 0
        elif token.type == "td_open":
            if column < len(headings) and headings[column]:
                token.attrSet("data-label", headings[column])
            column += 1
        for child in token.children or ():
            _guard_link(child)


def _plain(token: Token) -> str:
    """An inline token's text without its markup (a heading cell's `**status**` is `status`)."""
    if token.type != "inline":
        return ""
    return "".join(c.content for c in token.children or () if c.type in ("text", "code_inline"))


def _guard_link(token: Token) -> None:
    if token.type == "link_open":
        token.attrSet("rel", "noopener noreferrer")


def markdown_html(text: str) -> str:
    """`text` (markdown) as HTML: safe to place in a page as it is."""
    html: str = _renderer().render(text)
    return html
