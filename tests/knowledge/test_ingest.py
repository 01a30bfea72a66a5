"""Ingesting a folder: documents keyed by relative path, incremental by content hash, read
only through the file gate, malformed files skipped with a reason."""

from __future__ import annotations

import os
import socket
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from prixfixe.app import App
from prixfixe.errors import FsRefusedError, KnowledgeError
from prixfixe.knowledge import KNOWLEDGE_OWNER, catalog, tables
from prixfixe.knowledge.backend import postgres
from prixfixe.knowledge.health import index_state
from prixfixe.knowledge.ingest import (
    MAX_DOCUMENT_BYTES,
    Skipped,
    ingest,
    ingest_changes,
    put_text,
    reindex,
    remove_collection,
    remove_document,
)
from prixfixe.knowledge.search import search
from prixfixe.leash.fs import FsGate, FsGrant, observe_opens, unobserve_opens
from prixfixe.store.api import OwnerSlice
from prixfixe.store.sqlite import SQLiteStore
from tests.knowledge.conftest import Ingest

#: FTS5's internals: a chunk written behind the write path's back is indexed by PostgreSQL
#: (a generated column), so there is nothing to catch there.
SQLITE_ONLY = ("test_the_index_check_catches_a_chunk_written_behind_the_write_path_s_back",)


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
    assert search(kb, "wombats") == []


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


def test_only_the_changed_paths_a_watcher_names_are_read_again(
    add: Ingest, kb: OwnerSlice, folder: Path
) -> None:
    add()
    gate = FsGate(FsGrant((folder,), (), "test"))
    (folder / "guide.md").write_text("# Garden guide\n\nNew text.\n")
    (folder / "fresh").mkdir()
    (folder / "fresh" / "a.md").write_text("# A\n")
    (folder / "fresh" / ".hidden.md").write_text("# Hidden\n")
    (folder / "notes.txt").unlink()
    opened: list[Path] = []
    observe_opens(opened.append)
    try:
        changed = [folder / "guide.md", folder / "fresh", folder / "notes.txt", folder / ".x.md"]
        result = ingest_changes(kb, gate, folder, "garden", changed)
    finally:
        unobserve_opens(opened.append)
    assert (result.updated, result.added, result.removed) == (
        ["guide.md"],
        ["fresh/a.md"],
        ["notes.txt"],
    )
    assert not [p for p in opened if p.name == "bees.md"], "an unchanged file is not read"
    again = ingest_changes(kb, gate, folder, "garden", [folder / "guide.md"])
    assert (again.unchanged, again.generation) == (["guide.md"], None)


def test_a_folder_gone_removes_the_documents_under_it_and_globs_narrow_a_folder(
    add: Ingest, kb: OwnerSlice, folder: Path
) -> None:
    add()
    gate = FsGate(FsGrant((folder,), (), "test"))
    (folder / "deep" / "bees.md").unlink()
    (folder / "deep").rmdir()
    gone = ingest_changes(kb, gate, folder, "garden", [folder / "deep"])
    assert gone.removed == ["deep/bees.md"]
    narrowed = ingest(kb, gate, folder, "garden", include=["*.txt"])
    assert (narrowed.removed, narrowed.unchanged) == (["guide.md"], ["notes.txt"])


def test_a_notes_folder_s_hidden_folders_are_never_listed(kb: OwnerSlice, folder: Path) -> None:
    git = folder / ".git" / "objects"
    git.mkdir(parents=True)
    for i in range(30):
        (git / f"{i:02x}").write_text("blob")
    gate = FsGate(FsGrant((folder,), (), "test"), max_entries=20)
    opened: list[Path] = []
    observe_opens(opened.append)
    try:
        result = ingest(kb, gate, folder, "garden")
    finally:
        unobserve_opens(opened.append)
    assert sorted(result.added) == ["deep/bees.md", "guide.md", "notes.txt"]
    assert not [p for p in opened if ".git" in p.parts]


def test_progress_is_told_of_every_file(kb: OwnerSlice, folder: Path) -> None:
    told: list[tuple[int, int]] = []
    ingest(
        kb,
        FsGate(FsGrant((folder,), (), "test")),
        folder,
        "garden",
        progress=lambda d, t: told.append((d, t)),
    )
    assert told == [(1, 3), (2, 3), (3, 3)]


def test_reindex_rewrites_every_document_s_chunks_even_when_unchanged(
    add: Ingest, kb: OwnerSlice, app: App, folder: Path, tmp_path: Path
) -> None:
    add()
    put_text(kb, "garden", "given.md", "# Given\n\nby a tool\n")
    before = _chunk_ids(kb)
    generation = app.store.generation()
    (folder / "notes.txt").unlink()
    result = reindex(kb, FsGate(FsGrant((folder,), (), "test")), "garden")
    assert result.updated == ["deep/bees.md", "given.md", "guide.md"]
    assert [s.path for s in result.skipped] == ["notes.txt"]
    assert "does not exist" in result.skipped[0].reason
    assert app.store.generation() == generation + 1 == result.generation
    gens = {d.path: d.gen for d in catalog.documents(kb, "garden")}
    assert gens == {
        "deep/bees.md": result.generation,
        "given.md": result.generation,
        "guide.md": result.generation,
        "notes.txt": generation - 1,  # a file that cannot be read again stays as it was
    }
    after = _chunk_ids(kb)
    assert {p: len(ids) for p, ids in after.items()} == {p: len(ids) for p, ids in before.items()}
    assert not set(after["guide.md"]) & set(before["guide.md"]), "its chunks were rewritten"
    outside = reindex(kb, FsGate(FsGrant((tmp_path / "prixfixe-home",), (), "test")), "garden")
    assert outside.updated == ["given.md"]
    assert all("outside the file grant" in s.reason for s in outside.skipped)


def test_a_walk_is_bounded_and_visits_a_folder_reached_twice_once(
    kb: OwnerSlice, folder: Path
) -> None:
    (folder / "deep" / "loop").symlink_to(folder)  # a symlinked folder inside the root
    gate = FsGate(FsGrant((folder,), (), "test"))
    result = ingest(kb, gate, folder, "garden")
    assert sorted(result.added) == ["deep/bees.md", "guide.md", "notes.txt"]
    for i in range(3):
        (folder / f"more{i}").mkdir()
    with pytest.raises(KnowledgeError, match="holds more than 6 files and folders"):
        ingest(kb, FsGate(FsGrant((folder,), (), "test"), max_entries=6), folder, "garden")
    with pytest.raises(KnowledgeError, match="folders more than 0 deep"):
        ingest(kb, FsGate(FsGrant((folder,), (), "test"), max_depth=0), folder, "garden")


def test_changes_outside_the_folder_or_through_an_escaping_symlink_are_not_read(
    add: Ingest, kb: OwnerSlice, folder: Path, tmp_path: Path
) -> None:
    add()
    outside = tmp_path / "private.md"
    outside.write_text("# Private\n")
    (folder / "link.md").symlink_to(outside)
    gate = FsGate(FsGrant((folder,), (), "test"))
    result = ingest_changes(kb, gate, folder, "garden", [outside, folder / "link.md", folder])
    assert result.generation is None
    assert [s.path for s in result.skipped] == ["link.md"]
    assert "is outside the file grant" in result.skipped[0].reason
    narrowed = ingest_changes(
        kb, gate, folder, "garden", [folder / "guide.md"], include=["*.txt", "deep/*"]
    )
    assert narrowed.removed == ["guide.md"]  # no longer included: as if renamed away


def test_one_file_that_is_not_a_document_is_skipped_saying_what_is(
    add: Ingest, folder: Path
) -> None:
    (folder / "photo.png").write_bytes(b"\x89PNG")
    result = add(folder / "photo.png", "photos")
    assert result.skipped[0].path == "photo.png"
    assert result.skipped[0].reason.startswith("not a document (.md, .markdown, .txt, .text, .html")
    with pytest.raises(KnowledgeError, match="does not exist"):
        add(folder / "nowhere.md")


# --- the full-text index follows the chunks, whichever writer wrote them -------------------
#
# Since migration 0003 no trigger indexes an inserted chunk: the one write path (`_Writes`)
# ends each transaction that inserts chunks with one statement that indexes them all.


def _assert_index_matches_chunks(kb: OwnerSlice, app: App, tmp_path: Path) -> None:
    """The FTS5 index holds exactly the chunks: one entry per chunk (its docsize table, read
    through the slice), and FTS5's own `integrity-check` passes with a rank of 1, which also
    compares the index with the chunks it was built from. The check is a write, so it runs
    on a copy of the store file."""
    if postgres(kb) is not None:  # each chunk's tsvector is a column of its own row
        assert index_state(kb)["state"] == "ok"
        return
    indexed = kb.query("SELECT id FROM {prefix}chunks_fts_docsize ORDER BY id")
    assert indexed == kb.query("SELECT id FROM {prefix}chunks ORDER BY id")
    copy = tmp_path / f"copy-{len(list(tmp_path.glob('copy-*')))}.sqlite3"
    source = sqlite3.connect(f"file:{app.store.location}?mode=ro", uri=True)
    target = sqlite3.connect(copy)
    try:
        source.backup(target)
        fts = f"{kb.prefix}chunks_fts"
        target.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('integrity-check', 1)")
    finally:
        source.close()
        target.close()


def _matches(kb: OwnerSlice, word: str) -> list[str]:
    return sorted(f"{h.collection}/{h.path}" for h in search(kb, word))


def test_the_index_check_catches_a_chunk_written_behind_the_write_path_s_back(
    add: Ingest, kb: OwnerSlice, app: App, tmp_path: Path
) -> None:
    add()
    _assert_index_matches_chunks(kb, app, tmp_path)
    kb.execute(
        "INSERT INTO {prefix}chunks (document, seq, heading, body) "
        "SELECT MIN(id), 99, '', 'stray' FROM {prefix}documents"
    )
    with pytest.raises(AssertionError):
        _assert_index_matches_chunks(kb, app, tmp_path)


def test_ingest_keeps_the_index_in_step_as_files_are_added_changed_and_removed(
    add: Ingest, kb: OwnerSlice, app: App, folder: Path, tmp_path: Path
) -> None:
    add()
    add(collection="other")
    _assert_index_matches_chunks(kb, app, tmp_path)
    assert _matches(kb, "quokka") == ["garden/guide.md", "other/guide.md"]
    (folder / "guide.md").write_text("# Garden guide\n\n## Watering\n\nThe numbat waters.\n")
    (folder / "notes.txt").unlink()
    (folder / "deep" / "wasps.md").write_text("# Wasps\n\nWasps eat the pear.\n")
    result = add()
    assert (result.updated, result.removed, result.added) == (
        ["guide.md"],
        ["notes.txt"],
        ["deep/wasps.md"],
    )
    _assert_index_matches_chunks(kb, app, tmp_path)
    assert _matches(kb, "quokka") == ["other/guide.md"]  # replaced text is no longer found
    assert _matches(kb, "numbat") == ["garden/guide.md"]
    assert _matches(kb, "wombats") == ["other/notes.txt"]
    assert _matches(kb, "pear") == ["garden/deep/wasps.md"]


def test_put_text_keeps_the_index_in_step_as_a_document_is_added_and_replaced(
    kb: OwnerSlice, app: App, tmp_path: Path
) -> None:
    put_text(kb, "given", "a.md", "# A\n\nThe quokka smiles.\n\n## More\n\nAnd more.\n")
    put_text(kb, "given", "b.txt", "Plain wombat text.\n", "text")
    _assert_index_matches_chunks(kb, app, tmp_path)
    assert _matches(kb, "quokka") == ["given/a.md"]
    put_text(kb, "given", "a.md", "# A\n\nThe numbat digs.\n")
    _assert_index_matches_chunks(kb, app, tmp_path)
    assert _matches(kb, "quokka") == []
    assert _matches(kb, "numbat") == ["given/a.md"]
    assert _matches(kb, "wombat") == ["given/b.txt"]


def test_reindex_keeps_the_index_in_step(
    add: Ingest, kb: OwnerSlice, app: App, folder: Path, tmp_path: Path
) -> None:
    add()
    put_text(kb, "garden", "given.md", "# Given\n\nThe quokka by a tool.\n")
    (folder / "deep" / "bees.md").write_text("# Bees\n\nBees make mead.\n")
    result = reindex(kb, FsGate(FsGrant((folder,), (), "test")), "garden")
    assert result.updated == ["deep/bees.md", "given.md", "guide.md", "notes.txt"]
    _assert_index_matches_chunks(kb, app, tmp_path)
    assert _matches(kb, "honey") == []
    assert _matches(kb, "mead") == ["garden/deep/bees.md"]
    assert _matches(kb, "quokka") == ["garden/given.md", "garden/guide.md"]


def test_ingest_changes_keeps_the_index_in_step_even_when_a_file_is_named_twice(
    add: Ingest, kb: OwnerSlice, app: App, folder: Path, tmp_path: Path
) -> None:
    add()
    gate = FsGate(FsGrant((folder,), (), "test"))
    (folder / "deep" / "bees.md").write_text("# Bees\n\nBees make mead.\n\n## Hives\n\nWax.\n")
    (folder / "deep" / "ants.md").write_text("# Ants\n\nAnts farm aphids.\n")
    # The file and its folder both changed: the walk of `deep` reads bees.md a second time,
    # in the same transaction. Only its last write counts, and the index holds it once.
    changed = [folder / "deep", folder / "deep" / "bees.md", folder / "deep" / "ants.md"]
    result = ingest_changes(kb, gate, folder, "garden", changed)
    assert result.changed
    _assert_index_matches_chunks(kb, app, tmp_path)
    assert _matches(kb, "honey") == []
    assert _matches(kb, "mead") == ["garden/deep/bees.md"]
    assert _matches(kb, "aphids") == ["garden/deep/ants.md"]
    assert len(_chunk_ids(kb)["deep/bees.md"]) == 2
    (folder / "deep" / "ants.md").unlink()
    ingest_changes(kb, gate, folder, "garden", [folder / "deep" / "ants.md"])
    _assert_index_matches_chunks(kb, app, tmp_path)
    assert _matches(kb, "aphids") == []


def test_removing_documents_and_collections_keeps_the_index_in_step(
    add: Ingest, kb: OwnerSlice, app: App, tmp_path: Path
) -> None:
    add()
    add(collection="other")
    guide = next(d for d in catalog.documents(kb, "garden") if d.path == "guide.md")
    remove_document(kb, "garden", guide.id)
    _assert_index_matches_chunks(kb, app, tmp_path)
    assert _matches(kb, "quokka") == ["other/guide.md"]
    remove_collection(kb, "other")
    _assert_index_matches_chunks(kb, app, tmp_path)
    assert _matches(kb, "quokka") == []
    assert _matches(kb, "honey") == ["garden/deep/bees.md"]


def test_a_store_indexed_by_the_old_insert_trigger_stays_in_step_after_the_upgrade(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old" / "store.sqlite3"
    old = SQLiteStore.open(path, {}, {KNOWLEDGE_OWNER: tables.MIGRATIONS[:2]})
    slice_ = old.slice(KNOWLEDGE_OWNER)
    slice_.execute_batch(  # chunks written as before 0003: indexed one by one by the trigger
        [
            ("INSERT INTO {prefix}collections (name, created_gen) VALUES ('old', 1)", {}),
            (
                "INSERT INTO {prefix}documents (collection, path, root, title, format, hash, "
                "bytes, gen) VALUES (1, 'a.md', '', 'A', 'markdown', 'x', 1, 1)",
                {},
            ),
            (
                "INSERT INTO {prefix}chunks (document, seq, heading, body) "
                "VALUES (1, 0, 'A', '# A\n\nThe quokka.\n')",
                {},
            ),
        ]
    )
    old.close()
    store = SQLiteStore.open(path, {}, {KNOWLEDGE_OWNER: tables.MIGRATIONS})
    try:
        kb = store.slice(KNOWLEDGE_OWNER)
        app = cast(App, SimpleNamespace(store=store))
        _assert_index_matches_chunks(kb, app, tmp_path)
        assert _matches(kb, "quokka") == ["old/a.md"]
        put_text(kb, "old", "a.md", "# A\n\nThe numbat.\n")
        put_text(kb, "old", "b.md", "# B\n\nThe quokka again.\n")
        _assert_index_matches_chunks(kb, app, tmp_path)
        assert (_matches(kb, "quokka"), _matches(kb, "numbat")) == (["old/b.md"], ["old/a.md"])
    finally:
        store.close()


# --- what a folder's walk leaves out, it says (issue 31) ------------------------------------


def test_every_entry_a_folder_walk_leaves_out_is_reported_and_nothing_outside_is_opened(
    kb: OwnerSlice, folder: Path, tmp_path: Path
) -> None:
    """FIFOs, sockets, symlinks leading out of the folder (even into another granted root),
    symlink loops and dangling links, a folder reached again through a link, and a folder
    named like a document that holds none: each is a `Skipped` with its reason, the rest is
    ingested, no FIFO is opened (the walk would block) and nothing outside the folder is."""
    elsewhere = tmp_path / "elsewhere"  # granted too: the folder, not the grant, is the bound
    elsewhere.mkdir()
    (elsewhere / "secret.md").write_text("# Secret\n\nhunter2\n")
    private = tmp_path / "private"  # not granted at all
    private.mkdir()
    (private / "key.md").write_text("# Key\n")
    os.mkfifo(folder / "pipe.md")
    os.mkfifo(folder / "deep" / "queue")  # a special file, whatever its name
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(folder / "sock.md"))
    (folder / "escape.md").symlink_to(elsewhere / "secret.md")
    (folder / "escape-dir").symlink_to(elsewhere)
    (folder / "private.md").symlink_to(private / "key.md")
    (folder / "loop-a.md").symlink_to(folder / "loop-b.md")
    (folder / "loop-b.md").symlink_to(folder / "loop-a.md")
    (folder / "gone.md").symlink_to(folder / "nowhere.md")
    (folder / "to-pipe.md").symlink_to(folder / "pipe.md")
    (folder / "deep" / "again").symlink_to(folder)  # a folder walked already: a loop
    (folder / "inside.md").symlink_to(folder / "guide.md")  # inside: followed, as before
    (folder / "ideas.md").mkdir()  # a folder named like a document, holding none
    (folder / "ideas.md" / "sketch.png").write_bytes(b"\x89PNG")
    (folder / "more.md").mkdir()  # one holding a document: walked like any folder
    (folder / "more.md" / "a.md").write_text("# A\n")
    (folder / ".hidden-pipe.md").symlink_to(elsewhere / "secret.md")  # hidden: never looked at
    gate = FsGate(FsGrant((folder, elsewhere), (), "test"))
    opened: list[Path] = []
    observe_opens(opened.append)
    try:
        result = ingest(kb, gate, folder, "garden")
    finally:
        unobserve_opens(opened.append)
    assert sorted(result.added) == [
        "deep/bees.md",
        "guide.md",
        "inside.md",
        "more.md/a.md",
        "notes.txt",
    ]
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons == {
        "pipe.md": "a FIFO, not a file or folder (never opened)",
        "deep/queue": "a FIFO, not a file or folder (never opened)",
        "sock.md": "a socket, not a file or folder (never opened)",
        "escape.md": "a symlink that leads outside the folder (not followed)",
        "escape-dir": "a symlink that leads outside the folder (not followed)",
        "private.md": "a symlink that leads outside the file grant (not followed)",
        "loop-a.md": "a symlink loop",
        "loop-b.md": "a symlink loop",
        "gone.md": "a broken symlink (what it points to does not exist)",
        "to-pipe.md": "a symlink to a special file (not followed)",
        "deep/again": "a symlink to a folder walked already (a loop; not followed again)",
        "ideas.md": "a folder named like a document, holding no documents",
    }
    assert not [p for p in opened if p.is_relative_to(elsewhere) or p.is_relative_to(private)]
    assert not [p for p in opened if p.name in ("pipe.md", "queue", "sock.md")]
    assert not [d for d in catalog.documents(kb, "garden") if "hunter2" in d.title]
    again = ingest(kb, gate, folder, "garden")  # reported on every walk, not only the first
    assert {s.path for s in again.skipped} == set(reasons)


def test_include_globs_narrow_what_a_walk_reports_too(kb: OwnerSlice, folder: Path) -> None:
    os.mkfifo(folder / "pipe.md")
    os.mkfifo(folder / "pipe.txt")
    gate = FsGate(FsGrant((folder,), (), "test"))
    result = ingest(kb, gate, folder, "garden", include=["*.txt"])
    assert [s.path for s in result.skipped] == ["pipe.txt"]


def test_a_watcher_s_change_through_a_link_out_of_the_folder_is_skipped_unread(
    kb: OwnerSlice, folder: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.md").write_text("# Secret\n")
    (folder / "escape.md").symlink_to(elsewhere / "secret.md")
    (folder / "escape-dir").symlink_to(elsewhere)
    gate = FsGate(FsGrant((folder, elsewhere), (), "test"))
    opened: list[Path] = []
    observe_opens(opened.append)
    try:
        result = ingest_changes(
            kb, gate, folder, "garden", [folder / "escape.md", folder / "escape-dir"]
        )
    finally:
        unobserve_opens(opened.append)
    assert result.generation is None
    assert {s.path: s.reason for s in result.skipped} == {
        "escape.md": "a symlink that leads outside the folder (not followed)",
        "escape-dir": "a symlink that leads outside the folder (not followed)",
    }
    assert not [p for p in opened if p.is_relative_to(elsewhere)]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its mode")
def test_an_unreadable_file_or_folder_is_skipped_with_the_reason(
    kb: OwnerSlice, folder: Path
) -> None:
    locked = folder / "locked"
    locked.mkdir()
    (locked / "a.md").write_text("# A\n")
    secret = folder / "secret.md"
    secret.write_text("# Secret\n")
    locked.chmod(0)
    secret.chmod(0)
    try:
        result = ingest(kb, FsGate(FsGrant((folder,), (), "test")), folder, "garden")
    finally:
        locked.chmod(0o755)
        secret.chmod(0o644)
    assert sorted(result.added) == ["deep/bees.md", "guide.md", "notes.txt"]
    assert {s.path: s.reason for s in result.skipped} == {
        "locked": "unreadable (permission denied)",
        "secret.md": "unreadable (permission denied)",
    }
