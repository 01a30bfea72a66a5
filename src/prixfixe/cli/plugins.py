"""`prixfixe plugins`: the installed plugins, what each may run and reach, and what its tools
would cost a model; `prixfixe plugin new NAME`: a new plugin package to start from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from prixfixe.cli._common import build_app, console, echo_json, escape, friendly

if TYPE_CHECKING:
    from prixfixe.system.environment import Environment


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
    skipped or failed), declared authority, and what their tools would cost listed.

    `prixfixe plugins install SPEC...` installs plugins into the environment this prixfixe
    runs from, `prixfixe plugins uninstall NAME...` removes them."""
    # `prixfixe plugins list`, as `steps list`, `kb list`, `tools list`; bare, the same list.
    if ctx.invoked_subcommand is not None:
        if as_json:
            raise click.UsageError("--json applies to the list, not to a subcommand")
        return
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


@plugins.command("install")
@click.argument("specs", nargs=-1, metavar="SPEC...")
@click.option(
    "-e",
    "--editable",
    "editable",
    multiple=True,
    metavar="PATH",
    help="Install the plugin in this folder in editable mode (repeatable).",
)
@click.option("-U", "--upgrade", is_flag=True, help="Upgrade the plugins to their newest.")
@click.option("--no-deps", is_flag=True, help="Do not install the plugins' dependencies.")
@click.option(
    "--no-build-isolation", is_flag=True, help="Build with the packages already installed."
)
@click.option("--no-index", is_flag=True, help="Do not reach a package index (offline).")
@friendly
def install(
    specs: tuple[str, ...],
    editable: tuple[str, ...],
    upgrade: bool,
    no_deps: bool,
    no_build_isolation: bool,
    no_index: bool,
) -> None:
    """Install plugins into the environment this prixfixe runs from (pip in a virtual
    environment, pipx, uv tool): SPEC is a folder (./prixfixe-weather), a wheel, or a
    package name (prixfixe-weather); -e PATH installs a folder you are working on."""
    from prixfixe.system.environment import current
    from prixfixe.system.installer import installer

    env = current()
    tool = installer(env)
    argv = tool.install(
        env,
        specs,
        editable,
        cwd=Path.cwd(),
        upgrade=upgrade,
        no_deps=no_deps,
        no_build_isolation=no_build_isolation,
        no_index=no_index,
    )
    _change(env, argv, "install", specs, editable)


@plugins.command("uninstall")
@click.argument("names", nargs=-1, metavar="NAME...")
@friendly
def uninstall(names: tuple[str, ...]) -> None:
    """Uninstall plugins from the environment this prixfixe runs from: NAME is a plugin's
    name (health) or its package's (prixfixe-health)."""
    from prixfixe.system.environment import current
    from prixfixe.system.installer import installer, registered, resolve_uninstall_names

    env = current()
    tool = installer(env)
    dists = resolve_uninstall_names(names, registered(env))
    _change(env, tool.uninstall(env, dists), "uninstall", (), ())


def _change(
    env: Environment,
    argv: list[str],
    verb: str,
    specs: Sequence[str],
    editable: Sequence[str],
) -> None:
    """Runs the installer's `argv` in this terminal (its progress and errors are the person's
    to see), then says what is registered now."""
    import shlex
    import subprocess

    from prixfixe.errors import PrixfixeError
    from prixfixe.system.installer import persistence_note, registered, third_party

    before = {p.name for p in third_party(registered(env))}
    click.echo(f"prixfixe runs from {env.title}.")
    click.echo(f"Running: {shlex.join(argv)}")
    done = subprocess.run(argv, check=False)
    if done.returncode != 0:
        raise PrixfixeError(
            f"{verb} failed: the installer exited with {done.returncode} (its output is above)"
        )
    now = third_party(registered(env))
    names = {p.name for p in now}
    added, removed = sorted(names - before), sorted(before - names)
    if added:
        click.echo(f"Registered now: {', '.join(added)}.")
    if removed:
        click.echo(f"No longer registered: {', '.join(removed)}.")
    if not added and not removed:
        click.echo("The registered plugins did not change.")
    click.echo("Plugins in this environment (entry points in the group 'prixfixe'):")
    for p in now:
        click.echo(f"  {p.line()}")
    if not now:
        click.echo("  none")
    note = persistence_note(env, specs, editable) if verb == "install" else None
    if note is not None:
        click.echo(f"note: {note}", err=True)
    click.echo(
        "'prixfixe plugins' shows whether each loads. A plugin's own tests run with this "
        f"Python: {shlex.join([env.python, '-m', 'pytest'])}"
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
    import shlex
    import sys

    click.echo(
        "Next:\n"
        f"  cd {shlex.quote(str(target))}\n"
        "  prixfixe plugins install -e '.[test]'   # into the environment prixfixe runs from\n"
        f"  {shlex.quote(sys.executable)} -m pytest   # prixfixe's own Python\n"
        f"  prixfixe plugins        # {names.name}: loaded"
    )
