"""The store's records on PostgreSQL, for several prixfixe instances sharing one database.

The same `Store` as the SQLite backend, on the same shapes: one `records` table for every
kind (the body as `jsonb`), a `history` of replaced bodies and closes, per-owner migrations
recorded in `migrations`, and the generation counter. Imported only when a `postgresql://` URL
is configured (`prixfixe.store.open_store`), so the driver (psycopg 3 and its pool, the
`prixfixe[postgres]` extra) is never needed otherwise.

The generation is a one-row counter that every write transaction increments first, not a
sequence: a sequence hands out numbers outside transactions, so writes could commit out of
order (generation 7 visible before 6) and a reader at "generation 7" could miss 6 forever. The
row lock instead orders writers, so generations commit in order, and a read transaction
(repeatable read) sees the counter and the records of one snapshot: a page is read at exactly
the generation it reports.

Filters compile to typed expressions on the body (`(body ->> 'due') COLLATE "C"`,
`(body ->> 'n')::numeric`, `::boolean`), values always bound as parameters, so comparisons,
sorting (bytewise text, NULLs first ascending as SQLite sorts them) and `contains` (ASCII
case-insensitive) agree with SQLite. A kind's indexed fields get a partial expression index.

Plugins' own SQL tables (owned slices) are SQLite statements: on PostgreSQL they stay in the
local SQLite file beside the configuration (`local`), or, without one, are refused by name.

Several instances on one database hear of each other's writes: each write also sends its change
with `pg_notify` in its own transaction, and a store that is observed listens for the others'
(`prixfixe.store.pg_changes`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any, NoReturn, TypeVar

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from prixfixe.declarations.fields import FieldType, field_types
from prixfixe.declarations.kinds import (
    FIELD_NAME_PATTERN,
    KIND_NAME_PATTERN,
    StoreKind,
    StoreMigration,
)
from prixfixe.errors import (
    ClosedRecordError,
    StoreAccessError,
    StoreError,
    StoreFaultError,
    UnknownRecordError,
)
from prixfixe.store import migrations as mig
from prixfixe.store.api import (
    CORE_OWNER,
    MAX_LIMIT,
    AppliedMigration,
    HistoryEntry,
    OwnerSlice,
    Page,
    Store,
    StoreChange,
    StoredRecord,
    StoreObserver,
    Written,
    WrittenBatch,
)
from prixfixe.store.cursor import decode_cursor, encode_cursor
from prixfixe.store.faults import MAX_SQLITE_INT
from prixfixe.store.observers import Observers
from prixfixe.store.pg_changes import CHANNEL, ChangeListener, payloads
from prixfixe.store.pg_slices import PostgresSlice
from prixfixe.store.query import RECORD_COLUMNS, Condition, QuerySpec, parse_query
from prixfixe.store.records import (
    find_kind,
    kind_conflict,
    record_json,
    validate_record,
    validated_bodies,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

#: The oldest server: `gen_random_uuid()` (the cursor secret) is built in from 13 on.
MIN_SERVER_VERSION = 130000
#: Seconds to wait for the server when connecting, and for a free connection of the pool.
CONNECT_TIMEOUT_S = 10
POOL_MAX = 4
#: How long the pool retries a lost connection before it gives up and lets the next call try
#: afresh. Its retries double (1 s, 2 s, 4 s, ...) up to this: left at psycopg_pool's 5
#: minutes, a call made just after a long outage waited for the next doubled retry and
#: failed although the server was back.
RECONNECT_S = CONNECT_TIMEOUT_S / 2
#: Any constant: the advisory lock that lets one instance at a time migrate a database.
_MIGRATION_LOCK = 0x70726978  # "prix"
_COLUMNS = "id, gen, created_gen, schema_version, body, closed_gen, close_reason"

#: The core's schema on PostgreSQL: the same tables and migration names as on SQLite.
PG_CORE_MIGRATIONS: tuple[StoreMigration, ...] = (
    StoreMigration(
        name="0001_meta",
        statements=(
            "CREATE TABLE meta (owner TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
            " PRIMARY KEY (owner, key))",
            "CREATE TABLE migrations (owner TEXT NOT NULL, seq INTEGER NOT NULL,"
            " name TEXT NOT NULL, generation BIGINT NOT NULL,"
            " PRIMARY KEY (owner, seq), UNIQUE (owner, name))",
            "CREATE TABLE generation (one INTEGER PRIMARY KEY CHECK (one = 1),"
            " value BIGINT NOT NULL CHECK (value >= 0))",
            "INSERT INTO generation VALUES (1, 0)",
            # Signs cursors, so a cursor from another store is refused: 244 random bits.
            "INSERT INTO meta VALUES ('core', 'cursor_secret',"
            " replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''))",
        ),
    ),
    StoreMigration(
        name="0002_records",
        statements=(
            "CREATE TABLE kinds (name TEXT PRIMARY KEY, owner TEXT NOT NULL,"
            " schema_version INTEGER NOT NULL)",
            "CREATE TABLE records (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
            " kind TEXT NOT NULL REFERENCES kinds (name),"
            " schema_version INTEGER NOT NULL, body JSONB NOT NULL,"
            " created_gen BIGINT NOT NULL, gen BIGINT NOT NULL,"
            " closed_gen BIGINT, close_reason TEXT)",
            "CREATE INDEX records_kind_id ON records (kind, id)",
            "CREATE TABLE history (record BIGINT NOT NULL REFERENCES records (id),"
            " gen BIGINT NOT NULL, op TEXT NOT NULL CHECK (op IN ('update', 'close')),"
            " body JSONB, schema_version INTEGER, prev_gen BIGINT NOT NULL, reason TEXT,"
            " PRIMARY KEY (record, gen))",
        ),
    ),
)


def redacted(url: str) -> str:
    """The URL as messages show it: `postgresql://user@host:port/db`, never a password."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.Error:
        return "postgresql://(unparsable URL)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    return f"postgresql://{user}{_server(parts)}/{parts.get('dbname') or ''}"


def probe(url: str, password: str | None = None, timeout: float = 5.0) -> dict[str, Any]:
    """What doctor says of the database without changing it: reachable or why not, the
    server's version, whether prixfixe's tables are there and how many records they hold."""
    where = {"location": redacted(url)}
    try:
        parts = conninfo_to_dict(url)
        where["server"] = _server(parts)
        conninfo = make_conninfo(url, password=password) if password else url
        with psycopg.connect(conninfo, connect_timeout=max(1, int(timeout))) as conn:
            conn.read_only = True
            (version,) = conn.execute("SELECT current_setting('server_version')").fetchone() or (
                "",
            )
            (created,) = conn.execute("SELECT to_regclass('records') IS NOT NULL").fetchone() or (
                False,
            )
            records = None
            if created:
                (records,) = conn.execute("SELECT count(*) FROM records").fetchone() or (0,)
            channel = _probe_channel(conn)
            # Connections: each instance's pool takes up to POOL_MAX (and one to listen);
            # what the database holds now, from every instance and anything else, of its limit.
            (open_now, limit) = conn.execute(
                "SELECT (SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database()), current_setting('max_connections')::int"
            ).fetchone() or (0, 0)
    except psycopg.Error as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return {**where, "reachable": False, "error": detail}
    return {
        **where,
        "reachable": True,
        "server_version": version,
        "created": bool(created),
        "records": records,
        "notifications": channel,
        "pool": {
            "min": 1,
            "max": POOL_MAX,
            "wait_s": CONNECT_TIMEOUT_S,
            "database_connections": open_now,
            "max_connections": limit,
        },
    }


def _probe_channel(conn: psycopg.Connection[Any]) -> dict[str, Any]:
    """The change notifications' channel, and whether this server lets a session listen on
    it (LISTEN, then UNLISTEN at once: nothing stays behind)."""
    listen = sql.Identifier(CHANNEL)
    try:
        with conn.transaction():
            conn.execute(sql.SQL("LISTEN {}").format(listen))
            conn.execute(sql.SQL("UNLISTEN {}").format(listen))
    except psycopg.Error as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return {"channel": CHANNEL, "listen": False, "error": detail}
    return {"channel": CHANNEL, "listen": True}


def _server(parts: Mapping[str, Any]) -> str:
    host = str(parts.get("host") or "localhost")
    return f"{host}:{parts.get('port') or 5432}"


def pg_text(field: str) -> str:
    return f"((body ->> '{field}') COLLATE \"C\")"


def field_expr(field: str, ftype: FieldType) -> str:
    """The SQL expression for a record field, typed so it compares and sorts as on SQLite
    (field names are checked identifiers, so they may stand in the SQL text)."""
    if field in RECORD_COLUMNS:
        return field
    if ftype == "number":
        return f"((body ->> '{field}')::numeric)"
    if ftype == "boolean":
        return f"((body ->> '{field}')::boolean)"
    return pg_text(field)


def _placeholder(field: str, ftype: FieldType) -> str:
    if field in RECORD_COLUMNS:
        return "%s"
    return {"number": "%s::numeric", "boolean": "%s::boolean"}.get(ftype, "%s::text")


def _bind(field: str, ftype: FieldType, value: Any) -> Any:
    # A number goes as its JSON text, cast by the server: exactly what the body holds.
    if field not in RECORD_COLUMNS and ftype == "number" and not isinstance(value, bool):
        return json.dumps(value)
    return value


def index_name(kind: str, field: str) -> str:
    name = f"kind:{kind}.{field}"
    if len(name.encode()) <= 63:  # PostgreSQL cuts longer identifiers
        return name
    return f"kind:{hashlib.sha256(name.encode()).hexdigest()[:24]}"


class PostgresStore:
    """The `Store` on a PostgreSQL database; thread-safe. Open it with `PostgresStore.open`."""

    def __init__(
        self,
        url: str,
        kinds: Mapping[str, StoreKind],
        migrations: Mapping[str, Sequence[StoreMigration]],
        local: Store | None,
        password: str | None = None,
    ) -> None:
        for kind in kinds.values():
            names_ok = KIND_NAME_PATTERN.match(kind.name) and all(
                FIELD_NAME_PATTERN.match(f) for f in kind.fields
            )
            if not names_ok:
                raise StoreError(f"kind {kind.name!r} has a name or field name SQL cannot take")
        try:
            parts = conninfo_to_dict(url)
            # The password joins the connection parameters only, never the URL shown.
            self._conninfo = url if password is None else make_conninfo(url, password=password)
        except psycopg.Error as exc:
            raise StoreError(
                f"the store URL is not a PostgreSQL URL ({exc}); expected "
                "postgresql://USER@HOST:PORT/DATABASE"
            ) from None
        self.location = redacted(url)
        self._server = _server(parts)
        self._kinds = dict(kinds)
        self._types = {k.name: field_types(k.model) for k in kinds.values()}
        self._local = local
        #: Owners whose tables live in this database (their migrations say how), and theirs.
        self._shared = {o: tuple(m) for o, m in migrations.items() if mig.shared_on_postgres(m)}
        self._owners = frozenset(migrations)
        self._unsupported = [o for o in migrations if local is None and o not in self._shared]
        self._broken: dict[str, str] = {}
        self._applied: list[AppliedMigration] = []
        self._observers = Observers()
        #: This store among the instances on one database: its own notifications it skips.
        self.instance = secrets.token_hex(8)
        self._listener: ChangeListener | None = None
        self._observed = 0
        self._listen_lock = threading.Lock()
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._secret = b""
        self._closed = False

    @classmethod
    def open(
        cls,
        url: str,
        kinds: Mapping[str, StoreKind],
        migrations: Mapping[str, Sequence[StoreMigration]] | None = None,
        *,
        local: Store | None = None,
        password: str | None = None,
        core_migrations: Sequence[StoreMigration] = PG_CORE_MIGRATIONS,
    ) -> PostgresStore:
        """Connect to the database at `url`, migrate it and declare `kinds`. Owners'
        `migrations` (their own SQLite tables) belong to `local`, which this store then
        closes with itself; without it they are refused on use."""
        store = cls(url, kinds, migrations or {}, local, password)
        try:
            store._open(tuple(core_migrations))
        except BaseException:
            store.close()
            raise
        return store

    # -- opening ----------------------------------------------------------------------------

    def _unreachable(self, exc: BaseException) -> NoReturn:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreFaultError(
            f"cannot use the PostgreSQL store at {self._server} ({self.location}): {detail}; "
            "check [store] url (or PRIXFIXE_STORE_URL) and that the server is running",
            location=self.location,
        ) from None

    def _refused(self, exc: psycopg.Error) -> NoReturn:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreFaultError(
            f"the PostgreSQL store at {self._server} ({self.location}) refused: {detail}",
            location=self.location,
        ) from None

    def _open(self, core: tuple[StoreMigration, ...]) -> None:
        try:
            with psycopg.connect(
                self._conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
            ) as conn:
                version = conn.info.server_version
                if version < MIN_SERVER_VERSION:
                    raise StoreError(
                        f"the PostgreSQL server at {self._server} is version {version}; "
                        "prixfixe needs 13 or newer"
                    )
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                    self._migrate_core(conn, core)
                    for owner, steps in self._shared.items():
                        self._migrate_owner(conn, owner, steps)
                    self._declare_kinds(conn)
                row = conn.execute(
                    "SELECT value FROM meta WHERE owner = %s AND key = 'cursor_secret'",
                    (CORE_OWNER,),
                ).fetchone()
                assert row is not None
                self._secret = bytes.fromhex(str(row[0]))
        except psycopg.OperationalError as exc:
            self._unreachable(exc)
        except psycopg.Error as exc:  # e.g. no right to create tables in that database
            self._refused(exc)
        for owner in self._unsupported:
            self._broken[owner] = (
                f"plugin {owner!r}'s own tables are not supported on PostgreSQL yet"
            )
        self._pool = ConnectionPool(
            self._conninfo,
            min_size=1,
            max_size=POOL_MAX,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
            timeout=CONNECT_TIMEOUT_S,
            reconnect_timeout=RECONNECT_S,
            name=self.location,
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        except PoolTimeout as exc:
            self._unreachable(exc)

    def _migrate_core(
        self, conn: psycopg.Connection[Any], core: tuple[StoreMigration, ...]
    ) -> None:
        exists = conn.execute("SELECT to_regclass('migrations') IS NOT NULL").fetchone()
        if exists is not None and exists[0]:
            rows = conn.execute(
                "SELECT name FROM migrations WHERE owner = %s ORDER BY seq", (CORE_OWNER,)
            ).fetchall()
            applied = tuple(str(r[0]) for r in rows)
        else:
            tables = conn.execute(
                "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
                " AND tablename IN ('records', 'meta', 'kinds', 'history', 'generation')"
            ).fetchone()
            if tables is not None and tables[0]:
                raise StoreError(
                    f"the database {self.location} has tables of its own but is not a "
                    "prixfixe store (no migrations table); give prixfixe a database of its own"
                )
            applied = ()
        steps = mig.pending(CORE_OWNER, applied, core, self.location)
        self._applied = [AppliedMigration(CORE_OWNER, m.name, self.location) for m in steps]
        if not steps:
            return
        generation = self._generation(conn) if applied else 0
        for seq, step in enumerate(steps, start=len(applied) + 1):
            for statement in step.statements:
                # The core's own SQL, nothing bound: if it fails, the database refused it.
                conn.execute(statement)
            conn.execute(
                "INSERT INTO migrations (owner, seq, name, generation) VALUES (%s, %s, %s, %s)",
                (CORE_OWNER, seq, step.name, generation),
            )
        conn.execute(
            "INSERT INTO meta VALUES (%s, 'schema_version', %s)"
            " ON CONFLICT (owner, key) DO UPDATE SET value = excluded.value",
            (CORE_OWNER, str(len(applied) + len(steps))),
        )

    def _migrate_owner(
        self, conn: psycopg.Connection[Any], owner: str, steps: tuple[StoreMigration, ...]
    ) -> None:
        """Apply an owner's pending migrations (PostgreSQL's statements) in this transaction;
        one that fails makes that owner unavailable, not the store."""
        rows = conn.execute(
            "SELECT name FROM migrations WHERE owner = %s ORDER BY seq", (owner,)
        ).fetchall()
        applied = tuple(str(r[0]) for r in rows)
        try:
            pending = mig.pending(owner, applied, steps, self.location)
        except StoreError as exc:
            self._broken[owner] = exc.message
            return
        if not pending:
            return
        prefix = mig.owner_prefix(owner)
        generation = self._generation(conn)
        try:
            with conn.transaction():  # a savepoint: a failing step undoes only this owner's
                for seq, step in enumerate(pending, start=len(applied) + 1):
                    for statement in step.postgres:
                        conn.execute(statement.replace("{prefix}", prefix))
                    conn.execute(
                        "INSERT INTO migrations (owner, seq, name, generation)"
                        " VALUES (%s, %s, %s, %s)",
                        (owner, seq, step.name, generation),
                    )
        except psycopg.OperationalError:
            raise
        except psycopg.Error as exc:
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self._broken[owner] = f"its migration failed on PostgreSQL: {detail}"
            return
        self._applied += [AppliedMigration(owner, m.name, self.location) for m in pending]

    def _declare_kinds(self, conn: psycopg.Connection[Any]) -> None:
        for kind in self._kinds.values():
            row = conn.execute(
                "SELECT owner, schema_version FROM kinds WHERE name = %s", (kind.name,)
            ).fetchone()
            conflict = kind_conflict(kind, (row[0], row[1]) if row is not None else None)
            if conflict is not None:
                self._broken.setdefault(kind.owner, conflict)
                continue
            conn.execute(
                "INSERT INTO kinds VALUES (%s, %s, %s) ON CONFLICT (name) DO UPDATE"
                " SET schema_version = excluded.schema_version",
                (kind.name, kind.owner, kind.version),
            )
            types_ = self._types[kind.name]
            for name in kind.indexed:
                # NULLS FIRST: the order queries sort in (as SQLite sorts), so an index scan
                # serves both directions.
                conn.execute(
                    f'CREATE INDEX IF NOT EXISTS "{index_name(kind.name, name)}" ON records'
                    f" ({field_expr(name, types_.get(name, 'other'))} NULLS FIRST, id)"
                    f" WHERE kind = '{kind.name}'"
                )

    # -- the write path and the read path --------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        if self._closed or self._pool is None:
            raise StoreError(f"the store {self.location} is closed")
        pool = self._pool
        try:
            with pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
            # Connections are not checked on each checkout (a round trip per call); after a
            # lost one, the idle rest are checked at once, so the next call gets a live one.
            pool.check()
            self._unreachable(exc)
        except psycopg.Error as exc:
            self._refused(exc)

    def write(self, work: Callable[[psycopg.Connection[Any], int], T]) -> T:
        """Run `work(conn, generation)` in one transaction that advances the generation;
        `work` tells other instances what it changed with `send_change`."""
        listener = self._listener
        generation: int | None = None
        try:
            with self._connection() as conn, conn.transaction():
                # First statement: the counter's row lock orders this write after every other.
                row = conn.execute(
                    "UPDATE generation SET value = value + 1 RETURNING value"
                ).fetchone()
                assert row is not None
                generation = int(row[0])
                if listener is not None:
                    listener.writing(generation)
                return work(conn, generation)
        except BaseException:
            if listener is not None and generation is not None:
                listener.abandoned(generation)
            raise

    def send_change(self, conn: psycopg.Connection[Any], change: StoreChange) -> None:
        """Inside a `write`: notify the other instances of `change`, delivered if and when
        the transaction commits."""
        parts = payloads(self.instance, change)
        if len(parts) == 1:  # nearly always: one statement, no batch set up
            conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, parts[0]))
            return
        with conn.cursor() as cur:
            cur.executemany("SELECT pg_notify(%s, %s)", [(CHANNEL, p) for p in parts])

    def read_one(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """Run `work(conn)`, one statement, outside a transaction: a single statement sees
        one snapshot by itself, in one round trip instead of four."""
        with self._connection() as conn:
            return work(conn)

    def read(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """Run `work(conn)` in one read-only snapshot (repeatable read)."""
        with self._connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return work(conn)

    @staticmethod
    def _generation(conn: psycopg.Connection[Any]) -> int:
        row = conn.execute("SELECT value FROM generation").fetchone()
        assert row is not None
        return int(row[0])

    def count(self, name: str) -> int:
        """Add one to the counter `name` that every instance on this database shares, and
        return its new value (one statement; no generation: nothing anyone reads changed)."""
        with self._connection() as conn:
            row = conn.execute(
                "INSERT INTO meta VALUES ('counters', %s, '1') ON CONFLICT (owner, key)"
                " DO UPDATE SET value = (meta.value::bigint + 1)::text RETURNING value",
                (name,),
            ).fetchone()
        assert row is not None
        return int(row[0])

    # -- kinds ------------------------------------------------------------------------------

    @property
    def applied(self) -> list[AppliedMigration]:
        """The migrations opening this store applied: the database's, then the local file's
        (owners' own tables)."""
        local = list(self._local.applied) if self._local is not None else []
        return [*self._applied, *local]

    @property
    def unavailable(self) -> dict[str, str]:
        """Owners whose kinds or tables cannot be used in this store, and why."""
        local = dict(self._local.unavailable) if self._local is not None else {}
        return {**local, **self._broken}

    def kinds(self) -> dict[str, StoreKind]:
        return dict(self._kinds)

    def _kind(self, name: str) -> StoreKind:
        kind = find_kind(self._kinds, name)
        if kind.owner in self._broken:
            raise StoreError(f"kind {name!r} is unavailable: {self._broken[kind.owner]}", kind=name)
        return kind

    # -- records ----------------------------------------------------------------------------

    def put(self, kind: str, record: Mapping[str, Any], id: int | None = None) -> Written:
        k = self._kind(kind)
        if id is None:
            body = record_json(validate_record(k, record))

            def insert(conn: psycopg.Connection[Any], gen: int) -> Written:
                row = conn.execute(
                    "INSERT INTO records (kind, schema_version, body, created_gen, gen)"
                    " VALUES (%s, %s, %s::jsonb, %s, %s) RETURNING id",
                    (k.name, k.version, body, gen, gen),
                ).fetchone()
                assert row is not None
                self.send_change(conn, StoreChange(gen, "put", k.name, (int(row[0]),)))
                return Written(int(row[0]), gen)

            created = self.write(insert)
            self.announce(StoreChange(created.generation, "put", k.name, (created.id,)))
            return created
        if not isinstance(record, Mapping):
            validate_record(k, record)  # raises, naming the problem

        def update(conn: psycopg.Connection[Any], gen: int) -> Written:
            row = self._row(conn, k.name, id)
            if row[5] is not None:
                raise ClosedRecordError(k.name, id)
            # The given fields replace the stored ones; null clears an optional field.
            merged = {**row[4], **record}
            body = record_json(validate_record(k, merged))
            conn.execute(
                "INSERT INTO history (record, gen, op, body, schema_version, prev_gen)"
                " VALUES (%s, %s, 'update', %s::jsonb, %s, %s)",
                (id, gen, record_json(row[4]), row[3], row[1]),
            )
            conn.execute(
                "UPDATE records SET body = %s::jsonb, gen = %s, schema_version = %s WHERE id = %s",
                (body, gen, k.version, id),
            )
            self.send_change(conn, StoreChange(gen, "put", k.name, (id,)))
            return Written(id, gen)

        updated = self.write(update)
        self.announce(StoreChange(updated.generation, "put", k.name, (id,)))
        return updated

    def put_many(self, kind: str, records: Sequence[Mapping[str, Any]]) -> WrittenBatch:
        """Insert `records` in one transaction (one generation): all of them or, if any is
        invalid, none — the error names each bad record by its position."""
        k = self._kind(kind)
        bodies = validated_bodies(k, records)

        def insert(conn: psycopg.Connection[Any], gen: int) -> WrittenBatch:
            if not bodies:
                return WrittenBatch((), gen)
            # Ids taken first, in order, so each record's id is known; writers are ordered by
            # the generation lock, so they are consecutive.
            rows = conn.execute(
                "SELECT nextval(pg_get_serial_sequence('records', 'id'))"
                " FROM generate_series(1, %s)",
                (len(bodies),),
            ).fetchall()
            ids = sorted(int(r[0]) for r in rows)
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO records (id, kind, schema_version, body, created_gen, gen)"
                    " VALUES (%s, %s, %s, %s::jsonb, %s, %s)",
                    [
                        (i, k.name, k.version, body, gen, gen)
                        for i, body in zip(ids, bodies, strict=True)
                    ],
                )
            self.send_change(conn, StoreChange(gen, "put", k.name, tuple(ids)))
            return WrittenBatch(tuple(ids), gen)

        batch = self.write(insert)
        if batch.ids:
            self.announce(StoreChange(batch.generation, "put", k.name, batch.ids))
        return batch

    def _row(self, conn: psycopg.Connection[Any], kind: str, id: int) -> tuple[Any, ...]:
        if not 1 <= id <= MAX_SQLITE_INT:  # no record has it; bigint could not even bind it
            raise UnknownRecordError(kind, id)
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM records WHERE id = %s AND kind = %s", (id, kind)
        ).fetchone()
        if row is None:
            raise UnknownRecordError(kind, id)
        return tuple(row)

    def get(self, kind: str, id: int) -> StoredRecord:
        k = self._kind(kind)
        return self._stored(k, self.read_one(lambda conn: self._row(conn, k.name, id)))

    def close_record(self, kind: str, id: int, reason: str | None = None) -> Written:
        k = self._kind(kind)

        def close(conn: psycopg.Connection[Any], gen: int) -> Written:
            row = self._row(conn, k.name, id)
            if row[5] is not None:
                raise ClosedRecordError(k.name, id)
            conn.execute(
                "INSERT INTO history (record, gen, op, prev_gen, reason)"
                " VALUES (%s, %s, 'close', %s, %s)",
                (id, gen, row[1], reason),
            )
            conn.execute(
                "UPDATE records SET closed_gen = %s, close_reason = %s, gen = %s WHERE id = %s",
                (gen, reason, gen, id),
            )
            self.send_change(conn, StoreChange(gen, "close", k.name, (id,)))
            return Written(id, gen)

        closed = self.write(close)
        self.announce(StoreChange(closed.generation, "close", k.name, (id,)))
        return closed

    def history(self, kind: str, id: int) -> list[HistoryEntry]:
        k = self._kind(kind)

        def work(conn: psycopg.Connection[Any]) -> list[HistoryEntry]:
            self._row(conn, k.name, id)
            rows = conn.execute(
                "SELECT gen, op, body, prev_gen, reason FROM history WHERE record = %s"
                " ORDER BY gen",
                (id,),
            ).fetchall()
            return [
                HistoryEntry(r[0], r[1], None if r[2] is None else _ordered(k, r[2]), r[3], r[4])
                for r in rows
            ]

        return self.read(work)

    def generation(self) -> int:
        return self.read(self._generation)

    def schema_versions(self) -> dict[str, int]:
        rows = self.read(
            lambda c: c.execute(
                "SELECT owner, value FROM meta WHERE key = 'schema_version' ORDER BY owner"
            ).fetchall()
        )
        versions = {str(owner): int(value) for owner, value in rows}
        if self._local is not None:  # owners' own tables, in the local file
            local = self._local.schema_versions()
            versions.update({o: v for o, v in local.items() if o != CORE_OWNER})
        return dict(sorted(versions.items()))

    @staticmethod
    def _stored(kind: StoreKind, row: tuple[Any, ...]) -> StoredRecord:
        return StoredRecord(
            id=row[0],
            kind=kind.name,
            record=_ordered(kind, row[4]),
            gen=row[1],
            created_gen=row[2],
            schema_version=row[3],
            closed_gen=row[5],
            close_reason=row[6],
        )

    # -- queries ----------------------------------------------------------------------------

    def query(
        self,
        kind: str,
        where: Mapping[str, Any] | None = None,
        order_by: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        include_closed: bool = False,
    ) -> Page:
        k = self._kind(kind)
        spec = parse_query(k, where, order_by, include_closed)
        limit = max(1, min(limit, MAX_LIMIT))
        after = decode_cursor(self._secret, spec, cursor) if cursor else None
        sql, params = self._compile(k, spec, after, limit + 1)

        # One statement, one snapshot: the page and, in each row, the generation it was read
        # at. Only an empty page needs the generation apart, read in the same snapshot.
        rows = self.read_one(lambda conn: conn.execute(sql, params).fetchall())
        if rows:
            generation = int(rows[0][7])
        else:

            def work(conn: psycopg.Connection[Any]) -> tuple[int, list[Any]]:
                return self._generation(conn), conn.execute(sql, params).fetchall()

            generation, rows = self.read(work)
        more = len(rows) > limit
        rows = rows[:limit]
        records = [self._stored(k, r) for r in rows]
        next_cursor = None
        if more:
            # The last row's sort value, from what was read: a column, or the body's field
            # (what `body -> 'field'` gives, parsed once, with the body).
            last, field = records[-1], spec.order_field
            value = last.id if field == "id" else last.gen if field == "gen" else None
            if field not in RECORD_COLUMNS:
                value = last.record.get(field)
            next_cursor = encode_cursor(self._secret, spec, value, last.id)
        return Page(k.name, records, next_cursor, generation)

    def _compile(
        self, kind: StoreKind, spec: QuerySpec, after: tuple[Any, int] | None, limit: int
    ) -> tuple[str, list[Any]]:
        types_ = self._types[kind.name]
        # The kind as a literal (a checked name, never a request's value), so the kind's
        # partial indexes apply to every plan, generic ones too.
        where = [f"kind = '{kind.name}'"]
        params: list[Any] = []
        if not spec.include_closed:
            where.append("closed_gen IS NULL")
        for c in spec.conditions:
            sql, values = _condition_sql(c, types_.get(c.field, "other"))
            where.append(sql)
            params += values
        field = spec.order_field
        ftype = types_.get(field, "other")
        expr = field_expr(field, ftype)
        if after is not None:
            sql, values = _after_sql(spec, ftype, after)
            where.append(sql)
            params += values
        if field == "id":
            order = f"id {'DESC' if spec.descending else 'ASC'}"
        else:
            # NULLs first ascending and last descending, as SQLite orders them.
            nulls = "DESC NULLS LAST" if spec.descending else "ASC NULLS FIRST"
            order = f"{expr} {nulls}, id {'DESC' if spec.descending else 'ASC'}"
        sql = (
            f"SELECT {_COLUMNS}, (SELECT value FROM generation) AS g"
            f" FROM records WHERE {' AND '.join(where)}"
            f" ORDER BY {order} LIMIT %s"
        )
        return sql, [*params, limit]

    # -- observers --------------------------------------------------------------------------

    def observe(self, observer: StoreObserver) -> Callable[[], None]:
        """Tell `observer` of every write to the database: this store's, and (while anyone
        observes) other instances', heard on a listening connection of its own."""
        off = self._observers.add(observer)
        local_off = self._local.observe(observer) if self._local is not None else None
        with self._listen_lock:
            self._observed += 1
            if self._listener is None and not self._closed:
                self._listener = ChangeListener(
                    self._conninfo, self.instance, self.announce, self.location, CONNECT_TIMEOUT_S
                )
                self._listener.start()
        done = False

        def unsubscribe() -> None:
            nonlocal done
            if done:
                return
            done = True
            off()
            if local_off is not None:
                local_off()
            with self._listen_lock:
                self._observed -= 1
                listener = self._listener if self._observed == 0 else None
                if listener is not None:
                    self._listener = None
            if listener is not None:
                listener.stop()

        return unsubscribe

    @property
    def listener(self) -> ChangeListener | None:
        """The connection listening for other instances' changes, while observed."""
        return self._listener

    def announce(self, change: StoreChange) -> None:
        """Tell observers of a committed write (called after the commit)."""
        self._observers.announce(change)

    # -- slices and shutdown ----------------------------------------------------------------

    def slice(self, owner: str) -> OwnerSlice:
        if owner == CORE_OWNER:
            raise StoreAccessError(owner, "the core's tables are not reachable through a slice")
        if owner in self._broken:
            raise StoreError(f"the tables of {owner!r} are unavailable: {self._broken[owner]}")
        if owner in self._shared:
            return PostgresSlice(self, owner, mig.owner_prefix(owner))
        if self._local is None or owner not in self._owners:
            raise StoreAccessError(
                owner, "it declared no StoreMigration, so it has no tables in this store"
            )
        return self._local.slice(owner)

    def close(self) -> None:
        """Close the pool (and the local store of owners' tables)."""
        self._closed = True
        with self._listen_lock:
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
        local, self._local = self._local, None
        if local is not None:
            local.close()


@cache
def _field_order(kind: StoreKind) -> tuple[str, ...]:
    """A kind's fields in declaration order, read once (pydantic builds the mapping anew)."""
    return kind.fields


def _ordered(kind: StoreKind, body: dict[str, Any]) -> dict[str, Any]:
    """A body in its kind's field order (jsonb keeps keys in an order of its own)."""
    ordered = {name: body[name] for name in _field_order(kind) if name in body}
    if len(ordered) != len(body):
        ordered.update((k, v) for k, v in body.items() if k not in ordered)
    return ordered


def _condition_sql(c: Condition, ftype: FieldType) -> tuple[str, list[Any]]:
    expr = field_expr(c.field, ftype)
    ph = _placeholder(c.field, ftype)
    if c.op == "=":
        if c.value is None:
            return f"{expr} IS NULL", []
        return f"{expr} = {ph}", [_bind(c.field, ftype, c.value)]
    if c.op == "in":
        values = [_bind(c.field, ftype, v) for v in c.value if v is not None]
        test = f"{expr} IN ({', '.join([ph] * len(values))})" if values else "FALSE"
        if len(values) < len(c.value):
            test = f"({test} OR {expr} IS NULL)"
        return test, values
    if c.op == "contains":
        # ILIKE under the "C" collation folds ASCII only, as SQLite's LIKE does.
        escaped = c.value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return f"{pg_text(c.field)} ILIKE %s ESCAPE '\\'", [f"%{escaped}%"]
    return f"{expr} {c.op} {ph}", [_bind(c.field, ftype, c.value)]


def _after_sql(spec: QuerySpec, ftype: FieldType, after: tuple[Any, int]) -> tuple[str, list[Any]]:
    """The keyset condition for the page after (value, id), in the query's order."""
    value, last_id = after
    field = spec.order_field
    if field == "id":
        return f"id {'<' if spec.descending else '>'} %s", [last_id]
    x = field_expr(field, ftype)
    ph = _placeholder(field, ftype)
    v = _bind(field, ftype, value)
    # A row comparison, `(x, id) > (v, n)`, is one index condition on the kind's (x, id)
    # index: the scan starts at the cursor. Spelt as `(x = v AND id > n) OR x > v` it is a
    # filter, and page N reads every row before it (measured: 55 ms against 1 ms at 100k).
    if not spec.descending:
        if value is None:
            return f"(({x} IS NULL AND id > %s) OR {x} IS NOT NULL)", [last_id]
        return f"({x}, id) > ({ph}, %s)", [v, last_id]
    if value is None:
        return f"({x} IS NULL AND id < %s)", [last_id]
    return f"(({x}, id) < ({ph}, %s) OR {x} IS NULL)", [v, last_id]


__all__ = ["PG_CORE_MIGRATIONS", "PostgresStore", "redacted"]
