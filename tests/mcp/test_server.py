"""The MCP layer through a real in-memory `mcp.Client`, on both protocol revisions."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from prixfixe.mcp.server import build_server
from tests.conftest import CORE_TOOLS, AppFactory
from tests.search_text import searched

pytestmark = pytest.mark.anyio


async def test_default_listing_is_the_core_facet_with_annotations(
    make_app: AppFactory, revision: str
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        result = await client.list_tools()
    names = [t.name for t in result.tools]
    assert names == CORE_TOOLS
    search = result.tools[0]
    assert search.annotations is not None
    assert search.annotations.read_only_hint is True
    # No listed tool of prixfixe's own spends listing tokens on an output schema or a title.
    assert all(t.output_schema is None and t.title is None for t in result.tools)
    invoke = result.tools[2]
    # MCP's default (a tool may write) goes unsaid: tool_invoke has no hints at all.
    assert invoke.annotations is None
    # Clients that defer tools until searched keep the trio loaded, and only the trio.
    always = [t.name for t in result.tools if (t.meta or {}).get("anthropic/alwaysLoad")]
    assert always == ["tool_search", "tool_describe", "tool_invoke"]


async def test_instructions_name_the_trio_and_facet_provenance(make_app: AppFactory) -> None:
    async with Client(build_server(make_app()), mode="legacy") as client:
        text = client.instructions or ""
    assert "tool_search" in text
    assert "tool_invoke" in text
    assert "core (from default)" in text


async def test_search_describe_invoke_reach_an_unlisted_tool(
    make_app: AppFactory, revision: str
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert "weather.forecast" not in listed

        found = searched(
            await client.call_tool("tool_search", {"query": "temperature forecast for a city"})
        )
        assert found.names[0] == "weather.forecast"
        assert found.good_match is True
        assert "listed" not in found.notes["weather.forecast"]

        described = await client.call_tool("tool_describe", {"name": "weather.forecast"})
        assert described.structured_content is None
        text = described.content[0].text  # type: ignore[union-attr]
        assert "tool_invoke(name='weather.forecast'" in text, "unlisted: says how to call it"
        assert "- city (string, required)" in text
        assert "- days (integer" in text
        assert "required" not in text.split("- days")[1]
        assert "Returns: city, days, highs" in text

        called = await client.call_tool(
            "tool_invoke", {"name": "weather.forecast", "arguments": {"city": "Lisbon", "days": 2}}
        )
    assert called.is_error is False
    assert called.structured_content == {"city": "Lisbon", "days": 2, "highs": [20.0, 21.0]}
    assert json.loads(called.content[0].text) == called.structured_content  # type: ignore[union-attr]


async def test_structured_content_validates_against_the_advertised_output_schema(
    make_app: AppFactory, revision: str
) -> None:
    from jsonschema import Draft202012Validator

    app = make_app()
    async with Client(build_server(app), mode=revision) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool(
            "store_put",
            {"kind": "reminder", "record": {"text": "renew the passport", "due": "2026-11-27"}},
        )
    # Not in the listing (MCP allows structuredContent without one); the tool's contract,
    # as tool_describe and the capability index give it.
    assert listed["store_put"].output_schema is None
    schema = app.registry.get("store_put").output_schema
    assert schema is not None
    Draft202012Validator(schema).validate(result.structured_content)
    # The payload travels once for the model: one text block, not the JSON a second time.
    (block,) = result.content
    assert block.type == "text"
    assert block.text == "Created reminder 1 (store generation 1)."


async def test_unknown_tool_is_a_protocol_error_with_suggestions(
    make_app: AppFactory, revision: str
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("tool_serch", {"query": "x"})
        assert caught.value.code == -32602
        assert "unknown tool 'tool_serch'" in caught.value.message
        assert "tool_search" in caught.value.data["suggestions"]
        # ...and the server keeps serving.
        assert len((await client.list_tools()).tools) == len(CORE_TOOLS)


async def test_wrong_argument_types_name_the_field_and_expected_type(
    make_app: AppFactory, revision: str
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        result = await client.call_tool("tool_search", {"query": "notes", "limit": "five"})
        assert result.is_error is True
        text = result.content[0].text  # type: ignore[union-attr]
        assert "'limit': expected integer, got string \"five\"" in text
        ok = await client.call_tool("tool_search", {"query": "notes"})
        assert ok.is_error is False


async def test_missing_required_argument_is_named(make_app: AppFactory, revision: str) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        result = await client.call_tool(
            "tool_invoke", {"name": "weather.forecast", "arguments": {"days": 2}}
        )
    assert result.is_error is True
    text = result.content[0].text  # type: ignore[union-attr]
    assert "invalid arguments for 'weather.forecast'" in text
    assert "missing required argument 'city'" in text


async def test_unexpected_and_out_of_range_arguments_are_named(make_app: AppFactory) -> None:
    async with Client(build_server(make_app()), mode="legacy") as client:
        result = await client.call_tool(
            "tool_invoke",
            {
                "name": "weather.forecast",
                "arguments": {"city": "Oslo", "days": 99, "colour": "red"},
            },
        )
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error is True
    assert "unexpected argument 'colour'; accepted: city, days, units" in text
    assert "'days': 99 is greater than the maximum of 14" in text


async def test_tool_invoke_refuses_the_discovery_trio(make_app: AppFactory, revision: str) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        for name in ("tool_search", "tool_describe", "tool_invoke"):
            result = await client.call_tool(
                "tool_invoke", {"name": name, "arguments": {"query": "x", "name": "y"}}
            )
            assert result.is_error is True
            assert f"does not call {name!r}" in result.content[0].text  # type: ignore[union-attr]


async def test_tool_invoke_of_unknown_name_is_a_readable_tool_error(make_app: AppFactory) -> None:
    async with Client(build_server(make_app()), mode="legacy") as client:
        result = await client.call_tool("tool_invoke", {"name": "weather.forcast"})
    assert result.is_error is True
    text = result.content[0].text  # type: ignore[union-attr]
    assert "unknown tool 'weather.forcast'" in text
    assert "did you mean 'weather.forecast'" in text


async def test_a_failing_handler_becomes_an_error_result_and_the_server_keeps_serving(
    make_app: AppFactory, revision: str
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        boom = await client.call_tool("tool_invoke", {"name": "archive_explode"})
        refused = await client.call_tool("tool_invoke", {"name": "archive_refuse"})
        after = await client.call_tool("tool_search", {"query": "note"})
    assert boom.is_error is True
    assert "RuntimeError: the fixture tool failed on purpose" in boom.content[0].text  # type: ignore[union-attr]
    assert refused.is_error is True
    assert refused.content[0].text == "the archive is read-only today"  # type: ignore[union-attr]
    assert after.is_error is False


async def test_denied_facet_is_gone_from_listing_search_and_invocation(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(config='[mcp]\nexpose = ["core", "weather"]\ndeny = ["weather"]\n')
    async with Client(build_server(app), mode=revision) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert "weather.forecast" not in listed
        found = await client.call_tool("tool_search", {"query": "weather forecast temperature"})
        assert "weather.forecast" not in searched(found).names
        via_trio = await client.call_tool(
            "tool_invoke", {"name": "weather.forecast", "arguments": {"city": "x"}}
        )
        assert via_trio.is_error is True
        assert "denied" in via_trio.content[0].text  # type: ignore[union-attr]
        described = await client.call_tool("tool_describe", {"name": "weather.forecast"})
        assert described.is_error is True
        with pytest.raises(MCPError, match="denied"):
            await client.call_tool("weather.forecast", {"city": "x"})


async def test_exposed_facet_is_listed_and_callable_directly(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(env={"PRIXFIXE_EXPOSE": "core,weather"})
    async with Client(build_server(app), mode=revision) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == [*CORE_TOOLS, "weather.forecast"]
        result = await client.call_tool("weather.forecast", {"city": "Porto"})
    assert result.structured_content == {"city": "Porto", "days": 3, "highs": [20.0, 21.0, 22.0]}


async def test_narrow_server_lists_and_serves_only_its_facet(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(facet="weather")
    async with Client(build_server(app), mode=revision) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["weather.forecast"]
        with pytest.raises(MCPError, match="unknown tool 'notes_add'"):
            await client.call_tool("notes_add", {"text": "x"})
        ok = await client.call_tool("weather.forecast", {"city": "Faro", "days": 1})
    assert ok.structured_content == {"city": "Faro", "days": 1, "highs": [20.0]}


async def test_search_with_nothing_fitting_says_no_good_match_with_weak_nearest(
    make_app: AppFactory, revision: str
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        result = await client.call_tool(
            "tool_search", {"query": "transcode the council video into hevc daily"}
        )
    found = searched(result)
    assert found.good_match is False
    assert found.names, "the nearest tools are still shown"
    assert found.text.startswith("No good match for 'transcode the council video")


async def test_search_sharing_no_term_with_any_tool_says_no_good_match(
    make_app: AppFactory,
) -> None:
    async with Client(build_server(make_app()), mode="legacy") as client:
        result = await client.call_tool("tool_search", {"query": "transcode video hevc"})
    found = searched(result)
    # Ranked by meaning too (the default): the nearest tools, none called a match.
    assert found.good_match is False
    assert found.names
    assert found.text.startswith("No good match for 'transcode video hevc'; nearest:")


async def test_lexical_search_sharing_no_term_with_any_tool_lists_nothing(
    make_app: AppFactory,
) -> None:
    app = make_app(config="[search]\nsemantic = false\n")
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool("tool_search", {"query": "transcode video hevc"})
    found = searched(result)
    assert (found.good_match, found.names) == (False, [])
    assert found.text.startswith("No tool fits 'transcode video hevc'")


async def test_search_facet_filter_and_unknown_facet(make_app: AppFactory) -> None:
    async with Client(build_server(make_app()), mode="legacy") as client:
        only = await client.call_tool("tool_search", {"query": "note", "facet": "notes"})
        assert set(searched(only).names) == {"notes_add"}
        bad = await client.call_tool("tool_search", {"query": "note", "facet": "nope"})
    assert bad.is_error is True
    assert "unknown facet 'nope'" in bad.content[0].text  # type: ignore[union-attr]
    assert "weather" in bad.content[0].text  # type: ignore[union-attr]


async def test_search_results_never_carry_schemas(make_app: AppFactory) -> None:
    async with Client(build_server(make_app()), mode="legacy") as client:
        result = await client.call_tool("tool_search", {"query": "forecast", "limit": 10})
    found = searched(result)
    assert found.names
    for row in found.text.splitlines()[1:]:  # one line a tool: name, notes, first sentence
        assert "{" not in row
        assert "schema" not in row.lower()


async def test_arguments_of_the_wrong_shape_and_oversized_payloads_are_refused_clearly(
    make_app: AppFactory, revision: str
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        not_object = await client.call_tool(
            "tool_invoke", {"name": "weather.forecast", "arguments": "city=Lisbon"}
        )
        huge = await client.call_tool(
            "tool_invoke", {"name": "notes_add", "arguments": {"text": "x" * 1_200_000}}
        )
        long_query = await client.call_tool("tool_search", {"query": "q" * 5000})
        still_fine = await client.call_tool(
            "tool_invoke", {"name": "notes_add", "arguments": {"text": "ok"}}
        )
    assert not_object.is_error is True
    assert "'arguments': expected object, got string" in not_object.content[0].text  # type: ignore[union-attr]
    assert huge.is_error is True
    assert "bytes of JSON; the limit is 1,000,000" in huge.content[0].text  # type: ignore[union-attr]
    assert long_query.is_error is True
    assert "'query'" in long_query.content[0].text  # type: ignore[union-attr]
    assert still_fine.content[0].text == "noted: ok"  # type: ignore[union-attr]


async def test_a_listed_tool_called_through_tool_invoke_answers_exactly_as_called_directly(
    make_app: AppFactory, revision: str
) -> None:
    # A client may route every call through the one stable tool_invoke (its prompt cache then
    # never sees a new tool); the answer must not depend on the route.
    async with Client(build_server(make_app()), mode=revision) as client:
        record = {"text": "renew the passport", "due": "2026-11-27"}
        await client.call_tool("store_put", {"kind": "reminder", "record": record})
        direct = await client.call_tool("store_query", {"kind": "reminder"})
        routed = await client.call_tool(
            "tool_invoke", {"name": "store_query", "arguments": {"kind": "reminder"}}
        )
    assert routed.is_error is False
    assert routed.content == direct.content
    assert routed.structured_content == direct.structured_content
    assert '{"text":"renew the passport","due":"2026-11-27","recurrence":null}' in (
        direct.content[0].text  # type: ignore[union-attr]
    )
