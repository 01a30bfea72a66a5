"""The tool budget: the default `tools/list` stays small and flat however much is registered."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from prixfixe.app import DEFAULT_TOKEN_BUDGET, DEFAULT_TOOL_BUDGET
from prixfixe.core.plugins import DEFAULT_PLUGINS
from prixfixe.mcp.server import build_server
from prixfixe.tokens import count_tokens
from tests.conftest import AppFactory
from tests.plugin_fixtures import WeatherPlugin, many_tools_plugin
from tests.search_text import searched

pytestmark = pytest.mark.anyio


async def _listing(app_server: object, mode: str) -> str:
    async with Client(app_server, mode=mode) as client:  # type: ignore[arg-type]
        result = await client.list_tools()
    tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools]
    return json.dumps(tools, sort_keys=True)


def test_the_budget_is_seven_tools_and_700_tokens() -> None:
    assert (DEFAULT_TOOL_BUDGET, DEFAULT_TOKEN_BUDGET) == (7, 700)


async def test_default_listing_with_every_builtin_plugin_fits_the_budget(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[])
    loaded = {p.name for p in app.plugins if p.loaded}
    assert set(DEFAULT_PLUGINS) <= loaded
    async with Client(build_server(app), mode=revision) as client:
        tools = (await client.list_tools()).tools
    assert 0 < len(tools) <= DEFAULT_TOOL_BUDGET
    # What a client puts in context: each listed tool as compact wire JSON, output schemas in.
    wire = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    listing = json.dumps(wire, separators=(",", ":"), ensure_ascii=False)
    assert json.loads(listing) == json.loads(app.list_tools_json())
    assert count_tokens(listing) <= DEFAULT_TOKEN_BUDGET


async def test_default_listing_is_byte_identical_with_500_more_tools_in_other_facets(
    make_app: AppFactory, revision: str
) -> None:
    before = await _listing(build_server(make_app(plugins=[])), revision)
    crowded = make_app(
        plugins=[WeatherPlugin(), many_tools_plugin(250, "bulk"), many_tools_plugin(250, "more")]
    )
    assert len(crowded.registry) >= 503
    after = await _listing(build_server(crowded), revision)
    assert after == before


async def test_the_500_extra_tools_stay_reachable_through_the_trio(make_app: AppFactory) -> None:
    app = make_app(plugins=[many_tools_plugin(250, "bulk"), many_tools_plugin(250, "more")])
    async with Client(build_server(app), mode="legacy") as client:
        found = await client.call_tool(
            "tool_search", {"query": "widget batch 217", "facet": "more"}
        )
        assert searched(found).names[0] == "more_tool_0217"
        called = await client.call_tool(
            "tool_invoke", {"name": "more_tool_0217", "arguments": {"text": "hi"}}
        )
    assert called.content[0].text == "noted: hi"  # type: ignore[union-attr]


async def test_default_listing_is_byte_identical_with_200_more_step_types(
    make_app: AppFactory, revision: str
) -> None:
    from tests.step_fixtures import StepsPlugin, many_step_types_plugin

    before = await _listing(build_server(make_app(plugins=[])), revision)
    crowded = make_app(plugins=[StepsPlugin(), many_step_types_plugin(200)])
    assert len(crowded.registry.step_types) >= 209
    after = await _listing(build_server(crowded), revision)
    assert after == before
