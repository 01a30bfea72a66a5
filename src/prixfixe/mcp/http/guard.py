"""The ASGI layer in front of the SDK's streamable HTTP app: who may talk to the server.

In order, before the request reaches the SDK:

1. **Host** (DNS rebinding): the `Host` header must name this server — a loopback name, the
   bound address, or one of `[http] allowed_hosts` — else 421 Misdirected Request.
2. **Origin** (DNS rebinding, browsers): a request that carries `Origin` must come from a
   loopback origin or one of `[http] allowed_origins`, else 403 Forbidden. Requests without
   `Origin` (every non-browser client) pass.
3. **Bearer token**, when one is configured: `Authorization: Bearer <token>`, compared in
   constant time, else 401 with `WWW-Authenticate: Bearer`.

Then `limits.py` reads the body (408, 413) and the SDK applies sessions and the protocol.
Every refusal is logged, one line with the reason and the client's address, never with the
token or the `Authorization` header, and closes the connection (the body was not read).

When the web page is served beside MCP (`pages`), every path outside the MCP endpoint is a
page: Host and Origin are checked the same way (a refusal is plain text there, not JSON-RPC),
and the token is left to the page layer, which accepts it as a bearer header or as the signed
session cookie its login sets (`prixfixe.web.auth`). The pages send `Referrer-Policy:
same-origin`, so a browser names their own origin on their forms, and `Origin: null` (a
sandboxed frame, an opaque origin) is refused on every path. The MCP endpoint keeps all three
checks as they were.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from prixfixe.mcp.http.settings import HttpSettings

log = logging.getLogger(__name__)

REALM = "prixfixe"
LOOPBACK_ORIGIN_HOSTS = ("127.0.0.1", "localhost", "::1")


def split_host(value: str) -> tuple[str, int | None]:
    """`example.org:8765` → ("example.org", 8765); `[::1]:80` → ("::1", 80)."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    elif value.count(":") == 1:
        name, _, port_text = value.partition(":")
    else:
        name, port_text = value, ""
    try:
        port = int(port_text) if port_text else None
    except ValueError:
        return value, None
    return name, port


def host_allowed(header: str | None, allowed: tuple[str, ...]) -> bool:
    if not header:
        return False
    if "*" in allowed:
        return True
    name, port = split_host(header)
    for entry in allowed:
        if entry.startswith("[") or entry.count(":") == 1:
            want_name, want_port = split_host(entry)
        else:  # a bare name or IPv6 address: any port
            want_name, want_port = entry.lower(), None
        if name == want_name and (want_port is None or want_port == port):
            return True
    return False


def origin_allowed(origin: str, allowed: tuple[str, ...]) -> bool:
    if "*" in allowed:
        return True
    if origin in allowed or origin.rstrip("/") in allowed:
        return True
    try:
        parts = urlsplit(origin)
        hostname = parts.hostname
    except ValueError:
        return False
    if parts.scheme in ("http", "https") and hostname in LOOPBACK_ORIGIN_HOSTS:
        return True
    for entry in allowed:
        # `https://app.example.org:*` accepts any port of that scheme and host.
        prefix = entry[:-1]
        if entry.endswith(":*") and origin.startswith(prefix) and origin[len(prefix) :].isdigit():
            return True
    return False


def on_mcp_path(path: str, mcp_path: str) -> bool:
    """Whether a request for `path` is for the MCP endpoint at `mcp_path` (or below it)."""
    return path == mcp_path or path.startswith(mcp_path.rstrip("/") + "/")


def text_response(status: int, message: str) -> Response:
    """A refusal a person reads in a browser: the message as plain text, connection closed."""
    return Response(
        message + "\n",
        status_code=status,
        media_type="text/plain; charset=utf-8",
        headers={"Connection": "close", "X-Content-Type-Options": "nosniff"},
    )


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None, *, close: bool = False
) -> Response:
    """A JSON-RPC error (no id) as an HTTP answer; `close` ends the connection after it (the
    request's body was not read, so the connection cannot carry another request)."""
    error = ErrorData(code=INVALID_REQUEST, message=message)
    body = JSONRPCError(jsonrpc="2.0", id=None, error=error)
    headers = {**(headers or {}), **({"Connection": "close"} if close else {})}
    return Response(
        body.model_dump_json(by_alias=True, exclude_none=True),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


class Guard:
    """Host, Origin and bearer-token checks in front of `app`.

    `pages`: paths outside `settings.path` are web pages, which authenticate themselves;
    `mcp`: whether `settings.path` is served at all (`prixfixe web` serves pages only)."""

    def __init__(
        self, app: ASGIApp, settings: HttpSettings, *, pages: bool = False, mcp: bool = True
    ) -> None:
        self.app = app
        self.settings = settings
        self.pages = pages
        self.mcp = mcp

    def is_page(self, path: str) -> bool:
        return self.pages and not (self.mcp and on_mcp_path(path, self.settings.path))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        page = self.is_page(scope.get("path", ""))
        response = self.check(Headers(scope=scope), scope.get("client"), page=page)
        if response is not None:
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def check(
        self, headers: Headers, client: tuple[str, int] | None = None, *, page: bool = False
    ) -> Response | None:
        """The refusal for a request with these headers, or None to let it through; a page's
        token is checked by the page layer."""
        settings = self.settings
        refuse = text_response if page else (lambda s, m: error_response(s, m, close=True))
        peer = f"{client[0]}:{client[1]}" if client else "a client"
        host = headers.get("host")
        if not host_allowed(host, settings.allowed_hosts):
            log.warning(
                "refused a request for host %r, from %s (421; see [http] allowed_hosts)", host, peer
            )
            return refuse(
                421,
                f"Misdirected Request: this server does not answer for host {host!r} "
                "(a DNS rebinding guard; the operator can add it to [http] allowed_hosts)",
            )
        origin = headers.get("origin")
        if origin is not None and not origin_allowed(origin, settings.allowed_origins):
            log.warning(
                "refused a request from origin %r, from %s (403; [http] allowed_origins)",
                origin,
                peer,
            )
            return refuse(
                403,
                f"Forbidden: requests from origin {origin!r} are not accepted "
                "(the operator can add it to [http] allowed_origins)",
            )
        token = settings.token
        if token is None or page:
            return None
        scheme, _, credentials = (headers.get("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            if not scheme:
                log.warning("refused a request without a bearer token, from %s (401)", peer)
            else:
                # Only the scheme's name, cut short: the rest may be a credential.
                log.warning(
                    "refused a request with %s authorization, not a bearer token, from %s (401)",
                    scheme[:20] if scheme.isalnum() else "another kind of",
                    peer,
                )
            return error_response(
                401,
                "Unauthorized: this server needs 'Authorization: Bearer <token>'",
                {"WWW-Authenticate": f'Bearer realm="{REALM}"'},
                close=True,
            )
        if not token.matches(credentials.strip()):
            log.warning("refused a request with a wrong bearer token, from %s (401)", peer)
            return error_response(
                401,
                "Unauthorized: the bearer token is not valid",
                {"WWW-Authenticate": f'Bearer realm="{REALM}", error="invalid_token"'},
                close=True,
            )
        return None
