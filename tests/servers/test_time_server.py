"""A real server nobody here wrote: `mcp-server-time` from PyPI, on the 1.x `mcp` SDK in its
own virtual environment (installed by scripts/test-servers.sh), mounted and used through the
trio on both protocol revisions."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from mcp import Client

from prixfixe.app import App
from prixfixe.mcp.server import build_server
from tests.search_text import searched
from tests.servers.conftest import installed_server, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def time_table() -> str:
    program = installed_server("time", "mcp-server-time")
    return f'[servers.time]\ncommand = "{program}"\nargs = ["--local-timezone=UTC"]\n'


async def test_the_time_server_is_found_described_and_called(
    make_app: Callable[..., App], revision: str
) -> None:
    app = make_app(config=time_table())
    async with Client(build_server(app), mode=revision) as client:
        found = await client.call_tool(
            "tool_search", {"query": "current time in a timezone", "facet": "time"}
        )
        described = await client.call_tool("tool_describe", {"name": "time.get_current_time"})
        called = await client.call_tool(
            "tool_invoke",
            {"name": "time.get_current_time", "arguments": {"timezone": "Europe/Lisbon"}},
        )
        converted = await client.call_tool(
            "tool_invoke",
            {
                "name": "time.convert_time",
                "arguments": {
                    "source_timezone": "UTC",
                    "time": "12:00",
                    "target_timezone": "Asia/Tokyo",
                },
            },
        )
        refused = await client.call_tool(
            "tool_invoke", {"name": "time.get_current_time", "arguments": {"timezone": 5}}
        )
    assert "time.get_current_time" in searched(found).names
    assert "- timezone (string, required)" in text_of(described)
    assert not called.is_error
    assert '"timezone": "Europe/Lisbon"' in text_of(called)
    assert '"time_difference": "+9.0h"' in text_of(converted)
    assert 'T21:00:00+09:00"' in text_of(converted)
    assert refused.is_error
    assert "argument 'timezone': expected string" in text_of(refused)


async def test_the_time_servers_tools_are_mounted_unlisted_with_their_hints(
    make_app: Callable[..., App],
) -> None:
    app = make_app(config=time_table())
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": "time"})
        listed = {t.name for t in (await client.list_tools()).tools}
    mounted = {e.name for e in app.registry if e.tool.facet == "time"}
    assert mounted == {"time.get_current_time", "time.convert_time"}
    assert not mounted & listed
    upstream = {t.name: t for t in app.servers.catalogued("time") or []}
    for name in mounted:
        hints = upstream[name.removeprefix("time.")].annotations
        assert app.registry.get(name).annotations == (hints or app.registry.get(name).annotations)
        assert app.registry.get(name).tool.mutates is not bool(hints and hints.read_only_hint)
