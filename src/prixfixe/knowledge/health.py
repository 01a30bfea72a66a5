"""The knowledge base's health as one JSON document: `prixfixe://knowledge/health`.

Counts (collections, documents, chunks, bytes), the collections, the generation of the last
change, the search mode, and the full-text index's state: whether every chunk has its index
entry and the index holds nothing else, read from FTS5's own per-row table (`_docsize`, one
row per indexed chunk) — cheap, and a read: FTS5's `integrity-check` is a write command,
which would advance the store generation and announce a change on every health read. On
PostgreSQL each chunk's `tsvector` is a generated column of its own row: the check counts
them and looks for the GIN index.
Like `prixfixe://system/health`, whatever is wrong is reported in the document
(`status: "degraded"` and the reason), never raised. Blocking: call from a worker thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from prixfixe.errors import PrixfixeError
from prixfixe.knowledge import KNOWLEDGE_OWNER, search, vectors
from prixfixe.knowledge.backend import KnowledgeTables, greatest, postgres, tables_of, total
from prixfixe.store.api import Store

FORMAT = "prixfixe.knowledge-health/1"


def index_state(slice_: KnowledgeTables) -> dict[str, Any]:
    pg = postgres(slice_)
    if pg is not None:  # a generated tsvector column: nothing to fall out of step but its index
        return pg.index_state()
    ((chunks, indexed, missing, orphans),) = slice_.query(
        "SELECT (SELECT COUNT(*) FROM {prefix}chunks), "
        "(SELECT COUNT(*) FROM {prefix}chunks_fts_docsize), "
        "(SELECT COUNT(*) FROM {prefix}chunks k WHERE NOT EXISTS "
        "(SELECT 1 FROM {prefix}chunks_fts_docsize s WHERE s.id = k.id)), "
        "(SELECT COUNT(*) FROM {prefix}chunks_fts_docsize s WHERE NOT EXISTS "
        "(SELECT 1 FROM {prefix}chunks k WHERE k.id = s.id))"
    )
    state = "ok" if not missing and not orphans else "out of step"
    return {
        "state": state,
        "chunks": chunks,
        "indexed": indexed,
        "missing": missing,
        "orphans": orphans,
    }


def _totals(slice_: KnowledgeTables) -> dict[str, Any]:
    ((documents, bytes_, gen),) = slice_.query(
        f"SELECT COUNT(*), {total(slice_, 'bytes')}, {greatest(slice_)}("
        "COALESCE((SELECT MAX(created_gen) FROM {prefix}collections), 0), "
        "COALESCE(MAX(gen), 0)) FROM {prefix}documents"
    )
    names = [row[0] for row in slice_.query("SELECT name FROM {prefix}collections ORDER BY name")]
    return {
        "collections": len(names),
        "documents": documents,
        "bytes": bytes_,
        "collection_names": names,
        "last_change_gen": gen,
    }


def health(
    open_store: Callable[[], Store], owner: str, *, semantic: bool = False
) -> dict[str, Any]:
    """The health document; `open_store` gives the store (opening it may itself fail, which
    is reported like any other fault). `semantic` is `[search] knowledge_semantic`: whether searches
    ask to be hybrid, so the mode reported is the one they run in now (with why not)."""
    problems: list[str] = []
    found: dict[str, Any] = {}
    mode: search.SearchMode = "keyword"
    try:
        store = open_store()
        slice_ = tables_of(store) if owner == KNOWLEDGE_OWNER else store.slice(owner)
        index = index_state(slice_)
        found = {**_totals(slice_), "chunks": index["chunks"], "index": index}
        found["store_generation"] = store.generation()
        mode, note = search.expected_mode(slice_, semantic=semantic)
        if note:
            found["search_note"] = note
        state = vectors.state(slice_)
        if state.record is not None or semantic:
            found["vectors"] = {
                "model": state.record.model if state.record else None,
                "dims": state.record.dims if state.record else None,
                "vectors": state.record.vectors if state.record else 0,
                "pending": state.pending,
            }
    except (PrixfixeError, sqlite3.Error, OSError) as exc:
        message = exc.message if isinstance(exc, PrixfixeError) else f"{type(exc).__name__}: {exc}"
        problems.append(f"store: {message}")
    else:
        if index["state"] != "ok":
            problems.append(
                f"index: {index['missing']} chunks are not indexed and {index['orphans']} "
                "index entries have no chunk: search misses or mis-ranks them until the index "
                "is rebuilt"
            )
    return {
        "format": FORMAT,
        "status": "degraded" if problems else "ok",
        "problems": problems,
        "search_mode": mode,
        **found,
    }
