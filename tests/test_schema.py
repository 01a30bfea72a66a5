"""Schema curation: what a model reads is smaller and flatter than pydantic's raw output."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from prixfixe.schema import model_schema


class Window(BaseModel):
    start: str = Field(description="ISO date.")
    end: str | None = None


class Query(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="What to look for.")
    window: Window
    mode: Literal["fast", "exact"] = "fast"
    limit: int | None = None


class Node(BaseModel):
    name: str
    children: list[Node] = []


def test_titles_go_but_a_property_called_title_stays() -> None:
    class Titled(BaseModel):
        title: str

    schema = model_schema(Titled)
    assert "title" not in schema
    assert schema["properties"] == {"title": {"type": "string"}}


def test_nested_models_are_inlined_without_defs() -> None:
    schema = model_schema(Query)
    assert "$defs" not in schema
    window = schema["properties"]["window"]
    assert window["properties"]["start"] == {"description": "ISO date.", "type": "string"}
    assert window["required"] == ["start"]


def test_optional_values_become_a_type_list_and_null_defaults_go() -> None:
    schema = model_schema(Query)
    assert schema["properties"]["limit"] == {"type": ["integer", "null"]}
    assert schema["properties"]["window"]["properties"]["end"] == {"type": ["string", "null"]}


def test_forbidden_extras_are_stated_and_enums_kept() -> None:
    schema = model_schema(Query)
    assert schema["additionalProperties"] is False
    assert schema["properties"]["mode"] == {
        "default": "fast",
        "enum": ["fast", "exact"],
        "type": "string",
    }


def test_recursive_models_keep_the_definitions_they_need() -> None:
    schema = model_schema(Node)
    assert "$defs" in schema
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    from jsonschema import Draft202012Validator

    Draft202012Validator(schema).validate({"name": "a", "children": [{"name": "b"}]})
