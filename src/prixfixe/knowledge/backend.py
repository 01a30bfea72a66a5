"""Where the knowledge base's tables live: the seam between its code and the store.

Everything in the knowledge package reads and writes its tables through `KnowledgeTables`:
`query` (a read, in one snapshot) and `execute_batch` (statements in one write transaction
that advances the store generation, `:generation` bound to it). Both backends take the same
statements, written in the SQL both understand (`?` and `:name` parameters, `{prefix}` before
each table's name):

* on the embedded SQLite store, the knowledge owner's slice is the implementation (an
  `OwnerSlice` is a `KnowledgeTables` as it is): FTS5, BM25 and the vectors of hybrid search;
* on a PostgreSQL store, the knowledge slice of the shared database (every migration in
  `tables` says how in PostgreSQL's dialect), so every instance on it sees one knowledge
  base, with a generated `tsvector` column and a GIN index instead of FTS5 (see `pg`).

What only one backend can do is asked of `postgres(tables)`: the PostgreSQL tables
(`pg.PgTables`), or None on SQLite (search's ranking and snippets, the index check of health,
the change rows that tell other instances' subscribers); the few functions the two spell
differently are `greatest` and `octets`. psycopg is imported only by a PostgreSQL store: a
SQLite store never loads it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from prixfixe.knowledge import KNOWLEDGE_OWNER
from prixfixe.store.api import Store

if TYPE_CHECKING:
    from prixfixe.knowledge.changes import ChangeListener
    from prixfixe.knowledge.pg import PgTables


class KnowledgeTables(Protocol):
    """The knowledge base's tables, on whichever backend the store is."""

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    def execute_batch(self, statements: Sequence[tuple[str, Mapping[str, Any]]]) -> int: ...


def tables_of(store: Store, *, notifier: ChangeListener | None = None) -> KnowledgeTables:
    """The knowledge tables of `store`: its knowledge slice, in the SQLite file or in the
    shared PostgreSQL database. Given the `notifier` of a serving app, other instances'
    knowledge writes on the same database are announced to it too (PostgreSQL only)."""
    slice_ = store.slice(KNOWLEDGE_OWNER)
    pg = postgres(slice_)
    if pg is None:
        return slice_
    if notifier is not None:
        from prixfixe.knowledge.pg import follow

        follow(store, pg, notifier)
    return pg


def postgres(tables: KnowledgeTables) -> PgTables | None:
    """`tables` with what only PostgreSQL does, if they are in a PostgreSQL database; else
    None (psycopg is never imported for a SQLite store)."""
    if "prixfixe.store.pg_slices" not in sys.modules:
        return None  # no PostgreSQL store was ever opened in this process
    from prixfixe.knowledge.pg import PgTables, is_pg_slice

    if isinstance(tables, PgTables):
        return tables
    return PgTables(tables) if is_pg_slice(tables) else None


def greatest(tables: KnowledgeTables) -> str:
    """The larger of two values, as the backend spells it: SQLite's scalar `MAX`."""
    return "MAX" if postgres(tables) is None else "GREATEST"


def octets(tables: KnowledgeTables, column: str) -> str:
    """A text column's size in bytes (UTF-8), as the backend spells it."""
    return (
        f"length(CAST({column} AS BLOB))" if postgres(tables) is None else f"octet_length({column})"
    )


def total(tables: KnowledgeTables, expression: str) -> str:
    """The sum of an integer expression over a group, 0 for none, as an integer (PostgreSQL
    sums bigints as numeric)."""
    summed = f"COALESCE(SUM({expression}), 0)"
    return summed if postgres(tables) is None else f"CAST({summed} AS BIGINT)"
