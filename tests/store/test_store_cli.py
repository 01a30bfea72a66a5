"""`prixfixe store migrate` and `prixfixe store copy`: migrations applied and named, then
nothing pending, on SQLite and on PostgreSQL; a single-machine store moved into PostgreSQL
with ids, generations, history and closes, verified by counts, idempotent, refusing a
database holding other records, and clear errors for a bad file or an unreachable server."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
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
        ("prixfixe.default_plugins.activity", "0001_activity"),
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


# -- a file holding damaged records ------------------------------------------------------------


def _damaged_source(path: Path) -> dict[str, int]:
    """Reminders 1-5 in a real file, each damage of the store made in it: record 1's first
    kept version (history) not JSON, 2's body not JSON (overwritten in the file), 4's close
    reason not UTF-8, 5's body not UTF-8. Returns the generations that matter."""
    import sqlite3
    from contextlib import closing

    from tests.store.test_damaged_records import NOT_UTF8, with_history

    gens = with_history(path)  # record 1: updated twice, closed; record 2's text is PATCHME
    store = SQLiteStore.open(path, KINDS)
    try:
        closed_4 = store.close_record("reminder", 4, "done").generation
        updated_5 = store.put("reminder", {"text": "r5 again", "due": "2026-01-05"}, 5).generation
        generation = store.generation()
    finally:
        store.close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(
            "UPDATE history SET body = CAST('<<<<' AS TEXT) WHERE record = 1 AND gen = ?",
            (gens[0],),
        )
        conn.execute(
            "UPDATE records SET close_reason = CAST(? AS TEXT) WHERE id = 4", (b"do\xffne",)
        )
        conn.execute("UPDATE records SET body = CAST(? AS TEXT) WHERE id = 5", (NOT_UTF8,))
        conn.commit()
    data = bytearray(path.read_bytes())  # record 2's body: not JSON, its b-tree sound
    marker = b'{"text":"PATCHME'
    at = data.index(marker)
    data[at : at + len(marker)] = b"<" * len(marker)
    assert marker not in data
    path.write_bytes(bytes(data))
    return {"history_1": gens[0], "closed_4": closed_4, "updated_5": updated_5, "gen": generation}


def _copy_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    return subprocess.run(
        [sys.executable, "-m", "prixfixe", "store", "copy", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def test_copy_takes_everything_readable_and_names_each_damaged_record_and_version(
    postgres_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "store.sqlite3"
    gens = _damaged_source(path)
    before = _digest(path)

    proc = _copy_cli(str(path), postgres_url)
    out = " ".join(proc.stdout.split())
    err = " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "Could not decode" not in proc.stdout + proc.stderr
    assert proc.returncode == 1, proc.stderr
    assert "wrote 2 records, 2 history entries, 1 kind" in out
    assert re.search(r"reminder\s+5\s+2\s+3", proc.stdout), proc.stdout
    assert re.search(r"\(history\)\s+5\s+2\s+3", proc.stdout), proc.stdout
    assert "reminder 2: its body is not JSON at offset 0" in out
    assert (
        "reminder 4: its close reason is not UTF-8 (byte 0xff at offset 2); "
        "its 1 history entry with it" in out
    )
    assert (
        "reminder 5: its body is not UTF-8 (byte 0xff at offset 12); "
        "its 1 history entry with it" in out
    )
    assert (
        f"reminder 1 (its version of generation {gens['history_1']}, in its history): "
        "its body is not JSON at offset 0" in out
    )
    assert "left out 3 records and 3 history entries" in err
    assert "everything else was copied and verified" in err
    assert f"sqlite3 {path} .recover" in err
    assert _digest(path) == before, "the file is only read"

    target = PostgresStore.open(postgres_url, KINDS)
    try:
        page = target.query("reminder", include_closed=True)
        assert [r.id for r in page.records] == [1, 3]
        assert page.records[0].close_reason == "done"
        history = target.history("reminder", 1)
        assert [e.op for e in history] == ["update", "close"]
        assert gens["history_1"] not in [e.gen for e in history]
        assert target.generation() == gens["gen"]
        # The left-out records' ids stay reserved: a later copy of a repaired file fits.
        assert target.put("reminder", {"text": "new", "due": "2026-02-01"}).id == 6
    finally:
        target.close()

    # Again: nothing to write, the same records named, still not a success.
    again = _copy_cli(str(path), postgres_url, "--json")
    assert again.returncode == 1
    assert "Traceback" not in again.stdout + again.stderr
    data = json.loads(again.stdout)
    assert data["written"] == 0
    assert [(d["kind"], d["id"], d["gen"], d["history"]) for d in data["left_out"]] == [
        ("reminder", 1, gens["history_1"], 0),
        ("reminder", 2, None, 0),
        ("reminder", 4, None, 1),
        ("reminder", 5, None, 1),
    ]
    assert "its body is not UTF-8" in data["left_out"][3]["problem"]
    assert "left out 3 records and 3 history entries" in " ".join(again.stderr.split())


def test_a_record_damaged_after_an_earlier_copy_is_named_not_taken_for_another_stores(
    postgres_url: str, tmp_path: Path
) -> None:
    import sqlite3
    from contextlib import closing

    from tests.store.test_damaged_records import NOT_UTF8, with_history

    path = tmp_path / "store.sqlite3"
    with_history(path)
    assert _copy_cli(str(path), postgres_url).returncode == 0
    copied = _rows(postgres_url, "SELECT id, body FROM records ORDER BY id")
    with closing(sqlite3.connect(path)) as conn:  # damaged after it was copied
        conn.execute("UPDATE records SET body = CAST(? AS TEXT) WHERE id = 5", (NOT_UTF8,))
        conn.commit()

    proc = _copy_cli(str(path), postgres_url)
    out = " ".join(proc.stdout.split())
    err = " ".join(proc.stderr.split())
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "records of another store" not in err
    assert "nothing to write" in out
    assert "reminder 5: its body is not UTF-8 (byte 0xff at offset 12)" in out
    assert "left out 1 record and 0 history entries" in err
    assert _rows(postgres_url, "SELECT id, body FROM records ORDER BY id") == copied
