"""The curation pipeline: flatten, filter, enrich, format.

`Curator` holds what every plugin contributed through `register_curation` (the property
dictionary and the filter rules) and applies it to a JSON Schema (`schema`: what a call
needs) or to data (`data`: what an object holds). Either way the result is a `Curated`: the
kept entries, counts of what was left out and why, and two formats — `text()` for a model
(one compact line per entry) and `view()` for code (data with a versioned schema).
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import BaseModel, Field

from prixfixe.core.registry import Registry
from prixfixe.curation.fields import CuratedField, schema_fields, value_text
from prixfixe.curation.flatten import flatten_data
from prixfixe.declarations.curation import (
    CURATION_RULES,
    MISSING,
    PROPERTY_INFOS,
    Candidate,
    CurationRule,
    PropertyInfo,
    path_key,
)

#: The version of `CuratedView`'s schema; bumped on any incompatible change.
CURATION_VERSION = 1

#: Hints for string formats, so a model writes the value the way the schema checks it.
_FORMAT_HINTS = {
    "date-time": "ISO 8601, e.g. 2026-01-31T09:00:00Z",
    "time": "HH:MM[:SS]",
    "email": "an email address",
    "uri": "an absolute URI",
}


class CuratedEntry(BaseModel):
    """One curated property, for code."""

    path: str = Field(description="Dot path; `[]` marks array items, `[3]` one item.")
    type: str
    value: Any = Field(default=None, description="The value (data only).")
    required: bool = False
    read_only: bool = False
    description: str = ""
    hint: str = ""
    unit: str = ""
    values: list[Any] = Field(default_factory=list, description="Allowed when closed, else common.")
    closed: bool = False
    example: Any = None
    default: Any = None
    limits: str = ""
    set_by: str = Field(default="", description="The call or field that sets it.")


class CuratedView(BaseModel):
    """A curated object or schema, for code: what `inspect` and curated step data return."""

    curation_version: int = CURATION_VERSION
    subject: str = Field(description="What was curated, in words.")
    scope: str
    entries: list[CuratedEntry]
    dropped: dict[str, int] = Field(
        default_factory=dict, description="Properties left out, counted by reason."
    )
    omitted_items: int = Field(default=0, description="List items beyond those shown.")
    next: list[str] = Field(default_factory=list, description="Calls that act on it next.")


@dataclass(frozen=True)
class Curated:
    """Curated entries and what was left out."""

    scope: str
    fields: list[CuratedField]
    dropped: dict[str, int] = field(default_factory=dict)
    omitted_items: int = 0
    mode: Literal["data", "schema"] = "schema"

    def entries(self) -> list[CuratedEntry]:
        return [_entry(f, self.mode) for f in self.fields]

    def lines(self) -> list[str]:
        return entry_lines(self.entries(), self.mode)

    def footer(self) -> str:
        """What was left out, in one line (empty when nothing was)."""
        parts = [f"{n} {reason}" for reason, n in sorted(self.dropped.items())]
        if self.omitted_items:
            parts.append(f"{self.omitted_items} more list items")
        return f"(left out: {', '.join(parts)})" if parts else ""

    def text(self) -> str:
        lines = self.lines()
        if self.footer():
            lines.append(self.footer())
        return "\n".join(lines)

    def view(self, subject: str, next_calls: Sequence[str] = ()) -> CuratedView:
        return CuratedView(
            subject=subject,
            scope=self.scope,
            entries=self.entries(),
            dropped=dict(self.dropped),
            omitted_items=self.omitted_items,
            next=list(next_calls),
        )


class Curator:
    """The property dictionary and the filter rules, applied."""

    def __init__(self, infos: Iterable[PropertyInfo], rules: Iterable[CurationRule]) -> None:
        # Later registrations win ties: a plugin refines core's entry for the same property.
        self.infos = tuple(infos)
        self.rules = tuple(rules)

    @classmethod
    def from_declared(
        cls,
        infos: Mapping[str, Sequence[PropertyInfo]],
        rules: Mapping[str, Sequence[CurationRule]],
    ) -> Curator:
        return cls(
            [i for owned in infos.values() for i in owned],
            [r for owned in rules.values() for r in owned],
        )

    # -- the two entry points -----------------------------------------------------------

    def schema(self, schema: Mapping[str, Any], scope: str) -> Curated:
        """An input schema curated for writing a call: every property a call can set."""
        kept: list[CuratedField] = []
        dropped: dict[str, int] = {}
        dropped_parents: list[str] = []
        for f in schema_fields(schema):
            if any(f.path.startswith(p) for p in dropped_parents):
                continue  # a dropped object's children go with it, uncounted
            reason = self._drop_reason(Candidate(f.path, MISSING, f.node, scope), "schema")
            if reason:
                dropped[reason] = dropped.get(reason, 0) + 1
                dropped_parents += [f"{f.path}.", f"{f.path}[]."]
                continue
            kept.append(self.enrich(f, scope))
        return Curated(scope, kept, dropped, mode="schema")

    def data(
        self, value: Any, scope: str, schema: Mapping[str, Any] | None = None, max_items: int = 20
    ) -> Curated:
        """An object curated for reading: its leaf values by dot path, explained from its
        schema (when given) and the dictionary, noise left out."""
        flat = flatten_data(value, max_items=max_items)
        known = {path_key(f.path): f for f in schema_fields(schema)} if schema else {}
        kept: list[CuratedField] = []
        dropped: dict[str, int] = {}
        for path, leaf in flat.values:
            described = known.get(path_key(path))
            node = described.node if described else {}
            reason = self._drop_reason(Candidate(path, leaf, node, scope), "data")
            if reason:
                dropped[reason] = dropped.get(reason, 0) + 1
                continue
            base = (
                replace(described, path=path, value=leaf, required=False)
                if described
                else CuratedField(path=path, type=_json_type(leaf), value=leaf)
            )
            kept.append(self.enrich(base, scope))
        return Curated(scope, kept, dropped, flat.omitted_items, mode="data")

    # -- the pipeline's steps -----------------------------------------------------------

    def _drop_reason(self, candidate: Candidate, mode: Literal["data", "schema"]) -> str:
        for rule in self.rules:
            if rule.drops(candidate, mode=mode):
                return rule.reason
        return ""

    def info(self, scope: str, path: str) -> list[PropertyInfo]:
        """Dictionary entries for one property, best first."""
        found = [(i.specificity, n, i) for n, i in enumerate(self.infos) if i.matches(scope, path)]
        return [i for _, _, i in sorted(found, key=lambda t: (t[0], t[1]), reverse=True)]

    def enrich(self, f: CuratedField, scope: str) -> CuratedField:
        """`f` with what its schema does not say filled in from the dictionary, field by field
        from the best entry that has it."""
        update: dict[str, Any] = {}
        for info in self.info(scope, f.path):
            if not (f.description or update.get("description")) and info.description:
                update["description"] = info.description
            if not (f.hint or update.get("hint")) and info.type_hint:
                update["hint"] = info.type_hint
            if not (f.unit or update.get("unit")) and info.unit:
                update["unit"] = info.unit
            if not (f.values or update.get("values")) and info.values:
                update["values"] = info.values
            if f.example is MISSING and "example" not in update and info.example is not MISSING:
                update["example"] = info.example
            if not (f.set_by or update.get("set_by")) and info.set_by:
                update["set_by"] = info.set_by
        # A `date` type already says what to write; other formats get their hint.
        if not (f.hint or update.get("hint")) and f.format in _FORMAT_HINTS and f.format != "date":
            update["hint"] = _FORMAT_HINTS[f.format]
        return replace(f, **update) if update else f


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def entry_lines(entries: Iterable[CuratedEntry], mode: Literal["data", "schema"]) -> list[str]:
    """Curated entries as a model reads them, one line each. Data is folded: a run of
    entries under one object or list item shows that prefix once as a heading and each entry
    by its last segment, indented; a property's description is shown the first time only, and
    when every entry under a heading is set the same way (`store_put(..., record.<field>)`),
    the heading says it once instead of each entry."""
    listed = list(entries)
    if mode == "schema":
        return [_schema_line(e) for e in listed]
    lines: list[str] = []
    shown: set[str] = set()
    previous: list[str] = []
    covered: tuple[str, ...] = ()
    for e in listed:
        parts = e.path.split(".")
        common = 0
        while common < min(len(parts), len(previous)) - 1 and parts[common] == previous[common]:
            common += 1
        for depth in range(common, len(parts) - 1):
            prefix = ".".join(parts[: depth + 1])
            template = _shared_setter(listed, prefix)
            note = f" — set by {template}" if template else ""
            if template:
                covered = (*covered, f"{prefix}.")
            lines.append(f"{'  ' * depth}{parts[depth]}:{note}")
        key = path_key(e.path)
        own = e if not e.path.startswith(covered) else e.model_copy(update={"set_by": ""})
        lines.append("  " * (len(parts) - 1) + _data_line(own, parts[-1], key not in shown))
        shown.add(key)
        previous = parts
    return lines


def _shared_setter(entries: Sequence[CuratedEntry], prefix: str) -> str:
    """The one way every entry under `prefix` is set, with `<field>` for each one's own path;
    empty unless there are several and all agree."""
    members = [e for e in entries if e.path.startswith(f"{prefix}.")]
    templates = {
        e.set_by.replace(e.path, f"{prefix}.<field>") if e.set_by and e.path in e.set_by else ""
        for e in members
    }
    (template,) = templates if len(templates) == 1 else ("",)
    return template if len(members) > 1 else ""


def _schema_line(e: CuratedEntry) -> str:
    notes = [e.type]
    if e.required:
        notes.append("required")
    if e.default not in (None, [], {}):
        notes.append(f"default {_json(e.default)}")
    if e.limits:
        notes.append(e.limits)
    if e.unit:
        notes.append(e.unit)
    tail = [e.description] if e.description else []
    if e.hint:
        tail.append(f"Format: {e.hint}")
    if e.values and not e.closed:
        tail.append(f"Common: {', '.join(value_text(v, 40) for v in e.values[:8])}")
    if e.example is not None:
        tail.append(f"e.g. {_json(e.example)}")
    if e.set_by:
        tail.append(f"Set by {e.set_by}")
    text = " ".join(t if t.endswith((".", "!", "?", ":")) else f"{t}." for t in tail)
    return f"- {e.path} ({', '.join(notes)})" + (f": {text}" if text else "")


def _data_line(e: CuratedEntry, name: str, first: bool) -> str:
    value = value_text(e.value)
    if e.unit:
        value = f"{value} {e.unit}"
    bits = []
    if e.description and first:
        bits.append(e.description.rstrip(".") if e.read_only or e.set_by else e.description)
    if e.read_only:
        bits.append("read-only")
    elif e.set_by:
        bits.append(f"set by {e.set_by}")
    return f"{name}: {value}" + (f" — {'; '.join(bits)}" if bits else "")


def _entry(f: CuratedField, mode: Literal["data", "schema"]) -> CuratedEntry:
    return CuratedEntry(
        path=f.path,
        type=f.type,
        value=f.value if mode == "data" and f.value is not MISSING else None,
        required=f.required,
        read_only=f.read_only,
        description=f.description,
        hint=f.hint,
        unit=f.unit,
        values=list(f.values),
        closed=f.closed,
        example=None if f.example is MISSING else f.example,
        default=None if f.default is MISSING else f.default,
        limits=f.limits,
        set_by=f.set_by,
    )


_BUILT: weakref.WeakKeyDictionary[Registry, tuple[int, Curator]] = weakref.WeakKeyDictionary()


def curator_for(registry: Registry) -> Curator:
    """The curator of what `registry` holds now, built once per registry version."""
    held = _BUILT.get(registry)
    if held is None or held[0] != registry.version:
        curator = Curator.from_declared(
            registry.by_owner(PROPERTY_INFOS), registry.by_owner(CURATION_RULES)
        )
        held = (registry.version, curator)
        _BUILT[registry] = held
    return held[1]
