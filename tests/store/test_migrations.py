"""Append-only named migrations per owner: older files are migrated on open, newer ones are
refused untouched, and one plugin's broken migration does not take the store down."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from prixfixe.declarations.kinds import StoreMigration
from prixfixe.errors import MigrationError, StoreError, StoreVersionError
from prixfixe.store.migrations import CORE_MIGRATIONS
from prixfixe.store.sqlite import SQLiteStore
from tests.store.conftest import KINDS, StoreFactory

NOTES_V1 = StoreMigration(
    name="0001_notes",
    statements=("CREATE TABLE {prefix}notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)",),
)
NOTES_V2 = StoreMigration(
    name="0002_notes_pinned",
    statements=(
        "ALTER TABLE {prefix}notes ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0",
        "CREATE INDEX {prefix}notes_pinned ON {prefix}notes (pinned)",
    ),
)


def _migrations(path: Path) -> list[tuple[str, int, str]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT owner, seq, name FROM migrations ORDER BY owner, seq")
        return [tuple(r) for r in rows]  # type: ignore[misc]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_new_store_records_the_core_migrations_in_order(
    store: SQLiteStore, db_path: Path
) -> None:
    assert _migrations(db_path) == [("core", 1, "0001_meta"), ("core", 2, "0002_records")]
    assert store.schema_versions() == {"core": 2}


def test_a_file_from_an_older_version_is_migrated_on_open(
    open_store: StoreFactory, db_path: Path
) -> None:
    old = open_store({}, core_migrations=CORE_MIGRATIONS[:1])
    assert old.schema_versions() == {"core": 1}
    old.close()
    assert _migrations(db_path) == [("core", 1, "0001_meta")]

    store = open_store()
    assert _migrations(db_path) == [("core", 1, "0001_meta"), ("core", 2, "0002_records")]
    assert store.schema_versions() == {"core": 2}
    assert store.put("reminder", {"text": "after upgrade", "due": "2026-01-01"}).id == 1


def test_a_plugin_upgrade_applies_only_its_new_migrations_and_keeps_its_data(
    open_store: StoreFactory, db_path: Path
) -> None:
    v1 = open_store({}, {"notes_plugin": [NOTES_V1]})
    v1.slice("notes_plugin").execute("INSERT INTO {prefix}notes (text) VALUES ('kept')")
    v1.close()
    v2 = open_store({}, {"notes_plugin": [NOTES_V1, NOTES_V2]})
    assert v2.schema_versions() == {"core": 2, "notes_plugin": 2}
    assert _migrations(db_path)[-2:] == [
        ("notes_plugin", 1, "0001_notes"),
        ("notes_plugin", 2, "0002_notes_pinned"),
    ]
    rows = v2.slice("notes_plugin").query("SELECT text, pinned FROM {prefix}notes")
    assert rows == [("kept", 0)]


def test_a_file_from_a_newer_version_is_refused_with_a_clear_message_untouched(
    open_store: StoreFactory, db_path: Path
) -> None:
    future = StoreMigration(name="0003_future", statements=("CREATE TABLE future (x)",))
    newer = open_store(core_migrations=(*CORE_MIGRATIONS, future))
    newer.put("reminder", {"text": "from the future", "due": "2030-01-01"})
    newer.close()
    before = _digest(db_path)
    siblings = sorted(p.name for p in db_path.parent.iterdir())

    with pytest.raises(StoreVersionError) as caught:
        open_store()
    message = caught.value.message
    assert "has schema version 3 for 'core'" in message
    assert "this version knows 2" in message
    assert "Upgrade prixfixe" in message
    assert "left untouched" in message
    assert _digest(db_path) == before
    assert sorted(p.name for p in db_path.parent.iterdir()) == siblings


def test_a_file_whose_recorded_migrations_differ_is_refused(
    open_store: StoreFactory,
) -> None:
    renamed = StoreMigration(name="0002_renamed", statements=("CREATE TABLE other (x)",))
    open_store({}, core_migrations=(CORE_MIGRATIONS[0], renamed)).close()
    with pytest.raises(MigrationError, match="append-only"):
        open_store()


def test_a_plugin_downgrade_makes_only_that_plugins_tables_unavailable(
    open_store: StoreFactory,
) -> None:
    open_store({}, {"notes_plugin": [NOTES_V1, NOTES_V2]}).close()
    store = open_store(KINDS, {"notes_plugin": [NOTES_V1]})
    with pytest.raises(StoreError, match="schema version 2 for 'notes_plugin'"):
        store.slice("notes_plugin")
    assert store.put("reminder", {"text": "still works", "due": "2026-01-01"}).id == 1


def test_a_failing_plugin_migration_applies_nothing_of_that_plugin(
    open_store: StoreFactory, db_path: Path
) -> None:
    broken = StoreMigration(
        name="0001_half",
        statements=(
            "CREATE TABLE {prefix}first (x)",
            "CREATE TABLE {prefix}second (x, y, UNKNOWN_SYNTAX(",
        ),
    )
    store = open_store(KINDS, {"broken_plugin": [broken]})
    with pytest.raises(StoreError, match="migration '0001_half' of 'broken_plugin' failed"):
        store.slice("broken_plugin")
    with sqlite3.connect(db_path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert not any(t.startswith("broken_plugin__") for t in tables)
    assert ("broken_plugin", 1, "0001_half") not in _migrations(db_path)
    assert store.put("reminder", {"text": "unaffected", "due": "2026-01-01"}).id == 1


def test_a_file_that_is_not_a_store_is_refused_by_name(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all, just words " * 100)
    with pytest.raises(StoreError, match="is not a prixfixe store"):
        SQLiteStore.open(text, KINDS)
    other = tmp_path / "app.sqlite3"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE customers (id)")
    with pytest.raises(StoreError, match="not a prixfixe store"):
        SQLiteStore.open(other, KINDS)


def test_a_kind_stays_with_the_plugin_that_first_stored_it(open_store: StoreFactory) -> None:
    from dataclasses import replace

    first = open_store()
    first.put("reminder", {"text": "mine", "due": "2026-01-01"})
    first.close()
    usurped = {**KINDS, "reminder": replace(KINDS["reminder"], owner="other_plugin")}
    store = open_store(usurped)
    with pytest.raises(StoreError, match="kind 'reminder' belongs to plugin 'prixfixe"):
        store.query("reminder")
    assert store.query("deadline").records == []
