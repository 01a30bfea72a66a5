"""Document formats: which files are documents, and how each becomes the text that is stored.

Markdown and plain text are stored as they are. HTML is converted to markdown (markdownify on
Beautiful Soup's pure-Python `html.parser`), so it chunks along its `<h1>`-`<h6>` headings
and reads back as markdown; scripts, styles and other non-content elements are dropped, and
HTML nested too deeply to convert is stored as its plain text instead. A PDF (with the
`prixfixe[pdf]` extra, pypdf) becomes markdown with a `## Page N` heading per page.

Every conversion is bounded: a file larger than its format's `max_bytes` is never read past
it, a converted text larger than `MAX_DOCUMENT_BYTES` is refused, a PDF may have at most
`MAX_PDF_PAGES` pages, and a PDF's extraction and an HTML file's conversion may cost at most
a CPU budget that grows with the file's size (checked while they run: at every content
operator, at every element). A file that is not a document says why by raising
`NotADocument`.
"""

from __future__ import annotations

import functools
import io
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from prixfixe.knowledge.chunking import Format

#: What one document's text may weigh, as read (markdown, text) or as converted (HTML, PDF).
MAX_DOCUMENT_BYTES = 1 << 20
#: The largest PDF file read; its text must still fit `MAX_DOCUMENT_BYTES`.
MAX_PDF_BYTES = 32 << 20
MAX_PDF_PAGES = 2000
#: The CPU time one PDF's text may cost: a base, and more for each byte of the file, so the work
#: stays proportional to the input (a few KB of nested forms can otherwise ask for minutes).
PDF_BASE_SECONDS = 2.0
PDF_SECONDS_PER_MB = 5.0
#: HTML nested deeper than this is stored as plain text (the converter recurses per level).
MAX_HTML_DEPTH = 200
#: The CPU time one HTML file's parsing and conversion may cost, like a PDF's: markdownify
#: handles each element in time proportional to how deep it is, so the cost of a file is its
#: size times its depth (up to `MAX_HTML_DEPTH`), not its size alone.
HTML_BASE_SECONDS = 2.0
HTML_SECONDS_PER_MB = 10.0
PDF_EXTRA = "pip install 'prixfixe[pdf]'"

#: Elements whose content is never document text.
_DROPPED = (
    "title",
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "head",
)
_UNSAFE_URL = re.compile(r"^\s*(javascript|data|vbscript):", re.IGNORECASE)
_BLANK_LINES = re.compile(r"\n{3,}")


class NotADocument(ValueError):
    """A file that cannot be stored as a document; its message is the reason."""


@dataclass(frozen=True)
class Converted:
    """A document's stored text and how it is chunked. Its title is `title` (a PDF's
    declared title), else its first heading (unless its headings are not titles: a PDF's
    `Page N`), else `fallback_title` (HTML's `<title>`), else its file's name."""

    text: str
    chunking: Format
    title: str | None = None
    fallback_title: str | None = None
    headings_are_titles: bool = True


@dataclass(frozen=True)
class DocumentFormat:
    """A kind of document: its name (the documents' `format`), the suffixes of its files, the
    most bytes one may have, and its conversion from bytes (raising `NotADocument`)."""

    name: str
    suffixes: tuple[str, ...]
    max_bytes: int
    convert: Callable[[bytes], Converted]


def decode(data: bytes) -> str:
    """The text of a markdown or text document's bytes, or `NotADocument` saying why not."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise NotADocument(f"larger than {MAX_DOCUMENT_BYTES} bytes, the limit for one document")
    if b"\0" in data:
        raise NotADocument("binary (it holds a NUL byte)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotADocument(f"not UTF-8 (invalid byte at offset {exc.start})") from None


def _markdown(data: bytes) -> Converted:
    return Converted(decode(data), "markdown")


def _text(data: bytes) -> Converted:
    return Converted(decode(data), "text")


def _bounded(text: str, what: str) -> str:
    if len(text.encode("utf-8")) > MAX_DOCUMENT_BYTES:
        raise NotADocument(
            f"its {what} is larger than {MAX_DOCUMENT_BYTES} bytes, the limit for one document"
        )
    return text


# -- HTML ----------------------------------------------------------------------------------


def html_to_markdown(data: bytes) -> Converted:
    """HTML as markdown with ATX headings; plain text when it nests too deeply to convert."""
    from bs4 import BeautifulSoup, Tag

    if len(data) > MAX_DOCUMENT_BYTES:
        raise NotADocument(f"larger than {MAX_DOCUMENT_BYTES} bytes, the limit for one document")
    if b"\0" in data:
        raise NotADocument("binary (it holds a NUL byte)")
    budget = _CpuBudget(
        len(data), HTML_BASE_SECONDS, HTML_SECONDS_PER_MB, "an HTML file", "convert"
    )
    # Bytes, so the parser honours a BOM or <meta charset> before falling back to UTF-8.
    soup = BeautifulSoup(data, "html.parser", element_classes={Tag: _tag_class()})
    budget.check()
    found = soup.find("title")
    title = " ".join(found.get_text().split()) if isinstance(found, Tag) else ""
    # One pass over the tree, not one search per dropped name.
    dropped = [e for e in soup.descendants if isinstance(e, Tag) and e.name in _DROPPED]
    for element in reversed(dropped):  # innermost first: an outer one's decompose frees it
        element.decompose()
    body = soup.find("body")
    root = body if isinstance(body, Tag) else soup
    if _depth(root) > MAX_HTML_DEPTH:
        return Converted(_bounded(_plain(root), "text"), "text", fallback_title=title or None)
    _defuse(root)
    try:
        converter = _converter_class()(
            budget, heading_style="ATX", bullets="-", escape_underscores=False
        )
        text = converter.convert_soup(root)
    except NotADocument:
        raise  # over the budget: refused, not converted to plain text at yet more cost
    except Exception:  # noqa: BLE001 - a third-party converter on untrusted markup: keep its text
        return Converted(_bounded(_plain(root), "text"), "text", fallback_title=title or None)
    text = _BLANK_LINES.sub("\n\n", text).strip()
    text = text + "\n" if text else ""
    return Converted(_bounded(text, "markdown"), "markdown", fallback_title=title or None)


@functools.cache
def _tag_class() -> type[Any]:
    """Beautiful Soup's `Tag` with `find_parent(name)` walking the parents itself: markdownify
    asks it of every element (`'pre'`), and Beautiful Soup's general matcher made that cost
    microseconds per ancestor, the most of converting a deeply nested file."""
    from bs4 import Tag

    class FastTag(Tag):
        def find_parent(self, name: Any = None, attrs: Any = None, **kwargs: Any) -> Any:
            if not isinstance(name, str) or attrs or kwargs:
                return super().find_parent(name, attrs, **kwargs)
            # Each answer is remembered on the way up, so asking it of every element costs
            # one step each. Asked only while converting, once the tree no longer changes.
            path = []
            node: Any = self
            found: Any = None
            while node.parent is not None:
                # Through __dict__: a Tag's unknown attribute is a search of its descendants.
                known = node.__dict__.get("_parent_named")
                if known is not None and name in known:
                    found = known[name]
                    break
                path.append(node)
                if node.parent.name == name:
                    found = node.parent
                    break
                node = node.parent
            for visited in path:
                if visited.__dict__.get("_parent_named") is None:
                    visited._parent_named = {}
                visited._parent_named[name] = found
            return found

    return FastTag


@functools.cache
def _converter_class() -> type[Any]:
    """markdownify's converter, checking the CPU budget at every element, and numbering an
    ordered list's items in one pass (markdownify counts each item's earlier siblings: the
    square of the list's length)."""
    from bs4 import Tag
    from markdownify import MarkdownConverter

    class Converter(MarkdownConverter):
        def __init__(self, budget: _CpuBudget, **options: Any) -> None:
            super().__init__(**options)
            self._budget = budget
            self._numbers: dict[int, dict[int, int]] = {}  # id(ol) -> id(li) -> its number

        def process_tag(self, node: Any, parent_tags: Any = None) -> str:
            self._budget.check()
            return str(super().process_tag(node, parent_tags=parent_tags))  # type: ignore[misc]

        def convert_li(self, el: Any, text: str, parent_tags: Any) -> str:
            parent = el.parent
            if parent is None or parent.name != "ol":
                return str(super().convert_li(el, text, parent_tags))  # type: ignore[misc]
            body = (text or "").strip()
            if not body:
                return "\n"
            marker = f"{self._number(parent, el)}. "
            pad = " " * len(marker)
            first, *rest = body.split("\n")
            return (
                "\n".join([marker + first, *(pad + line if line else "" for line in rest)]) + "\n"
            )

        def _number(self, ol: Any, li: Any) -> int:
            numbers = self._numbers.get(id(ol))
            if numbers is None:
                start = str(ol.get("start") or "")
                first = int(start) if start.isnumeric() else 1
                items = (c for c in ol.children if isinstance(c, Tag) and c.name == "li")
                numbers = {id(item): n for n, item in enumerate(items, start=first)}
                self._numbers[id(ol)] = numbers
            return numbers[id(li)]

    return Converter


def _depth(root: Any) -> int:
    """How deeply `root`'s elements nest, counted without recursion (stops past the limit)."""
    from bs4 import Tag

    deepest = 0
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_HTML_DEPTH:
            break
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tag))
    return deepest


def _plain(root: Any) -> str:
    lines = (" ".join(line.split()) for line in root.get_text("\n").splitlines())
    text = "\n".join(line for line in lines if line)
    return text + "\n" if text else ""


def _defuse(root: Any) -> None:
    """Links and images keep only URLs that are not scripts or inline data (a `data:` image
    would store megabytes of base64 as text): an unsafe link keeps its text, an image its alt."""
    from bs4.element import NavigableString

    for link in root.find_all("a", href=_UNSAFE_URL):
        del link["href"]
    for image in root.find_all("img", src=_UNSAFE_URL):
        image.replace_with(NavigableString(str(image.get("alt") or "")))


# -- PDF -----------------------------------------------------------------------------------


def pdf_available() -> bool:
    try:
        import pypdf  # noqa: F401
    except ImportError:
        return False
    return True


def pdf_to_markdown(data: bytes) -> Converted:
    """A PDF's text, a `## Page N` section per page (lines of its text that markdown would
    read as headings or code fences are escaped, so the pages are the sections)."""
    if not pdf_available():
        raise NotADocument(f"a PDF, and reading PDFs needs the pdf extra: {PDF_EXTRA}")
    from pypdf import PdfReader

    # pypdf logs each flaw of a malformed file; the skip reason (or nothing, when it still
    # reads) is what a person needs, without a log line that names no file.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    if len(data) > MAX_PDF_BYTES:
        raise NotADocument(f"larger than {MAX_PDF_BYTES} bytes, the limit for one PDF")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise NotADocument("an encrypted PDF (it needs a password)")
        count = len(reader.pages)
        if count > MAX_PDF_PAGES:
            raise NotADocument(f"a PDF of {count} pages; the limit is {MAX_PDF_PAGES}")
        budget = _PdfBudget(len(data))
        parts: list[str] = []
        any_text = False
        for number, page in enumerate(reader.pages, start=1):
            text = page.extract_text(
                visitor_operand_before=budget.operation, visitor_text=budget.text
            )
            budget.check()
            body = _escape_markdown_lines((text or "").strip())
            any_text = any_text or bool(body)
            parts.append(f"## Page {number}\n\n{body}\n\n" if body else f"## Page {number}\n\n")
            budget.page(parts[-1])
        declared = reader.metadata.title if reader.metadata else None
    except NotADocument:
        raise
    except Exception as exc:  # noqa: BLE001 - pypdf on untrusted bytes: any failure means unreadable
        raise NotADocument(f"a PDF that cannot be read ({_pdf_problem(exc)})") from None
    if not any_text:
        raise NotADocument("a PDF with no text (scanned pages would need OCR)")
    text = "".join(parts).rstrip("\n") + "\n"
    title = " ".join(str(declared).split()) if declared else None
    return Converted(text, "markdown", title=title or None, headings_are_titles=False)


class _CpuBudget:
    """This thread's CPU time against a budget that grows with a file's size (`base` seconds
    and `per_mb` a MiB), checked by `check` while a conversion runs; over it, `NotADocument`
    saying what cost too much."""

    def __init__(self, size: int, base: float, per_mb: float, what: str, verb: str) -> None:
        self.seconds = base + per_mb * size / (1 << 20)
        self._deadline = time.thread_time() + self.seconds
        self._what = what  # "a PDF"
        self._verb = verb  # "extract"

    def over(self) -> NotADocument | None:
        if time.thread_time() <= self._deadline:
            return None
        return NotADocument(
            f"{self._what} whose text costs more than {self.seconds:.0f} s of CPU to "
            f"{self._verb} (the limit grows with the file's size)"
        )

    def check(self) -> None:
        over = self.over()
        if over is not None:
            raise over


class _PdfBudget:
    """What extracting one PDF's text may cost, checked while pypdf works (its visitors run at
    every content operator, inside nested forms too), so a hostile file is refused as soon as it
    is over, never after it was extracted whole: the text produced (raw, and as the pages
    written so far) against `MAX_DOCUMENT_BYTES`, and this thread's CPU time against a budget
    that grows with the file's size (`_CpuBudget`).

    pypdf catches what a visitor raises inside a form XObject (it logs the form as undecodable
    and goes on), so the first refusal is kept, every later operator raises it again at once
    (the page unwinds without doing its work), and `check` raises it after the page."""

    def __init__(self, size: int) -> None:
        self._cpu = _CpuBudget(size, PDF_BASE_SECONDS, PDF_SECONDS_PER_MB, "a PDF", "extract")
        self._raw = 0
        self._written = 0
        self._over: NotADocument | None = None

    def operation(self, *_: object) -> None:
        if self._over is None:
            self._over = self._cpu.over()
        self.check()

    def text(self, text: str, *_: object) -> None:
        self._raw += len(text.encode("utf-8", "replace"))
        if self._over is None and self._raw > MAX_DOCUMENT_BYTES:
            self._over = _too_large()
        self.check()

    def page(self, part: str) -> None:
        self._written += len(part.encode("utf-8", "replace"))
        if self._over is None and self._written > MAX_DOCUMENT_BYTES:
            self._over = _too_large()
        self.check()

    def check(self) -> None:
        if self._over is not None:
            raise self._over


def _too_large() -> NotADocument:
    return NotADocument(
        f"its text is larger than {MAX_DOCUMENT_BYTES} bytes, the limit for one document"
    )


def _pdf_problem(exc: Exception) -> str:
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_MARKDOWN_LINE = re.compile(r"^( {0,3})(#{1,6}(?:[ \t]|$)|```|~~~)", re.MULTILINE)


def _escape_markdown_lines(text: str) -> str:
    return _MARKDOWN_LINE.sub(lambda m: f"{m.group(1)}\\{m.group(2)}", text)


# -- the formats ---------------------------------------------------------------------------

FORMATS: tuple[DocumentFormat, ...] = (
    DocumentFormat("markdown", (".md", ".markdown"), MAX_DOCUMENT_BYTES, _markdown),
    DocumentFormat("text", (".txt", ".text"), MAX_DOCUMENT_BYTES, _text),
    DocumentFormat("html", (".html", ".htm"), MAX_DOCUMENT_BYTES, html_to_markdown),
    DocumentFormat("pdf", (".pdf",), MAX_PDF_BYTES, pdf_to_markdown),
)
#: Each document suffix (lowercase, with its dot) and its format.
BY_SUFFIX: Mapping[str, DocumentFormat] = {s: f for f in FORMATS for s in f.suffixes}


def chunking_of(name: str) -> Format:
    """How a stored document of format `name` is chunked: plain text by paragraphs, every
    other format (markdown, and HTML and PDF as converted to markdown) along its headings."""
    return "text" if name == "text" else "markdown"


def format_of(path: PurePath | str) -> DocumentFormat | None:
    """The format of a file by its suffix (any case), or None when it is not a document."""
    return BY_SUFFIX.get(PurePath(path).suffix.lower())
