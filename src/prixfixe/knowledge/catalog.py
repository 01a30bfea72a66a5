"""Reading the knowledge base back: collections with their counts, a collection's documents,
a document's text. Blocking (the store's slice): call from a worker thread in async code."""

from __future__ import annotations

from dataclasses import dataclass

from prixfixe.errors import KnowledgeError
from prixfixe.store.api import OwnerSlice

#: The resources' URIs: the list of collections, and one collection's documents and document.
COLLECTIONS_URI = "prixfixe://knowledge/collections"
DOCUMENTS_TEMPLATE = "prixfixe://knowledge/{collection}/documents"
DOCUMENT_TEMPLATE = "prixfixe://knowledge/{collection}/document/{id}"
#: A collection's counts and last change, and the knowledge base's health (index state,
#: counts, last ingest), beside `prixfixe://system/health`.
SECTION_TEMPLATE = "prixfixe://knowledge/{collection}/document/{id}/section/{seq}"
CHUNKS_TEMPLATE = "prixfixe://knowledge/{collection}/document/{id}/chunks/{span}"
STATS_TEMPLATE = "prixfixe://knowledge/{collection}/stats"
HEALTH_URI = "prixfixe://knowledge/health"


def documents_uri(collection: str) -> str:
    return f"prixfixe://knowledge/{collection}/documents"


def document_uri(collection: str, document_id: int) -> str:
    return f"prixfixe://knowledge/{collection}/document/{document_id}"


def section_uri(collection: str, document_id: int, seq: int) -> str:
    """The section of a document that starts at chunk `seq`: that chunk and the chunks under
    deeper headings that follow it."""
    return f"prixfixe://knowledge/{collection}/document/{document_id}/section/{seq}"


def chunks_uri(collection: str, document_id: int, first: int, last: int | None = None) -> str:
    """Chunks `first` to `last` (inclusive) of a document; one chunk when `last` is None."""
    span = str(first) if last is None or last == first else f"{first}-{last}"
    return f"prixfixe://knowledge/{collection}/document/{document_id}/chunks/{span}"


def stats_uri(collection: str) -> str:
    return f"prixfixe://knowledge/{collection}/stats"


@dataclass(frozen=True)
class CollectionInfo:
    name: str
    documents: int
    chunks: int
    bytes: int
    gen: int  # the generation of its last change (its newest document, else its creation)


@dataclass(frozen=True)
class DocumentInfo:
    id: int
    path: str
    title: str
    format: str
    hash: str
    bytes: int
    chunks: int
    gen: int


def collections(slice_: OwnerSlice) -> list[CollectionInfo]:
    rows = slice_.query(
        "SELECT c.name, COUNT(d.id), "
        "COALESCE(SUM((SELECT COUNT(*) FROM {prefix}chunks k WHERE k.document = d.id)), 0), "
        "COALESCE(SUM(d.bytes), 0), MAX(c.created_gen, COALESCE(MAX(d.gen), 0)) "
        "FROM {prefix}collections c LEFT JOIN {prefix}documents d ON d.collection = c.id "
        "GROUP BY c.id ORDER BY c.name"
    )
    return [CollectionInfo(*row) for row in rows]


def collection_names(slice_: OwnerSlice) -> list[str]:
    return [row[0] for row in slice_.query("SELECT name FROM {prefix}collections ORDER BY name")]


def documents(slice_: OwnerSlice, collection: str) -> list[DocumentInfo]:
    """The collection's documents by path; an unknown collection is a `KnowledgeError`."""
    _collection_id(slice_, collection)
    rows = slice_.query(
        "SELECT d.id, d.path, d.title, d.format, d.hash, d.bytes, "
        "(SELECT COUNT(*) FROM {prefix}chunks k WHERE k.document = d.id), d.gen "
        "FROM {prefix}documents d JOIN {prefix}collections c ON c.id = d.collection "
        "WHERE c.name = ? ORDER BY d.path",
        (collection,),
    )
    return [DocumentInfo(*row) for row in rows]


def document_text(slice_: OwnerSlice, collection: str, document_id: int) -> str | None:
    """The document's whole text (its chunks joined), or None when the collection has no
    document with this id."""
    found = slice_.query(
        "SELECT d.id FROM {prefix}documents d JOIN {prefix}collections c "
        "ON c.id = d.collection WHERE c.name = ? AND d.id = ?",
        (collection, document_id),
    )
    if not found:
        return None
    rows = slice_.query(
        "SELECT body FROM {prefix}chunks WHERE document = ? ORDER BY seq", (document_id,)
    )
    return "".join(row[0] for row in rows)


def _collection_id(slice_: OwnerSlice, collection: str) -> int:
    rows = slice_.query("SELECT id FROM {prefix}collections WHERE name = ?", (collection,))
    if not rows:
        known = ", ".join(collection_names(slice_)) or "none yet"
        raise KnowledgeError(
            f"unknown collection {collection!r} (collections: {known})", collection=collection
        )
    return int(rows[0][0])
