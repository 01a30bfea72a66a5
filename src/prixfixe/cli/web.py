"""`prixfixe web`: the web page alone, on loopback, for a person at this machine.

The same page `prixfixe serve --http` serves beside MCP, behind the same guard and limits, but
without an MCP endpoint; always on a loopback address, so it needs no token (a configured
`[http] token` still turns the login on)."""

from __future__ import annotations

import click

from prixfixe.cli._common import friendly
from prixfixe.errors import ConfigError

#: The port `prixfixe web` listens on unless told (next to `serve --http`'s 8765).
DEFAULT_PORT = 8766


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Loopback address to bind (127.0.0.1, ::1 or localhost; nothing else).",
)
@click.option(
    "--port",
    default=DEFAULT_PORT,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (0 picks a free one).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the default browser.")
@friendly
def web(host: str, port: int, open_browser: bool) -> None:
    """Serve the read-only web page on loopback (reports, records, capabilities, plugins,
    token budget), without MCP.

    Stop it with Ctrl-C. To serve the page to other machines, serve it with MCP behind a token:
    prixfixe serve --http (see docs/http.md)."""
    import os
    import sys
    from functools import partial

    import anyio

    from prixfixe.config import load_config
    from prixfixe.mcp.http.settings import is_loopback, resolve_settings

    if not is_loopback(host):
        raise ConfigError(
            f"prixfixe web serves on loopback only, not on {host!r}: use 127.0.0.1 or ::1. "
            "To reach the page from elsewhere, run prixfixe serve --http with a token"
        )
    config = load_config()
    settings = resolve_settings(config.model.http, os.environ, host=host, port=port, web=True)

    from prixfixe.app import App
    from prixfixe.mcp.http.serve import serve_http
    from prixfixe.web.app import build_pages

    app = App.build(config=config)
    pages = build_pages(app, settings.token)

    def announce(line: str) -> None:
        print(line, file=sys.stderr, flush=True)
        if open_browser and line.startswith("prixfixe: serving"):
            import webbrowser

            url = line.split(" on ", 1)[1].split(" ", 1)[0]
            webbrowser.open(url)

    anyio.run(partial(serve_http, app, settings, announce=announce, pages=pages, mcp=False))
