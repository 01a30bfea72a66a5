"""Ingesting files into a collection: read through the file gate, hashed, converted, chunked,
written once.

Every file is opened by the leash's file gate (`FsGate`): a folder or file outside its read
roots is refused before anything is opened, and a walk follows a symlink only to a target
inside the folder walked (inside the read roots is not enough). A document is keyed by its
path relative to the folder it was read from (for a single file, its name) and carries the
SHA-256 of its bytes: an unchanged file is not rewritten (nor converted again), a changed one
has its chunks replaced, and a file gone from a folder that was walked again is removed. All
of one ingest's writes are one transaction, so it advances the store generation once, or not
at all when nothing changed.

Which files are documents, and how each becomes text, is `formats`: markdown and text as
they are, HTML converted to markdown, PDF (with the `pdf` extra) as a section per page. A
file that is not a document is skipped with the reason, and the rest are ingested. Hidden
files and folders (a name starting with `.`) are never looked at. What a walk leaves out is
a `Skipped` with the reason too, never left out silently: a FIFO, socket or device (known by
`lstat`, never opened), a symlink out of the folder or the grant, a symlink loop or broken
link, a folder reached again through a link, an unreadable folder or file, and a folder named
like a document (`notes.md/`) that holds none.

`ingest` reads a folder (or one file) whole; `ingest_changes` only the paths a watcher saw
change; `reindex` re-reads every document of a collection and rewrites its chunks even when
its bytes are unchanged (after a change to chunking or conversion).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from prixfixe.errors import FsRefusedError, KnowledgeError, StepFailure
from prixfixe.knowledge.backend import KnowledgeTables, postgres
from prixfixe.knowledge.chunking import Format, split, title_of
from prixfixe.knowledge.formats import MAX_DOCUMENT_BYTES as MAX_DOCUMENT_BYTES
from prixfixe.knowledge.formats import Converted, NotADocument, chunking_of, format_of
from prixfixe.knowledge.formats import decode as decode
from prixfixe.leash.fs import FsGate, FsLeftOut

#: Collection names appear in URIs and commands: lowercase letters, digits, '-' and '_'.
COLLECTION_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
#: How a document given as text (`put_text`) is chunked, by its path's suffix. Files read
#: from folders have more formats (`formats.FORMATS`).
FORMATS: Mapping[str, Format] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
}
#: Told `(done, total)` after each file an ingest looks at (the CLI's progress bar; a watcher
#: checks there whether it was cancelled: raising stops the ingest before anything is written).
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass
class IngestResult:
    """What one ingest did, by document path; `generation` is None when nothing was written."""

    collection: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    generation: int | None = None
    #: Ids of the documents updated and removed (known before the write), and whether the
    #: collection was created or removed: what `changes.announce` tells subscribers.
    updated_ids: list[int] = field(default_factory=list)
    removed_ids: list[int] = field(default_factory=list)
    collection_created: bool = False
    collection_removed: bool = False

    @property
    def changed(self) -> bool:
        return self.generation is not None


def check_collection(name: str) -> str:
    if not COLLECTION_NAME.match(name):
        raise KnowledgeError(
            f"collection name {name!r} is not valid: 1-64 lowercase letters, digits, '-' and "
            "'_', starting with a letter or digit",
            collection=name,
        )
    return name


def _hidden(relative: PurePosixPath) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def wanted(relative: PurePosixPath, include: Sequence[str] | None = None) -> bool:
    """Whether a file at `relative` (to its folder) is a document to ingest: not hidden, of a
    document format, and matching one of the `include` globs when given (`fnmatch` on the
    whole relative path, so `*` matches across folders too)."""
    if _hidden(relative) or format_of(relative) is None:
        return False
    return include is None or _matches(relative, include)


def ingest(
    slice_: KnowledgeTables,
    gate: FsGate,
    path: Path,
    collection: str,
    *,
    include: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> IngestResult:
    """Ingest `path` (a folder, walked, or one file) into `collection`, created if new.
    `include` narrows a folder's documents to those matching its globs. Blocking: call it
    from a worker thread in async code."""
    check_collection(collection)
    real = gate.check(path)  # outside the read roots: refused before anything is opened
    if not real.exists():
        raise KnowledgeError(f"path {str(path)!r} does not exist", path=str(path))
    if real.is_dir():
        batch = _Batch(slice_, gate, collection, path)
        files = documents_under(gate, path, path, include, batch.result.skipped)
    else:
        batch = _Batch(slice_, gate, collection, path.parent)
        files = [path]
        if format_of(path) is None:
            result = IngestResult(collection)
            result.skipped.append(Skipped(path.name, f"not a document ({_kinds()})"))
            return result
    for done, file in enumerate(files, start=1):
        batch.add_file(file)
        if progress is not None:
            progress(done, len(files))
    if real.is_dir():
        # A file gone from the folder this walk covered; documents from elsewhere stay.
        batch.remove_missing("")
    return batch.commit()


def ingest_changes(
    slice_: KnowledgeTables,
    gate: FsGate,
    root: Path,
    collection: str,
    paths: Iterable[Path],
    *,
    include: Sequence[str] | None = None,
) -> IngestResult:
    """Bring `collection` in step with the changed `paths` under folder `root` (what a
    watcher saw): a file there is ingested (incrementally, by hash), a folder walked, and a
    path gone removes the documents read from it (or from under it). One transaction."""
    check_collection(collection)
    bound = gate.check(root)
    batch = _Batch(slice_, gate, collection, root)
    for path in sorted(set(paths)):
        try:
            relative = PurePosixPath(path.relative_to(root).as_posix())
        except ValueError:
            continue  # not under the folder
        if _hidden(relative) or relative == PurePosixPath("."):
            continue
        try:
            real = gate.check(path)
        except StepFailure as exc:  # a symlink that leads out of the grant, a FIFO, ...
            if wanted(relative, include):
                batch.result.skipped.append(Skipped(relative.as_posix(), exc.message))
            continue
        if not _inside(real, bound):  # a symlink leading out of the folder: not followed
            if real.is_dir() or wanted(relative, include):
                batch.result.skipped.append(Skipped(relative.as_posix(), _OUTSIDE))
            continue
        if real.is_dir():
            for file in documents_under(gate, path, root, include, batch.result.skipped):
                batch.add_file(file)
            batch.remove_missing(relative.as_posix())
        elif real.is_file():
            if wanted(relative, include):
                batch.add_file(path)
            else:
                batch.remove(relative.as_posix())  # renamed out of the include globs
        else:
            batch.remove(relative.as_posix())
            batch.remove_under(relative.as_posix())
    return batch.commit()


def reindex(
    slice_: KnowledgeTables,
    gate: FsGate,
    collection: str,
    *,
    progress: Progress | None = None,
) -> IngestResult:
    """Re-chunk every document of `collection`, rewriting its chunks even when its bytes are
    unchanged: one read from a folder is read again through the gate (one that cannot be is
    skipped with the reason, and kept as it is); one given as text is split again from its
    stored text. Reported as `updated`; one transaction."""
    from prixfixe.knowledge import catalog

    documents = catalog.documents(slice_, collection)  # an unknown collection: KnowledgeError
    rows = {
        doc_id: root
        for doc_id, root in slice_.query(
            "SELECT d.id, d.root FROM {prefix}documents d JOIN {prefix}collections c "
            "ON c.id = d.collection WHERE c.name = ?",
            (collection,),
        )
    }
    batches: dict[str, _Batch] = {}
    writes = _Writes()
    result = IngestResult(collection)
    for done, doc in enumerate(documents, start=1):
        root = rows[doc.id]
        if root:
            if root not in batches:
                batches[root] = _Batch(slice_, gate, collection, Path(root), writes)
            batches[root].add_file(Path(root) / doc.path, force=True)
        else:
            text = catalog.document_text(slice_, collection, doc.id) or ""
            converted = Converted(text, chunking_of(doc.format))
            writes.document(collection, doc.path, "", converted, doc.hash, doc.format)
            result.updated.append(doc.path)
            result.updated_ids.append(doc.id)
        if progress is not None:
            progress(done, len(documents))
    for batch in batches.values():
        result.updated += batch.result.updated
        result.updated_ids += batch.result.updated_ids
        result.skipped += batch.result.skipped
    result.updated.sort()
    if writes:
        result.generation = _commit(slice_, writes.statements(), result)
    return result


def documents_under(
    gate: FsGate,
    folder: Path,
    root: Path,
    include: Sequence[str] | None = None,
    skipped: list[Skipped] | None = None,
) -> list[Path]:
    """The document files under `folder` (itself under `root`, which `include` globs are
    relative to), by relative path. Hidden files and folders are never listed, so a notes
    folder's `.git` costs nothing; every listing passes the gate (symlinks followed only
    inside the grant, and here only inside `root`), no folder is visited twice, and the walk
    is bounded like the gate's own (`max_depth` folders deep, `max_entries` entries).

    What the walk leaves out is appended to `skipped` with the reason: a special file (a
    FIFO, found by `lstat`, is never opened), a symlink leading outside `root` or the grant,
    a symlink loop, a broken symlink, a folder reached again through a symlink, a folder that
    cannot be read, a folder named like a document holding none (hidden entries, and files
    the `include` globs leave out, are not mentioned)."""
    bound = gate.check(root)  # a symlink leading out of the folder is not followed

    def relative(path: Path) -> PurePosixPath:
        return PurePosixPath(path.relative_to(root).as_posix())

    def skip(path: Path, reason: str, *, is_dir: bool = False) -> None:
        rel = relative(path)
        shown = is_dir or include is None or _matches(rel, include)
        if skipped is not None and not _hidden(rel) and shown:
            skipped.append(Skipped(rel.as_posix(), reason))

    found: list[Path] = []
    named: list[Path] = []  # folders named like documents, reported when they hold none
    seen: set[Path] = set()
    entries = 0
    stack = [(folder, 0)]
    linked: list[tuple[Path, int]] = []  # symlinked folders: walked after the plain ones
    while stack or linked:
        current, depth = stack.pop() if stack else linked.pop()
        real = gate.check(current)
        if real in seen:
            skip(current, _WALKED, is_dir=True)  # reached again through a symlink
            continue
        seen.add(real)
        if depth > gate.max_depth:
            raise KnowledgeError(
                f"folder {str(folder)!r} has folders more than {gate.max_depth} deep, the "
                "deepest a knowledge folder is walked",
                path=str(folder),
            )
        left_out: list[FsLeftOut] = []
        try:
            listing = gate.list_dir(current, left_out=left_out)
        except FsRefusedError:
            if current == folder or os.access(real, os.R_OK | os.X_OK):
                raise
            skip(current, _UNREADABLE, is_dir=True)
            continue
        entries += len(listing) + len(left_out)
        if entries > gate.max_entries:
            raise KnowledgeError(
                f"folder {str(folder)!r} holds more than {gate.max_entries} files and folders "
                "(hidden ones not counted), the most one ingest looks at; add a smaller folder "
                "or narrow it with include globs",
                path=str(folder),
            )
        for dropped in left_out:
            skip(dropped.path, dropped.reason)
        for entry in listing:
            if entry.name.startswith("."):
                continue
            if entry.target is not None and not _inside(entry.target, bound):
                skip(entry.path, _OUTSIDE, is_dir=entry.is_dir)
            elif entry.is_dir:
                (stack if entry.target is None else linked).append((entry.path, depth + 1))
                if format_of(entry.path) is not None:
                    named.append(entry.path)
            elif wanted(relative(entry.path), include):
                found.append(entry.path)
    for path in named:
        if not any(file.is_relative_to(path) for file in found):
            skip(path, "a folder named like a document, holding no documents", is_dir=True)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


_OUTSIDE = "a symlink that leads outside the folder (not followed)"
_WALKED = "a symlink to a folder walked already (a loop; not followed again)"
_UNREADABLE = "unreadable (permission denied)"


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _matches(relative: PurePosixPath, include: Sequence[str]) -> bool:
    text = relative.as_posix()
    return any(fnmatchcase(text, pattern) for pattern in include)


def _kinds() -> str:
    from prixfixe.knowledge.formats import BY_SUFFIX

    return ", ".join(BY_SUFFIX)


class _Batch:
    """The writes of one ingest from folder `root`: files added one by one (read, hashed,
    converted only when changed), documents removed, then committed in one transaction (into
    `writes`, which several batches may share: `reindex`)."""

    def __init__(
        self,
        slice_: KnowledgeTables,
        gate: FsGate,
        collection: str,
        root: Path,
        writes: _Writes | None = None,
    ) -> None:
        self.slice = slice_
        self.gate = gate
        self.collection = collection
        self.root = root
        self.result = IngestResult(collection)
        self.writes = _Writes() if writes is None else writes
        self.seen: set[str] = set()
        #: path -> (id, hash, root) of the collection's documents, from any folder.
        self.stored: dict[str, tuple[int, str, str]] = {
            doc_path: (doc_id, doc_hash, doc_root)
            for doc_id, doc_path, doc_hash, doc_root in slice_.query(
                "SELECT d.id, d.path, d.hash, d.root FROM {prefix}documents d "
                "JOIN {prefix}collections c ON c.id = d.collection WHERE c.name = ?",
                (collection,),
            )
        }

    def add_file(self, file: Path, *, force: bool = False) -> None:
        relative = file.relative_to(self.root).as_posix()
        self.seen.add(relative)
        fmt = format_of(file)
        if fmt is None:
            self.result.skipped.append(Skipped(relative, f"not a document ({_kinds()})"))
            return
        try:
            data = self.gate.read_bytes(file, fmt.max_bytes + 1)
        except StepFailure as exc:  # gone, or swapped for a symlink, since the walk saw it
            readable = not file.exists() or os.access(file, os.R_OK)
            self.result.skipped.append(Skipped(relative, exc.message if readable else _UNREADABLE))
            return
        digest = hashlib.sha256(data).hexdigest()
        before = self.stored.get(relative)
        if before is not None and before[1] == digest and not force:
            self.result.unchanged.append(relative)
            return
        try:
            converted = fmt.convert(data)
        except NotADocument as exc:
            self.result.skipped.append(Skipped(relative, str(exc)))
            return
        if before is not None:
            self.result.updated.append(relative)
            self.result.updated_ids.append(before[0])
        else:
            self.result.added.append(relative)
        self.writes.document(self.collection, relative, str(self.root), converted, digest, fmt.name)

    def remove(self, relative: str) -> None:
        before = self.stored.get(relative)
        if before is not None and before[2] == str(self.root) and relative not in self.seen:
            self.seen.add(relative)
            self.result.removed.append(relative)
            self.result.removed_ids.append(before[0])
            self.writes.add("DELETE FROM {prefix}documents WHERE id = :id", {"id": before[0]})

    def remove_under(self, folder: str) -> None:
        """Remove this folder's documents under sub-folder `folder` (a folder gone)."""
        for doc_path in sorted(self.stored):
            if doc_path.startswith(folder + "/"):
                self.remove(doc_path)

    def remove_missing(self, folder: str) -> None:
        """Remove this folder's documents under `folder` ("" for all) that were not seen."""
        prefix = folder + "/" if folder else ""
        for doc_path in sorted(self.stored):
            if doc_path.startswith(prefix) and doc_path not in self.seen:
                self.remove(doc_path)

    def commit(self) -> IngestResult:
        self.result.skipped.sort(key=lambda skipped: skipped.path)
        if self.writes:
            self.result.collection_created = not _exists(self.slice, self.collection)
            self.result.generation = _commit(
                self.slice, [_create(self.collection), *self.writes.statements()], self.result
            )
        return self.result


def put_text(
    slice_: KnowledgeTables,
    collection: str,
    path: str,
    text: str,
    fmt: Format = "markdown",
    *,
    expect: Literal["new", "existing", "any"] = "any",
) -> IngestResult:
    """Write one document given as text (not read from a file) under key `path` in
    `collection` (created if new): added, or its chunks replaced, or nothing when its text is
    unchanged. `expect="new"` refuses a path already held, `"existing"` one not held."""
    check_collection(collection)
    check_document_path(path)
    data = text.encode("utf-8")
    if len(data) > MAX_DOCUMENT_BYTES:
        raise KnowledgeError(
            f"document {path!r} is larger than {MAX_DOCUMENT_BYTES} bytes, the limit for one "
            "document",
            path=path,
        )
    result = IngestResult(collection)
    found = slice_.query(
        "SELECT d.id, d.hash FROM {prefix}documents d JOIN {prefix}collections c "
        "ON c.id = d.collection WHERE c.name = ? AND d.path = ?",
        (collection, path),
    )
    if expect == "new" and found:
        raise KnowledgeError(
            f"collection {collection!r} already has a document {path!r} (id {found[0][0]}); "
            "update it instead",
            collection=collection,
            path=path,
        )
    if expect == "existing" and not found:
        raise KnowledgeError(
            f"collection {collection!r} has no document {path!r}", collection=collection, path=path
        )
    digest = hashlib.sha256(data).hexdigest()
    if found and found[0][1] == digest:
        result.unchanged.append(path)
        return result
    if found:
        result.updated.append(path)
        result.updated_ids.append(int(found[0][0]))
    else:
        result.added.append(path)
    result.collection_created = not _exists(slice_, collection)
    writes = _Writes()
    writes.document(collection, path, "", Converted(text, fmt), digest, fmt)
    result.generation = _commit(slice_, [_create(collection), *writes.statements()], result)
    return result


def remove_document(slice_: KnowledgeTables, collection: str, document_id: int) -> IngestResult:
    """Remove one document (and its chunks) from `collection`."""
    found = slice_.query(
        "SELECT d.path FROM {prefix}documents d JOIN {prefix}collections c "
        "ON c.id = d.collection WHERE c.name = ? AND d.id = ?",
        (collection, document_id),
    )
    if not _exists(slice_, collection):
        raise KnowledgeError(f"unknown collection {collection!r}", collection=collection)
    if not found:
        raise KnowledgeError(
            f"collection {collection!r} has no document {document_id}", collection=collection
        )
    result = IngestResult(collection, removed=[found[0][0]], removed_ids=[document_id])
    result.generation = _commit(
        slice_, [("DELETE FROM {prefix}documents WHERE id = :id", {"id": document_id})], result
    )
    return result


def create_collection(slice_: KnowledgeTables, collection: str) -> IngestResult:
    """Create an empty collection; one that exists already is an error."""
    check_collection(collection)
    if _exists(slice_, collection):
        raise KnowledgeError(f"collection {collection!r} already exists", collection=collection)
    result = IngestResult(collection, collection_created=True)
    result.generation = _commit(slice_, [_create(collection)], result)
    return result


def remove_collection(slice_: KnowledgeTables, collection: str) -> IngestResult:
    """Remove a collection with all its documents and chunks."""
    if not _exists(slice_, collection):
        raise KnowledgeError(f"unknown collection {collection!r}", collection=collection)
    rows = slice_.query(
        "SELECT d.id, d.path FROM {prefix}documents d JOIN {prefix}collections c "
        "ON c.id = d.collection WHERE c.name = ? ORDER BY d.path",
        (collection,),
    )
    result = IngestResult(
        collection,
        removed=[row[1] for row in rows],
        removed_ids=[int(row[0]) for row in rows],
        collection_removed=True,
    )
    result.generation = _commit(
        slice_,
        [("DELETE FROM {prefix}collections WHERE name = :name", {"name": collection})],
        result,
    )
    return result


def check_document_path(path: str) -> str:
    """A document key given by a client: a relative POSIX path without `..`, control
    characters or a leading `/`, at most 512 characters."""
    parts = PurePosixPath(path).parts
    if (
        not path
        or len(path) > 512
        or path.startswith("/")
        or "\\" in path
        or any(part in ("..", ".") for part in parts)
        or any(ord(ch) < 32 or ord(ch) == 127 for ch in path)
    ):
        raise KnowledgeError(
            f"document path {path!r} is not valid: a relative path like 'notes/today.md', "
            "without '..', '\\', control characters or a leading '/', at most 512 characters",
            path=path,
        )
    return path


def _commit(slice_: KnowledgeTables, statements: Sequence[_Statement], result: IngestResult) -> int:
    """Run one write's statements in one transaction; returns its generation. On PostgreSQL
    the FTS5 index statement is left out (a chunk's `tsvector` is its own column) and what the
    write changed is recorded with it, so other instances tell their subscribers."""
    pg = postgres(slice_)
    if pg is None:
        return slice_.execute_batch(statements)
    from prixfixe.knowledge.pg import record

    lists_changed = bool(
        result.added or result.removed or result.collection_created or result.collection_removed
    )
    documents = list(dict.fromkeys([*result.updated_ids, *result.removed_ids]))
    kept = [statement for statement in statements if statement[0] != _INDEX]
    return pg.execute_batch([*kept, *record(result.collection, documents, lists_changed)])


def _exists(slice_: KnowledgeTables, collection: str) -> bool:
    return bool(slice_.query("SELECT 1 FROM {prefix}collections WHERE name = ?", (collection,)))


def _create(collection: str) -> tuple[str, Mapping[str, Any]]:
    return (
        "INSERT INTO {prefix}collections (name, created_gen) VALUES (:name, :generation) "
        "ON CONFLICT (name) DO NOTHING",
        {"name": collection},
    )


_Statement = tuple[str, Mapping[str, Any]]

_DOCUMENT = (
    "(SELECT d.id FROM {prefix}documents d JOIN {prefix}collections c ON c.id = d.collection "
    "WHERE c.name = :collection AND d.path = :path)"
)
#: Indexes every chunk its transaction inserted, in one statement: the chunks of the documents
#: stamped with its generation (each document written is stamped, and has all its chunks
#: replaced, in that transaction; no document written before has that generation). FTS5 has
#: no insert trigger (migration `0003`): per chunk, it flushed to disk at every statement.
_INDEX = (
    "INSERT INTO {prefix}chunks_fts (rowid, heading, body) "
    "SELECT k.id, k.heading, k.body FROM {prefix}documents d "
    "JOIN {prefix}chunks k ON k.document = d.id WHERE d.gen = :generation"
)


class _Writes:
    """The one write path for chunks: the statements of one transaction, in order, that write
    documents (each upserted, its chunks replaced) and delete them, ending, when any document
    was written, with `_INDEX`, so the index holds every chunk inserted when it commits.

    A document written twice keeps only its last write: its first chunks, never indexed,
    could not be deleted from the index (the delete trigger would remove terms it never held)."""

    def __init__(self) -> None:
        self._groups: list[list[_Statement]] = []
        self._documents: dict[tuple[str, str], int] = {}  # (collection, path) -> its group

    def add(self, sql: str, params: Mapping[str, Any]) -> None:
        """A statement that inserts no chunks (a delete: its trigger updates the index)."""
        self._groups.append([(sql, params)])

    def document(
        self, collection: str, relative: str, root: str, converted: Converted, digest: str, fmt: str
    ) -> None:
        """Upsert one document (`fmt` names its format; `digest` hashes its source bytes) and
        replace its chunks with those of its converted text."""
        key = (collection, relative)
        if key in self._documents:
            self._groups[self._documents[key]] = []
        self._documents[key] = len(self._groups)
        self._groups.append(
            _document_statements(collection, relative, root, converted, digest, fmt)
        )

    def __bool__(self) -> bool:
        return any(self._groups)

    def statements(self) -> list[_Statement]:
        out = [statement for group in self._groups for statement in group]
        if self._documents:
            out.append((_INDEX, {}))
        return out


def _document_statements(
    collection: str, relative: str, root: str, converted: Converted, digest: str, fmt: str
) -> list[_Statement]:
    """The statements of `_Writes.document`; only it may call this (they insert chunks that
    only `_INDEX` indexes)."""
    text = converted.text
    chunks = split(text, converted.chunking)
    fallback = converted.fallback_title or PurePosixPath(relative).name
    title = converted.title or (
        title_of(chunks, fallback) if converted.headings_are_titles else fallback
    )
    key = {"collection": collection, "path": relative}
    statements: list[_Statement] = [
        (
            "INSERT INTO {prefix}documents "
            "(collection, path, root, title, format, hash, bytes, gen) VALUES "
            "((SELECT id FROM {prefix}collections WHERE name = :collection), :path, :root, "
            ":title, :format, :hash, :bytes, :generation) "
            "ON CONFLICT (collection, path) DO UPDATE SET root = excluded.root, "
            "title = excluded.title, format = excluded.format, hash = excluded.hash, "
            "bytes = excluded.bytes, gen = excluded.gen",
            {
                **key,
                "root": root,
                "title": title,
                "format": fmt,
                "hash": digest,
                "bytes": len(text.encode("utf-8")),
            },
        ),
        (f"DELETE FROM {{prefix}}chunks WHERE document = {_DOCUMENT}", key),
    ]
    for seq, chunk in enumerate(chunks):
        statements.append(
            (
                "INSERT INTO {prefix}chunks (document, seq, heading, body) "
                f"VALUES ({_DOCUMENT}, :seq, :heading, :body)",
                {**key, "seq": seq, "heading": chunk.heading, "body": chunk.body},
            )
        )
    return statements
