"""`prixfixe init`: a commented starter configuration, from the template shipped inside the
package, written where prixfixe looks for one (or printed)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from prixfixe.cli._common import friendly
from prixfixe.errors import PrixfixeError

TEMPLATE = "prixfixe.toml"


def starter_config() -> str:
    """The starter configuration's text (`src/prixfixe/templates/prixfixe.toml`)."""
    from importlib.resources import files

    return files("prixfixe").joinpath("templates", TEMPLATE).read_text(encoding="utf-8")


@click.command()
@click.option(
    "--path",
    "path",
    type=click.Path(path_type=Path),
    default=None,
    help="Write here instead (a folder gets prixfixe.toml in it).",
)
@click.option("--here", is_flag=True, help="Write ./prixfixe.toml in this folder instead.")
@click.option("--force", is_flag=True, help="Replace a file that is already there.")
@click.option("--print", "to_stdout", is_flag=True, help="Print the configuration; write nothing.")
@friendly
def init(path: Path | None, here: bool, force: bool, to_stdout: bool) -> None:
    """Write a commented starter configuration: a morning routine that works with no setup,
    and every other section as an example to turn on.

    By default it goes to prixfixe.toml in the user config folder, which prixfixe finds from
    any directory (a client starts it in a folder of its own). An existing file is never
    replaced without --force."""
    from prixfixe.config import CONFIG_FILENAME, find_config, search_paths, user_config_dir

    if to_stdout:
        if path is not None or here or force:
            raise click.UsageError("--print writes nothing: leave out --path, --here and --force")
        click.echo(starter_config(), nl=False)
        return
    if path is not None and here:
        raise click.UsageError("give --path or --here, not both")
    target = _target(path, here, user_config_dir() / CONFIG_FILENAME)
    existed = target.exists()
    if existed and not force:
        raise PrixfixeError(
            f"{target} already exists; nothing was written. Add --force to replace it "
            "(prixfixe init --print shows the starter configuration)"
        )
    from prixfixe.clients.merge import write_atomically

    write_atomically(target, starter_config())
    click.echo(f"{'Replaced' if existed else 'Wrote'} {target} with a starter configuration.")
    searched = [p.absolute() for p in search_paths(os.environ, Path.cwd())]
    if target.absolute() == (Path.cwd() / CONFIG_FILENAME).absolute():
        # A folder's file loads once trusted; this one is the person's own doing, so it is.
        from prixfixe.config import trust_config

        trust_config(target)
        click.echo(
            "Trusted it (prixfixe trust): prixfixe loads it in this folder until it changes."
        )
    in_force = find_config(os.environ, Path.cwd()).path
    first = in_force.absolute() if in_force is not None else None
    if target.absolute() not in searched:
        click.echo(f"prixfixe reads it when PRIXFIXE_CONFIG={target.absolute()} is set.")
    elif first is not None and first.resolve() != target.resolve():
        click.echo(
            f"Note: here prixfixe reads {first} first; it finds this one where that is absent."
        )
    click.echo(
        "Next:\n"
        "  prixfixe doctor              check it, and see what an agent sees\n"
        "  prixfixe run morning         run its morning routine\n"
        "  prixfixe client claude-code  connect a client "
        "(or claude-desktop, cursor, vscode, generic)"
    )


def _target(path: Path | None, here: bool, default: Path) -> Path:
    from prixfixe.config import CONFIG_FILENAME

    if here:
        return Path.cwd() / CONFIG_FILENAME
    if path is None:
        return default
    path = path.expanduser()
    return path / CONFIG_FILENAME if path.is_dir() else path
