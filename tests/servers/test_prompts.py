"""A mounted server's prompts through prixfixe: listed as `NAME.prompt`, got and completed
through the server with its messages unchanged, re-listed on its `list_changed`, hidden
when denied."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from prixfixe.app import App
from prixfixe.mcp.server import build_server
from tests.servers.conftest import fixture_table, ready

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

Mounted = Callable[..., App]


async def test_a_mounted_prompt_is_listed_as_server_dot_name(
    mounted: Mounted, revision: str
) -> None:
    app = mounted()
    async with Client(build_server(app), mode=revision) as client:
        await ready(app)
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
    assert listed["fix.greet"] == types.Prompt(
        name="fix.greet",
        title="Greeting",
        description="Greet someone by name.",
        arguments=[
            types.PromptArgument(name="name", required=True),
            types.PromptArgument(name="style", required=False),
        ],
    )


async def test_getting_a_prompt_returns_the_servers_messages_unchanged(
    mounted: Mounted, revision: str
) -> None:
    app = mounted()
    async with Client(build_server(app), mode=revision) as client:
        await ready(app)
        got = await client.get_prompt("fix.greet", {"name": "Ada", "style": "warm"})
    assert got.description == "Greet someone by name."
    assert got.messages == [
        types.PromptMessage(
            role="user", content=types.TextContent(type="text", text="Hello, Ada! (warm)")
        )
    ]


async def test_a_missing_argument_is_refused_before_the_server_is_asked(
    mounted: Mounted, revision: str
) -> None:
    app = mounted()
    async with Client(build_server(app), mode=revision) as client:
        await ready(app)
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("fix.greet", {"style": "warm"})
    assert raised.value.error.code == -32602
    assert "'name' is required" in raised.value.error.message


async def test_completing_a_prompt_argument_asks_the_server(
    mounted: Mounted, revision: str
) -> None:
    app = mounted()
    async with Client(build_server(app), mode=revision) as client:
        await ready(app)
        done = await client.complete(
            types.PromptReference(name="fix.greet"), {"name": "name", "value": "A"}
        )
    assert done.completion.values == ["Ada", "Alan"]
    assert done.completion.total == 2


class Told:
    def __init__(self) -> None:
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            self.event.set()


async def test_the_servers_prompt_list_changed_is_re_read_and_announced(
    mounted: Mounted,
) -> None:
    app = mounted()
    told = Told()
    async with Client(build_server(app), mode="legacy", message_handler=told) as client:
        await ready(app)
        await client.list_prompts()
        await client.call_tool(
            "tool_invoke", {"name": "fix.new_prompt", "arguments": {"name": "wave"}}
        )
        with anyio.fail_after(10):
            await told.event.wait()
        listed = {p.name for p in (await client.list_prompts()).prompts}
        got = await client.get_prompt("fix.wave")
    assert "fix.wave" in listed
    assert got.messages[0].content == types.TextContent(type="text", text="the wave prompt")


async def test_a_denied_servers_prompts_are_not_listed_nor_got(
    mounted: Mounted, spawns: list[tuple[str, ...]], revision: str
) -> None:
    app = mounted(fixture_table() + '[mcp]\ndeny = ["fix"]\n')
    async with Client(build_server(app), mode=revision) as client:
        listed = [p.name for p in (await client.list_prompts()).prompts]
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("fix.greet", {"name": "Ada"})
    assert not [n for n in listed if n.startswith("fix.")]
    assert raised.value.error.code == -32602
    assert spawns == []
