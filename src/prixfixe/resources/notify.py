"""Change notifications, in both protocol revisions, to exactly the sessions that asked.

- 2025-11-25: a connection calls `resources/subscribe` / `resources/unsubscribe`; a change
  to a URI sends `notifications/resources/updated` on each connection subscribed to it.
  `notifications/resources/list_changed` (and `tools/list_changed`) go to every connection
  that has listed resources (tools). A connection's subscriptions end with it.
- 2026-07-28: there are no connections to remember; a client opens `subscriptions/listen`
  naming the URIs (and list changes) it wants, and the SDK's `ListenHandler` delivers the
  events this module publishes on its bus, filtered per stream.

Changes come from anywhere — a store write in a worker thread, a plugin, the registry — and
from any thread: `changed()` only records the event (coalescing repeats: notifications are
level triggers, "this changed, read it again") and wakes a pump task running in the server's
event loop, which sends them in the order they happened. One pump runs per server lifespan
entered (one per connection on stdio); a lock lets only one deliver at a time, so order holds.

A `Watcher` (a mounted server's namespace) is told of each subscriber a URI gains and loses,
in both revisions, so it can subscribe upstream while anyone listens: `watch` is awaited
before a `resources/subscribe` is answered (its error refuses the subscription) and before a
listen stream is acknowledged (there it is logged: a listen names many URIs, and a URI that
never fires is what the spec allows); `unwatch` must not block.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

import anyio
import anyio.lowlevel
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types import SubscriptionsListenRequestParams, SubscriptionsListenResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from prixfixe.errors import PrixfixeError

log = logging.getLogger(__name__)


class Watcher(Protocol):
    """Told of each subscriber a URI gains (`watch`, awaited, with the request that subscribes;
    raise a `PrixfixeError` to refuse) and loses (`unwatch`, never blocking). URIs it does not
    serve it ignores."""

    async def watch(self, uri: str, request: ServerRequestContext[Any] | None = None) -> None: ...

    def unwatch(self, uri: str) -> None: ...


def connection_of(ctx: ServerRequestContext[Any]) -> Connection | None:
    """The connection a handshake-era request came on; None on 2026-07-28 (stateless).

    The SDK hands handlers a per-request `ServerSession`; the connection behind it (the same
    for every request of one client, with an exit stack that runs when it closes) is not
    exposed on the low-level context, so it is read here, in one place."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


class Notifier:
    """Who is subscribed to what, and the delivery of change events to them."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen: ListenHandler = _WatchedListen(self)
        self.watchers: list[Watcher] = []
        self._subscriptions: dict[Connection, set[str]] = {}
        self._listeners: dict[Connection, set[type[ServerEvent]]] = {}
        self._pending: dict[ServerEvent, None] = {}
        self._wake: anyio.Event | None = None
        self._deliver_lock: anyio.Lock | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._loop_thread: int | None = None
        self._pumps = 0
        self.delivered = 0  # notifications handed to the transport (tests and doctor read it)

    # -- handshake-era subscriptions --------------------------------------------------------

    async def subscribe(self, ctx: ServerRequestContext[Any], uri: str) -> None:
        connection = connection_of(ctx)
        if connection is None or uri in self._subscriptions.get(connection, ()):
            return
        await self.watch(uri, ctx)  # a watcher's refusal refuses the subscription
        connection = self._track(ctx)
        if connection is not None:
            self._subscriptions.setdefault(connection, set()).add(uri)

    async def unsubscribe(self, ctx: ServerRequestContext[Any], uri: str) -> None:
        connection = connection_of(ctx)
        uris = self._subscriptions.get(connection, set()) if connection is not None else set()
        if uri in uris:
            uris.discard(uri)
            self.unwatch(uri)

    async def watch(self, uri: str, request: ServerRequestContext[Any] | None = None) -> None:
        """One more subscriber to `uri` (asked for by `request`): tell the watchers (any may
        refuse)."""
        told: list[Watcher] = []
        try:
            for watcher in self.watchers:
                await watcher.watch(uri, request)
                told.append(watcher)
        except BaseException:
            for watcher in told:
                watcher.unwatch(uri)
            raise

    def unwatch(self, uri: str) -> None:
        """One subscriber fewer to `uri`."""
        for watcher in self.watchers:
            watcher.unwatch(uri)

    def listening(self, ctx: ServerRequestContext[Any], event: type[ServerEvent]) -> None:
        """Remember that this connection has seen a listing, so it hears when it changes."""
        connection = self._track(ctx)
        if connection is not None:
            self._listeners.setdefault(connection, set()).add(event)

    def subscribers(self, uri: str) -> int:
        """How many handshake-era connections are subscribed to `uri`."""
        return sum(1 for uris in self._subscriptions.values() if uri in uris)

    def _track(self, ctx: ServerRequestContext[Any]) -> Connection | None:
        connection = connection_of(ctx)
        if connection is None:
            return None
        if connection not in self._subscriptions and connection not in self._listeners:
            connection.exit_stack.callback(self._forget, connection)
        return connection

    def _forget(self, connection: Connection) -> None:
        for uri in self._subscriptions.pop(connection, set()):
            self.unwatch(uri)
        self._listeners.pop(connection, None)

    # -- recording changes (any thread) -----------------------------------------------------

    def changed(self, *uris: str) -> None:
        """The content at each URI changed: tell whoever subscribed to it."""
        self._record([ResourceUpdated(uri) for uri in uris])

    def list_changed(self) -> None:
        """The set of resources (or templates) changed."""
        self._record([ResourcesListChanged()])

    def tools_changed(self) -> None:
        """The default `tools/list` changed."""
        self._record([ToolsListChanged()])

    def prompts_changed(self) -> None:
        """The set of prompts changed."""
        self._record([PromptsListChanged()])

    def _record(self, events: list[ServerEvent]) -> None:
        if self._token is None:
            return  # no server is running: nobody can be subscribed
        if threading.get_ident() == self._loop_thread:
            self._enqueue(events)
            return
        token = self._token
        try:
            # Scheduled, not waited for: a writer never blocks on the event loop, so a loop
            # that is itself waiting for that writer cannot deadlock.
            token.backend_class.run_sync_soon(self._enqueue, (events,), token.native_token)
        except RuntimeError as exc:  # the event loop has finished: nobody is left to tell
            log.debug("change not announced, the server has stopped: %s", exc)

    def _enqueue(self, events: list[ServerEvent]) -> None:
        for event in events:
            self._pending[event] = None
        if self._wake is not None:
            self._wake.set()

    # -- delivering (the server's event loop) -----------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Deliver changes while the server runs (entered by the server's lifespan)."""
        self._token = anyio.lowlevel.current_token()
        self._loop_thread = threading.get_ident()
        if self._wake is None:
            self._wake = anyio.Event()
            self._deliver_lock = anyio.Lock()
        self._pumps += 1
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._pump)
                try:
                    yield
                finally:
                    tg.cancel_scope.cancel()
        finally:
            self._pumps -= 1
            if self._pumps == 0:
                # The last server run is over: end listen streams, and let a later run (on
                # another event loop, in tests) make its own loop-bound primitives.
                self.listen.close()
                self._token = self._loop_thread = None
                self._wake = self._deliver_lock = None

    async def _pump(self) -> None:
        lock = self._deliver_lock
        assert lock is not None
        while True:
            wake = self._wake
            assert wake is not None
            if not self._pending:
                await wake.wait()
                if self._wake is wake:
                    self._wake = anyio.Event()
                continue
            async with lock:
                batch = list(self._pending)
                self._pending.clear()
                for event in batch:
                    await self._deliver(event)

    async def _deliver(self, event: ServerEvent) -> None:
        for connection, uris in list(self._subscriptions.items()):
            if isinstance(event, ResourceUpdated) and event.uri in uris:
                await connection.send_resource_updated(event.uri)
                self.delivered += 1
        for connection, kinds in list(self._listeners.items()):
            if type(event) in kinds:
                if isinstance(event, ResourcesListChanged):
                    await connection.send_resource_list_changed()
                elif isinstance(event, PromptsListChanged):
                    await connection.send_prompt_list_changed()
                else:
                    await connection.send_tool_list_changed()
                self.delivered += 1
        await self.bus.publish(event)


class _WatchedListen(ListenHandler):
    """The SDK's `subscriptions/listen`, telling the notifier's watchers of each URI a
    stream names for as long as the stream lasts."""

    def __init__(self, notifier: Notifier) -> None:
        super().__init__(notifier.bus)
        self._notifier = notifier

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: SubscriptionsListenRequestParams
    ) -> SubscriptionsListenResult:
        notifier = self._notifier
        watched: list[str] = []
        try:
            for uri in dict.fromkeys(params.notifications.resource_subscriptions or ()):
                try:
                    await notifier.watch(uri, ctx)
                except PrixfixeError as exc:
                    log.warning("listen: %s", exc.message)
                    continue
                watched.append(uri)
            return await super().__call__(ctx, params)
        finally:
            for uri in watched:
                notifier.unwatch(uri)
