"""The `prixfixe` command, for people: tables and colour on a terminal, plain text in a pipe,
JSON with `--json`, and a one-line message instead of a traceback when something is wrong."""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Callable
from functools import wraps
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

import click

from prixfixe import __version__
from prixfixe.errors import ConfigError, PrixfixeError
from prixfixe.store import STORE_FILENAME

F = TypeVar("F", bound=Callable[..., Any])


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    # In a pipe rich drops colour; a wide virtual width keeps table cells from being cut.
    return Console(stderr=stderr, width=None if sys.stdout.isatty() else 200, highlight=False)


def _fail(message: str, code: int) -> None:
    # Escaped: messages name config sections such as [http], which are not markup.
    from prixfixe.leash.redact import redact

    shown = _escape(redact(message))
    _console(stderr=True).print(f"[bold red]prixfixe: error:[/] {shown}", markup=True)
    sys.exit(code)


def friendly(func: F) -> F:
    """Turn prixfixe errors into one clear line on stderr and an exit code."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ConfigError as exc:
            _fail(exc.message, 2)
        except PrixfixeError as exc:
            _fail(exc.message, 1)

    return wrapper  # type: ignore[return-value]


def _app(facet: str | None = None) -> Any:
    from prixfixe.app import App

    return App.build(facet=facet)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="prixfixe")
def cli() -> None:
    """prixfixe: an MCP server whose cost to an agent's context stays flat."""
    import logging

    # stdout may be the MCP channel (serve), so every diagnostic goes to stderr.
    logging.basicConfig(format="prixfixe: %(levelname)s: %(message)s", level=logging.WARNING)
    from prixfixe.leash.redact import install_logging_redaction

    install_logging_redaction()


def _load_plugin_modules(names: tuple[str, ...]) -> list[object]:
    """Import `--plugin` modules (dotted names on sys.path) to register beside the others."""
    import importlib

    modules: list[object] = []
    for name in names:
        try:
            modules.append(importlib.import_module(name))
        except Exception as exc:  # noqa: BLE001 - any import failure is the user's to see, briefly
            reason = f"{type(exc).__name__}: {exc}"
            raise ConfigError(f"--plugin {name}: cannot import it: {reason}") from None
    return modules


@cli.command()
@click.option("--facet", metavar="NAME", help="Serve only this facet (a narrow server).")
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option("--host", default=None, help="HTTP: address to bind [default: 127.0.0.1].")
@click.option(
    "--port", default=None, type=click.IntRange(0, 65535), help="HTTP: port [default: 8765]."
)
@click.option("--stateless", is_flag=True, default=None, help="HTTP: no sessions.")
@click.option("--token-env", metavar="NAME", help="HTTP: bearer token from this env variable.")
@click.option("--token-file", metavar="PATH", help="HTTP: bearer token from this file.")
@click.option(
    "--plugin",
    "plugin_modules",
    multiple=True,
    metavar="MODULE",
    help="Also load this plugin module (importable dotted name); repeat for more.",
)
@friendly
def serve(
    facet: str | None,
    use_http: bool,
    host: str | None,
    port: int | None,
    stateless: bool | None,
    token_env: str | None,
    token_file: str | None,
    plugin_modules: tuple[str, ...],
) -> None:
    """Serve MCP over stdio (for a client to launch), or over HTTP with --http."""
    import os

    import anyio

    from prixfixe.app import App

    http_only = {"--host": host, "--port": port, "--stateless": stateless}
    http_only |= {"--token-env": token_env, "--token-file": token_file}
    if not use_http and any(v is not None for v in http_only.values()):
        used = ", ".join(k for k, v in http_only.items() if v is not None)
        raise click.UsageError(f"{used} only apply with --http")
    app = App.build(facet=facet, extra_plugins=_load_plugin_modules(plugin_modules))
    if not use_http:
        from prixfixe.mcp.server import serve_stdio

        anyio.run(serve_stdio, app)
        return
    from prixfixe.mcp.http.serve import serve_http
    from prixfixe.mcp.http.settings import resolve_settings

    settings = resolve_settings(
        app.config.model.http,
        os.environ,
        host=host,
        port=port,
        stateless=stateless,
        token_env=token_env,
        token_file=token_file,
    )
    anyio.run(serve_http, app, settings)


def _dist_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def doctor_report(app: Any) -> dict[str, Any]:
    from prixfixe.app import DEFAULT_TOOL_BUDGET
    from prixfixe.tokens import token_counts

    listing = app.list_tools_json()
    facets = app.registry.facets()
    return {
        "versions": {
            "prixfixe": __version__,
            "python": platform.python_version(),
            "mcp": _dist_version("mcp"),
            "platform": platform.platform(terse=True),
        },
        "config": {
            "file": str(app.config.path) if app.config.path else None,
            "searched": [{"path": str(p), "exists": p.is_file()} for p in app.config.searched],
        },
        "facets": [
            {
                "name": name,
                "tools": len(entries),
                "listed": app.exposure.listed(name),
                "denied": name in app.exposure.deny,
            }
            for name, entries in facets.items()
        ],
        "exposure": {
            "expose": list(app.exposure.expose),
            "expose_source": app.exposure.expose_source,
            "deny": list(app.exposure.deny),
            "deny_source": app.exposure.deny_source,
        },
        "plugins": [{"name": p.name, "origin": p.origin, "status": p.status} for p in app.plugins],
        # Where the store is, without opening it: doctor must not create or migrate it.
        "store": {
            "path": str(app.home / STORE_FILENAME),
            "exists": (app.home / STORE_FILENAME).is_file(),
            "kinds": list(app.registry.kinds),
        },
        "routines": {
            "names": list(app.routines.routines),
            "step_types": list(app.registry.step_types),
            "exec_grant": sorted(app.routines.gate.grant.programs),
            "exec_grant_source": app.routines.gate.grant.source,
        },
        "leash": app.routines.leash.summary(),
        "tools_list": {
            "tools": len(app.listed_tools()),
            "budget": DEFAULT_TOOL_BUDGET,
            "bytes": len(listing.encode()),
            "tokens": token_counts(listing),
        },
        "registered_tools": len(app.registry),
        "resources": {
            "resources": len(app.registry.resources),
            "templates": len(app.registry.templates),
            "capability_index_summary_tokens": token_counts(app.capability_index.text("summary")),
        },
    }


def _print_leash(out: Any, leash: dict[str, Any]) -> None:
    """The effective leash, each part with where it came from (docs/security.md)."""
    out.print("\n[bold]Leash[/] (what may run, be read, written and reached):")
    ex = leash["exec"]
    out.print(f"  exec ({_escape(ex['source'])}):")
    for line in ex["command_lines"] or ["nothing"]:
        out.print(f"    {_escape(line)}")
    for line in ex["credential_commands"]:
        out.print(f"    {_escape(line)}  [dim](credential resolver only)[/]")
    for key in ("fs_read", "fs_write"):
        part = leash[key]
        roots = ", ".join(part["roots"]) or "nothing"
        out.print(f"  {key}: {_escape(roots)} ({_escape(part['source'])})")
    net = leash["net"]
    out.print(f"  net: {_escape(', '.join(net['hosts']) or 'nothing')} ({_escape(net['source'])})")
    for key in ("max_calls", "valid_for_generation"):
        part = leash[key]
        shown = "no limit" if part["value"] is None else str(part["value"])
        out.print(f"  {key}: {shown} ({_escape(part['source'])})")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@friendly
def doctor(as_json: bool) -> None:
    """Check the installation: versions, config, facets, plugins, tools/list cost."""
    from rich.table import Table

    report = doctor_report(_app())
    problems = [p for p in report["plugins"] if p["status"].startswith("failed")]
    over = report["tools_list"]["tools"] > report["tools_list"]["budget"]
    if as_json:
        click.echo(json.dumps(report, indent=2))
        sys.exit(1 if problems or over else 0)
    out = _console()
    v = report["versions"]
    out.print(
        f"[bold]prixfixe {v['prixfixe']}[/]  Python {v['python']}  mcp {v['mcp']}  {v['platform']}"
    )
    cfg = report["config"]
    out.print(f"\n[bold]Config[/]: {_escape(cfg['file'] or 'none found, using built-in defaults')}")
    for item in cfg["searched"]:
        mark = "[green]found[/]" if item["exists"] else "[dim]absent[/]"
        out.print(f"  {mark}  {_escape(item['path'])}")
    exp = report["exposure"]
    out.print(
        f"\n[bold]Facets[/]: listed {', '.join(exp['expose'])} "
        f"(from {_escape(exp['expose_source'])})"
    )
    if exp["deny"]:
        out.print(f"  denied {', '.join(exp['deny'])} (from {_escape(exp['deny_source'])})")
    table = Table("facet", "tools", "listed", "denied")
    for f in report["facets"]:
        table.add_row(f["name"], str(f["tools"]), _yes(f["listed"]), _yes(f["denied"]))
    out.print(table)
    plugins = Table("plugin", "from", "status", title="Plugins")
    for p in report["plugins"]:
        colour = (
            "green"
            if p["status"] == "loaded"
            else ("red" if p["status"].startswith("failed") else "yellow")
        )
        plugins.add_row(
            _escape(p["name"]), _escape(p["origin"]), f"[{colour}]{_escape(p['status'])}[/]"
        )
    out.print(plugins)
    st = report["store"]
    state = "exists" if st["exists"] else "not created yet (made on first write)"
    out.print(f"\n[bold]Store[/]: {_escape(st['path'])} ({state}); kinds: {', '.join(st['kinds'])}")
    rt = report["routines"]
    grant = ", ".join(rt["exec_grant"]) or "nothing"
    out.print(
        f"\n[bold]Routines[/]: {', '.join(rt['names'])}; {len(rt['step_types'])} step types; "
        f"exec grant: {_escape(grant)} ({_escape(rt['exec_grant_source'])})"
    )
    _print_leash(out, report["leash"])
    tl = report["tools_list"]
    colour = "red" if over else "green"
    out.print(
        f"\n[bold]Default tools/list[/]: [{colour}]{tl['tools']} tools[/] "
        f"(budget {tl['budget']}) of {report['registered_tools']} registered; "
        f"{tl['bytes']} bytes, {tl['tokens']['cl100k_base']} tokens (cl100k_base), "
        f"{tl['tokens']['o200k_base']} (o200k_base)"
    )
    res = report["resources"]
    out.print(
        f"[bold]Resources[/]: {res['resources']} resources, {res['templates']} templates; "
        "capability index summary "
        f"{res['capability_index_summary_tokens']['cl100k_base']} tokens (cl100k_base)"
    )
    if problems or over:
        sys.exit(1)


def _yes(flag: bool) -> str:
    return "[green]yes[/]" if flag else "[dim]no[/]"


@cli.group()
def tools() -> None:
    """Find, read and list tools, as an agent would through the discovery trio."""


def _call(app: Any, name: str, arguments: dict[str, Any]) -> Any:
    import anyio

    result = anyio.run(app.call_tool, name, arguments)
    if result.is_error:
        raise PrixfixeError(result.content[0].text)
    return result


@tools.command("search")
@click.argument("query")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(1, 50))
@click.option("--facet", default=None, help="Only search this facet.")
@click.option("--json", "as_json", is_flag=True, help="Print the structured result as JSON.")
@friendly
def tools_search(query: str, limit: int, facet: str | None, as_json: bool) -> None:
    """Rank tools for QUERY (what you want to do, in a few words)."""
    from rich.table import Table

    args: dict[str, Any] = {"query": query, "limit": limit}
    if facet:
        args["facet"] = facet
    data = _call(_app(), "tool_search", args).structured_content
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    out = _console()
    if not data["results"]:
        out.print(f"No tool matches {_escape(query)!r}.")
        return
    title = (
        "Results" if data["good_match"] else "[yellow]No good match[/] — nearest tools, all weak"
    )
    table = Table("#", "tool", "facet", "mutates", "score", "summary", title=title)
    for i, r in enumerate(data["results"], 1):
        name = f"[dim]{r['name']}[/]" if r["weak"] else f"[bold]{r['name']}[/]"
        table.add_row(
            str(i), name, r["facet"], _yes(r["mutates"]), f"{r['score']:.2f}", _escape(r["summary"])
        )
    out.print(table)


@tools.command("describe")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the structured result as JSON.")
@friendly
def tools_describe(name: str, as_json: bool) -> None:
    """Show tool NAME in full: description, schemas, facet, usage."""
    from rich.syntax import Syntax

    data = _call(_app(), "tool_describe", {"name": name}).structured_content
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    out = _console()
    kind = "[red]mutates[/]" if data["mutates"] else "[green]read-only[/]"
    listed = "listed" if data["listed"] else "not listed (reach it with tool_invoke)"
    out.print(
        f"[bold]{data['name']}[/] — {_escape(data['title'])}  [{data['facet']}] {kind}, {listed}"
    )
    out.print(_escape(data["description"]))
    if data["usage"]:
        out.print(f"[bold]Usage[/]: {_escape(data['usage'])}")
    out.print("[bold]Input schema[/]")
    out.print(Syntax(json.dumps(data["input_schema"], indent=2), "json"))
    if data["output_schema"] is not None:
        out.print("[bold]Output schema[/]")
        out.print(Syntax(json.dumps(data["output_schema"], indent=2), "json"))


@tools.command("list")
@click.option("--all", "show_all", is_flag=True, help="Every reachable tool, not only listed ones.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@friendly
def tools_list(show_all: bool, as_json: bool) -> None:
    """The tools a client's tools/list shows (or, with --all, every reachable tool)."""
    from rich.table import Table

    app = _app()
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
        click.echo(json.dumps(rows, indent=2))
        return
    table = Table("tool", "facet", "mutates", "listed", "summary")
    for r in rows:
        table.add_row(
            r["name"], r["facet"], _yes(r["mutates"]), _yes(r["listed"]), _escape(r["summary"])
        )
    _console().print(table)


@cli.group()
def store() -> None:
    """Records in the store (reminders, deadlines, ...), as the store tools see them."""


def _store_call(name: str, arguments: dict[str, Any]) -> Any:
    """Run one store tool through the same path an agent's call takes, then close the store."""
    app = _app()
    try:
        return _call(app, name, arguments).structured_content
    finally:
        app.close_store()


@store.command("kinds")
@click.argument("kind", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print kinds and schemas as JSON.")
@friendly
def store_kinds(kind: str | None, as_json: bool) -> None:
    """List record kinds (or show KIND) with fields, version and owner."""
    from rich.table import Table

    data = _store_call("store_kinds", {"kind": kind} if kind else {})
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    table = Table("kind", "version", "fields", "indexed", "owner", "description")
    for k in data["kinds"]:
        props = k["schema"]["properties"]
        required = set(k["schema"].get("required", []))
        fields = ", ".join(
            f"{n}{'' if n in required else '?'}: {_type(p)}" for n, p in props.items()
        )
        table.add_row(
            k["name"],
            str(k["version"]),
            _escape(fields),
            ", ".join(k["indexed"]),
            _escape(k["owner"]),
            _escape(k["description"]),
        )
    _console().print(table)


def _type(prop: dict[str, Any]) -> str:
    if "anyOf" in prop:
        return "|".join(_type(p) for p in prop["anyOf"] if p.get("type") != "null")
    if "enum" in prop:
        return "|".join(str(v) for v in prop["enum"] if v is not None)
    kind = prop.get("type", "any")
    text = "|".join(t for t in kind if t != "null") if isinstance(kind, list) else str(kind)
    return f"{text} ({prop['format']})" if "format" in prop else text


def _field_values(app: Any, kind: str, pairs: tuple[str, ...]) -> dict[str, Any]:
    """`--field k=v`: text fields take v as it is; other fields read v as JSON when it parses
    (numbers, true, null, ["mon","tue"]), else as text (dates: 2026-12-01)."""
    from prixfixe.store.fields import field_types

    declared = app.registry.kinds.get(kind)
    types_ = field_types(declared.model) if declared is not None else {}
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--field")
        if types_.get(name) == "text":
            out[name] = raw
            continue
        try:
            out[name] = json.loads(raw)
        except ValueError:
            out[name] = raw
    return out


@store.command("put")
@click.argument("kind")
@click.option(
    "--json",
    "record_json",
    metavar="JSON",
    help="The record as a JSON object (or an array: all put in one transaction).",
)
@click.option("--field", "fields", multiple=True, metavar="KEY=VALUE", help="One field; repeat.")
@click.option("--id", "record_id", type=int, default=None, help="Update this record.")
@friendly
def store_put(
    kind: str, record_json: str | None, fields: tuple[str, ...], record_id: int | None
) -> None:
    """Create a KIND record (or update one with --id) from --json and/or --field."""
    app = _app()
    try:
        record: Any = {}
        if record_json is not None:
            try:
                record = json.loads(record_json)
            except ValueError as exc:
                raise click.BadParameter(f"not valid JSON: {exc}", param_hint="--json") from None
        extra = _field_values(app, kind, fields)
        if isinstance(record, list):
            if extra or record_id is not None:
                raise click.UsageError("a JSON array cannot be combined with --field or --id")
            batch = app.store.put_many(kind, record)
            span = f"ids {batch.ids[0]}..{batch.ids[-1]}, " if batch.ids else ""
            click.echo(
                f"Created {len(batch.ids)} {kind} records ({span}"
                f"store generation {batch.generation})."
            )
            return
        if not isinstance(record, dict):
            raise click.BadParameter("expected a JSON object or array", param_hint="--json")
        if not record and not extra:
            raise click.UsageError("give the record with --json or --field")
        arguments: dict[str, Any] = {"kind": kind, "record": {**record, **extra}}
        if record_id is not None:
            arguments["id"] = record_id
        result = _call(app, "store_put", arguments)
        click.echo(result.content[0].text)
    finally:
        app.close_store()


@store.command("query")
@click.argument("kind")
@click.option("--where", metavar="JSON", help='A filter, e.g. \'{"due": {"<=": "2026-12-01"}}\'.')
@click.option("--order-by", metavar="FIELD", help="Sort by FIELD; -FIELD for descending.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 500))
@click.option("--cursor", help="Continue after a previous page (its next_cursor).")
@click.option("--include-closed", is_flag=True, help="Also show closed records.")
@click.option("--json", "as_json", is_flag=True, help="Print the structured result as JSON.")
@friendly
def store_query(
    kind: str,
    where: str | None,
    order_by: str | None,
    limit: int,
    cursor: str | None,
    include_closed: bool,
    as_json: bool,
) -> None:
    """List KIND records, filtered and sorted, a page at a time."""
    from rich.table import Table

    arguments: dict[str, Any] = {"kind": kind, "limit": limit, "include_closed": include_closed}
    if where is not None:
        try:
            arguments["where"] = json.loads(where)
        except ValueError as exc:
            raise click.BadParameter(f"not valid JSON: {exc}", param_hint="--where") from None
    if order_by:
        arguments["order_by"] = order_by
    if cursor:
        arguments["cursor"] = cursor
    data = _store_call("store_query", arguments)
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    names: list[str] = []
    for r in data["records"]:
        names += [n for n in r["record"] if n not in names]
    table = Table("id", *names, "closed", title=f"{kind} (store generation {data['generation']})")
    for r in data["records"]:
        cells = [_cell(r["record"].get(n)) for n in names]
        closed = "" if not r["closed"] else f"yes{': ' + r['reason'] if r['reason'] else ''}"
        table.add_row(str(r["id"]), *cells, _escape(closed))
    out = _console()
    out.print(table)
    if data["next_cursor"]:
        out.print(f"More: --cursor {data['next_cursor']}", markup=False)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return _escape(value if isinstance(value, str) else json.dumps(value))


@store.command("close")
@click.argument("kind")
@click.argument("record_id", metavar="ID", type=int)
@click.option("--reason", help="Why (done, cancelled, ...).")
@friendly
def store_close(kind: str, record_id: int, reason: str | None) -> None:
    """Close KIND record ID: kept with its history, left out of queries."""
    arguments: dict[str, Any] = {"kind": kind, "id": record_id}
    if reason:
        arguments["reason"] = reason
    app = _app()
    try:
        click.echo(_call(app, "store_close", arguments).content[0].text)
    finally:
        app.close_store()


# -- resources ------------------------------------------------------------------------------


@cli.group()
def resources() -> None:
    """Browse and read the MCP resources an agent sees."""


@resources.command("list")
@click.option("--templates", is_flag=True, help="List the resource templates instead.")
@click.option("--json", "as_json", is_flag=True, help="Print the wire entries as JSON.")
@friendly
def resources_list(templates: bool, as_json: bool) -> None:
    """Every listed resource (all pages), or with --templates every template."""
    from rich.table import Table

    service = _app().resources
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        items: list[Any]
        if templates:
            t_page = service.list_templates(cursor)
            items, cursor = t_page.resource_templates, t_page.next_cursor
        else:
            r_page = service.list_resources(cursor)
            items, cursor = r_page.resources, r_page.next_cursor
        entries += [i.model_dump(mode="json", by_alias=True, exclude_none=True) for i in items]
        if cursor is None:
            break
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return
    key = "uriTemplate" if templates else "uri"
    table = Table(key, "name", "mime type", "description")
    for e in entries:
        table.add_row(
            _escape(e[key]),
            _escape(e["name"]),
            e.get("mimeType", ""),
            _escape(e.get("description", "")),
        )
    _console().print(table)


@resources.command("read")
@click.argument("uri")
@click.option("--output", type=click.Path(dir_okay=False), help="Write the contents to a file.")
@friendly
def resources_read(uri: str, output: str | None) -> None:
    """Print the contents of URI (binary contents need --output)."""
    import base64

    import anyio
    import mcp_types as types

    app = _app()
    try:
        result = anyio.run(app.resources.read, uri)
    finally:
        app.close_store()
    chunks: list[bytes] = []
    for item in result.contents:
        if isinstance(item, types.BlobResourceContents):
            if output is None:
                _fail(f"{uri} is binary ({item.mime_type}); write it with --output PATH", 1)
            chunks.append(base64.b64decode(item.blob))
        else:
            chunks.append(item.text.encode())
    if output is not None:
        with open(output, "wb") as f:
            f.write(b"".join(chunks))
        return
    click.echo(b"".join(chunks).decode(), nl=False)


# -- routines -------------------------------------------------------------------------------

FORMATS = click.Choice(["markdown", "data", "both"])


def _print_report(stored: Any, fmt: str) -> None:
    if fmt in ("markdown", "both"):
        if sys.stdout.isatty():
            from rich.markdown import Markdown

            _console().print(Markdown(stored.markdown))
        else:
            click.echo(stored.markdown, nl=False)
    if fmt in ("data", "both"):
        click.echo(json.dumps(stored.report.model_dump(mode="json"), indent=2))


def _describe_plan(app: Any, routine: Any) -> dict[str, Any]:
    gate = app.routines.gate
    batches = [[s.name for s in batch] for batch in routine.batches()]
    return {
        "routine": routine.name,
        "source": routine.source,
        "grant": sorted(gate.grant.programs),
        "grant_source": gate.grant.source,
        "batches": batches,
        "steps": [
            {
                **s.summary(),
                "credential_commands": [c.show() for c in s.credential_commands],
                "refused": [c.show() for c in s.commands if not gate.grant.allows(c)]
                + [
                    c.show()
                    for c in s.credential_commands
                    if c not in gate.grant.credential_commands
                ],
            }
            for s in routine.steps
        ],
    }


@cli.command()
@click.argument("name")
@click.option(
    "--format",
    "fmt",
    type=FORMATS,
    default="markdown",
    show_default=True,
    help="markdown for people, data (JSON) for programs, or both.",
)
@click.option("--dry-run", is_flag=True, help="Describe what would run, and run nothing.")
@friendly
def run(name: str, fmt: str, dry_run: bool) -> None:
    """Run routine NAME and print its report (kept in the store, see `prixfixe report`)."""
    import anyio

    app = _app()
    routine = app.routines.get(name)
    if dry_run:
        plan = _describe_plan(app, routine)
        if fmt == "data":
            click.echo(json.dumps(plan, indent=2))
            return
        out = _console()
        out.print(
            f"[bold]{_escape(routine.name)}[/] ({_escape(routine.source)}): would run "
            f"{len(routine.steps)} steps; nothing was run."
        )
        number = 0
        for batch in plan["batches"]:
            indent = "  "
            if len(batch) > 1:
                out.print(f"  [bold]in parallel[/] ({len(batch)} steps at once):")
                indent = "    "
            for step in (s for s in plan["steps"] if s["name"] in batch):
                number += 1
                lines = step["command_lines"]
                out.print(
                    f"{indent}{number}. [bold]{_escape(step['name'])}[/] ({step['type']}): "
                    f"timeout {step['timeout']:g} s; "
                    + ("may start:" if lines else "starts no program")
                )
                for line in lines:
                    mark = " [red](refused)[/]" if line in step["refused"] else ""
                    out.print(f"{indent}   $ {_escape(line)}{mark}")
                for line in step["credential_commands"]:
                    mark = " [red](refused)[/]" if line in step["refused"] else ""
                    out.print(f"{indent}   $ {_escape(line)}  [dim](credential){mark}[/]")
                if step["params"]:
                    out.print(f"{indent}   params: {_escape(json.dumps(step['params']))}")
                for var, where in step["secrets"].items():
                    out.print(
                        f"{indent}   secret {var} from {_escape(where)} (resolved when the "
                        "step starts)"
                    )
        grant = ", ".join(plan["grant"]) or "nothing"
        out.print(f"\n[bold]Exec grant[/]: {_escape(grant)} ({_escape(plan['grant_source'])})")
        if any(os.path.basename(p) == "git" for s in routine.steps for p in s.programs):
            from prixfixe.leash.git import SCAN

            out.print(
                "Before each git command line the gate also runs its own read-only scan, "
                f"[dim]git -C {{repo}} {' '.join(SCAN)}[/], to defang the repository's "
                "config (docs/security.md)."
            )
        if routine.note:
            out.print(f"\n{_escape(routine.note)}")
        return

    progress = None
    if sys.stderr.isatty() and fmt != "data":
        err = _console(stderr=True)

        async def progress(done: int, total: int, result: Any) -> None:
            mark = "[green]ok[/]" if result.status == "ok" else "[red]failed[/]"
            err.print(f"[dim]{done}/{total}[/] {_escape(result.name)} {mark}")

    async def until_done_or_signalled() -> Any:
        # SIGTERM and SIGHUP cancel the run like Ctrl-C does, so the steps' processes (each in
        # its own process group) are killed rather than left running.
        import signal

        outcome: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
                    async for _ in signals:
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(watch)
            outcome.append(
                await app.routines.run(
                    routine,
                    lambda: app.store,
                    on_step=progress,
                    resources=app.read_resource_text,
                )
            )
            tg.cancel_scope.cancel()
        if not outcome:
            raise KeyboardInterrupt
        return outcome[0]

    try:
        stored = anyio.run(until_done_or_signalled)
    except KeyboardInterrupt:
        _fail("cancelled: the remaining steps were not run and no report was kept", 130)
    finally:
        app.close_store()
    _print_report(stored, fmt)
    if stored.report.status != "ok":
        sys.exit(1)


@cli.command("routines")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@friendly
def routines_list(as_json: bool) -> None:
    """The routines there are (configured, and the built-in morning) with their steps."""
    from rich.table import Table

    app = _app()
    rows = [
        {
            "name": r.name,
            "description": r.description,
            "source": r.source,
            "steps": [s.summary() for s in r.steps],
        }
        for r in app.routines.routines.values()
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    table = Table("routine", "steps", "from", "description")
    for r in rows:
        steps = ", ".join(f"{s['name']} ({s['type']})" for s in r["steps"])
        table.add_row(r["name"], _escape(steps), _escape(r["source"]), _escape(r["description"]))
    _console().print(table)


@cli.group()
def steps() -> None:
    """Step types: what routines are made of (not tools: they cost an agent nothing)."""


@steps.command("list")
@click.argument("type_name", metavar="[TYPE]", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print types with params and data schemas.")
@friendly
def steps_list(type_name: str | None, as_json: bool) -> None:
    """Step types with their schema version, programs and params (or TYPE in full)."""
    from rich.table import Table

    arguments = {"type": type_name} if type_name else {}
    data = _call(_app(), "steps_list", arguments).structured_content
    if as_json or type_name:
        click.echo(json.dumps(data if as_json else data["step_types"][0], indent=2))
        return
    table = Table("type", "version", "programs", "params", "plugin", "description")
    for t in data["step_types"]:
        table.add_row(
            t["type"],
            t["version"],
            _escape(", ".join(t["programs"])),
            _escape(", ".join(t["params"]["properties"])),
            _escape(t["plugin"]),
            _escape(t["description"]),
        )
    _console().print(table)


@steps.command("golden")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--write", is_flag=True, help="Write the current schemas (after a version bump).")
@click.option(
    "--plugin",
    "plugins",
    multiple=True,
    metavar="NAME",
    help="Only step types of plugins whose name starts with NAME (repeatable).",
)
@friendly
def steps_golden(directory: str, write: bool, plugins: tuple[str, ...]) -> None:
    """Check each step type's data schema against DIRECTORY/<type>.json (or --write them)."""
    from pathlib import Path

    from prixfixe.routines.contract import check_goldens, write_goldens

    types_ = [
        t for t in _app().registry.step_types.values() if not plugins or t.owner.startswith(plugins)
    ]
    if write:
        written = write_goldens(types_, Path(directory))
        click.echo(f"Wrote {len(written)} of {len(types_)} golden schemas in {directory}.")
        return
    problems = check_goldens(types_, Path(directory))
    for problem in problems:
        click.echo(problem, err=True)
    if problems:
        sys.exit(1)
    click.echo(f"All {len(types_)} step data schemas match their golden files in {directory}.")


@cli.command()
@click.argument("generation", required=False, type=int)
@click.option("--routine", default=None, help="The latest report of this routine.")
@click.option("--format", "fmt", type=FORMATS, default="markdown", show_default=True)
@friendly
def report(generation: int | None, routine: str | None, fmt: str) -> None:
    """Show a kept report: GENERATION, or the latest (of --routine)."""
    import anyio

    app = _app()
    try:
        stored = anyio.run(lambda: app.routines.report(lambda: app.store, generation, routine))
    finally:
        app.close_store()
    _print_report(stored, fmt)


def main() -> None:
    cli()
