"""`completion/complete` for resource template arguments, on both revisions."""

from __future__ import annotations

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.plugin_fixtures import ResourcesPlugin

pytestmark = pytest.mark.anyio


def ref(uri: str) -> types.ResourceTemplateReference:
    return types.ResourceTemplateReference(type="ref/resource", uri=uri)


async def test_template_arguments_complete_by_prefix(make_app: AppFactory, revision: str) -> None:
    app = make_app(plugins=[ResourcesPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        notes = await client.complete(
            ref("fixture://notes/{name}"), {"name": "name", "value": "al"}
        )
        kinds = await client.complete(
            ref("prixfixe://store/{kind}/{id}"), {"name": "kind", "value": "d"}
        )
        await client.call_tool(
            "store_put", {"kind": "deadline", "record": {"label": "x", "date": "2026-01-01"}}
        )
        ids = await client.complete(
            ref("prixfixe://store/{kind}/{id}"),
            {"name": "id", "value": ""},
            context_arguments={"kind": "deadline"},
        )
    assert notes.completion.values == ["alpha", "alpine"]
    assert (notes.completion.total, notes.completion.has_more) == (2, False)
    assert kinds.completion.values == ["deadline"]
    assert ids.completion.values == ["1"]


async def test_completing_an_unknown_template_or_variable_is_invalid_params(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[ResourcesPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        with pytest.raises(MCPError) as unknown:
            await client.complete(ref("fixture://nope/{x}"), {"name": "x", "value": ""})
        with pytest.raises(MCPError) as variable:
            await client.complete(ref("fixture://notes/{name}"), {"name": "title", "value": ""})
        with pytest.raises(MCPError) as prompt:
            await client.complete(
                types.PromptReference(type="ref/prompt", name="greet"), {"name": "a", "value": ""}
            )
    assert unknown.value.code == variable.value.code == prompt.value.code == -32602
    assert "no resource template 'fixture://nope/{x}'" in unknown.value.message
    assert "has no variable 'title' (variables: name)" in variable.value.message
    assert "unknown prompt 'greet'" in prompt.value.message
