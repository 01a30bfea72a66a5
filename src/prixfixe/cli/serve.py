"""`prixfixe serve`: MCP over stdio, or streamable HTTP with --http."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from prixfixe.cli._common import friendly
from prixfixe.errors import ConfigError

if TYPE_CHECKING:
    from prixfixe.app import App

#: What `prixfixe serve` says when a person runs it in a terminal.
TERMINAL_NOTE = (
    "prixfixe is serving MCP on stdin/stdout, waiting for an MCP client; this is what a client "
    "starts, not something to type into. To connect one: prixfixe client --help. To try it "
    "by hand: prixfixe tools list, prixfixe doctor. Stop with Ctrl-C (or Ctrl-D)."
)


def _load_plugin_modules(names: tuple[str, ...], paths: tuple[Path, ...]) -> list[object]:
    """Import `--plugin` modules (dotted names on sys.path, and in the `--plugin-path` folders)
    to register beside the others.

    A folder is searched only when named: not even the current one is implied, so starting
    prixfixe in a checkout never imports the checkout's code. Each is appended to `sys.path`,
    after everything installed, so its modules never shadow an installed one."""
    import importlib

    if paths and not names:
        raise click.UsageError("--plugin-path applies with --plugin MODULE")
    for path in paths:
        folder = str(path.resolve())
        if folder not in sys.path:
            sys.path.append(folder)
    modules: list[object] = []
    for name in names:
        try:
            modules.append(importlib.import_module(name))
        except Exception as exc:  # noqa: BLE001 - any import failure is the user's to see, briefly
            reason = f"{type(exc).__name__}: {exc}"
            hint = "" if paths else " (a module in a folder needs --plugin-path DIR)"
            raise ConfigError(f"--plugin {name}: cannot import it: {reason}{hint}") from None
    return modules


@click.command()
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
    "--no-web",
    "no_web",
    is_flag=True,
    default=None,
    help="HTTP: serve MCP only, not the web page ([http] web = false).",
)
@click.option(
    "--plugin",
    "plugin_modules",
    multiple=True,
    metavar="MODULE",
    help="Also load this plugin module (importable dotted name); repeat for more.",
)
@click.option(
    "--plugin-path",
    "plugin_paths",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    metavar="DIR",
    help="Also find --plugin modules in this folder (e.g. '.'); repeat for more.",
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
    no_web: bool | None,
    plugin_modules: tuple[str, ...],
    plugin_paths: tuple[Path, ...],
) -> None:
    """Serve MCP over stdio (for a client to launch), or over HTTP with --http."""
    import os

    import anyio

    from prixfixe.app import App

    http_only = {"--host": host, "--port": port, "--stateless": stateless}
    http_only |= {"--token-env": token_env, "--token-file": token_file, "--no-web": no_web}
    if not use_http and any(v is not None for v in http_only.values()):
        used = ", ".join(k for k, v in http_only.items() if v is not None)
        raise click.UsageError(f"{used} only apply with --http")
    plugins = _load_plugin_modules(plugin_modules, plugin_paths)
    if not use_http:
        from prixfixe.mcp.stdio import serve_app as serve_stdio

        app = App.build(facet=facet, extra_plugins=plugins)
        typed = sys.stdin.isatty()
        try:
            if typed:
                # A person typed it: an MCP client starts it and speaks on stdin and stdout, so
                # say so (on stderr, which the protocol leaves free) instead of waiting in
                # silence. From here on a Ctrl-C stops it the one way (see below).
                click.echo(TERMINAL_NOTE, err=True)
            anyio.run(serve_stdio, app)
        except KeyboardInterrupt:
            if not typed:
                raise
            _stop_typed_serve(app)
        return
    from prixfixe.config import load_config
    from prixfixe.mcp.http.settings import resolve_settings

    # An unsafe or unreadable HTTP setting is refused before plugins are collected and before
    # the HTTP stack and the SDK are imported: half the time of a start.
    config = load_config()
    settings = resolve_settings(
        config.model.http,
        os.environ,
        host=host,
        port=port,
        stateless=stateless,
        token_env=token_env,
        token_file=token_file,
        web=False if no_web else None,
    )
    from functools import partial

    from prixfixe.mcp.http.serve import serve_http

    app = App.build(facet=facet, extra_plugins=plugins, config=config)
    pages = None
    if settings.web and settings.path == "/":
        click.echo(
            "prixfixe: warning: [http] path is /, so the web page is not served (set another "
            "path, or web = false)",
            err=True,
        )
    elif settings.web:
        # Built here, not in the MCP layer: `prixfixe.mcp` never imports the page.
        from prixfixe.web.app import build_pages

        pages = build_pages(app, settings.token)
    anyio.run(partial(serve_http, app, settings, pages=pages))


def _stop_typed_serve(app: App) -> NoReturn:
    """Ctrl-C on a `serve` typed in a terminal ends it. The SDK reads a terminal's stdin in a
    worker thread that a signal cannot wake, and the interpreter would wait for that thread
    at exit (until Ctrl-D): so the store is closed (everything acknowledged is committed
    already) and the process ends here, 130 as for any program stopped by Ctrl-C."""
    app.close_store()
    click.echo("Stopped.", err=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)
