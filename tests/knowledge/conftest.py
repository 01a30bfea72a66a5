from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from prixfixe.app import App
from prixfixe.config import STORE_URL_ENV
from prixfixe.knowledge.backend import KnowledgeTables, tables_of
from prixfixe.knowledge.ingest import IngestResult, ingest
from prixfixe.leash.fs import FsGate, FsGrant
from tests.conftest import AppFactory
from tests.store.conftest import BACKENDS
from tests.store.conftest import postgres as postgres
from tests.store.conftest import postgres_url as postgres_url

GUIDE = """# Garden guide

How to keep a small garden.

## Watering

Water tomatoes deeply twice a week; the quokka drinks from the trough.

## Pruning

Prune roses in late winter.

```
# not a heading: a comment in code
```
"""

NOTES = "First paragraph about compost.\n\nSecond paragraph about wombats and burrows.\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder of notes: two markdown files (one in a sub-folder) and one plain-text file."""
    root = tmp_path / "notes"
    (root / "deep").mkdir(parents=True)
    (root / "guide.md").write_text(GUIDE, encoding="utf-8")
    (root / "deep" / "bees.md").write_text("# Bees\n\nBees make honey.\n", encoding="utf-8")
    (root / "notes.txt").write_text(NOTES, encoding="utf-8")
    return root


#: The modules whose tests run on both backends: the knowledge base's tables in the SQLite
#: store, and in a throwaway PostgreSQL database (`tests.postgres_server`). The others are
#: SQLite's alone: FTS5's internals and BM25's numbers, dense vectors (kept on SQLite stores
#: only), and the CLI and watched folders (which reach the store through code outside the
#: knowledge package: `prixfixe.app` and `prixfixe.cli.knowledge`).
BOTH_BACKENDS = frozenset(
    {"test_ingest", "test_search", "test_resources", "test_tools", "test_notifications"}
    | {"test_step"}
)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        module = metafunc.module.__name__.rsplit(".", 1)[-1]
        # A module's SQLITE_ONLY names its tests about FTS5's internals.
        sqlite_only = metafunc.function.__name__ in getattr(metafunc.module, "SQLITE_ONLY", ())
        both = module in BOTH_BACKENDS and not sqlite_only
        metafunc.parametrize("backend", BACKENDS if both else ["sqlite"])


@pytest.fixture
def backend_env(backend: str, request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment that puts an app's store on the test's backend: nothing for SQLite,
    a fresh database's URL for PostgreSQL (the server starts on first use)."""
    if backend == "sqlite":
        return {}
    return {STORE_URL_ENV: str(request.getfixturevalue("postgres_url"))}


@pytest.fixture
def app(make_app: AppFactory, backend_env: dict[str, str]) -> App:
    return make_app(plugins=[], env=backend_env)


@pytest.fixture
def kb(app: App) -> KnowledgeTables:
    return tables_of(app.store)


Ingest = Callable[..., IngestResult]


@pytest.fixture
def add(kb: KnowledgeTables, folder: Path) -> Ingest:
    """Ingest a path into a collection through a gate whose one read root is `folder`."""
    gate = FsGate(FsGrant((folder,), (), "test"))

    def run(path: Path | None = None, collection: str = "garden") -> IngestResult:
        return ingest(kb, gate, folder if path is None else path, collection)

    return run
