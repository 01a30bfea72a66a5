"""The objects `inspect` shows, one finder each: it reads the object, picks its schema and
scope, says who sets each property and which calls act on it next (see `inspect.py` for the
targets that name them)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, TypeAlias

import mcp_types as types
from pydantic import BaseModel

from prixfixe.curation import Curated, CuratedField, curator_for, value_text
from prixfixe.curation.calls import example_arguments
from prixfixe.declarations.resource import MOUNT_OWNER_PREFIX, URI_PATTERN
from prixfixe.declarations.tool import ToolContext
from prixfixe.schema import model_schema, shape_text
from prixfixe.store.records import find_kind
from prixfixe.store.uris import record_uri
from prixfixe.tools.inspect_values import (
    InspectError,
    call_text,
    curate_data,
    json_document,
    narrow_schema,
    outline,
    outline_lines,
)
from prixfixe.tools.last_results import last_results
from prixfixe.words import plural

if TYPE_CHECKING:
    from prixfixe.declarations.host import Host
    from prixfixe.routines.report import StepResult

ObjectType: TypeAlias = Literal["record", "report", "section", "resource", "tool", "kind", "result"]

_PREFIXED = re.compile(r"^(tool|kind|result|report):(?!//)(.*)$", re.DOTALL)
_RECORD_URI = re.compile(r"^prixfixe://store/([^/?#]+)/([^/?#]+)$")
#: Routines with no name of their own (`prixfixe.routines.spec`): nothing to run again.
_UNNAMED_ROUTINES = ("(inline)", "(step)")


class SectionRef(BaseModel):
    # One step of an inspected report; `target` inspects it alone.
    name: str
    type: str
    version: str
    status: Literal["ok", "failed"]
    error: str | None = None
    target: str


@dataclass(frozen=True)
class Part:
    """Curated entries under an optional heading (a report has one part a step)."""

    curated: Curated
    heading: str = ""
    #: Put before each entry's path in the data for code (a report's step name).
    prefix: str = ""
    #: The target that shows what `limit` left out of this part.
    more_at: str = ""
    #: False: its entries are data for code only (a text's outline: the model reads it in
    #: `Found.lines`, quoted).
    shown: bool = True


@dataclass(frozen=True)
class Found:
    """One object, found and curated, before it is rendered."""

    object: ObjectType
    target: str
    summary: str
    parts: Sequence[Part]
    next: Sequence[str] = ()
    #: Lines after the entries: what a tool returns, a text's outline.
    lines: Sequence[str] = ()
    sections: Sequence[SectionRef] = ()
    scope: str = ""


async def find(ctx: ToolContext, target: str, path: str | None) -> Found:
    """The object `target` names, curated (narrowed to `path`)."""
    prefixed = _PREFIXED.match(target)
    if prefixed:
        kind, name = prefixed.group(1), prefixed.group(2).strip()
        if not name:
            raise InspectError(target, f"{kind}: needs a name after the colon")
        if kind == "tool":
            return _tool(ctx.app, name, path)
        if kind == "kind":
            return _kind(ctx.app, name, path)
        if kind == "result":
            return _result(ctx.app, name, path)
        return await _report(ctx, target, name, path)
    if URI_PATTERN.match(target):
        record = _RECORD_URI.match(target)
        if record:
            return await _record(ctx, target, record.group(1), path)
        return await _resource(ctx, target, path)
    raise InspectError(target, _guess(ctx.app, target))


def _guess(host: Host, target: str) -> str:
    """Why a bare word is not a target, and the target it probably meant."""
    meant = []
    if target in host.registry:
        meant.append(f"tool:{target}")
    if target in host.registry.kinds:
        meant.append(f"kind:{target}")
    if target in ("report", "latest"):
        meant.append("report:latest")
    hint = f"; did you mean {' or '.join(meant)}?" if meant else ""
    return f"not a target{hint}"


def _calls(*calls: str) -> list[str]:
    return [c for c in calls if c]  # a call this server cannot reach is not offered


# -- records and kinds ----------------------------------------------------------------------


async def _record(ctx: ToolContext, target: str, kind_name: str, path: str | None) -> Found:
    stored = json.loads(await ctx.app.read_resource_text(target))  # its checks, its not-found
    kind = ctx.app.registry.kinds[kind_name]
    record_id = int(stored["id"])
    # The fields first, the bookkeeping after: the fields are what a model came for.
    document = {
        "record": stored["record"],
        **{
            key: stored[key]
            for key in ("id", "gen", "closed", "close_reason", "created_gen", "schema_version")
        },
    }
    counter = {"type": "integer", "readOnly": True}
    schema = {
        "type": "object",
        "properties": {
            "record": model_schema(kind.model),
            "id": counter,
            "gen": counter,
            "closed": {"type": "boolean"},
            "close_reason": {"type": ["string", "null"]},
            "created_gen": counter,
            "schema_version": counter,
        },
    }
    scope = f"kind:{kind.name}"
    curated = curate_data(ctx.app, document, scope, schema, path, target)
    key = {"kind": kind.name, "id": record_id}
    put = f"store_put(kind={kind.name!r}, id={record_id}"
    close = f"store_close(kind={kind.name!r}, id={record_id}"

    def set_by(f: CuratedField) -> str:
        if f.path.startswith("record."):  # a plugin's entry may say better (a sync owns it)
            return f.set_by or f"{put}, {f.path})"
        if f.path == "closed":
            return f"{close})"
        if f.path == "close_reason":
            return f"{close}, reason)"
        return f.set_by

    curated = replace(curated, fields=[replace(f, set_by=set_by(f)) for f in curated.fields])
    closed = bool(stored["closed"])
    changes = (
        ()
        if closed
        else (
            call_text(ctx.app, "store_put", {**key, "record": {"<field>": "<new value>"}}),
            call_text(ctx.app, "store_close", key),
        )
    )
    return Found(
        object="record",
        target=record_uri(kind.name, record_id),
        summary=f"{kind.name} {record_id} ({'closed' if closed else 'open'}): {kind.description}",
        parts=[Part(curated)],
        next=_calls(*changes, call_text(ctx.app, "inspect", {"target": scope})),
        scope=scope,
    )


def _kind(host: Host, name: str, path: str | None) -> Found:
    kind = find_kind(host.registry.kinds, name)
    scope = f"kind:{kind.name}"
    whole = curator_for(host.registry).schema(model_schema(kind.model), scope)
    curated = narrow_schema(whole, path, scope)
    curated = replace(
        curated,
        fields=[
            replace(f, set_by=f.set_by or f"store_put(kind={kind.name!r}, record.{f.path})")
            for f in curated.fields
        ],
    )
    record = example_arguments(whole.fields)
    return Found(
        object="kind",
        target=scope,
        summary=f"kind {kind.name} v{kind.version} ({kind.owner}): {kind.description}",
        parts=[Part(curated, heading="Fields:")],
        next=_calls(
            call_text(host, "store_put", {"kind": kind.name, "record": record}),
            call_text(host, "store_query", {"kind": kind.name}),
        ),
        scope=scope,
    )


# -- tools and their last results -----------------------------------------------------------


def _server_of(owner: str) -> str | None:
    return owner.removeprefix(MOUNT_OWNER_PREFIX) if owner.startswith(MOUNT_OWNER_PREFIX) else None


def _tool(host: Host, name: str, path: str | None) -> Found:
    entry = host.reachable(name)
    tool = entry.tool
    scope = f"tool:{tool.name}"
    whole = curator_for(host.registry).schema(entry.input_schema, scope)
    curated = narrow_schema(whole, path, scope)
    server = _server_of(tool.owner)
    notes = ["mutates" if tool.mutates else "read-only", f"facet {tool.facet}"]
    if host.exposure.listed(tool.facet):
        notes.append("listed")
    if server:
        notes.append(f"from mounted server {server}")
    returns = (
        [f"Returns: {value_text(shape_text(entry.output_schema), 300)}"]
        if entry.output_schema is not None
        else []
    )
    remembered = server is not None and last_results(host.registry).get(tool.name) is not None
    return Found(
        object="tool",
        target=scope,
        summary=f"{tool.name} ({'; '.join(notes)}): {value_text(tool.summary, 160)}",
        parts=[Part(curated, heading="Arguments:" if curated.fields else "Arguments: none")],
        next=_calls(
            call_text(host, tool.name, example_arguments(whole.fields)),
            call_text(host, "inspect", {"target": f"result:{tool.name}"}) if remembered else "",
        ),
        lines=returns,
        scope=scope,
    )


def _result(host: Host, name: str, path: str | None) -> Found:
    target = scope = f"result:{name}"
    entry = host.reachable(name)
    server = _server_of(entry.tool.owner)
    if server is None:
        raise InspectError(
            target,
            f"{name} is prixfixe's own tool; only mounted servers' tools' last results are "
            "kept (call it again to see its result)",
        )
    kept = last_results(host.registry).get(name)
    if kept is None:
        whole = curator_for(host.registry).schema(entry.input_schema, f"tool:{name}")
        call = call_text(host, name, example_arguments(whole.fields))
        raise InspectError(target, f"no result of {name} is kept yet: call it first ({call})")
    result = kept.result
    status = "an error result" if result.is_error else "ok"
    summary = (
        f"last result of {name} (server {server}), called with "
        f"{value_text(kept.arguments, 160)}: {status}"
    )
    if kept.cut:
        summary += "; cut to fit what is kept"
    others = Counter(b.type for b in result.content if not isinstance(b, types.TextContent))
    if others:
        summary += "; also " + ", ".join(f"{n} {kind}" for kind, n in sorted(others.items()))
    next_calls = _calls(
        call_text(host, name, kept.arguments),
        call_text(host, "inspect", {"target": f"tool:{name}"}),
    )
    if result.structured_content is not None:
        data = result.structured_content
        curated = curate_data(host, data, scope, entry.output_schema, path, target)
        return Found("result", target, summary, [Part(curated)], next_calls, scope=scope)
    text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
    return _text_or_data(host, "result", target, summary, text, "text/plain", path, next_calls)


# -- reports --------------------------------------------------------------------------------


async def _report(ctx: ToolContext, target: str, ref: str, path: str | None) -> Found:
    if not call_text(ctx.app, "report_get"):  # inspect shows no more than its tools may
        raise InspectError(
            target, "reports are served by report_get, which this server does not reach"
        )
    which, _, step_name = ref.partition("/")
    which = which.strip() or "latest"
    generation = int(which) if which.isascii() and which.isdigit() else None
    routine = None if generation is not None or which == "latest" else which
    stored = await ctx.app.routines.report(lambda: ctx.app.store, generation, routine, None)
    report = stored.report
    gen = report.generation
    steps = {s.name: s for s in report.steps}
    if not step_name and path:  # a path may start with a step's name: that section, narrowed
        for name in sorted(steps, key=len, reverse=True):
            rest = path[len(name) :]
            if path.startswith(name) and (not rest or rest[0] in ".["):
                step_name, path = name, rest.lstrip(".") or None
                break
        else:
            raise InspectError(
                target, f"no step {path!r} in report {gen}; its steps: {', '.join(steps)}"
            )
    rerun = (
        ""
        if report.routine in _UNNAMED_ROUTINES
        else call_text(ctx.app, "routine_run", {"name": report.routine})
    )
    get = call_text(ctx.app, "report_get", {"generation": gen, "format": "data"})
    next_calls = _calls(get, rerun)
    counts = Counter(s.status for s in report.steps)
    head = (
        f"report at generation {gen} of {report.routine}: {report.status}, "
        f"{plural(len(report.steps), 'step')} "
        f"({counts['ok']} ok, {counts['failed']} failed), started "
        f"{report.started.replace('T', ' ')[:16]} UTC"
    )
    refs = [_section_ref(gen, s) for s in report.steps]
    if step_name:
        step = steps.get(step_name)
        if step is None:
            raise InspectError(
                target, f"no step {step_name!r} in report {gen}; its steps: {', '.join(steps)}"
            )
        part = _section(ctx.app, gen, step, path, heading=False)
        return Found(
            object="section",
            target=f"report:{gen}/{step.name}",
            summary=f"{head}; step {step.name}: {_section_line(step)}",
            parts=[part],
            next=next_calls,
            sections=[r for r in refs if r.name == step.name],
            scope=part.curated.scope,
        )
    parts = [_section(ctx.app, gen, s, None, heading=True) for s in report.steps]
    return Found(
        object="report",
        target=f"report:{gen}",
        summary=head,
        parts=parts,
        next=next_calls,
        sections=refs,
        scope=" ".join(sorted({p.curated.scope for p in parts})),
    )


def _section_line(step: StepResult) -> str:
    line = f"{step.type} v{step.version}, {step.status}"
    if step.error is not None:
        line += f" ({step.error.kind}): {value_text(step.error.message, 200)}"
    return line


def _section_ref(gen: int, step: StepResult) -> SectionRef:
    return SectionRef(
        name=step.name,
        type=step.type,
        version=step.version,
        status=step.status,
        error=None if step.error is None else f"{step.error.kind}: {step.error.message}",
        target=f"report:{gen}/{step.name}",
    )


def _section(host: Host, gen: int, step: StepResult, path: str | None, *, heading: bool) -> Part:
    target = f"report:{gen}/{step.name}"
    scope = f"step:{step.type}"
    declared = host.registry.step_types.get(step.type)
    # The schema explains the data only if the data was made under this very version.
    schema = (
        model_schema(declared.data_model, mode="serialization")
        if declared is not None and declared.version == step.version
        else None
    )
    curated = (
        Curated(scope, [], mode="data")
        if step.data is None
        else curate_data(host, step.data, scope, schema, path, target)
    )
    if not heading:
        return Part(curated, more_at=target)
    title = f"[{step.name}] {_section_line(step)} — inspect {target}"
    return Part(curated, heading=title, prefix=f"{step.name}/", more_at=target)


# -- resources ------------------------------------------------------------------------------


async def _resource(ctx: ToolContext, uri: str, path: str | None) -> Found:
    text = await ctx.app.read_resource_text(uri)
    declared = ctx.app.registry.resource(uri)
    summary = f"resource {uri}"
    mime = ""
    if declared is not None:  # a mounted server's words: cut like any value
        mime = declared.mime_type or ""
        summary += f" ({value_text(declared.title or declared.name, 80)})"
        if declared.description:
            summary += f" — {value_text(declared.description, 160)}"
    # A client reads a resource whole; inspect only ever shows a part of a long one.
    read = f"resources/read(uri={uri!r})"
    return _text_or_data(ctx.app, "resource", uri, summary, text, mime, path, [], read)


def _text_or_data(
    host: Host,
    object_type: ObjectType,
    target: str,
    summary: str,
    text: str,
    mime: str,
    path: str | None,
    next_calls: Sequence[str],
    read_whole: str = "",
) -> Found:
    """JSON curated as data; any other text outlined (it is not a structure to flatten)."""
    scope = f"resource:{target}" if object_type == "resource" else target
    parsed = json_document(text, mime)
    if parsed is not None:
        curated = curate_data(host, parsed, scope, None, path, target)
        next_calls = _calls(*next_calls, read_whole)
        return Found(object_type, target, summary, [Part(curated)], next_calls, scope=scope)
    if path:
        raise InspectError(target, "path applies to JSON content, and this is text")
    shape = outline(text, mime or "text/plain")
    next_calls = _calls(*next_calls, "" if shape.whole and text else read_whole)
    if text:
        lines = outline_lines(shape)
    elif mime and not mime.startswith("text/") and "json" not in mime:
        lines = [f"({mime} contents are binary: not shown)"]
    else:
        lines = ["(no text content)"]
    part = Part(Curated(scope, shape.fields(), mode="data"), shown=False)
    return Found(object_type, target, summary, [part], next_calls, lines, scope=scope)
