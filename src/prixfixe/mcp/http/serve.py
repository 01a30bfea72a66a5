"""Run the MCP server over streamable HTTP on uvicorn until SIGINT or SIGTERM.

The layers, outside in: uvicorn with `connections.BoundedH11Protocol` (a deadline for each
request's head, a cap on connections), `guard.Guard` (Host, Origin, token), `limits.
RequestLimits` (body deadline and size, stream lifetime, the stop), the SDK's app with
`sessions.EvictingSessionManager` (at the session cap the session idle longest makes room).

With the web page (`prixfixe.web`, built by the CLI and passed in as `pages`: this layer never
imports it), `Routed` sends the MCP path to the SDK's app and every other path to the pages,
both behind the same guard and limits, so a stop ends the page's event streams too.

A stop is graceful and bounded: the listening socket closes, requests still sending their body
get 503, calls being answered get up to `[http] shutdown_grace_seconds` to finish, whatever is
left is ended; then the SDK's session manager and the server's lifespan end (closing the
store), and the process exits with status 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import anyio
import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from sse_starlette.sse import AppStatus
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from prixfixe.errors import PrixfixeError
from prixfixe.leash.redact import install_logging_redaction
from prixfixe.mcp.http.connections import bounded_protocol, connection_cap, quiet_accept_errors
from prixfixe.mcp.http.guard import Guard, on_mcp_path
from prixfixe.mcp.http.limits import RequestLimits
from prixfixe.mcp.http.sessions import EvictingSessionManager
from prixfixe.mcp.http.settings import HttpSettings

if TYPE_CHECKING:
    from prixfixe.app import App

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: How long uvicorn waits for connections to close after the grace (when `RequestLimits` has
#: ended every request) before it cancels what is left.
BACKSTOP_SECONDS = 5


class Routed:
    """The MCP endpoint to the SDK's app, every other path to the web page (when served).

    The lifespan goes to the SDK's app (its session manager and the server's lifespan); with
    pages only there is none to run, so it is answered here."""

    def __init__(self, mcp: ASGIApp | None, pages: ASGIApp | None, path: str) -> None:
        self.mcp = mcp
        self.pages = pages
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            if self.mcp is not None:
                await self.mcp(scope, receive, send)
            else:
                await _empty_lifespan(receive, send)
            return
        if self.mcp is not None and (self.pages is None or on_mcp_path(scope["path"], self.path)):
            await self.mcp(scope, receive, send)
        elif self.pages is not None:
            await self.pages(scope, receive, send)


class Direct:
    """Requests for exactly `path` straight to `endpoint`; the rest (the lifespan, other
    paths: 404, `path/`: a redirect) to `app`, the Starlette app that routes `path` to the same
    `endpoint`. Starlette's error and exception middleware and its router did nothing for the
    endpoint's requests (the SDK answers its own errors; uvicorn answers 500 and logs an
    exception either way) but cost about a twentieth of the server's time per call
    (docs/benchmarks.md, HTTP load)."""

    def __init__(self, endpoint: ASGIApp, app: ASGIApp, path: str) -> None:
        self.endpoint = endpoint
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == self.path:
            await self.endpoint(scope, receive, send)
        else:
            await self.app(scope, receive, send)


async def _empty_lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def build_asgi(
    app: App, settings: HttpSettings, *, pages: ASGIApp | None = None, mcp: bool = True
) -> tuple[Guard, RequestLimits]:
    """The SDK's streamable HTTP app for `app`'s server (unless `mcp` is false) and the web
    `pages` (if given) behind prixfixe's limits and guard: the guard is the app to serve, the
    limits are what a stop ends."""
    if not mcp and pages is None:
        raise ValueError("nothing to serve: neither MCP nor pages")
    starlette_app: ASGIApp | None = None
    if mcp:
        from prixfixe.mcp.server import build_server

        server = build_server(app, stateless=settings.stateless)
        manager = EvictingSessionManager(
            app=server,
            stateless=settings.stateless,
            max_request_body_size=settings.max_body_bytes,
            session_idle_timeout=settings.session_idle_seconds,
            max_sessions=settings.max_sessions,
            # Host and Origin are checked once, by the guard (with prixfixe's allowlists and
            # messages); the SDK still checks Content-Type, sessions and the body size.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        endpoint = StreamableHTTPASGIApp(manager)
        # What the SDK's `streamable_http_app` builds, with prixfixe's session manager; the
        # endpoint's own requests skip its middleware and router (`Direct`).
        starlette_app = Direct(
            endpoint,
            Starlette(
                routes=[Route(settings.path, endpoint=endpoint)],
                lifespan=lambda _: manager.run(),
            ),
            settings.path,
        )
    if pages is not None:
        inner: ASGIApp = Routed(starlette_app, pages, settings.path)
    else:
        assert starlette_app is not None  # `mcp` is true: checked above
        inner = starlette_app
    limited = RequestLimits(
        inner,
        body_timeout=settings.body_timeout_seconds,
        max_body_bytes=settings.max_body_bytes,
        stream_seconds=settings.session_idle_seconds,
    )
    guard = Guard(limited, settings, pages=pages is not None, mcp=mcp)
    return guard, limited


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0 picks a free one); a clear error if taken."""
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise PrixfixeError(f"cannot listen on {host}:{port}: {exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise PrixfixeError(f"cannot listen on {host}:{port}: {reason}") from None
    sock.set_inheritable(True)
    return sock


def endpoint_url(sock: socket.socket, settings: HttpSettings) -> str:
    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}{settings.path}"


class UvicornServer(uvicorn.Server):
    """uvicorn's server, telling when it is ready, stopping within the grace period, and
    treating SIGINT/SIGTERM as a clean stop (uvicorn re-raises the signal after its graceful
    shutdown, which would end the process with the signal's status instead of 0)."""

    def __init__(
        self,
        config: uvicorn.Config,
        limits: RequestLimits,
        grace: float,
        on_started: Callable[[], None],
    ) -> None:
        super().__init__(config)
        self.limits = limits
        self.grace = grace
        self.on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        # sse-starlette ends every SSE stream the moment a signal arrives, which would cut
        # off the answers of calls in flight (they are SSE streams too). prixfixe ends them
        # itself, in `shutdown`, after those calls are answered.
        AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]
        await super().startup(sockets=sockets)
        if self.started:
            self.on_started()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()  # accept nothing new while the calls in flight finish
        self.limits.begin_stop()  # requests still sending their body end now
        with anyio.move_on_after(self.grace):
            # Polled, so that a second Ctrl-C (`force_exit`) ends the wait at once.
            while self.limits.calls_running and not self.force_exit:
                await self.limits.wait_calls()
        self.limits.end_all()  # calls past the grace, and the standing event streams
        AppStatus.should_exit = True
        await super().shutdown(sockets=sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in HANDLED_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


async def serve_http(
    app: App,
    settings: HttpSettings,
    *,
    announce: Callable[[str], None] | None = None,
    pages: ASGIApp | None = None,
    mcp: bool = True,
) -> None:
    """Serve until a signal; `announce` gets one line once the server accepts requests.
    `pages`: the web page's ASGI app, served on every path but MCP's; `mcp` false serves
    only the pages (`prixfixe web`)."""
    guard, limits = build_asgi(app, settings, pages=pages, mcp=mcp)
    sock = listen(settings.host, settings.port)
    url = endpoint_url(sock, settings)
    page_url = url.removesuffix(settings.path) + "/" if pages is not None else None
    config = uvicorn.Config(
        guard,
        http=bounded_protocol(
            settings.header_timeout_seconds, connection_cap(settings.max_connections)
        ),
        lifespan="on",
        log_level="warning",
        access_log=False,
        server_header=False,
        ws="none",
        timeout_keep_alive=settings.keep_alive_seconds,
        # A backstop only: by the end of the grace `RequestLimits` has ended every request.
        timeout_graceful_shutdown=BACKSTOP_SECONDS,
    )
    install_logging_redaction()  # uvicorn.Config just gave its loggers their own handlers
    say = announce or _stderr
    grace = settings.shutdown_grace_seconds
    ready = _ready_line(url, settings, page_url, mcp=mcp)
    server = UvicornServer(config, limits, grace, lambda: say(ready))
    quiet_accept_errors(asyncio.get_running_loop())
    try:
        await server.serve(sockets=[sock])
    finally:
        sock.close()
        # The lifespan closes the store; a forced stop (a second Ctrl-C) skips it.
        app.close_store()
    if server.started:
        say("prixfixe: stopped; the store is closed")
    elif not server.should_exit:
        raise PrixfixeError("the HTTP server did not start (see the messages above)")


def _ready_line(
    url: str, settings: HttpSettings, page_url: str | None = None, *, mcp: bool = True
) -> str:
    mode = (
        "stateless"
        if settings.stateless
        else f"stateful sessions, idle after {settings.session_idle_seconds:g}s"
    )
    auth = (
        f"bearer token from {settings.token_source}"
        if settings.token is not None
        else "no token (loopback only)"
    )
    if not mcp and page_url is not None:
        login = "; log in with the token" if settings.token is not None else ""
        return f"prixfixe: serving the web page on {page_url} ({auth}{login})"
    pages = f"; web page on {page_url}" if page_url is not None else ""
    return f"prixfixe: serving MCP on {url} ({mode}; {auth}{pages})"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
