"""A document's sections, from its chunks' heads: what an agent reads to fit a budget.

Every chunk starts a section: itself and the chunks after it under deeper headings (a `##`
chunk's section holds the `###` chunks that follow it, up to the next `##` or `#`). A chunk's
heading level is the count of `#` that open its first line; a chunk of plain text, or the text
before a document's first heading, has level 0 and is a section of one chunk. Spans of chunks
(`3`, `3-5`) are parsed and bounded here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prixfixe.knowledge.catalog import ChunkHead, DocumentHeads
from prixfixe.knowledge.formats import chunking_of

#: A markdown heading line's opening, as chunking recognises it (up to three spaces, one to
#: six `#`, then a space or tab).
_OPENING = re.compile(r"^ {0,3}(#{1,6})[ \t]")
#: The most chunks one `chunks/{span}` read returns.
MAX_SPAN_CHUNKS = 100
#: How much of a level-0 chunk an outline shows, to tell it from its neighbours.
START_CHARS = 60


@dataclass(frozen=True)
class Section:
    """The section that chunk `seq` starts: chunks `seq` to `last`, `bytes` in all."""

    seq: int
    last: int
    heading: str
    level: int
    bytes: int
    start: str  # for a level-0 chunk, its first characters; "" for a heading


def level(head: ChunkHead, fmt: str) -> int:
    if chunking_of(fmt) != "markdown":  # HTML and PDF are stored as markdown too
        return 0
    opened = _OPENING.match(head.start)
    return len(opened.group(1)) if opened else 0


def sections(document: DocumentHeads) -> list[Section]:
    """Every chunk's section, in order."""
    heads = document.chunks
    levels = [level(head, document.format) for head in heads]
    out: list[Section] = []
    for i, head in enumerate(heads):
        last = i
        if levels[i]:
            while last + 1 < len(heads) and levels[last + 1] > levels[i]:
                last += 1
        start = "" if levels[i] else " ".join(head.start.split())[:START_CHARS]
        size = sum(h.bytes for h in heads[i : last + 1])
        out.append(Section(head.seq, heads[last].seq, head.heading, levels[i], size, start))
    return out


def section(document: DocumentHeads, seq: int) -> Section | None:
    """The section chunk `seq` starts, or None when the document has no such chunk."""
    return next((s for s in sections(document) if s.seq == seq), None)


def parse_span(span: str, count: int) -> tuple[int, int]:
    """`3` or `3-5` (inclusive) as (first, last), within a document of `count` chunks and at
    most `MAX_SPAN_CHUNKS` long; anything else is a `ValueError` naming the span and the
    document's chunk count."""
    found = re.fullmatch(r"([0-9]{1,9})(?:-([0-9]{1,9}))?", span)
    have = f"the document has {count} chunks" + (f" (0-{count - 1})" if count else "")
    if found is None:
        raise ValueError(f"chunk span {span!r} is not a chunk number or a range like 3-5; {have}")
    first = int(found.group(1))
    last = int(found.group(2)) if found.group(2) is not None else first
    if first > last:
        raise ValueError(f"chunk span {span!r} ends before it starts; {have}")
    if last >= count:
        raise ValueError(f"chunk span {span!r} is past the last chunk; {have}")
    if last - first + 1 > MAX_SPAN_CHUNKS:
        raise ValueError(
            f"chunk span {span!r} is {last - first + 1} chunks; one read returns at most "
            f"{MAX_SPAN_CHUNKS} ({have})"
        )
    return first, last
