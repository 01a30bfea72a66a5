"""Keyword search over chunks: BM25 ranks the right chunk first and returns a snippet."""

from __future__ import annotations

import pytest

from prixfixe.errors import KnowledgeError
from prixfixe.knowledge.search import match_expression, search
from prixfixe.store.api import OwnerSlice
from tests.knowledge.conftest import Ingest


def test_the_chunk_that_holds_the_words_comes_first_with_a_highlighted_snippet(
    add: Ingest, kb: OwnerSlice
) -> None:
    add()
    hits = search(kb, "how often to water tomatoes")
    first = hits[0]
    assert (first.path, first.heading, first.chunk) == ("guide.md", "Watering", 1)
    assert "**tomatoes**" in first.snippet
    assert first.uri.startswith("prixfixe://knowledge/garden/document/")
    assert search(kb, "wombats burrows")[0].path == "notes.txt"


def test_search_filters_by_collection_and_a_stemmed_word_matches(
    add: Ingest, kb: OwnerSlice
) -> None:
    add()
    add(collection="other")
    assert {h.collection for h in search(kb, "honey")} == {"garden", "other"}
    assert {h.collection for h in search(kb, "honey", collection="other")} == {"other"}
    assert search(kb, "pruning roses")[0].heading == "Pruning"


def test_a_query_is_words_never_fts_syntax() -> None:
    assert match_expression('NEAR(a b) OR "x" -y*') == '"near" OR "a" OR "b" OR "or" OR "x" OR "y"'
    with pytest.raises(KnowledgeError, match="has no words"):
        match_expression("*** ()")
