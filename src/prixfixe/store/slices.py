"""Owned slices: an owner's statements may touch only tables and indexes named with its prefix.

The check is SQLite's own authorizer, consulted for every table, column and schema object a
statement reads or writes while it is prepared (including trigger bodies and views, which are
checked as the statement that fires them runs). Outside migrations a slice also may not
change the schema, run pragmas, attach files or manage transactions: the store does that.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from prixfixe.errors import StoreAccessError, StoreError
from prixfixe.store.api import StoreChange
from prixfixe.store.faults import busy, fault

if TYPE_CHECKING:
    from prixfixe.store.sqlite import SQLiteStore

# Action codes (sqlite3.h); the module's constants share values with error codes, so name them.
_CREATE_INDEX, _CREATE_TABLE, _CREATE_TRIGGER, _CREATE_VIEW = 1, 2, 7, 8
_DELETE, _DROP_INDEX, _DROP_TABLE, _DROP_TRIGGER, _DROP_VIEW = 9, 10, 11, 16, 17
_INSERT, _READ, _SELECT, _UPDATE = 18, 20, 21, 23
_ALTER_TABLE, _REINDEX, _ANALYZE, _FUNCTION, _RECURSIVE = 26, 27, 28, 31, 33
_PRAGMA, _CREATE_VTABLE, _DROP_VTABLE = 19, 29, 30
#: The one virtual-table module an owner may create tables with: full-text search. Its shadow
#: tables (`{name}_data`, ...) carry the owner's prefix, so they stay inside its slice.
_VTABLE_MODULES = frozenset({"fts5"})
#: Indexes SQLite names itself for PRIMARY KEY and UNIQUE constraints on the table in arg2.
_AUTOINDEX = "sqlite_autoindex_"

_DATA = {_DELETE, _INSERT, _READ, _UPDATE}
_SCHEMA = {
    _CREATE_INDEX,
    _CREATE_TABLE,
    _CREATE_TRIGGER,
    _CREATE_VIEW,
    _DROP_INDEX,
    _DROP_TABLE,
    _DROP_TRIGGER,
    _DROP_VIEW,
    _REINDEX,
    _ANALYZE,
}
_INTERNAL = frozenset({"sqlite_master", "sqlite_schema", "sqlite_sequence"})
_NAMES = {
    3: "creating temporary objects",
    4: "creating temporary objects",
    5: "creating temporary objects",
    6: "creating temporary objects",
    _PRAGMA: "pragmas",
    22: "transaction statements (the store manages transactions)",
    24: "ATTACH",
    25: "DETACH",
    32: "savepoints (the store manages transactions)",
}


def _declares_vtab(action: int, table: str | None, column: str | None) -> bool:
    """What SQLite itself touches when it connects an FTS5 table to a connection (declaring
    its columns): an UPDATE of `sqlite_master` (which SQLite never lets a statement do without
    `writable_schema`, a pragma no slice may run) and the ROWID of `sqlite_master`."""
    if table != "sqlite_master":
        return False
    return action == _UPDATE or (action == _READ and column == "ROWID")


class Authorizer:
    """The authorizer callback for one owner; remembers why it last said no."""

    def __init__(self, owner: str, prefix: str, *, schema: bool) -> None:
        self.owner, self.prefix, self.schema = owner, prefix, schema
        self.refusal: str | None = None

    def _mine(self, name: str | None) -> bool:
        return name is not None and name.startswith(self.prefix)

    def __call__(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, src: str | None
    ) -> int:
        if action in (_SELECT, _FUNCTION, _RECURSIVE):
            return sqlite3.SQLITE_OK
        if action in _DATA:
            if (
                self._mine(arg1)
                or (self.schema and arg1 in _INTERNAL)
                or _declares_vtab(action, arg1, arg2)
            ):
                return sqlite3.SQLITE_OK
            if arg1 in _INTERNAL:
                return self._deny(
                    "the schema is not reachable through a slice (schema changes belong in a "
                    "StoreMigration)"
                )
            return self._deny(f"table {arg1!r} is not one of its tables")
        if action == _PRAGMA and arg1 == "data_version" and arg2 is None:
            # Read-only: FTS5 reads it to learn whether another connection wrote its index.
            return sqlite3.SQLITE_OK
        if action in (_CREATE_VTABLE, _DROP_VTABLE):
            if not self.schema:
                return self._deny("schema changes belong in a StoreMigration")
            if arg2 not in _VTABLE_MODULES:
                return self._deny(f"virtual tables of module {arg2!r} are not allowed (only fts5)")
            if not self._mine(arg1):
                return self._deny(f"{arg1!r} is not named with its prefix {self.prefix!r}")
            return sqlite3.SQLITE_OK
        if action in _SCHEMA or action == _ALTER_TABLE:
            if not self.schema:
                return self._deny("schema changes belong in a StoreMigration")
            if action == _CREATE_INDEX and (arg1 or "").startswith(_AUTOINDEX) and self._mine(arg2):
                return sqlite3.SQLITE_OK  # a PRIMARY KEY or UNIQUE constraint of its own table
            names = [arg2] if action == _ALTER_TABLE else [arg1]
            if action in (_CREATE_INDEX, _CREATE_TRIGGER, _DROP_INDEX, _DROP_TRIGGER) and arg2:
                names.append(arg2)
            for name in names:
                if not self._mine(name):
                    return self._deny(f"{name!r} is not named with its prefix {self.prefix!r}")
            return sqlite3.SQLITE_OK
        return self._deny(f"{_NAMES.get(action, f'action {action}')} are not allowed")

    def _deny(self, why: str) -> int:
        self.refusal = why
        return sqlite3.SQLITE_DENY


@contextmanager
def authorized(conn: sqlite3.Connection, auth: Authorizer) -> Iterator[None]:
    """Run statements under `auth`; map a refusal or a failing statement to a store error."""
    conn.set_authorizer(auth)
    try:
        yield
    except sqlite3.DatabaseError as exc:
        if auth.refusal is not None:
            raise StoreAccessError(
                auth.owner, f"{auth.refusal}; its tables start with {auth.prefix!r}"
            ) from None
        if busy(exc) or fault(exc, "", writing=True) is not None:
            raise  # the store's retry loop waits out a busy file; a fault is the file's
        raise StoreError(f"statement of {auth.owner!r} failed: {exc}", owner=auth.owner) from None
    finally:
        conn.set_authorizer(None)


class SQLiteSlice:
    """An owner's handle on its own tables (see `OwnerSlice`)."""

    def __init__(self, store: SQLiteStore, owner: str, prefix: str) -> None:
        self._store, self.owner, self.prefix = store, owner, prefix

    def _auth(self) -> Authorizer:
        return Authorizer(self.owner, self.prefix, schema=False)

    def _sql(self, sql: str) -> str:
        return sql.replace("{prefix}", self.prefix)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one writing statement in its own transaction; returns the rows changed."""
        return self._write(lambda conn: conn.execute(self._sql(sql), params).rowcount)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """Run one statement for each row, all in one transaction."""
        return self._write(lambda conn: conn.executemany(self._sql(sql), rows).rowcount)

    def execute_stamped(self, sql: str, params: Mapping[str, Any]) -> int:
        """Run one writing statement with `:generation` bound to the generation it produces."""

        def work(conn: sqlite3.Connection, generation: int) -> int:
            with authorized(conn, self._auth()):
                conn.execute(self._sql(sql), {**params, "generation": generation})
            return generation

        generation = self._store.write(work)
        self._store.announce(StoreChange(generation, "slice", owner=self.owner))
        return generation

    def execute_batch(self, statements: Sequence[tuple[str, Mapping[str, Any]]]) -> int:
        """Run the statements in order in one transaction, each with `:generation` bound to
        the generation it produces; returns that generation."""

        def work(conn: sqlite3.Connection, generation: int) -> int:
            with authorized(conn, self._auth()):
                for sql, params in statements:
                    conn.execute(self._sql(sql), {**params, "generation": generation})
            return generation

        generation = self._store.write(work)
        self._store.announce(StoreChange(generation, "slice", owner=self.owner))
        return generation

    def execute_log(self, statements: Sequence[tuple[str, Sequence[Sequence[Any]]]]) -> None:
        """The statements, each for each of its rows, in one transaction at no generation."""

        def work(conn: sqlite3.Connection) -> None:
            with authorized(conn, self._auth()):
                for sql, rows in statements:
                    conn.executemany(self._sql(sql), rows)

        self._store._transaction(work)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        def work(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            with authorized(conn, self._auth()):
                return list(conn.execute(self._sql(sql), params).fetchall())

        return self._store.read(work)

    def _write(self, run: Callable[[sqlite3.Connection], int]) -> int:
        def work(conn: sqlite3.Connection, generation: int) -> tuple[int, int]:
            with authorized(conn, self._auth()):
                return run(conn), generation

        count, generation = self._store.write(work)
        self._store.announce(StoreChange(generation, "slice", owner=self.owner))
        return count
