"""`prixfixe tools search|describe|list|call`: the discovery trio and the listing, for people;
`call` runs one tool through the dispatch `tool_invoke` takes (`App.call_tool`)."""

from __future__ import annotations

import json
from typing import Any

import click

from prixfixe.cli._common import build_app, console, echo_json, escape, friendly, yes


@click.group()
def tools() -> None:
    """Find, read and list tools, as an agent would through the discovery trio."""


@tools.command("search")
@click.argument("query")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(1, 50))
@click.option("--facet", default=None, help="Only search this facet.")
@click.option("--json", "as_json", is_flag=True, help="Print the structured result as JSON.")
@friendly
def tools_search(query: str, limit: int, facet: str | None, as_json: bool) -> None:
    """Rank tools for QUERY (what you want to do, in a few words)."""
    from rich.table import Table

    from prixfixe.tools.discovery import search_data

    data = search_data(build_app(), query, limit=limit, facet=facet).model_dump(mode="json")
    if as_json:
        echo_json(data)
        return
    out = console()
    if not data["results"]:
        out.print(f"No tool matches {escape(query)!r}.")
        return
    title = (
        "Results" if data["good_match"] else "[yellow]No good match[/] — nearest tools, all weak"
    )
    table = Table("#", "tool", "facet", "mutates", "score", "summary", title=title)
    for i, r in enumerate(data["results"], 1):
        name = f"[dim]{r['name']}[/]" if r["weak"] else f"[bold]{r['name']}[/]"
        table.add_row(
            str(i), name, r["facet"], yes(r["mutates"]), f"{r['score']:.2f}", escape(r["summary"])
        )
    out.print(table)


@tools.command("describe")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the structured result as JSON.")
@friendly
def tools_describe(name: str, as_json: bool) -> None:
    """Show tool NAME in full: description, schemas, facet, usage."""
    from prixfixe.curation.curator import entry_lines
    from prixfixe.tools.discovery import describe_data

    described = describe_data(build_app(), name)
    data = described.model_dump(mode="json")
    if as_json:
        echo_json(data)
        return
    out = console()
    kind = "[red]mutates[/]" if data["mutates"] else "[green]read-only[/]"
    listed = "listed" if data["listed"] else "not listed (reach it with tool_invoke)"
    out.print(
        f"[bold]{data['name']}[/] — {escape(data['title'])}  [{data['facet']}] {kind}, {listed}"
    )
    out.print(escape(data["description"]))
    if data["usage"]:
        out.print(f"[bold]Usage[/]: {escape(data['usage'])}")
    # The arguments as a model reads them (curated), and the call to copy; the exact schemas
    # follow for whoever writes code against them (and --json has everything).
    arguments = entry_lines(described.parameters, "schema")
    out.print("[bold]Arguments[/]" + ("" if arguments else ": none"))
    for line in arguments:
        out.print(escape(line))
    out.print(f"[bold]Call[/]: {escape(data['example_call'])}")
    out.print("[bold]Input schema[/]")
    _schema(out, data["input_schema"])
    if data["output_schema"] is not None:
        out.print("[bold]Output schema[/]")
        _schema(out, data["output_schema"])


@tools.command("list")
@click.option("--all", "show_all", is_flag=True, help="Every reachable tool, not only listed ones.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@friendly
def tools_list(show_all: bool, as_json: bool) -> None:
    """The tools a client's tools/list shows (or, with --all, every reachable tool)."""
    from rich.table import Table

    app = build_app()
    entries = (
        [e for e in app.registry if app.exposure.reachable(e.tool.facet)]
        if show_all
        else app.listed_tools()
    )
    rows = [
        {
            "name": e.name,
            "facet": e.tool.facet,
            "mutates": e.tool.mutates,
            "summary": e.tool.summary,
            "listed": app.exposure.listed(e.tool.facet),
        }
        for e in entries
    ]
    if as_json:
        echo_json(rows)
        return
    table = Table("tool", "facet", "mutates", "listed", "summary")
    for r in rows:
        table.add_row(
            r["name"], r["facet"], yes(r["mutates"]), yes(r["listed"]), escape(r["summary"])
        )
    console().print(table)


@tools.command("call")
@click.argument("name")
@click.option(
    "--arg",
    "pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="One argument; repeat. VALUE is read as JSON when it parses (3, true, [1,2]), else as "
    "text; always text for a string argument.",
)
@click.option("--json-args", metavar="JSON", help="The arguments as a JSON object.")
@click.option("--json", "as_json", is_flag=True, help="Print the structured result as JSON.")
@friendly
def tools_call(name: str, pairs: tuple[str, ...], json_args: str | None, as_json: bool) -> None:
    """Call tool NAME, as an agent's tool_invoke does, and print its result."""
    import anyio

    from prixfixe.errors import PrixfixeError

    arguments: dict[str, Any] = {}
    if json_args is not None:
        try:
            arguments = json.loads(json_args)
        except ValueError as exc:
            raise click.BadParameter(f"not valid JSON: {exc}", param_hint="--json-args") from None
        if not isinstance(arguments, dict):
            raise click.BadParameter("expected a JSON object", param_hint="--json-args")
    app = build_app()
    try:
        arguments.update(_arg_values(app, name, pairs))

        async def call() -> Any:
            async with app.serving(folders=False):  # a mounted server's tool needs its server
                return await app.call_tool(name, arguments)

        result = anyio.run(call)
    finally:
        app.close_store()
    if getattr(result, "is_error", None) is None:  # input_required: no client to ask
        raise PrixfixeError(
            f"tool {name!r} asks for input, which the command line cannot give; "
            "pass every argument it needs"
        )
    texts = [item.text for item in result.content if getattr(item, "type", "") == "text"]
    if result.is_error:
        raise PrixfixeError("\n".join(texts) or f"tool {name!r} failed")
    if as_json:
        if result.structured_content is not None:
            echo_json(result.structured_content)
        else:
            echo_json(result.model_dump(mode="json", by_alias=True, exclude_none=True))
        return
    for item in result.content:
        if item.type == "text":
            click.echo(item.text)
        else:
            mime = getattr(item, "mime_type", None) or getattr(item, "uri", None) or ""
            click.echo(f"({item.type} content{': ' + mime if mime else ''}; see --json)")


def _arg_values(app: Any, name: str, pairs: tuple[str, ...]) -> dict[str, Any]:
    """`--arg k=v` as the tool's input schema reads it: text for a string property, else JSON
    when it parses, else text (`--arg due=friday`)."""
    entry = app.registry.tools.get(name)  # unknown: the call names it, with suggestions
    props = entry.input_schema.get("properties", {}) if entry is not None else {}
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--arg")
        prop = props.get(key)
        if isinstance(prop, dict) and prop.get("type") == "string":
            out[key] = raw
            continue
        try:
            out[key] = json.loads(raw)
        except ValueError:
            out[key] = raw
    return out


def _schema(out: Any, schema: dict[str, Any]) -> None:
    """An exact schema, whole: on a terminal highlighted and wrapped at its width (never cut),
    in a pipe as plain JSON, so what is copied or piped parses."""
    from rich.syntax import Syntax

    text = json.dumps(schema, indent=2, ensure_ascii=False)
    if out.is_terminal:
        out.print(Syntax(text, "json", word_wrap=True))
    else:
        click.echo(text)
