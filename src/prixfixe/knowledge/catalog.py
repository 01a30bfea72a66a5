"""Reading the knowledge base back: collections with their counts, a collection's documents
(whole or a page at a time), every document as a listed resource, a document's text, its
chunks' heads (for outlines and sections) and a span of its chunks, and a collection's
statistics. Blocking (the store's slice): call from a worker thread in async code.

No listing reads a document's text (an outline reads each chunk's first characters), and
listing documents for `resources/list` is one query a page over the documents table."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from prixfixe.errors import KnowledgeError
from prixfixe.knowledge.backend import KnowledgeTables, greatest, octets, total

#: The resources' URIs: the list of collections, and one collection's documents (a page at a
#: time: `?cursor=` continues a listing) and document.
COLLECTIONS_URI = "prixfixe://knowledge/collections"
DOCUMENTS_TEMPLATE = "prixfixe://knowledge/{collection}/documents{?cursor}"
DOCUMENT_TEMPLATE = "prixfixe://knowledge/{collection}/document/{id}"
#: A document's sections (seq, heading, level, bytes, URI), one section (a chunk and the
#: chunks under deeper headings after it) and a span of chunks (`3` or `3-5`).
OUTLINE_TEMPLATE = "prixfixe://knowledge/{collection}/document/{id}/outline"
SECTION_TEMPLATE = "prixfixe://knowledge/{collection}/document/{id}/section/{seq}"
CHUNKS_TEMPLATE = "prixfixe://knowledge/{collection}/document/{id}/chunks/{span}"
#: A collection's counts and last change, and the knowledge base's health (index state,
#: counts, last ingest), beside `prixfixe://system/health`.
STATS_TEMPLATE = "prixfixe://knowledge/{collection}/stats"
HEALTH_URI = "prixfixe://knowledge/health"
#: Search as a resource: the hits for `q`, as markdown with each hit's section URI.
SEARCH_TEMPLATE = "prixfixe://knowledge/search{?q,collection,path,format,limit}"
#: How `document_uri` is spelled in SQL, so a listing can sort and page by URI in the query.
_DOCUMENT_URI_SQL = "'prixfixe://knowledge/' || c.name || '/document/' || d.id"


def documents_uri(collection: str, cursor: str | None = None) -> str:
    """A collection's documents listing; with `cursor`, the page that continues after it."""
    uri = f"prixfixe://knowledge/{collection}/documents"
    return f"{uri}?cursor={quote(cursor, safe='')}" if cursor else uri


def document_uri(collection: str, document_id: int) -> str:
    return f"prixfixe://knowledge/{collection}/document/{document_id}"


def outline_uri(collection: str, document_id: int) -> str:
    return f"prixfixe://knowledge/{collection}/document/{document_id}/outline"


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


def collections(slice_: KnowledgeTables) -> list[CollectionInfo]:
    chunks = total(slice_, "(SELECT COUNT(*) FROM {prefix}chunks k WHERE k.document = d.id)")
    rows = slice_.query(
        f"SELECT c.name, COUNT(d.id), {chunks}, {total(slice_, 'd.bytes')}, "
        f"{greatest(slice_)}(c.created_gen, COALESCE(MAX(d.gen), 0)) "
        "FROM {prefix}collections c LEFT JOIN {prefix}documents d ON d.collection = c.id "
        "GROUP BY c.id ORDER BY c.name"
    )
    return [CollectionInfo(*row) for row in rows]


def collection_names(slice_: KnowledgeTables) -> list[str]:
    return [row[0] for row in slice_.query("SELECT name FROM {prefix}collections ORDER BY name")]


@dataclass(frozen=True)
class ListedDocument:
    """A document as `resources/list` shows it: its URI, path, title and size."""

    uri: str
    path: str
    title: str
    bytes: int


@dataclass(frozen=True)
class ChunkHead:
    """What an outline needs of a chunk, without its body: its seq and heading, its size in
    bytes (UTF-8) and its first characters (its heading line, or where a text chunk starts)."""

    seq: int
    heading: str
    bytes: int
    start: str


@dataclass(frozen=True)
class DocumentHeads:
    id: int
    path: str
    title: str
    format: str
    chunks: list[ChunkHead]


@dataclass(frozen=True)
class CollectionStats:
    name: str
    documents: int
    chunks: int
    bytes: int
    formats: dict[str, int]
    gen: int
    largest: list[tuple[int, str, int]]  # (id, path, bytes), largest first


_DOCUMENT_COLUMNS = (
    "SELECT d.id, d.path, d.title, d.format, d.hash, d.bytes, "
    "(SELECT COUNT(*) FROM {prefix}chunks k WHERE k.document = d.id), d.gen "
    "FROM {prefix}documents d JOIN {prefix}collections c ON c.id = d.collection "
)
#: How many characters of a chunk an outline reads: enough for a heading line's `#`s and to
#: show where a text chunk starts.
HEAD_CHARS = 80


def documents(slice_: KnowledgeTables, collection: str) -> list[DocumentInfo]:
    """The collection's documents by path; an unknown collection is a `KnowledgeError`."""
    collection_id(slice_, collection)
    rows = slice_.query(_DOCUMENT_COLUMNS + "WHERE c.name = ? ORDER BY d.path", (collection,))
    return [DocumentInfo(*row) for row in rows]


def documents_page(
    slice_: KnowledgeTables, collection: str, after: str | None, limit: int
) -> tuple[list[DocumentInfo], bool]:
    """Up to `limit` of the collection's documents whose paths sort after `after`, by path,
    and whether more follow. An unknown collection is a `KnowledgeError`."""
    collection_id(slice_, collection)
    rows = slice_.query(
        _DOCUMENT_COLUMNS + "WHERE c.name = ? AND d.path > ? ORDER BY d.path LIMIT ?",
        (collection, after or "", limit + 1),
    )
    return [DocumentInfo(*row) for row in rows[:limit]], len(rows) > limit


def listed_documents(
    slice_: KnowledgeTables, after: str | None, limit: int
) -> list[ListedDocument]:
    """Every collection's documents as listed resources: up to `limit` whose URIs sort after
    `after`, by URI (SQLite compares UTF-8 bytes, which orders as Python orders strings)."""
    rows = slice_.query(
        "SELECT uri, path, title, bytes FROM ("
        f"SELECT {_DOCUMENT_URI_SQL} AS uri, d.path AS path, d.title AS title, d.bytes AS bytes "
        "FROM {prefix}documents d JOIN {prefix}collections c ON c.id = d.collection"
        ") AS listed WHERE uri > ? ORDER BY uri LIMIT ?",
        (after or "", limit),
    )
    return [ListedDocument(*row) for row in rows]


def document_heads(
    slice_: KnowledgeTables, collection: str, document_id: int
) -> DocumentHeads | None:
    """The document's chunks without their bodies, or None when the collection has no
    document with this id."""
    found = slice_.query(
        "SELECT d.id, d.path, d.title, d.format FROM {prefix}documents d "
        "JOIN {prefix}collections c ON c.id = d.collection WHERE c.name = ? AND d.id = ?",
        (collection, document_id),
    )
    if not found:
        return None
    rows = slice_.query(
        f"SELECT seq, heading, {octets(slice_, 'body')}, substr(body, 1, ?) "
        "FROM {prefix}chunks WHERE document = ? ORDER BY seq",
        (HEAD_CHARS, document_id),
    )
    document, path, title, fmt = found[0]
    return DocumentHeads(document, path, title, fmt, [ChunkHead(*row) for row in rows])


def chunks_text(slice_: KnowledgeTables, document_id: int, first: int, last: int) -> str:
    """Chunks `first` to `last` (inclusive) of a document, joined."""
    rows = slice_.query(
        "SELECT body FROM {prefix}chunks WHERE document = ? AND seq BETWEEN ? AND ? ORDER BY seq",
        (document_id, first, last),
    )
    return "".join(row[0] for row in rows)


def collection_stats(slice_: KnowledgeTables, collection: str, largest: int = 5) -> CollectionStats:
    """A collection's counts, formats, last change and largest documents; an unknown
    collection is a `KnowledgeError`."""
    row_id = collection_id(slice_, collection)
    ((documents_, bytes_, chunks, gen),) = slice_.query(
        f"SELECT COUNT(d.id), {total(slice_, 'd.bytes')}, "
        "(SELECT COUNT(*) FROM {prefix}chunks k JOIN {prefix}documents e ON e.id = k.document "
        f"WHERE e.collection = c.id), {greatest(slice_)}(c.created_gen, COALESCE(MAX(d.gen), 0)) "
        "FROM {prefix}collections c LEFT JOIN {prefix}documents d ON d.collection = c.id "
        "WHERE c.id = ? GROUP BY c.id",
        (row_id,),
    )
    formats = slice_.query(
        "SELECT format, COUNT(*) FROM {prefix}documents WHERE collection = ? "
        "GROUP BY format ORDER BY format",
        (row_id,),
    )
    biggest = slice_.query(
        "SELECT id, path, bytes FROM {prefix}documents WHERE collection = ? "
        "ORDER BY bytes DESC, path LIMIT ?",
        (row_id, largest),
    )
    return CollectionStats(
        collection,
        documents_,
        chunks,
        bytes_,
        {str(f): int(n) for f, n in formats},
        gen,
        [(int(i), str(p), int(b)) for i, p, b in biggest],
    )


def document_text(slice_: KnowledgeTables, collection: str, document_id: int) -> str | None:
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


def collection_id(slice_: KnowledgeTables, collection: str) -> int:
    """The collection's row id; an unknown collection is a `KnowledgeError` naming the ones
    there are."""
    rows = slice_.query("SELECT id FROM {prefix}collections WHERE name = ?", (collection,))
    if not rows:
        known = ", ".join(collection_names(slice_)) or "none yet"
        raise KnowledgeError(
            f"unknown collection {collection!r} (collections: {known})", collection=collection
        )
    return int(rows[0][0])
