"""The store: records keyed by kind, owned slices, a monotonic generation.

Callers use the `Store` interface (`prixfixe.store.api`); all SQL lives in this package, in
the SQLite backend (the default) and the PostgreSQL one (records only, chosen by URL), so a
backend can be added without touching them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from prixfixe.declarations.kinds import StoreKind, StoreMigration
from prixfixe.errors import StoreError
from prixfixe.secrets import Secret
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

#: The store's file name inside `$PRIXFIXE_HOME`.
STORE_FILENAME = "store.sqlite3"
#: What a URL of the PostgreSQL backend starts with.
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_store(
    home: Path,
    kinds: Mapping[str, StoreKind],
    migrations: Mapping[str, Sequence[StoreMigration]] | None = None,
    *,
    on_busy: Callable[[], None] | None = None,
    url: str | None = None,
    password: Secret | None = None,
) -> Store:
    """Open (creating and migrating as needed) the store in directory `home`, or, given a
    `postgresql://` `url`, the records on that database. Plugins' own tables (owned slices,
    SQLite statements) then stay in the file in `home`, opened only when some owner has any."""
    from prixfixe.store.sqlite import SQLiteStore

    if url is None:
        return SQLiteStore.open(home / STORE_FILENAME, kinds, migrations, on_busy=on_busy)
    if not url.startswith(POSTGRES_SCHEMES):
        raise StoreError(
            "the store URL must start with postgresql:// (a local store needs no URL: "
            "leave [store] url and PRIXFIXE_STORE_URL unset)"
        )
    try:
        from prixfixe.store.postgres import PostgresStore
    except ImportError:
        raise StoreError(
            "a postgresql:// store needs the PostgreSQL driver: pip install 'prixfixe[postgres]'"
        ) from None

    from prixfixe.store.migrations import shared_on_postgres

    # Owners whose migrations say how keep their tables in the database; the rest, locally.
    own = {o: m for o, m in (migrations or {}).items() if not shared_on_postgres(m)}
    local = SQLiteStore.open(home / STORE_FILENAME, {}, own, on_busy=on_busy) if own else None
    try:
        return PostgresStore.open(
            url,
            kinds,
            migrations,
            local=local,
            password=None if password is None else password.reveal(),
        )
    except BaseException:
        if local is not None:
            local.close()
        raise


__all__ = [
    "CORE_OWNER",
    "MAX_LIMIT",
    "POSTGRES_SCHEMES",
    "STORE_FILENAME",
    "AppliedMigration",
    "HistoryEntry",
    "OwnerSlice",
    "Page",
    "Store",
    "StoreChange",
    "StoreObserver",
    "StoredRecord",
    "Written",
    "WrittenBatch",
    "open_store",
]
