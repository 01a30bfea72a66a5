"""What `inspect` does to values before and after curation: narrow them to a path, tame what
an untrusted source sent, outline a text, and write the call examples its answers end with.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from mcp_types import INVALID_PARAMS

from prixfixe.curation import Curated, CuratedEntry, CuratedField, calls, curator_for, value_text
from prixfixe.declarations.curation import path_key
from prixfixe.errors import PrixfixeError

if TYPE_CHECKING:
    from prixfixe.declarations.host import Host

#: What targets look like, for every error about one.
TARGETS = (
    "targets: a resource URI (a record is prixfixe://store/KIND/ID), report:latest, "
    "report:GEN or report:ROUTINE (one step: report:GEN/STEP), tool:NAME, kind:NAME, "
    "result:NAME (a mounted tool's last result)"
)
#: A value longer than this (as JSON) is cut in the data for code too.
MAX_VALUE_CHARS = 1000
#: An argument in a call example longer than this (as JSON) is shown as `AS_BEFORE`.
MAX_CALL_CHARS = 120
AS_BEFORE = "<as before>"
#: Object keys longer than this are not names; they are cut like values.
MAX_KEY_CHARS = 64
_PATH_PART = re.compile(r"([^.\[\]]*)((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")
_HEADING = re.compile(r"#{1,6}\s")


class InspectError(PrixfixeError):
    """A target that names nothing prixfixe can show, or names it wrongly."""

    code = INVALID_PARAMS

    def __init__(self, target: str, reason: str) -> None:
        shown = value_text(target, 200)
        super().__init__(f"cannot inspect {shown!r}: {reason} ({TARGETS})", target=target)


# -- paths ----------------------------------------------------------------------------------


def parse_path(path: str, target: str) -> list[str | int]:
    """`record.items[2].name` as `["record", "items", 2, "name"]`."""
    parts: list[str | int] = []
    for n, piece in enumerate(path.strip().split(".")):
        match = _PATH_PART.fullmatch(piece)
        if match is None or not (match.group(1) or (n == 0 and match.group(2))):
            raise InspectError(
                target, f"path {path!r} is not a dot path like record.due or items[2].name"
            )
        if match.group(1):
            parts.append(match.group(1))
        parts += [int(i) for i in _INDEX.findall(match.group(2))]
    return parts


def path_text(parts: Sequence[str | int]) -> str:
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else p)
    return text


def value_at(value: Any, parts: Sequence[str | int], target: str) -> Any:
    """The part of `value` at `parts`, or an error saying what is there instead."""
    for n, part in enumerate(parts):
        where = path_text(parts[:n]) or "the top level"
        if isinstance(part, int):
            if not isinstance(value, list):
                raise InspectError(target, f"{where} is not a list, so it has no [{part}]")
            if part >= len(value):
                raise InspectError(target, f"{where} has {len(value)} items, so no [{part}]")
            value = value[part]
        else:
            if not isinstance(value, dict) or part not in value:
                keys = ", ".join(list(value)[:20]) if isinstance(value, dict) else ""
                has = f"; it has: {keys}" if keys else ""
                raise InspectError(target, f"no {part!r} under {where}{has}")
            value = value[part]
    return value


def curate_data(
    host: Host,
    value: Any,
    scope: str,
    schema: Mapping[str, Any] | None,
    path: str | None,
    target: str,
) -> Curated:
    """`value` (or the part of it at `path`) curated. A part keeps its whole path (the one
    key `record.due` holds it, and flattening joins keys with dots), so the schema and the
    dictionary explain it as they explain the whole."""
    value = tame(value)
    if path:
        parts = parse_path(path, target)
        value = {path_text(parts): value_at(value, parts, target)}
    return curator_for(host.registry).data(value, scope, schema)


def narrow_schema(curated: Curated, path: str | None, target: str) -> Curated:
    """Only the property at `path` and what it holds (`items[2]` reads as `items[]`)."""
    if not path:
        return curated
    want = path_key(path_text(parse_path(path, target)))
    kept = [
        f
        for f in curated.fields
        if path_key(f.path) == want or path_key(f.path).startswith(want + ".")
    ]
    if not kept:
        top = [f.path for f in curated.fields if "." not in f.path and "[" not in f.path]
        raise InspectError(target, f"no property {path!r}; it has: {', '.join(top) or 'none'}")
    return replace(curated, fields=kept)


# -- untrusted values -----------------------------------------------------------------------


def tame(value: Any) -> Any:
    """JSON with every object key short enough to be a name and on one line: a key is a
    path segment, shown whole, and an untrusted source chooses it."""
    if isinstance(value, dict):
        return {_tame_key(k): tame(v) for k, v in value.items()}
    if isinstance(value, list):
        return [tame(v) for v in value]
    return value


def _tame_key(key: Any) -> str:
    text = str(key).replace("\n", " ").replace("\r", " ")
    return text if len(text) <= MAX_KEY_CHARS else text[: MAX_KEY_CHARS - 1] + "…"


def capped(entry: CuratedEntry) -> CuratedEntry:
    """`entry` with a value too long for a line of data cut, as the text cuts it."""
    value = entry.value
    if value is None or len(json.dumps(value, ensure_ascii=False, default=str)) <= MAX_VALUE_CHARS:
        return entry
    return entry.model_copy(update={"value": value_text(value, MAX_VALUE_CHARS)})


@dataclass(frozen=True)
class TextOutline:
    """A text too free-form to flatten, summarised: its markdown headings (the first few) and
    its first non-blank lines, each cut to a line."""

    mime_type: str
    chars: int
    lines: int
    headings: list[str]
    start: list[str]

    #: Whether the first lines are the whole text (blank lines aside), none of them cut.
    whole: bool = False

    def fields(self) -> list[CuratedField]:
        """The outline as curated data, for code."""
        return [
            CuratedField(path=name, type=type_, value=getattr(self, name))
            for name, type_ in (
                ("mime_type", "string"),
                ("chars", "integer"),
                ("lines", "integer"),
                ("headings", "array"),
                ("start", "array"),
            )
        ]


def outline(text: str, mime: str, headings: int = 12, start: int = 5) -> TextOutline:
    """Size, headings (outside code fences) and first lines of `text`, each cut to a line."""
    lines = text.splitlines()
    found: list[str] = []
    fenced = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and _HEADING.match(line) and len(found) < headings:
            found.append(value_text(line.strip(), 80))
    filled = [line.strip() for line in lines if line.strip()]
    first = [value_text(line, 120) for line in filled[:start]]
    whole = len(filled) <= start and first == filled
    return TextOutline(
        mime_type=mime, chars=len(text), lines=len(lines), headings=found, start=first, whole=whole
    )


def outline_lines(text: TextOutline) -> list[str]:
    """The outline as the model reads it: what an untrusted text says is quoted, never bare."""
    lines = [f"{text.mime_type}, {text.chars:,} chars, {text.lines:,} lines"]
    if not set(text.headings) <= set(text.start):  # else the first lines show them all
        lines.append("Headings: " + " · ".join(text.headings))
    lines.append("Starts:")
    lines += [f"> {line}" for line in text.start]
    return lines


def json_document(text: str, mime: str) -> Any:
    """`text` parsed, when it is a JSON object or array; else None."""
    stripped = text.lstrip()
    if not stripped or (stripped[0] not in "{[" and "json" not in mime):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None


# -- call examples --------------------------------------------------------------------------


def call_text(host: Host, tool: str, arguments: Mapping[str, Any] | None = None) -> str:
    """How a model calls `tool` with `arguments` here: directly when it is listed, else
    through tool_invoke; empty when this server cannot reach it. A long argument is shown as
    `<as before>`: a call example is not the place to repeat a payload."""
    if tool not in host.registry:
        return ""
    facet = host.registry.get(tool).tool.facet
    if not host.exposure.reachable(facet):
        return ""
    shown = {
        k: v if len(json.dumps(v, ensure_ascii=False, default=str)) <= MAX_CALL_CHARS else AS_BEFORE
        for k, v in (arguments or {}).items()
    }
    return calls.call_text(tool, shown, listed=host.exposure.listed(facet))
