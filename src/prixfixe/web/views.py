"""What the pages show, gathered from the app: the same services the tools and the CLI read
(the report archive, the store, the capability index, the doctor's plugin and server data),
nothing recomputed here; "Needs attention today" (`attention`) reads the store's dated records
by the routines' clock and the latest report's typed step data (never its text). Every
function blocks (the store is file or network I/O): the page
layer calls them in a worker thread."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from prixfixe.errors import (
    RoutineError,
    StoreCorruptError,
    UnknownKindError,
    UnknownRecordError,
)
from prixfixe.routines import REPORTS_OWNER, archive
from prixfixe.routines.archive import StoredReport
from prixfixe.routines.builtin.calendar import next_occurrence
from prixfixe.routines.builtin.git import StatusData
from prixfixe.routines.report import Report, title
from prixfixe.store.api import MAX_LIMIT, DamagedRecord, StoredRecord
from prixfixe.system.activity import Summary
from prixfixe.web.render import markdown_html
from prixfixe.words import plural

if TYPE_CHECKING:
    from prixfixe.app import App

#: Records of one kind shown at once (a "More" link pages on).
PAGE_SIZE = 50
#: Kept reports listed on /reports.
REPORTS_LISTED = 200
#: "Due soon": due within this many days (what the morning routine's `reminders` step lists).
DUE_SOON_DAYS = 3
#: The store's dated kinds the attention block reads, and the field that says when each is due.
DUE_FIELDS = {"reminder": "due", "deadline": "date"}
#: Most records of a kind a text filter looks through (its matches are shown a page at once).
FILTER_SCAN = 5000
#: Repository states that need a look (a clean, or only ahead, repository does not).
REPO_TROUBLE = ("dirty", "behind", "diverged")


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
    #: The kind's fields, in declaration order: the columns of its table.
    columns: tuple[str, ...] = ()
    #: What the page was sorted by (`field` or `-field`, None: by id) and filtered with.
    sort: str | None = None
    query: str = ""
    #: A filter with matches it does not show: more than a page, or past `FILTER_SCAN`.
    more_matches: bool = False

    def cell(self, record: ShownRecord, column: str) -> str:
        return dict(record.fields).get(column, "")


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
    app: App,
    kind: str | None = None,
    cursor: str | None = None,
    limit: int = PAGE_SIZE,
    sort: str | None = None,
    query: str = "",
) -> list[KindRecords]:
    """Open records, a page per kind (every kind, or only `kind` from `cursor` on), sorted by
    `sort` (a field, `-field` for descending; the store sorts and pages) and kept to those
    whose text holds `query` (any field, case ignored).

    An unknown kind raises `NotFound`; a bad cursor, or a sort field a kind does not have, the
    store's `QueryError`."""
    store = app.store
    kinds = store.kinds()
    if kind is not None and kind not in kinds:
        raise NotFound(f"No record kind {kind!r} (kinds: {', '.join(kinds) or 'none'}).")
    needle = query.strip().casefold()
    out: list[KindRecords] = []
    for name, declared in kinds.items():
        if kind is not None and name != kind:
            continue
        order = sort if sort and sort.removeprefix("-") in declared.fields else None
        if kind is not None:
            order = sort  # one kind named: a field it lacks is an error, not ignored
        records, next_cursor, more, damaged = _read_page(
            app, name, limit, cursor if kind is not None else None, order, needle
        )
        out.append(
            KindRecords(
                kind=name,
                description=declared.description,
                records=records,
                next_cursor=next_cursor,
                columns=declared.fields,
                sort=order,
                query=query.strip(),
                more_matches=more,
                damaged=damaged,
            )
        )
    return out


def _read_page(
    app: App, kind: str, limit: int, cursor: str | None, order: str | None, needle: str
) -> tuple[tuple[ShownRecord, ...], str | None, bool, tuple[DamagedRecord, ...]]:
    """One page of `kind`'s open records; with `needle`, the first `limit` that hold it (no
    cursor: a filter shows its first matches), looking at no more than `FILTER_SCAN`. Last,
    the records in the range read that the store could not decode (named, never dropped
    silently)."""
    store = app.store
    if not needle:
        page = store.query(kind, order_by=order, limit=limit, cursor=cursor)
        first = tuple(shown_record(r) for r in page.records)
        return first, page.next_cursor, False, page.damaged
    found: list[ShownRecord] = []
    damaged: list[DamagedRecord] = []
    seen = 0
    while True:
        page = store.query(kind, order_by=order, limit=MAX_LIMIT, cursor=cursor)
        damaged.extend(page.damaged)
        for stored in page.records:
            shown = shown_record(stored)
            if any(needle in value.casefold() for _, value in shown.fields):
                found.append(shown)
        seen += len(page.records)
        cursor = page.next_cursor
        if cursor is None or len(found) >= limit or seen >= FILTER_SCAN:
            break
    more = len(found) > limit or cursor is not None
    return tuple(found[:limit]), None, more, tuple(damaged)


# -- what needs attention today ----------------------------------------------------------------


@dataclass(frozen=True)
class DueItem:
    kind: str
    id: int
    text: str
    due: dt.date
    days: int  # from today; negative when overdue

    @property
    def when(self) -> str:
        if self.days < 0:
            return f"overdue by {plural(-self.days, 'day')}"
        if self.days == 0:
            return "due today"
        return "due tomorrow" if self.days == 1 else f"due in {plural(self.days, 'day')}"


@dataclass(frozen=True)
class RepoItem:
    step: str
    name: str
    path: str
    status: str
    detail: str


@dataclass(frozen=True)
class FailedStep:
    name: str
    type: str
    kind: str
    message: str


@dataclass(frozen=True)
class Attention:
    today: dt.date
    horizon_days: int
    overdue: tuple[DueItem, ...]
    due_soon: tuple[DueItem, ...]
    #: The report the repositories and failed steps come from (None: no report kept yet).
    generation: int | None
    routine: str
    repos: tuple[RepoItem, ...]
    failed: tuple[FailedStep, ...]

    @property
    def empty(self) -> bool:
        return not (self.overdue or self.due_soon or self.repos or self.failed)


def attention(app: App) -> Attention:
    """What needs a look today: the store's overdue and due-soon reminders and deadlines, and
    from the latest kept report's step data, the repositories that are dirty, behind or
    diverged and the steps that failed."""
    today = app.routines.clock.today()
    due = sorted(_due_items(app, today), key=lambda i: (i.due, i.kind, i.id))
    try:
        latest: Report | None = archive.load(app.store.slice(REPORTS_OWNER), None).report
    except RoutineError:
        latest = None
    return Attention(
        today=today,
        horizon_days=DUE_SOON_DAYS,
        overdue=tuple(i for i in due if i.days < 0),
        due_soon=tuple(i for i in due if i.days >= 0),
        generation=latest.generation if latest else None,
        routine=latest.routine if latest else "",
        repos=tuple(_troubled_repos(latest)) if latest else (),
        failed=tuple(_failed_steps(latest)) if latest else (),
    )


def _due_items(app: App, today: dt.date) -> list[DueItem]:
    horizon = today + dt.timedelta(days=DUE_SOON_DAYS)
    kinds = app.store.kinds()
    items: list[DueItem] = []
    for kind, field in DUE_FIELDS.items():
        if kind not in kinds or field not in kinds[kind].fields:
            continue
        cursor: str | None = None
        while True:
            page = app.store.query(
                kind, {field: {"<=": horizon.isoformat()}}, limit=MAX_LIMIT, cursor=cursor
            )
            for stored in page.records:
                item = _due_item(stored, field, today, horizon)
                if item is not None:
                    items.append(item)
            cursor = page.next_cursor
            if cursor is None:
                break
    return items


def _due_item(stored: StoredRecord, field: str, today: dt.date, horizon: dt.date) -> DueItem | None:
    record = stored.record
    try:
        day = dt.date.fromisoformat(str(record[field]))
    except (KeyError, ValueError):
        return None
    # A recurring reminder is due on its next occurrence, as the `reminders` step counts it.
    recurrence = record.get("recurrence")
    if stored.kind == "reminder" and recurrence:
        day = next_occurrence(day, recurrence, today)
    if day > horizon:
        return None
    text = record.get("text") or record.get("label") or f"{stored.kind} {stored.id}"
    return DueItem(stored.kind, stored.id, str(text), day, (day - today).days)


def _troubled_repos(report: Report) -> list[RepoItem]:
    out: list[RepoItem] = []
    for step in report.steps:
        if step.type != "git-status" or step.status != "ok" or step.data is None:
            continue
        try:
            data = StatusData.model_validate(step.data)
        except ValidationError:  # another major version of the step's data: not guessed at
            continue
        for repo in data.repos:
            if repo.status not in REPO_TROUBLE:
                continue
            parts = []
            changes = repo.staged + repo.unstaged + repo.untracked + repo.conflicts
            if changes:
                parts.append(plural(changes, "change"))
            if repo.conflicts:
                parts.append(plural(repo.conflicts, "conflict"))
            if repo.ahead:
                parts.append(f"{repo.ahead:,} ahead")
            if repo.behind:
                parts.append(f"{repo.behind:,} behind")
            if repo.branch:
                parts.append(f"on {repo.branch}")
            out.append(RepoItem(step.name, repo.name, repo.path, repo.status, ", ".join(parts)))
    return out


def _failed_steps(report: Report) -> list[FailedStep]:
    return [
        FailedStep(
            name=step.name,
            type=step.type,
            kind=step.error.kind if step.error else "error",
            message=step.error.message if step.error else "",
        )
        for step in report.steps
        if step.status == "failed"
    ]


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


@dataclass(frozen=True)
class Entry:
    """One thing a plugin registered, as a person reads it: its name and what it is for."""

    name: str
    about: str


@dataclass(frozen=True)
class Registered:
    """A plugin's declarations of one type (`what` names one: "property entry")."""

    what: str
    entries: tuple[Entry, ...]

    @property
    def heading(self) -> str:
        return plural_noun(self.what).capitalize()

    @property
    def counted(self) -> str:
        return plural(len(self.entries), self.what, plural_noun(self.what))


def plural_noun(word: str) -> str:
    """`word`'s plural: "tool" → "tools", "property entry" → "property entries"."""
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u"):
        return word[:-1] + "ies"
    return word if word.endswith("s") else word + "s"


def _entry(entry: object, what: str, index: int) -> Entry:
    """An entry's name and description, read from what the registry keeps (a wrapper such as
    a registered tool or template holds the declaration as `tool` or `template`); never its
    Python class."""
    declared = getattr(entry, "tool", None) or getattr(entry, "template", None) or entry
    name = ""
    for attribute in ("uri", "uri_template", "name", "path"):
        value = getattr(declared, attribute, None)
        if isinstance(value, str) and value:
            name = value
            break
    scope = getattr(declared, "scope", None)
    if isinstance(scope, str) and scope not in ("", "*") and name:
        name = f"{name} (in {scope})"
    about = ""
    for attribute in ("title", "description"):
        value = getattr(declared, attribute, None)
        if isinstance(value, str) and value.strip():
            about = value.strip().splitlines()[0]
            break
    return Entry(name or f"{what} {index}", about)


def plugins(app: App) -> list[dict[str, Any]]:
    """The doctor's plugin data (status, authority, token cost) and what each registered."""
    from prixfixe.system.doctor import plugins_section

    registered: dict[str, list[Registered]] = {}
    for decl_type in app.registry.declaration_types:
        for owner, entries in app.registry.by_owner(decl_type).items():
            shown = tuple(_entry(e, decl_type.what, i) for i, e in enumerate(entries, 1))
            registered.setdefault(owner, []).append(Registered(decl_type.what, shown))
    rows = plugins_section(app, costs=True)
    for row in rows:
        row["registered"] = registered.get(row["name"], [])
        row["summary"] = ", ".join(r.counted for r in row["registered"])
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


# -- what agents did ------------------------------------------------------------------------

#: Calls listed on /activity (its summary counts every call in the span).
ACTIVITY_LISTED = 100
#: What /activity lists: every call, the failed ones, or the searches.
ACTIVITY_FILTERS = ("all", "failed", "searches")


@dataclass(frozen=True)
class CallRow:
    at: str
    tool: str
    via: str
    where: str
    outcome: str
    ms: str
    tokens: int | None
    client: str
    query: str | None
    good_match: bool | None


@dataclass(frozen=True)
class Activity:
    enabled: bool
    span: str
    only: str
    summary: Summary
    calls: list[CallRow]
    total: int


def activity(app: App, span: str, only: str) -> Activity:
    """The activity log over `span` (`1d`, ...): its summary and its latest calls, all, failed
    or searches (`only`)."""
    import time

    from prixfixe.system.activity import ACTIVITY_OWNER, parse_since, read_calls, summarize

    since = time.time() - parse_since(span)
    every = read_calls(app.store.slice(ACTIVITY_OWNER), since=since)
    shown = [
        c
        for c in every
        if only == "all" or (only == "failed" and c.failed) or (only == "searches" and c.query)
    ]
    rows = [
        CallRow(
            at=_when(c.at),
            tool=c.tool,
            via=c.via or "",
            where=c.server or c.facet or "",
            outcome=c.outcome,
            ms=f"{c.duration_ms:,.1f}",
            tokens=c.tokens,
            client=c.client or "",
            query=c.query,
            good_match=c.good_match,
        )
        for c in shown[:ACTIVITY_LISTED]
    ]
    return Activity(
        enabled=app.config.model.activity.enabled,
        span=span,
        only=only,
        summary=summarize(every),
        calls=rows,
        total=len(shown),
    )
