"""The session cap of `prixfixe serve --http` (`[http] max_sessions`), over real HTTP.

At the cap a new client takes the place of the session idle longest; abandoned sessions (a
client that initialized and walked away) must never lock new clients out until they expire.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.mcp.http.conftest import INITIALIZE, JSON_SSE, PLUGIN, ServeFactory, connect
from tests.mcp.http.plugin import STARTED

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PING = {"jsonrpc": "2.0", "id": 5, "method": "ping"}


async def _post(url: str, body: Any = INITIALIZE, **headers: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(url, json=body, headers={**JSON_SSE, **headers})


async def abandoned_session(url: str) -> str:
    """A session opened with `initialize` by a client that never comes back."""
    opened = await _post(url)
    assert opened.status_code == 200
    return str(opened.headers["mcp-session-id"])


def session(session_id: str) -> dict[str, str]:
    return {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}


async def ping(url: str, session_id: str) -> httpx2.Response:
    return await _post(url, PING, **session(session_id))


async def call(client: Client) -> None:
    assert (await client.call_tool("tool_search", {"query": "store"})).is_error is False


def capped(sessions: int) -> str:
    return f"[http]\nmax_sessions = {sessions}\n"


async def test_abandoned_sessions_at_the_cap_make_room_for_a_new_client(
    serve: ServeFactory,
) -> None:
    served = serve(config=capped(3))
    abandoned = [await abandoned_session(served.url) for _ in range(3)]
    # The oldest is the one idle longest once the other two are used again.
    for session_id in abandoned[1:]:
        assert (await ping(served.url, session_id)).status_code == 200
    with anyio.fail_after(60):
        async with connect(served.url) as client:
            await call(client)
    gone = await ping(served.url, abandoned[0])
    assert gone.status_code == 404
    assert gone.json()["error"]["message"] == "Session not found"
    # The two used most recently were kept (the new client's own session ended as it left).
    for session_id in abandoned[1:]:
        assert (await ping(served.url, session_id)).status_code == 200
    logged = "at the most open sessions (3, [http] max_sessions)"
    assert logged in served.stderr_with(logged)  # the line may still be in the pipe
    assert "Traceback" not in served.stderr()


async def test_a_session_listening_on_its_event_stream_is_ended_after_idle_ones(
    serve: ServeFactory,
) -> None:
    served = serve(config=capped(2))
    with anyio.fail_after(60):
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            contextlib.AsyncExitStack() as streams,
        ):

            async def listen(session_id: str) -> httpx2.Response:
                headers = {"Accept": "text/event-stream", **session(session_id)}
                stream = await streams.enter_async_context(
                    http.stream("GET", served.url, headers=headers)
                )
                assert stream.status_code == 200  # the server is holding it open
                return stream

            first = await abandoned_session(served.url)
            await listen(first)
            idle = await abandoned_session(served.url)
            # At the cap, the idle session goes, though it is newer than the listening one.
            second = await abandoned_session(served.url)
            assert (await ping(served.url, idle)).status_code == 404
            second_stream = await listen(second)
            assert (await ping(served.url, first)).status_code == 200
            # Both listen now: the one whose last call ended longest ago goes, and its
            # event stream ends.
            async with connect(served.url) as client:
                await call(client)
            async for _ in second_stream.aiter_bytes():
                pass  # the stream ends (within the bound above): the eviction closed it
            assert (await ping(served.url, second)).status_code == 404
            assert (await ping(served.url, first)).status_code == 200
    assert "Traceback" not in served.stderr()


async def test_at_the_cap_with_every_session_answering_a_call_a_new_client_gets_503(
    serve: ServeFactory,
) -> None:
    served = serve(*PLUGIN, config=capped(1))
    with anyio.fail_after(60):
        async with connect(served.url) as busy:
            async with anyio.create_task_group() as tg:
                tg.start_soon(busy.call_tool, "slow_echo", {"seconds": 2})
                await served.wait_for_line(STARTED)
                refused = await _post(served.url)
                assert refused.status_code == 503
                assert refused.json()["error"]["message"] == "Too many open sessions"
            # The call was answered and its session kept; now it is idle, so room is made.
            assert (await _post(served.url)).status_code == 200
            with pytest.raises(MCPError, match="Session not found"):
                await call(busy)
