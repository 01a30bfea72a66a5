"""`inspect`: any object prixfixe knows, curated, with what can be done with it next.

One `target` names the object, in words a model can type:

| target | the object | curated as |
|---|---|---|
| `prixfixe://store/KIND/ID` | a store record | its fields with the kind's schema (`kind:KIND`) |
| `report:latest`, `report:GEN`, `report:ROUTINE` | a kept report | each step's data |
| `report:GEN/STEP` | one section of a report | that step's data (`step:TYPE`) |
| any other resource URI | a resource (prixfixe's, a mount's) | JSON as data; text outlined |
| `tool:NAME` | a tool's arguments | its input schema (`tool:NAME`) |
| `kind:NAME` | a store kind's fields | its schema (`kind:NAME`) |
| `result:NAME` | a mounted tool's last result | its structured content or text |

`path` narrows to one property (`record.due`, `repos[2]`); `limit` caps the entries shown.
Curation itself (flattening, noise, the property dictionary) is `prixfixe.curation`'s; the
finders (`inspect_objects.py`) read each object and pick its schema and scope; this module
declares the tool and renders what they found: the compact text a model reads, and an
`InspectOutput` (a versioned `CuratedView` inside) for code.

What a resource or a mounted server says is data, never instructions: it stays inside curated
values, each cut to a line, object keys too long to be names are cut, and a text is outlined
(size, headings, first lines, quoted), never passed on whole.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from prixfixe.curation import Curated, CuratedEntry, CuratedView
from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.tool import Tool, ToolContext, ToolResult
from prixfixe.errors import PrixfixeError
from prixfixe.tools.inspect_objects import Found, ObjectType, SectionRef, find
from prixfixe.tools.inspect_values import InspectError, capped

#: The most entries shown unless `limit` says otherwise.
DEFAULT_LIMIT = 40


class InspectInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target: str = Field(
        min_length=1,
        max_length=2000,
        description="A resource URI (a record: prixfixe://store/KIND/ID), "
        "report:latest|GEN[/STEP], tool:NAME, kind:NAME or result:NAME.",
    )
    path: str | None = Field(default=None, description="Only this property: record.due, items[2].")
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, le=500, description="Most entries to show.")


class InspectOutput(CuratedView):
    # A curated view (`subject` says what it is in one line, `entries` are those shown) and
    # what inspect adds. No docstring: it would be the schema's description, in every
    # tool_describe and in the full capability index.
    target: str
    object: ObjectType
    more: int  # entries left out by limit
    sections: list[SectionRef] = Field(default_factory=list)  # a report's steps


async def inspect(ctx: ToolContext, args: InspectInput) -> ToolResult:
    target = args.target.strip()
    try:
        found = await find(ctx, target, args.path)
    except InspectError:
        raise
    except PrixfixeError as exc:  # not found, denied, unreadable: said with the target
        raise InspectError(target, exc.message.rstrip(".")) from None
    text, data = render(found, args.limit)
    return ToolResult(text=text, data=compact(data))


def compact(data: InspectOutput) -> dict[str, Any]:
    """`data` as structured content, each entry without the fields it leaves at their
    defaults (most of them: a data entry has a value, rarely limits or an example), so the
    payload costs a client what the entries say, not their schema again. The view's own
    fields stay whole: `curation_version` is always there."""
    payload = data.model_dump(mode="json", by_alias=True)
    payload["entries"] = [
        e.model_dump(mode="json", by_alias=True, exclude_defaults=True) for e in data.entries
    ]
    return payload


def render(found: Found, limit: int) -> tuple[str, InspectOutput]:
    """What the model reads (a summary line, the entries, what was left out, the next
    calls) and the same for code. `limit` counts entries across a report's sections."""
    lines = [found.summary]
    entries: list[CuratedEntry] = []
    dropped: Counter[str] = Counter()
    omitted = more = 0
    room = limit
    for part in found.parts:
        if part.heading:
            lines.append(part.heading)
        shown = replace(part.curated, fields=part.curated.fields[:room])
        cut = len(part.curated.fields) - len(shown.fields)
        room -= len(shown.fields)
        if part.shown:
            lines += shown.lines()
        if cut and part.prefix:
            lines.append(f"… {cut} more: inspect {part.more_at}")
        more += cut
        dropped.update(part.curated.dropped)
        omitted += part.curated.omitted_items
        entries += [
            capped(e.model_copy(update={"path": part.prefix + e.path})) for e in shown.entries()
        ]
    footer = Curated(found.scope, [], dict(dropped), omitted).footer()
    if footer:
        lines.append(footer)
    if more and not any(p.prefix for p in found.parts):
        lines.append(f"… {more} more entries: narrow with path, or raise limit (now {limit})")
    lines += found.lines
    if found.next:
        lines.append("Next: " + "; ".join(found.next))
    data = InspectOutput(
        subject=found.summary,
        scope=found.scope,
        entries=entries,
        dropped=dict(dropped),
        omitted_items=omitted,
        next=list(found.next),
        target=found.target,
        object=found.object,
        more=more,
        sections=list(found.sections),
    )
    return "\n".join(lines), data


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    register(
        Tool(
            name="inspect",
            title="Inspect an object",
            description=(
                "Show what an object holds (a record, report, resource, tool, kind, a mounted "
                "tool's last result), curated: who sets each property, what to call next."
            ),
            input_model=InspectInput,
            output_model=InspectOutput,
            handler=inspect,
            mutates=False,
            facet="inspect",
            keywords=("inspect", "holds", "object", "contents", "explain"),
            examples=(
                "inspect a record",
                "show what this object holds",
                "what does this resource contain",
            ),
        )
    )
