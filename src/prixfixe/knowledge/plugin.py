"""The knowledge base as a default plugin: its tables' migration and its resources.

Resources, not tools, so browsing a knowledge base costs the default `tools/list` nothing:
`prixfixe://knowledge/collections` lists collections with their counts, and two templates
list a collection's documents and read one whole (as markdown), with completion of collection
names and document ids.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict

import anyio

from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.kinds import StoreMigration
from prixfixe.declarations.resource import (
    Resource,
    ResourceBody,
    ResourceContext,
    ResourceTemplate,
)
from prixfixe.errors import KnowledgeError, ResourceNotFoundError
from prixfixe.knowledge import KNOWLEDGE_OWNER, catalog, tables
from prixfixe.store.api import OwnerSlice


def _slice(ctx: ResourceContext) -> OwnerSlice:
    return ctx.app.store.slice(KNOWLEDGE_OWNER)


async def _read_collections(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
    found = await anyio.to_thread.run_sync(lambda: catalog.collections(_slice(ctx)))
    rows = [{**asdict(c), "uri": catalog.documents_uri(c.name)} for c in found]
    return json.dumps({"collections": rows}, indent=1, ensure_ascii=False) + "\n"


async def _read_documents(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
    collection = variables["collection"]
    try:
        found = await anyio.to_thread.run_sync(lambda: catalog.documents(_slice(ctx), collection))
    except KnowledgeError as exc:
        raise ResourceNotFoundError(ctx.uri, exc.message) from None
    rows = [{**asdict(d), "uri": catalog.document_uri(collection, d.id)} for d in found]
    body = {"collection": collection, "documents": rows}
    return json.dumps(body, indent=1, ensure_ascii=False) + "\n"


async def _read_document(ctx: ResourceContext, variables: Mapping[str, str]) -> ResourceBody:
    collection, raw_id = variables["collection"], variables["id"]
    if not raw_id.isdigit():
        raise ResourceNotFoundError(ctx.uri, f"document ids are numbers, not {raw_id!r}")
    text = await anyio.to_thread.run_sync(
        lambda: catalog.document_text(_slice(ctx), collection, int(raw_id))
    )
    if text is None:
        listing = catalog.documents_uri(collection)
        detail = f"collection {collection!r} has no document {raw_id} (see {listing})"
        raise ResourceNotFoundError(ctx.uri, detail)
    return ResourceBody(text=text, mime_type="text/markdown")


async def _complete_collection(
    ctx: ResourceContext, partial: str, chosen: Mapping[str, str]
) -> Sequence[str]:
    names = await anyio.to_thread.run_sync(lambda: catalog.collection_names(_slice(ctx)))
    return [name for name in names if name.startswith(partial)]


async def _complete_document(
    ctx: ResourceContext, partial: str, chosen: Mapping[str, str]
) -> Sequence[str]:
    collection = chosen.get("collection", "")
    try:
        found = await anyio.to_thread.run_sync(lambda: catalog.documents(_slice(ctx), collection))
    except KnowledgeError:
        return []
    return [str(d.id) for d in found if str(d.id).startswith(partial)]


@hookimpl
def register_store_migrations(register: Callable[[StoreMigration], None]) -> None:
    for migration in tables.MIGRATIONS:
        register(migration)


@hookimpl
def register_resources(register: Callable[[Resource | ResourceTemplate], None]) -> None:
    register(
        Resource(
            uri=catalog.COLLECTIONS_URI,
            name="knowledge-collections",
            title="Knowledge collections",
            description=(
                "The knowledge base's collections with their document and chunk counts, and "
                "each one's documents URI (JSON)."
            ),
            mime_type="application/json",
            reader=_read_collections,
            audience=("assistant",),
            priority=0.6,
        )
    )
    register(
        ResourceTemplate(
            uri_template=catalog.DOCUMENTS_TEMPLATE,
            name="knowledge-documents",
            title="Documents of a knowledge collection",
            description=(
                "A collection's documents: id, path, title, size, chunk count and each one's "
                "URI (JSON)."
            ),
            mime_type="application/json",
            reader=_read_documents,
            audience=("assistant",),
            completions={"collection": _complete_collection},
        )
    )
    register(
        ResourceTemplate(
            uri_template=catalog.DOCUMENT_TEMPLATE,
            name="knowledge-document",
            title="A knowledge document",
            description="One document of a collection, whole, as markdown.",
            mime_type="text/markdown",
            reader=_read_document,
            audience=("assistant",),
            completions={"collection": _complete_collection, "id": _complete_document},
        )
    )
