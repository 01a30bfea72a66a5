"""Ingesting a folder: documents keyed by relative path, incremental by content hash, read
only through the file gate, malformed files skipped with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from prixfixe.app import App
from prixfixe.errors import FsRefusedError, KnowledgeError
from prixfixe.knowledge import catalog
from prixfixe.knowledge.ingest import MAX_DOCUMENT_BYTES, Skipped
from prixfixe.leash.fs import observe_opens, unobserve_opens
from prixfixe.store.api import OwnerSlice
from tests.knowledge.conftest import Ingest


def _chunk_ids(kb: OwnerSlice) -> dict[str, list[int]]:
    rows = kb.query(
        "SELECT d.path, k.id FROM {prefix}chunks k JOIN {prefix}documents d "
        "ON d.id = k.document ORDER BY d.path, k.seq"
    )
    found: dict[str, list[int]] = {}
    for path, chunk_id in rows:
        found.setdefault(path, []).append(chunk_id)
    return found


def test_a_folder_is_ingested_with_documents_keyed_by_relative_path(
    add: Ingest, kb: OwnerSlice
) -> None:
    result = add()
    assert sorted(result.added) == ["deep/bees.md", "guide.md", "notes.txt"]
    assert (result.skipped, result.updated, result.removed) == ([], [], [])
    docs = {d.path: d for d in catalog.documents(kb, "garden")}
    assert docs["guide.md"].title == "Garden guide"
    assert (docs["guide.md"].chunks, docs["notes.txt"].chunks) == (3, 1)
    assert len(docs["guide.md"].hash) == 64
    (garden,) = catalog.collections(kb)
    assert (garden.name, garden.documents, garden.chunks) == ("garden", 3, 5)


def test_re_ingesting_an_unchanged_folder_writes_nothing(
    add: Ingest, kb: OwnerSlice, app: App
) -> None:
    first = add()
    generation = app.store.generation()
    before = _chunk_ids(kb)
    again = add()
    assert again.generation is None
    assert sorted(again.unchanged) == sorted(first.added)
    assert again.added == again.updated == again.removed == []
    assert app.store.generation() == generation
    assert _chunk_ids(kb) == before


def test_a_changed_file_has_only_its_chunks_replaced_in_one_write(
    add: Ingest, kb: OwnerSlice, app: App, folder: Path
) -> None:
    add()
    before = _chunk_ids(kb)
    generation = app.store.generation()
    (folder / "deep" / "bees.md").write_text("# Bees\n\nBees dance.\n\n## Hives\n\nWax.\n")
    result = add()
    assert (result.updated, result.added) == (["deep/bees.md"], [])
    assert app.store.generation() == generation + 1 == result.generation
    after = _chunk_ids(kb)
    assert after["guide.md"] == before["guide.md"]
    assert after["notes.txt"] == before["notes.txt"]
    assert len(after["deep/bees.md"]) == 2
    assert not set(after["deep/bees.md"]) & set(before["deep/bees.md"])
    bees = next(d for d in catalog.documents(kb, "garden") if d.path == "deep/bees.md")
    assert catalog.document_text(kb, "garden", bees.id) == (folder / "deep" / "bees.md").read_text()


def test_a_file_gone_from_the_folder_is_removed_with_its_chunks(
    add: Ingest, kb: OwnerSlice, folder: Path
) -> None:
    add()
    (folder / "notes.txt").unlink()
    result = add()
    assert result.removed == ["notes.txt"]
    assert "notes.txt" not in _chunk_ids(kb)
    assert kb.query("SELECT COUNT(*) FROM {prefix}chunks_fts WHERE body MATCH 'wombats'") == [(0,)]


def test_malformed_files_are_skipped_with_a_reason_and_the_rest_ingested(
    add: Ingest, folder: Path
) -> None:
    (folder / "binary.md").write_bytes(b"# x\n\0\1\2")
    (folder / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    (folder / "huge.md").write_bytes(b"a" * (MAX_DOCUMENT_BYTES + 1))
    (folder / "image.png").write_bytes(b"\x89PNG")  # not a document: never considered
    result = add()
    assert sorted(result.added) == ["deep/bees.md", "guide.md", "notes.txt"]
    assert sorted(result.skipped, key=lambda s: s.path) == [
        Skipped("binary.md", "binary (it holds a NUL byte)"),
        Skipped("huge.md", f"larger than {MAX_DOCUMENT_BYTES} bytes, the limit for one document"),
        Skipped("latin1.txt", "not UTF-8 (invalid byte at offset 3)"),
    ]


def test_a_path_outside_the_granted_roots_is_refused_before_anything_is_opened(
    add: Ingest, kb: OwnerSlice, tmp_path: Path, folder: Path
) -> None:
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nhunter2\n")
    (folder / "link.md").symlink_to(outside / "secret.md")
    opened: list[Path] = []
    observe_opens(opened.append)
    try:
        with pytest.raises(FsRefusedError, match="is outside the file grant"):
            add(outside, "private")
        with pytest.raises(FsRefusedError, match="is outside the file grant"):
            add(outside / "secret.md", "private")
        result = add()  # the symlink inside the root points outside it: not followed
    finally:
        unobserve_opens(opened.append)
    assert not [p for p in opened if p.is_relative_to(outside)]
    assert "link.md" not in result.added
    assert catalog.collection_names(kb) == ["garden"]


def test_one_file_is_ingested_under_its_name_and_bad_collection_names_are_refused(
    add: Ingest, kb: OwnerSlice, folder: Path
) -> None:
    result = add(folder / "deep" / "bees.md", "bees")
    assert result.added == ["bees.md"]
    with pytest.raises(KnowledgeError, match="collection name 'Bad Name' is not valid"):
        add(folder, "Bad Name")
    with pytest.raises(KnowledgeError, match="unknown collection 'nope'"):
        catalog.documents(kb, "nope")
