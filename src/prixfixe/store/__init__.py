"""The store: records keyed by kind, owned slices, a monotonic generation.

Callers use the `Store` interface (`prixfixe.store.api`); all SQL lives in this package, in
the SQLite backend, so another backend can be added without touching them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from prixfixe.declarations.kinds import StoreKind, StoreMigration
from prixfixe.store.api import (
    CORE_OWNER,
    MAX_LIMIT,
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


def open_store(
    home: Path,
    kinds: Mapping[str, StoreKind],
    migrations: Mapping[str, Sequence[StoreMigration]] | None = None,
    *,
    on_busy: Callable[[], None] | None = None,
) -> Store:
    """Open (creating and migrating as needed) the store in directory `home`."""
    from prixfixe.store.sqlite import SQLiteStore

    return SQLiteStore.open(home / STORE_FILENAME, kinds, migrations, on_busy=on_busy)


__all__ = [
    "CORE_OWNER",
    "MAX_LIMIT",
    "STORE_FILENAME",
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
