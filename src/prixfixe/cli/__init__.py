"""The `prixfixe` command, for people: tables and colour on a terminal, plain text in a pipe,
JSON with `--json`, and a one-line message instead of a traceback when something is wrong.

One module per command group, each a thin client of the services the MCP tools use; every
module imports its heavy dependencies inside the command, so starting the CLI stays cheap."""

from __future__ import annotations

import click

from prixfixe import __version__
from prixfixe.cli import (
    doctor,
    knowledge,
    plugins,
    resources,
    routines,
    serve,
    servers,
    store,
    tools,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="prixfixe")
def cli() -> None:
    """prixfixe: an MCP server whose cost to an agent's context stays flat."""
    import logging

    # stdout may be the MCP channel (serve), so every diagnostic goes to stderr.
    logging.basicConfig(format="prixfixe: %(levelname)s: %(message)s", level=logging.WARNING)
    from prixfixe.leash.redact import install_logging_redaction

    install_logging_redaction()


for _command in (
    serve.serve,
    doctor.doctor,
    tools.tools,
    store.store,
    resources.resources,
    routines.run,
    routines.routines_list,
    routines.steps,
    routines.report,
    servers.servers,
    knowledge.kb,
    plugins.plugins,
    plugins.plugin,
):
    cli.add_command(_command)


def main() -> None:
    cli()


__all__ = ["cli", "main"]
