"""`prixfixe kb add|list|search`: the knowledge base from a terminal.

`kb add PATH` reads through the same file gate as everything else: PATH must lie inside the
leash's `fs_read` roots, or be granted for this one run with `--grant`. The person at the
terminal is trusted, but the grant stays explicit: a typo (`kb add ~`) then reads nothing
instead of a whole home folder, and what a run may read is written on its command line.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from prixfixe.cli._common import build_app, console, echo_json, escape, friendly


@click.group()
def kb() -> None:
    """The knowledge base: collections of documents, searched and read as resources."""


def _slice(app: Any) -> Any:
    from prixfixe.knowledge import KNOWLEDGE_OWNER

    return app.store.slice(KNOWLEDGE_OWNER)


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
    """Ingest a markdown or text file, or a folder of them, into COLLECTION."""
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
        result = ingest(_slice(app), gate, path, collection)
    finally:
        app.close_store()
    if as_json:
        echo_json(asdict(result))
        return
    out = console()
    out.print(
        f"{escape(collection)}: {len(result.added)} added, {len(result.updated)} updated, "
        f"{len(result.unchanged)} unchanged, {len(result.removed)} removed, "
        f"{len(result.skipped)} skipped"
    )
    for skipped in result.skipped:
        out.print(f"  [yellow]skipped[/] {escape(skipped.path)}: {escape(skipped.reason)}")


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


@kb.command("search")
@click.argument("query")
@click.option("--collection", help="Search only this collection.")
@click.option("--limit", type=click.IntRange(1, 100), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
@friendly
def kb_search(query: str, collection: str | None, limit: int, as_json: bool) -> None:
    """Search the chunks of every collection (or one) for QUERY's words, best first."""
    from prixfixe.knowledge.search import search

    app = build_app()
    try:
        hits = search(_slice(app), query, collection=collection, limit=limit)
    finally:
        app.close_store()
    if as_json:
        echo_json([{**asdict(h), "uri": h.uri} for h in hits])
        return
    out = console()
    for hit in hits:
        where = f"{hit.path} > {hit.heading}" if hit.heading else hit.path
        out.print(f"[bold]{escape(where)}[/]  [dim]{escape(hit.uri)}[/]")
        out.print(f"  {escape(' '.join(hit.snippet.split()))}")
