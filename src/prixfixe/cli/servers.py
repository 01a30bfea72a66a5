"""`prixfixe servers list|test|import`: the MCP servers mounted behind the fixed menu, for
people.

`list` and `import` read configuration (and kept tool lists) only, never starting a server;
`test` starts one, through the same runtime a mount uses, and stops it. What is shown of a
credential is where it comes from (`env GH_TOKEN`), never its value; import prints its notes
on stderr, so stdout is TOML that can be redirected into a file as it is."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from prixfixe.cli._common import build_app, console, echo_json, escape, fail, friendly, yes
from prixfixe.words import plural, shorten

if TYPE_CHECKING:
    from prixfixe.config import LoadedConfig, ServerConfig
    from prixfixe.servers.importer import ImportResult
    from prixfixe.servers.probe import Probe
    from prixfixe.servers.toml_writer import MergeOutcome


#: What `runtime_status` adds to a row: shown as columns when some server has a value.
STATUS_KEYS = ("state", "tools", "read", "listed_tokens", "denied")


@click.group()
def servers() -> None:
    """MCP servers mounted behind the fixed menu: list, test, import them from another client."""


def runtime_status(loaded: LoadedConfig, env: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """What is known of each server without starting one (`servers/status.py`), by name:
    `state`, `tools` (kept on disk), `read` (when), `listed_tokens`."""
    from prixfixe.config import home_dir
    from prixfixe.core.facets import resolve_exposure
    from prixfixe.servers.status import statuses

    deny = resolve_exposure(loaded, env).deny
    return {
        s.name: {
            "state": s.state,
            "tools": s.tools,
            "read": s.read_at,
            "listed_tokens": s.listed_tokens,
            "denied": s.denied,
        }
        for s in statuses(loaded.model.servers, home_dir(env), deny)
    }


def server_row(
    name: str, config: ServerConfig, status: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """One configured server as `list` shows it: credentials by where, never by value."""
    row: dict[str, Any] = {
        "name": name,
        "transport": "stdio" if config.command is not None else "http",
        "command": config.command,
        "args": list(config.args),
        "cwd": config.cwd,
        "url": config.url,
        "enabled": config.enabled,
        "start": config.start,
        "timeout": config.timeout,
        "env": {key: ref.describe() for key, ref in config.env.items()},
        "headers": {key: ref.describe() for key, ref in config.headers.items()},
    }
    row.update({k: v for k, v in (status or {}).items() if k in STATUS_KEYS})
    return row


@servers.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@friendly
def servers_list(as_json: bool) -> None:
    """The servers configured in the config file in force (prixfixe doctor shows which)."""
    import os
    import shlex

    from rich.table import Table

    from prixfixe.config import load_config

    env = dict(os.environ)
    loaded = load_config(env)
    configured = loaded.model.servers
    status = runtime_status(loaded, env)
    rows = [server_row(name, cfg, status.get(name)) for name, cfg in configured.items()]
    if as_json:
        echo_json({"config": str(loaded.path) if loaded.path else None, "servers": rows})
        return
    out = console()
    if not rows:
        out.print(
            f"No servers configured ({escape(loaded.source)}). Add [servers.NAME] tables "
            "(prixfixe init --print shows one) or convert a client's: prixfixe servers import PATH",
            markup=False,
        )
        return
    extra = [key for key in ("state", "tools", "read") if any(r.get(key) is not None for r in rows)]
    table = Table(
        "server",
        "transport",
        "runs",
        "enabled",
        "start",
        "timeout",
        "credentials",
        *extra,
        title=f"Servers in {escape(loaded.source)}",
    )
    for r in rows:
        runs = shlex.join([r["command"], *r["args"]]) if r["transport"] == "stdio" else r["url"]
        refs = {**r["env"], **r["headers"]}
        credentials = "\n".join(f"{key} ← {where}" for key, where in refs.items())
        table.add_row(
            r["name"],
            r["transport"],
            escape(runs),
            yes(r["enabled"]),
            r["start"],
            f"{r['timeout']:g}s",
            escape(credentials) or "[dim]none[/]",
            *(escape(_cell(r.get(key))) for key in extra),
        )
    out.print(table)


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


@servers.command("test")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@friendly
def servers_test(name: str, as_json: bool) -> None:
    """Start server NAME as prixfixe would, list its tools, stop it.

    Shows its transport, how long it took to start, its tools and what they would cost a
    model listed directly; keeps its tool list on disk, so search sees it. A server that
    cannot start is one line saying why, and exit status 1."""
    import anyio

    from prixfixe.errors import UpstreamError
    from prixfixe.servers.probe import probe, refusal
    from prixfixe.servers.upstream import Launch

    app = build_app()
    configured = app.config.model.servers
    config = configured.get(name)
    if config is None:
        known = ", ".join(configured) or "none"
        raise UpstreamError(name, f"is not configured (servers: {known})")
    refused = refusal(name, config, frozenset(app.exposure.deny), app.exposure.deny_source)
    if refused is not None:
        fail(refused, 1)
    routines = app.routines
    base_dir = app.config.path.parent if app.config.path else app.cwd
    launch = Launch(gate=routines.gate, net=routines.net, env=app.env, base_dir=base_dir)
    # Progress on stderr, as it goes: stdout (and --json) holds the result alone.
    result = anyio.run(probe, name, config, launch, app.home, _progress)
    if as_json:
        echo_json(result.as_dict())
        if not result.ok:
            sys.exit(1)
        return
    if result.error is not None:
        fail(result.error, 1)
    _print_probe(result)


def _progress(text: str) -> None:
    click.echo(text, err=True)


def _print_probe(result: Probe) -> None:
    out = console()
    seconds = result.seconds or 0.0
    about = f" ({escape(result.server)})" if result.server else ""
    out.print(
        f"[bold]{escape(result.name)}[/]{about}: {result.transport}, [green]started[/] in "
        f"{seconds:.2f} s and stopped; {plural(len(result.tools), 'tool')}, "
        f"{result.listed_tokens} tokens listed directly (cl100k_base)"
    )
    offers = [
        plural(count, what)
        for count, what in (
            (result.resources, "resource"),
            (result.templates, "resource template"),
            (result.prompts, "prompt"),
        )
        if count is not None
    ]
    if offers:
        out.print("  also offers " + ", ".join(offers))
    for tool in result.tools:
        summary = shorten((tool.description or "").strip().split("\n", 1)[0], 100)
        out.print(f"  {escape(result.name)}.{escape(tool.name)}  [dim]{escape(summary)}[/]")
    out.print(f"[dim]Tool list kept in {escape(str(result.kept))}[/]")


@servers.command("import")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--write",
    is_flag=True,
    help="Merge the servers into the config file in force (or --config) instead of printing.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="With --write: the prixfixe.toml to merge into (created if missing).",
)
@click.option("--replace", is_flag=True, help="With --write: overwrite servers of the same name.")
@click.option("--name-prefix", default="", help="Put this before every imported name (e.g. cc-).")
@click.option(
    "--project",
    default=None,
    help="~/.claude.json: import the user servers and this project's only.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@friendly
def servers_import(
    path: Path,
    write: bool,
    config_file: Path | None,
    replace: bool,
    name_prefix: str,
    project: str | None,
    as_json: bool,
) -> None:
    """Convert PATH, another MCP client's configuration, to [servers.NAME] tables.

    Reads Claude Desktop's claude_desktop_config.json, Claude Code's .mcp.json and
    ~/.claude.json, Cursor's mcp.json and VS Code's .vscode/mcp.json or settings.json.
    Credentials become references ({env = "NAME"}); their values are never copied or shown."""
    from prixfixe.config import is_trusted_now, trust_config
    from prixfixe.servers.importer import import_servers
    from prixfixe.servers.toml_writer import merge_into, render_toml

    if (config_file is not None or replace) and not write:
        raise click.UsageError("--config and --replace apply with --write")
    result = import_servers(path, name_prefix=name_prefix, project=project)
    target = _write_target(config_file) if write and result.servers else None
    trusted = target is not None and is_trusted_now(target)
    outcome = merge_into(target, result, replace=replace) if target is not None else None
    if trusted and target is not None:
        # A trusted folder's file this command changed, at the person's word: still trusted.
        trust_config(target)
        click.echo(f"{target} stays trusted with this change (prixfixe trust --list).", err=True)
    if as_json:
        echo_json(_import_json(result, target, outcome))
        return
    _report(result)
    if not write:
        if result.servers:
            click.echo(render_toml(result), nl=False)
        return
    if target is None or outcome is None:
        click.echo(f"Nothing to import from {result.path}; nothing was written.")
        return
    if outcome.added:
        added = plural(len(outcome.added), "server")
        click.echo(f"Added {added} to {target}: {', '.join(outcome.added)}")
    if outcome.replaced:
        click.echo(f"Replaced in {target}: {', '.join(outcome.replaced)}")


def _write_target(config_file: Path | None) -> Path:
    """`--config`, else the config file in force, else a new one in the user config dir (where
    prixfixe finds it whatever directory a client starts it in)."""
    from prixfixe.config import CONFIG_FILENAME, load_config, user_config_dir

    if config_file is not None:
        return config_file.expanduser()
    loaded = load_config()
    return loaded.path or user_config_dir() / CONFIG_FILENAME


def _report(result: ImportResult) -> None:
    """Notes for the person, on stderr: names changed, variables to export, entries skipped."""
    click.echo(
        f"Read {result.path} ({result.layout}): {plural(len(result.servers), 'server')} imported, "
        f"{len(result.skipped)} skipped.",
        err=True,
    )
    for server in result.servers:
        for note in server.notes:
            click.echo(f"  {server.name}: {note}", err=True)
    for skipped in result.skipped:
        where = f" ({skipped.scope})" if skipped.scope else ""
        click.echo(f"  skipped {skipped.source!r}{where}: {skipped.reason}", err=True)
    for note in result.notes:
        click.echo(f"  note: {note}", err=True)
    needs = list(dict.fromkeys(v for s in result.servers for v in s.needs))
    if needs:
        click.echo(
            f"prixfixe's environment must hold: {', '.join(needs)} "
            "(or change those references to {file = ...} or {cmd = ...}).",
            err=True,
        )


def _import_json(
    result: ImportResult, target: Path | None, outcome: MergeOutcome | None
) -> dict[str, Any]:
    from prixfixe.servers.toml_writer import server_data

    return {
        "source": str(result.path),
        "layout": result.layout,
        "servers": [
            {
                "name": s.name,
                "source": s.source,
                "scope": s.scope,
                "config": server_data(s.config),
                "notes": list(s.notes),
                "needs": list(s.needs),
            }
            for s in result.servers
        ],
        "skipped": [
            {"source": s.source, "scope": s.scope, "reason": s.reason} for s in result.skipped
        ],
        "notes": list(result.notes),
        "written": str(target) if target is not None else None,
        "added": list(outcome.added) if outcome else [],
        "replaced": list(outcome.replaced) if outcome else [],
    }
