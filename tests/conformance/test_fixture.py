"""The conformance fixture's answers, checked here: the suite's `tools-call-simple-text` and
`tools-call-error` pass even against a server without those tools, so they prove nothing."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from prixfixe.mcp.server import build_server
from tests.conformance import plugin
from tests.conftest import AppFactory

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


async def _elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Alice", "response": "yes"})


async def _sample(ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    text = types.TextContent(type="text", text="Paris")
    return types.CreateMessageResult(role="assistant", content=text, model="fixture")


async def _roots(ctx: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work")])


def _client(app: Any, revision: str) -> Client:
    return Client(
        build_server(app),
        mode=revision,
        elicitation_callback=_elicit,
        sampling_callback=_sample,
        list_roots_callback=_roots,
    )


async def test_simple_text_and_error_tools_answer_exactly(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[plugin])
    async with _client(app, revision) as client:
        text = await client.call_tool("test_simple_text", {})
        error = await client.call_tool("test_error_handling", {})
    assert text.is_error is False
    assert text.content == [types.TextContent(type="text", text=plugin.SIMPLE_TEXT)]
    assert error.is_error is True
    assert error.content[0].text == plugin.ERROR_TEXT  # type: ignore[union-attr]


async def test_a_2020_12_input_schema_is_listed_unchanged_and_checks_calls(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[plugin], env={"PRIXFIXE_EXPOSE": "core,conformance"})
    async with _client(app, revision) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        fine = await client.call_tool(
            "json_schema_2020_12_tool", {"name": "Ada", "contactMethod": "phone", "phone": "1"}
        )
        refused = await client.call_tool(
            "json_schema_2020_12_tool", {"name": "Ada", "contactMethod": "phone"}
        )
    assert listed["json_schema_2020_12_tool"].input_schema == plugin.JSON_SCHEMA_2020_12
    assert fine.is_error is False
    assert fine.content == [types.TextContent(type="text", text="contact Ada by phone")]
    assert refused.is_error is True  # `then` requires phone: checked in the schema's dialect
    assert "phone" in refused.content[0].text  # type: ignore[union-attr]


async def test_content_tools_return_images_audio_and_resources(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[plugin])
    async with _client(app, revision) as client:
        image = (await client.call_tool("test_image_content", {})).content
        audio = (await client.call_tool("test_audio_content", {})).content
        mixed = (await client.call_tool("test_multiple_content_types", {})).content
    assert isinstance(image[0], types.ImageContent)
    assert base64.b64decode(image[0].data) == plugin.PNG
    assert isinstance(audio[0], types.AudioContent)
    assert audio[0].mime_type == "audio/wav"
    assert [c.type for c in mixed] == ["text", "image", "resource"]
    assert json.loads(mixed[2].resource.text) == {"test": "data", "value": 123}  # type: ignore[union-attr]


async def test_asking_the_client_works_in_both_revisions(
    make_app: AppFactory, revision: str
) -> None:
    """2025-11-25: server→client requests; 2026-07-28: input_required rounds the client
    drives (the SDK client answers them with the same callbacks)."""
    app = make_app(plugins=[plugin])
    async with _client(app, revision) as client:
        hello = await client.call_tool("test_input_required_result_elicitation", {})
        both = await client.call_tool("test_input_required_result_multiple_inputs", {})
        sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
    assert hello.content[0].text == "Hello, Alice!"  # type: ignore[union-attr]
    assert both.content[0].text == "Paris Alice; 1 roots"  # type: ignore[union-attr]
    assert sampled.content[0].text == "LLM response: Paris"  # type: ignore[union-attr]


async def test_multi_round_state_comes_back_sealed_and_verified(make_app: AppFactory) -> None:
    app = make_app(plugins=[plugin])
    async with _client(app, "2026-07-28") as client:
        rounds = await client.call_tool("test_input_required_result_multi_round", {})
        state = await client.call_tool("test_input_required_result_request_state", {})
    assert rounds.content[0].text == "Alice likes "  # type: ignore[union-attr]
    assert state.content[0].text.startswith("state-ok")  # type: ignore[union-attr]


async def test_a_tool_needing_an_undeclared_capability_is_32021(make_app: AppFactory) -> None:
    app = make_app(plugins=[plugin])
    async with Client(build_server(app), mode="2026-07-28") as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("test_missing_capability", {})
    assert caught.value.code == -32021
    assert "sampling" in caught.value.message


async def test_prompts_and_resources_the_suite_reads(make_app: AppFactory, revision: str) -> None:
    app = make_app(plugins=[plugin])
    async with _client(app, revision) as client:
        args = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        asked = await client.get_prompt("test_input_required_result_prompt")
        data = await client.read_resource("test://template/123/data")
    assert args.messages[0].content.text == "Prompt with arguments: arg1='a', arg2='b'"  # type: ignore[union-attr]
    assert asked.messages[0].content.text == "Use this context: "  # type: ignore[union-attr]
    assert json.loads(data.contents[0].text)["id"] == "123"  # type: ignore[union-attr]


def test_ci_runs_the_conformance_script() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    script = (ROOT / "scripts" / "conformance.sh").read_text()
    assert "scripts/conformance.sh" in ci
    assert ci.index("<!-- test-command -->") < ci.rindex("scripts/conformance.sh")
    assert "--plugin tests.conformance.plugin" in script
    assert '--requirements "$revision"' in script
    assert "0.2.0-alpha.12" in script
