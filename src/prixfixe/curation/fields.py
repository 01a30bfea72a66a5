"""One curated property, and a JSON Schema flattened into them.

A tool's nested input schema (`record` holding `due` and `title`, `items` an array of objects)
becomes one `CuratedField` per property, in schema order, with dot paths (`record.due`,
`items[].name`): what a model needs to write a call, without `$ref`, `anyOf` or `$defs`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from prixfixe.declarations.curation import MISSING
from prixfixe.schema import merge_nullable, type_text

#: How deep nested objects are followed; deeper ones are one `object` entry.
MAX_DEPTH = 5


@dataclass(frozen=True)
class CuratedField:
    """One property, curated: from a schema (`value` is `MISSING`) or from data."""

    path: str
    type: str
    required: bool = False
    description: str = ""
    unit: str = ""
    #: Allowed values when `closed` (an enum), else common ones.
    values: tuple[Any, ...] = ()
    closed: bool = False
    example: Any = MISSING
    default: Any = MISSING
    #: Limits a value must meet, in words: `1..50`, `≤ 200 chars`, `pattern ^[a-z]+$`.
    limits: str = ""
    #: A type hint beyond the schema's type: `ISO date (YYYY-MM-DD)`.
    hint: str = ""
    set_by: str = ""
    read_only: bool = False
    value: Any = MISSING
    #: The JSON Schema node it came from ($refs resolved, nullable merged); empty for data.
    node: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1].removesuffix("[]")

    @property
    def format(self) -> str:
        """The string format (`date`, `uri`, ...) of the node or of one of its alternatives."""
        nodes = [self.node, *(self.node.get("anyOf") or self.node.get("oneOf") or [])]
        for node in nodes:
            fmt = node.get("format") if isinstance(node, Mapping) else None
            if isinstance(fmt, str):
                return fmt
        return ""

    @property
    def is_object(self) -> bool:
        kinds = self.node.get("type")
        return kinds == "object" or (isinstance(kinds, list) and "object" in kinds)


def schema_fields(schema: Mapping[str, Any]) -> list[CuratedField]:
    """Every property of an object schema, nested ones as dot paths, in schema order: a parent
    object's entry comes before its children (`record`, then `record.due`)."""
    out: list[CuratedField] = []
    defs = _definitions(schema)
    _walk(_resolve(schema, defs, frozenset()), defs, "", 0, frozenset(), out)
    return out


def _definitions(schema: Mapping[str, Any]) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        found = schema.get(key)
        if isinstance(found, Mapping):
            defs.update({f"#/{key}/{name}": node for name, node in found.items()})
    return defs


def _resolve(node: Any, defs: Mapping[str, Any], seen: frozenset[str]) -> dict[str, Any]:
    """`node` with a top-level `$ref` and `allOf` folded in and `X | null` merged."""
    if not isinstance(node, Mapping):
        return {}
    out = dict(node)
    ref = out.pop("$ref", None)
    if isinstance(ref, str) and ref in defs and ref not in seen:
        out = {**_resolve(defs[ref], defs, seen | {ref}), **out}
    parts = out.pop("allOf", None)
    if isinstance(parts, list):
        # Every part applies: their properties in order, then the node's own.
        merged: dict[str, Any] = {}
        props: dict[str, Any] = {}
        required: list[str] = []
        for part in [*(_resolve(p, defs, seen) for p in parts), out]:
            merged.update({k: v for k, v in part.items() if k not in ("properties", "required")})
            props.update(part.get("properties") or {})
            required += list(part.get("required") or ())
        out = merged
        if props:
            out["properties"] = props
        if required:
            out["required"] = list(dict.fromkeys(required))
    options = out.get("anyOf") or out.get("oneOf")
    if isinstance(options, list):
        key = "anyOf" if "anyOf" in out else "oneOf"
        out[key] = [_resolve(o, defs, seen) for o in options]
        out = merge_nullable(out) if key == "anyOf" else out
    return out


def _walk(
    node: Mapping[str, Any],
    defs: Mapping[str, Any],
    prefix: str,
    depth: int,
    seen: frozenset[int],
    out: list[CuratedField],
) -> None:
    properties = node.get("properties")
    if not isinstance(properties, Mapping) or id(node) in seen:
        return
    required = set(node.get("required") or ())
    for name, raw in properties.items():
        sub = _resolve(raw, defs, frozenset())
        path = f"{prefix}{name}"
        out.append(_field(path, sub, required=name in required))
        if depth >= MAX_DEPTH:
            continue
        items = _resolve(sub.get("items"), defs, frozenset()) if _is_array(sub) else None
        if isinstance(sub.get("properties"), Mapping):
            _walk(sub, defs, f"{path}.", depth + 1, seen | {id(node)}, out)
        elif items and isinstance(items.get("properties"), Mapping):
            _walk(items, defs, f"{path}[].", depth + 1, seen | {id(node)}, out)


def _is_array(node: Mapping[str, Any]) -> bool:
    kinds = node.get("type")
    return kinds == "array" or (isinstance(kinds, list) and "array" in kinds)


def _field(path: str, node: dict[str, Any], *, required: bool) -> CuratedField:
    enum = node.get("enum")
    const = node.get("const")
    values: tuple[Any, ...] = ()
    closed = False
    if isinstance(enum, list):
        values, closed = tuple(enum), True
    elif "const" in node:
        values, closed = (const,), True
    elif _is_array(node) and isinstance(node.get("items"), Mapping):
        item_enum = node["items"].get("enum")
        if isinstance(item_enum, list):
            values, closed = tuple(item_enum), True
    examples = node.get("examples")
    example = node.get("example", MISSING)
    if example is MISSING and isinstance(examples, list) and examples:
        example = examples[0]
    description = node.get("description")
    return CuratedField(
        path=path,
        type=type_text(node),
        required=required,
        description=description.strip() if isinstance(description, str) else "",
        values=values,
        closed=closed,
        example=example,
        default=node.get("default", MISSING),
        limits=limits_text(node),
        read_only=node.get("readOnly") is True,
        node=node,
    )


def limits_text(node: Mapping[str, Any]) -> str:
    """A schema node's constraints in a few words: `1..50`, `≤ 200 chars`, `pattern ^x$`."""
    parts: list[str] = []
    low = node.get("minimum", node.get("exclusiveMinimum"))
    high = node.get("maximum", node.get("exclusiveMaximum"))
    if _number(low) and _number(high):
        parts.append(f"{low}..{high}")
    elif _number(low):
        parts.append(f"{'>' if 'exclusiveMinimum' in node else '≥'} {low}")
    elif _number(high):
        parts.append(f"{'<' if 'exclusiveMaximum' in node else '≤'} {high}")
    short, long_ = node.get("minLength"), node.get("maxLength")
    if _number(long_):
        parts.append(f"{short or 0}..{long_} chars" if _number(short) else f"≤ {long_} chars")
    elif _number(short) and short > 1:
        parts.append(f"≥ {short} chars")
    few, many = node.get("minItems"), node.get("maxItems")
    if _number(few) and few > 0:
        parts.append(f"≥ {few} items")
    if _number(many):
        parts.append(f"≤ {many} items")
    pattern = node.get("pattern")
    if isinstance(pattern, str) and len(pattern) <= 60:
        parts.append(f"pattern {pattern}")
    return ", ".join(parts)


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def value_text(value: Any, limit: int = 120) -> str:
    """A value as a model reads it: strings bare, the rest as compact JSON, long ones cut."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = text.replace("\n", "⏎ ")
    return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(text):,} chars)"
