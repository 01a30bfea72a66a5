"""Live updates: the page's event stream hears the store change, whoever changed it, and ends
when the server stops."""

from __future__ import annotations

import gc
import signal
import sys
from pathlib import Path

import anyio
import httpx2
import pytest

from prixfixe.web import live
from tests.conftest import AppFactory
from tests.mcp.http.conftest import ServeFactory, connect, server_env, wait_exit
from tests.mcp.http.conftest import serve as serve  # the fixture: a server per test
from tests.web.live_client import events

pytestmark = pytest.mark.anyio

CONFIG = """\
[routines.tally]
description = "One line"

[[routines.tally.steps]]
type = "script"
name = "say"
command = ["echo", "all is well"]
"""


async def test_an_open_page_hears_a_record_written_through_mcp(serve: ServeFactory) -> None:
    served = serve(config=CONFIG)
    async with events(served) as stream, connect(served.url) as client:
        result = await client.call_tool(
            "store_put", {"kind": "reminder", "record": {"text": "call", "due": "2031-01-01"}}
        )
        assert not result.is_error
        written = result.structured_content
        assert written is not None
        with anyio.fail_after(30):
            data = await stream.next_event("records")
        assert data == {"generation": written["generation"]}
        closed = await client.call_tool("store_close", {"kind": "reminder", "id": written["id"]})
        assert closed.structured_content is not None
        with anyio.fail_after(30):
            data = await stream.next_event("records")
        assert data == {"generation": closed.structured_content["generation"]}


async def test_an_open_page_hears_a_report_a_routine_made_through_mcp(serve: ServeFactory) -> None:
    served = serve(config=CONFIG)
    async with events(served) as stream, connect(served.url) as client:
        result = await client.call_tool("routine_run", {"name": "tally", "format": "data"})
        assert result.structured_content is not None
        with anyio.fail_after(30):
            data = await stream.next_event("report")
    assert data == {"generation": result.structured_content["generation"]}


async def test_an_open_page_hears_a_report_another_process_made(
    serve: ServeFactory, tmp_path: Path
) -> None:
    served = serve(config=CONFIG)
    async with events(served) as stream:
        run = await anyio.run_process(
            [sys.executable, "-m", "prixfixe", "run", "tally"],
            cwd=tmp_path,
            env=server_env(tmp_path),
            check=False,
        )
        assert run.returncode == 0, run.stderr
        with anyio.fail_after(30):
            data = await stream.next_event("report")
    generation = data["generation"]
    assert isinstance(generation, int)
    assert generation >= 1
    async with httpx2.AsyncClient(base_url=served.base) as http:
        fragment = await http.get("/fragments/report")
    assert fragment.headers["x-generation"] == str(generation)
    assert "all is well" in fragment.text


async def test_a_stop_ends_the_open_streams_and_exits_cleanly(serve: ServeFactory) -> None:
    served = serve(config=CONFIG)
    async with events(served) as stream:
        served.process.send_signal(signal.SIGTERM)
        with anyio.fail_after(60):
            async for _ in stream.lines:
                pass  # the server ends the stream; nothing is left hanging
    assert await wait_exit(served.process) == 0
    assert "prixfixe: stopped; the store is closed" in served.stderr()
    assert "Traceback" not in served.stderr()


# -- the parts, directly ------------------------------------------------------------------------


def test_live_streams_past_the_cap_get_503_and_a_stream_never_started_frees_its_place(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "MAX_STREAMS", 2)
    changes = live.Changes(make_app())
    held = [changes.response(None), changes.response(None)]  # type: ignore[arg-type]
    refused = changes.response(None)  # type: ignore[arg-type]
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "30"
    assert all(r.status_code == 200 for r in held)
    # Clients that left before their stream's body started: nothing holds their places.
    held.clear()
    gc.collect()
    assert changes.response(None).status_code == 200  # type: ignore[arg-type]


async def test_a_live_stream_ends_after_its_lifetime_for_the_browser_to_open_another(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "STREAM_SECONDS", 0.0)
    changes = live.Changes(make_app())
    listener = live._Listener()
    sent = []
    with anyio.fail_after(30):
        async for event in changes.events(None, listener):  # type: ignore[arg-type]
            sent.append(event.comment)
    assert sent == ["connected"]  # then it ended; its `retry` tells the browser when to return
