from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from prixfixe.app import App
from prixfixe.knowledge import KNOWLEDGE_OWNER
from prixfixe.knowledge.ingest import IngestResult, ingest
from prixfixe.leash.fs import FsGate, FsGrant
from prixfixe.store.api import OwnerSlice
from tests.conftest import AppFactory

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


@pytest.fixture
def app(make_app: AppFactory) -> App:
    return make_app(plugins=[])


@pytest.fixture
def kb(app: App) -> OwnerSlice:
    return app.store.slice(KNOWLEDGE_OWNER)


Ingest = Callable[..., IngestResult]


@pytest.fixture
def add(kb: OwnerSlice, folder: Path) -> Ingest:
    """Ingest a path into a collection through a gate whose one read root is `folder`."""
    gate = FsGate(FsGrant((folder,), (), "test"))

    def run(path: Path | None = None, collection: str = "garden") -> IngestResult:
        return ingest(kb, gate, folder if path is None else path, collection)

    return run
