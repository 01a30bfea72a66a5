"""Keyword search over chunks: SQLite FTS5, ranked by BM25, with a snippet of each match.

A query is words, never FTS5 syntax: each word is quoted and the words are OR-ed, so BM25
ranks chunks holding more (and rarer) of them first and no query can be a syntax error. A
match in a chunk's heading weighs twice one in its body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from prixfixe.errors import KnowledgeError
from prixfixe.knowledge.catalog import document_uri, section_uri
from prixfixe.store.api import OwnerSlice

#: How many hits a search returns unless asked for fewer or more, and at most.
DEFAULT_LIMIT = 10
MAX_LIMIT = 100
#: Words around a match in a snippet, and how matches are marked (markdown bold).
SNIPPET_TOKENS = 16
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    collection: str
    document_id: int
    path: str
    title: str
    chunk: int  # the chunk's seq within its document
    heading: str
    snippet: str
    score: float  # BM25: lower is better (SQLite's sign)

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
    slice_: OwnerSlice,
    query: str,
    *,
    collection: str | None = None,
    path: str | None = None,
    format: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> Found:
    """The search every reader uses (resources, the `kb-search` step, the CLI): the best
    `limit` chunks for `query`, filtered by collection, document path (a glob, `notes/*`)
    and format, with the mode it ran in."""
    hits = search(slice_, query, collection=collection, path=path, format=format, limit=limit)
    filters = {
        k: v for k, v in (("collection", collection), ("path", path), ("format", format)) if v
    }
    return Found(hits, "keyword", filters=filters)


def search(
    slice_: OwnerSlice,
    query: str,
    *,
    collection: str | None = None,
    path: str | None = None,
    format: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[Hit]:
    """The best `limit` chunks for `query` by BM25, best first, optionally filtered by
    collection, document path glob and format."""
    limit = max(1, min(limit, MAX_LIMIT))
    params: list[object] = [match_expression(query)]
    where = ""
    for column, value in (("c.name", collection), ("d.path", path), ("d.format", format)):
        if value is not None:
            where += f" AND {column} {'GLOB' if column == 'd.path' else '='} ?"
            params.append(value)
    params.append(limit)
    rows = slice_.query(
        "SELECT c.name, d.id, d.path, d.title, k.seq, k.heading, "
        f"snippet({{prefix}}chunks_fts, 1, '**', '**', '…', {SNIPPET_TOKENS}), "
        "bm25({prefix}chunks_fts, 2.0, 1.0) AS score "
        "FROM {prefix}chunks_fts JOIN {prefix}chunks k ON k.id = {prefix}chunks_fts.rowid "
        "JOIN {prefix}documents d ON d.id = k.document "
        "JOIN {prefix}collections c ON c.id = d.collection "
        f"WHERE {{prefix}}chunks_fts MATCH ?{where} ORDER BY score LIMIT ?",
        params,
    )
    return [Hit(*row) for row in rows]
