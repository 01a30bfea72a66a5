"""Connections: how many may be open, and how long one may take to say what it wants.

uvicorn bounds the idle time between requests (`timeout_keep_alive`) and the size of a head
(`h11_max_incomplete_event_size`), but not the time a head takes to arrive, and its
`limit_concurrency` counts only connections that have sent a whole head. So a client that
opens connections and never finishes a head held them forever, until the process ran out of
file descriptors and no one else could connect. `BoundedH11Protocol` is uvicorn's h11 protocol
with the two bounds it lacks:

* **a head deadline**: from the moment a connection opens, or the first byte of its next
  request, the request line and headers must arrive within `[http] header_timeout_seconds`;
  otherwise the connection is closed (with a 408 if it had sent anything);
* **a connection cap**, `[http] max_connections`, lowered to fit the process's open-file limit:
  at the cap, a new connection takes the place of the connection that has waited longest
  without a request in progress (a stalled head or an idle keep-alive), so stalled clients
  cannot lock out one that speaks; when every connection is busy the new one gets a 503.

`quiet_accept_errors` keeps asyncio from logging a traceback for every failed `accept()` when
the process is out of file descriptors anyway (CPython retries the whole backlog in a loop,
which wrote tens of thousands of them a second); `Throttled` folds repeated warnings into one
line.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

#: File descriptors kept for everything but client connections: the store, logs, pipes of
#: subprocesses that steps run, the event loop's own.
RESERVED_FILES = 64
CLOSE_408 = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 36\r\n\r\nthe request headers took too long.\r\n"
)
CLOSE_503 = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 34\r\n\r\ntoo many open connections; retry\r\n"
)


class Throttled:
    """A warning logged at most once per `every` seconds per kind, with how many were folded."""

    def __init__(self, every: float = 10.0) -> None:
        self.every = every
        self._last: dict[str, float] = {}
        self._folded: dict[str, int] = {}

    def warn(self, kind: str, message: str, *args: object) -> None:
        now = time.monotonic()
        if now - self._last.get(kind, -self.every) < self.every:
            self._folded[kind] = self._folded.get(kind, 0) + 1
            return
        self._last[kind] = now
        folded = self._folded.pop(kind, 0)
        suffix = f" (and {folded} more like it before)" if folded else ""
        log.warning(message + suffix, *args)


def connection_cap(configured: int) -> int:
    """`configured`, lowered so that client connections cannot use up the open-file limit."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or configured + RESERVED_FILES <= soft:
        return configured
    cap = max(soft - RESERVED_FILES, 1)
    log.warning(
        "[http] max_connections = %d does not fit the open-file limit (%d, `ulimit -n`): "
        "serving at most %d connections",
        configured,
        soft,
        cap,
    )
    return cap


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a head deadline and a connection cap (see the module).

    `limits` subclasses it with the numbers; uvicorn makes one instance per connection.
    """

    header_timeout: ClassVar[float] = 10.0
    max_connections: ClassVar[int] = 512
    throttled: ClassVar[Throttled] = Throttled()

    _head_timer: asyncio.TimerHandle | None = None
    _waiting_since = 0.0
    _received = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.max_connections and not self._make_room():
            self.throttled.warn(
                "busy",
                "refused a connection: %d connections are busy ([http] max_connections)",
                len(self.connections),
            )
            transport.write(CLOSE_503)
            transport.close()
            return
        super().connection_made(transport)
        self._await_head(received=False)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        if self.transport is not None:  # not a refused connection
            super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:  # a head still (or again) to come
            if self._head_timer is None:
                self._await_head(received=True)
            self._received = True
        else:
            self._stop_head_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._waiting_since = time.monotonic()  # idle from now, for `_make_room`

    def _await_head(self, *, received: bool) -> None:
        self._received = received
        self._waiting_since = time.monotonic()
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        self.throttled.warn(
            "head",
            "closed a connection from %s that did not send its request headers within %gs "
            "([http] header_timeout_seconds)",
            _peer(self.client),
            self.header_timeout,
        )
        if self._received:
            self.transport.write(CLOSE_408)
        self.transport.close()

    def _idle(self) -> bool:
        """No request in progress: a head not yet complete, or a keep-alive wait."""
        cycle = self.cycle
        in_request = cycle is not None and not cycle.response_complete
        return (
            not in_request and self.conn.their_state is h11.IDLE and not self.transport.is_closing()
        )

    def _make_room(self) -> bool:
        """Close the connection that has waited longest without a request; False if none."""
        idle = [c for c in self.connections if isinstance(c, BoundedH11Protocol) and c._idle()]
        if not idle:
            return False
        oldest = min(idle, key=lambda c: c._waiting_since)
        self.throttled.warn(
            "cap",
            "at the most open connections (%d, [http] max_connections): closed the one that "
            "waited longest without a request",
            self.max_connections,
        )
        oldest.transport.close()
        oldest.connections.discard(oldest)  # its `connection_lost` comes on a later turn
        return True


def bounded_protocol(header_timeout: float, max_connections: int) -> type[BoundedH11Protocol]:
    """`BoundedH11Protocol` with these numbers, for `uvicorn.Config(http=...)`."""

    class Bounded(BoundedH11Protocol):
        pass

    Bounded.header_timeout = header_timeout
    Bounded.max_connections = max_connections
    Bounded.throttled = Throttled()
    return Bounded


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Log a failed `accept()` (out of file descriptors) as one throttled line, not a traceback
    per attempt; anything else goes to the handler that was there."""
    previous = loop.get_exception_handler()
    throttled = Throttled()

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == "socket.accept() out of system resource":
            error = context.get("exception")
            throttled.warn(
                "accept",
                "cannot accept connections: %s (raise `ulimit -n` or lower "
                "[http] max_connections); retrying",
                getattr(error, "strerror", None) or error,
            )
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handle)


def _peer(client: tuple[str, int] | None) -> str:
    return f"{client[0]}:{client[1]}" if client else "an unknown address"
