"""Live updates: the store's changes as server-sent events an open page listens to.

The app tells its store observers of every committed write, on the writing thread, and of
other instances' writes on a shared PostgreSQL store; `Changes` turns them into two topics,
`report` (a report was kept: a write to the routines plugin's own table) and `records` (a
record was put or closed), each carrying the store generation of the write. Events are level
triggers ("read it again"), so a listener that falls behind gets the newest generation of
each topic once, never a queue. A writer never waits for the event loop: the wake-up is
scheduled onto it, as `resources/notify.py` does for resource subscriptions.

Observers hear only this process's writes (and, on PostgreSQL, other instances' record
writes): a report `prixfixe run` keeps from another process, or a record it writes to the
SQLite file, is not announced to this one. So each stream also looks at the store every
`POLL_SECONDS` (two small reads: the store generation and the newest report's, one read
shared by the streams that poll at about the same time) and sends what moved that no
observer announced.

A stream ends when the client goes, or when the server stops (it is a GET behind
`RequestLimits`, which ends standing streams after the grace).
"""

from __future__ import annotations

import json
import logging
import threading
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import anyio.to_thread
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from prixfixe.routines import REPORTS_OWNER
from prixfixe.store.api import StoreChange

if TYPE_CHECKING:
    from prixfixe.app import App

log = logging.getLogger(__name__)

#: Seconds between keep-alive comments on an idle stream (proxies close silent ones).
KEEP_ALIVE_SECONDS = 15
#: How long a browser waits before reconnecting a dropped stream, in milliseconds.
RETRY_MS = 3000
#: How often a stream looks for writes no observer announced (other processes').
POLL_SECONDS = 2.0
#: Open streams a process serves at once: each holds a connection, so they are capped well
#: below `[http] max_connections` (a page past the cap gets 503 and its browser tries again).
MAX_STREAMS = 64
#: A stream ends after this long; the page's EventSource opens a new one `RETRY_MS` later, so
#: no stream holds its connection for the whole of a long idle session.
STREAM_SECONDS = 600.0


def topic_of(change: StoreChange) -> str | None:
    if change.op in ("put", "close"):
        return "records"
    if change.op == "slice" and change.owner == REPORTS_OWNER:
        return "report"
    return None


class _Listener:
    def __init__(self) -> None:
        self.pending: dict[str, int] = {}
        self.wake = anyio.Event()


class Changes:
    """The app's store changes, fanned out to each open event stream."""

    def __init__(self, app: App) -> None:
        self.app = app
        # Weak: a stream whose body never started (its client left first) drops its listener.
        self._listeners: weakref.WeakSet[_Listener] = weakref.WeakSet()
        #: The last poll's `snapshot` and when it was read (the event loop's clock).
        self._last: tuple[float, tuple[int, int]] | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._loop_thread: int | None = None
        app.observe_store(self.observe)

    def observe(self, change: StoreChange) -> None:
        """A store observer: any thread, never blocks, never raises."""
        topic = topic_of(change)
        token = self._token
        if topic is None or token is None:
            return
        if threading.get_ident() == self._loop_thread:
            self._publish(topic, change.generation)
            return
        try:
            token.backend_class.run_sync_soon(
                self._publish, (topic, change.generation), token.native_token
            )
        except RuntimeError as exc:  # the event loop has finished: no page is listening
            log.debug("page event not sent, the server has stopped: %s", exc)

    def _publish(self, topic: str, generation: int) -> None:
        for listener in self._listeners:
            listener.pending[topic] = max(generation, listener.pending.get(topic, 0))
            listener.wake.set()

    def snapshot(self) -> tuple[int, int]:
        """The store's generation and the newest kept report's (0: none); blocks."""
        store = self.app.store
        rows = store.slice(REPORTS_OWNER).query("SELECT max(generation) FROM {prefix}reports")
        newest = rows[0][0] if rows and rows[0][0] is not None else 0
        return store.generation(), int(newest)

    async def _polled(self) -> tuple[int, int]:
        """`snapshot`, shared by the open streams: each polls every `POLL_SECONDS`, and one
        read serves all that poll within half of that (not one read per open page)."""
        now = anyio.current_time()
        if self._last is not None and now - self._last[0] < POLL_SECONDS / 2:
            return self._last[1]
        seen = await anyio.to_thread.run_sync(self.snapshot)
        self._last = (anyio.current_time(), seen)
        return seen

    async def events(self, request: Request, listener: _Listener) -> AsyncIterator[ServerSentEvent]:
        """One page's stream: each topic's newest generation, as it changes, for at most
        `STREAM_SECONDS` (the browser then opens another)."""
        if self._token is None:
            self._token = anyio.lowlevel.current_token()
            self._loop_thread = threading.get_ident()
        ends = anyio.current_time() + STREAM_SECONDS
        try:
            # Opened first: a shared (PostgreSQL) store hears other instances' writes once open.
            seen, report = await anyio.to_thread.run_sync(self.snapshot)
            yield ServerSentEvent(comment="connected", retry=RETRY_MS)
            while anyio.current_time() < ends:
                pending: dict[str, int] = {}
                with anyio.move_on_after(POLL_SECONDS):
                    await listener.wake.wait()
                if listener.wake.is_set():
                    listener.wake = anyio.Event()
                    pending, listener.pending = listener.pending, {}
                    seen = max([seen, *pending.values()])
                    report = max(report, pending.get("report", 0))
                else:
                    generation, newest = await self._polled()
                    if generation > seen:
                        if newest != report:
                            pending["report"] = report = newest
                        if generation != newest:  # something besides that report was written
                            pending["records"] = generation
                    seen = max(seen, generation)
                for topic, generation in pending.items():
                    yield ServerSentEvent(data=json.dumps({"generation": generation}), event=topic)
        finally:
            self._listeners.discard(listener)

    def response(self, request: Request) -> Response:
        if len(self._listeners) >= MAX_STREAMS:
            log.warning("refused a live page stream: %d are open (503)", MAX_STREAMS)
            return PlainTextResponse(
                f"Service Unavailable: {MAX_STREAMS} live pages are open; this one tries again",
                503,
                headers={"Retry-After": "30", "Cache-Control": "no-store"},
            )
        listener = _Listener()
        self._listeners.add(listener)  # counted from now, before its body starts
        headers: dict[str, Any] = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return EventSourceResponse(
            self.events(request, listener),
            ping=KEEP_ALIVE_SECONDS,
            headers=headers,
            send_timeout=30,
        )
