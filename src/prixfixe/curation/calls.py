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
    return f"<{f.hint}>" if f.hint else f"<{kind}>"


def example_arguments(
    fields: Iterable[CuratedField], *, only: Iterable[str] | None = None
) -> dict[str, Any]:
    """Arguments for an example call: every required field (inside its required parent
    objects, and one item of a required array of objects), plus the fields named in `only`
    (dot paths) and what they sit in, even when optional."""
    listed = list(fields)
    wanted = {path_key(p) for p in only} if only is not None else set()
    # A wanted nested field brings its parents along.
    wanted |= {w.rsplit(".", n)[0] for w in list(wanted) for n in range(1, w.count(".") + 1)}

    def build(prefix: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in listed:
            rest = f.path[len(prefix) :] if f.path.startswith(prefix) else None
            if not rest or "." in rest or "[" in rest:
                continue  # not a direct child of `prefix`
            if not (f.required or path_key(f.path) in wanted):
                continue
            if any(g.path.startswith(f"{f.path}.") for g in listed):
                out[rest] = build(f"{f.path}.")
            elif any(g.path.startswith(f"{f.path}[].") for g in listed):
                out[rest] = [build(f"{f.path}[].")]
            else:
                out[rest] = example_value(f)
        return out

    return build("")


def call_text(tool: str, arguments: Mapping[str, Any], *, listed: bool) -> str:
    """A call as a model writes it: direct for a listed tool, else through `tool_invoke`."""
    shown = json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "))
    if listed:
        return f"{tool}({shown})"
    return f"tool_invoke(name={tool!r}, arguments={shown})"
