"""Stateful sessions at the cap: a new client takes the place of the session idle longest.

The SDK's session manager refuses a new session with 503 while `[http] max_sessions` are
open, and a session ends only when its client deletes it or after `[http]
session_idle_seconds` without a request. So clients that initialized and walked away (a
killed agent, a script that never sends `DELETE`) locked every new client out for the whole
idle period. `EvictingSessionManager` is the SDK's manager, except that at the cap it ends one
session to make room, chosen in this order:

1. a session with no request in flight (idle), the one whose last request ended longest ago;
2. else a session whose only request in flight is its standing `GET` event stream (a client
   listening, not calling), again the one whose last other request ended longest ago;
3. a session answering a request (`POST`, `DELETE`) is never ended: when every session is,
   the new client gets the SDK's 503, as before.

The ended session is forgotten at once, so its id answers 404 `Session not found` from then
on (the streamable HTTP answer that tells a client to initialize again), and its transport is
terminated (its event stream, if open, ends). Each eviction is logged at WARNING, folded when
they repeat.

CONTRACT: this leans on the SDK manager's internals (`_handle_request`, `_admit_session`,
`_serve_opening_request`, `_discard_session`, `_server_instances`, `_session_owners`,
`_task_group`), as of mcp 2.3; `tests/mcp/http/test_sessions.py` drives it over real HTTP, so
a change there fails those tests rather than passing silently.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, cast

from anyio.abc import TaskGroup
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from prixfixe.mcp.http.connections import Throttled

log = logging.getLogger(__name__)

SESSION_HEADER = b"mcp-session-id"


@dataclass
class _Activity:
    """What one session has in flight, and since when it has been without a call."""

    calls: int = 0
    streams: int = 0
    since: float = field(default_factory=time.monotonic)

    def begin(self, stream: bool) -> None:
        if stream:
            self.streams += 1
        else:
            self.calls += 1

    def end(self, stream: bool) -> None:
        if stream:
            self.streams -= 1
        else:
            self.calls -= 1
            if not self.calls:
                self.since = time.monotonic()


class EvictingSessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager, making room at the cap (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._activity: dict[str, _Activity] = {}
        self._throttled = Throttled()

    async def _handle_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = next((v for k, v in scope["headers"] if k == SESSION_HEADER), None)
        activity = (
            self._activity.get(session_id.decode("latin-1")) if session_id is not None else None
        )
        if activity is None:  # no session yet, or one that is gone (the SDK answers 404)
            await super()._handle_request(scope, receive, send)
            return
        stream = scope["method"] == "GET"
        activity.begin(stream)
        try:
            await super()._handle_request(scope, receive, send)
        finally:
            activity.end(stream)

    def _admit_session(
        self, requestor: AuthorizationContext | None
    ) -> StreamableHTTPServerTransport | None:
        if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            self._evict()
        transport = super()._admit_session(requestor)
        if transport is not None:
            # Its opening request is in flight until `_serve_opening_request` returns.
            self._activity[str(transport.mcp_session_id)] = _Activity(calls=1)
        return transport

    async def _serve_opening_request(
        self,
        http_transport: StreamableHTTPServerTransport,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        try:
            await super()._serve_opening_request(http_transport, scope, receive, send)
        finally:
            activity = self._activity.get(str(http_transport.mcp_session_id))
            if activity is not None:
                activity.end(stream=False)

    async def _discard_session(
        self, session_id: str, transport: StreamableHTTPServerTransport
    ) -> None:
        self._activity.pop(session_id, None)
        await super()._discard_session(session_id, transport)

    def _evict(self) -> None:
        """End the session idle longest, unless every session is answering a request."""
        idle = [
            (activity.streams > 0, activity.since, session_id)
            for session_id, activity in self._activity.items()
            if not activity.calls and session_id in self._server_instances
        ]
        if not idle:
            return
        listening, since, session_id = min(idle)
        transport = self._server_instances.pop(session_id)
        self._session_owners.pop(session_id, None)
        self._activity.pop(session_id, None)
        self._throttled.warn(
            "evict",
            "at the most open sessions (%d, [http] max_sessions): ended the session idle "
            "longest (%s, no call for %.0fs) to admit a new one; its client must initialize "
            "again",
            self.max_sessions,
            "its event stream still open" if listening else "nothing in flight",
            time.monotonic() - since,
        )
        # Terminating closes its streams (an open GET stream ends) and its message loop. The
        # task group is set by `run()` (the SDK types it as None); no request comes before.
        cast(TaskGroup, self._task_group).start_soon(self._discard_session, session_id, transport)
