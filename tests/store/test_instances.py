"""Two and three `prixfixe serve --http --stateless` processes on one PostgreSQL database
behave as one server: a write through one is read through another, a subscriber on one is
told of a write through another once, a 2026-07-28 round trip begun on one completes on
another, killing one under load loses no acknowledged write, and a database restart makes
calls fail clearly and then recover by themselves.

Every instance is a real subprocess on a free loopback port with its own `PRIXFIXE_HOME`, the
same `PRIXFIXE_STORE_URL` and the same `[http] state_keys` key; every one is killed and
waited for at the end. No sleeps: every wait is for a condition, bounded."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import psycopg
import pytest
from mcp.client.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPError

from prixfixe.config import STORE_URL_ENV
from prixfixe.tools.elicitation import KEY
from tests.mcp.http.conftest import Served, connect, start, wait_ready
from tests.postgres_server import PostgresServer
from tests.resources.conftest import Inbox
from tests.web.live_client import events

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

MODERN = "2026-07-28"
STATE_KEY_ENV = "PF_TEST_STATE_KEY"
CONFIG = f'[http]\nstate_keys = [{{ env = "{STATE_KEY_ENV}" }}]\n'
WAIT_S = 30

Instances = Callable[..., list[Served]]


@pytest.fixture
def instances(tmp_path: Path, postgres_url: str) -> Iterator[Instances]:
    """Start `count` instances on the test's database (started together, then each waited
    for), stateless unless told; every one is killed and waited for afterwards."""
    started: list[subprocess.Popen[str]] = []

    def factory(count: int, stateless: bool = True) -> list[Served]:
        processes = []
        for _ in range(count):
            home = tmp_path / f"instance{len(started) + 1}"
            home.mkdir()
            process = start(
                home,
                *(["--stateless"] if stateless else []),
                config=CONFIG,
                **{
                    STORE_URL_ENV: postgres_url,
                    STATE_KEY_ENV: "k" * 40,
                    "PRIXFIXE_LOAD_PLUGINS": "",
                },
            )
            started.append(process)
            processes.append(process)
        return [wait_ready(p) for p in processes]

    yield factory
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


def _put(text: str, id: int | None = None) -> dict[str, Any]:
    record = {"text": text, "due": "2026-12-01"}
    return {"kind": "reminder", "record": record, **({} if id is None else {"id": id})}


def _text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def _store_put(served: Served, text: str, mode: str = MODERN) -> int:
    async with connect(served.url, mode=mode) as client:
        result = await client.call_tool("store_put", _put(text))
    assert result.is_error is False, _text(result)
    assert result.structured_content is not None
    return int(result.structured_content["id"])


async def _texts(served: Served, mode: str = MODERN) -> list[str]:
    async with connect(served.url, mode=mode) as client:
        result = await client.call_tool("store_query", {"kind": "reminder", "limit": 100})
    assert result.is_error is False, _text(result)
    assert result.structured_content is not None
    return [r["record"]["text"] for r in result.structured_content["records"]]


def _rows(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT body->>'text' FROM records WHERE kind = 'reminder' ORDER BY id"
        ).fetchall()
    return [str(r[0]) for r in rows]


# -- 1. records ------------------------------------------------------------------------------


async def test_the_web_page_on_one_instance_shows_writes_and_reports_through_another(
    instances: Instances,
) -> None:
    a, b = instances(2)
    async with events(b) as stream:
        written = await _store_put(a, "seen on the page")
        with anyio.fail_after(WAIT_S):
            data = await stream.next_event("records")
        assert data["generation"] >= 1  # type: ignore[operator]
    async with httpx2.AsyncClient(base_url=b.base, timeout=WAIT_S) as http:
        page = await http.get("/fragments/records")
    assert page.status_code == 200
    assert f'id="record-reminder-{written}"' in page.text
    assert "seen on the page" in page.text


async def test_a_write_through_one_instance_is_read_through_the_others(
    instances: Instances,
) -> None:
    a, b, c = instances(3)
    with anyio.fail_after(WAIT_S):
        await _store_put(a, "dentist", mode="legacy")
        await _store_put(b, "plumber")
        assert await _texts(b) == ["dentist", "plumber"]
        assert await _texts(c, mode="legacy") == ["dentist", "plumber"]
        assert await _texts(a) == ["dentist", "plumber"]


# -- 2. notifications ------------------------------------------------------------------------


async def test_a_listener_on_one_instance_is_told_of_writes_through_the_others_once(
    instances: Instances,
) -> None:
    a, b, c = instances(3)
    first, sentinel = "prixfixe://store/reminder/1", "prixfixe://store/reminder/2"
    with anyio.fail_after(WAIT_S):
        await _store_put(a, "dentist")
        await _store_put(c, "plumber")
        async with (
            connect(b.url, mode=MODERN) as on_b,
            connect(a.url, mode=MODERN) as on_a,
            connect(c.url, mode=MODERN) as on_c,
            on_b.listen(resource_subscriptions=[first, sentinel]) as events,
        ):
            moved = await on_a.call_tool("store_put", _put("moved", 1))
            assert moved.is_error is False, _text(moved)
            # Changes arrive in commit order: once the sentinel's has come, a repeat of the
            # first would have come before it.
            again = await on_c.call_tool("store_put", _put("sentinel", 2))
            assert again.is_error is False, _text(again)
            assert await events.__anext__() == ResourceUpdated(first)
            assert await events.__anext__() == ResourceUpdated(sentinel)


async def test_a_2025_session_on_one_instance_is_told_of_writes_through_the_others_once(
    instances: Instances,
) -> None:
    # A 2025-11-25 subscription lives in a session: the subscriber's instance keeps sessions
    # (a stateless one has no channel to send `resources/updated` on); the writers need none.
    a, c = instances(2)
    (b,) = instances(1, stateless=False)
    first, sentinel = "prixfixe://store/reminder/1", "prixfixe://store/reminder/2"
    inbox = Inbox()
    with anyio.fail_after(WAIT_S):
        await _store_put(a, "dentist")
        await _store_put(c, "plumber")
        async with connect(b.url, mode="legacy", message_handler=inbox) as on_b:
            await on_b.subscribe_resource(first)
            await on_b.subscribe_resource(sentinel)
            async with connect(a.url, mode="legacy") as on_a:
                moved = await on_a.call_tool("store_put", _put("moved", 1))
            assert moved.is_error is False, _text(moved)
            async with connect(c.url, mode="legacy") as on_c:
                again = await on_c.call_tool("store_put", _put("sentinel", 2))
            assert again.is_error is False, _text(again)
            await inbox.wait_for(("updated", sentinel), seconds=WAIT_S)
    assert inbox.items == [("updated", first), ("updated", sentinel)]


# -- 3. a round trip across instances --------------------------------------------------------


async def _declining(context: object, params: object) -> types.ElicitResult:
    return types.ElicitResult(action="cancel")  # never asked: 2026-07-28 rounds are results


async def test_an_input_required_round_trip_begun_on_one_instance_completes_on_another(
    instances: Instances, postgres_url: str
) -> None:
    a, b = instances(2)
    arguments = {
        "name": "store_put",
        "arguments": {"record": {"text": "dentist", "due": "2026-12-01"}},
    }
    with anyio.fail_after(WAIT_S):
        async with connect(a.url, mode=MODERN, elicitation_callback=_declining) as on_a:
            first = await on_a.session.call_tool(
                "tool_invoke", arguments, allow_input_required=True
            )
        assert isinstance(first, types.InputRequiredResult)
        assert first.input_requests is not None
        assert list(first.input_requests) == [KEY]
        assert await _texts(b) == []  # nothing written yet
        async with connect(b.url, mode=MODERN, elicitation_callback=_declining) as on_b:
            done = await on_b.session.call_tool(
                "tool_invoke",
                arguments,
                input_responses={KEY: {"action": "accept", "content": {"kind": "reminder"}}},  # type: ignore[dict-item]
                request_state=first.request_state,
                allow_input_required=True,
            )
    assert isinstance(done, types.CallToolResult)
    assert done.is_error is False, _text(done)
    assert _rows(postgres_url) == ["dentist"]


# -- 4. kill -9 under load -------------------------------------------------------------------


async def test_killing_an_instance_under_load_loses_no_acknowledged_write(
    instances: Instances, postgres_url: str
) -> None:
    a, b = instances(2)
    acknowledged: list[str] = []
    refused: list[str] = []
    ten_through_a, killed = anyio.Event(), anyio.Event()

    async def writer(served: Served, name: str) -> None:
        """Write through `served` in a loop: through a until it dies, through b until 20
        writes were acknowledged after the kill."""
        n, after_kill = 0, 0
        try:
            async with connect(served.url, mode=MODERN) as client:
                while after_kill < 20:
                    n += 1
                    result = await client.call_tool("store_put", _put(f"{name}{n}"))
                    assert result.is_error is False, _text(result)
                    acknowledged.append(f"{name}{n}")
                    after_kill += killed.is_set()
                    if n == 10 and name == "a":
                        ten_through_a.set()
        except* (httpx2.TransportError, MCPError):  # the instance died under this call
            refused.append(f"{name}{n}")

    async def killer() -> None:
        await ten_through_a.wait()  # a's next write is on its way: kill it under that
        a.process.kill()
        killed.set()

    with anyio.fail_after(WAIT_S * 2):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer, a, "a")
            tg.start_soon(writer, b, "b")
            tg.start_soon(killer)
    assert a.process.wait(timeout=10) == -9
    assert [t[0] for t in refused] == ["a"]
    rows = _rows(postgres_url)
    stored = set(rows)
    assert [t for t in acknowledged if t not in stored] == []
    # Nothing twice, nothing made up: at most the write a was killed under is unacknowledged.
    assert len(rows) == len(stored)
    assert stored - set(acknowledged) <= set(refused)
    assert len([t for t in acknowledged if t.startswith("b")]) >= 20


# -- 5. a database restart -------------------------------------------------------------------


async def test_a_database_restart_fails_calls_clearly_and_they_recover_by_themselves(
    instances: Instances, postgres: PostgresServer
) -> None:
    a, b = instances(2)
    first = "prixfixe://store/reminder/1"
    with anyio.fail_after(WAIT_S):
        await _store_put(a, "before")
    async with (
        connect(b.url, mode=MODERN) as listening,
        listening.listen(resource_subscriptions=[first]) as events,
    ):
        with postgres.down():
            with anyio.fail_after(WAIT_S):
                async with connect(a.url, mode=MODERN) as on_a:
                    put = await on_a.call_tool("store_put", _put("during"))
                async with connect(b.url, mode="legacy") as on_b:
                    query = await on_b.call_tool("store_query", {"kind": "reminder"})
            for failed in (put, query):
                assert failed.is_error is True
                assert f"PostgreSQL store at 127.0.0.1:{postgres.port}" in _text(failed)
                assert "Traceback" not in _text(failed)
        with anyio.fail_after(WAIT_S):
            async with connect(a.url, mode=MODERN) as on_a:
                moved = await on_a.call_tool("store_put", _put("after a", 1))
            assert moved.is_error is False, _text(moved)
            # b's listening connection was cut by the restart: it came back by itself.
            assert await events.__anext__() == ResourceUpdated(first)
            await _store_put(b, "after b")
            assert await _texts(a) == ["after a", "after b"]
    # A person reading either instance's output sees warnings, never a traceback.
    assert "Traceback" not in a.stderr() + b.stderr()
