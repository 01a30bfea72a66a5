"""JSON Schemas curated for a model: generated from pydantic, then made smaller and flatter.

Pydantic's output is correct but wordy for a context window: a `title` on every property,
nested models behind `$ref`/`$defs` indirection, `anyOf` for every optional value, defaults
that restate JSON Schema's own. A model reads a flat schema more reliably and every byte costs
tokens on every session, so titles go, non-recursive refs are inlined, `X | None` becomes
`type: [X, "null"]` (a nested model's too), and `default: null` / `additionalProperties: true`
are dropped.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pydantic import BaseModel

_DROP_KEYS = frozenset({"title"})


def model_schema(model: type[BaseModel], *, mode: str = "validation") -> dict[str, Any]:
    """The curated JSON Schema of `model` (an object schema, refs inlined, titles dropped)."""
    raw = model.model_json_schema(mode="validation" if mode == "validation" else "serialization")
    defs: dict[str, Any] = raw.pop("$defs", {})
    flat = _inline(raw, defs, frozenset())
    if not isinstance(flat, dict):  # pragma: no cover - pydantic models are always objects
        raise TypeError(f"{model.__name__} did not produce an object schema")
    flat.setdefault("type", "object")
    flat.setdefault("properties", {})
    if model.model_config.get("extra") == "forbid":
        flat["additionalProperties"] = False
    if defs and _has_ref(flat):
        # Recursive models keep the definitions they still point at.
        flat["$defs"] = {k: _inline(v, defs, frozenset({k})) for k, v in defs.items()}
    return flat


def _inline(node: Any, defs: dict[str, Any], seen: frozenset[str]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        key = ref.removeprefix("#/$defs/")
        if key not in seen and key in defs:
            target = _inline(copy.deepcopy(defs[key]), defs, seen | {key})
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return {**target, **_inline(siblings, defs, seen)}
        return dict(node)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP_KEYS and isinstance(value, str):
            continue
        if (key == "default" and value is None) or (
            key == "additionalProperties" and value is True
        ):
            continue  # both say what JSON Schema assumes anyway
        if key == "properties" and isinstance(value, dict):
            # Property *names* may be "title"; only drop the title annotation inside each.
            out[key] = {name: _inline(sub, defs, seen) for name, sub in value.items()}
        else:
            out[key] = _inline(value, defs, seen)
    return merge_nullable(out)  # after inlining, so `Model | None` sees the model's type


def merge_nullable(node: dict[str, Any]) -> dict[str, Any]:
    """pydantic's `X | None` is `anyOf: [{type: X}, {type: null}]`; `type: [X, null]` is shorter."""
    options = node.get("anyOf")
    if isinstance(options, list):
        # `dict[str, Any] | None`: the object branch's `additionalProperties: true` is implied.
        options = [
            {k: v for k, v in o.items() if (k, v) != ("additionalProperties", True)}
            if isinstance(o, dict)
            else o
            for o in options
        ]
    if (
        isinstance(options, list)
        and len(options) == 2
        and {"type": "null"} in options
        and all(isinstance(o, dict) for o in options)
    ):
        # `Model | None`: the object's own schema with `null` added to its type.
        (other,) = [o for o in options if o != {"type": "null"}]
        if other.get("type") == "object" and "anyOf" not in other:
            merged = {k: v for k, v in node.items() if k != "anyOf"}
            return {**other, **merged, "type": ["object", "null"]}
    if not isinstance(options, list) or not all(
        isinstance(o, dict) and set(o) == {"type"} and isinstance(o["type"], str) for o in options
    ):
        return node
    merged = {k: v for k, v in node.items() if k != "anyOf"}
    merged["type"] = [o["type"] for o in options]
    return merged


def _has_ref(node: Any) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or any(_has_ref(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_ref(v) for v in node)
    return False


# -- schemas as a model reads them ------------------------------------------------------------

def type_text(node: Any) -> str:
    """A short type for one schema node: `string`, `integer|null`, `date`, `a|b|c`,
    `array of string`, `object`."""
    if not isinstance(node, dict):
        return "any"
    if "enum" in node and isinstance(node["enum"], list):
        return "|".join(json.dumps(v) if not isinstance(v, str) else v for v in node["enum"])
    if "const" in node:
        return json.dumps(node["const"])
    options = node.get("anyOf") or node.get("oneOf")
    if isinstance(options, list):
        return "|".join(dict.fromkeys(type_text(o) for o in options))
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
    out = []
    for k in kinds:
        if k == "string" and isinstance(node.get("format"), str):
            out.append(node["format"])  # date, date-time, uri: more telling than "string"
        elif k == "array":
            items = node.get("items")
            out.append(f"array of {type_text(items)}" if isinstance(items, dict) else "array")
        else:
            out.append(k)
    return "|".join(out) if out else "any"


def shape_text(schema: dict[str, Any]) -> str:
    """An object schema as one compact line of field names, `?` marking optional ones, with
    nested objects in braces: `id, records: [{id, gen, record, closed?}], next_cursor?`."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return type_text(schema)
    required = set(schema.get("required") or ())
    parts = []
    for name, node in properties.items():
        mark = "" if name in required else "?"
        is_array = isinstance(node, dict) and node.get("type") == "array"
        inner = node.get("items") if is_array else None
        if isinstance(inner, dict) and isinstance(inner.get("properties"), dict):
            parts.append(f"{name}{mark}: [{{{shape_text(inner)}}}]")
        else:
            parts.append(f"{name}{mark}")
    return ", ".join(parts)
