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

CONTRACT (a raw schema is someone else's, see `declarations/json_schema.py`): its refs
resolve within it only — a ref to anything else (a URL, a file) ends the call with an error
naming the ref, and nothing is fetched — and its patterns are left to its server. It is
checked off the event loop (`check_arguments`: a worker thread, one of at most
`RAW_CHECK_THREADS`, against a deadline of `RAW_CHECK_SECONDS`), so no schema stalls another
client; a check that runs past the deadline ends the call with an error saying so. The one
exception is a check whose cost is known to be small: the schema, once judged in a thread (on
its tool's first call), is valid, linear and at most `INLINE_SCHEMA_NODES` nodes
(`json_schema.linear_nodes`), and its nodes times the instance's are at most `INLINE_WORK`.
That check runs on the event loop, as a model's arguments do, and it is bounded there too:
past `INLINE_SECONDS` it stops (`Overtime`) and runs again in a thread under the full deadline,
so the loop is held at most that long whatever the estimate missed. A thread hop costs more
than such a check (about 0.1-1 ms, more on a busy machine).

An output schema is compiled (its validator built, the schema itself checked) once, in a
thread, and kept (`OUTPUT_SCHEMAS_KEPT` of them); results are then checked like arguments.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar
from pydantic import BaseModel
from pydantic import ValidationError as ModelError
from pydantic_core import to_json

from prixfixe.core.registry import RegisteredTool
from prixfixe.declarations.json_schema import (
    INLINE_SCHEMA_NODES,
    INLINE_WORK,
    Overtime,
    deadline,
    json_nodes,
    linear_nodes,
    local_validator,
)
from prixfixe.declarations.tool import MAX_ARGUMENT_BYTES
from prixfixe.errors import ArgumentProblem, ArgumentProblemKind, InvalidArgumentsError

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError as SchemaError
    from jsonschema.protocols import Validator


_JSON_TYPES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}


#: How long checking one call's arguments against a raw schema may take, and how many such
#: checks run at once (their own threads: a slow one never holds up the store's).
RAW_CHECK_SECONDS = 5.0
RAW_CHECK_THREADS = 4
#: How long a small check (see the module) may hold the event loop before it goes to a thread.
INLINE_SECONDS = 0.005
#: How many compiled output schemas are kept (the least recently used goes first).
OUTPUT_SCHEMAS_KEPT = 512
#: Per event loop (a limiter belongs to the loop it was made in).
_raw_checks: RunVar[anyio.CapacityLimiter] = RunVar("prixfixe_raw_checks")


def _limiter() -> anyio.CapacityLimiter:
    limiter = _raw_checks.get(None)
    if limiter is None:
        limiter = anyio.CapacityLimiter(RAW_CHECK_THREADS)
        _raw_checks.set(limiter)
    return limiter


def _small(schema_nodes: int | None, instance: Any) -> bool:
    """Whether checking `instance` against a schema of `schema_nodes` (None: not linear, or
    not judged yet) costs at most `INLINE_WORK` (see the module)."""
    return schema_nodes is not None and (
        json_nodes(instance, INLINE_WORK // max(schema_nodes, 1)) is not None
    )


async def check_arguments(entry: RegisteredTool, arguments: Any) -> BaseModel | dict[str, Any]:
    """`validate_arguments`, with a raw schema checked in a worker thread and bounded in time
    (see the module); a model's arguments are checked here, as pydantic is fast, and so are
    small arguments against a small linear raw schema, within `INLINE_SECONDS`."""
    if entry.tool.input_schema is None:
        return validate_arguments(entry, arguments)
    # `inline_nodes` is judged in the thread of the tool's first check, never here.
    if _small(vars(entry).get("inline_nodes"), arguments):
        try:
            with deadline(INLINE_SECONDS):
                return validate_arguments(entry, arguments)
        except Overtime:
            pass  # the estimate missed: the thread has the full deadline
    limiter = _limiter()
    check = partial(_bounded_check, entry, arguments)
    # The thread ends itself at the deadline; the margin covers one keyword's own work.
    with anyio.move_on_after(RAW_CHECK_SECONDS * 2):
        return await anyio.to_thread.run_sync(check, limiter=limiter, abandon_on_cancel=True)
    raise _overtime(entry)


def _bounded_check(entry: RegisteredTool, arguments: Any) -> BaseModel | dict[str, Any]:
    with deadline(RAW_CHECK_SECONDS):
        try:
            return validate_arguments(entry, arguments)
        except Overtime:
            raise _overtime(entry) from None
        finally:
            entry.inline_nodes  # noqa: B018 - judged here, off the loop, for the next calls


def _overtime(entry: RegisteredTool) -> InvalidArgumentsError:
    message = (
        f"checking the arguments against the tool's input schema took longer than "
        f"{RAW_CHECK_SECONDS:g}s, so they were not sent"
    )
    return InvalidArgumentsError(entry.name, [ArgumentProblem("", "other", message)])


async def check_output(name: str, schema: Mapping[str, Any], data: Any) -> str | None:
    """What is wrong with a raw-schema tool's structured result `data` against its output
    `schema` (None: nothing), checked like its arguments: refs within the schema only, no
    patterns, in a worker thread (on the loop when small, see the module), bounded in time;
    the schema compiled once."""
    compiled = _compiled_outputs.get(id(schema))
    if compiled is not None and compiled.schema is schema:
        if compiled.problem is not None:
            return compiled.problem.format(name=name)
        if _small(compiled.nodes, data):
            try:
                with deadline(INLINE_SECONDS):
                    return _output_problem(name, compiled, data)
            except Overtime:
                pass  # the estimate missed: the thread has the full deadline
    limiter = _limiter()
    check = partial(_bounded_output_check, name, schema, data)
    with anyio.move_on_after(RAW_CHECK_SECONDS * 2):
        return await anyio.to_thread.run_sync(check, limiter=limiter, abandon_on_cancel=True)
    return _output_overtime(name)


@dataclass(frozen=True)
class _OutputSchema:
    """An output schema compiled: its validator, what is wrong with the schema itself (a
    message naming `{name}`) or None, and its size when checking against it is linear."""

    schema: Mapping[str, Any]
    validator: Validator
    problem: str | None
    nodes: int | None


#: Compiled output schemas by the identity of the schema (kept in each entry, so the identity
#: is not reused while the entry lives); the least recently compiled goes first.
_compiled_outputs: OrderedDict[int, _OutputSchema] = OrderedDict()


def _compile_output(schema: Mapping[str, Any]) -> _OutputSchema:
    """`schema` compiled (in a worker thread), kept for the next results."""
    from jsonschema.exceptions import SchemaError

    compiled = _compiled_outputs.get(id(schema))
    if compiled is not None and compiled.schema is schema:
        return compiled
    validator = local_validator(schema, raw=True)
    problem: str | None = None
    try:
        validator.check_schema(dict(schema))
    except SchemaError as exc:
        problem = "the output schema of {name!r} is not valid JSON Schema: " + _braces(exc.message)
    except RecursionError:
        problem = "the output schema of {name!r} nests too deeply to check"
    nodes = linear_nodes(schema, INLINE_SCHEMA_NODES) if problem is None else None
    compiled = _OutputSchema(schema, validator, problem, nodes)
    _compiled_outputs[id(schema)] = compiled
    while len(_compiled_outputs) > OUTPUT_SCHEMAS_KEPT:
        _compiled_outputs.popitem(last=False)
    return compiled


def _braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _bounded_output_check(name: str, schema: Mapping[str, Any], data: Any) -> str | None:
    compiled = _compile_output(schema)
    if compiled.problem is not None:
        return compiled.problem.format(name=name)
    try:
        with deadline(RAW_CHECK_SECONDS):
            return _output_problem(name, compiled, data)
    except Overtime:
        return _output_overtime(name)


def _output_problem(name: str, compiled: _OutputSchema, data: Any) -> str | None:
    """What is wrong with `data` against a valid compiled schema (raises `Overtime` past the
    deadline in force)."""
    from jsonschema.exceptions import best_match
    from referencing.exceptions import Unresolvable

    try:
        error = best_match(compiled.validator.iter_errors(data))
    except Unresolvable as exc:
        ref = getattr(exc, "ref", str(exc))
        return (
            f"the output schema of {name!r} refers to {ref!r}, which is not in the schema "
            "itself (prixfixe resolves a $ref only within its own document and fetches nothing)"
        )
    except RecursionError:
        return f"the output schema of {name!r} nests too deeply to check"
    if error is None:
        return None
    return f"invalid structured content returned by {name!r}: {error.message}"


def _output_overtime(name: str) -> str:
    return (
        f"checking the result of {name!r} against its output schema took longer than "
        f"{RAW_CHECK_SECONDS:g}s"
    )


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
    except Unresolvable as exc:
        ref = getattr(exc, "ref", str(exc))
        message = (
            f"the tool's input schema refers to {ref!r}, which is not in the schema itself; "
            "prixfixe resolves a schema's $ref only within its own document and fetches "
            "nothing, so the arguments were not sent"
        )
        raise InvalidArgumentsError(entry.name, [ArgumentProblem("", "other", message)]) from None
    except RecursionError:
        message = "the tool's input schema nests too deeply to check; the arguments were not sent"
        raise InvalidArgumentsError(entry.name, [ArgumentProblem("", "other", message)]) from None
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
