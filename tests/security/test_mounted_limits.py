"""The leash's caveats stop every request that reaches a mounted server, however it gets
there: `max_calls` counts a mounted resource read, prompt, completion, subscription and each
`mcp-query` step of a `routine_eval` as it counts a tool call, and past
`valid_for_generation` nothing reaches a mounted server. Asserted at the server: what it
received."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.servers.conftest import ready, text_of
from tests.servers.hostile import hostile_table, received

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ECHO = {"name": "echo", "inputSchema": {"type": "object", "properties": {"t": {"type": "string"}}}}
NOTE = "prixfixe://servers/hostile/hostile://note"

Request = Callable[[Client], Awaitable[Any]]


async def _read(client: Client) -> Any:
    return await client.read_resource(NOTE)


async def _prompt(client: Client) -> Any:
    return await client.get_prompt("hostile.steal", {"topic": "x"})


async def _complete(client: Client) -> Any:
    ref = types.PromptReference(name="hostile.steal")
    return await client.complete(ref, {"name": "topic", "value": "x"})


async def _tool(client: Client) -> Any:
    result = await client.call_tool("hostile.echo", {"t": "x"})
    if result.is_error:
        raise MCPError.from_error_data(types.ErrorData(code=0, message=text_of(result)))
    return result


@pytest.mark.parametrize(
    ("request_", "method"),
    [
        (_read, "resources/read"),
        (_prompt, "prompts/get"),
        (_complete, "completion/complete"),
        (_tool, "tools/call"),
    ],
    ids=["resources/read", "prompts/get", "completion", "tools/call"],
)
async def test_max_calls_counts_every_request_to_a_mounted_server(
    make_app: AppFactory, tmp_path: Path, request_: Request, method: str
) -> None:
    config, log = hostile_table(tmp_path, [ECHO], extra="[leash]\nmax_calls = 2\n")
    app = make_app(config=config, plugins=[])
    async with Client(build_server(app), mode="legacy") as client:
        await ready(app)  # its prompts are registered once its lists are read
        await request_(client)
        await request_(client)
        with pytest.raises(MCPError) as refused:
            await request_(client)
    assert "the leash allows 2" in refused.value.error.message
    assert len(received(log, method)) == 2


@pytest.mark.parametrize("max_calls", [1, 2])
async def test_max_calls_counts_a_subscription_that_reaches_a_mounted_server(
    make_app: AppFactory, tmp_path: Path, max_calls: int
) -> None:
    config, log = hostile_table(tmp_path, [ECHO], extra=f"[leash]\nmax_calls = {max_calls}\n")
    app = make_app(config=config, plugins=[])
    async with Client(build_server(app), mode="legacy") as client:
        await _read(client)  # the first request that reaches it
        if max_calls == 2:  # the control: the second is within the leash and reaches it
            await client.subscribe_resource(NOTE)
        else:
            with pytest.raises(MCPError) as refused:
                await client.subscribe_resource(NOTE)
            assert "the leash allows 1" in refused.value.error.message
    assert len(received(log, "resources/subscribe")) == max_calls - 1


async def test_max_calls_counts_each_mounted_call_inside_one_routine_eval(
    make_app: AppFactory, tmp_path: Path
) -> None:
    config, log = hostile_table(tmp_path, [ECHO], extra="[leash]\nmax_calls = 3\n")
    app = make_app(config=config, plugins=[])
    step = {"type": "mcp-query", "server": "hostile", "tool": "echo", "arguments": {"t": "x"}}
    steps = [{**step, "name": f"s{i}"} for i in range(4)]
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool("routine_eval", {"steps": steps, "format": "data"})
    # routine_eval is call 1; its first two steps are calls 2 and 3; the rest are refused.
    reported = (result.structured_content or {})["steps"]
    assert [s.get("error") is None for s in reported] == [True, True, False, False]
    assert "the leash allows 3" in reported[2]["error"]["message"]
    assert len(received(log, "tools/call")) == 2


async def test_past_valid_for_generation_nothing_reaches_a_mounted_server(
    make_app: AppFactory, tmp_path: Path
) -> None:
    config, log = hostile_table(tmp_path, [ECHO], extra="[leash]\nvalid_for_generation = 1\n")
    app = make_app(config=config, plugins=[])
    async with Client(build_server(app), mode="legacy") as client:
        for text in ("a", "b"):
            record = {"text": text, "due": "2030-01-01"}
            put = await client.call_tool("store_put", {"kind": "reminder", "record": record})
            assert put.is_error is False, text_of(put)
        invoked = await client.call_tool(
            "tool_invoke", {"name": "hostile.echo", "arguments": {"t": "x"}}
        )
        with pytest.raises(MCPError) as read:
            await _read(client)
        with pytest.raises(MCPError) as prompt:
            await _prompt(client)
        with pytest.raises(MCPError) as completed:
            await _complete(client)
        with pytest.raises(MCPError) as subscribed:
            await client.subscribe_resource(NOTE)
        step = {"type": "mcp-query", "server": "hostile", "tool": "echo"}
        evaluated = await client.call_tool("routine_eval", {"steps": [step], "format": "data"})
    assert invoked.is_error is True
    assert "valid up to store generation 1" in text_of(invoked)
    for refused in (read, prompt, completed, subscribed):
        assert "valid up to store generation 1" in refused.value.error.message
    assert evaluated.is_error is True
    assert received(log) == []
