"""`prixfixe client NAME`: the configuration that connects an MCP client to prixfixe, printed to
paste, or merged into the client's own file with `--write`."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from prixfixe.cli._common import friendly

if TYPE_CHECKING:
    from prixfixe.clients.entry import Launch
    from prixfixe.clients.targets import Client, Scope

NAMES = ("claude-code", "claude-desktop", "cursor", "vscode", "generic")
#: The entry's name: what every client accepts as a key and shows in its list.
SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@click.command()
@click.argument("name", type=click.Choice(NAMES), metavar="NAME")
@click.option("--write", is_flag=True, help="Merge the entry into the client's file.")
@click.option(
    "--scope",
    type=click.Choice(["user", "project"]),
    default=None,
    help="user: every project [default]; project: a file in this folder.",
)
@click.option("--name", "server", default="prixfixe", show_default=True, help="The entry's name.")
@click.option("--http", "url", default=None, metavar="URL", help="Reach a prixfixe serving HTTP.")
@click.option("--token-env", default=None, metavar="VAR", help="With --http: the token's variable.")
@click.option(
    "--uvx", is_flag=True, help="Start prixfixe with `uvx --from SOURCE prixfixe serve`."
)
@click.option(
    "--config",
    "config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The prixfixe.toml the client's prixfixe reads.",
)
@click.option(
    "--file",
    "file",
    type=click.Path(path_type=Path),
    default=None,
    help="With --write: this file instead of the client's own.",
)
@click.option("--force", is_flag=True, help="With --write: replace a different entry.")
@friendly
def client(
    name: str,
    write: bool,
    scope: str | None,
    server: str,
    url: str | None,
    token_env: str | None,
    uvx: bool,
    config: Path | None,
    file: Path | None,
    force: bool,
) -> None:
    """Connect an MCP client: NAME is claude-code, claude-desktop, cursor, vscode or generic.

    Prints the entry to add (for claude-code the `claude mcp add` command line, and the
    .mcp.json form); --write merges it into the client's file, keeping everything else there.
    The entry starts this prixfixe by its absolute path (a client started from the desktop
    does not see your PATH); with --http URL it reaches a prixfixe serving HTTP instead, the
    token named by --token-env and never written."""
    from prixfixe.clients.entry import check_remote, http_entry, inputs_for, stdio_entry
    from prixfixe.clients.targets import get_client

    target = get_client(name)
    _check_options(target.scopes, scope, url, token_env, uvx, config, file, write, force)
    if not SERVER_NAME.match(server):
        raise click.UsageError(
            f"--name {server!r}: letters, digits, '_', '-' and '.', starting with a letter or digit"
        )
    chosen: Scope = "project" if scope == "project" else "user"
    launch: Launch | None = None
    if url is not None:
        remote = check_remote(url, token_env)
        entry, notes = http_entry(target, remote, server), remote.notes
        inputs = inputs_for(target, remote, server)
    else:
        launch = _launch(uvx, config)
        entry, notes, inputs = stdio_entry(target, launch), launch.notes, []
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if write:
        _write(target, chosen, file, server, entry, inputs, force)
    else:
        _print(target, chosen, server, entry, inputs, launch)


def _check_options(
    scopes: tuple[str, ...],
    scope: str | None,
    url: str | None,
    token_env: str | None,
    uvx: bool,
    config: Path | None,
    file: Path | None,
    write: bool,
    force: bool,
) -> None:
    if scope is not None and not scopes:
        raise click.UsageError("this client has one configuration file: --scope does not apply")
    if token_env is not None and url is None:
        raise click.UsageError("--token-env applies with --http URL")
    if url is not None and (uvx or config is not None):
        raise click.UsageError("--uvx and --config say how to start prixfixe; --http reaches one")
    if (file is not None or force) and not write:
        raise click.UsageError("--file and --force apply with --write")


def _launch(uvx: bool, config: Path | None) -> Launch:
    """How the client starts prixfixe, with the configuration it should read pinned."""
    from dataclasses import replace

    from prixfixe.clients.entry import find_launch, pinned_environment
    from prixfixe.config import CONFIG_FILENAME, find_config, user_config_dir

    launch = find_launch(uvx=uvx)
    user_config = user_config_dir() / CONFIG_FILENAME
    found = find_config(os.environ, Path.cwd()) if config is None else None
    in_force, origin = (found.path, found.origin) if found is not None else (None, "defaults")
    env, notes = pinned_environment(os.environ, in_force, origin, user_config, config)
    if found is not None and found.ignored is not None:
        notes = (found.ignored.line(str(in_force or "built-in defaults")), *notes)
    return replace(launch, env=env, notes=launch.notes + notes)


def _document(target: Client, server: str, entry: dict[str, Any], inputs: list[Any]) -> str:
    data: dict[str, Any] = {target.key: {server: entry}}
    if inputs:
        data["inputs"] = inputs
    return json.dumps(data, indent=2)


def _print(
    target: Client,
    scope: Scope,
    server: str,
    entry: dict[str, Any],
    inputs: list[Any],
    launch: Launch | None,
) -> None:
    from prixfixe.clients.entry import claude_add_command, describe
    from prixfixe.clients.targets import config_file

    if launch is not None:
        command = describe([launch.command, *launch.args])
        click.echo(f"# The entry starts {command} ({launch.how}).")
    if target.name == "claude-code":
        where = "every project" if scope == "user" else "this project (.mcp.json)"
        click.echo(f"# Claude Code, for {where}: run")
        click.echo(describe(claude_add_command(entry, server, scope)))
        click.echo(
            "# or put this in .mcp.json at a project's root "
            "(prixfixe client claude-code --scope project --write):"
        )
        click.echo(_document(target, server, entry, inputs))
        return
    path = config_file(target, scope, os.environ, Path.cwd(), sys.platform)
    if path is None:
        click.echo(f"# for {target.title}: add this under its {target.key!r}")
        if "headers" in entry:
            click.echo("# (clients write an environment variable in a header in their own ways)")
    else:
        click.echo(f"# {target.title}: add this to {path}")
        click.echo(f"# (prixfixe client {target.name} --write merges it, keeping the rest)")
    click.echo(_document(target, server, entry, inputs))


def _write(
    target: Client,
    scope: Scope,
    file: Path | None,
    server: str,
    entry: dict[str, Any],
    inputs: list[Any],
    force: bool,
) -> None:
    from prixfixe.clients.merge import merge_entry
    from prixfixe.clients.targets import config_file
    from prixfixe.errors import PrixfixeError

    path = file.expanduser() if file is not None else None
    if path is None:
        path = config_file(target, scope, os.environ, Path.cwd(), sys.platform)
    if path is None:
        raise PrixfixeError(
            "generic has no file of its own: give the client's file with --file PATH"
        )
    outcome = merge_entry(path, target.key, server, entry, inputs, force=force)
    if outcome.status == "unchanged":
        click.echo(f"{target.title} is already configured: {path} has this {server!r} entry.")
        return
    if outcome.status == "replaced":
        click.echo(
            f"Replaced the {server!r} entry in {path} (it differed in "
            f"{', '.join(outcome.differs) or 'its inputs'})."
        )
    else:
        click.echo(f"Added the {server!r} entry to {path}.")
    if "command" in entry:
        from prixfixe.clients.entry import describe

        click.echo(f"It starts: {describe([entry['command'], *entry['args']])}")
    else:
        click.echo(f"It reaches: {entry['url']}")
    click.echo(f"Next: {target.next_step.format(server=server)}.")
