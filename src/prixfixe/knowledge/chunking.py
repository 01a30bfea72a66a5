"""Splitting a document into chunks: markdown along its `#` headings, plain text by paragraphs.

Chunks partition the text: joined in order they are the document exactly, so the document
is stored once (as its chunks) and read back whole or by chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Format = Literal["markdown", "text"]
#: Plain-text paragraphs are gathered into chunks of about this many characters.
TEXT_CHUNK_CHARS = 2000

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


@dataclass(frozen=True)
class Chunk:
    """One piece of a document: the heading it sits under ("" before any) and its text."""

    heading: str
    body: str


def split(text: str, fmt: Format) -> list[Chunk]:
    return split_markdown(text) if fmt == "markdown" else split_text(text)


def split_markdown(text: str) -> list[Chunk]:
    """A chunk per heading (its line included) up to the next heading of any level; text
    before the first heading is a chunk of its own. Lines in fenced code are never headings."""
    chunks: list[Chunk] = []
    heading, fence = "", ""
    lines: list[str] = []
    for line in text.splitlines(keepends=True):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1) == fence:
                fence = ""
        elif opened:
            fence = opened.group(1)
        else:
            found = _HEADING.match(line.rstrip("\r\n"))
            if found:
                if lines:
                    chunks.append(Chunk(heading, "".join(lines)))
                heading, lines = found.group(2).strip(), []
        lines.append(line)
    if lines:
        chunks.append(Chunk(heading, "".join(lines)))
    return chunks


def split_text(text: str) -> list[Chunk]:
    """Paragraphs (separated by blank lines) gathered up to `TEXT_CHUNK_CHARS` per chunk; a
    longer paragraph is a chunk of its own."""
    pieces = re.split(r"(?<=\n)(?=[ \t]*\n)", text)  # cut before each blank line
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + len(piece) > TEXT_CHUNK_CHARS and current.strip():
            chunks.append(current)
            current = ""
        current += piece
    if current:
        chunks.append(current)
    return [Chunk("", body) for body in chunks]


def title_of(chunks: list[Chunk], fallback: str) -> str:
    """The first heading, else `fallback` (the file's name)."""
    return next((c.heading for c in chunks if c.heading), fallback)
