"""Chunk vectors: stored one per chunk with the model that made them, kept in step with the
chunks, never replaced silently by another model's, rebuilt only when asked.

A small deterministic embedder stands in for wordllama (hashed words, so texts sharing words
are near); numpy, which the `semantic` extra brings, is needed to store vectors at all."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from prixfixe.app import App
from prixfixe.knowledge import vectors
from prixfixe.knowledge.ingest import put_text, remove_collection
from prixfixe.knowledge.search import SNIPPET_TOKENS, expected_mode, find, search
from prixfixe.store.api import OwnerSlice
from tests.knowledge.conftest import GUIDE

np = pytest.importorskip("numpy")


class HashedWords:
    """Each word adds one to a dimension picked by its hash: texts sharing words are near.
    Records every text it embeds."""

    def __init__(self, model_id: str = "hashed-words-1", dims: int = 32) -> None:
        self.model_id = model_id
        self.dims = dims
        self.embedded: list[str] = []
        self.before_return: Callable[[], None] | None = None

    def embed(self, texts: Sequence[str]) -> Any:
        self.embedded.extend(texts)
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, 0] = 0.01  # never a zero vector
            for word in text.lower().split():
                out[row, hashlib.blake2b(word.encode(), digest_size=4).digest()[0] % self.dims] += 1
        if self.before_return is not None:
            self.before_return()
        return out


@pytest.fixture
def garden(kb: OwnerSlice) -> OwnerSlice:
    """Two collections, seven chunks: the garden guide (three), bees (one), cars (three)."""
    put_text(kb, "garden", "guide.md", GUIDE)
    put_text(kb, "garden", "bees.md", "# Bees\n\nBees make honey.\n")
    cars = "# Cars\n\n## Tyres\n\nCheck the tyre pressure monthly.\n\n## Oil\n\nChange oil.\n"
    put_text(kb, "other", "cars.md", cars)
    return kb


def _vector_rows(kb: OwnerSlice) -> dict[int, bytes]:
    return {
        int(chunk): bytes(blob)
        for chunk, blob in kb.query("SELECT chunk, vector FROM {prefix}vectors")
    }


def _chunk_ids(kb: OwnerSlice) -> set[int]:
    return {row[0] for row in kb.query("SELECT id FROM {prefix}chunks")}


def test_every_chunk_gets_one_float16_vector_and_the_model_is_recorded(
    garden: OwnerSlice,
) -> None:
    embedder = HashedWords()
    assert vectors.embed_pending(garden, embedder) == 7

    stored = _vector_rows(garden)
    assert set(stored) == _chunk_ids(garden)
    assert {len(blob) for blob in stored.values()} == {32 * 2}  # float16: two bytes a dimension
    record = vectors.recorded_model(garden)
    assert record is not None
    assert (record.model, record.dims, record.dtype, record.vectors) == (
        "hashed-words-1",
        32,
        "float16",
        7,
    )
    assert record.created_at.endswith("Z")
    assert vectors.state(garden).pending == 0
    # A chunk is embedded with its document's title when that is not its own heading.
    assert "Garden guide\n## Watering\n\nWater tomatoes" in "\n".join(embedder.embedded)


def test_nothing_pending_embeds_nothing_and_writes_nothing(app: App, garden: OwnerSlice) -> None:
    vectors.embed_pending(garden, HashedWords())
    again = HashedWords()
    generation = app.store.generation()

    assert vectors.embed_pending(garden, again) == 0
    assert again.embedded == []
    assert app.store.generation() == generation


def test_each_batch_is_one_transaction(app: App, garden: OwnerSlice) -> None:
    first = app.store.generation()
    assert vectors.embed_pending(garden, HashedWords(), batch=2) == 7
    assert app.store.generation() - first == 4  # 7 chunks, 2 a batch: four writes


def test_a_changed_document_loses_its_old_vectors_and_only_its_new_chunks_are_embedded(
    garden: OwnerSlice,
) -> None:
    vectors.embed_pending(garden, HashedWords())
    put_text(garden, "garden", "bees.md", "# Bees\n\nBees make honey and wax.\n")
    assert set(_vector_rows(garden)) < _chunk_ids(garden)
    assert vectors.state(garden).pending == 1

    embedder = HashedWords()
    assert vectors.embed_pending(garden, embedder) == 1
    assert embedder.embedded == ["# Bees\n\nBees make honey and wax."]
    assert set(_vector_rows(garden)) == _chunk_ids(garden)


def test_removing_a_collection_removes_its_vectors_and_the_count_follows(
    garden: OwnerSlice,
) -> None:
    vectors.embed_pending(garden, HashedWords())
    remove_collection(garden, "other")
    record = vectors.recorded_model(garden)
    assert record is not None
    assert record.vectors == len(_vector_rows(garden)) == 4
    assert vectors.state(garden).pending == 0


def test_a_chunk_replaced_while_it_was_embedded_does_not_get_the_old_texts_vector(
    garden: OwnerSlice,
) -> None:
    embedder = HashedWords()
    # The watcher rewrites bees.md while the batch holding its old chunk is being embedded.
    embedder.before_return = lambda: put_text(garden, "garden", "bees.md", "# Bees\n\nWasps.\n")

    vectors.embed_pending(garden, embedder, batch=100)
    embedder.before_return = None
    vectors.embed_pending(garden, embedder)

    (bees,) = garden.query(
        "SELECT k.id FROM {prefix}chunks k JOIN {prefix}documents d ON d.id = k.document "
        "WHERE d.path = 'bees.md'"
    )
    stored = np.frombuffer(_vector_rows(garden)[bees[0]], dtype=np.float16)
    fresh = vectors.embed_text("Bees", "Bees", "# Bees\n\nWasps.\n")
    expected = HashedWords().embed([fresh])[0]
    assert np.allclose(stored, expected / np.linalg.norm(expected), atol=1e-3)


def test_vectors_of_another_model_are_never_replaced_silently(garden: OwnerSlice) -> None:
    vectors.embed_pending(garden, HashedWords("old-model-1"))
    put_text(garden, "garden", "bees.md", "# Bees\n\nBees make honey and wax.\n")
    newer = HashedWords("new-model-2")

    assert vectors.embed_pending(garden, newer) == 0
    assert newer.embedded == []
    record = vectors.recorded_model(garden)
    assert record is not None
    assert record.model == "old-model-1"

    found = find(garden, "tomatoes", embedder=newer)
    assert found.mode == "keyword"
    assert found.note == (
        "vectors were made by old-model-1 (32 dimensions), not by new-model-2; "
        "run `prixfixe kb reindex --embeddings`"
    )
    assert found.hits == search(garden, "tomatoes")


def test_a_model_of_the_same_name_but_another_width_is_a_mismatch_too(
    garden: OwnerSlice,
) -> None:
    vectors.embed_pending(garden, HashedWords(dims=32))
    wider = HashedWords(dims=48)
    found = find(garden, "tomatoes", embedder=wider)
    assert found.mode == "keyword"
    assert "(32 dimensions), not by hashed-words-1" in found.note


def test_reembed_drops_every_vector_and_rebuilds_with_the_new_model(garden: OwnerSlice) -> None:
    vectors.embed_pending(garden, HashedWords("old-model-1"))
    newer = HashedWords("new-model-2", dims=16)

    assert vectors.reembed(garden, newer, batch=3) == 7
    record = vectors.recorded_model(garden)
    assert record is not None
    assert (record.model, record.dims, record.vectors) == ("new-model-2", 16, 7)
    assert {len(blob) for blob in _vector_rows(garden).values()} == {16 * 2}
    assert find(garden, "tomatoes", embedder=newer).mode == "hybrid"


def test_hybrid_without_any_vector_yet_says_so_and_runs_keyword(garden: OwnerSlice) -> None:
    found = find(garden, "tomatoes", embedder=HashedWords())
    assert found.mode == "keyword"
    assert found.note == (
        "no chunk has a vector yet, so this search is keyword-only; "
        "run `prixfixe kb reindex --embeddings`"
    )
    assert found.hits == search(garden, "tomatoes")


def test_chunks_not_embedded_yet_are_still_found_by_their_words_and_counted_in_a_note(
    garden: OwnerSlice,
) -> None:
    embedder = HashedWords()
    vectors.embed_pending(garden, embedder)
    put_text(garden, "garden", "wasps.md", "# Wasps\n\nWasps nest in the quokka shed.\n")

    found = find(garden, "wasps nest", embedder=embedder)
    assert found.mode == "hybrid"
    assert found.note == (
        "1 of 8 chunks have no vector yet and were ranked by keyword only; "
        "run `prixfixe kb reindex --embeddings`"
    )
    # Its words find it, though it has no vector to add to its score.
    assert "wasps.md" in {hit.path for hit in found.hits}


def test_hybrid_ranks_by_words_and_vectors_and_scores_lower_is_better(
    garden: OwnerSlice,
) -> None:
    embedder = HashedWords()
    vectors.embed_pending(garden, embedder)
    found = find(garden, "tyre pressure", embedder=embedder, limit=3)
    assert found.mode == "hybrid"
    assert found.note == ""
    assert found.hits[0].heading == "Tyres"
    assert len(found.hits) == 3
    assert [hit.score for hit in found.hits] == sorted(hit.score for hit in found.hits)


def test_the_matrix_in_memory_is_reused_until_a_vector_changes(garden: OwnerSlice) -> None:
    embedder = HashedWords()
    vectors.embed_pending(garden, embedder)
    record = vectors.recorded_model(garden)
    assert record is not None
    first = vectors.chunk_vectors(garden, record)
    assert vectors.chunk_vectors(garden, record) is first
    assert len(first) == 7
    assert first.matrix.dtype == np.float32

    put_text(garden, "garden", "bees.md", "# Bees\n\nBees make honey and wax.\n")
    changed = vectors.recorded_model(garden)
    assert changed is not None
    assert changed.version != record.version
    assert len(vectors.chunk_vectors(garden, changed)) == 6


def test_a_chunk_found_by_meaning_alone_shows_its_opening_words_unmarked(
    garden: OwnerSlice,
) -> None:
    long = " ".join(f"word{n}" for n in range(40))
    put_text(garden, "other", "long.txt", long + "\n", "text")
    embedder = HashedWords()
    vectors.embed_pending(garden, embedder)

    found = find(garden, "tyre pressure", embedder=embedder, limit=100)
    (hit,) = (hit for hit in found.hits if hit.path == "long.txt")
    assert hit.snippet == " ".join(long.split()[:SNIPPET_TOKENS]) + "…"
    (oil,) = (hit for hit in found.hits if hit.heading == "Oil")
    assert oil.snippet == "Change oil."  # its heading line is shown beside it already


def test_the_expected_mode_says_what_a_search_would_run_in_without_searching(
    garden: OwnerSlice,
) -> None:
    embedder = HashedWords()
    assert expected_mode(garden, semantic=False) == ("keyword", "")
    mode, note = expected_mode(garden, semantic=True, embedder=embedder)
    assert (mode, note.startswith("no chunk has a vector yet")) == ("keyword", True)

    vectors.embed_pending(garden, embedder)
    assert expected_mode(garden, semantic=True, embedder=embedder) == ("hybrid", "")
    mode, note = expected_mode(garden, semantic=True, embedder=HashedWords("other-model-1"))
    assert (mode, note.startswith("vectors were made by hashed-words-1")) == ("keyword", True)


def test_filters_that_leave_few_chunks_give_only_those_in_hybrid_mode(garden: OwnerSlice) -> None:
    embedder = HashedWords()
    vectors.embed_pending(garden, embedder)
    found = find(garden, "tyre pressure", embedder=embedder, collection="garden", path="bees*")
    assert found.mode == "hybrid"
    assert [hit.path for hit in found.hits] == ["bees.md"]
