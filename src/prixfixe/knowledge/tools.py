"""The knowledge base's tools, in the `knowledge` facet: found with `tool_search`, called with
`tool_invoke`, never listed. Search it (`kb_search`: the `kb-search` step's search, as a tool,
so an agent that asks to "search the knowledge base" finds it first); add, update and remove a
document; create and remove a collection.

Reading documents earns no tool: collections and documents are resources. Each writing tool
writes through `ingest`'s one write API in a worker thread, in one store transaction, then
tells subscribers with `changes.announce`; a write that changed nothing
announces nothing. Removing a collection that holds documents needs their count as a
confirmation, so a collection that grew since the caller looked is not removed unseen.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Annotated, Literal, TypeVar

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.tool import MAX_ARGUMENT_BYTES, Tool, ToolContext, ToolResult
from prixfixe.errors import KnowledgeError
from prixfixe.knowledge import catalog, changes, vectors
from prixfixe.knowledge.backend import KnowledgeTables, tables_of
from prixfixe.knowledge.chunking import Format
from prixfixe.knowledge.ingest import (
    FORMATS,
    MAX_DOCUMENT_BYTES,
    IngestResult,
    check_collection,
    check_document_path,
    create_collection,
    put_text,
    remove_collection,
    remove_document,
)
from prixfixe.knowledge.search import Found, find
from prixfixe.knowledge.step import KbSearchData, KbSearchParams, data_of, markdown_of
from prixfixe.store.faults import MAX_SQLITE_INT

FACET = "knowledge"
T = TypeVar("T")

# -- inputs ---------------------------------------------------------------------------------

DocumentId = Annotated[int, Field(ge=1, le=MAX_SQLITE_INT)]
_COLLECTION = "Collection name: 1-64 of a-z, 0-9, '-', '_'."
#: The most text one call can carry: a document's limit, or a call's arguments' if lower.
TEXT_LIMIT = min(MAX_DOCUMENT_BYTES, MAX_ARGUMENT_BYTES)
_TEXT = f"The document's whole text (at most {TEXT_LIMIT:,} bytes)."


class AddInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    collection: str = Field(description=_COLLECTION + " Created if new.")
    path: str = Field(
        description="The document's key in the collection, a relative path: 'notes/today.md'."
    )
    text: str = Field(description=_TEXT)
    format: Format | None = Field(
        default=None,
        description="How it is split into sections: markdown at each # heading, text by "
        "paragraphs. Default: text for .txt/.text paths, else markdown.",
    )


class UpdateInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    collection: str = Field(description=_COLLECTION)
    id: DocumentId | None = Field(default=None, description="The document's id; or give path.")
    path: str | None = Field(default=None, description="The document's path; or give id.")
    text: str = Field(description=_TEXT + " Replaces the old text.")
    format: Format | None = Field(default=None, description="Default: the document's own.")


class RemoveInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    collection: str = Field(description=_COLLECTION)
    id: DocumentId | None = Field(default=None, description="The document's id; or give path.")
    path: str | None = Field(default=None, description="The document's path; or give id.")


class CreateCollectionInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    collection: str = Field(description=_COLLECTION)


class RemoveCollectionInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    collection: str = Field(description=_COLLECTION)
    confirm_documents: int | None = Field(
        default=None,
        ge=0,
        description="How many documents it holds (required unless it is empty); a different "
        "count is refused and nothing is removed.",
    )


# -- outputs --------------------------------------------------------------------------------


class DocumentOutput(BaseModel):
    id: int
    path: str
    title: str
    format: str
    bytes: int
    chunks: int
    uri: str = Field(description="Read it whole here (gone once removed).")


class DocumentWritten(BaseModel):
    change: Literal["added", "updated", "unchanged", "removed"]
    collection: str
    collection_created: bool
    generation: int | None = Field(description="Store generation of the write; null if none.")
    document: DocumentOutput
    documents_uri: str = Field(description="The collection's documents.")


class CollectionWritten(BaseModel):
    change: Literal["created", "removed"]
    collection: str
    generation: int
    documents_removed: int
    documents_uri: str | None = Field(description="Its documents; null once removed.")
    collections_uri: str


# -- reading what a write needs (blocking: in the write's worker thread) ---------------------

_DOCUMENT = (
    "SELECT d.id, d.path, d.title, d.format, d.bytes, "
    "(SELECT COUNT(*) FROM {prefix}chunks k WHERE k.document = d.id) "
    "FROM {prefix}documents d JOIN {prefix}collections c ON c.id = d.collection "
    "WHERE c.name = ? AND "
)


def _require_collection(slice_: KnowledgeTables, collection: str) -> None:
    check_collection(collection)
    names = catalog.collection_names(slice_)
    if collection not in names:
        raise KnowledgeError(
            f"unknown collection {collection!r} (collections: {', '.join(names) or 'none yet'})",
            collection=collection,
        )


def _document(
    slice_: KnowledgeTables, collection: str, *, id: int | None = None, path: str | None = None
) -> DocumentOutput:
    """One document of `collection`, by id or by path; unknown ones are a `KnowledgeError`."""
    if (id is None) == (path is None):
        raise KnowledgeError("give the document's id or its path, not both and not neither")
    check_collection(collection)
    if path is not None:
        check_document_path(path)
    column, key = ("d.id = ?", id) if id is not None else ("d.path = ?", path)
    rows = slice_.query(_DOCUMENT + column, (collection, key))
    if not rows:
        _require_collection(slice_, collection)
        shown = f"{id}" if id is not None else repr(path)
        raise KnowledgeError(
            f"collection {collection!r} has no document {shown} "
            f"(its documents: {catalog.documents_uri(collection)})",
            collection=collection,
        )
    doc_id, doc_path, title, fmt, size, chunks = rows[0]
    return DocumentOutput(
        id=doc_id,
        path=doc_path,
        title=title,
        format=fmt,
        bytes=size,
        chunks=chunks,
        uri=catalog.document_uri(collection, doc_id),
    )


def _count(slice_: KnowledgeTables, collection: str) -> int:
    _require_collection(slice_, collection)
    rows = slice_.query(
        "SELECT COUNT(*) FROM {prefix}documents d JOIN {prefix}collections c "
        "ON c.id = d.collection WHERE c.name = ?",
        (collection,),
    )
    return int(rows[0][0])


def _format_of(path: str) -> Format:
    return FORMATS.get(PurePosixPath(path).suffix.lower(), "markdown")


async def _write(
    ctx: ToolContext, work: Callable[[KnowledgeTables], tuple[IngestResult, T]]
) -> tuple[IngestResult, T]:
    """Run `work` on the knowledge slice in a worker thread, then announce what it changed."""
    semantic = ctx.app.semantic_search

    def write() -> tuple[IngestResult, T]:
        slice_ = tables_of(ctx.app.store, notifier=ctx.app.notifier)
        done = work(slice_)
        if done[0].changed:
            vectors.refresh(slice_, semantic=semantic)  # before clients are told to re-read
        return done

    result, extra = await anyio.to_thread.run_sync(write)
    changes.announce(ctx.app.notifier, result)
    return result, extra


# -- results --------------------------------------------------------------------------------


def document_text(data: DocumentWritten) -> str:
    """One or two lines a model reads: what happened, to which document, and its URI."""
    doc = data.document
    named = f"document {doc.id} {doc.path!r} ({doc.title!r})"
    where = f"collection {data.collection!r}" + (" (new)" if data.collection_created else "")
    shape = f"{doc.chunks} chunks, {doc.bytes} bytes, store generation {data.generation}"
    if data.change == "unchanged":
        return f"Unchanged: {named} in {where} already has this text.\n{doc.uri}"
    if data.change == "removed":
        return (
            f"Removed {named} from {where} (store generation {data.generation}).\n"
            f"Its documents: {data.documents_uri}"
        )
    verb = {"added": "Added", "updated": "Updated"}[data.change]
    prep = "to" if data.change == "added" else "in"
    return f"{verb} {named} {prep} {where} ({shape}).\n{doc.uri}"


def _document_result(
    change: Literal["added", "updated", "removed"], result: IngestResult, doc: DocumentOutput
) -> ToolResult:
    data = DocumentWritten(
        change=change if result.changed else "unchanged",
        collection=result.collection,
        collection_created=result.collection_created,
        generation=result.generation,
        document=doc,
        documents_uri=catalog.documents_uri(result.collection),
    )
    return ToolResult(text=document_text(data), data=data)


# -- handlers -------------------------------------------------------------------------------


async def kb_search(ctx: ToolContext, args: KbSearchParams) -> ToolResult:
    """The `kb-search` step's search: the best sections, as markdown for the model and data."""

    def search() -> Found:
        slice_ = tables_of(ctx.app.store)
        if args.collection is not None:
            _require_collection(slice_, args.collection)
        return find(
            slice_,
            args.query,
            collection=args.collection,
            path=args.path,
            format=args.format,
            limit=args.limit,
            semantic=ctx.app.semantic_search,
        )

    data = data_of(args.query, await anyio.to_thread.run_sync(search))
    return ToolResult(text=markdown_of(data), data=data)


async def kb_document_add(ctx: ToolContext, args: AddInput) -> ToolResult:
    fmt = args.format or _format_of(args.path)

    def work(slice_: KnowledgeTables) -> tuple[IngestResult, DocumentOutput]:
        result = put_text(slice_, args.collection, args.path, args.text, fmt, expect="new")
        return result, _document(slice_, args.collection, path=args.path)

    result, doc = await _write(ctx, work)
    return _document_result("added", result, doc)


async def kb_document_update(ctx: ToolContext, args: UpdateInput) -> ToolResult:
    def work(slice_: KnowledgeTables) -> tuple[IngestResult, DocumentOutput]:
        before = _document(slice_, args.collection, id=args.id, path=args.path)
        fmt: Format = args.format or ("text" if before.format == "text" else "markdown")
        result = put_text(slice_, args.collection, before.path, args.text, fmt, expect="existing")
        return result, _document(slice_, args.collection, path=before.path)

    result, doc = await _write(ctx, work)
    return _document_result("updated", result, doc)


async def kb_document_remove(ctx: ToolContext, args: RemoveInput) -> ToolResult:
    def work(slice_: KnowledgeTables) -> tuple[IngestResult, DocumentOutput]:
        before = _document(slice_, args.collection, id=args.id, path=args.path)
        return remove_document(slice_, args.collection, before.id), before

    result, doc = await _write(ctx, work)
    return _document_result("removed", result, doc)


async def kb_collection_create(ctx: ToolContext, args: CreateCollectionInput) -> ToolResult:
    result, _ = await _write(ctx, lambda slice_: (create_collection(slice_, args.collection), 0))
    data = CollectionWritten(
        change="created",
        collection=args.collection,
        generation=result.generation or 0,
        documents_removed=0,
        documents_uri=catalog.documents_uri(args.collection),
        collections_uri=catalog.COLLECTIONS_URI,
    )
    text = (
        f"Created collection {args.collection!r} (store generation {data.generation}); add "
        f"documents with kb_document_add.\n{data.documents_uri}"
    )
    return ToolResult(text=text, data=data)


async def kb_collection_remove(ctx: ToolContext, args: RemoveCollectionInput) -> ToolResult:
    name = args.collection

    def work(slice_: KnowledgeTables) -> tuple[IngestResult, int]:
        held = _count(slice_, name)
        confirm = args.confirm_documents
        if (held and confirm is None) or (confirm is not None and confirm != held):
            said = "" if confirm is None else f", not {confirm}"
            raise KnowledgeError(
                f"collection {name!r} holds {held} documents{said}; nothing was removed. To "
                f"remove it with all of them, call again with confirm_documents={held} "
                f"(they are listed at {catalog.documents_uri(name)})",
                collection=name,
                documents=held,
            )
        return remove_collection(slice_, name), held

    result, held = await _write(ctx, work)
    data = CollectionWritten(
        change="removed",
        collection=name,
        generation=result.generation or 0,
        documents_removed=held,
        documents_uri=None,
        collections_uri=catalog.COLLECTIONS_URI,
    )
    text = (
        f"Removed collection {name!r} and its {held} documents "
        f"(store generation {data.generation}).\nCollections: {data.collections_uri}"
    )
    return ToolResult(text=text, data=data)


# -- registration ---------------------------------------------------------------------------

_WORDS = ("knowledge", "kb", "notes", "docs", "wiki", "library")


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    read = (
        "Read documents as resources (prixfixe://knowledge/collections lists collections); "
        "search them with kb_search."
    )
    register(
        Tool(
            name="kb_search",
            title="Search the knowledge base",
            description="Search the knowledge base (notes, docs) for a topic. Returns the best "
            "sections, each with a snippet and the URI to read it.",
            input_model=KbSearchParams,
            output_model=KbSearchData,
            handler=kb_search,
            mutates=False,
            facet=FACET,
            keywords=(*_WORDS, "search", "find", "lookup", "documentation", "manual", "read"),
            examples=(
                "search the knowledge base",
                "look up something in my notes",
                "find documentation about a topic",
                "what do my docs say about this",
            ),
            usage="Read a hit whole at its section_uri or uri (resources/read). " + read,
        )
    )
    register(
        Tool(
            name="kb_document_add",
            title="Add a knowledge document",
            description="Add a document (markdown or text) to a knowledge base collection.",
            input_model=AddInput,
            output_model=DocumentWritten,
            handler=kb_document_add,
            mutates=True,
            destructive=False,
            facet=FACET,
            keywords=(*_WORDS, "add", "document", "note", "write", "save", "ingest", "page"),
            examples=(
                "add a note to the knowledge base",
                "save this page as a document in my notes collection",
            ),
            usage=(
                "A path the collection already holds is refused (update it with "
                "kb_document_update). The collection is created if new. " + read
            ),
        )
    )
    register(
        Tool(
            name="kb_document_update",
            title="Update a knowledge document",
            description="Replace the text of a knowledge base document, by id or path.",
            input_model=UpdateInput,
            output_model=DocumentWritten,
            handler=kb_document_update,
            mutates=True,
            idempotent=True,
            facet=FACET,
            keywords=(*_WORDS, "update", "edit", "change", "replace", "rewrite", "document"),
            examples=("update a document in the knowledge base", "edit my note"),
            usage=(
                "Give id or path (the documents resource lists both). The whole text is "
                "replaced; the same text again writes nothing (change 'unchanged'). A "
                "document the collection does not hold is refused."
            ),
        )
    )
    register(
        Tool(
            name="kb_document_remove",
            title="Remove a knowledge document",
            description="Remove a document from a knowledge base collection, by id or path.",
            input_model=RemoveInput,
            output_model=DocumentWritten,
            handler=kb_document_remove,
            mutates=True,
            facet=FACET,
            keywords=(*_WORDS, "remove", "delete", "document", "forget", "drop"),
            examples=("delete a document from the knowledge base", "remove a note"),
            usage="Give id or path. Removal is final: the document and its sections go.",
        )
    )
    register(
        Tool(
            name="kb_collection_create",
            title="Create a knowledge collection",
            description="Create an empty knowledge base collection.",
            input_model=CreateCollectionInput,
            output_model=CollectionWritten,
            handler=kb_collection_create,
            mutates=True,
            destructive=False,
            facet=FACET,
            keywords=(*_WORDS, "collection", "create", "new", "folder"),
            examples=("create a knowledge collection", "start a new notes collection"),
            usage="A name that exists is refused. kb_document_add also creates one. " + read,
        )
    )
    register(
        Tool(
            name="kb_collection_remove",
            title="Remove a knowledge collection",
            description="Remove a knowledge base collection with all its documents.",
            input_model=RemoveCollectionInput,
            output_model=CollectionWritten,
            handler=kb_collection_remove,
            mutates=True,
            facet=FACET,
            keywords=(*_WORDS, "collection", "remove", "delete", "drop", "clear"),
            examples=("delete a knowledge collection", "remove the notes collection"),
            usage=(
                "Removal is final. A collection holding documents is removed only with "
                "confirm_documents equal to its document count (prixfixe://knowledge/"
                "collections shows it); without it, the refusal says the count."
            ),
        )
    )
