"""A client of the page's live `/events` stream, for tests of one instance or several."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx2

from tests.mcp.http.conftest import Served


class Stream:
    """An open `/events` stream, read one event at a time."""

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self.lines = lines

    async def next_event(self, name: str) -> dict[str, object]:
        """The data of the next event called `name` (other events and comments are skipped)."""
        event = None
        async for line in self.lines:
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: ") and event == name:
                data: dict[str, object] = json.loads(line.removeprefix("data: "))
                return data
            elif not line:
                event = None
        raise AssertionError(f"the stream ended before a {name!r} event")

    async def until_connected(self) -> None:
        async for line in self.lines:
            if line == ": connected":
                return
        raise AssertionError("the stream ended before it was connected")


@asynccontextmanager
async def events(served: Served) -> AsyncIterator[Stream]:
    async with (
        httpx2.AsyncClient(base_url=served.base, timeout=60) as http,
        http.stream("GET", "/events") as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = Stream(response.aiter_lines())
        with anyio.fail_after(30):
            await stream.until_connected()
        yield stream
