"""Argument validation: strict like the advertised schema, explained in the schema's terms."""

from __future__ import annotations

import datetime as dt
from enum import Enum
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, field_validator

from prixfixe import Tool
from prixfixe.core.registry import RegisteredTool
from prixfixe.errors import InvalidArgumentsError
from prixfixe.tools.validation import validate_arguments


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


class Booking(BaseModel):
    model_config = ConfigDict(extra="forbid")

    day: dt.date
    seats: int = Field(ge=1)
    price: float = 0.0
    colour: Colour = Colour.RED
    note: str | None = None

    @field_validator("note")
    @classmethod
    def no_shouting(cls, value: str | None) -> str | None:
        if value is not None and value.isupper():
            raise ValueError("please do not shout")
        return value


def _entry() -> RegisteredTool:
    tool = Tool(
        name="book",
        title="Book",
        description="Book seats.",
        input_model=Booking,
        handler=lambda ctx, args: "ok",
        mutates=True,
        facet="misc",
    )
    return RegisteredTool(tool)


def _problems(arguments: Any) -> list[str]:
    with pytest.raises(InvalidArgumentsError) as caught:
        validate_arguments(_entry(), arguments)
    return caught.value.problems


def test_json_typed_values_become_python_types() -> None:
    args = validate_arguments(
        _entry(), {"day": "2026-12-01", "seats": 2, "price": 10, "colour": "blue"}
    )
    assert isinstance(args, Booking)
    assert args.day == dt.date(2026, 12, 1)
    assert args.price == 10.0
    assert args.colour is Colour.BLUE


def test_strings_are_not_coerced_to_numbers() -> None:
    assert _problems({"day": "2026-12-01", "seats": "2"}) == [
        "argument 'seats': expected integer, got string \"2\""
    ]


def test_enum_and_missing_problems_are_each_named() -> None:
    problems = _problems({"colour": "green"})
    assert "missing required argument 'day' (a string)" in problems
    assert any("missing required argument 'seats'" in p for p in problems)
    assert 'argument \'colour\': expected one of "red", "blue", got "green"' in problems


def test_constraints_only_the_model_knows_are_reported_from_the_model() -> None:
    problems = _problems({"day": "2026-12-01", "seats": 1, "note": "HELLO"})
    assert problems == ["argument 'note': Value error, please do not shout"]


def test_a_malformed_date_is_named() -> None:
    problems = _problems({"day": "next tuesday", "seats": 1})
    assert len(problems) == 1
    assert problems[0].startswith("argument 'day':")


def _issues(arguments: Any, entry: RegisteredTool | None = None) -> list[tuple[str, str]]:
    with pytest.raises(InvalidArgumentsError) as caught:
        validate_arguments(entry or _entry(), arguments)
    return [(p.path, p.kind) for p in caught.value.issues]


def test_each_problem_is_also_structured_by_path_and_kind() -> None:
    assert _issues({"seats": "2", "colour": "green", "extra": 1, "other": 2}) == [
        ("extra", "extra"),
        ("other", "extra"),
        ("day", "missing"),
        ("colour", "enum"),
        ("seats", "type"),
    ]
    assert _issues({"day": "2026-12-01", "seats": 1, "note": "HELLO"}) == [("note", "other")]
    assert _issues([1]) == [("", "other")]


class Nested(BaseModel):
    model_config = ConfigDict(extra="forbid")

    class Item(BaseModel):
        name: str
        size: Colour | None = None

    items: list[Item]


def test_nested_problems_carry_their_dot_path() -> None:
    tool = Tool(
        name="nest",
        title="Nest",
        description="Nested.",
        input_model=Nested,
        handler=lambda ctx, args: "ok",
        mutates=False,
        facet="misc",
    )
    entry = RegisteredTool(tool)
    assert _issues({"items": [{"size": "red"}, {"name": "b", "size": "huge"}]}, entry) == [
        ("items[0].name", "missing"),
        ("items[1].size", "enum"),
    ]
    with pytest.raises(InvalidArgumentsError) as caught:
        validate_arguments(entry, {"items": [{"name": "b", "size": "huge"}]})
    assert caught.value.problems == [
        'argument \'items[0].size\': expected one of "red", "blue", null, got "huge"'
    ]
