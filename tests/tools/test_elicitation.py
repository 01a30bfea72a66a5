"""A call's missing or out-of-enum arguments: asked of the person when the client can (a form
during the call on 2025-11-25, an input_required round on 2026-07-28), else explained to the
model in one structured error it can fix its call from."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field

from prixfixe import Tool, ToolContext, hookimpl
from prixfixe.app import App
from prixfixe.curation import CuratedField
from prixfixe.declarations.interaction import Elicit
from prixfixe.errors import ConfigError
from prixfixe.mcp.server import build_server
from prixfixe.servers.tools import RawArguments
from prixfixe.tools.elicitation import KEY, META_KEY, form_property
from tests.conftest import AppFactory
from tests.plugin_fixtures import WeatherPlugin

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
REMINDER = {"text": "water the plants", "due": "2026-05-01"}
PAINT_SCHEMA = {
    "type": "object",
    "properties": {
        "colour": {"type": "string", "enum": ["red", "blue"], "description": "Paint colour."},
        "coats": {"type": "integer", "minimum": 1, "maximum": 3},
    },
    "required": ["colour", "coats"],
}


# -- a plugin with the tools these tests need ------------------------------------------------


class GreetInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Who to greet.")


async def greet(ctx: ToolContext, args: GreetInput) -> str:
    """Asks its own question once its argument is known, in a round of its own on 2026-07-28."""
    sure = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    answers = await ctx.ask({"confirm": Elicit(f"Greet {args.name}?", sure)}, state="greet-1")
    ok = answers["confirm"].get("content", {}).get("ok")
    return f"hello {args.name}; ok={ok}; own state={ctx.request_state}"


def paint(ctx: ToolContext, args: dict[str, Any]) -> str:
    return "painted " + json.dumps(args, sort_keys=True)


class FixturePlugin:
    __name__ = "elicitation_fixture"

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="fixture.greet",
                title="Greet",
                description="Greet someone after asking whether to.",
                input_model=GreetInput,
                handler=greet,
                mutates=False,
                facet="fixture",
            )
        )
        register(
            Tool(
                name="fixture.greet_strict",
                title="Greet without asking",
                description="Greet someone; never asks for the name.",
                input_model=GreetInput,
                handler=greet,
                mutates=False,
                facet="fixture",
                ask=False,
            )
        )
        register(
            Tool(
                name="fixture.paint",
                title="Paint",
                description="Paint a wall (a raw JSON Schema, as a mounted server's tool).",
                input_model=RawArguments,
                input_schema=PAINT_SCHEMA,
                handler=paint,
                mutates=True,
                facet="fixture",
            )
        )


class Person:
    """The person behind the client: answers each form as scripted, and keeps every form."""

    def __init__(self, *answers: types.ElicitResult) -> None:
        self.answers = list(answers)
        self.forms: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.forms.append(params)
        return self.answers.pop(0) if self.answers else types.ElicitResult(action="cancel")


def accept(**content: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


def _app(make_app: AppFactory, config: str | None = None) -> App:
    return make_app(plugins=[WeatherPlugin(), FixturePlugin()], config=config)


def _client(app: App, revision: str, person: Person | None = None) -> Client:
    return Client(build_server(app), mode=revision, elicitation_callback=person)


def _reminders(app: App) -> list[dict[str, Any]]:
    return [r.record for r in app.store.query("reminder").records]


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def _structured(result: types.CallToolResult) -> dict[str, Any]:
    """The structured error: `structuredContent`, or `_meta` for a tool with an output schema."""
    if result.structured_content is not None:
        return result.structured_content
    assert result.meta is not None
    data: dict[str, Any] = result.meta[META_KEY]
    return data


def _put(via: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if via == "tool_invoke":
        return "tool_invoke", {"name": "store_put", "arguments": arguments}
    return "store_put", arguments


# -- asking -------------------------------------------------------------------------------


@pytest.mark.parametrize("via", ["direct", "tool_invoke"])
async def test_a_missing_argument_is_asked_for_and_the_call_completes(
    make_app: AppFactory, revision: str, via: str
) -> None:
    app = _app(make_app)
    person = Person(accept(kind="reminder"))
    with anyio.fail_after(10):
        async with _client(app, revision, person) as client:
            result = await client.call_tool(*_put(via, {"record": REMINDER}))
    assert result.is_error is False, _text(result)
    assert _text(result).startswith("Created reminder 1")
    (form,) = person.forms
    assert form.requested_schema["properties"] == {
        "kind": {
            "type": "string",
            "title": "Kind",
            "description": "Record kind: reminder, deadline, countdown, or see store_kinds.",
        }
    }
    assert form.requested_schema["required"] == ["kind"]
    assert "kind is missing" in form.message
    assert _reminders(app) == [{**REMINDER, "recurrence": None}]


@pytest.mark.parametrize("via", ["direct", "tool_invoke"])
async def test_declining_ends_the_call_saying_so_and_writes_nothing(
    make_app: AppFactory, revision: str, via: str
) -> None:
    app = _app(make_app)
    person = Person(types.ElicitResult(action="decline"))
    with anyio.fail_after(10):
        async with _client(app, revision, person) as client:
            result = await client.call_tool(*_put(via, {"record": REMINDER}))
    assert result.is_error is True
    assert _text(result) == (
        "The person declined to give kind for store_put; nothing was done. "
        "Ask them before trying again."
    )
    assert _structured(result) == {"error": "declined", "tool": "store_put", "fields": ["kind"]}
    assert _reminders(app) == []


async def test_cancelling_ends_the_call_saying_so_and_writes_nothing(
    make_app: AppFactory, revision: str
) -> None:
    app = _app(make_app)
    person = Person(types.ElicitResult(action="cancel"))
    with anyio.fail_after(10):
        async with _client(app, revision, person) as client:
            result = await client.call_tool("store_put", {"record": REMINDER})
    assert result.is_error is True
    assert _text(result) == "The request for kind (store_put) was cancelled; nothing was done."
    assert _structured(result)["error"] == "cancelled"
    assert _reminders(app) == []


async def test_a_value_outside_the_enum_is_asked_for_again_with_the_choices(
    make_app: AppFactory, revision: str
) -> None:
    app = _app(make_app)
    person = Person(accept(units="imperial"))
    with anyio.fail_after(10):
        async with _client(app, revision, person) as client:
            result = await client.call_tool(
                "tool_invoke",
                {"name": "weather.forecast", "arguments": {"city": "Oslo", "units": "kelvin"}},
            )
    assert result.is_error is False, _text(result)
    (form,) = person.forms
    assert form.requested_schema["properties"]["units"] == {
        "type": "string",
        "enum": ["metric", "imperial"],
        "title": "Units",
        "default": "metric",
    }
    assert 'units "kelvin" is not one of the choices' in form.message


async def test_a_raw_schema_tool_is_asked_from_its_own_schema(
    make_app: AppFactory, revision: str
) -> None:
    app = _app(make_app)
    person = Person(accept(colour="blue", coats=2.0))
    with anyio.fail_after(10):
        async with _client(app, revision, person) as client:
            result = await client.call_tool(
                "tool_invoke", {"name": "fixture.paint", "arguments": {"colour": "green"}}
            )
    assert _text(result) == 'painted {"coats": 2, "colour": "blue"}'  # 2.0 read as an integer
    (form,) = person.forms
    assert form.requested_schema == {
        "type": "object",
        "properties": {
            "colour": {
                "type": "string",
                "enum": ["red", "blue"],
                "title": "Colour",
                "description": "Paint colour.",
            },
            "coats": {"type": "integer", "minimum": 1, "maximum": 3, "title": "Coats"},
        },
        "required": ["colour", "coats"],
    }


async def test_an_answer_that_still_does_not_fit_ends_with_the_fallback_not_another_form(
    make_app: AppFactory, revision: str
) -> None:
    app = _app(make_app)
    person = Person(accept(colour="blue", coats=7), accept(colour="blue", coats=2))
    with anyio.fail_after(10):
        async with _client(app, revision, person) as client:
            result = await client.call_tool(
                "tool_invoke", {"name": "fixture.paint", "arguments": {}}
            )
    assert len(person.forms) == 1
    assert result.is_error is True
    assert _text(result).startswith("invalid arguments for 'fixture.paint' (nothing was done):")
    (problem,) = _structured(result)["problems"]
    assert problem["path"] == "coats"
    assert "7 is greater than the maximum of 3" in problem["message"]


async def test_a_handler_that_asks_after_its_argument_was_elicited_keeps_both(
    make_app: AppFactory, revision: str
) -> None:
    """On 2026-07-28 the handler's own round carries only its own inputResponses; the elicited
    name comes back in the sealed state, and the handler reads back the state it set."""
    app = _app(make_app)
    person = Person(accept(name="Ada"), accept(ok=True))
    with anyio.fail_after(10):
        async with _client(app, revision, person) as client:
            result = await client.call_tool(
                "tool_invoke", {"name": "fixture.greet", "arguments": {}}
            )
    own_state = "greet-1" if revision == MODERN else "None"
    assert _text(result) == f"hello Ada; ok=True; own state={own_state}"
    assert [f.message for f in person.forms] == [
        "Greet (fixture.greet) cannot run yet: name is missing. Nothing was done.",
        "Greet Ada?",
    ]


# -- 2026-07-28 rounds, driven by hand -----------------------------------------------------


async def test_the_input_required_round_trip_completes_the_call(make_app: AppFactory) -> None:
    app = _app(make_app)
    arguments = {"name": "store_put", "arguments": {"record": REMINDER}}
    with anyio.fail_after(10):
        async with _client(app, MODERN, Person()) as client:
            first = await client.session.call_tool(
                "tool_invoke", arguments, allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult)
            assert first.input_requests is not None
            assert list(first.input_requests) == [KEY]
            assert first.request_state is not None
            answer = {KEY: {"action": "accept", "content": {"kind": "reminder"}}}
            done = await client.session.call_tool(
                "tool_invoke",
                arguments,
                input_responses=answer,  # type: ignore[arg-type]
                request_state=first.request_state,
                allow_input_required=True,
            )
    assert isinstance(done, types.CallToolResult)
    assert done.is_error is False, _text(done)
    assert _reminders(app) == [{**REMINDER, "recurrence": None}]


async def test_answers_without_the_request_state_are_asked_for_again_not_trusted(
    make_app: AppFactory,
) -> None:
    app = _app(make_app)
    answer = {KEY: {"action": "accept", "content": {"kind": "reminder"}}}
    with anyio.fail_after(10):
        async with _client(app, MODERN, Person()) as client:
            again = await client.session.call_tool(
                "store_put",
                {"record": REMINDER},
                input_responses=answer,  # type: ignore[arg-type]
                allow_input_required=True,
            )
    assert isinstance(again, types.InputRequiredResult)
    assert again.input_requests is not None
    assert KEY in again.input_requests
    assert _reminders(app) == []


async def test_a_forged_request_state_is_refused(make_app: AppFactory) -> None:
    app = _app(make_app)
    forged = json.dumps({KEY: {"answers": {"kind": "reminder"}}, "handler": None})
    with anyio.fail_after(10):
        async with _client(app, MODERN, Person()) as client:
            with pytest.raises(MCPError) as caught:
                await client.session.call_tool(
                    "store_put", {"record": REMINDER}, request_state=forged
                )
    assert caught.value.code == -32602
    assert _reminders(app) == []


# -- the fallback ---------------------------------------------------------------------------


async def test_without_elicitation_the_error_names_each_field_and_the_call_to_make(
    make_app: AppFactory, revision: str
) -> None:
    app = _app(make_app)
    with anyio.fail_after(10):
        async with _client(app, revision) as client:
            result = await client.call_tool(
                "tool_invoke",
                {"name": "weather.forecast", "arguments": {"days": 2, "units": "kelvin"}},
            )
    assert result.is_error is True
    assert _text(result) == (
        "invalid arguments for 'weather.forecast' (nothing was done):\n"
        "- missing required argument 'city' (a string: City name, e.g. Lisbon.)\n"
        '- argument \'units\': expected one of "metric", "imperial", got "kelvin"\n'
        "Retry: tool_invoke(name='weather.forecast', arguments="
        '{"days": 2, "units": "metric", "city": "<string>"})'
    )
    data = _structured(result)
    assert data["retry"] == {
        "name": "tool_invoke",
        "arguments": {
            "name": "weather.forecast",
            "arguments": {"days": 2, "units": "metric", "city": "<string>"},
        },
    }
    by_path = {p["path"]: p for p in data["problems"]}
    assert by_path["city"] == {
        "path": "city",
        "kind": "missing",
        "message": "missing required argument 'city' (a string: City name, e.g. Lisbon.)",
        "type": "string",
        "required": True,
        "description": "City name, e.g. Lisbon.",
        "example": "<string>",
    }
    assert by_path["units"]["allowed"] == ["metric", "imperial"]
    assert by_path["units"]["example"] == "metric"


@pytest.mark.parametrize("via", ["direct", "tool_invoke"])
async def test_a_scripted_retry_from_the_structured_error_succeeds(
    make_app: AppFactory, revision: str, via: str
) -> None:
    app = _app(make_app)
    intended = {"kind": "reminder"}  # what the agent meant; the error says where it goes
    with anyio.fail_after(10):
        async with _client(app, revision) as client:
            failed = await client.call_tool(*_put(via, {"record": REMINDER}))
            retry = _structured(failed)["retry"]
            inner = retry["arguments"]["arguments"] if via == "tool_invoke" else retry["arguments"]
            for problem in _structured(failed)["problems"]:
                inner[problem["path"]] = intended[problem["path"]]
            done = await client.call_tool(retry["name"], retry["arguments"])
    assert failed.is_error is True
    assert done.is_error is False, _text(done)
    assert _reminders(app) == [{**REMINDER, "recurrence": None}]


async def test_a_listed_tool_with_an_output_schema_keeps_the_error_data_out_of_structured_content(
    make_app: AppFactory, revision: str
) -> None:
    """Some clients check structuredContent against the output schema even on an error; the
    data goes in _meta instead, and the error reaches the model as text."""
    app = _app(make_app)
    with anyio.fail_after(10):
        async with _client(app, revision) as client:
            result = await client.call_tool("store_put", {"record": REMINDER})
    assert result.is_error is True
    assert result.structured_content is None
    assert result.meta is not None
    assert result.meta[META_KEY]["retry"]["name"] == "store_put"
    assert _text(result).endswith(
        'Retry: store_put({"record": {"text": "water the plants", "due": "2026-05-01"}, '
        '"kind": "<string>"})'
    )


async def test_a_field_a_form_cannot_hold_gets_the_fallback_without_asking(
    make_app: AppFactory, revision: str
) -> None:
    app = _app(make_app)
    person = Person(accept(kind="reminder"))
    with anyio.fail_after(10):
        async with _client(app, revision, person) as client:
            result = await client.call_tool(
                "tool_invoke", {"name": "store_put", "arguments": {"kind": "reminder"}}
            )
    assert person.forms == []
    assert result.is_error is True
    (problem,) = _structured(result)["problems"]
    assert (problem["path"], problem["kind"], problem["type"]) == ("record", "missing", "object")
    assert _reminders(app) == []


async def test_a_wrong_type_is_not_asked_for_and_keeps_its_message(
    make_app: AppFactory, revision: str
) -> None:
    app = _app(make_app)
    person = Person()
    with anyio.fail_after(10):
        async with _client(app, revision, person) as client:
            result = await client.call_tool(
                "tool_invoke",
                {"name": "weather.forecast", "arguments": {"city": "Oslo", "days": "3", "x": 1}},
            )
    assert person.forms == []
    problems = _structured(result)["problems"]
    assert [(p["path"], p["kind"]) for p in problems] == [("x", "extra"), ("days", "type")]
    assert "argument 'days': expected integer, got string \"3\"" in _text(result)
    assert "unexpected argument 'x'; accepted: city, days, units" in _text(result)
    assert _structured(result)["retry"]["arguments"]["arguments"] == {"city": "Oslo", "days": 3}


# -- who may ask ----------------------------------------------------------------------------


async def test_a_tool_declared_not_to_ask_gets_the_fallback_even_when_the_client_could(
    make_app: AppFactory, revision: str
) -> None:
    app = _app(make_app)
    person = Person(accept(name="Ada"))
    with anyio.fail_after(10):
        async with _client(app, revision, person) as client:
            result = await client.call_tool(
                "tool_invoke", {"name": "fixture.greet_strict", "arguments": {}}
            )
    assert person.forms == []
    assert result.is_error is True
    assert _structured(result)["problems"][0]["path"] == "name"


async def test_never_ask_in_the_config_stops_a_tool_asking(
    make_app: AppFactory, revision: str
) -> None:
    app = _app(make_app, config='[mcp]\nnever_ask = ["store_put"]\n')
    person = Person(accept(kind="reminder"))
    with anyio.fail_after(10):
        async with _client(app, revision, person) as client:
            result = await client.call_tool("store_put", {"record": REMINDER})
    assert person.forms == []
    assert result.is_error is True
    assert _reminders(app) == []


async def test_ask_for_arguments_false_stops_every_tool_asking(make_app: AppFactory) -> None:
    app = _app(make_app, config="[mcp]\nask_for_arguments = false\n")
    person = Person(accept(kind="reminder"))
    with anyio.fail_after(10):
        async with _client(app, MODERN, person) as client:
            result = await client.call_tool("store_put", {"record": REMINDER})
    assert person.forms == []
    assert result.is_error is True


def test_an_unknown_tool_in_never_ask_is_a_config_error_naming_it(
    make_app: AppFactory,
) -> None:
    with pytest.raises(ConfigError) as caught:
        _app(make_app, config='[mcp]\nnever_ask = ["store_putt"]\n')
    assert "never_ask names unknown tool 'store_putt'; did you mean 'store_put'" in str(
        caught.value
    )
    assert caught.value.data["key"] == "mcp.never_ask"


async def test_the_discovery_trio_does_not_ask_for_its_own_arguments(
    make_app: AppFactory, revision: str
) -> None:
    app = _app(make_app)
    person = Person(accept(name="store_put"))
    with anyio.fail_after(10):
        async with _client(app, revision, person) as client:
            result = await client.call_tool("tool_invoke", {"arguments": {}})
    assert person.forms == []
    assert result.is_error is True
    assert _structured(result)["retry"]["name"] == "tool_invoke"
    assert "missing required argument 'name'" in _text(result)


# -- what a form can hold -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "node", "expected"),
    [
        ("due", {"type": "string", "format": "date"}, {"type": "string", "format": "date"}),
        ("note", {"type": ["string", "null"], "maxLength": 9}, {"type": "string", "maxLength": 9}),
        (
            "mode",
            {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
            {"type": "string", "enum": ["a", "b"]},
        ),
        ("ok", {"type": "boolean"}, {"type": "boolean"}),
        ("at", {"type": "string", "format": "time"}, None),
        ("level", {"enum": [1, 2]}, None),
        ("tags", {"type": "array", "items": {"type": "string"}}, None),
        ("record", {"type": "object"}, None),
        ("record.title", {"type": "string"}, None),
    ],
)
def test_a_form_holds_only_flat_primitive_fields(
    path: str, node: dict[str, Any], expected: dict[str, Any] | None
) -> None:
    prop = form_property(CuratedField(path=path, type="", node=node))
    if expected is None:
        assert prop is None
    else:
        assert prop is not None
        assert {k: v for k, v in prop.items() if k != "title"} == expected


async def test_arguments_that_are_not_an_object_get_an_example_call_of_every_required_field(
    make_app: AppFactory,
) -> None:
    app = _app(make_app)
    with anyio.fail_after(10):
        wrong = await app.call_tool("weather.forecast", ["Oslo"])
    assert isinstance(wrong, types.CallToolResult)
    assert wrong.is_error is True
    assert _text(wrong) == (
        "invalid arguments for 'weather.forecast' (nothing was done):\n"
        "- arguments must be a JSON object, got array\n"
        'Retry: weather.forecast({"city": "<string>"})'
    )
