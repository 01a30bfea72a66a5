"""`prixfixe kb add|sync|list|show|search|remove|reindex`: the knowledge base from a terminal.

`kb add PATH` reads through the same file gate as everything else: PATH must lie inside the
leash's `fs_read` roots (configured `[knowledge.folders]` are in the default grant), or be
granted for this one run with `--grant`. The person at the terminal is trusted, but the grant
stays explicit: a typo (`kb add ~`) then reads nothing instead of a whole home folder, and what
a run may read is written on its command line or in the configuration.

These commands write the store directly: a server running in another process does not hear of
their changes, so its subscribed clients are not told (a watched folder tells them itself).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from prixfixe.cli._common import build_app, console, echo_json, escape, friendly
from prixfixe.errors import KnowledgeError, PrixfixeError


@click.group()
def kb() -> None:
    """The knowledge base: collections of documents, searched and read as resources."""


def _slice(app: Any) -> Any:
    from prixfixe.knowledge import KNOWLEDGE_OWNER

    return app.store.slice(KNOWLEDGE_OWNER)


@contextmanager
def _progress(description: str, show: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr while a long ingest runs, only on a terminal (never in a
    pipe, nor with `--json`); yields the `(done, total)` callback, or None."""
    if not (show and sys.stderr.isatty()):
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=console(stderr=True), transient=True) as bar:
        task = bar.add_task(escape(description), total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _summary(name: str, result: Any) -> None:
    out = console()
    out.print(
        f"{escape(name)}: {len(result.added)} added, {len(result.updated)} updated, "
        f"{len(result.unchanged)} unchanged, {len(result.removed)} removed, "
        f"{len(result.skipped)} skipped"
    )
    for skipped in result.skipped:
        out.print(f"  [yellow]skipped[/] {escape(skipped.path)}: {escape(skipped.reason)}")


@kb.command("add")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--collection", required=True, help="The collection to add to (created if new).")
@click.option(
    "--grant",
    is_flag=True,
    help="Grant PATH as a file read root for this run only (else it must be in [leash] fs_read).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@friendly
def kb_add(path: Path, collection: str, grant: bool, as_json: bool) -> None:
    """Ingest a document (markdown, text, HTML, PDF) or a folder of them into COLLECTION."""
    from prixfixe.knowledge.ingest import check_collection, ingest
    from prixfixe.leash.fs import FsGate, FsGrant

    check_collection(collection)
    path = Path(os.path.abspath(path))
    app = build_app()
    try:
        gate: FsGate = app.routines.fs
        if grant:
            current = gate.grant
            gate = FsGate(
                FsGrant(
                    (*current.read, path),
                    current.write,
                    f"{current.source}; --grant {path}",
                )
            )
        with _progress(f"adding to {collection}", not as_json) as progress:
            result = ingest(_slice(app), gate, path, collection, progress=progress)
        _embed(app, result.changed, as_json)
    finally:
        app.close_store()
    if as_json:
        echo_json(asdict(result))
        return
    _summary(collection, result)


@kb.command("sync")
@click.argument("names", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@friendly
def kb_sync(names: tuple[str, ...], as_json: bool) -> None:
    """Ingest the configured [knowledge.folders] (or the NAMES given) once, as a server does
    when it starts."""
    from prixfixe.knowledge.watch import configured, sync_folder

    app = build_app()
    base_dir = app.config.path.parent if app.config.path else app.cwd
    folders = configured(app.config, base_dir)
    known = [folder.name for folder in folders]
    if not folders:
        raise KnowledgeError(
            f"no knowledge folders are configured ({app.config.source}); add a "
            "[knowledge.folders.NAME] table with a path (prixfixe init --print shows one)"
        )
    unknown = [name for name in names if name not in known]
    if unknown:
        raise KnowledgeError(
            f"no knowledge folder {unknown[0]!r} is configured (folders: {', '.join(known)})"
        )
    chosen = [folder for folder in folders if not names or folder.name in names]
    report: list[dict[str, Any]] = []
    failed = False
    try:
        for folder in chosen:
            entry: dict[str, Any] = {"folder": folder.name, "collection": folder.collection}
            try:
                with _progress(f"syncing {folder.name}", not as_json) as progress:
                    result = sync_folder(_slice(app), app.routines.fs, folder, progress=progress)
                _embed(app, result.changed, as_json)
            except PrixfixeError as exc:
                failed = True
                entry["error"] = exc.message
                if not as_json:
                    console(stderr=True).print(
                        f"[bold red]prixfixe: error:[/] {escape(exc.message)}"
                    )
            else:
                entry["result"] = asdict(result)
                if not as_json:
                    _summary(f"{folder.name} -> {folder.collection}", result)
            report.append(entry)
    finally:
        app.close_store()
    if as_json:
        echo_json(report)
    if failed:
        sys.exit(1)


@kb.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the collections as JSON.")
@friendly
def kb_list(as_json: bool) -> None:
    """List collections with their document and chunk counts."""
    from rich.table import Table

    from prixfixe.knowledge.catalog import collections

    app = build_app()
    try:
        found = collections(_slice(app))
    finally:
        app.close_store()
    if as_json:
        echo_json([asdict(c) for c in found])
        return
    table = Table("collection", "documents", "chunks", "bytes")
    for c in found:
        table.add_row(escape(c.name), str(c.documents), str(c.chunks), str(c.bytes))
    console().print(table)


def _document(slice_: Any, collection: str, ref: str) -> Any:
    """The collection's document with id or path `ref` (an id first, when it is a number)."""
    from prixfixe.knowledge import catalog

    found = catalog.documents(slice_, collection)
    if ref.isdigit():
        by_id = [d for d in found if d.id == int(ref)]
        if by_id:
            return by_id[0]
    by_path = [d for d in found if d.path == ref]
    if by_path:
        return by_path[0]
    raise KnowledgeError(
        f"collection {collection!r} has no document {ref!r} (give an id or a path; "
        f"prixfixe kb show {collection} lists them)",
        collection=collection,
    )


@kb.command("show")
@click.argument("collection")
@click.argument("document", required=False)
@click.option("--text", "as_text", is_flag=True, help="Print the document's whole text.")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON.")
@friendly
def kb_show(collection: str, document: str | None, as_text: bool, as_json: bool) -> None:
    """Show COLLECTION's documents, or one DOCUMENT (an id or a path): its outline, or its
    text with --text."""
    from prixfixe.knowledge import catalog

    app = build_app()
    try:
        slice_ = _slice(app)
        if document is None:
            _show_documents(collection, catalog.documents(slice_, collection), as_json)
            return
        doc = _document(slice_, collection, document)
        if as_text:
            click.echo(catalog.document_text(slice_, collection, doc.id) or "", nl=False)
            return
        heads = catalog.document_heads(slice_, collection, doc.id)
    finally:
        app.close_store()
    _show_outline(collection, doc, heads, as_json)


def _show_documents(collection: str, docs: list[Any], as_json: bool) -> None:
    from rich.table import Table

    from prixfixe.knowledge import catalog

    if as_json:
        echo_json([{**asdict(d), "uri": catalog.document_uri(collection, d.id)} for d in docs])
        return
    table = Table("id", "path", "title", "format", "chunks", "bytes", title=escape(collection))
    for d in docs:
        table.add_row(
            str(d.id), escape(d.path), escape(d.title), d.format, str(d.chunks), str(d.bytes)
        )
    console().print(table)


def _show_outline(collection: str, doc: Any, heads: Any, as_json: bool) -> None:
    from prixfixe.knowledge import catalog, sections

    uri = catalog.document_uri(collection, doc.id)
    found = sections.sections(heads) if heads is not None else []
    if as_json:
        echo_json({**asdict(doc), "uri": uri, "sections": [asdict(s) for s in found]})
        return
    out = console()
    out.print(f"[bold]{escape(doc.title)}[/]  [dim]{escape(uri)}[/]")
    out.print(
        f"{escape(doc.path)}: {doc.format}, {doc.bytes} bytes, {doc.chunks} chunks, "
        f"sha256 {doc.hash[:12]}"
    )
    for section in found:
        indent = "  " * max(section.level - 1, 0)
        label = section.heading or section.start or "(untitled)"
        out.print(f"  [dim]{section.seq:>3}[/] {indent}{escape(label)} [dim]{section.bytes} B[/]")


@kb.command("search")
@click.argument("query")
@click.option("--collection", help="Search only this collection.")
@click.option("--limit", type=click.IntRange(1, 100), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
@friendly
def kb_search(query: str, collection: str | None, limit: int, as_json: bool) -> None:
    """Search the chunks of every collection (or one) for QUERY, best first: by its words
    (BM25), fused with dense embeddings when [search] knowledge_semantic is on."""
    from prixfixe.knowledge import catalog
    from prixfixe.knowledge.search import find

    app = build_app()
    try:
        slice_ = _slice(app)
        if collection is not None:
            catalog.collection_id(slice_, collection)  # unknown: an error naming the known ones
        found = find(
            slice_, query, collection=collection, limit=limit, semantic=app.semantic_search
        )
    finally:
        app.close_store()
    hits = found.hits
    if as_json:
        echo_json([{**asdict(h), "uri": h.uri, "mode": found.mode} for h in hits])
        return
    out = console()
    if found.note:
        console(stderr=True).print(f"[yellow]note:[/] {escape(found.note)}")
    if not hits:
        where = f"collection {collection!r}" if collection else "the knowledge base"
        click.echo(f"No hits for {query!r} in {where}: try other or fewer words.")
    for hit in hits:
        where = f"{hit.path} > {hit.heading}" if hit.heading else hit.path
        out.print(f"[bold]{escape(where)}[/]  [dim]{escape(hit.uri)}[/]")
        out.print(f"  {escape(' '.join(hit.snippet.split()))}")


@kb.command("remove")
@click.argument("collection")
@click.argument("document", required=False)
@click.option("--yes", is_flag=True, help="Remove without asking (needed when not on a terminal).")
@click.option("--json", "as_json", is_flag=True, help="Print what was removed as JSON.")
@friendly
def kb_remove(collection: str, document: str | None, yes: bool, as_json: bool) -> None:
    """Remove COLLECTION with all its documents, or one DOCUMENT of it (an id or a path)."""
    from prixfixe.knowledge import catalog
    from prixfixe.knowledge.ingest import remove_collection, remove_document

    app = build_app()
    try:
        slice_ = _slice(app)
        if document is None:
            count = len(catalog.documents(slice_, collection))
            what = f"collection {collection!r} and its {count} documents"
        else:
            doc = _document(slice_, collection, document)
            what = f"document {doc.path!r} (id {doc.id}) of collection {collection!r}"
        if not yes:
            if not sys.stdin.isatty():
                raise KnowledgeError(
                    f"not removing {what}: there is no terminal to confirm on; "
                    "add --yes to remove without asking"
                )
            if not click.confirm(f"Remove {what}?", default=False, err=True):
                raise KnowledgeError(f"nothing removed: {what} stays")
        if document is None:
            result = remove_collection(slice_, collection)
        else:
            result = remove_document(slice_, collection, doc.id)
    finally:
        app.close_store()
    if as_json:
        echo_json(asdict(result))
        return
    console().print(f"removed {escape(what)}")


@kb.command("reindex")
@click.option("--collection", help="Only this collection (default: every one).")
@click.option(
    "--grant",
    is_flag=True,
    help="Grant the folders the documents were read from for this run only (else they must "
    "be in [leash] fs_read).",
)
@click.option(
    "--embeddings",
    is_flag=True,
    help="Instead, drop every stored vector and embed every chunk again with the current model "
    "(after a model change; needs wordllama).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@friendly
def kb_reindex(collection: str | None, grant: bool, embeddings: bool, as_json: bool) -> None:
    """Re-chunk every document, reading each again from its folder through the file gate,
    rewriting its chunks even when its content is unchanged (after a chunking change); with
    --embeddings, rebuild the vectors hybrid search uses instead."""
    from prixfixe.knowledge import catalog
    from prixfixe.knowledge.ingest import reindex
    from prixfixe.leash.fs import FsGate, FsGrant

    if embeddings:
        if collection or grant:
            raise KnowledgeError(
                "--embeddings rebuilds every collection's vectors from the stored chunks: it "
                "takes neither --collection nor --grant"
            )
        _reembed(as_json)
        return
    app = build_app()
    results = []
    try:
        slice_ = _slice(app)
        names = [collection] if collection else catalog.collection_names(slice_)
        gate: FsGate = app.routines.fs
        if grant:
            # Folders an earlier `kb add` or sync read (clients' documents have none).
            roots = [
                Path(row[0])
                for row in slice_.query(
                    "SELECT DISTINCT root FROM {prefix}documents WHERE root != ''"
                )
            ]
            current = gate.grant
            source = f"{current.source}; --grant (the documents' folders)"
            gate = FsGate(FsGrant((*current.read, *roots), current.write, source))
        for name in names:
            with _progress(f"reindexing {name}", not as_json) as progress:
                results.append(reindex(slice_, gate, name, progress=progress))
        _embed(app, any(result.changed for result in results), as_json)
    finally:
        app.close_store()
    if as_json:
        echo_json([asdict(result) for result in results])
        return
    out = console()
    for result in results:
        out.print(
            f"{escape(result.collection)}: {len(result.updated)} re-chunked, "
            f"{len(result.skipped)} skipped"
        )
        for skipped in result.skipped:
            out.print(f"  [yellow]skipped[/] {escape(skipped.path)}: {escape(skipped.reason)}")


def _embed(app: Any, changed: bool, as_json: bool) -> None:
    """With `[search] knowledge_semantic` on, embed the chunks a write added, so hybrid search sees
    them; never fails the write (without the extra it says so and goes on)."""
    if not changed:
        return
    from prixfixe.knowledge import vectors

    written, why = vectors.refresh(_slice(app), semantic=app.semantic_search)
    if as_json:
        return
    if why:
        console(stderr=True).print(f"[yellow]note:[/] chunks not embedded: {escape(why)}")
    elif written:
        console(stderr=True).print(f"embedded {written} chunks for hybrid search")


def _reembed(as_json: bool) -> None:
    from prixfixe.knowledge import vectors

    embedder, why = vectors.load_embedder()
    if embedder is None:
        raise KnowledgeError(f"cannot rebuild the vectors: {why}")
    app = build_app()
    try:
        written = vectors.reembed(_slice(app), embedder)
    finally:
        app.close_store()
    if as_json:
        echo_json({"embedded": written, "model": embedder.model_id})
        return
    console().print(f"embedded {written} chunks with {escape(embedder.model_id)}")
