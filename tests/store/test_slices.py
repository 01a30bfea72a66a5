"""Owned slices: an owner reaches its own tables through the API and nothing else."""

from __future__ import annotations

import pytest

from prixfixe.declarations.kinds import StoreMigration
from prixfixe.errors import StoreAccessError, StoreError
from prixfixe.store.sqlite import SQLiteStore
from tests.store.conftest import KINDS, StoreFactory

ALPHA = [
    StoreMigration(
        name="0001_items",
        statements=(
            "CREATE TABLE {prefix}items (id INTEGER PRIMARY KEY, name TEXT)",
            # A trigger and a view that reach outside the slice: creating them is allowed
            # (they name only the owner's objects), but they are checked when they run.
            "CREATE TABLE {prefix}trap (x)",
            "CREATE TRIGGER {prefix}leak AFTER INSERT ON {prefix}trap"
            " BEGIN DELETE FROM records; END",
            "CREATE VIEW {prefix}peek AS SELECT body FROM records",
        ),
    )
]
BETA = [
    StoreMigration(
        name="0001_secrets",
        statements=("CREATE TABLE {prefix}secrets (id INTEGER PRIMARY KEY, value TEXT)",),
    )
]


@pytest.fixture
def two_owners(open_store: StoreFactory) -> SQLiteStore:
    store = open_store(KINDS, {"alpha": ALPHA, "beta": BETA})
    store.slice("beta").execute("INSERT INTO {prefix}secrets (value) VALUES ('beta only')")
    store.put("reminder", {"text": "core data", "due": "2026-01-01"})
    return store


def test_an_owner_reads_and_writes_its_own_tables_and_each_write_advances_the_generation(
    two_owners: SQLiteStore,
) -> None:
    alpha = two_owners.slice("alpha")
    assert alpha.prefix == "alpha__"
    before = two_owners.generation()
    assert alpha.executemany("INSERT INTO {prefix}items (name) VALUES (?)", [("a",), ("b",)]) == 2
    assert two_owners.generation() == before + 1
    assert alpha.query("SELECT name FROM alpha__items ORDER BY id") == [("a",), ("b",)]


@pytest.mark.parametrize(
    ("sql", "refusal"),
    [
        ("SELECT value FROM beta__secrets", "table 'beta__secrets' is not one of its tables"),
        ("SELECT count(*) FROM records", "table 'records' is not one of its tables"),
        ("SELECT * FROM meta", "table 'meta' is not one of its tables"),
        (
            "SELECT a.name FROM alpha__items a JOIN beta__secrets b ON a.id = b.id",
            "'beta__secrets'",
        ),
        ("SELECT body FROM {prefix}peek", "table 'records' is not one of its tables"),
        ("SELECT name FROM sqlite_master", "the schema is not reachable through a slice"),
        ("PRAGMA table_info(records)", "pragmas are not allowed"),
    ],
)
def test_an_owner_cannot_read_another_owners_or_the_cores_tables(
    two_owners: SQLiteStore, sql: str, refusal: str
) -> None:
    with pytest.raises(StoreAccessError) as caught:
        two_owners.slice("alpha").query(sql)
    assert "store slice of 'alpha' refused" in caught.value.message
    assert refusal in caught.value.message
    assert "its tables start with 'alpha__'" in caught.value.message


@pytest.mark.parametrize(
    ("sql", "refusal"),
    [
        ("UPDATE beta__secrets SET value = 'stolen'", "'beta__secrets'"),
        ("DELETE FROM beta__secrets", "'beta__secrets'"),
        (
            "INSERT INTO records (kind, schema_version, body, created_gen, gen)"
            " VALUES ('reminder', 1, '{}', 1, 1)",
            "'records'",
        ),
        ("UPDATE generation SET value = 0", "'generation'"),
        ("DELETE FROM migrations", "'migrations'"),
        ("INSERT INTO {prefix}trap (x) VALUES (1)", "'records'"),
        ("CREATE TABLE {prefix}later (x)", "schema changes belong in a StoreMigration"),
        ("DROP TABLE beta__secrets", "StoreMigration"),
        ("ATTACH DATABASE ':memory:' AS other", "ATTACH"),
        ("BEGIN", "transaction statements"),
    ],
)
def test_an_owner_cannot_write_outside_its_tables_and_nothing_changes(
    two_owners: SQLiteStore, sql: str, refusal: str
) -> None:
    generation = two_owners.generation()
    with pytest.raises(StoreAccessError, match=refusal):
        two_owners.slice("alpha").execute(sql)
    assert two_owners.generation() == generation
    assert two_owners.slice("beta").query("SELECT value FROM {prefix}secrets") == [("beta only",)]
    assert [r.record["text"] for r in two_owners.query("reminder").records] == ["core data"]
    assert two_owners.slice("alpha").query("SELECT count(*) FROM {prefix}items") == [(0,)]


def test_a_migration_may_only_create_objects_named_with_its_prefix(
    open_store: StoreFactory,
) -> None:
    sneaky = [StoreMigration(name="0001", statements=("CREATE TABLE records_copy (x)",))]
    reader = [StoreMigration(name="0001", statements=("DELETE FROM beta__secrets",))]
    store = open_store(KINDS, {"beta": BETA, "sneaky": sneaky, "reader": reader})
    with pytest.raises(StoreError, match="'records_copy' is not named with its prefix 'sneaky__'"):
        store.slice("sneaky")
    with pytest.raises(StoreError, match="table 'beta__secrets' is not one of its tables"):
        store.slice("reader")
    assert store.slice("beta").query("SELECT count(*) FROM {prefix}secrets") == [(0,)]


def test_the_core_and_owners_without_tables_have_no_slice(two_owners: SQLiteStore) -> None:
    with pytest.raises(StoreAccessError, match="the core's tables are not reachable"):
        two_owners.slice("core")
    with pytest.raises(StoreAccessError, match="declared no StoreMigration"):
        two_owners.slice("gamma")


def test_owners_whose_names_map_to_one_prefix_cannot_share_tables(
    open_store: StoreFactory,
) -> None:
    store = open_store(KINDS, {"a.b": BETA, "a_b": BETA})
    assert store.slice("a.b").prefix == "a_b__"
    with pytest.raises(StoreError, match=r"would own tables a_b__\*, which belong to 'a\.b'"):
        store.slice("a_b")
