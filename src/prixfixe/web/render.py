"""A report's markdown as HTML a browser can show without running anything from it.

Report text is not trusted (steps print what programs and mounted servers say), so the
renderer is markdown-it-py's CommonMark with tables and strikethrough, and:

* raw HTML off: `<script>` in a report is shown as text, escaped;
* links and images only to `http:`, `https:`, `mailto:` or a relative address (no
  `javascript:`, `data:`, `vbscript:`, `file:`); links get `rel="noopener noreferrer"`;
* headings one level down, so the page keeps its single `<h1>`.

`svg_for_page` readies the server's own SVG plots for the page's Content-Security-Policy.
"""

from __future__ import annotations

from functools import cache
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

SAFE_SCHEMES = ("http", "https", "mailto")
SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"


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
    """Headings one level down (h1 → h2, h6 stays), and links that leave the page safely."""
    for token in state.tokens:
        if token.type in ("heading_open", "heading_close"):
            level = min(int(token.tag[1]) + 1, 6)
            token.tag = f"h{level}"
        for child in token.children or ():
            _guard_link(child)


def _guard_link(token: Token) -> None:
    if token.type == "link_open":
        token.attrSet("rel", "noopener noreferrer")


def markdown_html(text: str) -> str:
    """`text` (markdown) as HTML: safe to place in a page as it is."""
    html: str = _renderer().render(text)
    return html


#: CSS properties an SVG element also takes as attributes (SVG 1.1 presentation attributes).
PRESENTATION = frozenset(
    (
        *("clip-path", "clip-rule", "color", "display", "dominant-baseline"),
        *("fill", "fill-opacity", "fill-rule", "opacity", "visibility"),
        *("font-family", "font-size", "font-style", "font-weight", "text-anchor"),
        *("stroke", "stroke-dasharray", "stroke-dashoffset", "stroke-linecap"),
        *("stroke-linejoin", "stroke-miterlimit", "stroke-opacity", "stroke-width"),
    )
)


def svg_for_page(svg: str) -> str:
    """An SVG document to inline under the page's `style-src 'self'`, which ignores `style`
    attributes and `<style>` elements: each `style` declaration becomes the presentation
    attribute of the same name (an attribute already there wins), anything else is dropped.
    Generated server-side (the plots), so it is parsed as trusted XML."""
    import xml.etree.ElementTree as ET

    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    root = ET.fromstring(svg)
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag in (f"{{{SVG_NS}}}style", "style"):
                parent.remove(child)
    for element in root.iter():
        style = element.attrib.pop("style", None)
        if style is None:
            continue
        for declaration in style.split(";"):
            name, _, value = declaration.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name in PRESENTATION and value and name not in element.attrib:
                element.set(name, value)
    return ET.tostring(root, encoding="unicode")
