"""Hybrid search: BM25 fused with wordllama's embeddings, tool search's engine, over chunks.

The keyword path is also tested as an install without numpy sees it (the dense half cannot be
imported); wordllama is a dependency, so the tests with the real model always run."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from prixfixe.knowledge import vectors
from prixfixe.knowledge.ingest import put_text
from prixfixe.knowledge.search import Hit, find, match_expression, search
from prixfixe.search.types import Embedder
from prixfixe.store.api import OwnerSlice
from tests.knowledge.conftest import GUIDE, NOTES

HOUSE = """# House manual

How the house works.

## Heating

The boiler is in the cellar; bleed the radiators each autumn.

## Bins

Recycling goes out on Tuesday evenings, general waste on Fridays.

## Internet

The router sits behind the television; restart it when the connection drops.
"""

CAR = """# Car

## Tyres

Check the tyre pressure monthly and before long drives.

## Oil

Change the engine oil every year.
"""


@pytest.fixture
def notes(kb: OwnerSlice) -> OwnerSlice:
    """Two collections: `home` (the house manual and the car, markdown) and `garden` (the
    guide, markdown, and notes, plain text)."""
    put_text(kb, "home", "house.md", HOUSE)
    put_text(kb, "home", "car/car.md", CAR)
    put_text(kb, "garden", "guide.md", GUIDE)
    put_text(kb, "garden", "notes.txt", NOTES, "text")
    return kb


def _before_hybrid(
    kb: OwnerSlice, query: str, collection: str | None = None, limit: int = 10
) -> list[Hit]:
    """Keyword search as it was written before hybrid search existed, kept verbatim."""
    params: list[object] = [match_expression(query)]
    where = ""
    if collection is not None:
        where = " AND c.name = ?"
        params.append(collection)
    params.append(limit)
    rows = kb.query(
        "SELECT c.name, d.id, d.path, d.title, k.seq, k.heading, "
        "snippet({prefix}chunks_fts, 1, '**', '**', '…', 16), "
        "bm25({prefix}chunks_fts, 2.0, 1.0) AS score "
        "FROM {prefix}chunks_fts JOIN {prefix}chunks k ON k.id = {prefix}chunks_fts.rowid "
        "JOIN {prefix}documents d ON d.id = k.document "
        "JOIN {prefix}collections c ON c.id = d.collection "
        f"WHERE {{prefix}}chunks_fts MATCH ?{where} ORDER BY score LIMIT ?",
        params,
    )
    return [Hit(*row) for row in rows]


#: Chunks of each document of `notes`.
CHUNKS = {"house.md": 4, "car/car.md": 3, "guide.md": 3, "notes.txt": 1}
QUERIES = ("the wifi is not working", "bleed radiators", "how often to water tomatoes", "oil")


# -- the keyword path, with or without numpy -----------------------------------------------


@pytest.mark.parametrize("query", QUERIES)
def test_without_semantic_search_is_the_keyword_search_it_always_was(
    notes: OwnerSlice, query: str
) -> None:
    found = find(notes, query)
    assert (found.mode, found.note) == ("keyword", "")
    assert found.hits == _before_hybrid(notes, query) == search(notes, query)
    assert find(notes, query, collection="home", limit=2).hits == _before_hybrid(
        notes, query, "home", 2
    )


def test_semantic_without_numpy_runs_keyword_and_says_what_to_install(
    notes: OwnerSlice, monkeypatch: pytest.MonkeyPatch
) -> None:
    # wordllama brings numpy; without it the dense half cannot even be imported.
    monkeypatch.setitem(sys.modules, "numpy", None)
    monkeypatch.delitem(sys.modules, "prixfixe.search.semantic", raising=False)

    found = find(notes, "bleed radiators", semantic=True)
    assert found.mode == "keyword"
    assert found.note == (
        "hybrid search is unavailable: search.knowledge_semantic is on, but wordllama's "
        "dependencies are not installed (numpy is missing); install it with: "
        "pip install 'wordllama>=0.3.8,<0.4'"
    )
    assert found.hits == _before_hybrid(notes, "bleed radiators")


def test_a_query_without_words_is_the_same_error_in_either_mode(notes: OwnerSlice) -> None:
    from prixfixe.errors import KnowledgeError

    for semantic in (False, True):
        with pytest.raises(KnowledgeError, match="has no words"):
            find(notes, "*** ()", semantic=semantic)


# -- with the real model --------------------------------------------------------------------


@pytest.fixture(scope="module")
def wordllama() -> Embedder:
    from prixfixe.search.semantic import shared_wordllama

    return shared_wordllama()


@pytest.fixture
def embedded(notes: OwnerSlice, wordllama: Embedder) -> OwnerSlice:
    assert vectors.embed_pending(notes, wordllama) == sum(CHUNKS.values())
    return notes


def _rank(hits: list[Hit], heading: str) -> int | None:
    return next((n for n, hit in enumerate(hits, 1) if hit.heading == heading), None)


@pytest.mark.parametrize(
    ("query", "heading"),
    [
        ("the wifi is not working", "Internet"),  # keyword: fourth, behind 'the' and 'is'
        ("which day is trash collection", "Bins"),  # keyword: not found (no shared word)
        ("automobile wheels inflation", "Tyres"),  # keyword: nothing at all
    ],
)
def test_a_paraphrase_ranks_its_section_higher_than_keyword_search_does(
    embedded: OwnerSlice, wordllama: Embedder, query: str, heading: str
) -> None:
    hybrid = find(embedded, query, embedder=wordllama, limit=3)
    keyword = find(embedded, query, limit=3)
    assert (hybrid.mode, hybrid.note) == ("hybrid", "")
    hybrid_rank = _rank(hybrid.hits, heading)
    assert hybrid_rank is not None
    assert hybrid_rank <= 2
    keyword_rank = _rank(keyword.hits, heading)
    assert keyword_rank is None or keyword_rank > hybrid_rank


def test_semantic_on_uses_the_shared_model_of_tool_search(embedded: OwnerSlice) -> None:
    found = find(embedded, "the wifi is not working", semantic=True)
    assert found.mode == "hybrid"
    assert found.hits[0].heading == "Internet"


def test_an_exact_word_match_keeps_its_bold_snippet_and_a_meaning_match_shows_its_opening(
    embedded: OwnerSlice, wordllama: Embedder
) -> None:
    found = find(embedded, "which day is trash collection", embedder=wordllama, limit=10)
    bins = next(hit for hit in found.hits if hit.heading == "Bins")
    assert bins.snippet == "Recycling goes out on Tuesday evenings, general waste on Fridays."
    heating = next(hit for hit in found.hits if hit.heading == "Heating")
    assert "**is**" in heating.snippet
    notes = next(hit for hit in found.hits if hit.path == "notes.txt")
    assert notes.snippet == " ".join(NOTES.split())


@pytest.mark.parametrize(
    ("filters", "paths"),
    [
        ({"collection": "garden"}, {"guide.md", "notes.txt"}),
        ({"path": "car/*"}, {"car/car.md"}),
        ({"format": "text"}, {"notes.txt"}),
        ({"collection": "home", "path": "*.md", "format": "markdown"}, {"house.md", "car/car.md"}),
    ],
)
def test_filters_hold_in_hybrid_mode_for_word_and_meaning_matches_alike(
    embedded: OwnerSlice, wordllama: Embedder, filters: dict[str, str], paths: set[str]
) -> None:
    # 'the' matches chunks everywhere; the meaning reaches every chunk: only filters limit.
    found = find(embedded, "the wifi is not working", embedder=wordllama, limit=100, **filters)
    assert found.mode == "hybrid"
    assert found.filters == filters
    assert {hit.path for hit in found.hits} == paths
    assert len(found.hits) == sum(CHUNKS[path] for path in paths)


def test_a_wordllama_without_its_model_is_named_in_the_note_never_downloaded(
    notes: OwnerSlice, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from prixfixe.search import semantic

    fake = types.ModuleType("wordllama")
    fake.__file__ = str(tmp_path / "__init__.py")
    monkeypatch.setattr(semantic.importlib, "import_module", lambda name: fake)
    monkeypatch.setattr(semantic, "_shared", None)

    found = find(notes, "bleed radiators", semantic=True)
    assert found.mode == "keyword"
    assert "does not ship its model inside the wheel" in found.note
    assert found.note.startswith("hybrid search is unavailable: wordllama ")
