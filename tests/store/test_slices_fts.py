"""Owned slices and full-text search: an owner may declare an FTS5 index and constraints on
its own tables, nothing else virtual, and write several statements as one transaction."""

from __future__ import annotations

import pytest

from prixfixe.declarations.kinds import StoreMigration
from prixfixe.errors import StoreAccessError, StoreError
from tests.store.conftest import KINDS, StoreFactory

SEARCHABLE = [
    StoreMigration(
        name="0001_docs",
        statements=(
            "CREATE TABLE {prefix}docs (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, "
            "body TEXT NOT NULL)",
            "CREATE VIRTUAL TABLE {prefix}docs_fts USING fts5(body, content='{prefix}docs', "
            "content_rowid='id')",
            "CREATE TRIGGER {prefix}docs_ai AFTER INSERT ON {prefix}docs BEGIN "
            "INSERT INTO {prefix}docs_fts (rowid, body) VALUES (new.id, new.body); END",
        ),
    )
]


def test_an_owner_declares_unique_keys_and_an_fts5_index_and_searches_it(
    open_store: StoreFactory,
) -> None:
    store = open_store(KINDS, {"alpha": SEARCHABLE})
    alpha = store.slice("alpha")
    alpha.execute("INSERT INTO {prefix}docs (key, body) VALUES ('a', 'quokkas on islands')")
    store.close()
    # A fresh connection declares the FTS5 table to itself on first use: still allowed.
    alpha = open_store(KINDS, {"alpha": SEARCHABLE}).slice("alpha")
    alpha.execute("INSERT INTO {prefix}docs (key, body) VALUES ('b', 'wombats in burrows')")
    rows = alpha.query(
        "SELECT rowid, snippet({prefix}docs_fts, 0, '[', ']', '...', 4) FROM {prefix}docs_fts "
        "WHERE {prefix}docs_fts MATCH 'quokkas'"
    )
    assert rows == [(1, "[quokkas] on islands")]
    with pytest.raises(StoreError, match="UNIQUE"):
        alpha.execute("INSERT INTO {prefix}docs (key, body) VALUES ('a', 'again')")


@pytest.mark.parametrize(
    ("statement", "refusal"),
    [
        ("CREATE VIRTUAL TABLE {prefix}r USING rtree(id, a, b)", "module 'rtree' are not allowed"),
        ("CREATE VIRTUAL TABLE elsewhere USING fts5(body)", "'elsewhere' is not named with"),
    ],
)
def test_other_virtual_tables_and_unprefixed_ones_are_refused_in_a_migration(
    open_store: StoreFactory, statement: str, refusal: str
) -> None:
    migration = StoreMigration(name="0001_bad", statements=(statement,))
    store = open_store(KINDS, {"alpha": [migration]})
    with pytest.raises(StoreError, match=refusal):
        store.slice("alpha")  # its migration failed whole: its tables are unavailable


def test_a_slice_cannot_create_a_virtual_table_outside_a_migration(
    open_store: StoreFactory,
) -> None:
    alpha = open_store(KINDS, {"alpha": SEARCHABLE}).slice("alpha")
    with pytest.raises(StoreAccessError, match="schema changes belong in a StoreMigration"):
        alpha.execute("CREATE VIRTUAL TABLE {prefix}more USING fts5(body)")
    with pytest.raises(StoreAccessError, match="the schema is not reachable"):
        alpha.query("SELECT name FROM sqlite_master")


def test_a_batch_is_one_transaction_at_one_generation_or_nothing(
    open_store: StoreFactory,
) -> None:
    store = open_store(KINDS, {"alpha": SEARCHABLE})
    alpha = store.slice("alpha")
    before = store.generation()
    generation = alpha.execute_batch(
        [
            ("INSERT INTO {prefix}docs (key, body) VALUES (:key, :generation)", {"key": "a"}),
            ("INSERT INTO {prefix}docs (key, body) VALUES (:key, 'x')", {"key": "b"}),
        ]
    )
    assert generation == before + 1 == store.generation()
    assert alpha.query("SELECT key, body FROM {prefix}docs ORDER BY id") == [
        ("a", str(generation)),
        ("b", "x"),
    ]
    with pytest.raises(StoreError):
        alpha.execute_batch(
            [
                ("INSERT INTO {prefix}docs (key, body) VALUES ('c', 'y')", {}),
                ("INSERT INTO {prefix}docs (key, body) VALUES ('a', 'dup')", {}),
            ]
        )
    assert store.generation() == generation
    assert alpha.query("SELECT count(*) FROM {prefix}docs") == [(2,)]


def test_an_fts5_index_over_another_owners_table_reads_nothing_of_it(
    open_store: StoreFactory,
) -> None:
    victim = [
        StoreMigration(
            name="0001_secrets",
            statements=("CREATE TABLE {prefix}secrets (id INTEGER PRIMARY KEY, body TEXT)",),
        )
    ]
    store = open_store(KINDS, {"victim": victim})
    owned = store.slice("victim")
    owned.execute("INSERT INTO {prefix}secrets (body) VALUES ('the launch code is 1234')")
    # An external-content FTS5 table names its content table in its arguments, which the
    # schema check does not see: FTS5's own reads of that table are refused at the source.
    spying = StoreMigration(
        name="0001_spy",
        statements=(
            f"CREATE VIRTUAL TABLE {{prefix}}spy USING fts5(body, content='{owned.prefix}secrets', "
            "content_rowid='id')",
        ),
    )
    store.close()
    store = open_store(KINDS, {"victim": victim, "spy": [spying]})
    spy = store.slice("spy")
    for read in (
        "SELECT body FROM {prefix}spy",
        "INSERT INTO {prefix}spy({prefix}spy) VALUES('rebuild')",
    ):
        with pytest.raises(StoreAccessError, match="'victim__secrets' is not one of its tables"):
            spy.execute(read) if read.startswith("INSERT") else spy.query(read)
    assert spy.query("SELECT rowid FROM {prefix}spy WHERE {prefix}spy MATCH 'launch'") == []
