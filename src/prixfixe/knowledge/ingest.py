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
from typing import Any

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
        (result.updated if before is not None else result.added).append(relative)
        statements += _document_statements(collection, relative, str(root), text, digest, file)
    if real.is_dir():
        # A file gone from the folder this walk covered; documents from elsewhere stay.
        for doc_path, (doc_id, _, doc_root) in sorted(stored.items()):
            if doc_root == str(root) and doc_path not in seen:
                result.removed.append(doc_path)
                statements.append(("DELETE FROM {prefix}documents WHERE id = :id", {"id": doc_id}))
    if statements:
        create = (
            "INSERT INTO {prefix}collections (name, created_gen) VALUES (:name, :generation) "
            "ON CONFLICT (name) DO NOTHING",
            {"name": collection},
        )
        result.generation = slice_.execute_batch([create, *statements])
    return result


_DOCUMENT = (
    "(SELECT d.id FROM {prefix}documents d JOIN {prefix}collections c ON c.id = d.collection "
    "WHERE c.name = :collection AND d.path = :path)"
)


def _document_statements(
    collection: str, relative: str, root: str, text: str, digest: str, file: Path
) -> list[tuple[str, Mapping[str, Any]]]:
    fmt = FORMATS[file.suffix.lower()]
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
                "title": title_of(chunks, file.name),
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
