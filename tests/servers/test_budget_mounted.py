"""The fixed menu holds with servers mounted: their tools are never listed by default."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from mcp import Client

from prixfixe.app import DEFAULT_TOKEN_BUDGET, DEFAULT_TOOL_BUDGET, App
from prixfixe.mcp.server import build_server
from prixfixe.tokens import count_tokens
from tests.servers.conftest import fixture_table
from tests.servers.test_time_server import time_table

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def _listing(app: App, revision: str) -> str:
    async with Client(build_server(app), mode=revision) as client:
        await client.call_tool("tool_search", {"query": "time"})  # every server's tools read
        tools = (await client.list_tools()).tools
    wire = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    return json.dumps(wire, separators=(",", ":"), ensure_ascii=False)


async def test_the_listing_is_byte_identical_and_in_budget_with_servers_mounted(
    make_app: Callable[..., App], revision: str
) -> None:
    bare = await _listing(make_app(plugins=[]), revision)
    app = make_app(config=fixture_table() + time_table(), plugins=[])
    mounted = await _listing(app, revision)
    assert sum(1 for e in app.registry if e.tool.facet in ("fix", "time")) >= 15
    assert mounted == bare
    assert len(json.loads(mounted)) <= DEFAULT_TOOL_BUDGET
    assert count_tokens(mounted) <= DEFAULT_TOKEN_BUDGET


def test_a_server_may_not_take_a_facet_of_prixfixe_tools(make_app: Callable[..., App]) -> None:
    from prixfixe.errors import ConfigError

    with pytest.raises(ConfigError, match="server name 'core' is already a facet"):
        make_app(config=fixture_table("core"))
