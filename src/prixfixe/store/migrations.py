"""The core's own schema, as append-only named migrations, and how any owner's are applied.

Every owner (the core, and each plugin that declares tables) has its migrations recorded in
`migrations` and its schema version in `meta`. On open, each owner's recorded names must be a
prefix of its declared names; the rest are applied in order, in one transaction per owner. A
file recording more than this code declares was written by a newer version and is refused.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext

from prixfixe.declarations.kinds import StoreMigration
from prixfixe.errors import MigrationError, StoreError, StoreVersionError
from prixfixe.store.api import CORE_OWNER
from prixfixe.store.faults import fault

CORE_MIGRATIONS: tuple[StoreMigration, ...] = (
    StoreMigration(
        name="0001_meta",
        statements=(
            "CREATE TABLE meta (owner TEXT NOT NULL, key TEXT NOT NULL, value NOT NULL,"
            " PRIMARY KEY (owner, key)) WITHOUT ROWID",
            "CREATE TABLE migrations (owner TEXT NOT NULL, seq INTEGER NOT NULL,"
            " name TEXT NOT NULL, generation INTEGER NOT NULL,"
            " PRIMARY KEY (owner, seq), UNIQUE (owner, name))",
            "CREATE TABLE generation (only INTEGER PRIMARY KEY CHECK (only = 1),"
            " value INTEGER NOT NULL CHECK (value >= 0))",
            "INSERT INTO generation VALUES (1, 0)",
            # Signs cursors, so a cursor from another store file is refused.
            "INSERT INTO meta VALUES ('core', 'cursor_secret', lower(hex(randomblob(32))))",
        ),
    ),
    StoreMigration(
        name="0002_records",
        statements=(
            "CREATE TABLE kinds (name TEXT PRIMARY KEY, owner TEXT NOT NULL,"
            " schema_version INTEGER NOT NULL)",
            "CREATE TABLE records (id INTEGER PRIMARY KEY,"
            " kind TEXT NOT NULL REFERENCES kinds (name),"
            " schema_version INTEGER NOT NULL,"
            " body TEXT NOT NULL CHECK (json_valid(body)),"
            " created_gen INTEGER NOT NULL, gen INTEGER NOT NULL,"
            " closed_gen INTEGER, close_reason TEXT)",
            "CREATE INDEX records_kind_id ON records (kind, id)",
            "CREATE TABLE history (record INTEGER NOT NULL REFERENCES records (id),"
            " gen INTEGER NOT NULL, op TEXT NOT NULL CHECK (op IN ('update', 'close')),"
            " body TEXT, schema_version INTEGER, prev_gen INTEGER NOT NULL, reason TEXT,"
            " PRIMARY KEY (record, gen)) WITHOUT ROWID",
        ),
    ),
)


def owner_prefix(owner: str) -> str:
    """The table prefix of an owner: its name in lowercase, runs of other characters as `_`,
    then `__`. Names never hold `__` themselves, so no prefix starts another owner's."""
    slug = re.sub(r"[^a-z0-9]+", "_", owner.lower()).strip("_")
    return f"{slug or 'plugin'}__"


def recorded(conn: sqlite3.Connection, owner: str) -> tuple[str, ...]:
    rows = conn.execute(
        "SELECT name FROM migrations WHERE owner = ? ORDER BY seq", (owner,)
    ).fetchall()
    return tuple(r[0] for r in rows)


def pending(
    owner: str, applied: Sequence[str], declared: Sequence[StoreMigration], location: str
) -> list[StoreMigration]:
    """The declared migrations not yet applied; refuse a file that knows more, or other ones."""
    names = [m.name for m in declared]
    if list(applied) == names[: len(applied)]:
        return list(declared[len(applied) :])
    if len(applied) > len(names) and list(applied[: len(names)]) == names:
        raise StoreVersionError(
            f"the store {location} has schema version {len(applied)} for {owner!r} "
            f"(migrations up to {applied[-1]!r}); this version knows {len(names)}. "
            "Upgrade prixfixe (or the plugin); the file was left untouched.",
            owner=owner,
            found=len(applied),
            known=len(names),
        )
    raise MigrationError(
        f"the store {location} records migrations {list(applied)} for {owner!r}, which "
        f"do not match the declared {names}; migrations are append-only (never rename, "
        "edit or reorder a released one)",
        owner=owner,
    )


def table_exists(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return row is not None


def apply(
    conn: sqlite3.Connection,
    owner: str,
    steps: Sequence[StoreMigration],
    start_seq: int,
    generation: int,
    prefix: str = "",
    guard: Callable[[], AbstractContextManager[None]] = nullcontext,
) -> None:
    """Run `steps` inside the caller's transaction and record each one; each step's own
    statements run inside `guard()` (an owner's authorizer), the bookkeeping outside it."""
    for seq, step in enumerate(steps, start=start_seq + 1):
        for statement in step.statements:
            try:
                with guard():
                    conn.execute(statement.replace("{prefix}", prefix))
            except (sqlite3.Error, StoreError) as exc:
                if isinstance(exc, sqlite3.Error) and fault(exc, "", writing=True) is not None:
                    raise  # a full disk or a read-only file is the file's fault, not the step's
                detail = exc.message if isinstance(exc, StoreError) else str(exc)
                raise MigrationError(
                    f"migration {step.name!r} of {owner!r} failed: {detail}",
                    owner=owner,
                    migration=step.name,
                ) from exc
        conn.execute(
            "INSERT INTO migrations (owner, seq, name, generation) VALUES (?, ?, ?, ?)",
            (owner, seq, step.name, generation),
        )
    conn.execute(
        "INSERT INTO meta VALUES (?, 'schema_version', ?)"
        " ON CONFLICT (owner, key) DO UPDATE SET value = excluded.value",
        (owner, start_seq + len(steps)),
    )


__all__ = ["CORE_MIGRATIONS", "CORE_OWNER", "apply", "owner_prefix", "pending", "recorded"]


def shared_on_postgres(steps: Sequence[StoreMigration]) -> bool:
    """Whether an owner's tables live in the shared database when the store is PostgreSQL:
    every one of its migrations says how in PostgreSQL's dialect."""
    return bool(steps) and all(step.postgres for step in steps)
