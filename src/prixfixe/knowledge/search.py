"""Search over chunks: SQLite FTS5's BM25, fused with dense embeddings when they are on; on a
PostgreSQL store, its full-text search (`ts_rank_cd`, see `pg`), keyword-only.

A query is words, never FTS5 syntax: each word is quoted and the words are OR-ed, so BM25
ranks chunks holding more (and rarer) of them first and no query can be a syntax error. A
match in a chunk's heading weighs twice one in its body.

Hybrid: with `[search] knowledge_semantic` (or an embedder given) and the stored chunk vectors
made by that embedder's model (`vectors`), each chunk's score is tool search's fused score: its
lexical confidence (its BM25 as a share of what the query's words could give at most, the same
normalisation as `prixfixe.search`) plus `dense_weight` times the cosine of its vector to the
query's, over every stored vector (brute force, numpy). The fusion and its constants are
`prixfixe.search`'s own, so tools and documents are ranked by one engine. Otherwise the
search is keyword-only, and says why when hybrid was asked for (`Found.note`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from prixfixe.errors import KnowledgeError
from prixfixe.knowledge import vectors
from prixfixe.knowledge.backend import KnowledgeTables, postgres
from prixfixe.knowledge.catalog import document_uri, section_uri
from prixfixe.search import DEFAULT_TUNING, Embedder, Tuning

#: How many hits a search returns unless asked for fewer or more, and at most.
DEFAULT_LIMIT = 10
MAX_LIMIT = 100
#: Words around a match in a snippet, and how matches are marked (markdown bold).
SNIPPET_TOKENS = 16
_WORD = re.compile(r"\w+", re.UNICODE)
#: Hybrid: how many of the best BM25 chunks bring their lexical confidence to the fusion (a
#: chunk further down the keyword ranking is fused with its cosine alone).
LEXICAL_POOL = 50
#: Why a search asked to be hybrid runs keyword-only on a PostgreSQL store.
POSTGRES_NOTE = (
    "hybrid search needs a local (SQLite) store for now; on PostgreSQL this search is "
    "keyword-only (PostgreSQL full-text search)"
)
#: FTS5's BM25 saturation constant: a word can add at most `idf * (K1 + 1)` to a score.
FTS5_K1 = 1.2


@dataclass(frozen=True)
class Hit:
    collection: str
    document_id: int
    path: str
    title: str
    chunk: int  # the chunk's seq within its document
    heading: str
    snippet: str
    #: Lower is better in both modes: BM25 (SQLite's sign) in keyword mode, minus the fused
    #: score in hybrid mode.
    score: float

    @property
    def uri(self) -> str:
        return document_uri(self.collection, self.document_id)

    @property
    def section_uri(self) -> str:
        """The section this chunk starts: what an agent reads to see the match in context."""
        return section_uri(self.collection, self.document_id, self.chunk)


#: How a search ranked: BM25 over words only, or fused with dense embeddings.
SearchMode = Literal["keyword", "hybrid"]


@dataclass(frozen=True)
class Found:
    """A search's hits, best first, with the mode it ran in and, when it ran keyword-only
    though hybrid was asked of it, why (`note`)."""

    hits: list[Hit]
    mode: SearchMode = "keyword"
    note: str = ""
    filters: dict[str, str] = field(default_factory=dict)


def match_expression(query: str) -> str:
    words = _WORD.findall(query)
    if not words:
        raise KnowledgeError(f"search query {query!r} has no words to look for", query=query)
    return " OR ".join(f'"{word}"' for word in dict.fromkeys(w.lower() for w in words))


def find(
    slice_: KnowledgeTables,
    query: str,
    *,
    collection: str | None = None,
    path: str | None = None,
    format: str | None = None,
    limit: int = DEFAULT_LIMIT,
    semantic: bool = False,
    embedder: Embedder | None = None,
) -> Found:
    """The search every reader uses (resources, the `kb-search` step, the CLI): the best
    `limit` chunks for `query`, filtered by collection, document path (a glob, `notes/*`)
    and format, with the mode it ran in.

    Hybrid when `semantic` (`[search] knowledge_semantic`: the shared wordllama model) or `embedder`
    is given and the stored vectors were made by that model; else keyword, with a `note`
    saying why when hybrid was asked for. Blocking: call from a worker thread."""
    filters = {
        k: v for k, v in (("collection", collection), ("path", path), ("format", format)) if v
    }
    where = _Filters(collection, path, format)
    expression = match_expression(query)  # no words: the same error in either mode
    ready = hybrid_ready(slice_, embedder) if semantic or embedder is not None else ""
    if isinstance(ready, str):
        hits = [hit for _, hit in _lexical(slice_, expression, where, limit)]
        return Found(hits, "keyword", note=ready, filters=filters)
    hits, mode, note = _hybrid(slice_, query, expression, where, limit, *ready)
    return Found(hits, mode, note=note, filters=filters)


def hybrid_ready(
    slice_: KnowledgeTables, embedder: Embedder | None = None
) -> tuple[Embedder, vectors.ModelRecord] | str:
    """Whether a search asked to be hybrid can be: the embedder (`embedder`, else the shared
    `[search] knowledge_semantic` one) and the vectors' record, or why not (a note naming the
    fix)."""
    if postgres(slice_) is not None:
        return POSTGRES_NOTE
    if embedder is None:
        embedder, why = vectors.load_embedder()
        if embedder is None:
            return f"hybrid search is unavailable: {why}"
    record = vectors.recorded_model(slice_)
    if record is None:
        if not vectors.chunk_count(slice_):
            return ""  # nothing to search: nothing to say
        return (
            "no chunk has a vector yet, so this search is keyword-only; "
            f"run `{vectors.REINDEX_COMMAND}`"
        )
    why_not = vectors.mismatch(record, embedder.model_id)
    if why_not is not None:
        return why_not
    return embedder, record


def expected_mode(
    slice_: KnowledgeTables, *, semantic: bool, embedder: Embedder | None = None
) -> tuple[SearchMode, str]:
    """The mode `find` with these settings runs in now, and its note: for health and stats
    (a mismatch only a query's vector can show, another width under the same model name, is
    found by the search itself)."""
    if not semantic and embedder is None:
        return "keyword", ""
    ready = hybrid_ready(slice_, embedder)
    return ("keyword", ready) if isinstance(ready, str) else ("hybrid", "")


def search(
    slice_: KnowledgeTables,
    query: str,
    *,
    collection: str | None = None,
    path: str | None = None,
    format: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[Hit]:
    """The best `limit` chunks for `query` by BM25, best first, optionally filtered by
    collection, document path glob and format."""
    where = _Filters(collection, path, format)
    return [hit for _, hit in _lexical(slice_, match_expression(query), where, limit)]


@dataclass(frozen=True)
class _Filters:
    collection: str | None
    path: str | None
    format: str | None

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.collection, self.path, self.format))

    def sql(self) -> tuple[str, list[object]]:
        """` AND ...` conditions on `c` (collections) and `d` (documents), and their values."""
        where = ""
        params: list[object] = []
        for column, value in (
            ("c.name", self.collection),
            ("d.path", self.path),
            ("d.format", self.format),
        ):
            if value is not None:
                where += f" AND {column} {'GLOB' if column == 'd.path' else '='} ?"
                params.append(value)
        return where, params

    def pg_sql(self) -> tuple[str, list[object]]:
        """The same conditions for PostgreSQL: the path glob as a regex (`pg.glob_regex`)."""
        from prixfixe.knowledge.pg import glob_regex

        where = ""
        params: list[object] = []
        regex = None if self.path is None else glob_regex(self.path)
        if self.path is not None and regex is None:
            where += " AND FALSE"  # a glob nothing can match
        for column, op, value in (
            ("c.name", "=", self.collection),
            ("d.path", "~", regex),
            ("d.format", "=", self.format),
        ):
            if value is not None:
                where += f" AND {column} {op} ?"
                params.append(value)
        return where, params


def _lexical(
    slice_: KnowledgeTables, expression: str, where: _Filters, limit: int
) -> list[tuple[int, Hit]]:
    """The best `limit` chunks for an FTS5 expression by BM25, with each chunk's id."""
    limit = max(1, min(limit, MAX_LIMIT))
    pg = postgres(slice_)
    if pg is not None:
        words = re.findall(r'"([^"]*)"', expression)
        conditions, values = where.pg_sql()
        found = pg.lexical(words, conditions, values, limit)
        return [
            (int(chunk), Hit(name, doc, path, title, seq, heading, snippet, float(score)))
            for name, doc, path, title, seq, heading, snippet, score, chunk in found
        ]
    conditions, values = where.sql()
    rows = slice_.query(
        "SELECT c.name, d.id, d.path, d.title, k.seq, k.heading, "
        f"snippet({{prefix}}chunks_fts, 1, '**', '**', '…', {SNIPPET_TOKENS}), "
        "bm25({prefix}chunks_fts, 2.0, 1.0) AS score, k.id "
        "FROM {prefix}chunks_fts JOIN {prefix}chunks k ON k.id = {prefix}chunks_fts.rowid "
        "JOIN {prefix}documents d ON d.id = k.document "
        "JOIN {prefix}collections c ON c.id = d.collection "
        f"WHERE {{prefix}}chunks_fts MATCH ?{conditions} ORDER BY score LIMIT ?",
        [expression, *values, limit],
    )
    return [(int(row[8]), Hit(*row[:8])) for row in rows]


def _evidence(slice_: KnowledgeTables, expression: str, chunks: int, tuning: Tuning) -> float:
    """The most BM25 the query's words could give one chunk, as `prixfixe.search` measures a
    query's information: each word's IDF (FTS5's), a word no chunk holds at the largest,
    summed and capped at `evidence_cap` fully informative words; times `K1 + 1`, the most one
    word's saturated frequency can reach in FTS5's BM25."""
    unseen = math.log((chunks + 0.5) / 0.5)
    mass = 0.0
    for phrase in expression.split(" OR "):
        ((held,),) = slice_.query(
            "SELECT COUNT(*) FROM {prefix}chunks_fts WHERE {prefix}chunks_fts MATCH ?",
            (phrase,),
        )
        idf = math.log((chunks - held + 0.5) / (held + 0.5)) if held else unseen
        mass += max(idf, 1e-6)  # FTS5's floor for a word most chunks hold
    return (FTS5_K1 + 1.0) * min(mass, tuning.evidence_cap * unseen)


def _hybrid(
    slice_: KnowledgeTables,
    query: str,
    expression: str,
    where: _Filters,
    limit: int,
    embedder: Embedder,
    record: vectors.ModelRecord,
    tuning: Tuning = DEFAULT_TUNING,
) -> tuple[list[Hit], SearchMode, str]:
    import numpy as np

    from prixfixe.search.semantic import cosines, fuse, query_vector, top_fused

    limit = max(1, min(limit, MAX_LIMIT))
    vector = query_vector(embedder, query)
    why_not = vectors.mismatch(record, embedder.model_id, len(vector))
    if why_not is not None:
        return [hit for _, hit in _lexical(slice_, expression, where, limit)], "keyword", why_not
    stored = vectors.chunk_vectors(slice_, record)
    chunks = vectors.chunk_count(slice_)
    pool = _lexical(slice_, expression, where, max(limit, LEXICAL_POOL))
    evidence = _evidence(slice_, expression, chunks, tuning) if pool else 1.0
    confidence = {chunk: -hit.score / evidence for chunk, hit in pool}

    # Every stored vector's fused score; chunks the filters exclude cannot be chosen.
    rows = stored.rows([chunk for chunk, _ in pool])
    lexical = {
        row: confidence[chunk]
        for row, (chunk, _) in zip(rows, pool, strict=True)
        if row is not None
    }
    fused = fuse(cosines(stored.matrix, vector), lexical, tuning.dense_weight)
    k = limit
    if where and len(fused):
        allowed = np.isin(stored.ids, _filtered_ids(slice_, where), assume_unique=True)
        fused[~allowed] = -np.inf
        k = min(limit, int(allowed.sum()))
    scored = {int(stored.ids[row]): score for row, score in top_fused(fused, k) if score != -np.inf}
    # A chunk the keyword search found that has no vector yet keeps its lexical confidence.
    for row, (chunk, _) in zip(rows, pool, strict=True):
        if row is None:
            scored[chunk] = confidence[chunk]
    best = sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:limit]

    found = dict(pool)
    missing = [chunk for chunk, _ in best if chunk not in found]
    found.update(_dense_hits(slice_, missing))
    hits = [replace(found[chunk], score=-score) for chunk, score in best]
    pending = chunks - len(stored)
    note = (
        f"{pending} of {chunks} chunks have no vector yet and were ranked by keyword only; "
        f"run `{vectors.REINDEX_COMMAND}`"
        if pending > 0
        else ""
    )
    return hits, "hybrid", note


def _filtered_ids(slice_: KnowledgeTables, where: _Filters) -> Any:
    import numpy as np

    conditions, values = where.sql()
    rows = slice_.query(
        "SELECT k.id FROM {prefix}chunks k JOIN {prefix}documents d ON d.id = k.document "
        f"JOIN {{prefix}}collections c ON c.id = d.collection WHERE 1{conditions}",
        values,
    )
    return np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))


def _dense_hits(slice_: KnowledgeTables, chunk_ids: Sequence[int]) -> dict[int, Hit]:
    """Hits for chunks that share no word with the query: their snippet is their opening
    words (after a markdown heading line), nothing in bold."""
    if not chunk_ids:
        return {}
    marks = ", ".join("?" * len(chunk_ids))
    rows = slice_.query(
        "SELECT k.id, c.name, d.id, d.path, d.title, k.seq, k.heading, k.body "
        "FROM {prefix}chunks k JOIN {prefix}documents d ON d.id = k.document "
        f"JOIN {{prefix}}collections c ON c.id = d.collection WHERE k.id IN ({marks})",
        list(chunk_ids),
    )
    return {
        int(chunk): Hit(
            name, int(doc), path, title, int(seq), heading, _opening(heading, body), 0.0
        )
        for chunk, name, doc, path, title, seq, heading, body in rows
    }


def _opening(heading: str, body: str) -> str:
    words = body.split()
    first, _, rest = body.lstrip().partition("\n")
    if heading and first.startswith("#") and rest.split():
        words = rest.split()  # the heading is shown beside the snippet already
    text = " ".join(words[:SNIPPET_TOKENS])
    return text + "…" if len(words) > SNIPPET_TOKENS else text
