"""What a record field holds, as far as filtering and sorting care: text, number, boolean,
date, datetime — or something else (a list, an object), which can be stored but not filtered.
"""

from __future__ import annotations

import datetime as dt
import enum
import types
from functools import lru_cache
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

#: The field types a filter or sort may name. `other` fields are stored but not queryable.
FieldType = Literal["text", "number", "boolean", "date", "datetime", "other"]

_SCALARS: dict[type, FieldType] = {
    str: "text",
    int: "number",
    float: "number",
    bool: "boolean",
    dt.date: "date",
    dt.datetime: "datetime",
}


def field_type(annotation: Any) -> FieldType:
    """Classify a field annotation; `X | None` is X, a Literal or Enum of strings is text."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        found = {field_type(a) for a in members}
        return found.pop() if len(found) == 1 else "other"
    if origin is Literal:
        values = get_args(annotation)
        if all(isinstance(v, str) for v in values):
            return "text"
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            return "number"
        return "other"
    if origin is not None:  # Annotated[...] has origin None after pydantic; lists, dicts
        return "other"
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            kinds = {type(m.value) for m in annotation}
            return "text" if kinds == {str} else ("number" if kinds <= {int, float} else "other")
        # datetime is a subclass of date, bool of int: check the most specific first.
        for base in (bool, dt.datetime, dt.date, int, float, str):
            if issubclass(annotation, base):
                return _SCALARS[base]
    return "other"


@lru_cache(maxsize=256)
def field_types(model: type[BaseModel]) -> dict[str, FieldType]:
    """Each field of `model` and what it holds (cached: a model's fields do not change; do not
    mutate the result)."""
    return {name: field_type(info.annotation) for name, info in model.model_fields.items()}
