"""Step types over dates: `reminders` (due and overdue, from the store), `deadline-calc` (days
left, overdue flagged) and `countdown-calc` (work day n of total). None runs a program."""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Callable, Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.steps import StepContext, StepOutput, StepType
from prixfixe.words import plural

Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
Recurrence = Literal["daily", "weekdays", "weekly", "monthly", "yearly"]


# -- reminders ------------------------------------------------------------------------------


class RemindersParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    days: int = Field(
        default=7, ge=0, le=366, description="Also list what is due this many days ahead."
    )
    limit: int = Field(default=50, ge=1, le=500, description="Most reminders to list.")


class ReminderItem(BaseModel):
    id: int
    text: str
    due: dt.date = Field(description="The occurrence due: a recurring one's next, from today.")
    days: int = Field(description="Days from today to due; negative when overdue.")
    overdue: bool
    recurrence: Recurrence | None


class RemindersData(BaseModel):
    today: dt.date
    horizon: dt.date = Field(description="The last day looked at.")
    overdue: list[ReminderItem]
    due: list[ReminderItem] = Field(description="Due from today to the horizon.")


def _add_months(day: dt.date, months: int) -> dt.date:
    month = day.month - 1 + months
    year, month = day.year + month // 12, month % 12 + 1
    return day.replace(
        year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1])
    )


def next_occurrence(due: dt.date, recurrence: Recurrence | None, today: dt.date) -> dt.date:
    """A recurring reminder's first occurrence on or after today (a one-off keeps its day)."""
    if recurrence is None or due >= today:
        return due
    if recurrence == "daily":
        return today
    if recurrence == "weekdays":
        day = today
        while day.weekday() >= 5:
            day += dt.timedelta(days=1)
        return day
    if recurrence == "weekly":
        weeks = -(-(today - due).days // 7)
        return due + dt.timedelta(weeks=weeks)
    step = 1 if recurrence == "monthly" else 12
    n = 0
    day = due
    while day < today:
        n += step
        day = _add_months(due, n)
    return day


async def reminders(ctx: StepContext, params: RemindersParams) -> StepOutput:
    today = ctx.today
    horizon = today + dt.timedelta(days=params.days)
    records = await ctx.records("reminder", {"due": {"<=": horizon.isoformat()}})
    items: list[ReminderItem] = []
    for r in records:
        recurrence = r.record.get("recurrence")
        due = next_occurrence(dt.date.fromisoformat(r.record["due"]), recurrence, today)
        if due > horizon:
            continue
        days = (due - today).days
        items.append(
            ReminderItem(
                id=r.id,
                text=r.record["text"],
                due=due,
                days=days,
                overdue=days < 0,
                recurrence=recurrence,
            )
        )
    items.sort(key=lambda i: (i.due, i.id))
    items = items[: params.limit]
    data = RemindersData(
        today=today,
        horizon=horizon,
        overdue=[i for i in items if i.overdue],
        due=[i for i in items if not i.overdue],
    )
    lines: list[str] = []
    for item in data.overdue:
        lines.append(
            f"- **overdue {plural(-item.days, 'day')}**: {item.text} (due {item.due}, #{item.id})"
        )
    for item in data.due:
        when = "today" if item.days == 0 else f"in {plural(item.days, 'day')}, {item.due}"
        again = f", {item.recurrence}" if item.recurrence else ""
        lines.append(f"- {item.text} ({when}{again}, #{item.id})")
    if not lines:
        lines.append(
            f"Nothing due in the next {plural(params.days, 'day')}. Add a reminder: "
            "`prixfixe store put reminder --field text=... --field due=YYYY-MM-DD`."
        )
    return StepOutput(markdown="\n".join(lines), data=data)


# -- deadlines ------------------------------------------------------------------------------


class InlineDeadline(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1)
    date: dt.date


class DeadlineParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    deadlines: list[InlineDeadline] = Field(
        default_factory=list, description="Deadlines given here, beside the store's."
    )
    store: bool = Field(default=True, description="Include the store's deadline records.")
    within: int | None = Field(
        default=None, ge=0, description="Only deadlines this many days ahead (overdue always)."
    )


class DeadlineItem(BaseModel):
    label: str
    date: dt.date
    days_left: int = Field(description="Negative when overdue.")
    overdue: bool
    id: int | None = Field(description="The store record's id; null for one given in params.")
    notes: str | None


class DeadlineData(BaseModel):
    today: dt.date
    deadlines: list[DeadlineItem]
    overdue: int


async def deadline_calc(ctx: StepContext, params: DeadlineParams) -> StepOutput:
    today = ctx.today
    raw: list[tuple[str, dt.date, int | None, str | None]] = [
        (d.label, d.date, None, None) for d in params.deadlines
    ]
    if params.store:
        for r in await ctx.records("deadline"):
            raw.append(
                (
                    r.record["label"],
                    dt.date.fromisoformat(r.record["date"]),
                    r.id,
                    r.record.get("notes"),
                )
            )
    items = []
    for label, date, rid, notes in raw:
        left = (date - today).days
        if params.within is not None and left > params.within:
            continue
        items.append(
            DeadlineItem(
                label=label, date=date, days_left=left, overdue=left < 0, id=rid, notes=notes
            )
        )
    items.sort(key=lambda i: (i.date, i.label))
    data = DeadlineData(today=today, deadlines=items, overdue=sum(i.overdue for i in items))
    lines = []
    for i in items:
        if i.overdue:
            lines.append(f"- **{i.label}: overdue by {plural(-i.days_left, 'day')}** ({i.date})")
        elif i.days_left == 0:
            lines.append(f"- **{i.label}: due today** ({i.date})")
        else:
            lines.append(f"- {i.label}: {plural(i.days_left, 'day')} left ({i.date})")
    if not lines:
        lines.append(
            "No deadlines. Add one: "
            "`prixfixe store put deadline --field label=... --field date=YYYY-MM-DD`."
        )
    return StepOutput(markdown="\n".join(lines), data=data)


# -- countdowns -----------------------------------------------------------------------------


class InlineCountdown(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1)
    start: dt.date
    end: dt.date
    work_days: list[Weekday] = Field(default_factory=lambda: list(WEEKDAYS[:5]), min_length=1)

    @model_validator(mode="after")
    def _ordered(self) -> InlineCountdown:
        if self.end < self.start:
            raise ValueError(f"end {self.end} is before start {self.start}")
        return self


class CountdownParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    countdowns: list[InlineCountdown] = Field(
        default_factory=list, description="Countdowns given here, beside the store's."
    )
    store: bool = Field(default=True, description="Include the store's countdown records.")
    holidays: list[dt.date] = Field(
        default_factory=list, description="Days that are not work days."
    )
    include_ended: bool = Field(default=False, description="Also list countdowns that ended.")


class CountdownItem(BaseModel):
    label: str
    start: dt.date
    end: dt.date
    status: Literal["not-started", "running", "ended"]
    id: int | None
    days_left: int = Field(description="Calendar days from today to end.")
    work_day: int = Field(description="Work days from start to today, inclusive.")
    work_days_total: int
    work_days_left: int = Field(description="Work days after today, to end inclusive.")


class CountdownData(BaseModel):
    today: dt.date
    countdowns: list[CountdownItem]


def count_work_days(
    first: dt.date, last: dt.date, work_days: Iterable[str], holidays: set[dt.date]
) -> int:
    """Work days in [first, last]."""
    if last < first:
        return 0
    wanted = {WEEKDAYS.index(d) for d in work_days}
    total = (last - first).days + 1
    weeks, rest = divmod(total, 7)
    count = weeks * len(wanted)
    for i in range(rest):
        if (first + dt.timedelta(days=weeks * 7 + i)).weekday() in wanted:
            count += 1
    count -= sum(1 for h in holidays if first <= h <= last and h.weekday() in wanted)
    return count


async def countdown_calc(ctx: StepContext, params: CountdownParams) -> StepOutput:
    today = ctx.today
    holidays = set(params.holidays)
    raw: list[tuple[InlineCountdown, int | None]] = [(c, None) for c in params.countdowns]
    if params.store:
        for r in await ctx.records("countdown"):
            raw.append((InlineCountdown.model_validate(r.record), r.id))
    items = []
    for c, rid in raw:
        status: Literal["not-started", "running", "ended"] = (
            "not-started" if today < c.start else ("ended" if today > c.end else "running")
        )
        if status == "ended" and not params.include_ended:
            continue
        total = count_work_days(c.start, c.end, c.work_days, holidays)
        done = count_work_days(c.start, min(today, c.end), c.work_days, holidays)
        items.append(
            CountdownItem(
                label=c.label,
                start=c.start,
                end=c.end,
                status=status,
                id=rid,
                days_left=(c.end - today).days,
                work_day=done,
                work_days_total=total,
                work_days_left=total - done,
            )
        )
    items.sort(key=lambda i: (i.end, i.label))
    lines = []
    for i in items:
        if i.status == "not-started":
            lines.append(
                f"- {i.label}: starts {i.start} ({plural((i.start - today).days, 'day')}), "
                f"{plural(i.work_days_total, 'work day')}"
            )
        elif i.status == "ended":
            lines.append(f"- {i.label}: ended {i.end}")
        else:
            lines.append(
                f"- **{i.label}: work day {i.work_day} of {i.work_days_total}** "
                f"({i.work_days_left} left; ends {i.end}, in {plural(i.days_left, 'day')})"
            )
    if not lines:
        lines.append(
            "No countdowns. Add one: `prixfixe store put countdown --field label=... "
            "--field start=YYYY-MM-DD --field end=YYYY-MM-DD`."
        )
    return StepOutput(markdown="\n".join(lines), data=CountdownData(today=today, countdowns=items))


@hookimpl
def register_step_types(register: Callable[[StepType], None]) -> None:
    register(
        StepType(
            name="reminders",
            title="Reminders",
            description="Reminders due and overdue, from the store (recurring ones on their "
            "next occurrence).",
            params_model=RemindersParams,
            data_model=RemindersData,
            version="1.0",
            handler=reminders,
        )
    )
    register(
        StepType(
            name="deadline-calc",
            title="Deadlines",
            description="Days left to each deadline (the store's and any given), overdue flagged.",
            params_model=DeadlineParams,
            data_model=DeadlineData,
            version="1.0",
            handler=deadline_calc,
        )
    )
    register(
        StepType(
            name="countdown-calc",
            title="Countdowns",
            description="Where each countdown stands: work day n of total, work days and days "
            "left.",
            params_model=CountdownParams,
            data_model=CountdownData,
            version="1.0",
            handler=countdown_calc,
        )
    )
