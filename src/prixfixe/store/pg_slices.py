"""Owned slices in the shared PostgreSQL database, for owners whose migrations say how.

An owner whose every `StoreMigration` carries `postgres` statements keeps its tables in the
database every instance shares (the routines' report archive does: a report made through one
instance is `report_get` through any). Its runtime statements are the same text as on SQLite:
`{prefix}` becomes its table prefix, `?` and `:name` become psycopg's `%s` and `%(name)s`.

Unlike SQLite, PostgreSQL has no per-statement authorizer: the prefix rule is the owner's
declaration, not a wall the database keeps. Owners are code the configuration's author
installed, running in the server's process; what the rule guards against is one plugin's
mistake in another's tables, and a plugin that wants the database's policing keeps its tables
local (no `postgres` statements).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import psycopg

from prixfixe.errors import StoreError
from prixfixe.store.api import StoreChange

if TYPE_CHECKING:
    from prixfixe.store.postgres import PostgresStore

#: What a statement's text is made of, for translating its parameters: string literals (their
#: `?` and `:name` left alone), `:name` (not a `::` cast), `?`, and `%`, which psycopg would
#: read as a placeholder anywhere.
_TOKENS = re.compile(r"'(?:[^']|'')*'|(?<![:\w]):([A-Za-z_]\w*)|\?|%")


def pg_statement(sql: str, prefix: str) -> str:
    """`sql` as psycopg takes it: the owner's prefix filled in, parameters translated."""

    def token(match: re.Match[str]) -> str:
        text = match.group(0)
        if text.startswith("'"):
            return text.replace("%", "%%")  # psycopg reads `%` even inside literals
        if text == "?":
            return "%s"
        if text == "%":
            return "%%"
        return f"%({match.group(1)})s"

    return _TOKENS.sub(token, sql.replace("{prefix}", prefix))


class PostgresSlice:
    """An owner's handle on its own tables in the shared database (see `OwnerSlice`)."""

    def __init__(self, store: PostgresStore, owner: str, prefix: str) -> None:
        self._store, self.owner, self.prefix = store, owner, prefix

    def _failed(self, exc: psycopg.Error) -> StoreError:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return StoreError(f"statement of {self.owner!r} failed: {detail}", owner=self.owner)

    def _write(self, statements: Sequence[tuple[str, Any]], many: bool = False) -> tuple[int, int]:
        """Run the statements in one transaction that advances the generation; tell the other
        instances (NOTIFY) and this one's observers. Returns (rows changed, generation)."""

        def work(conn: psycopg.Connection[Any], generation: int) -> tuple[int, int]:
            count = 0
            with conn.cursor() as cur:
                for sql, params in statements:
                    stamped = params
                    if isinstance(params, Mapping):
                        stamped = {**params, "generation": generation}
                    try:
                        if many:
                            cur.executemany(pg_statement(sql, self.prefix), stamped)
                        else:
                            cur.execute(pg_statement(sql, self.prefix), stamped)
                    except psycopg.OperationalError:
                        raise  # the connection's, not the statement's: the store reports it
                    except psycopg.Error as exc:
                        raise self._failed(exc) from None
                    count += max(cur.rowcount, 0)
            self._store.send_change(conn, StoreChange(generation, "slice", owner=self.owner))
            return count, generation

        count, generation = self._store.write(work)
        self._store.announce(StoreChange(generation, "slice", owner=self.owner))
        return count, generation

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._write([(sql, tuple(params))])[0]

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        return self._write([(sql, [tuple(r) for r in rows])], many=True)[0]

    def execute_stamped(self, sql: str, params: Mapping[str, Any]) -> int:
        return self._write([(sql, dict(params))])[1]

    def execute_batch(self, statements: Sequence[tuple[str, Mapping[str, Any]]]) -> int:
        return self._write([(sql, dict(params)) for sql, params in statements])[1]

    def execute_log(self, statements: Sequence[tuple[str, Sequence[Sequence[Any]]]]) -> None:
        """The statements, each for each of its rows, in one transaction at no generation
        (nothing any instance reads changed, so none is told)."""
        with self._store._connection() as conn, conn.transaction(), conn.cursor() as cur:
            for sql, rows in statements:
                try:
                    cur.executemany(pg_statement(sql, self.prefix), [tuple(r) for r in rows])
                except psycopg.OperationalError:
                    raise
                except psycopg.Error as exc:
                    raise self._failed(exc) from None

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        def work(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
            try:
                return list(conn.execute(pg_statement(sql, self.prefix), tuple(params)))
            except psycopg.OperationalError:
                raise
            except psycopg.Error as exc:
                raise self._failed(exc) from None

        return self._store.read(work)
