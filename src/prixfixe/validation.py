"""Argument validation against a tool's advertised input schema.

The schema a client sees is the contract, so arguments are checked against exactly that schema
(with the `jsonschema` library) before the handler's pydantic model is built. Each problem is
phrased for a model to fix: which argument, what was expected, what was given.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError
from pydantic import BaseModel
from pydantic import ValidationError as ModelError

from prixfixe.errors import InvalidArgumentsError
from prixfixe.registry import RegisteredTool

#: Arguments larger than this (as compact JSON) are refused before any parsing work: no tool
#: here needs more, and a runaway payload should cost one clear error, not memory.
MAX_ARGUMENT_BYTES = 1_000_000

_JSON_TYPES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}


@lru_cache(maxsize=4096)
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_json))


def validate_arguments(entry: RegisteredTool, arguments: Any) -> BaseModel:
    """Return the tool's input model built from `arguments`, or raise naming every problem."""
    name = entry.name
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidArgumentsError(
            name, [f"arguments must be a JSON object, got {_json_type(arguments)}"]
        )
    size = len(json.dumps(arguments, separators=(",", ":"), default=str).encode())
    if size > MAX_ARGUMENT_BYTES:
        raise InvalidArgumentsError(
            name, [f"arguments are {size:,} bytes; the limit is {MAX_ARGUMENT_BYTES:,} bytes"]
        )
    validator = _validator(json.dumps(entry.input_schema, sort_keys=True))
    errors = sorted(validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.path])
    if errors:
        raise InvalidArgumentsError(name, [_describe(e, entry.input_schema) for e in errors])
    try:
        return entry.tool.input_model.model_validate(arguments)
    except ModelError as exc:  # constraints the JSON Schema could not express
        raise InvalidArgumentsError(
            name, [f"argument {_loc(e['loc'])}: {e['msg']}" for e in exc.errors()]
        ) from None


def _describe(error: SchemaError, schema: dict[str, Any]) -> str:
    where = _loc(error.absolute_path)
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        prefix = f"{where}." if error.absolute_path else ""
        hint = _property_hint(schema, prefix + missing)
        return f"missing required argument {prefix}{missing!r}{hint}"
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))  # type: ignore[union-attr]
        extra = (
            sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        )
        names = ", ".join(repr(x) for x in extra)
        return f"unexpected argument {names}; accepted: {', '.join(allowed) or '(none)'}"
    if error.validator == "type":
        expected = error.validator_value
        expected_text = " or ".join(expected) if isinstance(expected, list) else str(expected)
        return (
            f"argument {where}: expected {expected_text}, got {_json_type(error.instance)} "
            f"{_short(error.instance)}"
        )
    if error.validator == "enum":
        options = ", ".join(json.dumps(v) for v in error.validator_value)  # type: ignore[union-attr]
        return f"argument {where}: expected one of {options}, got {_short(error.instance)}"
    return f"argument {where}: {error.message}"


def _property_hint(schema: dict[str, Any], dotted: str) -> str:
    node: Any = schema
    for part in dotted.split("."):
        node = node.get("properties", {}).get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        kind = node.get("type")
        desc = node.get("description")
        bits = [b for b in (kind and f"a {kind}", desc) if b]
        if bits:
            return f" ({': '.join(str(b) for b in bits)})"
    return ""


def _loc(path: Any) -> str:
    parts = list(path)
    if not parts:
        return "(arguments)"
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else str(p))
    return repr(text)


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
