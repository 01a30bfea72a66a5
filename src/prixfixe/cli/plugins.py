"""`prixfixe plugins`: the installed plugins, what each may run and reach, and what its tools
would cost a model; `prixfixe plugin new NAME`: a new plugin package to start from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from prixfixe.cli._common import build_app, console, echo_json, escape, friendly


def authority_text(authority: dict[str, Any] | None) -> str:
    """A plugin's declared authority on one line (`runs git; reaches api.github.com`)."""
    if authority is None:
        return "[dim]not loaded[/]"
    parts: list[str] = []
    for key, verb in (
        ("programs", "runs"),
        ("hosts", "reaches"),
        ("reads", "reads"),
        ("writes", "writes"),
        ("env", "passes env"),
    ):
        if authority[key]:
            parts.append(f"{verb} {', '.join(authority[key])}")
    for key, what in (("params_add_commands", "command lines"), ("params_add_paths", "paths")):
        if authority[key]:
            parts.append(f"params add {what} ({', '.join(authority[key])})")
    return escape("; ".join(parts)) if parts else "[dim]nothing[/]"


def status_text(status: str) -> str:
    colour = "green" if status == "loaded" else "red" if status.startswith("failed") else "yellow"
    return f"[{colour}]{escape(status)}[/]"


def _version(p: dict[str, Any]) -> str:
    if p["distribution"] is None:
        return escape(p["origin"])
    return escape(f"{p['distribution']} {p['version']}")


def plugins_table(plugins: list[dict[str, Any]], *, costs: bool) -> Any:
    """The plugins as a table: doctor's (authority) and `prixfixe plugins`' (and costs)."""
    from rich.table import Table

    columns = ["plugin", "version", "status", "authority"]
    if costs:
        columns += ["tools", "tokens if listed", "index +tokens"]
    table = Table(*columns, title="Plugins")
    for p in plugins:
        row = [escape(p["name"]), _version(p), status_text(p["status"])]
        row.append(authority_text(p["authority"]))
        if costs:
            spent = p["tokens"]
            row += (
                [str(spent["tools"]), str(spent["tools_list"]), str(spent["index_full"])]
                if spent
                else ["", "", ""]
            )
        table.add_row(*row)
    return table


@click.group("plugins", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the plugins as JSON.")
@click.pass_context
def plugins(ctx: click.Context, as_json: bool) -> None:
    """List installed plugins (built-in and third-party): version, status (and why one was
    skipped or failed), declared authority, and what their tools would cost listed."""
    # `prixfixe plugins list`, as `steps list`, `kb list`, `tools list`; bare, the same list.
    if ctx.invoked_subcommand is None:
        _plugins(as_json)


@plugins.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the plugins as JSON.")
def plugins_list(as_json: bool) -> None:
    """List installed plugins: version, status, declared authority, and token costs."""
    _plugins(as_json)


@friendly
def _plugins(as_json: bool) -> None:
    from prixfixe.system.doctor import plugins_section

    found = plugins_section(build_app(), costs=True)
    if as_json:
        echo_json(found)
        return
    out = console()
    out.print(plugins_table(found, costs=True))
    out.print(
        "Tokens are cl100k_base: 'if listed' is what the plugin's tools would add to "
        "tools/list; 'index' what it adds to the full capability index. Choose third-party "
        "plugins with PRIXFIXE_LOAD_PLUGINS (set but empty: none)."
    )


@click.group("plugin")
def plugin() -> None:
    """Write a plugin of your own."""


@plugin.command("new")
@click.argument("name")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="The folder to create the package's folder (prixfixe-NAME) in.",
)
@friendly
def new(name: str, directory: Path) -> None:
    """Create the package of plugin NAME: a step type with a data schema and its golden
    file, a tool in its own facet, tests that run prixfixe's contract kit, a README."""
    from prixfixe.scaffold import Names, new_plugin

    target = new_plugin(name, directory)
    names = Names.of(name)
    click.echo(f"Created {names.dist} in {target}:")
    for path in sorted(p for p in target.rglob("*") if p.is_file()):
        click.echo(f"  {path.relative_to(target)}")
    click.echo(
        "Next:\n"
        f"  cd {target}\n"
        "  pip install -e '.[test]'\n"
        "  pytest\n"
        f"  prixfixe plugins        # {names.name}: loaded"
    )
