"""`prixfixe trust [PATH]`: let a folder's `prixfixe.toml` load, as `direnv allow` does.

A configuration starts programs (servers, scripts, `{cmd = ...}` credentials), so one found in
the working directory, a checkout's content, loads only once the person has trusted that exact
file: its resolved path and the SHA-256 of its bytes are recorded in the user state folder, and
any change to the file (a `git pull`, an edit) makes it untrusted again until trusted anew.
`--revoke` forgets a record; `--list` shows every record and whether its file still matches."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from prixfixe.cli._common import console, echo_json, escape, friendly

if TYPE_CHECKING:
    from prixfixe.config import ConfigModel, TrustRecord


@click.command()
@click.argument(
    "path", required=False, type=click.Path(path_type=Path, dir_okay=True), metavar="[PATH]"
)
@click.option("--revoke", is_flag=True, help="Forget PATH's record: it no longer loads.")
@click.option("--list", "show", is_flag=True, help="Show every trusted file, and which changed.")
@click.option("--json", "as_json", is_flag=True, help="With --list: print as JSON.")
@friendly
def trust(path: Path | None, revoke: bool, show: bool, as_json: bool) -> None:
    """Trust a folder's prixfixe.toml (PATH, a file or its folder; default ./prixfixe.toml).

    prixfixe loads ./prixfixe.toml only once you have trusted that exact file: it can start
    programs, and a folder's files (a checkout's) are not yours until you have read them.
    Trusting records the file's path and a hash of its content; any change to it makes it
    untrusted again. $PRIXFIXE_CONFIG and your own config folder's file need no trust."""
    if show:
        if path is not None or revoke:
            raise click.UsageError("--list shows every record: leave out PATH and --revoke")
        _list(as_json)
        return
    if as_json:
        raise click.UsageError("--json applies with --list")
    from prixfixe.config import CONFIG_FILENAME, revoke_trust, trust_config, trust_file

    target = (path or Path(CONFIG_FILENAME)).expanduser()
    if target.is_dir():
        target = target / CONFIG_FILENAME
    if revoke:
        removed = revoke_trust(target)
        if removed is None:
            click.echo(f"{target.absolute()} was not trusted; nothing changed.")
        else:
            click.echo(f"No longer trusted: {removed.path} (it is not loaded from now on).")
        return
    record, model = trust_config(target)
    click.echo(f"Trusted {record.path} (sha256 {record.sha256[:12]}, in {trust_file()}).")
    for line in _authority(model):
        click.echo(f"  {line}")
    click.echo(
        "Any change to the file makes it untrusted again; prixfixe trust --revoke forgets it."
    )


def _authority(model: ConfigModel) -> list[str]:
    """What the trusted file may start, named so the person sees what they agreed to."""
    import shlex

    lines: list[str] = []
    for name, server in model.servers.items():
        if server.command is not None and server.enabled:
            runs = shlex.join([server.command, *server.args])
            lines.append(f"server {name} ({server.start}) runs: {runs}")
    for name, command in model.commands.items():
        shown = command if isinstance(command, str) else shlex.join(command)
        lines.append(f"command {name} runs: {shown}")
    for name, routine in model.routines.items():
        for step in routine.steps:
            given = (step.model_extra or {}).get("command")
            if given is not None:
                shown = given if isinstance(given, str) else shlex.join(map(str, given))
                lines.append(f"routine {name}, step {step.name or step.type} runs: {shown}")
    return ["It may start:", *lines] if lines else []


def _list(as_json: bool) -> None:
    from prixfixe.config import read_trust, trust_file

    rows = [_row(record) for record in read_trust().values()]
    if as_json:
        echo_json({"file": str(trust_file()), "trusted": rows})
        return
    if not rows:
        click.echo(f"No folder's configuration is trusted ({trust_file()}).")
        return
    from rich.table import Table

    table = Table("file", "state", "trusted at", title=f"Trusted in {escape(str(trust_file()))}")
    shown = {"trusted": "[green]trusted[/]", "changed": "[yellow]changed since[/]"}
    for row in rows:
        state = shown.get(row["state"], "[dim]missing[/]")
        table.add_row(escape(row["path"]), state, row["trusted_at"])
    console().print(table)


def _row(record: TrustRecord) -> dict[str, Any]:
    from prixfixe.config import digest, read_config_bytes
    from prixfixe.errors import ConfigError

    state = "missing"
    if os.path.isfile(record.path):
        try:
            data = read_config_bytes(Path(record.path))
        except ConfigError:
            state = "unreadable"
        else:
            state = "trusted" if digest(data) == record.sha256 else "changed"
    return {
        "path": record.path,
        "state": state,
        "sha256": record.sha256,
        "trusted_at": record.trusted_at,
    }
