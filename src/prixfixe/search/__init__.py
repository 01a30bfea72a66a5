"""Rank named documents (tools, mostly) for a request in words, and say how sure the answer is.

The public ranking API of prixfixe: ``tool_search`` uses it through the tools' ``Finder``, the
benchmarks use it directly, and so can plugins. It depends on nothing else in prixfixe.

    from prixfixe.search import SearchDocument, SearchIndex

    index = SearchIndex([SearchDocument("store_put", "Save a record."), ...])
    result = index.search("remember to renew my passport", limit=5)
    result.good_match, [(hit.name, hit.score, hit.weak) for hit in result.hits]

See docs/search.md for how ranking and abstention work and what they reach.
"""

from __future__ import annotations

from prixfixe.search.analysis import tokenize
from prixfixe.search.index import (
    DEFAULT_TUNING,
    AnalyzedDocument,
    SearchIndex,
    Tuning,
    analyze,
    analyze_fields,
    embed_text,
)
from prixfixe.search.types import Embedder, SearchDocument, SearchHit, SearchResult

__all__ = [
    "DEFAULT_TUNING",
    "AnalyzedDocument",
    "Embedder",
    "SearchDocument",
    "SearchHit",
    "SearchIndex",
    "SearchResult",
    "Tuning",
    "analyze",
    "analyze_fields",
    "embed_text",
    "tokenize",
]
