"""Chunk embeddings for hybrid search: stored beside the chunks, kept current, read into memory.

One engine ranks tools and documents: the embedder is tool search's (wordllama, a dependency,
`prixfixe.search.semantic`; switched on for documents by `[search] knowledge_semantic`) and so
is the fusion (`search.find`). Here:

* `embed_pending(slice_, embedder)`: embed the chunks that have no vector, a batch per
  transaction; what every writer calls after an ingest. Nothing pending costs two one-row reads.
* the `embedding_model` record: which model and width made the stored vectors, and when. A
  store whose vectors another model made is never re-embedded silently: `embed_pending` writes
  nothing, search runs keyword-only and says why, and only `reembed` (explicit) rebuilds.
* `chunk_vectors(slice_, record)`: every vector as one float32 matrix, kept in memory per store
  version (the record's `version` changes with every vector written or deleted), so a search
  reads the table again only after a change.

Vectors are stored as float16 (two bytes a dimension: 512 bytes a chunk for wordllama's 256)
and searched brute force with numpy. On a PostgreSQL store there are none yet: nothing is
embedded there and search is keyword-only (`search.POSTGRES_NOTE`). numpy comes with
wordllama: this module imports it only inside the functions that need it, so the keyword path
never does.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from prixfixe.knowledge.backend import KnowledgeTables, postgres
from prixfixe.search.types import Embedder

_log = logging.getLogger(__name__)

#: Chunks embedded per batch, and per transaction: about 0.1 s of wordllama's time.
BATCH = 256
#: How vectors are stored; the record names it, so a later format is a mismatch, not garbage.
DTYPE = "float16"
#: The command that rebuilds vectors, named in notes.
REINDEX_COMMAND = "prixfixe kb reindex --embeddings"
_INSTALL = "pip install 'wordllama>=0.3.8,<0.4'"
#: Why nothing is embedded on a PostgreSQL store.
POSTGRES_WHY = "vectors are kept on a local (SQLite) store only, for now"


@dataclass(frozen=True)
class ModelRecord:
    """The model every stored vector was made with, and what the store holds of it."""

    model: str
    dims: int
    dtype: str
    created_gen: int
    created_at: str
    vectors: int
    #: Changes (to a random value) with every vector written or deleted.
    version: int


@dataclass(frozen=True)
class VectorState:
    """What the store holds, for health and stats: the record (None before any vector) and
    the chunk count."""

    record: ModelRecord | None
    chunks: int

    @property
    def pending(self) -> int:
        """Chunks without a vector (all of them before any vector was stored)."""
        return max(0, self.chunks - (self.record.vectors if self.record else 0))


def recorded_model(slice_: KnowledgeTables) -> ModelRecord | None:
    if postgres(slice_) is not None:
        return None  # vectors are kept on SQLite stores only, for now
    rows = slice_.query(
        "SELECT model, dims, dtype, created_gen, created_at, vectors, version "
        "FROM {prefix}embedding_model WHERE id = 1"
    )
    return ModelRecord(*rows[0]) if rows else None


def chunk_count(slice_: KnowledgeTables) -> int:
    return int(slice_.query("SELECT COUNT(*) FROM {prefix}chunks")[0][0])


def state(slice_: KnowledgeTables) -> VectorState:
    return VectorState(recorded_model(slice_), chunk_count(slice_))


def mismatch(record: ModelRecord, model_id: str, dims: int | None = None) -> str | None:
    """Why vectors of `record` cannot be compared with `model_id`'s (None when they can)."""
    if record.model != model_id or (dims is not None and record.dims != dims):
        return (
            f"vectors were made by {record.model} ({record.dims} dimensions), not by "
            f"{model_id}; run `{REINDEX_COMMAND}`"
        )
    if record.dtype != DTYPE:
        return f"vectors are stored as {record.dtype}, not {DTYPE}; run `{REINDEX_COMMAND}`"
    return None


def embed_text(title: str, heading: str, body: str) -> str:
    """What the embedder reads of a chunk: its text (a markdown chunk's starts with its
    heading), after the document's title when that is not the chunk's own heading."""
    text = body.strip()
    return f"{title}\n{text}" if title and title != heading else text


def load_embedder() -> tuple[Embedder | None, str]:
    """The embedder `[search] knowledge_semantic` uses, loaded once per process, shared with tool
    search; else None and why (wordllama or numpy is missing, or ships no model)."""
    try:
        from prixfixe.search.semantic import SemanticUnavailableError, shared_wordllama
    except ImportError as exc:  # numpy, which wordllama brings, is missing
        missing = exc.name or "numpy"
        return None, (
            f"search.knowledge_semantic is on, but wordllama's dependencies are not installed "
            f"({missing} is missing); install it with: {_INSTALL}"
        )
    try:
        return shared_wordllama(), ""
    except SemanticUnavailableError as exc:
        return None, exc.message


def refresh(slice_: KnowledgeTables, *, semantic: bool) -> tuple[int, str]:
    """After a write: embed the chunks it added when `[search] knowledge_semantic` is on; how many
    vectors were written, and why none could be ("" when they could). Never fails the write
    it follows: without wordllama, or with vectors made by another model (then search says
    so, and `kb reindex --embeddings` is the fix), it writes nothing. Blocking: call from a
    worker thread."""
    if not semantic:
        return 0, ""
    if postgres(slice_) is not None:
        return 0, POSTGRES_WHY
    embedder, why = load_embedder()
    if embedder is None:
        _log.debug("chunks not embedded: %s", why)
        return 0, why
    return embed_pending(slice_, embedder), ""


_PENDING = (
    "SELECT k.id, d.title, k.heading, k.body FROM {prefix}chunks k "
    "JOIN {prefix}documents d ON d.id = k.document "
    "WHERE k.id > ? AND NOT EXISTS (SELECT 1 FROM {prefix}vectors v WHERE v.chunk = k.id) "
    "ORDER BY k.id LIMIT ?"
)
_CREATE_RECORD = (
    "INSERT INTO {prefix}embedding_model (id, model, dims, dtype, created_gen, created_at) "
    "VALUES (1, :model, :dims, :dtype, :generation, :at) ON CONFLICT (id) DO NOTHING"
)
# Written only if the chunk still holds the text embedded (a re-ingest replaces chunks) and
# the record still names this model (another process may have rebuilt meanwhile); a chunk
# another writer embedded first is left as it is.
_INSERT = (
    "INSERT OR IGNORE INTO {prefix}vectors (chunk, vector) SELECT :chunk, :vector "
    "WHERE EXISTS (SELECT 1 FROM {prefix}chunks WHERE id = :chunk AND body = :body) "
    "AND EXISTS (SELECT 1 FROM {prefix}embedding_model "
    "WHERE id = 1 AND model = :model AND dims = :dims AND dtype = :dtype)"
)


def embed_pending(slice_: KnowledgeTables, embedder: Embedder, *, batch: int = BATCH) -> int:
    """Embed every chunk that has no vector, `batch` chunks a transaction; returns how many
    vectors were written. Blocking (call it from a worker thread in async code).

    Writes nothing when the stored vectors were made by another model: `reembed` is the one
    way to replace them, and search says so meanwhile. Nothing pending costs two one-row
    reads."""
    if postgres(slice_) is not None:
        return 0
    import numpy as np

    from prixfixe.search.semantic import unit_rows

    record = recorded_model(slice_)
    if record is not None:
        if mismatch(record, embedder.model_id) is not None:
            return 0
        if record.vectors >= chunk_count(slice_):
            return 0
    written, after = 0, 0
    while True:
        rows = slice_.query(_PENDING, (after, batch))
        if not rows:
            return written
        after = int(rows[-1][0])
        vectors = unit_rows(embedder.embed([embed_text(t, h, b) for _, t, h, b in rows]))
        dims = int(vectors.shape[1])
        if record is not None and record.dims != dims:
            return written
        blobs = vectors.astype(np.float16)
        model = {"model": embedder.model_id, "dims": dims, "dtype": DTYPE}
        statements: list[tuple[str, Mapping[str, Any]]] = []
        if record is None:
            statements.append((_CREATE_RECORD, {**model, "at": _now()}))
        statements += [
            (_INSERT, {**model, "chunk": row[0], "body": row[3], "vector": blob.tobytes()})
            for row, blob in zip(rows, blobs, strict=True)
        ]
        before = record.vectors if record is not None else 0
        slice_.execute_batch(statements)
        record = recorded_model(slice_)
        if record is None or mismatch(record, embedder.model_id, dims) is not None:
            return written  # rebuilt by another model meanwhile: leave it to that one
        if record.vectors <= before:
            return written  # another writer is embedding the same chunks
        written += record.vectors - before


def reembed(slice_: KnowledgeTables, embedder: Embedder, *, batch: int = BATCH) -> int:
    """Drop every stored vector and the model record, then embed every chunk with `embedder`;
    returns how many vectors were written. The explicit way to change model."""
    if postgres(slice_) is not None:
        return 0
    # The record goes first, so the delete triggers have no row to count down.
    slice_.execute_batch(
        [
            ("DELETE FROM {prefix}embedding_model", {}),
            ("DELETE FROM {prefix}vectors", {}),
        ]
    )
    return embed_pending(slice_, embedder, batch=batch)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class ChunkVectors:
    """Every stored vector of one store version: chunk ids ascending and their unit vectors
    (float32 rows, in the same order)."""

    version: int
    model: str
    ids: Any
    matrix: Any

    def __len__(self) -> int:
        return len(self.ids)

    def rows(self, chunk_ids: Sequence[int]) -> list[int | None]:
        """Each chunk's row in the matrix, None for a chunk without a vector."""
        import numpy as np

        if not len(self.ids):
            return [None] * len(chunk_ids)
        wanted = np.asarray(chunk_ids, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)
        found = self.ids[at] == wanted
        return [int(row) if hit else None for row, hit in zip(at, found, strict=True)]


#: Matrices in memory by (model, version): a store changes version with every vector write,
#: so an entry is current as long as its store is unchanged. Two are kept (one store is usual;
#: the second is the one being replaced, or a test's).
_LOADED: OrderedDict[tuple[str, int], ChunkVectors] = OrderedDict()
_KEEP = 2
_LOADED_LOCK = threading.Lock()


def chunk_vectors(slice_: KnowledgeTables, record: ModelRecord) -> ChunkVectors:
    """The store's vectors as one matrix: from memory when the store has not changed since
    they were read, else read in one statement (one snapshot, its version with it)."""
    key = (record.model, record.version)
    with _LOADED_LOCK:
        found = _LOADED.get(key)
        if found is not None:
            _LOADED.move_to_end(key)
            return found
    loaded = _read(slice_, record)
    with _LOADED_LOCK:
        _LOADED[(loaded.model, loaded.version)] = loaded
        while len(_LOADED) > _KEEP:
            _LOADED.popitem(last=False)
    return loaded


def forget_loaded() -> None:
    """Drop every matrix kept in memory (the next search reads its store's vectors again)."""
    with _LOADED_LOCK:
        _LOADED.clear()


def _read(slice_: KnowledgeTables, record: ModelRecord) -> ChunkVectors:
    import numpy as np

    # One statement, so one snapshot: the version read is the one these vectors are at (a
    # rebuild by another model meanwhile changes it too, so the next search reads again).
    rows = slice_.query(
        "SELECT v.chunk, v.vector, (SELECT version FROM {prefix}embedding_model WHERE id = 1) "
        "FROM {prefix}vectors v ORDER BY v.chunk"
    )
    dims = record.dims
    if not rows:
        empty = np.zeros((0, dims), dtype=np.float32)
        return ChunkVectors(record.version, record.model, np.zeros(0, dtype=np.int64), empty)
    width = dims * 2
    joined = b"".join(row[1] for row in rows)
    if len(joined) != width * len(rows):
        # A vector of the wrong length (a damaged row) is left out rather than misread.
        rows = [row for row in rows if len(row[1]) == width]
        joined = b"".join(row[1] for row in rows)
    ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    # Stored unit vectors stay unit to within float16's precision: not normalised again.
    matrix = np.frombuffer(joined, dtype=np.float16).reshape(len(rows), dims).astype(np.float32)
    return ChunkVectors(int(rows[0][2]), record.model, ids, matrix)
