"""The knowledge base as a default plugin: its tables' migration and its resources.

Resources, not tools, so browsing a knowledge base costs the default `tools/list` nothing.
`prixfixe://knowledge/collections` lists the collections; every document is listed in
`resources/list` (from the store, a page at a time) and read whole, by section or by chunk
span, with an outline to choose from; a collection's documents page by page, its statistics,
the knowledge base's health and search are resources too. Collection names, document ids and
search formats complete. The readers are in `readers`.
"""

from __future__ import annotations

from collections.abc import Callable

from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.kinds import StoreMigration
from prixfixe.declarations.resource import Resource, ResourceTemplate
from prixfixe.knowledge import catalog, readers, tables

_JSON = "application/json"
_MARKDOWN = readers.MARKDOWN
_COLLECTION = {"collection": readers.complete_collection}
_DOCUMENT = {"collection": readers.complete_collection, "id": readers.complete_document}


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
            mime_type=_JSON,
            reader=readers.read_collections,
            audience=("assistant",),
            priority=0.6,
        )
    )
    register(
        Resource(
            uri=catalog.HEALTH_URI,
            name="knowledge-health",
            title="Knowledge base health",
            description=(
                "The full-text index's state, counts, collections, last change and search "
                "mode (JSON)."
            ),
            mime_type=_JSON,
            reader=readers.read_health,
            audience=("user", "assistant"),
            priority=0.3,
        )
    )
    templates = [
        ResourceTemplate(
            uri_template=catalog.DOCUMENTS_TEMPLATE,
            name="knowledge-documents",
            title="Documents of a knowledge collection",
            description=(
                "A collection's documents, a page at a time by path: id, path, title, size, "
                "chunk count and URI; `next` is the next page's URI (JSON)."
            ),
            mime_type=_JSON,
            reader=readers.read_documents,
            audience=("assistant",),
            completions=_COLLECTION,
        ),
        ResourceTemplate(
            uri_template=catalog.DOCUMENT_TEMPLATE,
            name="knowledge-document",
            title="A knowledge document",
            description="One document of a collection, whole, as markdown.",
            mime_type=_MARKDOWN,
            reader=readers.read_document,
            audience=("assistant",),
            completions=_DOCUMENT,
            lister=readers.list_documents,
        ),
        ResourceTemplate(
            uri_template=catalog.OUTLINE_TEMPLATE,
            name="knowledge-outline",
            title="Sections of a knowledge document",
            description=(
                "A document's sections: seq, heading, level, chunks, bytes and the URI that "
                "reads each one (JSON). Read a section instead of the whole document."
            ),
            mime_type=_JSON,
            reader=readers.read_outline,
            audience=("assistant",),
            completions=_DOCUMENT,
        ),
        ResourceTemplate(
            uri_template=catalog.SECTION_TEMPLATE,
            name="knowledge-section",
            title="A section of a knowledge document",
            description=(
                "The chunk `seq` and the chunks under deeper headings that follow it, as "
                "markdown (see the outline)."
            ),
            mime_type=_MARKDOWN,
            reader=readers.read_section,
            audience=("assistant",),
            completions=_DOCUMENT,
        ),
        ResourceTemplate(
            uri_template=catalog.CHUNKS_TEMPLATE,
            name="knowledge-chunks",
            title="Chunks of a knowledge document",
            description="Chunks `3` or `3-5` (inclusive) of a document, as markdown.",
            mime_type=_MARKDOWN,
            reader=readers.read_chunks,
            audience=("assistant",),
            completions=_DOCUMENT,
        ),
        ResourceTemplate(
            uri_template=catalog.STATS_TEMPLATE,
            name="knowledge-stats",
            title="Statistics of a knowledge collection",
            description=(
                "Documents, chunks, bytes, formats, last change and largest documents of a "
                "collection (JSON)."
            ),
            mime_type=_JSON,
            reader=readers.read_stats,
            audience=("user", "assistant"),
            completions=_COLLECTION,
        ),
        ResourceTemplate(
            uri_template=catalog.SEARCH_TEMPLATE,
            name="knowledge-search",
            title="Search the knowledge base",
            description=(
                "The best chunks for the words in q, optionally in one collection, under a "
                "path glob (notes/*) or of one format: for each hit its heading, document, "
                "section URI and a snippet (markdown)."
            ),
            mime_type=_MARKDOWN,
            reader=readers.read_search,
            audience=("assistant",),
            completions={**_COLLECTION, "format": readers.complete_format},
        ),
    ]
    for template in templates:
        register(template)
