"""JSON Schema validators for tools' schemas, resolved locally only.

CONTRACT: no validator built here retrieves anything. A `$ref` (or `$dynamicRef`) resolves
within the schema's own document (`#/...`, `$defs`, an `$id` inside it) or to a bundled
JSON Schema meta-schema; any other target — an `http(s)://` URL, a `file://` path, a
relative reference — is `Unresolvable` when validation reaches it, and nothing is fetched,
opened or waited on. (jsonschema, given no registry, would retrieve such a ref itself with
`urlopen`: past every gate of the leash, and blocking whatever thread it runs on.)

A raw schema (a mounted server's, or a plugin's given as a dict) is someone else's: besides
resolving locally, its regular expressions are never run. `pattern` and `patternProperties`
are left to the tool's own server (Python's `re` backtracks without bound and holds the GIL
while it does, so one crafted pattern and argument would stall every client), and so are
`additionalProperties` and `unevaluatedProperties` where deciding them would take a pattern.
A raw schema is also checked against a deadline (`deadline`): every keyword first checks it,
so a schema whose combinators explode stops itself (`Overtime`) instead of running on.

`linear_nodes` says when checking against a raw schema costs at most the product of the
schema's and the instance's sizes: a tree (no `$ref`, `$dynamicRef` or `$recursiveRef`, so
no subschema is reached twice by one path) without the keywords whose own work is not
linear (`uniqueItems` compares pairs; `unevaluatedProperties`/`unevaluatedItems` re-walk
what the other keywords evaluated). Each instance node then meets each subschema at most once,
and no single keyword costs more than its subschema's size times the node's (`tools/
validation.py` checks such a schema on the event loop when both are small).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.protocols import Validator
    from referencing import Registry


class Overtime(Exception):
    """Checking against a raw schema ran past its deadline."""


_deadline = threading.local()


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Bound the raw-schema checks this thread makes meanwhile to `seconds` (see `Overtime`)."""
    _deadline.at = time.monotonic() + seconds
    try:
        yield
    finally:
        _deadline.at = None


def _refuse(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # an attrs class


def local_registry() -> Registry[Any]:
    """A registry that retrieves nothing: every ref outside the document is unresolvable."""
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]  # an attrs class


def local_validator(schema: Mapping[str, Any], *, raw: bool) -> Validator:
    """A validator for `schema` in the dialect its `$schema` names (2020-12 when it names
    none, as MCP says), resolving refs locally; for a `raw` schema, also regex-free and
    bounded by `deadline` (see the module)."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for

    cls = validator_for(schema, default=Draft202012Validator)
    if raw:
        cls = _regex_free(cls, _mentions(schema, "patternProperties"))
    return cls(schema, registry=local_registry())


KeywordCheck = Callable[[Any, Any, Any, Any], Any]


@cache
def _regex_free(cls: Any, has_patterns: bool) -> Any:
    """`cls` with no regex run and every keyword bounded; made once per dialect (a class)."""
    from jsonschema.validators import extend

    checks: dict[str, KeywordCheck] = {k: _bounded(f) for k, f in cls.VALIDATORS.items()}
    checks["pattern"] = _left_to_server
    checks["patternProperties"] = _left_to_server
    if "additionalProperties" in checks:
        checks["additionalProperties"] = _unless_patterns(checks["additionalProperties"])
    if "unevaluatedProperties" in checks and has_patterns:
        checks["unevaluatedProperties"] = _left_to_server
    return extend(cls, checks)  # type: ignore[no-untyped-call]


def _left_to_server(validator: Any, value: Any, instance: Any, schema: Any) -> None:
    return None


def _unless_patterns(check: KeywordCheck) -> KeywordCheck:
    """`additionalProperties` beside `patternProperties` needs the patterns to decide."""

    def checked(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        if isinstance(schema, Mapping) and "patternProperties" in schema:
            return None
        return check(validator, value, instance, schema)

    return checked


def _bounded(check: KeywordCheck) -> KeywordCheck:
    def checked(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        at = getattr(_deadline, "at", None)
        if at is not None and time.monotonic() > at:
            raise Overtime
        return check(validator, value, instance, schema)

    return checked


def _mentions(node: Any, key: str) -> bool:
    """Whether `key` is a key anywhere in the JSON document `node`."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if key in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


#: The largest raw schema (in JSON nodes) checked on the event loop, and the most work (its
#: nodes times the instance's) such a check may cost there; `tools/validation.py` sends
#: anything bigger to a worker thread. Measured: at this bound a check where every node fails
#: takes about 2 ms (errors are the dear part), a passing one a tenth of that; a typical
#: tool's work (a dozen schema nodes times a few arguments) is under 100.
INLINE_SCHEMA_NODES = 500
INLINE_WORK = 2_000

#: Keywords that make checking cost more than linear (see the module).
NOT_LINEAR = (
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "uniqueItems",
    "unevaluatedProperties",
    "unevaluatedItems",
)


def json_nodes(node: Any, limit: int) -> int | None:
    """How many values (objects, arrays, scalars; an object's keys not counted) the JSON
    document `node` holds, or None when more than `limit` (counting stops there)."""
    count = 0
    stack = [node]
    while stack:
        item = stack.pop()
        count += 1
        if count > limit:
            return None
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return count


def linear_nodes(schema: Mapping[str, Any], limit: int) -> int | None:
    """The size of `schema` in JSON nodes when checking against it is linear (see the
    module) and it holds at most `limit`; else None. A key named like one of `NOT_LINEAR`
    anywhere (a property called `$ref` too) counts against it: wrong only towards caution."""
    nodes = json_nodes(schema, limit)
    if nodes is None or any(_mentions(schema, key) for key in NOT_LINEAR):
        return None
    return nodes
