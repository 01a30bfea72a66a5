"""`kb-search`: search the knowledge base inside a routine, so a report can hold what the notes
say about a topic: the best sections, each with its heading, a snippet and the URI to read it.

It reads what clients may already read (the knowledge resources), so it needs no grant. The
documents are untrusted text: the markdown shows a snippet on one line, with its whitespace
collapsed and link brackets escaped, so a document cannot add headings or links to the report.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.steps import StepContext, StepOutput, StepType
from prixfixe.errors import StepFailure
from prixfixe.knowledge import catalog
from prixfixe.knowledge.backend import tables_of
from prixfixe.knowledge.chunking import Format
from prixfixe.knowledge.search import MAX_LIMIT, Found, Hit, find


class KbSearchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=1000, description="Words to look for.")
    collection: str | None = Field(default=None, description="Only this collection.")
    path: str | None = Field(
        default=None,
        description="Only documents whose path matches this glob ('notes/*', '*.md'; * also "
        "matches '/', case-sensitive).",
    )
    format: Format | None = Field(default=None, description="Only documents of this format.")
    limit: int = Field(default=5, ge=1, le=MAX_LIMIT, description="Most hits, best first.")


class KbHit(BaseModel):
    collection: str
    document_id: int
    path: str
    title: str = Field(description="The document's title.")
    heading: str = Field(description="The heading of the matching section ('' before any).")
    chunk: int = Field(description="The section's position in its document, from 0.")
    snippet: str = Field(description="Words around the match, matched words in **bold**.")
    score: float = Field(description="BM25 rank: lower is better; compare within one search.")
    uri: str = Field(description="The whole document.")
    section_uri: str = Field(description="The matching section, to read it in context.")


class KbFilters(BaseModel):
    collection: str | None
    path: str | None
    format: str | None


class KbSearchData(BaseModel):
    query: str
    mode: Literal["keyword", "hybrid"] = Field(
        description="keyword: BM25 over words; hybrid: fused with dense embeddings."
    )
    note: str = Field(description="Why the search ran keyword-only when more was asked; or ''.")
    filters: KbFilters
    hits: list[KbHit]


def data_of(query: str, found: Found) -> KbSearchData:
    return KbSearchData(
        query=query,
        mode=found.mode,
        note=found.note,
        filters=KbFilters(
            collection=found.filters.get("collection"),
            path=found.filters.get("path"),
            format=found.filters.get("format"),
        ),
        hits=[_hit(h) for h in found.hits],
    )


def _hit(hit: Hit) -> KbHit:
    return KbHit(
        collection=hit.collection,
        document_id=hit.document_id,
        path=hit.path,
        title=hit.title,
        heading=hit.heading,
        chunk=hit.chunk,
        snippet=hit.snippet,
        score=hit.score,
        uri=hit.uri,
        section_uri=hit.section_uri,
    )


#: A line start that could open a block: a heading, quote, list, rule, fence or table (a
#: `*` only before a space, so a snippet opening with a **bold** match stays bold).
_BLOCK_START = re.compile(r"[#>+=|~`_-]|\*(?:\s|$)")
_ORDERED = re.compile(r"\d{1,9}(?=[.)](?:\s|$))")


def one_line(text: str) -> str:
    """`text` as inline markdown on one line that cannot open a block or a link: whitespace
    collapsed, brackets, backslashes and `<` escaped, and a block-opening start escaped."""
    flat = re.sub(r"([\[\]\\<])", r"\\\1", " ".join(text.split()))
    if ordered := _ORDERED.match(flat):
        return flat[: ordered.end()] + "\\" + flat[ordered.end() :]
    return "\\" + flat if _BLOCK_START.match(flat) else flat


def after_heading(snippet: str, heading: str) -> str:
    """The snippet without the section's own heading line (the hit's label shows it); its
    words may be marked as matches (`## **Watering**`)."""
    opened = re.match(r"#{1,6}[ \t]+", snippet)
    if not opened or not heading:
        return snippet
    at, rest = opened.end(), heading
    while rest and at < len(snippet):
        if snippet.startswith("**", at):
            at += 2
        elif snippet[at] == rest[0]:
            at, rest = at + 1, rest[1:]
        else:
            return snippet
    at += 2 if snippet.startswith("**", at) else 0
    body = snippet[at:].strip()
    return body if not rest and body else snippet


def markdown_of(data: KbSearchData) -> str:
    scope = [f"{k} `{v}`" for k, v in data.filters.model_dump().items() if v]
    said = f'"{one_line(data.query)}" ({data.mode} search' + "".join(f", {s}" for s in scope) + ")"
    if not data.hits:
        lines = [f"No hits for {said}."]
    else:
        count = f"{len(data.hits)} hit" + ("" if len(data.hits) == 1 else "s")
        lines = [f"{count} for {said}:", ""]
        for n, hit in enumerate(data.hits, 1):
            label = one_line(hit.title)
            if hit.heading and hit.heading != hit.title:
                label += f": {one_line(hit.heading)}"
            lines.append(f"{n}. [{label}]({hit.section_uri}) — `{hit.collection}/{hit.path}`")
            lines.append(f"   {one_line(after_heading(hit.snippet, hit.heading))}")
    if data.note:
        lines += ["", f"_{one_line(data.note)}_"]
    return "\n".join(lines)


async def kb_search(ctx: StepContext, params: KbSearchParams) -> StepOutput:
    def search() -> Found:
        slice_ = tables_of(ctx.store)
        if params.collection is not None:
            names = catalog.collection_names(slice_)
            if params.collection not in names:
                raise StepFailure(
                    f"step {ctx.step!r}: unknown collection {params.collection!r} "
                    f"(collections: {', '.join(names) or 'none yet'})",
                    kind="not-found",
                )
        return find(
            slice_,
            params.query,
            collection=params.collection,
            path=params.path,
            format=params.format,
            limit=params.limit,
            semantic=ctx.semantic,
        )

    data = data_of(params.query, await anyio.to_thread.run_sync(search))
    return StepOutput(markdown=markdown_of(data), data=data)


@hookimpl
def register_step_types(register: Callable[[StepType], None]) -> None:
    register(
        StepType(
            name="kb-search",
            title="Knowledge search",
            description="Search the knowledge base: the best sections for a query, each with "
            "its document, heading, a snippet and the URI to read it, and the search mode.",
            params_model=KbSearchParams,
            data_model=KbSearchData,
            version="1.0",
            handler=kb_search,
        )
    )
