"""Argument validation against a tool's advertised input schema.

The schema a client sees is generated from the tool's pydantic model, so the fast path builds
that model straight from the arguments' JSON in pydantic's strict JSON mode, which accepts what
the schema accepts (ISO date strings, enum values) and does not coerce ("5" is not an integer).
Only when that fails does the `jsonschema` library check the arguments against the exact schema
the client was shown, to phrase each problem for a model to fix: which argument, what was
expected, what was given. Problems the schema cannot express come from pydantic.

Each problem is also structured (`ArgumentProblem`: a dot path, a kind — missing, enum, type,
extra, other — and the message), so a call missing an argument can ask the person for exactly
that field, or tell the model how to fix it (`prixfixe.tools.elicitation`).

A tool declared with a raw JSON Schema (a mounted server's) has no model: its arguments are
checked against that schema alone and handed on as the dict they are. A schema that is not
itself valid JSON Schema checks nothing here; the tool's own server judges the arguments.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic import ValidationError as ModelError
from pydantic_core import to_json

from prixfixe.core.registry import RegisteredTool
from prixfixe.declarations.tool import MAX_ARGUMENT_BYTES
from prixfixe.errors import ArgumentProblem, ArgumentProblemKind, InvalidArgumentsError

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError as SchemaError


_JSON_TYPES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}


def validate_arguments(entry: RegisteredTool, arguments: Any) -> BaseModel | dict[str, Any]:
    """Return the tool's input model built from `arguments` (for a raw-schema tool, the
    arguments themselves once they match), or raise naming every problem (each one
    structured too: `InvalidArgumentsError.issues`)."""
    name = entry.name
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidArgumentsError(
            name, [f"arguments must be a JSON object, got {_json_type(arguments)}"]
        )
    # The compact JSON is what pydantic parses next, so the size check costs no extra work.
    text = to_json(arguments, fallback=str)
    if len(text) > MAX_ARGUMENT_BYTES:
        raise InvalidArgumentsError(
            name,
            [f"arguments are {len(text):,} bytes of JSON; the limit is {MAX_ARGUMENT_BYTES:,}"],
        )
    if entry.tool.input_schema is not None:
        return _validate_raw(entry, arguments)
    try:
        return entry.tool.input_model.model_validate_json(text, strict=True)
    except ModelError as exc:
        model_error = exc
    schema_errors = sorted(
        entry.validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.path]
    )
    if schema_errors:
        raise InvalidArgumentsError(name, _explain(schema_errors, entry.input_schema))
    # Constraints the JSON Schema does not express (a model's own validators).
    raise InvalidArgumentsError(name, [_model_problem(e) for e in model_error.errors()])


def _validate_raw(entry: RegisteredTool, arguments: dict[str, Any]) -> dict[str, Any]:
    from referencing.exceptions import Unresolvable

    if not entry.schema_is_valid:  # checked once per tool, not once per call
        return arguments
    try:
        errors = sorted(
            entry.validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.path]
        )
    except Unresolvable:
        return arguments
    if errors:
        raise InvalidArgumentsError(entry.name, _explain(errors, entry.input_schema))
    return arguments


def _explain(errors: list[SchemaError], schema: dict[str, Any]) -> list[ArgumentProblem]:
    return [problem for error in errors for problem in _describe(error, schema)]


def _describe(error: SchemaError, schema: dict[str, Any]) -> list[ArgumentProblem]:
    path = _path(error.absolute_path)
    where = _quoted(path)
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        full = f"{path}.{missing}" if path else missing
        hint = _property_hint(schema, full)
        return [ArgumentProblem(full, "missing", f"missing required argument {full!r}{hint}")]
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))  # type: ignore[union-attr]
        extra = (
            sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        )
        accepted = ", ".join(allowed) or "(none)"
        return [
            ArgumentProblem(
                f"{path}.{name}" if path else name,
                "extra",
                f"unexpected argument {name!r}; accepted: {accepted}",
            )
            for name in extra
        ] or [ArgumentProblem(path, "extra", f"argument {where}: {error.message}")]
    if error.validator == "type":
        expected = error.validator_value
        expected_text = " or ".join(expected) if isinstance(expected, list) else str(expected)
        message = (
            f"argument {where}: expected {expected_text}, got {_json_type(error.instance)} "
            f"{_short(error.instance)}"
        )
        return [ArgumentProblem(path, "type", message)]
    if error.validator == "enum":
        return [_enum_problem(path, error.validator_value, error.instance)]  # type: ignore[arg-type]
    if error.validator in ("anyOf", "oneOf"):
        # `Literal[...] | None` is an enum branch beside a null one: say which values fit.
        options = error.validator_value if isinstance(error.validator_value, list) else []
        values = [v for o in options if isinstance(o, dict) for v in o.get("enum", ())]
        nullable = any(isinstance(o, dict) and o.get("type") == "null" for o in options)
        if values and error.instance is not None:
            return [_enum_problem(path, [*values, *([None] if nullable else [])], error.instance)]
    return [ArgumentProblem(path, "other", f"argument {where}: {error.message}")]


def _enum_problem(path: str, allowed: list[Any], given: Any) -> ArgumentProblem:
    options = ", ".join(json.dumps(v) for v in allowed)
    message = f"argument {_quoted(path)}: expected one of {options}, got {_short(given)}"
    return ArgumentProblem(path, "enum", message)


#: pydantic error types that mean the same as a JSON Schema problem kind.
_MODEL_KINDS: dict[str, ArgumentProblemKind] = {
    "missing": "missing",
    "enum": "enum",
    "literal_error": "enum",
    "extra_forbidden": "extra",
}


def _model_problem(error: Any) -> ArgumentProblem:
    path = _path(error["loc"])
    kind = _MODEL_KINDS.get(error["type"], "other")
    return ArgumentProblem(path, kind, f"argument {_quoted(path)}: {error['msg']}")


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


def _path(parts: Any) -> str:
    """A location as a dot path: `record.title`, `items[0].name`; empty for the whole."""
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else str(p))
    return text


def _quoted(path: str) -> str:
    return repr(path) if path else "(arguments)"


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
