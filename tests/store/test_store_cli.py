"""`prixfixe store migrate` and `prixfixe store copy`: migrations applied and named, then
nothing pending, on SQLite and on PostgreSQL; a single-machine store moved into PostgreSQL
with ids, generations, history and closes, verified by counts, idempotent, refusing a
database holding other records, and clear errors for a bad file or an unreachable server."""

from __future__ import annotations

import hashlib
import json
import re
import socket
from pathlib import Path

import psycopg
from click.testing import CliRunner, Result

from prixfixe.cli import cli
from prixfixe.config import STORE_URL_ENV
from prixfixe.declarations.kinds import StoreMigration
from prixfixe.store.migrations import CORE_MIGRATIONS
from prixfixe.store.postgres import PostgresStore
from prixfixe.store.sqlite import SQLiteStore
from tests.store.conftest import KINDS

NOTES = StoreMigration(
    name="0001_notes", statements=("CREATE TABLE {prefix}notes (body TEXT NOT NULL)",)
)


def _run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, ["store", *args], env=env, catch_exceptions=False)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once it is closed


def _source(path: Path) -> SQLiteStore:
    """A single-machine store with records of three kinds, updated, closed and batched,
    and a plugin's own table."""
    store = SQLiteStore.open(path, KINDS, {"notes_plugin": (NOTES,)})
    dentist = store.put("reminder", {"text": "dentist", "due": "2026-12-01"})
    store.put("reminder", {"due": "2026-12-02"}, id=dentist.id)
    store.put("deadline", {"label": "taxes", "date": "2027-01-31"})
    batch = store.put_many(
        "countdown",
        [
            {"label": "launch", "start": "2026-11-01", "end": "2026-12-24"},
            {"label": "holiday", "start": "2026-12-01", "end": "2026-12-20"},
        ],
    )
    store.close_record("countdown", batch.ids[0], reason="cancelled")
    store.put("reminder", {"text": "call mum", "due": "2026-12-05"})
    store.slice("notes_plugin").execute("INSERT INTO {prefix}notes VALUES ('local only')")
    return store


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rows(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql).fetchall())


# -- migrate ---------------------------------------------------------------------------------


def test_migrate_on_a_fresh_sqlite_store_names_what_ran_then_nothing_is_pending(
    tmp_path: Path,
) -> None:
    env = {"PRIXFIXE_HOME": str(tmp_path / "home")}
    first = _run("migrate", env=env)
    assert first.exit_code == 0, first.stderr
    assert first.stdout.startswith("Applied ")
    assert re.search(r"^    core +0001_meta$", first.stdout, flags=re.MULTILINE)
    assert re.search(r"^    core +0002_records$", first.stdout, flags=re.MULTILINE)
    assert str(tmp_path / "home" / "store.sqlite3") in first.stdout

    data = json.loads(_run("migrate", "--json", env=env).stdout)
    assert data["applied"] == []
    assert data["location"] == str(tmp_path / "home" / "store.sqlite3")
    again = _run("migrate", env=env)
    assert again.exit_code == 0
    assert again.stdout.startswith("Nothing pending: the store at ")


def test_migrate_json_lists_each_migration_with_its_owner(tmp_path: Path) -> None:
    result = _run("migrate", "--json", env={"PRIXFIXE_HOME": str(tmp_path / "home")})
    assert result.exit_code == 0, result.stderr
    applied = json.loads(result.stdout)["applied"]
    assert applied[:2] == [
        {"owner": "core", "name": "0001_meta", "location": str(tmp_path / "home/store.sqlite3")},
        {"owner": "core", "name": "0002_records", "location": str(tmp_path / "home/store.sqlite3")},
    ]
    assert all(m["owner"] and m["name"] for m in applied)


def test_migrate_on_a_fresh_postgresql_database_names_what_ran_then_nothing_is_pending(
    postgres_url: str, tmp_path: Path
) -> None:
    env = {STORE_URL_ENV: postgres_url, "PRIXFIXE_HOME": str(tmp_path / "home")}
    first = _run("migrate", env=env)
    assert first.exit_code == 0, first.stderr
    database = postgres_url.split("@", 1)[1]
    assert re.search(
        rf"^  postgresql://\S+@{re.escape(database)}:\n    core +0001_meta\n"
        r"    core +0002_records\n",
        first.stdout,
        flags=re.MULTILINE,
    ), first.stdout
    assert re.search(
        r"^    prixfixe\.default_plugins\.routines +0001_reports\n", first.stdout, re.MULTILINE
    ), "the report archive's tables are in the shared database"
    # Every built-in owner's tables are in the database: no local file is opened.
    assert "store.sqlite3" not in first.stdout
    assert _rows(postgres_url, "SELECT owner, name FROM migrations ORDER BY owner, seq") == [
        ("core", "0001_meta"),
        ("core", "0002_records"),
        ("prixfixe.default_plugins.knowledge", "0001_knowledge"),
        ("prixfixe.default_plugins.knowledge", "0002_vectors"),
        ("prixfixe.default_plugins.knowledge", "0003_index_written_by_ingest"),
        ("prixfixe.default_plugins.routines", "0001_reports"),
        ("prixfixe.default_plugins.routines", "0002_reports_created"),
    ]

    data = json.loads(_run("migrate", "--json", env=env).stdout)
    assert data["location"] == f"postgresql://{postgres_url.split('://', 1)[1]}"
    assert data["applied"] == []
    again = _run("migrate", env=env)
    assert again.exit_code == 0, again.stderr
    assert again.stdout.startswith("Nothing pending: the store at postgresql://")


def test_migrate_says_clearly_when_the_postgresql_server_cannot_be_reached(tmp_path: Path) -> None:
    port = _closed_port()
    result = _run(
        "migrate",
        env={
            STORE_URL_ENV: f"postgresql://someone@127.0.0.1:{port}/db",
            "PRIXFIXE_HOME": str(tmp_path),
        },
    )
    assert result.exit_code == 1
    assert f"127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


# -- copy ------------------------------------------------------------------------------------


def test_copy_moves_every_record_with_ids_history_and_closes_and_verifies_the_counts(
    postgres_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "one" / "store.sqlite3"
    source = _source(path)
    expected = {
        kind: source.query(kind, include_closed=True, limit=500).records
        for kind in ("reminder", "deadline", "countdown")
    }
    histories = {
        r.id: source.history(kind, r.id) for kind, records in expected.items() for r in records
    }
    generation = source.generation()
    source.close()
    before = _digest(path)

    result = _run("copy", str(path), postgres_url)
    assert result.exit_code == 0, result.stderr
    assert "wrote 5 records, 2 history entries, 3 kinds" in result.stdout
    assert "Verified by counts:" in result.stdout
    assert "countdown  2            2" in result.stdout
    assert "reminder   2            2" in result.stdout
    assert "(history)  2            2" in result.stdout
    assert f"Generation: {generation} in the file, {generation} in the database." in result.stdout
    assert "Not copied, by design: plugins' own tables" in result.stdout
    assert "notes_plugin" in result.stdout
    assert _digest(path) == before, "the file is only read"

    target = PostgresStore.open(postgres_url, KINDS)
    try:
        for kind, records in expected.items():
            assert target.query(kind, include_closed=True, limit=500).records == records
        for kind, records in expected.items():
            for r in records:
                assert target.history(kind, r.id) == histories[r.id]
        assert target.generation() == generation
        # Later writes keep increasing: a new generation and a new id.
        written = target.put("reminder", {"text": "after", "due": "2026-12-09"})
        assert written.generation == generation + 1
        assert written.id == 6
    finally:
        target.close()


def test_a_second_copy_writes_nothing_and_still_verifies(postgres_url: str, tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    _source(path).close()
    assert _run("copy", str(path), postgres_url).exit_code == 0
    history = _rows(postgres_url, "SELECT * FROM history ORDER BY record, gen")

    again = _run("copy", str(tmp_path), postgres_url, "--json")  # the directory works too
    assert again.exit_code == 0, again.stderr
    data = json.loads(again.stdout)
    assert data["written"] == 0
    assert (data["records_written"], data["history_written"], data["kinds_written"]) == (0, 0, 0)
    assert {k["kind"]: (k["source"], k["target"]) for k in data["kinds"]} == {
        "countdown": (2, 2),
        "deadline": (1, 1),
        "reminder": (2, 2),
    }
    assert (data["history_source"], data["history_target"]) == (2, 2)
    assert data["not_copied"] == ["notes_plugin"]
    assert _rows(postgres_url, "SELECT * FROM history ORDER BY record, gen") == history
    text = _run("copy", str(path), postgres_url).stdout
    assert "nothing to write: the database already holds every record of the file" in text


def test_a_database_holding_a_different_record_at_the_same_id_is_refused_by_name(
    postgres_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "store.sqlite3"
    _source(path).close()
    other = PostgresStore.open(postgres_url, KINDS)
    try:
        other.put("reminder", {"text": "someone else's", "due": "2026-12-01"})
    finally:
        other.close()

    result = _run("copy", str(path), postgres_url)
    assert result.exit_code == 1
    assert "refusing to copy into postgresql://" in result.stderr
    assert "a different record 1" in result.stderr
    assert "differs in body, gen)" in result.stderr.replace("\n", "")
    assert "Nothing was written" in result.stderr.replace("\n", " ")
    assert "Traceback" not in result.stdout + result.stderr
    assert _rows(postgres_url, "SELECT count(*) FROM records") == [(1,)]


def test_a_database_holding_records_the_file_lacks_is_refused(
    postgres_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "store.sqlite3"
    source = SQLiteStore.open(path, KINDS)
    source.put("reminder", {"text": "one", "due": "2026-12-01"})
    source.put("reminder", {"text": "two", "due": "2026-12-02"})
    source.close()
    assert _run("copy", str(path), postgres_url).exit_code == 0
    other = PostgresStore.open(postgres_url, KINDS)
    try:
        other.put("reminder", {"text": "written after the copy", "due": "2026-12-03"})
    finally:
        other.close()
    # Written after the copy (a later generation): the copy is still idempotent.
    assert json.loads(_run("copy", str(path), postgres_url, "--json").stdout)["written"] == 0

    with psycopg.connect(postgres_url) as conn:
        conn.execute("UPDATE records SET created_gen = 1, gen = 1 WHERE id = 3")
    result = _run("copy", str(path), postgres_url)
    assert result.exit_code == 1
    assert "reminder record 3, which" in result.stderr.replace("\n", " ")


def test_a_missing_or_corrupt_sqlite_file_is_a_clear_error(
    postgres_url: str, tmp_path: Path
) -> None:
    missing = _run("copy", str(tmp_path / "nope.sqlite3"), postgres_url)
    assert missing.exit_code == 1
    assert "no store file at" in missing.stderr
    corrupt = tmp_path / "corrupt.sqlite3"
    corrupt.write_bytes(b"this is not a database" * 100)
    bad = _run("copy", str(corrupt), postgres_url)
    assert bad.exit_code == 1
    assert "is not a readable prixfixe store" in bad.stderr.replace("\n", " ")
    for result in (missing, bad):
        assert "Traceback" not in result.stdout + result.stderr
    assert corrupt.read_bytes() == b"this is not a database" * 100


def test_copy_says_clearly_when_the_postgresql_server_cannot_be_reached(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    SQLiteStore.open(path, KINDS).close()
    port = _closed_port()
    result = _run("copy", str(path), f"postgresql://someone@127.0.0.1:{port}/db")
    assert result.exit_code == 1
    assert f"cannot use the PostgreSQL store at 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_copy_takes_no_password_on_the_command_line_and_reads_one_from_an_env_var(
    postgres_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "store.sqlite3"
    SQLiteStore.open(path, KINDS).close()
    user, rest = postgres_url.removeprefix("postgresql://").split("@", 1)
    refused = _run("copy", str(path), f"postgresql://{user}:hunter2@{rest}")
    assert "hunter2" not in refused.stdout + refused.stderr
    assert refused.exit_code == 2
    assert "--password-env" in refused.stderr
    unset = _run("copy", str(path), postgres_url, "--password-env", "PRIXFIXE_TEST_NO_SUCH_VAR")
    assert unset.exit_code == 2
    assert "PRIXFIXE_TEST_NO_SUCH_VAR is not set" in unset.stderr
    # Trust authentication on loopback: any password is accepted, which is enough to see it used.
    given = _run(
        "copy", str(path), postgres_url, "--password-env", "DB_PW", env={"DB_PW": "secret"}
    )
    assert given.exit_code == 0, given.stderr


def test_a_file_from_an_older_version_is_left_alone_and_the_error_says_to_migrate_it(
    postgres_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "store.sqlite3"
    SQLiteStore.open(path, {}, core_migrations=CORE_MIGRATIONS[:1]).close()
    before = _digest(path)
    result = _run("copy", str(path), postgres_url)
    assert result.exit_code == 1
    message = " ".join(result.stderr.split())
    assert f"PRIXFIXE_HOME={tmp_path} prixfixe store migrate" in message
    assert _digest(path) == before
