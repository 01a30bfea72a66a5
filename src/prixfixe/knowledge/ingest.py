"""Ingesting files into a collection: read through the file gate, hashed, chunked, written once.

Every file is opened by the leash's file gate (`FsGate`): a folder or file outside its read
roots is refused before anything is opened, and a walk follows a symlink only to a target
inside them. A document is keyed by its path relative to the folder it was read from (for a
single file, its name) and carries the SHA-256 of its bytes: an unchanged file is not
rewritten, a changed one has its chunks replaced, and a file gone from a folder that was
walked again is removed. All of one ingest's writes are one transaction, so it advances the
store generation once, or not at all when nothing changed.

A file that is not a document is skipped with the reason, and the rest are ingested: one that
is binary (holds a NUL byte), is not UTF-8, or is larger than `MAX_DOCUMENT_BYTES`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from prixfixe.errors import KnowledgeError, StepFailure
from prixfixe.knowledge.chunking import Format, split, title_of
from prixfixe.leash.fs import FsGate
from prixfixe.store.api import OwnerSlice

#: Collection names appear in URIs and commands: lowercase letters, digits, '-' and '_'.
COLLECTION_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
#: What one document may weigh; a larger file is skipped, never read past this.
MAX_DOCUMENT_BYTES = 1 << 20
#: The files a folder holds that are documents, by suffix.
FORMATS: Mapping[str, Format] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
}


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


def decode(data: bytes) -> str:
    """The text of a document's bytes, or a `ValueError` saying why it is not a document."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ValueError(f"larger than {MAX_DOCUMENT_BYTES} bytes, the limit for one document")
    if b"\0" in data:
        raise ValueError("binary (it holds a NUL byte)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (invalid byte at offset {exc.start})") from None


def _hidden(relative: PurePosixPath) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def ingest(slice_: OwnerSlice, gate: FsGate, path: Path, collection: str) -> IngestResult:
    """Ingest `path` (a folder, walked, or one file) into `collection`, created if new.
    Blocking: call it from a worker thread in async code."""
    check_collection(collection)
    real = gate.check(path)  # outside the read roots: refused before anything is opened
    if not real.exists():
        raise KnowledgeError(f"path {str(path)!r} does not exist", path=str(path))
    result = IngestResult(collection)
    if real.is_dir():
        root = path
        files = [
            p
            for p in gate.walk(path, "*")
            if p.suffix.lower() in FORMATS
            and not _hidden(PurePosixPath(p.relative_to(root).as_posix()))
        ]
    else:
        root = path.parent
        files = [path]
        if path.suffix.lower() not in FORMATS:
            kinds = ", ".join(FORMATS)
            result.skipped.append(Skipped(path.name, f"not a document ({kinds})"))
            return result
    stored = {
        doc_path: (doc_id, doc_hash, doc_root)
        for doc_id, doc_path, doc_hash, doc_root in slice_.query(
            "SELECT d.id, d.path, d.hash, d.root FROM {prefix}documents d "
            "JOIN {prefix}collections c ON c.id = d.collection WHERE c.name = ?",
            (collection,),
        )
    }
    statements: list[tuple[str, Mapping[str, Any]]] = []
    seen: set[str] = set()
    for file in files:
        relative = file.relative_to(root).as_posix()
        seen.add(relative)
        try:
            data = gate.read_bytes(file, MAX_DOCUMENT_BYTES + 1)
        except StepFailure as exc:  # gone, or swapped for a symlink, since the walk saw it
            result.skipped.append(Skipped(relative, exc.message))
            continue
        try:
            text = decode(data)
        except ValueError as exc:
            result.skipped.append(Skipped(relative, str(exc)))
            continue
        digest = hashlib.sha256(data).hexdigest()
        before = stored.get(relative)
        if before is not None and before[1] == digest:
            result.unchanged.append(relative)
            continue
        if before is not None:
            result.updated.append(relative)
            result.updated_ids.append(before[0])
        else:
            result.added.append(relative)
        fmt = FORMATS[file.suffix.lower()]
        statements += _document_statements(collection, relative, str(root), text, digest, fmt)
    if real.is_dir():
        # A file gone from the folder this walk covered; documents from elsewhere stay.
        for doc_path, (doc_id, _, doc_root) in sorted(stored.items()):
            if doc_root == str(root) and doc_path not in seen:
                result.removed.append(doc_path)
                result.removed_ids.append(doc_id)
                statements.append(("DELETE FROM {prefix}documents WHERE id = :id", {"id": doc_id}))
    if statements:
        result.collection_created = not _exists(slice_, collection)
        result.generation = slice_.execute_batch([_create(collection), *statements])
    return result


def put_text(
    slice_: OwnerSlice,
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
    statements = _document_statements(collection, path, "", text, digest, fmt)
    result.generation = slice_.execute_batch([_create(collection), *statements])
    return result


def remove_document(slice_: OwnerSlice, collection: str, document_id: int) -> IngestResult:
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
    result.generation = slice_.execute_batch(
        [("DELETE FROM {prefix}documents WHERE id = :id", {"id": document_id})]
    )
    return result


def create_collection(slice_: OwnerSlice, collection: str) -> IngestResult:
    """Create an empty collection; one that exists already is an error."""
    check_collection(collection)
    if _exists(slice_, collection):
        raise KnowledgeError(f"collection {collection!r} already exists", collection=collection)
    result = IngestResult(collection, collection_created=True)
    result.generation = slice_.execute_batch([_create(collection)])
    return result


def remove_collection(slice_: OwnerSlice, collection: str) -> IngestResult:
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
    result.generation = slice_.execute_batch(
        [("DELETE FROM {prefix}collections WHERE name = :name", {"name": collection})]
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


def _exists(slice_: OwnerSlice, collection: str) -> bool:
    return bool(slice_.query("SELECT 1 FROM {prefix}collections WHERE name = ?", (collection,)))


def _create(collection: str) -> tuple[str, Mapping[str, Any]]:
    return (
        "INSERT INTO {prefix}collections (name, created_gen) VALUES (:name, :generation) "
        "ON CONFLICT (name) DO NOTHING",
        {"name": collection},
    )


_DOCUMENT = (
    "(SELECT d.id FROM {prefix}documents d JOIN {prefix}collections c ON c.id = d.collection "
    "WHERE c.name = :collection AND d.path = :path)"
)


def _document_statements(
    collection: str, relative: str, root: str, text: str, digest: str, fmt: Format
) -> list[tuple[str, Mapping[str, Any]]]:
    chunks = split(text, fmt)
    key = {"collection": collection, "path": relative}
    statements: list[tuple[str, Mapping[str, Any]]] = [
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
                "title": title_of(chunks, PurePosixPath(relative).name),
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
