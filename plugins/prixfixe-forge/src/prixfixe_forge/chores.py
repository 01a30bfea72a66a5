"""`chores-check`: recurring chores kept in the board folder, and which are due today.

The board is the folder `board-scan` reads (lane folders of markdown tasks); the chores live
beside the lanes in one TOML file, `chores.toml` by default, one `[[chore]]` table each:

```toml
[[chore]]
name = "Water the plants"
every = "3d"             # Nd, Nw or Nm (days, weeks, months), or daily, weekly, monthly, yearly
last_done = 2026-03-08   # optional; a chore never done is due today

[[chore]]
name = "Pay the rent"
every = "monthly"
last_done = 2026-02-28
```

A chore is due `every` after `last_done` (months keep the day of the month, or the month's last
day); it is `overdue` past that day, `due` on it, `soon` within `soon_days`, else `later`.
The file is read through the file gate, like every file a step opens; the step never writes
it (mark a chore done by editing `last_done`).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from prixfixe import StepContext, StepFailure, StepOutput, StepType
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from prixfixe_forge.text import one_line, plural

#: The most bytes of a chores file read: a list of chores, not a data file.
MAX_BYTES = 256 * 1024
_EVERY = re.compile(r"^(?:([1-9][0-9]{0,2})\s*([dwm])|(daily|weekly|monthly|yearly))$")
_NAMED = {"daily": (1, "d"), "weekly": (1, "w"), "monthly": (1, "m"), "yearly": (12, "m")}

Status = Literal["overdue", "due", "soon", "later"]


class ChoresParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The board folder (the one board-scan reads).")
    file: str = Field(
        default="chores.toml",
        pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$",
        description="The chores file's name in the board folder.",
    )
    soon_days: int = Field(default=2, ge=0, le=60, description="Also flag what is due this soon.")
    show: int = Field(default=20, ge=0, le=500, description="Chores listed in markdown.")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    every: str
    last_done: dt.date | None = None

    @field_validator("every")
    @classmethod
    def _interval(cls, value: str) -> str:
        if not _EVERY.match(value.strip().lower()):
            raise ValueError(
                "write Nd, Nw or Nm (days, weeks, months; N from 1 to 999), or daily, weekly, "
                "monthly or yearly"
            )
        return value.strip().lower()


class Chore(BaseModel):
    name: str
    every: str = Field(description="As the file writes it, lower-cased (3d, 2w, monthly).")
    last_done: dt.date | None
    due: dt.date = Field(description="The day it is next due (today when never done).")
    days: int = Field(description="Days from today to due; negative when overdue.")
    status: Status


class ChoresData(BaseModel):
    file: str = Field(description="The chores file read.")
    today: dt.date
    chores: list[Chore] = Field(description="Every chore, soonest due first.")
    overdue: int
    due: int = Field(description="Due today (including chores never done).")
    soon: int = Field(description="Due within soon_days.")


def _add_months(day: dt.date, months: int) -> dt.date:
    month = day.month - 1 + months
    year, month = day.year + month // 12, month % 12 + 1
    return day.replace(
        year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1])
    )


def next_due(every: str, last_done: dt.date | None, today: dt.date) -> dt.date:
    """The day a chore done on `last_done` is next due (today when never done)."""
    if last_done is None:
        return today
    match = _EVERY.match(every)
    assert match is not None  # checked when the entry was read
    count, unit = (int(match[1]), match[2]) if match[1] else _NAMED[match[3]]
    if unit == "m":
        return _add_months(last_done, count)
    return last_done + dt.timedelta(days=count * (7 if unit == "w" else 1))


def _status(days: int, soon_days: int) -> Status:
    if days < 0:
        return "overdue"
    if days == 0:
        return "due"
    return "soon" if days <= soon_days else "later"


def parse(text: str, file: Path, step: str) -> list[_Entry]:
    """The `[[chore]]` entries of a chores file; a problem fails the step (`invalid-input`)
    naming the file and the entry."""

    def bad(problem: str) -> StepFailure:
        return StepFailure(
            f"step {step!r}: chores file {str(file)!r}: {problem}", kind="invalid-input"
        )

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise bad(f"not valid TOML ({exc})") from None
    unknown = sorted(set(document) - {"chore"})
    if unknown:
        raise bad(f"unknown key {unknown[0]!r}; each chore is a [[chore]] table")
    raw: Any = document.get("chore", [])
    if not isinstance(raw, list):
        raise bad("'chore' must be [[chore]] tables")
    entries = []
    for n, item in enumerate(raw, 1):
        try:
            entries.append(_Entry.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(str(p) for p in first["loc"]) or "(table)"
            raise bad(f"chore {n}, key {key!r}: {first['msg']}") from None
    return entries


def check(entries: list[_Entry], today: dt.date, soon_days: int, file: Path) -> ChoresData:
    chores = []
    for entry in entries:
        due = next_due(entry.every, entry.last_done, today)
        days = (due - today).days
        chores.append(
            Chore(
                name=entry.name,
                every=entry.every,
                last_done=entry.last_done,
                due=due,
                days=days,
                status=_status(days, soon_days),
            )
        )
    chores.sort(key=lambda c: (c.due, c.name.casefold()))
    return ChoresData(
        file=str(file),
        today=today,
        chores=chores,
        overdue=sum(c.status == "overdue" for c in chores),
        due=sum(c.status == "due" for c in chores),
        soon=sum(c.status == "soon" for c in chores),
    )


def _line(chore: Chore) -> str:
    done = f"last done {chore.last_done}" if chore.last_done else "never done"
    if chore.status == "overdue":
        when = f"**overdue {plural(-chore.days, 'day')}**"
    elif chore.status == "due":
        when = "due today"
    else:
        when = f"due {chore.due} (in {plural(chore.days, 'day')})"
    return f"- {one_line(chore.name)} — {when} (every {chore.every}, {done})"


def markdown(data: ChoresData, show: int) -> str:
    pressing = [c for c in data.chores if c.status != "later"]
    if not pressing:
        head = f"Nothing due among {plural(len(data.chores), 'chore')}."
        if data.chores:
            first = data.chores[0]
            head += f" Next: {one_line(first.name)} on {first.due}."
        return head
    parts = []
    if data.overdue:
        parts.append(f"**{data.overdue} overdue**")
    if data.due:
        parts.append(f"{data.due} due today")
    if data.soon:
        parts.append(f"{data.soon} due soon")
    lines = [f"Chores: {', '.join(parts)} (of {len(data.chores)}).", ""]
    lines += [_line(c) for c in pressing[:show]]
    if len(pressing) > show:
        lines.append(f"- ... and {len(pressing) - show} more")
    return "\n".join(lines)


def chores_check(ctx: StepContext, params: ChoresParams) -> StepOutput:
    board = ctx.path(params.path)
    if not ctx.fs.check(board, step=ctx.step).is_dir():
        raise StepFailure(f"board folder {str(board)!r} does not exist", kind="not-found")
    file = board / params.file
    raw = ctx.fs.read_bytes(file, MAX_BYTES + 1, step=ctx.step)
    if len(raw) > MAX_BYTES:
        raise StepFailure(
            f"step {ctx.step!r}: chores file {str(file)!r} is over {MAX_BYTES // 1024} KiB",
            kind="invalid-input",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise StepFailure(
            f"step {ctx.step!r}: chores file {str(file)!r} is not UTF-8 text", kind="invalid-input"
        ) from None
    data = check(parse(text, file, ctx.step), ctx.today, params.soon_days, file)
    return StepOutput(markdown=markdown(data, params.show), data=data)


STEP_TYPE = StepType(
    name="chores-check",
    description="Recurring chores from the board folder's chores.toml: which are overdue, due "
    "today or due soon.",
    params_model=ChoresParams,
    data_model=ChoresData,
    version="1.0",
    handler=chores_check,
    paths_from_params=lambda p: ([p.path], []),
)
