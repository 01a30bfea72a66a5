"""What the pages show, gathered from the app: the same services the tools and the CLI read
(the report archive, the store, the capability index, the doctor's plugin and server data),
nothing recomputed here. Every function blocks (the store is file or network I/O): the page
layer calls them in a worker thread."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prixfixe.errors import (
    RoutineError,
    StoreCorruptError,
    UnknownKindError,
    UnknownRecordError,
)
from prixfixe.routines import REPORTS_OWNER, archive
from prixfixe.routines.archive import StoredReport
from prixfixe.routines.report import title
from prixfixe.store.api import DamagedRecord, StoredRecord
from prixfixe.web.render import markdown_html

if TYPE_CHECKING:
    from prixfixe.app import App

#: Records of one kind shown at once (a "More" link pages on).
PAGE_SIZE = 50
#: Kept reports listed on /reports.
REPORTS_LISTED = 200


class NotFound(Exception):
    """A page about something that is not there: the message names it."""


@dataclass(frozen=True)
class ShownReport:
    generation: int
    title: str
    routine: str
    status: str
    html: str


@dataclass(frozen=True)
class ReportRow:
    generation: int
    routine: str
    status: str
    kept: str


@dataclass(frozen=True)
class ShownRecord:
    kind: str
    id: int
    gen: int
    fields: tuple[tuple[str, str], ...]
    #: Set when the record cannot be read (its fields are then empty): the store's error.
    problem: str = ""


@dataclass(frozen=True)
class KindRecords:
    kind: str
    description: str
    records: tuple[ShownRecord, ...]
    next_cursor: str | None
    #: Records in the page's range the store could not read: named, as the tools name them.
    damaged: tuple[DamagedRecord, ...] = ()


def _shown(stored: StoredReport) -> ShownReport:
    report = stored.report
    return ShownReport(
        generation=report.generation,
        title=title(report),
        routine=report.routine,
        status=report.status,
        html=markdown_html(stored.markdown),
    )


def latest_report(app: App) -> ShownReport | None:
    try:
        return _shown(archive.load(app.store.slice(REPORTS_OWNER), None))
    except RoutineError:
        return None


def report_at(app: App, generation: int) -> ShownReport:
    try:
        return _shown(archive.load(app.store.slice(REPORTS_OWNER), generation))
    except RoutineError:
        raise NotFound(
            f"No report at generation {generation}: it was never kept, or it was pruned "
            "([reports] keep and max_age_days)."
        ) from None


def kept_reports(app: App, limit: int = REPORTS_LISTED) -> list[ReportRow]:
    rows = app.store.slice(REPORTS_OWNER).query(
        "SELECT generation, routine, status, created FROM {prefix}reports "
        "ORDER BY generation DESC LIMIT ?",
        [limit],
    )
    return [
        ReportRow(
            generation=int(gen),
            routine=str(routine),
            status=str(status),
            kept=_when(created),
        )
        for gen, routine, status, created in rows
    ]


def _when(created: object) -> str:
    if not isinstance(created, int | float):
        return ""
    return dt.datetime.fromtimestamp(created, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _field_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def shown_record(record: StoredRecord) -> ShownRecord:
    # An optional field left empty says nothing worth a line ("notes null").
    fields = tuple(
        (name, _field_text(value))
        for name, value in record.record.items()
        if value is not None and value != "" and value != []
    )
    return ShownRecord(kind=record.kind, id=record.id, gen=record.gen, fields=fields)


def open_records(
    app: App, kind: str | None = None, cursor: str | None = None, limit: int = PAGE_SIZE
) -> list[KindRecords]:
    """Open records, a page per kind (every kind, or only `kind` from `cursor` on).

    An unknown kind raises `NotFound`; a bad cursor the store's `InvalidCursorError`."""
    store = app.store
    kinds = store.kinds()
    if kind is not None and kind not in kinds:
        raise NotFound(f"No record kind {kind!r} (kinds: {', '.join(kinds) or 'none'}).")
    out: list[KindRecords] = []
    for name, declared in kinds.items():
        if kind is not None and name != kind:
            continue
        page = store.query(name, limit=limit, cursor=cursor if kind is not None else None)
        out.append(
            KindRecords(
                kind=name,
                description=declared.description,
                records=tuple(shown_record(r) for r in page.records),
                next_cursor=page.next_cursor,
                damaged=page.damaged,
            )
        )
    return out


def open_record(app: App, kind: str, record_id: int) -> ShownRecord:
    """One open record; `NotFound` for an unknown kind or id, or a closed record. A damaged
    open record (its body cannot be read) comes with no fields and the store's `problem`, so
    it can still be closed."""
    try:
        record = app.store.get(kind, record_id)
    except (UnknownKindError, UnknownRecordError):
        raise NotFound(f"No {kind} record with id {record_id}.") from None
    except StoreCorruptError as exc:
        if exc.data.get("closed"):
            raise NotFound(f"{kind} record {record_id} is already closed.") from None
        return ShownRecord(kind=kind, id=record_id, gen=0, fields=(), problem=exc.message)
    if record.closed:
        raise NotFound(f"{kind} record {record_id} is already closed.")
    return shown_record(record)


def generation(app: App) -> int:
    return app.store.generation()


# -- what the server is made of ---------------------------------------------------------------


def capabilities(app: App) -> dict[str, Any]:
    """The capability index's `full` variant (what its resource carries), plus the resources
    (the index has templates but not plain resources)."""
    index: dict[str, Any] = json.loads(app.capability_index.text("full"))
    listed = set(app.resources.listed_uris())
    index["resources"] = [
        {
            "uri": r.uri,
            "name": r.name,
            "title": r.title or "",
            "description": r.description or "",
            "mime_type": r.mime_type or "",
            "listed": r.uri in listed,
        }
        for r in app.registry.resources.values()
    ]
    return index


def _entry_name(entry: object) -> str:
    for attribute in ("name", "uri", "uri_template"):
        value = getattr(entry, attribute, None)
        if isinstance(value, str):
            return value
    return type(entry).__name__


def plugins(app: App) -> list[dict[str, Any]]:
    """The doctor's plugin data (status, authority, token cost) and what each registered."""
    from prixfixe.system.doctor import plugins_section

    registered: dict[str, dict[str, list[str]]] = {}
    for decl_type in app.registry.declaration_types:
        for owner, entries in app.registry.by_owner(decl_type).items():
            names = [_entry_name(e) for e in entries]
            registered.setdefault(owner, {})[decl_type.what] = names
    rows = plugins_section(app, costs=True)
    for row in rows:
        row["registered"] = registered.get(row["name"], {})
    return rows


def servers(app: App) -> dict[str, Any]:
    """The doctor's mounted-server data: state, tools, what listing them directly costs."""
    from prixfixe.system.doctor import servers_section
    from prixfixe.tokens import count_tokens

    return servers_section(app, count_tokens(app.list_tools_json()))


def routines(app: App) -> list[dict[str, Any]]:
    return [
        {
            "name": r.name,
            "description": r.description,
            "source": r.source,
            "steps": [f"{s.name} ({s.type.name})" for s in r.steps],
        }
        for r in app.routines.routines.values()
    ]
