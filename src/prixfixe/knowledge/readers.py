"""The knowledge base's resource readers, lister and completers (registered by `plugin`).

Every one reaches the store from a worker thread (the store opens lazily and blocks). An
unknown collection, document, section or chunk span is "resource not found" with the URI;
a search without words, or with a limit that is not a number, is invalid params naming the
variable.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from prixfixe.core.paging import decode_cursor, encode_cursor
from prixfixe.declarations.resource import ListedResource, ResourceBody, ResourceContext
from prixfixe.errors import InvalidListCursorError, KnowledgeError, ResourceNotFoundError
from prixfixe.knowledge import KNOWLEDGE_OWNER, catalog, results, sections
from prixfixe.knowledge.backend import KnowledgeTables, tables_of

if TYPE_CHECKING:
    from prixfixe.knowledge import search

T = TypeVar("T")
MARKDOWN = "text/markdown"


async def _in_thread(ctx: ResourceContext, work: Callable[[KnowledgeTables], T]) -> T:
    app = ctx.app
    return await anyio.to_thread.run_sync(lambda: work(tables_of(app.store, notifier=app.notifier)))


def _json(body: Mapping[str, Any]) -> str:
    return json.dumps(body, indent=1, ensure_ascii=False) + "\n"


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _json_rows(head: Mapping[str, Any], key: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """`head` plus `key` holding `rows`, compact, one row a line: what a model reads of a
    long listing (a third fewer tokens than indented JSON), still readable by a person."""
    fields = [f"{_compact(name)}:{_compact(value)}" for name, value in head.items()]
    listed = ",\n".join(_compact(row) for row in rows)
    return "{" + ",".join(fields) + f",{_compact(key)}:[\n{listed}\n]}}\n"


def _number(raw: str) -> int | None:
    """A URI's number (ASCII digits, small enough for SQLite), else None."""
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 18 else None


def _document_id(ctx: ResourceContext, raw: str) -> int:
    number = _number(raw)
    if number is None:
        raise ResourceNotFoundError(ctx.uri, f"document ids are numbers, not {raw!r}")
    return number


async def _heads(ctx: ResourceContext, variables: Mapping[str, str]) -> catalog.DocumentHeads:
    collection = variables["collection"]
    document_id = _document_id(ctx, variables["id"])
    found = await _in_thread(ctx, lambda s: catalog.document_heads(s, collection, document_id))
    if found is None:
        listing = catalog.documents_uri(collection)
        detail = f"collection {collection!r} has no document {document_id} (see {listing})"
        raise ResourceNotFoundError(ctx.uri, detail)
    return found


# -- listings -------------------------------------------------------------------------------


async def read_collections(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
    found = await _in_thread(ctx, catalog.collections)
    rows = [{**asdict(c), "uri": catalog.documents_uri(c.name)} for c in found]
    return _json({"collections": rows})


async def read_documents(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
    """One page of a collection's documents, by path; `next` is the URI of the next page."""
    collection = variables["collection"]
    listing = catalog.documents_uri(collection)
    cursor = variables.get("cursor")

    def page(slice_: KnowledgeTables) -> tuple[list[catalog.DocumentInfo], bool]:
        catalog.collection_id(slice_, collection)  # unknown: whatever the cursor says
        after = decode_cursor(listing, cursor) if cursor else None
        return catalog.documents_page(slice_, collection, after, ctx.page_size)

    try:
        found, more = await _in_thread(ctx, page)
    except KnowledgeError as exc:
        raise ResourceNotFoundError(ctx.uri, exc.message) from None
    except InvalidListCursorError as exc:
        raise KnowledgeError(exc.message, uri=ctx.uri) from None
    rows = [{**asdict(d), "uri": catalog.document_uri(collection, d.id)} for d in found]
    following = encode_cursor(listing, found[-1].path) if more else None
    head = {
        "collection": collection,
        "next": catalog.documents_uri(collection, following) if following else None,
        # A document's sections, to read one instead of the whole: its outline.
        "outline": catalog.OUTLINE_TEMPLATE.replace("{collection}", collection),
    }
    return _json_rows(head, "documents", rows)


async def list_documents(
    ctx: ResourceContext, after: str | None, limit: int
) -> Sequence[ListedResource]:
    """Every collection's documents in `resources/list`, one query a page."""
    found = await _in_thread(ctx, lambda s: catalog.listed_documents(s, after, limit))
    return [
        ListedResource(uri=d.uri, name=d.path, title=d.title, size=d.bytes, mime_type=MARKDOWN)
        for d in found
    ]


# -- a document, whole or in parts ----------------------------------------------------------


async def read_document(ctx: ResourceContext, variables: Mapping[str, str]) -> ResourceBody:
    collection = variables["collection"]
    document_id = _document_id(ctx, variables["id"])
    text = await _in_thread(ctx, lambda s: catalog.document_text(s, collection, document_id))
    if text is None:
        listing = catalog.documents_uri(collection)
        detail = f"collection {collection!r} has no document {document_id} (see {listing})"
        raise ResourceNotFoundError(ctx.uri, detail)
    return ResourceBody(text=text, mime_type=MARKDOWN)


async def read_outline(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
    document = await _heads(ctx, variables)
    collection = variables["collection"]
    rows = [
        {
            "seq": s.seq,
            "heading": s.heading,
            "level": s.level,
            "chunks": s.last - s.seq + 1,
            "bytes": s.bytes,
            "uri": catalog.section_uri(collection, document.id, s.seq),
            **({"start": s.start} if s.start else {}),
        }
        for s in sections.sections(document)
    ]
    head = {
        "document": catalog.document_uri(collection, document.id),
        "path": document.path,
        "title": document.title,
        "chunks": len(document.chunks),
        "bytes": sum(head.bytes for head in document.chunks),
    }
    return _json_rows(head, "sections", rows)


async def read_section(ctx: ResourceContext, variables: Mapping[str, str]) -> ResourceBody:
    document = await _heads(ctx, variables)
    raw = variables["seq"]
    seq = _number(raw)
    found = None if seq is None else sections.section(document, seq)
    if found is None:
        count = len(document.chunks)
        outline = catalog.outline_uri(variables["collection"], document.id)
        raise ResourceNotFoundError(
            ctx.uri,
            f"no section {raw!r}: the document has {count} chunks, each one starts a section "
            f"(see {outline})",
        )
    first, last = found.seq, found.last
    text = await _in_thread(ctx, lambda s: catalog.chunks_text(s, document.id, first, last))
    return ResourceBody(text=text, mime_type=MARKDOWN)


async def read_chunks(ctx: ResourceContext, variables: Mapping[str, str]) -> ResourceBody:
    document = await _heads(ctx, variables)
    try:
        first, last = sections.parse_span(variables["span"], len(document.chunks))
    except ValueError as exc:
        raise ResourceNotFoundError(ctx.uri, str(exc)) from None
    text = await _in_thread(ctx, lambda s: catalog.chunks_text(s, document.id, first, last))
    return ResourceBody(text=text, mime_type=MARKDOWN)


# -- statistics, health and search ----------------------------------------------------------


async def read_stats(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
    collection = variables["collection"]
    try:
        stats = await _in_thread(ctx, lambda s: catalog.collection_stats(s, collection))
    except KnowledgeError as exc:
        raise ResourceNotFoundError(ctx.uri, exc.message) from None
    largest = [
        {"path": path, "bytes": size, "uri": catalog.document_uri(collection, document_id)}
        for document_id, path, size in stats.largest
    ]
    body = {
        "collection": collection,
        "documents": stats.documents,
        "chunks": stats.chunks,
        "bytes": stats.bytes,
        "formats": stats.formats,
        "last_change_gen": stats.gen,
        "largest": largest,
        "documents_uri": catalog.documents_uri(collection),
    }
    return _json(body)


async def read_health(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
    from prixfixe.knowledge import health  # with the search index's modules: only when read

    found = await anyio.to_thread.run_sync(
        lambda: health.health(
            lambda: ctx.app.store, KNOWLEDGE_OWNER, semantic=ctx.app.semantic_search
        )
    )
    return _json(found)


async def read_search(ctx: ResourceContext, variables: Mapping[str, str]) -> ResourceBody:
    from prixfixe.knowledge import search  # the ranker, only when searched

    query = variables.get("q", "")
    if not query.strip():
        raise KnowledgeError(
            "search needs words to look for in q, e.g. "
            "prixfixe://knowledge/search?q=watering%20roses",
            uri=ctx.uri,
            argument="q",
        )
    raw_limit = variables.get("limit", str(search.DEFAULT_LIMIT))
    if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= search.MAX_LIMIT:
        raise KnowledgeError(
            f"limit {raw_limit!r} is not a number of hits from 1 to {search.MAX_LIMIT}",
            uri=ctx.uri,
            argument="limit",
        )
    collection = variables.get("collection") or None

    def run(slice_: KnowledgeTables) -> search.Found:
        if collection is not None:
            catalog.collection_id(slice_, collection)  # unknown: a KnowledgeError naming it
        return search.find(
            slice_,
            query,
            collection=collection,
            path=variables.get("path") or None,
            format=variables.get("format") or None,
            limit=int(raw_limit),
            semantic=ctx.app.semantic_search,
        )

    try:
        found = await _in_thread(ctx, run)
    except KnowledgeError as exc:
        raise KnowledgeError(exc.message, **{**exc.data, "uri": ctx.uri}) from None
    return ResourceBody(text=results.render(query, found), mime_type=MARKDOWN)


async def complete_collection(
    ctx: ResourceContext, partial: str, chosen: Mapping[str, str]
) -> Sequence[str]:
    names = await _in_thread(ctx, catalog.collection_names)
    return [name for name in names if name.startswith(partial)]


async def complete_document(
    ctx: ResourceContext, partial: str, chosen: Mapping[str, str]
) -> Sequence[str]:
    collection = chosen.get("collection", "")
    try:
        found = await _in_thread(ctx, lambda s: catalog.documents(s, collection))
    except KnowledgeError:
        return []
    return [str(d.id) for d in found if str(d.id).startswith(partial)]


def complete_format(ctx: ResourceContext, partial: str, chosen: Mapping[str, str]) -> list[str]:
    return [fmt for fmt in ("markdown", "text") if fmt.startswith(partial)]
