from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from prixfixe.declarations.kinds import StoreKind, StoreMigration
from prixfixe.store.sqlite import SQLiteStore
from prixfixe.store.tools import BUILTIN_KINDS

BUILTIN_OWNER = "prixfixe.default_plugins.store"
KINDS: dict[str, StoreKind] = {k.name: replace(k, owner=BUILTIN_OWNER) for k in BUILTIN_KINDS}

StoreFactory = Callable[..., SQLiteStore]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "store.sqlite3"


@pytest.fixture
def open_store(db_path: Path) -> Iterator[StoreFactory]:
    """Open stores on one file in tmp_path; every store opened is closed after the test."""
    opened: list[SQLiteStore] = []

    def factory(
        kinds: Mapping[str, StoreKind] = KINDS,
        migrations: Mapping[str, Sequence[StoreMigration]] | None = None,
        **options: Any,
    ) -> SQLiteStore:
        store = SQLiteStore.open(db_path, kinds, migrations, **options)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: StoreFactory) -> SQLiteStore:
    return open_store()
