"""The `prixfixe` command, for people: tables and colour on a terminal, plain text in a pipe,
JSON with `--json`, and a one-line message instead of a traceback when something is wrong.

One module per command group, each a thin client of the services the MCP tools use. A command's
module is imported only when that command runs (`COMMANDS` names each one and holds the line
`--help` shows for it), and every module imports its heavy dependencies inside the command, so
starting the CLI stays cheap: `prixfixe --help` imports no command at all."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from importlib import import_module
from typing import NamedTuple

import click


class Lazy(NamedTuple):
    """Where a command lives, and the first paragraph of its help (what `--help` lists)."""

    module: str
    attribute: str
    summary: str


#: Every top-level command: its name, where it is defined, and its help's first paragraph
#: (tests/cli/test_lazy.py checks each against the command's own help).
COMMANDS: dict[str, Lazy] = {
    "serve": Lazy(
        "prixfixe.cli.serve",
        "serve",
        "Serve MCP over stdio (for a client to launch), or over HTTP with --http.",
    ),
    "web": Lazy(
        "prixfixe.cli.web",
        "web",
        "Serve the read-only web page on loopback (reports, records, capabilities, plugins, "
        "token budget), without MCP.",
    ),
    "doctor": Lazy(
        "prixfixe.cli.doctor",
        "doctor",
        "Check the installation: versions, config, facets, plugins and their authority, the "
        "store's integrity, mounted servers, tools/list cost.",
    ),
    "tools": Lazy(
        "prixfixe.cli.tools",
        "tools",
        "Find, read and list tools, as an agent would through the discovery trio.",
    ),
    "store": Lazy(
        "prixfixe.cli.store",
        "store",
        "Records in the store (reminders, deadlines, ...), as the store tools see them.",
    ),
    "resources": Lazy(
        "prixfixe.cli.resources",
        "resources",
        "Browse and read the MCP resources an agent sees.",
    ),
    "run": Lazy(
        "prixfixe.cli.routines",
        "run",
        "Run routine NAME and print its report (kept in the store, see `prixfixe report`).",
    ),
    "routines": Lazy(
        "prixfixe.cli.routines",
        "routines_list",
        "The routines there are (configured, and the built-in morning) with their steps.",
    ),
    "steps": Lazy(
        "prixfixe.cli.routines",
        "steps",
        "Step types: what routines are made of (not tools: they cost an agent nothing).",
    ),
    "report": Lazy(
        "prixfixe.cli.routines",
        "report",
        "Show a kept report: GENERATION, or the latest (of --routine).",
    ),
    "activity": Lazy(
        "prixfixe.cli.activity",
        "activity",
        "What agents did: recent tool calls, the most used tools, failures, and the searches "
        "that found no good match.",
    ),
    "servers": Lazy(
        "prixfixe.cli.servers",
        "servers",
        "MCP servers mounted behind the fixed menu: list, test, import them from another client.",
    ),
    "kb": Lazy(
        "prixfixe.cli.knowledge",
        "kb",
        "The knowledge base: collections of documents, searched and read as resources.",
    ),
    "plugins": Lazy(
        "prixfixe.cli.plugins",
        "plugins",
        "List installed plugins (built-in and third-party): version, status (and why one was "
        "skipped or failed), declared authority, and what their tools would cost listed.",
    ),
    "plugin": Lazy("prixfixe.cli.plugins", "plugin", "Write a plugin of your own."),
    # Setting up: a starter configuration, and a client connected (neither builds an App).
    "init": Lazy(
        "prixfixe.cli.init",
        "init",
        "Write a commented starter configuration: a morning routine that works with no setup, "
        "and every other section as an example to turn on.",
    ),
    "trust": Lazy(
        "prixfixe.cli.trust",
        "trust",
        "Trust a folder's prixfixe.toml (PATH, a file or its folder; default ./prixfixe.toml).",
    ),
    "client": Lazy(
        "prixfixe.cli.client",
        "client",
        "Connect an MCP client: NAME is claude-code, claude-desktop, cursor, vscode or generic.",
    ),
}


class LazyCommands(MutableMapping[str, click.Command]):
    """The group's commands: each named one imported on first access, so click's own lookups
    (a command run, a typo's suggestions, which list every name) work unchanged."""

    def __init__(self, table: dict[str, Lazy]) -> None:
        self.table = dict(table)
        self.loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self.loaded:
            where = self.table[name]  # KeyError: no such command
            command = getattr(import_module(where.module), where.attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{where.module}.{where.attribute} is not a click command")
            self.loaded[name] = command
        return self.loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        found = self.table.pop(name, None) is not None
        if self.loaded.pop(name, None) is None and not found:
            raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(self.table), **dict.fromkeys(self.loaded)})

    def __len__(self) -> int:
        return len(self.table.keys() | self.loaded.keys())

    def __contains__(self, name: object) -> bool:
        return name in self.table or name in self.loaded

    def listed(self, name: str) -> click.Command:
        """The command itself once loaded, else a stand-in carrying its help summary."""
        if name in self.loaded:
            return self.loaded[name]
        return click.Command(name, help=self.table[name].summary)


class LazyGroup(click.Group):
    """A group whose `--help` lists its commands without importing them."""

    commands: LazyCommands

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, self.commands.listed(name)) for name in self.list_commands(ctx)]
        rows = [(name, command) for name, command in rows if not command.hidden]
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section("Commands"):
            formatter.write_dl([(name, c.get_short_help_str(limit)) for name, c in rows])


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    # An eager option of its own (click's version_option wants the version string up front):
    # reading the installed version costs importlib.metadata, which only --version needs.
    if not value or ctx.resilient_parsing:
        return
    from prixfixe import __version__

    click.echo(f"prixfixe, version {__version__}", color=ctx.color)
    ctx.exit()


@click.group(
    cls=LazyGroup,
    commands=LazyCommands(COMMANDS),
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def cli() -> None:
    """prixfixe: an MCP server whose cost to an agent's context stays flat."""
    import logging

    # stdout may be the MCP channel (serve), so every diagnostic goes to stderr.
    logging.basicConfig(format="prixfixe: %(levelname)s: %(message)s", level=logging.WARNING)
    from prixfixe.leash.redact import install_logging_redaction

    install_logging_redaction()


def main() -> None:
    cli()


__all__ = ["cli", "main"]
