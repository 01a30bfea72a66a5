"""`prixfixe resources list|read`: the MCP resources an agent sees, through the same service."""

from __future__ import annotations

from typing import Any

import click

from prixfixe.cli._common import build_app, console, echo_json, escape, fail, friendly


@click.group()
def resources() -> None:
    """Browse and read the MCP resources an agent sees."""


@resources.command("list")
@click.option("--templates", is_flag=True, help="List the resource templates instead.")
@click.option("--json", "as_json", is_flag=True, help="Print the wire entries as JSON.")
@friendly
def resources_list(templates: bool, as_json: bool) -> None:
    """Every listed resource (all pages), or with --templates every template."""
    import anyio
    from rich.table import Table

    service = build_app().resources
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        items: list[Any]
        if templates:
            t_page = service.list_templates(cursor)
            items, cursor = t_page.resource_templates, t_page.next_cursor
        else:
            r_page = anyio.run(service.list_resources, cursor)
            items, cursor = r_page.resources, r_page.next_cursor
        entries += [i.model_dump(mode="json", by_alias=True, exclude_none=True) for i in items]
        if cursor is None:
            break
    if as_json:
        echo_json(entries)
        return
    key = "uriTemplate" if templates else "uri"
    table = Table(key, "name", "mime type", "description")
    for e in entries:
        table.add_row(
            escape(e[key]),
            escape(e["name"]),
            e.get("mimeType", ""),
            escape(e.get("description", "")),
        )
    console().print(table)


@resources.command("read")
@click.argument("uri")
@click.option("--output", type=click.Path(dir_okay=False), help="Write the contents to a file.")
@friendly
def resources_read(uri: str, output: str | None) -> None:
    """Print the contents of URI (binary contents need --output)."""
    import base64

    import anyio
    import mcp_types as types

    app = build_app()
    try:
        result = anyio.run(app.resources.read, uri)
    finally:
        app.close_store()
    chunks: list[bytes] = []
    for item in result.contents:
        if isinstance(item, types.BlobResourceContents):
            if output is None:
                fail(f"{uri} is binary ({item.mime_type}); write it with --output PATH", 1)
            chunks.append(base64.b64decode(item.blob))
        else:
            chunks.append(item.text.encode())
    if output is not None:
        with open(output, "wb") as f:
            f.write(b"".join(chunks))
        return
    click.echo(b"".join(chunks).decode(), nl=False)
