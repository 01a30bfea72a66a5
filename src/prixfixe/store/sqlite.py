"""The embedded store: one SQLite file in WAL mode, one write path, keyset-paginated queries.

Records of every kind share one `records` table (id, kind, JSON body, generations, closed
flag). A kind's indexed fields get a partial expression index each,
`ON records (json_extract(body, '$.field'), id) WHERE kind = 'the_kind'`, and a query that
filters or sorts on such a field names that index (`INDEXED BY`), so the plan does not depend
on statistics. Writes go through one connection, one at a time (a lock in this process,
`BEGIN IMMEDIATE` across processes); a busy database is waited for and retried within a
bound, so "database is locked" never reaches a user. Reads use a second connection and see a
consistent snapshot.

Faults of the file itself (full, read-only, damaged, failing) become the errors of
`prixfixe.store.faults`, naming the file and what to do. A store that cannot be written when
it opens (a read-only file, a full disk) still opens for reading; each write then tries to
take up writing again and, while it cannot, is refused with that error. An empty file is
refused, never taken for a new store (a new store is linked into place whole). A record whose
body cannot be decoded is an error naming it where it is read, and is left out of query pages
(named in `Page.damaged`) so the rest of its kind is still served, whatever the query sorts by
(a sort value that is not UTF-8 is read, and carried in the cursor, as its bytes).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from prixfixe.declarations.kinds import (
    FIELD_NAME_PATTERN,
    KIND_NAME_PATTERN,
    StoreKind,
    StoreMigration,
)
from prixfixe.errors import (
    ClosedRecordError,
    MigrationError,
    StoreAccessError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreFaultError,
    StoreFullError,
    StoreIOError,
    StoreReadOnlyError,
    UnknownRecordError,
)
from prixfixe.store import migrations as mig
from prixfixe.store.api import (
    CORE_OWNER,
    MAX_LIMIT,
    AppliedMigration,
    DamagedRecord,
    HistoryEntry,
    Page,
    StoreChange,
    StoredRecord,
    StoreObserver,
    Written,
    WrittenBatch,
)
from prixfixe.store.cursor import decode_cursor, encode_cursor
from prixfixe.store.faults import (
    MAX_SQLITE_INT,
    busy,
    empty_message,
    fault,
    os_fault,
    primary_code,
    read_only_message,
    recovery_advice,
)
from prixfixe.store.observers import Observers
from prixfixe.store.query import RECORD_COLUMNS, Condition, QuerySpec, parse_query
from prixfixe.store.records import (
    body_problem,
    find_kind,
    kind_conflict,
    record_json,
    text_problem,
    validate_record,
    validated_bodies,
)
from prixfixe.store.slices import Authorizer, SQLiteSlice, authorized

log = logging.getLogger(__name__)
T = TypeVar("T")

#: SQLite's own wait for a lock before it reports busy; our loop retries on top of it.
SQLITE_BUSY_TIMEOUT_S = 0.2
#: The longest a write waits for another process's write lock before a clear error.
DEFAULT_BUSY_WAIT_S = 30.0
# The body as its stored bytes: decoded (UTF-8, then JSON) one record at a time, so a damaged
# body is named as that record's problem rather than failing the whole read.
# The close reason likewise: text that is not UTF-8 there names the record too.
_COLUMNS = (
    "id, gen, created_gen, schema_version, CAST(body AS BLOB), closed_gen,"
    " CAST(close_reason AS BLOB)"
)


#: Faults that leave a store readable: it opens for reading and refuses writes while they last.
_READABLE_FAULTS = (StoreReadOnlyError, StoreFullError, StoreIOError)
_FAULT_WORDS = {StoreReadOnlyError: "read-only", StoreFullError: "full", StoreIOError: "I/O error"}


def field_expr(field: str, *, guarded: bool = False) -> str:
    """The SQL expression for a record field (names are checked identifiers at registration).
    `guarded`: null for a body that is not JSON, where `json_extract` raises (no index can be
    used with it, so only the fallback for a damaged body uses it)."""
    if field in RECORD_COLUMNS:
        return field
    extract = f"json_extract(body, '$.{field}')"
    return f"CASE WHEN json_valid(body) THEN {extract} END" if guarded else extract


def index_name(kind: str, field: str) -> str:
    # Kind names hold no '.', field names no ':', so these names cannot collide.
    return f"kind:{kind}.{field}"


class SQLiteStore:
    """The `Store` on one SQLite file. Thread-safe; open it with `SQLiteStore.open`."""

    def __init__(
        self,
        path: Path,
        kinds: Mapping[str, StoreKind],
        migrations: Mapping[str, Sequence[StoreMigration]],
        *,
        busy_wait: float = DEFAULT_BUSY_WAIT_S,
        on_busy: Callable[[], None] | None = None,
    ) -> None:
        self.path = path
        self.location = str(path)
        for kind in kinds.values():
            # Kind and field names appear in SQL as literals and JSON paths; the registry
            # checks them, and so does the one module that writes SQL.
            names_ok = KIND_NAME_PATTERN.match(kind.name) and all(
                FIELD_NAME_PATTERN.match(f) for f in kind.fields
            )
            if not names_ok:
                raise StoreError(f"kind {kind.name!r} has a name or field name SQL cannot take")
        self._kinds = dict(kinds)
        self._migrations = {k: tuple(v) for k, v in migrations.items()}
        self._busy_wait = busy_wait
        self._on_busy = on_busy
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._secret = b""
        self._prefixes: dict[str, str] = {}
        self._broken: dict[str, str] = {}  # owner -> why its slice and kinds are unavailable
        self._observers = Observers()
        self._core: tuple[StoreMigration, ...] = ()
        #: The migrations opening this store applied, in order.
        self.applied: list[AppliedMigration] = []
        self._closed = False
        # Set while the file cannot be written (opened for reading only): why not.
        self._degraded: StoreFaultError | None = None
        # Indexes a read-only open found missing; queries do without them.
        self._unindexed: frozenset[str] = frozenset()

    @classmethod
    def open(
        cls,
        path: Path,
        kinds: Mapping[str, StoreKind],
        migrations: Mapping[str, Sequence[StoreMigration]] | None = None,
        *,
        core_migrations: Sequence[StoreMigration] = mig.CORE_MIGRATIONS,
        busy_wait: float = DEFAULT_BUSY_WAIT_S,
        on_busy: Callable[[], None] | None = None,
    ) -> SQLiteStore:
        """Open (creating if needed) and migrate the store at `path`.

        A file written by a newer version is refused before anything is written to it.
        `core_migrations` exists so tests can build a file as an older version left it.
        """
        store = cls(path, kinds, migrations or {}, busy_wait=busy_wait, on_busy=on_busy)
        try:
            store._open(tuple(core_migrations))
        except BaseException:
            store.close()
            raise
        return store

    # -- opening ----------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=SQLITE_BUSY_TIMEOUT_S,
            isolation_level=None,  # autocommit; transactions are explicit BEGIN ... COMMIT
            check_same_thread=False,  # used from worker threads, one at a time (the locks)
        )
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def _open(self, core: tuple[StoreMigration, ...]) -> None:
        self._core = core
        if self.path.exists():
            if self.path.stat().st_size > 0:
                self._preflight(core)
            elif not self._wal_present():
                raise StoreCorruptError(empty_message(self.path), file=str(self.path))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreIOError(
                f"cannot create the directory of the store {self.path}: {exc.strerror or exc} "
                "(set PRIXFIXE_HOME to a directory this user may write)",
                file=str(self.path),
            ) from None
        try:
            with self._write_lock:
                if not self.path.exists():
                    self._create()
                self._open_writer(core)
        except _READABLE_FAULTS as exc:
            # Read-only file, full disk: what is kept can still be read; writes say why not.
            self._degraded = exc
            log.warning(
                "store %s opened for reading only (%s); a write will say what to do",
                self.path,
                _FAULT_WORDS.get(type(exc), "cannot write"),
            )
            self._open_for_reading(core)
            return
        self._reader = self._connect()
        self._reader.execute("PRAGMA query_only = ON")
        self._load_secret()

    def _open_writer(self, core: tuple[StoreMigration, ...]) -> None:
        """Connect the writer, migrate and declare kinds; the caller holds the write lock."""
        wal = self._wal_present()
        broken, prefixes = dict(self._broken), dict(self._prefixes)
        self._writer = self._guarded(self._connect, writing=True)
        try:
            mode = self._guarded(
                lambda: self._retrying(
                    lambda: self._conn().execute("PRAGMA journal_mode = WAL").fetchone()[0]
                ),
                writing=True,
            )
            if mode != "wal":
                log.warning("store %s: journal mode is %s, not wal", self.path, mode)
            # FULL: a committed write survives power loss, not only a crash of this process.
            self._conn().execute("PRAGMA synchronous = FULL")
            self._broken.clear()
            self._prefixes.clear()
            self._migrate_core(core)
            self._migrate_owners()
            self._declare_kinds()
        except BaseException:
            writer, self._writer = self._writer, None
            writer.close()
            self._broken, self._prefixes = broken, prefixes  # as a read-only open found them
            raise
        self._degraded = None
        self._unindexed = frozenset()
        if wal:
            self._checkpoint()

    def _create(self) -> None:
        """Make the store file whole or not at all: an empty WAL-mode database is written to a
        temporary file beside it, then linked into place. So a file prixfixe made is never
        empty, and an empty one (a truncation, a failed copy) is refused as damage, not taken
        for a new store; a creation that fails (a full disk) leaves nothing behind."""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.new")
        try:
            try:
                conn = sqlite3.connect(tmp)
                try:
                    conn.execute("PRAGMA journal_mode = WAL").fetchone()  # writes the header
                finally:
                    conn.close()
                os.link(tmp, self.path)
            except FileExistsError:
                pass  # another process made it first: that one is the store
            except sqlite3.Error as exc:
                raise fault(exc, self.path, writing=True) or StoreIOError(
                    f"cannot create the store {self.path}: {exc}", file=str(self.path)
                ) from None
            except OSError as exc:
                raise os_fault(exc, self.path) from None
        finally:
            for leftover in (
                tmp,
                tmp.with_name(tmp.name + "-wal"),
                tmp.with_name(tmp.name + "-shm"),
            ):
                with contextlib.suppress(OSError):
                    leftover.unlink()

    def _checkpoint(self) -> None:
        """Copy a WAL left behind (by a crash, a kill, a full disk) into the main file, so the
        main file is whole again; best effort, SQLite also checkpoints as it goes."""
        try:
            self._conn().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:
            log.warning("store %s: checkpoint skipped: %s", self.path, exc)

    def _wal_present(self) -> bool:
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            return wal.stat().st_size > 0
        except OSError:
            return False

    def _guarded(self, attempt: Callable[[], T], *, writing: bool) -> T:
        """Run `attempt`, raising a fault of the file as its store error."""
        try:
            return attempt()
        except sqlite3.Error as exc:
            mapped = fault(exc, self.path, writing=writing)
            if writing and primary_code(exc) == 14 and self.path.exists():  # SQLITE_CANTOPEN
                # The file is there but its -wal/-shm cannot be made: the directory is read-only.
                mapped = StoreReadOnlyError(read_only_message(self.path), file=str(self.path))
            if mapped is None:
                raise
            raise mapped from None

    def _connect_reader(self) -> sqlite3.Connection:
        """A connection that only reads: as SQLite reads the file (main file plus WAL) when it
        can, and from the main file alone (`immutable`) when the directory is not writable and
        no WAL is there, which is exactly the case where SQLite cannot create the -shm a WAL
        reader needs."""
        uri = self.path.resolve().as_uri()
        try:
            conn = sqlite3.connect(
                f"{uri}?mode=ro", uri=True, timeout=SQLITE_BUSY_TIMEOUT_S, check_same_thread=False
            )
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            if primary_code(exc) != 14 or self._wal_present():  # 14: SQLITE_CANTOPEN
                raise
            conn = sqlite3.connect(
                f"{uri}?mode=ro&immutable=1",
                uri=True,
                timeout=SQLITE_BUSY_TIMEOUT_S,
                check_same_thread=False,
            )
        conn.isolation_level = None
        return conn

    def _open_for_reading(self, core: tuple[StoreMigration, ...]) -> None:
        """Open on a file that cannot be written now: check it as `_open_writer` would, but
        write nothing; what would need a write (a pending migration, a missing index) is
        reported or done without."""
        degraded = self._degraded
        assert degraded is not None
        if not self.path.exists():
            raise degraded
        self._reader = self._guarded(self._connect_reader, writing=False)
        why = degraded.message

        def check(conn: sqlite3.Connection) -> tuple[frozenset[str], dict[str, tuple[str, int]]]:
            if not mig.table_exists(conn, "migrations"):
                raise type(degraded)(
                    f"the store {self.path} was never set up and cannot be now: {why}"
                )
            if mig.pending(CORE_OWNER, mig.recorded(conn, CORE_OWNER), core, self.location):
                raise type(degraded)(
                    f"the store {self.path} needs migrating to this version of prixfixe, "
                    f"which needs a write: {why}"
                )
            for owner, steps in self._migrations.items():
                try:
                    todo = mig.pending(owner, mig.recorded(conn, owner), steps, self.location)
                except StoreError as exc:
                    self._broken[owner] = exc.message
                    continue
                if todo:
                    self._broken[owner] = f"its migration {todo[0].name!r} needs a write: {why}"
                else:
                    self._prefixes[owner] = mig.owner_prefix(owner)
            indexes = frozenset(
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
            )
            kinds = conn.execute("SELECT name, owner, schema_version FROM kinds").fetchall()
            return indexes, {str(r[0]): (str(r[1]), int(r[2])) for r in kinds}

        indexes, stored = self.read(check)
        for kind in self._kinds.values():
            owner, version = stored.get(kind.name, (kind.owner, kind.version))
            if owner != kind.owner:
                self._broken.setdefault(
                    kind.owner, f"kind {kind.name!r} belongs to plugin {owner!r} in this store"
                )
            elif version > kind.version:
                self._broken.setdefault(
                    kind.owner,
                    f"kind {kind.name!r} has records at schema version {version}, newer than "
                    f"{kind.owner!r} declares ({kind.version}); upgrade it",
                )
        self._unindexed = frozenset(
            index_name(k.name, f)
            for k in self._kinds.values()
            for f in k.indexed
            if index_name(k.name, f) not in indexes
        )
        self._load_secret()

    def _load_secret(self) -> None:
        rows = self.read(
            lambda c: c.execute(
                "SELECT value FROM meta WHERE owner = ? AND key = 'cursor_secret'", (CORE_OWNER,)
            ).fetchall()
        )
        self._secret = bytes.fromhex(str(rows[0][0]))

    def _preflight(self, core: tuple[StoreMigration, ...]) -> None:
        """Read-only checks before any write: is it a store, and not from a newer version?

        With no WAL beside it, the main file is the whole database: it is read with SQLite's
        `immutable` flag, which creates no -wal/-shm beside a file we may refuse. With a WAL
        (a live store, or one left by a crash or by a full disk part-way through a checkpoint,
        when the main file alone is stale or half-copied) it is read as SQLite reads it, main
        file plus WAL (`mode=ro`): that creates at most the -shm SQLite keeps beside a WAL that
        is already there, and it writes nothing, so it works on a full disk or a read-only
        file, where a checkpoint could not. The check repeats under the write lock.
        """
        wal = self._wal_present()
        uri = f"{self.path.resolve().as_uri()}?mode=ro{'' if wal else '&immutable=1'}"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=SQLITE_BUSY_TIMEOUT_S)
        except sqlite3.Error as exc:
            raise StoreIOError(f"cannot open the store {self.path}: {exc}") from None
        try:
            tables = self._retrying(
                lambda: {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            )
            if not tables:
                return
            if "migrations" not in tables:
                raise StoreError(
                    f"{self.path} is an SQLite file but not a prixfixe store (no migrations "
                    "table); point PRIXFIXE_HOME elsewhere",
                )
            applied = self._retrying(lambda: mig.recorded(conn, CORE_OWNER))
            mig.pending(CORE_OWNER, applied, core, self.location)
        except sqlite3.DatabaseError as exc:
            if primary_code(exc) == 26:  # SQLITE_NOTADB
                raise StoreError(f"{self.path} is not a prixfixe store: {exc}") from None
            mapped = fault(exc, self.path, writing=False)
            raise mapped or StoreError(f"{self.path} is not a prixfixe store: {exc}") from None
        finally:
            conn.close()

    def _migrate_core(self, core: tuple[StoreMigration, ...]) -> None:
        def work(conn: sqlite3.Connection) -> list[StoreMigration]:
            exists = mig.table_exists(conn, "migrations")
            applied = mig.recorded(conn, CORE_OWNER) if exists else ()
            steps = mig.pending(CORE_OWNER, applied, core, self.location)
            if steps:
                generation = self._generation(conn) if exists else 0
                mig.apply(conn, CORE_OWNER, steps, len(applied), generation)
            return steps

        # Noted after the commit: a busy retry runs `work` again.
        done = self._run(work)
        self.applied += [AppliedMigration(CORE_OWNER, m.name, self.location) for m in done]

    def _migrate_owners(self) -> None:
        owners = list(self._migrations)
        for owner in owners:
            if owner == CORE_OWNER:
                self._broken[owner] = f"the owner name {CORE_OWNER!r} is reserved for the core"
                continue
            prefix = mig.owner_prefix(owner)
            steps = self._migrations[owner]

            def work(
                conn: sqlite3.Connection,
                owner: str = owner,
                prefix: str = prefix,
                steps: tuple[StoreMigration, ...] = steps,
            ) -> list[StoreMigration]:
                clash = conn.execute(
                    "SELECT owner FROM meta WHERE key = 'prefix' AND value = ? AND owner != ?",
                    (prefix, owner),
                ).fetchone()
                if clash is not None:
                    raise MigrationError(
                        f"plugin {owner!r} would own tables {prefix}*, which belong to "
                        f"{clash[0]!r} in this store"
                    )
                applied = mig.recorded(conn, owner)
                todo = mig.pending(owner, applied, steps, self.location)
                conn.execute("INSERT OR IGNORE INTO meta VALUES (?, 'prefix', ?)", (owner, prefix))
                auth = Authorizer(owner, prefix, schema=True)
                mig.apply(
                    conn,
                    owner,
                    todo,
                    len(applied),
                    self._generation(conn),
                    prefix,
                    guard=lambda: authorized(conn, auth),
                )
                return todo

            try:
                done = self._run(work)
            except StoreFaultError:
                raise  # the file's fault, not the plugin's
            except StoreError as exc:
                # One plugin's bad migration must not take the whole store down.
                log.warning("store: plugin %s's tables are unavailable: %s", owner, exc.message)
                self._broken[owner] = exc.message
                continue
            self._prefixes[owner] = prefix
            self.applied += [AppliedMigration(owner, m.name, self.location) for m in done]

    def _declare_kinds(self) -> None:
        def work(conn: sqlite3.Connection) -> None:
            for kind in self._kinds.values():
                row = conn.execute(
                    "SELECT owner, schema_version FROM kinds WHERE name = ?", (kind.name,)
                ).fetchone()
                conflict = kind_conflict(kind, (row[0], row[1]) if row is not None else None)
                if conflict is not None:
                    self._broken.setdefault(kind.owner, conflict)
                    continue
                conn.execute(
                    "INSERT INTO kinds VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE"
                    " SET schema_version = excluded.schema_version",
                    (kind.name, kind.owner, kind.version),
                )
                for name in kind.indexed:
                    conn.execute(
                        f'CREATE INDEX IF NOT EXISTS "{index_name(kind.name, name)}" ON records'
                        f" ({field_expr(name)}, id) WHERE kind = '{kind.name}'"
                    )

        self._run(work)

    # -- the write path and the read path --------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        if self._writer is None:
            raise StoreError(f"the store {self.path} is closed")
        return self._writer

    def _retrying(self, attempt: Callable[[], T]) -> T:
        """Run `attempt`, waiting out another process's lock within a bound."""
        deadline = time.monotonic() + self._busy_wait
        delay = 0.005
        while True:
            try:
                return attempt()
            except sqlite3.OperationalError as exc:
                if not busy(exc):
                    raise
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StoreBusyError(
                        f"the store {self.path} stayed locked by another process for "
                        f"{self._busy_wait:g} s; nothing was written, try again"
                    ) from None
                if self._on_busy is not None:
                    self._on_busy()
                time.sleep(min(delay, left))
                delay = min(delay * 2, 0.25)

    def _transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """One write transaction on the writer connection; the only way anything is written."""
        with self._write_lock:
            if self._closed:
                raise StoreError(f"the store {self.path} is closed")
            if self._degraded is not None:
                self._resume_writing()
            return self._run(work)

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`_transaction` for a caller that holds the write lock."""

        def attempt() -> T:
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error as exc:  # SQLite rolls back itself on close
                        log.warning("store %s: rollback failed: %s", self.path, exc)
                raise
            return result

        return self._guarded(lambda: self._retrying(attempt), writing=True)

    def _resume_writing(self) -> None:
        """Opened for reading only: try to take up writing (the disk may have space again, the
        file may be writable again); if it still cannot, refuse the write with the reason.

        The reader is closed first: SQLite shares one -shm mapping among a process's
        connections to a file, so while a reader that could open the -shm only for reading
        (a read-only -shm) is open, a new writer gets that read-only mapping too and could
        never write. With no connection left, the writer opens the -shm afresh."""
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
            try:
                self._open_writer(self._core)
            except _READABLE_FAULTS as exc:
                self._degraded = exc
                self._reader = self._guarded(self._connect_reader, writing=False)
                raise exc from None
            log.warning("store %s: writable again", self.path)
            # The reader may have been on the main file alone (immutable): connect it afresh.
            self._reader = self._connect()
            self._reader.execute("PRAGMA query_only = ON")

    def write(self, work: Callable[[sqlite3.Connection, int], T]) -> T:
        """Run `work(conn, generation)` in one transaction that advances the generation."""

        def advance(conn: sqlite3.Connection) -> T:
            rows = conn.execute(
                "UPDATE generation SET value = value + 1 RETURNING value"
            ).fetchall()
            return work(conn, int(rows[0][0]))

        return self._transaction(advance)

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work(conn)` in one read transaction: a consistent snapshot."""

        def attempt() -> T:
            if self._reader is None:
                raise StoreError(f"the store {self.path} is closed")
            conn = self._reader
            conn.execute("BEGIN")
            try:
                return work(conn)
            finally:
                conn.execute("COMMIT")

        with self._read_lock:
            return self._guarded(lambda: self._retrying(attempt), writing=False)

    @staticmethod
    def _generation(conn: sqlite3.Connection) -> int:
        return int(conn.execute("SELECT value FROM generation").fetchone()[0])

    # -- kinds ------------------------------------------------------------------------------

    @property
    def unavailable(self) -> dict[str, str]:
        """Owners whose kinds or tables cannot be used in this store, and why."""
        return dict(self._broken)

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

            def insert(conn: sqlite3.Connection, gen: int) -> Written:
                return Written(self._insert(conn, k, body, gen), gen)

            created = self.write(insert)
            self.announce(StoreChange(created.generation, "put", k.name, (created.id,)))
            return created
        if not isinstance(record, Mapping):
            validate_record(k, record)  # raises, naming the problem

        def update(conn: sqlite3.Connection, gen: int) -> Written:
            row = self._row(conn, k.name, id)
            if row[5] is not None:
                raise ClosedRecordError(k.name, id)
            # The given fields replace the stored ones; null clears an optional field.
            old = self._body(k.name, row)
            merged = {**old, **record}
            body = record_json(validate_record(k, merged))
            conn.execute(
                "INSERT INTO history (record, gen, op, body, schema_version, prev_gen)"
                " VALUES (?, ?, 'update', ?, ?, ?)",
                (id, gen, row[4].decode("utf-8"), row[3], row[1]),
            )
            conn.execute(
                "UPDATE records SET body = ?, gen = ?, schema_version = ? WHERE id = ?",
                (body, gen, k.version, id),
            )
            return Written(id, gen)

        updated = self.write(update)
        self.announce(StoreChange(updated.generation, "put", k.name, (id,)))
        return updated

    def put_many(self, kind: str, records: Sequence[Mapping[str, Any]]) -> WrittenBatch:
        """Insert `records` in one transaction (one generation): all of them or, if any is
        invalid, none — the error names each bad record by its position."""
        k = self._kind(kind)
        bodies = validated_bodies(k, records)

        def insert(conn: sqlite3.Connection, gen: int) -> WrittenBatch:
            if not bodies:
                return WrittenBatch((), gen)
            conn.executemany(
                "INSERT INTO records (kind, schema_version, body, created_gen, gen)"
                " VALUES (?, ?, ?, ?, ?)",
                [(k.name, k.version, body, gen, gen) for body in bodies],
            )
            # Rowids are max + 1: records are never deleted and this transaction holds the
            # write lock, so the batch's ids are consecutive. Checked, not assumed.
            last = int(conn.execute("SELECT last_insert_rowid()").fetchone()[0])
            first = last - len(bodies) + 1
            mine = conn.execute(
                "SELECT count(*) FROM records WHERE id BETWEEN ? AND ? AND created_gen = ?",
                (first, last, gen),
            ).fetchone()[0]
            if mine != len(bodies):  # would mean rowids were reused
                raise StoreError(f"batch ids of {k.name} are not consecutive; nothing written")
            return WrittenBatch(tuple(range(first, last + 1)), gen)

        batch = self.write(insert)
        if batch.ids:
            self.announce(StoreChange(batch.generation, "put", k.name, batch.ids))
        return batch

    @staticmethod
    def _insert(conn: sqlite3.Connection, kind: StoreKind, body: str, gen: int) -> int:
        cur = conn.execute(
            "INSERT INTO records (kind, schema_version, body, created_gen, gen)"
            " VALUES (?, ?, ?, ?, ?)",
            (kind.name, kind.version, body, gen, gen),
        )
        return int(cur.lastrowid or 0)

    @staticmethod
    def _row(conn: sqlite3.Connection, kind: str, id: int) -> tuple[Any, ...]:
        if not 1 <= id <= MAX_SQLITE_INT:  # no record has it; SQLite could not even bind it
            raise UnknownRecordError(kind, id)
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM records WHERE id = ? AND kind = ?", (id, kind)
        ).fetchone()
        if row is None:
            raise UnknownRecordError(kind, id)
        return tuple(row)

    def _body(self, kind: str, row: tuple[Any, ...]) -> dict[str, Any]:
        """The record's fields, or a clear error naming the record when its body is damaged."""
        body, problem = body_problem(row[4])
        if body is None:
            raise self._damaged(kind, int(row[0]), problem)
        return body

    def _decoded(self, kind: str, row: tuple[Any, ...]) -> tuple[StoredRecord | None, str]:
        """The record a row holds, or None and what is wrong with its body or close reason."""
        body, problem = body_problem(row[4])
        if body is None:
            return None, problem
        reason, problem = text_problem(row[6], "close reason")
        if problem:
            return None, problem
        return _stored(kind, row, body, reason), ""

    def _damaged(
        self, kind: str, id: int, problem: str, *, closed: bool = False
    ) -> StoreCorruptError:
        what = (
            "It cannot be read (it is closed, so queries leave it out unless closed records "
            "are asked for)"
            if closed
            else "It cannot be read or changed (store_close takes it out of queries)"
        )
        return StoreCorruptError(
            f"{kind} {id} in the store {self.path} is damaged: {problem}. {what}; the other "
            "records are unaffected, and `prixfixe doctor` lists every damaged one. To get it "
            "back, " + recovery_advice(self.path),
            file=str(self.path),
            kind=kind,
            id=id,
            closed=closed,
        )

    def get(self, kind: str, id: int) -> StoredRecord:
        k = self._kind(kind)
        row = self.read(lambda conn: self._row(conn, k.name, id))
        stored, problem = self._decoded(k.name, row)
        if stored is None:
            raise self._damaged(k.name, id, problem, closed=row[5] is not None)
        return stored

    def close_record(self, kind: str, id: int, reason: str | None = None) -> Written:
        k = self._kind(kind)

        def close(conn: sqlite3.Connection, gen: int) -> Written:
            row = self._row(conn, k.name, id)
            if row[5] is not None:
                raise ClosedRecordError(k.name, id)
            conn.execute(
                "INSERT INTO history (record, gen, op, prev_gen, reason)"
                " VALUES (?, ?, 'close', ?, ?)",
                (id, gen, row[1], reason),
            )
            conn.execute(
                "UPDATE records SET closed_gen = ?, close_reason = ?, gen = ? WHERE id = ?",
                (gen, reason, gen, id),
            )
            return Written(id, gen)

        closed = self.write(close)
        self.announce(StoreChange(closed.generation, "close", k.name, (id,)))
        return closed

    def history(self, kind: str, id: int) -> list[HistoryEntry]:
        k = self._kind(kind)

        def work(conn: sqlite3.Connection) -> list[HistoryEntry]:
            self._row(conn, k.name, id)
            rows = conn.execute(
                "SELECT gen, op, CAST(body AS BLOB), prev_gen, CAST(reason AS BLOB)"
                " FROM history WHERE record = ? ORDER BY gen",
                (id,),
            ).fetchall()
            return [_history_entry(*r) for r in rows]

        return self.read(work)

    def generation(self) -> int:
        return self.read(self._generation)

    def schema_versions(self) -> dict[str, int]:
        rows = self.read(
            lambda c: c.execute(
                "SELECT owner, value FROM meta WHERE key = 'schema_version' ORDER BY owner"
            ).fetchall()
        )
        return {str(owner): int(value) for owner, value in rows}

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

        def work(conn: sqlite3.Connection) -> tuple[int, list[Any]]:
            try:
                rows = _fetch(conn, sql, params)
            except sqlite3.OperationalError as exc:
                if "malformed JSON" not in str(exc):
                    raise
                # A body that is not JSON is in the range (damage: the index still holds its
                # old value). Read the same snapshot again with every field guarded: slower
                # (no field index), but every other record is served; the damaged one is named.
                log.warning("store %s: a %s record's body is not JSON", self.path, k.name)
                guarded_sql, guarded_params = self._compile(k, spec, after, limit + 1, guarded=True)
                rows = _fetch(conn, guarded_sql, guarded_params)
            return self._generation(conn), rows

        generation, rows = self.read(work)
        more = len(rows) > limit
        rows = rows[:limit]
        records: list[StoredRecord] = []
        damaged: list[DamagedRecord] = []
        for r in rows:
            stored, problem = self._decoded(k.name, tuple(r[:7]))
            if stored is None:
                damaged.append(DamagedRecord(int(r[0]), problem))
            else:
                records.append(stored)
        next_cursor = encode_cursor(self._secret, spec, rows[-1][7], rows[-1][0]) if more else None
        return Page(k.name, records, next_cursor, generation, tuple(damaged))

    def explain(
        self,
        kind: str,
        where: Mapping[str, Any] | None = None,
        order_by: str | None = None,
        cursor: str | None = None,
        include_closed: bool = False,
    ) -> list[str]:
        """The query plan (EXPLAIN QUERY PLAN details) `query` would use; for tests and tuning."""
        k = self._kind(kind)
        spec = parse_query(k, where, order_by, include_closed)
        after = decode_cursor(self._secret, spec, cursor) if cursor else None
        sql, params = self._compile(k, spec, after, 51)
        rows = self.read(lambda c: c.execute(f"EXPLAIN QUERY PLAN {sql}", params).fetchall())
        return [str(r[3]) for r in rows]

    def _index(self, kind: StoreKind, spec: QuerySpec) -> str:
        """The index a query uses, chosen by rule rather than by statistics: the sort field's,
        else the first indexed field tested for equality or `in`, else for a range, else the
        kind's (kind, id) index."""
        usable = [f for f in kind.indexed if index_name(kind.name, f) not in self._unindexed]
        if spec.order_field in usable:
            return index_name(kind.name, spec.order_field)
        for ops in (("=", "in"), ("<", "<=", ">", ">=")):
            for c in spec.conditions:
                if c.field in usable and c.op in ops and c.value is not None:
                    return index_name(kind.name, c.field)
        return "records_kind_id"

    def _compile(
        self,
        kind: StoreKind,
        spec: QuerySpec,
        after: tuple[Any, int] | None,
        limit: int,
        *,
        guarded: bool = False,
    ) -> tuple[str, list[Any]]:
        base = [f"kind = '{kind.name}'"]  # a literal, so the kind's partial indexes apply
        params: list[Any] = []
        if not spec.include_closed:
            base.append("closed_gen IS NULL")
        for c in spec.conditions:
            sql, values = _condition_sql(c, guarded=guarded)
            base.append(sql)
            params += values
        expr = field_expr(spec.order_field, guarded=guarded)
        d = "DESC" if spec.descending else "ASC"
        order = f"ORDER BY id {d}" if spec.order_field == "id" else f"ORDER BY ov {d}, id {d}"
        index = "records_kind_id" if guarded else self._index(kind, spec)
        select = f'SELECT {_COLUMNS}, {expr} AS ov FROM records INDEXED BY "{index}" WHERE '
        segments = _after(spec, after, guarded=guarded)
        parts: list[str] = []
        args: list[Any] = []
        for cond, values, one_value in segments:
            where = " AND ".join(base + ([cond] if cond else []))
            seg_order = f"ORDER BY id {d}" if one_value else order
            parts.append(f"SELECT * FROM ({select}{where} {seg_order} LIMIT ?)")
            args += [*params, *values, limit]
        if len(parts) == 1:
            return parts[0], args
        return " UNION ALL ".join(parts) + f" {order} LIMIT ?", [*args, limit]

    # -- observers --------------------------------------------------------------------------

    def observe(self, observer: StoreObserver) -> Callable[[], None]:
        return self._observers.add(observer)

    def announce(self, change: StoreChange) -> None:
        """Tell observers of a committed write (called after the commit, outside the lock)."""
        self._observers.announce(change)

    # -- slices and shutdown ----------------------------------------------------------------

    def slice(self, owner: str) -> SQLiteSlice:
        if owner == CORE_OWNER:
            raise StoreAccessError(owner, "the core's tables are not reachable through a slice")
        if owner in self._broken and self._degraded is not None:
            # Its migration waits for a write: the file may be writable again by now.
            with self._write_lock, contextlib.suppress(StoreFaultError):
                if self._degraded is not None and not self._closed:
                    self._resume_writing()
        if owner in self._broken:
            raise StoreError(f"the tables of {owner!r} are unavailable: {self._broken[owner]}")
        prefix = self._prefixes.get(owner)
        if prefix is None:
            raise StoreAccessError(
                owner, "it declared no StoreMigration, so it has no tables in this store"
            )
        return SQLiteSlice(self, owner, prefix)

    def close(self) -> None:
        """Close both connections (the writer last, so SQLite checkpoints the WAL)."""
        self._closed = True
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        with self._write_lock:
            if self._writer is not None:
                try:
                    self._writer.execute("PRAGMA optimize")
                except sqlite3.Error as exc:  # a busy file must not stop a shutdown
                    log.debug("store %s: PRAGMA optimize skipped: %s", self.path, exc)
                self._writer.close()
                self._writer = None


def _stored(
    kind: str, row: tuple[Any, ...], body: dict[str, Any], reason: str | None
) -> StoredRecord:
    return StoredRecord(
        id=row[0],
        kind=kind,
        record=body,
        gen=row[1],
        created_gen=row[2],
        schema_version=row[3],
        closed_gen=row[5],
        close_reason=reason,
    )


def _history_entry(
    gen: int, op: str, raw_body: bytes | None, prev_gen: int, raw_reason: bytes | None
) -> HistoryEntry:
    """One history row (body and reason read as their bytes); a version whose body or reason
    cannot be decoded is named by its `problem`, so the record's other versions are served."""
    body, problem = (None, "") if raw_body is None else body_problem(raw_body)
    reason, reason_problem = text_problem(raw_reason, "reason")
    problem = problem or reason_problem
    if problem:
        return HistoryEntry(gen, op, None, prev_gen, None, problem)
    return HistoryEntry(gen, op, body, prev_gen, reason)


def _fetch(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[Any]:
    """A query page's rows. Its one text column is the sort value (the body and close reason
    are read as bytes); when that is text SQLite holds but that is not UTF-8 (a damaged body),
    the page is read again with such a value as its bytes, so the rest is still served and
    the cursor can still seek after it. A sound page is read once, as it always was."""
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if "Could not decode to UTF-8" not in str(exc):
            raise
    conn.text_factory = _text_or_bytes  # the caller holds the read lock: no one else reads
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.text_factory = str


def _text_or_bytes(raw: bytes) -> str | bytes:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _condition_sql(c: Condition, *, guarded: bool = False) -> tuple[str, list[Any]]:
    expr = field_expr(c.field, guarded=guarded)
    if c.op == "=":
        return (f"{expr} IS NULL", []) if c.value is None else (f"{expr} = ?", [c.value])
    if c.op == "in":
        values = [v for v in c.value if v is not None]
        test = f"{expr} IN ({', '.join('?' * len(values))})" if values else "0"
        if len(values) < len(c.value):
            test = f"({test} OR {expr} IS NULL)"
        return test, values
    if c.op == "contains":
        escaped = c.value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return f"{expr} LIKE ? ESCAPE '\\'", [f"%{escaped}%"]
    return f"{expr} {c.op} ?", [c.value]


def _after(
    spec: QuerySpec, after: tuple[Any, int] | None, *, guarded: bool = False
) -> list[tuple[str, list[Any], bool]]:
    """The page after (value, id) as segments, each one index seek, in sort order; the flag
    says the segment holds one value (so it is ordered by id alone).

    SQLite seeks an index on `x = ? AND id > ?` and on `x > ?`, but a row value
    `(x, id) > (?, ?)` on an expression only on `x`, so the keyset condition is split: the rest
    of the last value's group, then the values after it. NULLs sort first ascending and last
    descending, as SQLite orders them.
    """
    if after is None:
        return [("", [], False)]
    value, last_id = after
    if spec.order_field == "id":
        return [(f"id {'<' if spec.descending else '>'} ?", [last_id], False)]
    x = field_expr(spec.order_field, guarded=guarded)
    # A sort value that is not UTF-8 (a damaged body's) is bound as its bytes, made text
    # again by `|| ''` (which, unlike CAST, gives it no affinity, so the index still seeks).
    v = "(? || '')" if isinstance(value, bytes) else "?"
    if not spec.descending:
        if value is None:
            return [(f"{x} IS NULL AND id > ?", [last_id], True), (f"{x} IS NOT NULL", [], False)]
        return [(f"{x} = {v} AND id > ?", [value, last_id], True), (f"{x} > {v}", [value], False)]
    if value is None:
        return [(f"{x} IS NULL AND id < ?", [last_id], True)]
    return [
        (f"{x} = {v} AND id < ?", [value, last_id], True),
        (f"{x} < {v}", [value], False),
        (f"{x} IS NULL", [], True),
    ]
