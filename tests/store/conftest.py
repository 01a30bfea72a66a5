from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from prixfixe.declarations.kinds import StoreKind, StoreMigration
from prixfixe.store.api import Store
from prixfixe.store.sqlite import SQLiteStore
from prixfixe.store.tools import BUILTIN_KINDS
from tests.postgres_server import (
    TEST_DATABASES,
    PostgresServer,
    PostgresUnavailable,
    postgres_server,
)

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


# -- both backends: every record test runs on SQLite and on a throwaway PostgreSQL ----------

BACKENDS = ["sqlite", "postgres"]
AnyStoreFactory = Callable[..., Store]


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session (per xdist worker), started here on first use.
    Without PostgreSQL's programs the tests fail, never skip: scripts/test-postgres.sh
    installs them."""
    try:
        with postgres_server() as server:
            yield server
    except PostgresUnavailable as exc:
        pytest.fail(str(exc))


@pytest.fixture
def postgres_url(request: pytest.FixtureRequest) -> str:
    """A fresh database on the session's server (started on first use)."""
    server: PostgresServer = request.getfixturevalue("postgres")
    url = server.new_database()
    # Checked once every fixture of the test is torn down (tests/conftest.py).
    request.node.stash.setdefault(TEST_DATABASES, []).append(url)
    return url


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_any_store(
    backend: str, request: pytest.FixtureRequest, db_path: Path
) -> Iterator[AnyStoreFactory]:
    """Open stores of the test's backend, all on one file or one database; each is closed
    after the test."""
    opened: list[Store] = []
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else None

    def factory(
        kinds: Mapping[str, StoreKind] = KINDS,
        migrations: Mapping[str, Sequence[StoreMigration]] | None = None,
    ) -> Store:
        if url is None:
            store: Store = SQLiteStore.open(db_path, kinds, migrations)
        else:
            from prixfixe.store.postgres import PostgresStore

            store = PostgresStore.open(url, kinds, migrations)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def any_store(open_any_store: AnyStoreFactory) -> Store:
    return open_any_store()
