"""The curation pipeline: flatten, filter, enrich, format — on schemas and on data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from mcp import Client
from pydantic import BaseModel, ConfigDict

from prixfixe import CurationRule, PropertyInfo, Tool, ToolContext, hookimpl
from prixfixe.core.registry import Registry
from prixfixe.curation import MISSING, Curator, curator_for, schema_fields
from prixfixe.curation.calls import call_text, example_arguments
from prixfixe.errors import RegistryError
from prixfixe.mcp.server import build_server
from prixfixe.schema import model_schema
from prixfixe.tools.discovery import describe_data
from tests.conftest import AppFactory
from tests.plugin_fixtures import WeatherPlugin
from tests.test_schema import Routine, Step

pytestmark = pytest.mark.anyio


def plain() -> Curator:
    return curator_for(Registry())


def core() -> Curator:
    from prixfixe.curation.builtin import RULES

    return Curator((), RULES)


def test_a_pydantic_schema_is_one_line_a_property_with_nested_ones_as_dot_paths() -> None:
    curated = plain().schema(model_schema(Routine), "tool:x")
    assert curated.lines() == [
        "- routine (string, required): Which routine.",
        "- when (date, required)",
        '- format (markdown|data, default "markdown")',
        "- steps (array of object)",
        "- steps[].name (string, required): Shown in the report.",
        "- steps[].timeout (number|null)",
        "- tags (array of string)",
        "- limit (integer, default 5, ≥ 1)",
    ]


RAW = {
    "type": "object",
    "$defs": {
        "Owner": {
            "type": "object",
            "properties": {
                "login": {"type": "string", "description": "GitHub login", "examples": ["octo"]},
                "id": {"type": "integer", "readOnly": True},
            },
            "required": ["login"],
        }
    },
    "properties": {
        "repo": {
            "allOf": [
                {"type": "object", "properties": {"name": {"type": "string", "maxLength": 100}}},
                {"properties": {"owner": {"$ref": "#/$defs/Owner"}}, "required": ["owner"]},
            ]
        },
        "state": {"type": "string", "enum": ["open", "closed"], "default": "open"},
        "since": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]},
        "_internal_token": {"type": "string"},
    },
    "required": ["repo"],
}


def test_a_raw_schema_with_refs_allof_and_nullables_flattens_and_drops_noise() -> None:
    curated = core().schema(RAW, "tool:github.list_issues")
    assert [f.path for f in curated.fields] == [
        "repo",
        "repo.name",
        "repo.owner",
        "repo.owner.login",
        "state",
        "since",
    ]
    assert curated.dropped == {"internal": 1, "read-only": 1}
    by_path = {f.path: f for f in curated.fields}
    assert by_path["repo.owner"].required
    assert by_path["repo.owner.login"].required
    assert by_path["state"].values == ("open", "closed")
    assert by_path["state"].closed
    assert by_path["repo.name"].limits == "≤ 100 chars"
    assert by_path["since"].type == "date-time|null"
    assert "Format: ISO 8601" in curated.text()
    assert 'e.g. "octo"' in curated.text()
    assert curated.footer() == "(left out: 1 internal, 1 read-only)"


def test_a_recursive_schema_stops_instead_of_looping() -> None:
    schema = {
        "type": "object",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "child": {"$ref": "#/$defs/Node"}},
            }
        },
        "properties": {"root": {"$ref": "#/$defs/Node"}},
    }
    paths = [f.path for f in schema_fields(schema)]
    assert paths[:3] == ["root", "root.name", "root.child"]
    assert len(paths) < 20


def test_data_is_flattened_and_empty_internal_transient_and_unserialisable_values_left_out() -> (
    None
):
    value: dict[str, Any] = {
        "repo": {"url": "https://x", "_cache": 1, "notes": ""},
        "items": [{"n": i} for i in range(25)],
        "labels": ["a", "b"],
        "duration_ms": 12,
        "blob": object(),
        "nan": float("nan"),
        "none": None,
    }
    curated = core().data(value, "result:x")
    paths = [f.path for f in curated.fields]
    assert paths[:2] == ["repo.url", "items[0].n"]
    assert "items[19].n" in paths
    assert "items[20].n" not in paths
    assert "labels" in paths
    assert curated.omitted_items == 5
    assert curated.dropped == {
        "empty": 2,
        "internal": 1,
        "transient": 1,
        "unserialisable": 2,
    }
    assert curated.text().splitlines()[-1] == (
        "(left out: 2 empty, 1 internal, 1 transient, 2 unserialisable, 5 more list items)"
    )
    assert curated.lines()[:4] == ["repo:", "  url: https://x", "items[0]:", "  n: 0"]
    assert 'labels: ["a", "b"]' in curated.lines()


def test_data_is_explained_by_its_schema_and_a_long_value_is_cut() -> None:
    schema = model_schema(Routine)
    curated = core().data(
        {"routine": "x" * 500, "steps": [{"name": "fetch"}], "limit": 3}, "step:y", schema
    )
    lines = curated.text().splitlines()
    assert lines[0].startswith("routine: xxx")
    assert lines[0].endswith("(500 chars) — Which routine.")
    assert lines[1:3] == ["steps[0]:", "  name: fetch — Shown in the report."]
    view = curated.view("a routine", ["routine_run(name='x')"])
    assert view.entries[2].type == "integer"
    assert view.entries[2].value == 3
    assert view.next == ["routine_run(name='x')"]
    assert view.curation_version == 1


def test_the_dictionary_fills_what_the_schema_does_not_say_most_specific_entry_first() -> None:
    infos = [
        PropertyInfo(path="*", scope="*", description="anything", unit="?"),
        PropertyInfo(path="timeout", description="Seconds to wait.", unit="s", example=30),
        PropertyInfo(path="steps.timeout", scope="tool:x", unit="ms"),
        PropertyInfo(path="routine", scope="tool:x", description="never: the schema says it"),
    ]
    curated = Curator(infos, ()).schema(model_schema(Routine), "tool:x")
    by_path = {f.path: f for f in curated.fields}
    timeout = by_path["steps[].timeout"]
    assert (timeout.unit, timeout.description, timeout.example) == ("ms", "Seconds to wait.", 30)
    assert by_path["routine"].description == "Which routine."
    assert by_path["when"].description == "anything"


def test_a_later_plugin_refines_an_earlier_entry_for_the_same_property() -> None:
    first = PropertyInfo(path="city", description="core's words")
    later = PropertyInfo(path="city", description="the plugin's words")
    curated = Curator([first, later], ()).schema(model_schema(Step), "tool:x")
    assert curated.fields == Curator([first, later], ()).schema(model_schema(Step), "t").fields
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    assert Curator([first, later], ()).schema(schema, "x").fields[0].description == (
        "the plugin's words"
    )


def test_example_arguments_fill_required_fields_from_examples_defaults_and_placeholders() -> None:
    fields = core().schema(RAW, "tool:t").fields
    assert example_arguments(fields) == {"repo": {"owner": {"login": "octo"}}}
    assert example_arguments(fields, only=["state", "since"]) == {
        "repo": {"owner": {"login": "octo"}},
        "state": "open",
        "since": "<ISO 8601, e.g. 2026-01-31T09:00:00Z>",
    }
    steps = plain().schema(model_schema(Routine), "t").fields
    assert example_arguments(steps, only=["steps[].name"]) == {
        "routine": "<string>",
        "when": "<date>",
        "steps": [{"name": "<string>"}],
    }
    assert call_text("t", {"a": 1}, listed=True) == 't({"a": 1})'
    assert call_text("t", {}, listed=False) == "tool_invoke(name='t', arguments={})"
    assert MISSING is not None
    assert not MISSING


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        (PropertyInfo(path=" "), "empty path"),
        (PropertyInfo(path="x"), "says nothing"),
        (CurationRule(name="all", reason="noise"), "drops everything"),
        (CurationRule(name="bad", reason="Loud Reason", paths=("x",)), "lowercase word"),
        (CurationRule(name="odd", reason="x", paths=("x",), applies="never"), "applies"),  # type: ignore[arg-type]
    ],
)
def test_a_curation_declaration_that_cannot_work_is_refused_naming_why(
    declared: object, message: str
) -> None:
    with pytest.raises(RegistryError, match=message):
        Registry().add_plugin("p", property_infos=[declared]) if isinstance(
            declared, PropertyInfo
        ) else Registry().add_plugin("p", curation_rules=[declared])


# -- through a real client: a plugin's rules reach tool_describe ------------------------------


class ShipInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    weight: float
    destination: str
    debug_trace: bool = False


async def ship(ctx: ToolContext, args: ShipInput) -> str:
    return "shipped"


class ShippingPlugin:
    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="parcel_ship",
                title="Ship a parcel",
                description="Ship a parcel.",
                input_model=ShipInput,
                handler=ship,
                mutates=True,
                facet="shipping",
            )
        )

    @hookimpl
    def register_curation(self, register: Callable[[PropertyInfo | CurationRule], None]) -> None:
        register(PropertyInfo(path="weight", scope="tool:parcel_*", unit="kg", example=2.5))
        register(
            PropertyInfo(
                path="destination", description="Postal code and country.", example="1000-001 PT"
            )
        )
        register(CurationRule(name="debug", reason="internal", paths=("debug_*",), scope="tool:*"))


async def test_a_plugins_dictionary_and_rules_shape_what_tool_describe_shows(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[WeatherPlugin(), ShippingPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        result = await client.call_tool("tool_describe", {"name": "parcel_ship"})
    text = result.content[0].text  # type: ignore[union-attr]
    assert "- weight (number, required, kg): e.g. 2.5." in text
    assert '- destination (string, required): Postal code and country. e.g. "1000-001 PT".' in text
    assert "debug_trace" not in text
    assert text.splitlines()[-1] == (
        "Call: tool_invoke(name='parcel_ship', arguments={\"weight\": 2.5, "
        '"destination": "1000-001 PT"})'
    )
    data = describe_data(app, "parcel_ship")  # what `prixfixe tools describe --json` prints
    assert [p.path for p in data.parameters] == ["weight", "destination"]
    assert "debug_trace" in data.input_schema["properties"], "the exact schema stays whole"


# -- a nested schema through tool_describe keeps every parameter a call needs -----------------

NESTED = {
    "type": "object",
    "$defs": {
        "Person": {
            "type": "object",
            "properties": {
                "login": {"type": "string", "description": "Their handle."},
                "id": {"type": "integer", "readOnly": True},
            },
            "required": ["login"],
        }
    },
    "properties": {
        "issue": {
            "allOf": [
                {
                    "type": "object",
                    "properties": {"title": {"type": "string", "minLength": 1}},
                    "required": ["title"],
                },
                {"properties": {"author": {"$ref": "#/$defs/Person"}}, "required": ["author"]},
            ]
        },
        "labels": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "color": {"type": "string", "pattern": "^[0-9a-f]{6}$"},
                },
                "required": ["name"],
            },
        },
        "priority": {"type": "integer", "enum": [1, 2, 3]},
    },
    "required": ["issue", "labels", "priority"],
    "additionalProperties": False,
}


async def file_issue(ctx: ToolContext, args: dict[str, Any]) -> str:
    return f"filed {args['issue']['title']!r}"


class TrackerPlugin:
    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="tracker.file",
                title="File an issue",
                description="File an issue.",
                input_model=ShipInput,  # only names the arguments for search
                input_schema=NESTED,
                handler=file_issue,
                mutates=True,
                facet="tracker",
            )
        )

    @hookimpl
    def register_curation(self, register: Callable[[PropertyInfo | CurationRule], None]) -> None:
        # A glob reaches every tool of one server (mounted tools are named SERVER.tool).
        register(PropertyInfo(path="priority", scope="tool:tracker.*", description="1 is urgent."))


def _filled(value: Any) -> Any:
    """The example call with each `<type>` placeholder replaced by a value of that type."""
    if isinstance(value, dict):
        return {k: _filled(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v) for v in value]
    if value == "<integer>":
        return 1
    if isinstance(value, str) and value.startswith("<"):
        return "x"
    return value


async def test_a_nested_raw_schema_described_keeps_every_parameter_a_call_needs(
    make_app: AppFactory, revision: str
) -> None:
    import json

    from jsonschema import Draft202012Validator

    app = make_app(plugins=[TrackerPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        described = await client.call_tool("tool_describe", {"name": "tracker.file"})
        text = described.content[0].text  # type: ignore[union-attr]
        call = text.splitlines()[-1]
        arguments = _filled(json.loads(call.split("arguments=", 1)[1][:-1]))
        Draft202012Validator(NESTED).validate(arguments)  # the example is a valid call
        called = await client.call_tool(
            "tool_invoke", {"name": "tracker.file", "arguments": arguments}
        )
    argument_lines = [line for line in text.splitlines() if line.startswith("- ")]
    shown = [line.split(" (")[0].removeprefix("- ") for line in argument_lines]
    assert shown == [
        "issue",
        "issue.title",
        "issue.author",
        "issue.author.login",
        "labels",
        "labels[].name",
        "labels[].color",
        "priority",
    ], "every settable parameter, the read-only id left out"
    assert "- priority (1|2|3, required): 1 is urgent." in text
    assert "- labels[].color (string, pattern ^[0-9a-f]{6}$)" in text
    assert arguments == {
        "issue": {"title": "x", "author": {"login": "x"}},
        "labels": [{"name": "x"}],
        "priority": 1,
    }
    assert called.is_error is False
    assert called.content[0].text == "filed 'x'"  # type: ignore[union-attr]
