"""Nested data flattened to dot paths: `{"repo": {"url": "x"}}` is `repo.url = x`.

Lists of plain values stay one value (`labels = ["a", "b"]`); lists of objects become indexed
paths (`items[0].name`) up to `max_items`, and the rest is counted, not shown. Values that JSON
cannot carry stay as they are, for a rule to leave out as unserialisable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

#: Objects nested deeper than this are one compact value.
MAX_DEPTH = 6


@dataclass(frozen=True)
class Flattened:
    """Leaf values by dot path, in document order, and how many list items were left out."""

    values: list[tuple[str, Any]]
    omitted_items: int


def flatten_data(value: Any, *, max_items: int = 20) -> Flattened:
    """`value` (a mapping, a pydantic model or a list of them) as dot paths to leaf values."""
    out: list[tuple[str, Any]] = []
    omitted = _walk(_plain(value), "", 0, max_items, out)
    return Flattened(out, omitted)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return value


def _walk(value: Any, path: str, depth: int, max_items: int, out: list[tuple[str, Any]]) -> int:
    value = _plain(value)
    if isinstance(value, Mapping) and value and depth < MAX_DEPTH:
        omitted = 0
        for key, sub in value.items():
            omitted += _walk(sub, f"{path}.{key}" if path else str(key), depth + 1, max_items, out)
        return omitted
    if _is_list(value) and value and depth < MAX_DEPTH and all(_is_record(v) for v in value):
        shown = list(value)[:max_items]
        omitted = len(value) - len(shown)
        for index, item in enumerate(shown):
            omitted += _walk(item, f"{path}[{index}]", depth + 1, max_items, out)
        return omitted
    out.append((path or "(value)", list(value) if _is_list(value) else value))
    return 0


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray)


def _is_record(value: Any) -> bool:
    return isinstance(value, Mapping | BaseModel)
