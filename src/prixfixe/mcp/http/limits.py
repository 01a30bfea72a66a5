"""Bounds on each request, in time and size, as an ASGI layer between the guard and the SDK.

* **The body** is read here, whole, before the SDK sees the request (the SDK reads it whole
  too, so this costs no memory it would not): it must arrive within `[http]
  body_timeout_seconds` (else 408) and fit `[http] max_body_bytes` (else 413), and a client that
  hangs up mid-body ends the request with one line at INFO, not the SDK's traceback.
* **A standing event stream** (a session's GET) ends after `[http] session_idle_seconds`: while
  it is open the SDK counts the session as busy, so a client that walked away without closing
  it kept its session forever. A client still there opens the stream again (the SDK's client
  does, after a second), which is activity; one that is gone lets the session expire.
* **A stop** (`begin_stop`, `end_all`): requests still sending their body, and any that arrive
  afterwards, get 503 at once; calls being answered get the grace period (`calls_running`);
  whatever still runs after it is ended here, inside its own cancel scope, so uvicorn never
  has to cancel a task (which it reports with a traceback).

Every request ended early gets a complete answer: a 408/413/503 with `Connection: close` if
nothing was sent yet, else the end of its event stream.
"""

from __future__ import annotations

import logging

import anyio
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prixfixe.mcp.http.guard import error_response

log = logging.getLogger(__name__)

READING, CALL, STREAM = "reading", "call", "stream"


class _Answer:
    """`send`, remembering how far the answer got, so an ended request can be completed."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False
        self.complete = False

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            self.complete = True
        await self._send(message)

    async def finish(self, scope: Scope, status: int, message: str) -> None:
        if not self.started:
            await error_response(status, message, close=True)(scope, _no_body, self)
        elif not self.complete:
            await self({"type": "http.response.body", "body": b"", "more_body": False})


async def _no_body() -> Message:
    return {"type": "http.disconnect"}


class RequestLimits:
    """The body deadline and size, the stream lifetime and the stop (see the module)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        body_timeout: float,
        max_body_bytes: int,
        stream_seconds: float,
    ) -> None:
        self.app = app
        self.body_timeout = body_timeout
        self.max_body_bytes = max_body_bytes
        self.stream_seconds = stream_seconds
        self.stopping = False
        self._requests: dict[anyio.CancelScope, str] = {}
        self._calls_done = anyio.Event()
        self._calls_done.set()

    @property
    def calls_running(self) -> int:
        return sum(1 for phase in self._requests.values() if phase == CALL)

    async def wait_calls(self) -> None:
        """Until no call is being answered (or a moment has passed: the caller polls)."""
        with anyio.move_on_after(0.1):
            await self._calls_done.wait()

    def begin_stop(self) -> None:
        """No new requests; requests still sending their body end now."""
        self.stopping = True
        self._cancel(READING)

    def end_all(self) -> None:
        """End every request still being answered: calls past the grace, standing streams."""
        self._cancel(READING, CALL, STREAM)

    def _cancel(self, *phases: str) -> None:
        for cancel, phase in self._requests.items():
            if phase in phases:
                cancel.cancel()

    def _enter(self, cancel: anyio.CancelScope, phase: str) -> None:
        self._requests[cancel] = phase
        if phase == CALL:
            self._calls_done = anyio.Event() if self._calls_done.is_set() else self._calls_done

    def _leave(self, cancel: anyio.CancelScope) -> None:
        self._requests.pop(cancel, None)
        if not self.calls_running:
            self._calls_done.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        answer = _Answer(send)
        if self.stopping:
            await answer.finish(scope, 503, "Service Unavailable: the server is stopping")
            return
        with anyio.CancelScope() as cancel:
            self._enter(cancel, READING)
            try:
                replay = await self._read_body(scope, receive, answer)
                if replay is None:
                    return
                if scope["method"] == "GET":
                    self._enter(cancel, STREAM)
                    cancel.deadline = anyio.current_time() + self.stream_seconds
                else:
                    self._enter(cancel, CALL)
                await self.app(scope, replay, answer)
            finally:
                self._leave(cancel)
        if cancel.cancelled_caught:
            # A stop, or the end of a standing stream's lifetime: answer what was left open.
            await answer.finish(scope, 503, "Service Unavailable: the server is stopping")

    async def _read_body(self, scope: Scope, receive: Receive, answer: _Answer) -> Receive | None:
        """A `receive` that replays the whole body, or None once the request was answered."""
        length = Headers(scope=scope).get("content-length", "")
        if length.isdigit() and int(length) > self.max_body_bytes:
            await self._too_large(scope, answer)
            return None
        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(self.body_timeout) as deadline:
            while True:
                message = await receive()
                if message["type"] != "http.request":  # the client hung up
                    log.info(
                        "%s hung up before sending its whole request body (%d bytes came)",
                        _peer(scope),
                        size,
                    )
                    return None
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body_bytes:
                    await self._too_large(scope, answer)
                    return None
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
        if deadline.cancelled_caught:
            log.warning(
                "answered 408 to %s, which did not send its request body within %gs "
                "([http] body_timeout_seconds)",
                _peer(scope),
                self.body_timeout,
            )
            await answer.finish(
                scope,
                408,
                f"Request Timeout: the body did not arrive within {self.body_timeout:g}s",
            )
            return None
        return _replay(b"".join(chunks), receive)

    async def _too_large(self, scope: Scope, answer: _Answer) -> None:
        log.warning(
            "answered 413 to %s: its request body is over %d bytes ([http] max_body_bytes)",
            _peer(scope),
            self.max_body_bytes,
        )
        await answer.finish(
            scope,
            413,
            f"Content Too Large: request bodies are limited to {self.max_body_bytes} bytes",
        )


def _replay(body: bytes, receive: Receive) -> Receive:
    """The whole body as one message, then whatever the connection says next (a hang-up)."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


def _peer(scope: Scope) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "a client"
