"""The store's tools and the built-in kinds of the morning routine: reminder, deadline,
countdown.

Three generic tools in `core` (`store_put`, `store_query`, `store_close`) serve every kind;
no kind's schema is listed. `store_kinds` (facet `store`, not listed) discloses them on demand.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, model_validator

from prixfixe.curation import curator_for
from prixfixe.dates import FORMS_SHORT, ResolvedDate, has_dates
from prixfixe.declarations.curation import CurationRule, PropertyInfo
from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.kinds import StoreKind
from prixfixe.declarations.resource import ResourceContext, ResourceTemplate
from prixfixe.declarations.tool import Tool, ToolContext, ToolResult
from prixfixe.errors import ResourceNotFoundError, UnknownRecordError
from prixfixe.schema import model_schema, shape_text
from prixfixe.store.api import MAX_LIMIT, StoredRecord
from prixfixe.store.faults import MAX_SQLITE_INT
from prixfixe.store.query import OPERATORS, resolve_where_dates
from prixfixe.store.records import find_kind, resolve_record_dates
from prixfixe.store.uris import RECORD_TEMPLATE

if TYPE_CHECKING:
    from prixfixe.declarations.resource import Resource

# -- built-in kinds -------------------------------------------------------------------------

Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


def _workweek() -> list[Weekday]:
    return ["mon", "tue", "wed", "thu", "fri"]


class Reminder(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=2000, description="What to be reminded of.")
    due: dt.date = Field(description="The day it is due, YYYY-MM-DD.")
    recurrence: Literal["daily", "weekdays", "weekly", "monthly", "yearly"] | None = Field(
        default=None, description="Repeat after the due day; null for once."
    )


class Deadline(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1, max_length=500, description="What is due.")
    date: dt.date = Field(description="The day it is due, YYYY-MM-DD.")
    notes: str | None = Field(default=None, max_length=10000, description="Anything else.")


class Countdown(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1, max_length=500, description="What is counted down to.")
    start: dt.date = Field(description="First day, YYYY-MM-DD.")
    end: dt.date = Field(description="Last day, YYYY-MM-DD; not before start.")
    work_days: list[Weekday] = Field(
        default_factory=_workweek,
        min_length=1,
        max_length=7,
        description="The weekdays that count as work days.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> Countdown:
        if self.end < self.start:
            raise ValueError(f"end {self.end} is before start {self.start}")
        if len(set(self.work_days)) != len(self.work_days):
            raise ValueError("work_days lists a day twice")
        return self


BUILTIN_KINDS = (
    StoreKind(
        name="reminder",
        description="Something to be reminded of on a day, optionally recurring.",
        model=Reminder,
        version=1,
        indexed=("due",),
    ),
    StoreKind(
        name="deadline",
        description="A dated deadline with notes.",
        model=Deadline,
        version=1,
        indexed=("date",),
    ),
    StoreKind(
        name="countdown",
        description="Days (and work days) from a start day to an end day.",
        model=Countdown,
        version=1,
        indexed=("end",),
    ),
)

# -- tool inputs and outputs ----------------------------------------------------------------

#: A record id as a client may send it: ids start at 1 and SQLite stores at most 2^63 - 1, so
#: anything else is refused by name ("id: Input should be less than or equal to ...") before
#: it reaches the store.
RecordId = Annotated[int, Field(ge=1, le=MAX_SQLITE_INT)]
#: A record id in a resource URI: ASCII digits, no leading zero, at most 19 of them.
_URI_ID = re.compile(r"[1-9][0-9]{0,18}")


def fields_hint(kinds: Iterable[StoreKind]) -> str:
    """Each kind's fields in one line, `?` marking optional ones: what an agent needs to put a
    record right the first time, without a store_kinds call."""
    return "; ".join(f"{k.name}: {shape_text(model_schema(k.model))}" for k in kinds)


class PutInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str = Field(description="Record kind: reminder, deadline, countdown, or see store_kinds.")
    record: dict[str, Any] = Field(
        description=f"Fields (dates YYYY-MM-DD or friday, in 3 days); with id, only those to "
        "change. "
        f"{fields_hint(BUILTIN_KINDS)}."
    )
    id: RecordId | None = Field(default=None, description="Update this record.")


class QueryInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str
    where: dict[str, Any] | None = Field(
        default=None,
        description='Field tests, all must hold: {"due":{"<=":"in 7 days"}}; ops < <= > >= '
        "in contains",
    )
    order_by: str | None = Field(default=None, description="Field; -field descending. Default id.")
    limit: int = Field(default=50, ge=1, le=MAX_LIMIT)
    cursor: str | None = Field(default=None, description="A page's next_cursor.")
    include_closed: bool = False


class CloseInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str
    id: RecordId
    reason: str | None = None


class KindsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str | None = Field(default=None, description="One kind; omit for all.")


class WrittenOutput(BaseModel):
    id: int
    generation: int


class RecordOutput(BaseModel):
    id: int
    gen: int  # the generation of its last change
    record: dict[str, Any]
    closed: bool
    reason: str | None = None


class DamagedOutput(BaseModel):
    id: int
    problem: str


class QueryOutput(BaseModel):
    kind: str
    generation: int
    records: list[RecordOutput]
    next_cursor: str | None
    # Records in the page's range whose stored body cannot be read: named, not served.
    damaged: list[DamagedOutput] = []


class KindOutput(BaseModel):
    name: str
    description: str
    version: int
    owner: str
    indexed: list[str]
    schema_: dict[str, Any] = Field(alias="schema", serialization_alias="schema")


class KindsOutput(BaseModel):
    kinds: list[KindOutput]


# -- handlers -------------------------------------------------------------------------------


def _dates_said(dates: Iterable[ResolvedDate]) -> str:
    """`; due 2026-11-27 (from "friday")`: the days relative dates named, echoed as ISO."""
    said = ", ".join(d.text() for d in dates)
    return f"; {said}" if said else ""


async def store_put(ctx: ToolContext, args: PutInput) -> ToolResult:
    kind = find_kind(ctx.app.registry.kinds, args.kind)
    today = ctx.app.routines.clock.today()
    record, dates = resolve_record_dates(kind, args.record, today)
    written = await anyio.to_thread.run_sync(lambda: ctx.app.store.put(args.kind, record, args.id))
    verb = "Updated" if args.id is not None else "Created"
    return ToolResult(
        text=f"{verb} {args.kind} {written.id} (store generation {written.generation})"
        f"{_dates_said(dates)}.",
        data=WrittenOutput(id=written.id, generation=written.generation),
    )


def _record(r: StoredRecord) -> RecordOutput:
    return RecordOutput(id=r.id, gen=r.gen, record=r.record, closed=r.closed, reason=r.close_reason)


async def store_query(ctx: ToolContext, args: QueryInput) -> ToolResult:
    kind = find_kind(ctx.app.registry.kinds, args.kind)
    where, dates = resolve_where_dates(kind, args.where, ctx.app.routines.clock.today())
    page = await anyio.to_thread.run_sync(
        lambda: ctx.app.store.query(
            args.kind,
            where=where,
            order_by=args.order_by,
            limit=args.limit,
            cursor=args.cursor,
            include_closed=args.include_closed,
        )
    )
    data = QueryOutput(
        kind=page.kind,
        generation=page.generation,
        records=[_record(r) for r in page.records],
        next_cursor=page.next_cursor,
        damaged=[DamagedOutput(id=d.id, problem=d.problem) for d in page.damaged],
    )
    text = query_text(data)
    if dates:
        text += f"\nDates: {', '.join(d.text() for d in dates)}."
    return ToolResult(text=text, data=data)


def query_text(data: QueryOutput) -> str:
    """The page as the model reads it: a count, then one line a record (its fields as compact
    JSON), and how to get the next page."""
    count = len(data.records)
    noun = data.kind if count == 1 else f"{data.kind} records"
    lines = [f"{count} {noun} (generation {data.generation}){':' if count else '.'}"]
    for r in data.records:
        closed = f" closed ({r.reason})" if r.closed and r.reason else " closed" if r.closed else ""
        fields = json.dumps(r.record, ensure_ascii=False, separators=(",", ":"))
        lines.append(f"- id {r.id}{closed}: {fields}")
    for d in data.damaged:
        lines.append(
            f"Left out, damaged: {data.kind} {d.id} ({d.problem}; `prixfixe doctor` lists "
            "every damaged record)"
        )
    if data.next_cursor:
        lines.append(f"More: cursor={data.next_cursor!r}")
    return "\n".join(lines)


async def store_close(ctx: ToolContext, args: CloseInput) -> ToolResult:
    written = await anyio.to_thread.run_sync(
        lambda: ctx.app.store.close_record(args.kind, args.id, args.reason)
    )
    return ToolResult(
        text=f"Closed {args.kind} {written.id} (store generation {written.generation}).",
        data=WrittenOutput(id=written.id, generation=written.generation),
    )


def describe_kind(kind: StoreKind) -> KindOutput:
    return KindOutput(
        name=kind.name,
        description=kind.description,
        version=kind.version,
        owner=kind.owner,
        indexed=list(kind.indexed),
        schema=model_schema(kind.model),
    )


async def store_kinds(ctx: ToolContext, args: KindsInput) -> ToolResult:
    # Declarations live in the registry: listing kinds never opens the store file.
    kinds = ctx.app.registry.kinds
    chosen = [find_kind(kinds, args.kind)] if args.kind else list(kinds.values())
    data = KindsOutput(kinds=[describe_kind(k) for k in chosen])
    curator = curator_for(ctx.app.registry)
    lines: list[str] = []
    for kind, shown in zip(chosen, data.kinds, strict=True):
        lines.append(f"{kind.name} (v{kind.version}, {kind.owner}): {kind.description}")
        lines += curator.schema(shown.schema_, f"kind:{kind.name}").lines()
    if any(has_dates(shown.schema_) for shown in data.kinds):
        zone = ctx.app.routines.clock.name
        lines.append(f"Dates: {FORMS_SHORT} (resolved in {zone}, stored as YYYY-MM-DD).")
    return ToolResult(text="\n".join(lines), data=data)


# -- registration ---------------------------------------------------------------------------

FILTER_HELP = (
    'where is a JSON object; all keys must hold. {"f": v} is equality (null: missing); '
    '{"f": {op: v, ...}} with ops ' + ", ".join(OPERATORS) + ". <, <=, >, >= compare text, "
    f"numbers and dates ({FORMS_SHORT}); in takes a list; contains is case-insensitive text. "
    "Every record also has id and gen (generation of its last change): "
    '{"gen": {">": 41}} is what changed since generation 41. '
    "order_by names a field (-field descending; default id). Pages: pass next_cursor back "
    "unchanged with the same kind, where and order_by; it stays valid as records are added."
)


#: The tools that serve every store kind: the capability index lists them beside each kind.
STORE_TOOLS = ("store_put", "store_query", "store_close", "store_kinds")


@hookimpl
def register_store_kinds(register: Callable[[StoreKind], None]) -> None:
    for kind in BUILTIN_KINDS:
        register(kind)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    kinds_hint = "Each kind's fields: tool_invoke('store_kinds', {'kind': KIND})."
    register(
        Tool(
            name="store_put",
            title="Save a record",
            description="Create a record of a kind, or update one by id.",
            input_model=PutInput,
            output_model=WrittenOutput,
            handler=store_put,
            mutates=True,
            destructive=False,
            facet="core",
            keywords=(
                "store",
                "save",
                "create",
                "update",
                "add",
                "record",
                "remind",
                "reminder",
                "deadline",
                "countdown",
                "set",
                "schedule",
                "due",
                "tomorrow",
                "monday",
                "tuesday",
                "wednesday",
                "thursday",
                "friday",
                "saturday",
                "sunday",
            ),
            examples=(
                "add a reminder",
                "save a deadline",
                "change a reminder's due date",
                "remind me to pay the rent on monday",
                "set a reminder for tomorrow",
                "start a countdown to the launch",
            ),
            usage=(
                f"{kinds_hint} With id, the given fields replace the stored ones (null clears "
                "an optional field); a closed record cannot be changed. A record that fails "
                "its kind's schema is refused whole, naming each field. A date field takes "
                f"{FORMS_SHORT}; a relative one is resolved in the server's time zone, stored "
                "and echoed as YYYY-MM-DD."
            ),
        )
    )
    register(
        Tool(
            name="store_query",
            title="Query records",
            description="List records of a kind, filtered, sorted and paged.",
            input_model=QueryInput,
            output_model=QueryOutput,
            handler=store_query,
            mutates=False,
            facet="core",
            keywords=(
                "store",
                "find",
                "list",
                "search",
                "filter",
                "records",
                "due",
                "reminders",
                "deadlines",
                "countdowns",
                "open",
                "upcoming",
            ),
            examples=(
                "which reminders are due this week",
                "list open deadlines",
                "what deadlines do I have",
                "show my reminders",
            ),
            usage=f"{FILTER_HELP} {kinds_hint}",
        )
    )
    register(
        Tool(
            name="store_close",
            title="Close a record",
            description="Close a record (done, cancelled), keeping its history.",
            input_model=CloseInput,
            output_model=WrittenOutput,
            handler=store_close,
            mutates=True,
            destructive=False,
            facet="core",
            keywords=(
                "store",
                "done",
                "complete",
                "finish",
                "cancel",
                "dismiss",
                "archive",
                "close",
                "delete",
                "remove",
                "mark",
            ),
            examples=("mark a reminder done", "cancel a deadline", "delete an old countdown"),
            usage="Closing is final: the record stays readable with include_closed.",
        )
    )
    register(
        Tool(
            name="store_kinds",
            title="Store kinds",
            description="The store's record kinds: each one's fields, version and owner.",
            input_model=KindsInput,
            output_model=KindsOutput,
            handler=store_kinds,
            mutates=False,
            facet="store",
            keywords=("kinds", "schema", "fields", "types", "store", "reminder", "deadline"),
            examples=(
                "what fields does a reminder have",
                "which record kinds exist",
                "show the deadline schema",
            ),
            usage="Call before store_put on a kind you have not used yet.",
        )
    )


#: What every record has beside its fields, explained wherever a record is curated (`inspect`).
RECORD_PROPERTIES = (
    PropertyInfo(
        path="id",
        scope="kind:*",
        description="Its id within its kind",
    ),
    PropertyInfo(
        path="gen",
        scope="kind:*",
        description="Store generation of its last change",
    ),
    PropertyInfo(
        path="closed",
        scope="kind:*",
        description="A closed record is kept but cannot change",
        set_by="store_close(kind, id)",
    ),
    PropertyInfo(
        path="close_reason",
        scope="kind:*",
        description="Why it was closed",
        set_by="store_close(kind, id, reason)",
    ),
)


#: Bookkeeping a model does not act on: left out of a curated record (the resource keeps them).
RECORD_BOOKKEEPING = CurationRule(
    name="record-bookkeeping",
    reason="internal",
    scope="kind:*",
    # Top level only: a kind may have a field of the same name inside `record`.
    test=lambda candidate: candidate.path in ("created_gen", "schema_version"),
    applies="data",
)


@hookimpl
def register_curation(register: Callable[[PropertyInfo | CurationRule], None]) -> None:
    for info in RECORD_PROPERTIES:
        register(info)
    register(RECORD_BOOKKEEPING)


# -- records as resources -------------------------------------------------------------------


async def _read_record(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
    kind, raw_id = variables["kind"], variables["id"]
    # ASCII digits only (str.isdigit takes full-width and superscript digits), and few enough.
    valid = _URI_ID.fullmatch(raw_id) is not None and int(raw_id) <= MAX_SQLITE_INT
    if kind not in ctx.app.registry.kinds or not valid:
        shown = raw_id if len(raw_id) <= 40 else raw_id[:37] + "..."
        raise ResourceNotFoundError(ctx.uri, f"no {kind} record with id {shown}")
    try:
        stored = await anyio.to_thread.run_sync(lambda: ctx.app.store.get(kind, int(raw_id)))
    except UnknownRecordError:
        raise ResourceNotFoundError(ctx.uri, f"no {kind} record with id {raw_id}") from None
    document = {
        "kind": stored.kind,
        "id": stored.id,
        "gen": stored.gen,
        "created_gen": stored.created_gen,
        "schema_version": stored.schema_version,
        "closed": stored.closed,
        "close_reason": stored.close_reason,
        "record": stored.record,
    }
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def _complete_kind(ctx: ResourceContext, value: str, chosen: Mapping[str, str]) -> list[str]:
    return [name for name in ctx.app.registry.kinds if name.startswith(value)]


async def _complete_id(ctx: ResourceContext, value: str, chosen: Mapping[str, str]) -> list[str]:
    kind = chosen.get("kind")
    if kind not in ctx.app.registry.kinds:
        return []
    page = await anyio.to_thread.run_sync(
        lambda: ctx.app.store.query(kind, order_by="-id", limit=MAX_LIMIT, include_closed=True)
    )
    return [str(r.id) for r in page.records if str(r.id).startswith(value)]


@hookimpl
def register_resources(register: Callable[[Resource | ResourceTemplate], None]) -> None:
    register(
        ResourceTemplate(
            uri_template=RECORD_TEMPLATE,
            name="store-record",
            title="Store record",
            description=(
                "One store record as JSON: its fields, generation and whether it is closed. "
                "Subscribers are told when it changes."
            ),
            mime_type="application/json",
            reader=_read_record,
            completions={"kind": _complete_kind, "id": _complete_id},
        )
    )
