"""Who may read the page, and proof that a form was sent from it.

* **Sessions** are signed, expiring cookie values, `KIND.EXPIRES.NONCE.SIGNATURE` (HMAC-SHA256).
  With `[http] token` configured the key is derived from the token, so every instance that
  shares the token accepts every other's sessions and a new token ends them all; without one
  (loopback only) the key is this process's own.
* **Authentication**: without a token every page is open and a visitor gets an anonymous
  session (so forms carry CSRF proof the same way); with a token a page needs the session the
  login sets (`user`) or `Authorization: Bearer <token>`, else a GET goes to `/login` and
  anything else gets 401.
* **CSRF**: every form carries `csrf` = HMAC(key, session value); a POST without the right one
  is refused. A browser cannot read another origin's page, so it cannot learn the value, and
  the cookie is `SameSite=Strict`, so another site's form arrives without it. A POST with a
  bearer header needs no form proof: no browser adds that header on its own. The login form
  is the exception: no session exists before it (the login sets no cookie until the token is
  right), so it proves the token alone and, like every POST, must not come from another
  origin (`same_origin`).

The token is compared in constant time and never logged.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prixfixe.mcp.http.guard import split_host
from prixfixe.secrets import Secret

log = logging.getLogger(__name__)

COOKIE = "prixfixe_session"
#: How long a login lasts.
SESSION_SECONDS = 12 * 3600
#: Paths a visitor reaches without a session: the login itself and what it is drawn with.
OPEN_PATHS = ("/login", "/static/")
#: Paths read by the page's script: a redirect to a login page means nothing to it.
SCRIPT_PATHS = ("/events", "/fragments/")

SessionKind = Literal["user", "anon"]


@dataclass(frozen=True)
class Session:
    """A visitor's session as the page layer sees it: how it was proved, and its cookie
    value (None with a bearer header, which needs no cookie)."""

    kind: SessionKind | Literal["bearer"]
    value: str | None
    #: Set when this request made the session: the cookie to send with the response.
    new: bool = False


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Sessions:
    """Signing and checking session values and the CSRF proof bound to them."""

    def __init__(self, token: Secret | None) -> None:
        self.token = token
        if token is not None:
            # Derived, not the token itself: a leaked cookie signature says nothing of it.
            self._key = hmac.new(
                token.reveal().encode(), b"prixfixe web session key v1", hashlib.sha256
            ).digest()
        else:
            self._key = secrets.token_bytes(32)
        #: Sessions logged out here, by nonce, until they would have expired anyway. Held by
        #: this process: another instance sharing the token accepts them until they expire.
        self._revoked: dict[str, int] = {}
        self._revoked_lock = threading.Lock()

    def _sign(self, text: str) -> str:
        return _b64(hmac.new(self._key, text.encode(), hashlib.sha256).digest())

    def issue(self, kind: SessionKind, *, now: float | None = None) -> str:
        expires = int((time.time() if now is None else now) + SESSION_SECONDS)
        body = f"{kind}.{expires}.{secrets.token_urlsafe(16)}"
        return f"{body}.{self._sign(body)}"

    def verify(self, value: str | None, *, now: float | None = None) -> SessionKind | None:
        """The kind of a valid, unexpired session value; None for anything else."""
        if not value or len(value) > 200:
            return None
        body, _, signature = value.rpartition(".")
        if not hmac.compare_digest(signature.encode(), self._sign(body).encode()):
            return None
        kind, _, rest = body.partition(".")
        expires, _, nonce = rest.partition(".")
        if kind not in ("user", "anon") or not expires.isdigit():
            return None
        if int(expires) < (time.time() if now is None else now):
            return None
        if nonce in self._revoked:
            return None
        return "user" if kind == "user" else "anon"

    def revoke(self, value: str | None, *, now: float | None = None) -> None:
        """End a valid session at once (logging out): its cookie is refused from now on."""
        if value is None or self.verify(value, now=now) is None:
            return
        _, expires, nonce = value.rpartition(".")[0].split(".", 2)
        moment = time.time() if now is None else now
        with self._revoked_lock:
            # Forget what has expired by itself: the set stays as small as the live logouts.
            self._revoked = {n: e for n, e in self._revoked.items() if e >= moment}
            self._revoked[nonce] = int(expires)

    def csrf(self, session: str) -> str:
        return self._sign(f"csrf.{session}")

    def csrf_ok(self, session: Session, given: str | None) -> bool:
        """Whether `given` is the form proof of `session` (a bearer request needs none)."""
        if session.kind == "bearer":
            return True
        if session.value is None or not given:
            return False
        return hmac.compare_digest(given.encode(), self.csrf(session.value).encode())

    def bearer_ok(self, headers: Headers) -> bool:
        scheme, _, credentials = (headers.get("authorization") or "").partition(" ")
        return (
            self.token is not None
            and scheme.lower() == "bearer"
            and self.token.matches(credentials.strip())
        )


def cookie_header(value: str, *, secure: bool, max_age: int = SESSION_SECONDS) -> str:
    """The `Set-Cookie` value: script cannot read it, no other site's request carries it
    (another port of the same host is the same site, though: cookies are not per port)."""
    flags = f"; Max-Age={max_age}; Path=/; HttpOnly; SameSite=Strict"
    return f"{COOKIE}={value}{flags}{'; Secure' if secure else ''}"


def cookie_value(headers: Headers) -> str | None:
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value
    return None


def safe_next(target: str | None) -> str:
    """Where a login may send the visitor on: a path of this site, else `/` (no open
    redirect: `//evil.example`, `https://evil.example`, `/\\evil.example` all give `/`)."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return "/"
    if any(ord(c) < 0x21 or c == "\\" for c in target):
        return "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return "/"
    return target


def same_origin(headers: Headers) -> bool:
    """Whether a POST may come from this page: a browser names where it comes from, in
    `Sec-Fetch-Site` (modern browsers) and `Origin`, which must be this page's (host and
    port), whatever `[http] allowed_origins` lets through to MCP (the page's `Referrer-Policy:
    same-origin` lets a browser name it; `null`, an opaque origin, is refused). Clients that
    are not browsers send neither; the CSRF proof (or a bearer header) still decides."""
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        return False
    origin = headers.get("origin")
    if origin is None:
        return True
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return False
    if not parts.hostname:
        return False
    default = 443 if parts.scheme == "https" else 80
    host, host_port = split_host(headers.get("host", ""))
    return parts.hostname.lower() == host and (port or default) == (host_port or default)


class Authenticated:
    """The page layer's gate (see the module): sets `scope["state"]["session"]`, sends the
    visitor to the login or refuses, and adds the cookie a new session needs."""

    def __init__(self, app: ASGIApp, sessions: Sessions) -> None:
        self.app = app
        self.sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        path: str = scope["path"]
        if scope["method"] not in ("GET", "HEAD") and not same_origin(headers):
            log.warning("refused a page %s from another origin, %r", scope["method"], path)
            await _plain(403, "Forbidden: a form from another site.", scope, receive, send)
            return
        session = self._session(headers, opening=path.startswith(OPEN_PATHS))
        if session is None:
            await self._refuse(scope, receive, send, path)
            return
        scope.setdefault("state", {})["session"] = session
        if not session.new or session.value is None:
            await self.app(scope, receive, send)
            return
        cookie = cookie_header(session.value, secure=scope.get("scheme") == "https")

        async def with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                response_headers = MutableHeaders(scope=message)
                if COOKIE not in response_headers.get("set-cookie", ""):
                    response_headers.append("Set-Cookie", cookie)
            await send(message)

        await self.app(scope, receive, with_cookie)

    def _session(self, headers: Headers, *, opening: bool) -> Session | None:
        """The request's session: a new anonymous one when no token is configured, one
        without a cookie for the login page itself; None when the visitor must log in."""
        sessions = self.sessions
        if sessions.bearer_ok(headers):
            return Session("bearer", None)
        value = cookie_value(headers)
        kind = sessions.verify(value)
        if kind == "user" or (kind == "anon" and sessions.token is None):
            return Session(kind, value)
        if sessions.token is None:
            return Session("anon", sessions.issue("anon"), new=True)
        if opening:
            # The login page and its style sheet: no cookie until the token is given.
            return Session("anon", None)
        return None

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        if scope["method"] in ("GET", "HEAD") and not path.startswith(SCRIPT_PATHS):
            query = scope.get("query_string", b"").decode("latin-1")
            target = path + (f"?{query}" if query else "")
            location = f"/login?next={quote(target, safe='/')}"
            await _redirect(location, scope, receive, send)
            return
        await _plain(401, "Unauthorized: log in at /login first.", scope, receive, send)


async def _redirect(location: str, scope: Scope, receive: Receive, send: Send) -> None:
    from starlette.responses import RedirectResponse

    response = RedirectResponse(location, status_code=303, headers={"Cache-Control": "no-store"})
    await response(scope, receive, send)


async def _plain(status: int, text: str, scope: Scope, receive: Receive, send: Send) -> None:
    from starlette.responses import PlainTextResponse

    response = PlainTextResponse(text + "\n", status_code=status)
    await response(scope, receive, send)
