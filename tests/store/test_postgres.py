"""What only the PostgreSQL backend has: choosing it by URL, clear errors for a bad URL or an
unreachable server, one database shared by several stores (instances), generations that
commit in order, its migrations table, and plugins' own tables kept in the local file. The
record semantics themselves run on both backends in test_records, test_query and test_tools."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from mcp import Client

from prixfixe.app import App
from prixfixe.cli import cli
from prixfixe.config import STORE_URL_ENV, validate_config
from prixfixe.declarations.kinds import StoreMigration
from prixfixe.errors import ConfigError, StoreError, StoreFaultError, StoreVersionError
from prixfixe.mcp.server import build_server
from prixfixe.secrets import Secret
from prixfixe.store import StoreChange, open_store
from prixfixe.store.postgres import PG_CORE_MIGRATIONS, PostgresStore
from tests.conftest import AppFactory
from tests.postgres_server import left_open
from tests.step_fixtures import StepsPlugin
from tests.store.conftest import KINDS

DENTIST = {"text": "dentist", "due": "2026-12-01"}
NOTES = StoreMigration(
    name="0001_notes", statements=("CREATE TABLE {prefix}notes (body TEXT NOT NULL)",)
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once it is closed


def _rows(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql).fetchall())


def test_a_postgresql_url_opens_the_records_there_and_the_migrations_are_recorded(
    postgres_url: str, tmp_path: Path
) -> None:
    store = open_store(tmp_path / "home", KINDS, url=postgres_url)
    try:
        assert isinstance(store, PostgresStore)
        assert store.put("reminder", DENTIST).generation == 1
        assert store.schema_versions() == {"core": 2}
    finally:
        store.close()
    assert not (tmp_path / "home").exists(), "no owner has tables: no local file"
    assert _rows(postgres_url, "SELECT owner, seq, name FROM migrations ORDER BY seq") == [
        ("core", 1, "0001_meta"),
        ("core", 2, "0002_records"),
    ]
    again = open_store(tmp_path / "home", KINDS, url=postgres_url)
    try:
        assert again.generation() == 1
        assert len(_rows(postgres_url, "SELECT * FROM migrations")) == 2
    finally:
        again.close()


def test_two_stores_on_one_database_see_each_others_writes_at_one_generation(
    postgres_url: str,
) -> None:
    a = PostgresStore.open(postgres_url, KINDS)
    b = PostgresStore.open(postgres_url, KINDS)
    try:
        written = a.put("reminder", DENTIST)
        page = b.query("reminder")
        assert [r.id for r in page.records] == [written.id]
        assert page.generation == written.generation == b.generation()
        b.close_record("reminder", written.id, "done")
        assert a.get("reminder", written.id).closed_gen == a.generation()
    finally:
        a.close()
        b.close()


def test_a_store_left_open_is_seen_by_its_pool_s_threads_until_it_is_closed(
    postgres_url: str, make_app: AppFactory
) -> None:
    """What the suite's teardown check (tests/conftest.py) looks for: a store's pool threads
    run until it is closed, and an app built by `make_app` has its store closed for it."""
    store = PostgresStore.open(postgres_url, KINDS)
    try:
        assert any(name.endswith("-worker-0") for name in left_open([postgres_url]))
    finally:
        store.close()
    assert left_open([postgres_url]) == []
    app = make_app(env={STORE_URL_ENV: postgres_url})
    assert app.store.generation() == 0
    assert left_open([postgres_url])  # open until make_app's teardown closes it


def test_concurrent_writers_take_every_generation_once_in_commit_order(
    postgres_url: str,
) -> None:
    stores = [PostgresStore.open(postgres_url, KINDS) for _ in range(2)]
    errors: list[BaseException] = []

    def writer(store: PostgresStore, n: int) -> None:
        try:
            for i in range(n):
                if i % 3 == 0:
                    store.put_many("reminder", [DENTIST, DENTIST])
                else:
                    store.put("reminder", DENTIST)
        except StoreError as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(s, 15)) for s in stores for _ in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not errors
        records = stores[0].query("reminder", limit=500).records
        gens = sorted({r.gen for r in records})
        assert gens == list(range(1, 61)), "60 writes, 60 generations, no gap"
        # Ids follow generations: a write that committed later never holds a smaller id.
        by_id = sorted(records, key=lambda r: r.id)
        assert [r.gen for r in by_id] == sorted(r.gen for r in by_id)
        assert stores[1].generation() == 60
    finally:
        for s in stores:
            s.close()


def test_observers_are_told_of_each_committed_write_and_not_of_a_refused_one(
    postgres_url: str,
) -> None:
    store = PostgresStore.open(postgres_url, KINDS)
    seen: list[StoreChange] = []
    off = store.observe(seen.append)
    try:
        created = store.put("reminder", DENTIST)
        batch = store.put_many("reminder", [DENTIST, DENTIST])
        store.close_record("reminder", created.id)
        with pytest.raises(StoreError):
            store.close_record("reminder", created.id)
        off()
        store.put("reminder", DENTIST)
    finally:
        store.close()
    assert seen == [
        StoreChange(1, "put", "reminder", (created.id,)),
        StoreChange(2, "put", "reminder", batch.ids),
        StoreChange(3, "close", "reminder", (created.id,)),
    ]


def test_plugins_own_tables_stay_in_the_local_file_beside_postgresql(
    postgres_url: str, tmp_path: Path
) -> None:
    store = open_store(tmp_path / "home", KINDS, {"notes_plugin": [NOTES]}, url=postgres_url)
    seen: list[StoreChange] = []
    store.observe(seen.append)
    try:
        own = store.slice("notes_plugin")
        own.execute("INSERT INTO {prefix}notes VALUES ('kept')")
        assert own.query("SELECT body FROM {prefix}notes") == [("kept",)]
        assert store.schema_versions() == {"core": 2, "notes_plugin": 1}
        assert [c.op for c in seen] == ["slice"]
        with pytest.raises(StoreError, match="declared no StoreMigration"):
            store.slice("other_plugin")
    finally:
        store.close()
    assert (tmp_path / "home" / "store.sqlite3").exists()


def test_without_a_local_file_a_plugins_own_tables_are_refused_by_name(
    postgres_url: str,
) -> None:
    store = PostgresStore.open(postgres_url, KINDS, {"notes_plugin": [NOTES]})
    try:
        with pytest.raises(StoreError, match="'notes_plugin''s own tables are not supported on"):
            store.slice("notes_plugin")
        assert store.put("reminder", DENTIST).generation == 1
    finally:
        store.close()


def test_a_database_from_a_newer_version_is_refused(postgres_url: str) -> None:
    future = StoreMigration(name="0003_future", statements=("SELECT 1",))
    PostgresStore.open(postgres_url, KINDS, core_migrations=(*PG_CORE_MIGRATIONS, future)).close()
    with pytest.raises(StoreVersionError, match="schema version 3 for 'core'"):
        PostgresStore.open(postgres_url, KINDS)


def test_a_database_with_tables_of_its_own_is_not_taken_for_a_store(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE records (x INTEGER)")
    with pytest.raises(StoreError, match="not a prixfixe store"):
        PostgresStore.open(postgres_url, KINDS)


def test_an_unreachable_server_is_one_error_naming_host_and_port_never_the_password(
    tmp_path: Path,
) -> None:
    port = _closed_port()
    url = f"postgresql://someone:hunter2@127.0.0.1:{port}/db"
    with pytest.raises(StoreFaultError) as caught:
        open_store(tmp_path / "home", KINDS, url=url)
    message = caught.value.message
    assert f"cannot use the PostgreSQL store at 127.0.0.1:{port}" in message
    assert f"postgresql://someone@127.0.0.1:{port}/db" in message
    assert "hunter2" not in message
    with pytest.raises(StoreFaultError, match=f"127.0.0.1:{port}"):
        open_store(
            tmp_path / "home",
            KINDS,
            url=f"postgresql://someone@127.0.0.1:{port}/db",
            password=Secret("hunter2"),
        )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mysql://127.0.0.1/db", "must start with postgresql://"),
        ("postgresql://127.0.0.1:5432/db?sslmode=maybe&x=1", "not a PostgreSQL URL"),
    ],
)
def test_a_bad_url_is_one_clear_error(tmp_path: Path, url: str, expected: str) -> None:
    with pytest.raises(StoreError, match=expected):
        open_store(tmp_path / "home", KINDS, url=url)


def test_the_cli_on_an_unreachable_server_says_where_without_a_traceback() -> None:
    port = _closed_port()
    result = CliRunner().invoke(
        cli,
        ["store", "query", "reminder"],
        env={STORE_URL_ENV: f"postgresql://someone@127.0.0.1:{port}/db"},
        catch_exceptions=False,
    )
    assert result.exit_code != 0
    assert f"127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize(
    ("store", "expected"),
    [
        ({"url": "postgresql://u:hunter2@h/db"}, "store.url: the url holds a password"),
        ({"url": "sqlite:///x"}, "store.url: expected postgresql://"),
        ({"password": "hunter2"}, "store.password"),
    ],
)
def test_the_store_section_refuses_passwords_in_plain_sight(
    store: dict[str, object], expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        validate_config({"store": store}, file="prixfixe.toml")
    assert expected in caught.value.message
    assert "hunter2" not in caught.value.message


def test_the_url_in_the_environment_beats_the_file_and_the_password_is_a_reference() -> None:
    from prixfixe.config import store_url

    model = validate_config(
        {"store": {"url": "postgresql://app@file-host/db", "password": {"env": "PG_PW"}}},
        file="prixfixe.toml",
    )
    url, password = store_url(model, {"PG_PW": "s3cret"})
    assert url == "postgresql://app@file-host/db"
    assert password is not None
    assert password.reveal() == "s3cret"
    url, _ = store_url(model, {STORE_URL_ENV: "postgresql://app@env-host/db", "PG_PW": "x"})
    assert url == "postgresql://app@env-host/db"
    assert store_url(validate_config({}, file="x"), {}) == (None, None)
    with pytest.raises(ConfigError, match=r"store\.password refers to environment variable PG_PW"):
        store_url(model, {})


def test_the_core_never_imports_the_driver_without_a_postgresql_url(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from prixfixe.app import App\n"
        "from prixfixe.store import open_store\n"
        "from tests.store.conftest import KINDS\n"
        "open_store(Path(sys.argv[1]), KINDS).close()\n"
        "assert not [m for m in sys.modules if m.startswith('psycopg')], 'psycopg imported'\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "home")],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.anyio
async def test_a_report_made_through_one_app_on_postgresql_is_served_by_another(
    make_app: AppFactory, postgres_url: str, tmp_path: Path
) -> None:
    config = '[routines.demo]\n[[routines.demo.steps]]\ntype = "echo"\ntext = "hi"\n'
    one = make_app(config=config, plugins=[StepsPlugin()], env={STORE_URL_ENV: postgres_url})
    # Another instance: its own home (its own local file), the same database.
    other_env = {STORE_URL_ENV: postgres_url, "PRIXFIXE_HOME": str(tmp_path / "other")}
    other = make_app(config=config, plugins=[StepsPlugin()], env=other_env)
    async with Client(build_server(one), mode="legacy") as client:
        put = await client.call_tool(
            "store_put", {"kind": "reminder", "record": {"text": "x", "due": "2026-01-02"}}
        )
        run = await client.call_tool("routine_run", {"name": "demo", "format": "data"})
    async with Client(build_server(other), mode="legacy") as client:
        kept = await client.call_tool("tool_invoke", {"name": "report_get", "arguments": {}})
    assert put.structured_content == {"id": 1, "generation": 1}
    assert run.is_error is False
    assert kept.is_error is False, kept.content
    assert kept.structured_content is not None
    assert kept.structured_content["generation"] == 2, kept.structured_content
    assert _rows(postgres_url, "SELECT id, kind FROM records") == [(1, "reminder")]
    reports = _rows(
        postgres_url, "SELECT generation, routine FROM prixfixe_default_plugins_routines__reports"
    )
    assert reports == [(2, "demo")]


def test_an_owner_with_postgresql_statements_keeps_its_tables_in_the_shared_database(
    postgres_url: str, tmp_path: Path
) -> None:
    shared = StoreMigration(
        name="0001_notes",
        statements=("CREATE TABLE {prefix}notes (n INTEGER, body TEXT NOT NULL)",),
        postgres=("CREATE TABLE {prefix}notes (n BIGINT, body TEXT NOT NULL)",),
    )
    first = open_store(tmp_path / "a", KINDS, {"notes": [shared]}, url=postgres_url)
    second = open_store(tmp_path / "b", KINDS, {"notes": [shared]}, url=postgres_url)
    try:
        mine = first.slice("notes")
        gen = mine.execute_stamped(
            "INSERT INTO {prefix}notes VALUES (:generation, :body)", {"body": "50% 'off' ?"}
        )
        assert mine.execute("UPDATE {prefix}notes SET body = body || ? WHERE n = ?", ("!", gen))
        rows = second.slice("notes").query(
            "SELECT n, body FROM {prefix}notes WHERE body LIKE '%off%' AND n::text = ?",
            (str(gen),),
        )
        assert rows == [(gen, "50% 'off' ?!")]
        with pytest.raises(StoreError, match="statement of 'notes' failed"):
            mine.query("SELECT nothing FROM {prefix}notes")
        assert second.slice("notes").query("SELECT count(*) FROM {prefix}notes") == [(1,)]
    finally:
        first.close()
        second.close()
    assert not (tmp_path / "a").exists(), "nothing of the owner's went to a local file"
    migrated = _rows(postgres_url, "SELECT name FROM migrations WHERE owner = 'notes'")
    assert migrated == [("0001_notes",)], "migrated once, by the first store"


def test_a_database_this_user_may_not_write_is_one_clear_error(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE ROLE reader LOGIN")
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    reader_url = postgres_url.replace("prixfixe@", "reader@")
    with pytest.raises(StoreFaultError, match="refused: permission denied for schema public"):
        PostgresStore.open(reader_url, KINDS)


def test_doctor_shows_the_postgresql_store_it_reaches_without_changing_it(
    postgres_url: str,
) -> None:
    result = CliRunner().invoke(
        cli, ["doctor", "--json"], env={STORE_URL_ENV: postgres_url}, catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    import json

    store = json.loads(result.stdout)["store"]
    assert store["backend"] == "postgresql"
    seen = store["postgresql"]
    assert seen["reachable"] is True
    assert seen["server_version"].split(".")[0].isdigit()
    assert seen["created"] is False, "doctor creates no table"
    pool = seen["pool"]
    assert (pool["min"], pool["max"]) == (1, 4)
    assert pool["database_connections"] >= 1, "doctor's own connection is one"
    assert pool["max_connections"] > pool["database_connections"]
    with psycopg.connect(postgres_url) as conn:
        (tables,) = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ).fetchone() or (None,)
    assert tables == 0
    text = (
        CliRunner()
        .invoke(cli, ["doctor"], env={STORE_URL_ENV: postgres_url}, catch_exceptions=False)
        .stdout
    )
    text = " ".join(text.split())  # as a person reads it, however the console wrapped it
    assert "Store: records, reports and knowledge in postgresql://" in text
    assert "pool: 1-4 connections an instance" in text
    assert "tables not created yet; notifications on prixfixe_changes (listen ok)" in text


def test_doctor_says_when_the_postgresql_store_cannot_be_reached() -> None:
    port = _closed_port()
    result = CliRunner().invoke(
        cli,
        ["doctor"],
        env={STORE_URL_ENV: f"postgresql://someone@127.0.0.1:{port}/db"},
        catch_exceptions=False,
    )
    assert result.exit_code == 0
    assert f"postgresql://someone@127.0.0.1:{port}/db (not reachable: " in result.stdout
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.anyio
async def test_max_calls_counts_stateless_calls_across_instances_on_one_database(
    make_app: AppFactory, postgres_url: str, tmp_path: Path
) -> None:
    def instance(home: str, limit: int) -> App:
        env = {STORE_URL_ENV: postgres_url, "PRIXFIXE_HOME": str(tmp_path / home)}
        return make_app(config=f"[leash]\nmax_calls = {limit}\n", plugins=[], env=env)

    one, other = instance("one", 3), instance("other", 3)
    async with (
        Client(build_server(one), mode="2026-07-28") as on_one,
        Client(build_server(other), mode="2026-07-28") as on_other,
    ):
        calls = [
            await on_one.call_tool("routine_list", {}),
            await on_other.call_tool("routine_list", {}),
            await on_one.call_tool("routine_list", {}),
            await on_other.call_tool("routine_list", {}),
        ]
    assert [c.is_error for c in calls] == [False, False, False, True]
    refusal = calls[-1].content[0].text  # type: ignore[union-attr]
    assert "3 stateless tool calls across this deployment" in refusal
    counted = _rows(postgres_url, "SELECT key, value FROM meta WHERE owner = 'counters'")
    assert counted == [("leash.max_calls:3:None", "4")]
    # A session (2025-11-25) counts on its own, and a renewed leash starts a new count.
    async with Client(build_server(instance("one", 3)), mode="legacy") as session:
        assert (await session.call_tool("routine_list", {})).is_error is False
    async with Client(build_server(instance("one", 4)), mode="2026-07-28") as renewed:
        assert (await renewed.call_tool("routine_list", {})).is_error is False
