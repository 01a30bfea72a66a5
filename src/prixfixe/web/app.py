"""The web page as one ASGI app: routes, the login gate, the headers every answer carries,
and error pages in place of tracebacks.

`build_pages` is what the CLI hands to `prixfixe.mcp.http.serve.serve_http` (the MCP layer
never imports this package): behind the same Host/Origin guard and request limits as MCP.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prixfixe.web.auth import Authenticated, Session, Sessions
from prixfixe.web.live import Changes
from prixfixe.web.pages import PageError, Pages

if TYPE_CHECKING:
    from prixfixe.app import App
    from prixfixe.secrets import Secret

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
#: Nothing runs or loads but this origin's own script and style sheet; no page may frame it.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    # Not `no-referrer`: under it browsers send `Origin: null` on the page's own forms, and
    # the guard could no longer tell them from an opaque (sandboxed) origin.
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


class SecurityHeaders:
    """The headers above on every answer; pages are never cached (they show the store)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope["path"].startswith("/static/")

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in PAGE_HEADERS.items():
                    headers[name] = value
                headers["Cache-Control"] = "no-cache" if static else "no-store"
            await send(message)

        await self.app(scope, receive, with_headers)


def number(value: object) -> str:
    """A count or a token total with thousands separators (`12,345`); anything else as is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every value, including names and text from plugins and servers
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = number
    return env


def build_pages(app: App, token: Secret | None) -> ASGIApp:
    """The page app for `app`; `token` (the `[http]` token) turns the login on."""
    sessions = Sessions(token)
    pages = Pages(app, sessions, Changes(app), templates())

    async def page_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, PageError)
        return pages.error(request, exc)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            heading, message = "Not found", f"There is no page at {request.url.path}."
        elif exc.status_code == 405:
            heading, message = "Not allowed", f"{request.method} is not accepted here."
        else:  # a form Starlette could not read (too many fields, a bad encoding)
            heading, message = "Bad request", f"The request could not be read: {exc.detail}"
        if not isinstance(request.scope.get("state", {}).get("session"), Session):
            return PlainTextResponse(message + "\n", status_code=exc.status_code)
        return pages.error(request, PageError(exc.status_code, heading, message))

    async def crash(request: Request, exc: Exception) -> Response:
        log.error("the page %s failed", request.url.path, exc_info=exc)
        problem = PageError(
            500,
            "Something went wrong",
            "This page could not be shown; the server's log says why.",
        )
        try:
            return pages.error(request, problem)
        except Exception:  # noqa: BLE001 - the error page itself failed: plain text, no traceback
            return PlainTextResponse(problem.message + "\n", status_code=500)

    get, both = ["GET"], ["GET", "POST"]
    routes = [
        Route("/", pages.today, methods=get),
        Route("/reports", pages.reports, methods=get),
        Route("/reports/{generation}", pages.report, methods=get),
        Route("/records", pages.records, methods=get),
        Route("/records/{kind}/{id}/close", pages.close_record, methods=both),
        Route("/routines", pages.routines, methods=get),
        Route("/routines/{name}/run", pages.run_routine, methods=both),
        Route("/capabilities", pages.capabilities, methods=get),
        Route("/plugins", pages.plugins, methods=get),
        Route("/budget", pages.budget, methods=get),
        Route("/activity", pages.activity, methods=get),
        Route("/events", pages.events, methods=get),
        Route("/fragments/report", pages.report_fragment, methods=get),
        Route("/fragments/records", pages.records_fragment, methods=get),
        Route("/fragments/attention", pages.attention_fragment, methods=get),
        Route("/login", pages.login, methods=both),
        Route("/logout", pages.logout, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    starlette = Starlette(
        routes=routes,
        exception_handlers={
            PageError: page_error,
            HTTPException: http_error,
            Exception: crash,
        },
    )
    return SecurityHeaders(Authenticated(starlette, sessions))
