"""Example calls built from curated fields: what a model copies to call a tool right.

Values come from the schema and the dictionary (an example, else the default, else the first
allowed value); a field with none of them gets a placeholder naming its type (`<date
YYYY-MM-DD>`), so an example never passes off an invented value as a real one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from prixfixe.curation.fields import CuratedField
from prixfixe.declarations.curation import MISSING, path_key


def example_value(f: CuratedField) -> Any:
    """The value an example call shows for `f`."""
    if f.example is not MISSING:
        return f.example
    if f.default is not MISSING and f.default is not None:
        return f.default
    if f.values:
        return [f.values[0]] if f.type.startswith("array") else f.values[0]
    kind = f.type.split("|")[0]
    if kind in ("integer", "number"):
        return f"<{kind}>"
    if kind == "boolean":
        return "<true|false>"
    if kind.startswith("array"):
        return []
    if kind == "object":
        return {}
    hint = f" {f.hint}" if f.hint else ""
    return f"<{kind}{hint}>"


def example_arguments(
    fields: Iterable[CuratedField], *, only: Iterable[str] | None = None
) -> dict[str, Any]:
    """Arguments for an example call: every required field (nested ones inside their parent
    objects, when those are required too), plus the fields named in `only` (dot paths) even
    when optional."""
    listed = list(fields)
    by_path = {f.path: f for f in listed}
    wanted = {path_key(p) for p in only} if only is not None else set()

    def required_chain(f: CuratedField) -> bool:
        parts = f.path.split(".")
        parents = (by_path.get(".".join(parts[:n])) for n in range(1, len(parts)))
        return f.required and all(p is None or p.required for p in parents)

    chosen = [
        f for f in listed if "[" not in f.path and (path_key(f.path) in wanted or required_chain(f))
    ]
    args: dict[str, Any] = {}
    for f in chosen:
        if f.is_object and any(g.path.startswith(f"{f.path}.") for g in chosen):
            continue  # built from its children
        _set(args, f.path.split("."), example_value(f))
    return args


def _set(target: dict[str, Any], parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        nested = target.setdefault(part, {})
        if not isinstance(nested, dict):
            return
        target = nested
    target[parts[-1]] = value


def call_text(tool: str, arguments: Mapping[str, Any], *, listed: bool) -> str:
    """A call as a model writes it: direct for a listed tool, else through `tool_invoke`."""
    shown = json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "))
    if listed:
        return f"{tool}({shown})"
    return f"tool_invoke(name={tool!r}, arguments={shown})"
