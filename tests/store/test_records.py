"""Putting, updating and closing records: validation, history, the generation counter, and
nothing partly written when a request is refused. On both backends (SQLite, PostgreSQL)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from prixfixe.errors import (
    ClosedRecordError,
    InvalidRecordError,
    UnknownKindError,
    UnknownRecordError,
)
from prixfixe.store.api import Store
from tests.store.conftest import AnyStoreFactory, StoreFactory

DENTIST = {"text": "dentist", "due": "2026-12-01"}


@pytest.fixture
def store(any_store: Store) -> Store:
    """This module's store: one of each backend."""
    return any_store


def _count(store: Store) -> int:
    """Records of every kind, closed ones too."""
    return sum(
        len(store.query(kind, include_closed=True, limit=500).records) for kind in store.kinds()
    )


def test_a_put_returns_the_id_and_the_generation_it_committed(store: Store) -> None:
    first = store.put("reminder", DENTIST)
    second = store.put("deadline", {"label": "taxes", "date": "2026-04-30"})
    assert second.generation == first.generation + 1
    assert store.generation() == second.generation
    got = store.get("reminder", first.id)
    assert got.record == {"text": "dentist", "due": "2026-12-01", "recurrence": None}
    assert got.created_gen == got.gen == first.generation
    assert got.schema_version == 1


def test_the_store_file_is_wal_with_foreign_keys_and_a_fresh_generation(
    open_store: StoreFactory, db_path: Path
) -> None:
    store = open_store()
    assert store.generation() == 0
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.read(lambda c: c.execute("PRAGMA foreign_keys").fetchone()[0]) == 1


def test_an_update_merges_fields_keeps_the_old_body_in_history_and_advances_gen(
    store: Store,
) -> None:
    created = store.put("reminder", DENTIST)
    updated = store.put("reminder", {"due": "2026-12-03", "recurrence": "yearly"}, id=created.id)
    assert updated.id == created.id
    assert updated.generation > created.generation
    got = store.get("reminder", created.id)
    assert got.record == {"text": "dentist", "due": "2026-12-03", "recurrence": "yearly"}
    assert got.gen == updated.generation
    assert got.created_gen == created.generation
    (entry,) = store.history("reminder", created.id)
    assert entry.op == "update"
    assert entry.body == {"text": "dentist", "due": "2026-12-01", "recurrence": None}
    assert entry.prev_gen == created.generation


def test_null_clears_an_optional_field_on_update(store: Store) -> None:
    created = store.put("reminder", {**DENTIST, "recurrence": "weekly"})
    store.put("reminder", {"recurrence": None}, id=created.id)
    assert store.get("reminder", created.id).record["recurrence"] is None


def test_closing_keeps_the_record_and_its_history_and_refuses_later_changes(
    store: Store,
) -> None:
    created = store.put("reminder", DENTIST)
    store.put("reminder", {"text": "dentist at 9"}, id=created.id)
    closed = store.close_record("reminder", created.id, reason="went")
    got = store.get("reminder", created.id)
    assert got.closed
    assert got.close_reason == "went"
    assert got.closed_gen == closed.generation
    assert got.record["text"] == "dentist at 9"
    assert [e.op for e in store.history("reminder", created.id)] == ["update", "close"]
    before = store.generation()
    with pytest.raises(ClosedRecordError, match=f"reminder record {created.id} is closed"):
        store.put("reminder", {"text": "again"}, id=created.id)
    with pytest.raises(ClosedRecordError):
        store.close_record("reminder", created.id)
    assert store.generation() == before, "a refused write advances nothing"


def test_an_unknown_kind_names_the_kind_the_known_ones_and_a_suggestion(
    store: Store,
) -> None:
    with pytest.raises(UnknownKindError) as caught:
        store.put("remider", DENTIST)
    message = caught.value.message
    assert "unknown kind 'remider'; did you mean 'reminder'?" in message
    assert "kinds: reminder, deadline, countdown" in message
    assert "store_kinds" in message


def test_a_record_failing_its_schema_names_every_bad_field_and_writes_nothing(store: Store) -> None:
    with pytest.raises(InvalidRecordError) as caught:
        store.put("reminder", {"text": "", "due": "soon", "colour": "red"})
    problems = caught.value.problems
    assert any(
        p.startswith("field 'text': string should have at least 1 character") for p in problems
    )
    assert any(p.startswith("field 'due': input should be a valid date") for p in problems)
    assert any("unknown field 'colour'" in p for p in problems)
    with pytest.raises(InvalidRecordError, match=r"missing field 'due' \(The day it is due"):
        store.put("reminder", {"text": "x"})
    with pytest.raises(InvalidRecordError, match="end 2026-01-01 is before start 2026-02-01"):
        store.put("countdown", {"label": "x", "start": "2026-02-01", "end": "2026-01-01"})
    assert store.generation() == 0
    assert _count(store) == 0


def test_an_update_that_breaks_the_schema_leaves_the_record_as_it_was(store: Store) -> None:
    created = store.put("reminder", DENTIST)
    with pytest.raises(InvalidRecordError, match="field 'recurrence'"):
        store.put("reminder", {"recurrence": "fortnightly"}, id=created.id)
    assert store.get("reminder", created.id).record == {**DENTIST, "recurrence": None}
    assert store.history("reminder", created.id) == []
    assert store.generation() == created.generation


def test_an_unknown_id_names_kind_and_id_and_an_id_of_another_kind_is_unknown(
    store: Store,
) -> None:
    deadline = store.put("deadline", {"label": "taxes", "date": "2026-04-30"})
    with pytest.raises(UnknownRecordError, match="no reminder record with id 999"):
        store.put("reminder", DENTIST, id=999)
    with pytest.raises(UnknownRecordError, match=f"no reminder record with id {deadline.id}"):
        store.close_record("reminder", deadline.id)
    assert store.generation() == deadline.generation


def test_a_batch_is_all_or_nothing_at_one_generation(store: Store) -> None:
    good = [{"text": f"r{i}", "due": "2026-12-01"} for i in range(5)]
    with pytest.raises(InvalidRecordError) as caught:
        store.put_many("reminder", [*good, {"text": "bad", "due": "nope"}, {"due": "2026-01-01"}])
    assert [p.split(" field")[0].split(" missing")[0] for p in caught.value.problems] == [
        "record [5]",
        "record [6]",
    ]
    assert _count(store) == 0
    batch = store.put_many("reminder", good)
    assert len(batch.ids) == 5
    assert {store.get("reminder", i).gen for i in batch.ids} == {batch.generation}


def test_the_generation_only_ever_increases_across_reopen(
    open_any_store: AnyStoreFactory,
) -> None:
    first = open_any_store()
    gens = [first.put("reminder", DENTIST).generation for _ in range(3)]
    first.close()
    again = open_any_store()
    assert again.generation() == gens[-1]
    assert again.put("reminder", DENTIST).generation == gens[-1] + 1
    assert gens == sorted(set(gens))
