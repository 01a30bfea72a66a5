"""`board-scan`: a task board kept as a folder of markdown files, one file per task and one
sub-folder per lane (`board/todo/fix-login.md`, `board/doing/...`, `board/done/...`).

A task's title is its first `# heading` (else the file name); a `due: YYYY-MM-DD` line in its
front matter (between `---` lines at the top) gives it a due date. Files directly in the board
folder are in the lane their front matter's `lane:` names, else in `inbox`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.steps import StepContext, StepOutput, StepType
from prixfixe.errors import StepFailure
from prixfixe.leash.fs import FsGate

#: The most bytes read from one task file: titles and front matter are at the top.
HEAD_BYTES = 8192
INBOX = "inbox"


class BoardParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The board folder; one sub-folder per lane.")
    lanes: list[str] | None = Field(
        default=None, description="Lanes to show, in this order (default: all, by name)."
    )
    done: list[str] = Field(
        default_factory=lambda: ["done"], description="Lanes that count as finished."
    )
    show: int = Field(default=10, ge=0, le=500, description="Tasks listed per lane in markdown.")


class Task(BaseModel):
    title: str
    file: str = Field(description="Path relative to the board folder.")
    due: dt.date | None
    overdue: bool


class Lane(BaseModel):
    name: str
    done: bool
    count: int
    tasks: list[Task]


class BoardData(BaseModel):
    path: str
    lanes: list[Lane]
    open: int = Field(description="Tasks in lanes that are not done.")
    overdue: int


def read_task(path: Path, head: bytes, board: Path, today: dt.date) -> tuple[Task, str | None]:
    """The task in `path` (whose first bytes are `head`), and the lane its front matter names
    (if any)."""
    lines = head.decode("utf-8", errors="replace").splitlines()
    meta: dict[str, str] = {}
    body = lines
    if lines and lines[0].strip() == "---":
        for i, line in enumerate(lines[1:], 1):
            if line.strip() == "---":
                body = lines[i + 1 :]
                break
            key, sep, value = line.partition(":")
            if sep:
                meta[key.strip().lower()] = value.strip().strip("'\"")
    title = next((ln[2:].strip() for ln in body if ln.startswith("# ")), "") or path.stem
    due: dt.date | None = None
    try:
        due = dt.date.fromisoformat(meta["due"]) if "due" in meta else None
    except ValueError:
        due = None
    task = Task(
        title=title,
        file=str(path.relative_to(board)),
        due=due,
        overdue=due is not None and due < today,
    )
    return task, meta.get("lane") or meta.get("status")


def scan(board: Path, params: BoardParams, today: dt.date, fs: FsGate, step: str) -> BoardData:
    """The board at `board`; every folder and file is listed and read through the file gate,
    so a board path or a symlink on the board cannot reach past the grant."""
    if not fs.check(board, step=step).is_dir():
        raise StepFailure(f"board folder {str(board)!r} does not exist", kind="not-found")

    def task(file: Path) -> tuple[Task, str | None]:
        return read_task(file, fs.read_bytes(file, HEAD_BYTES, step=step), board, today)

    lanes: dict[str, list[Task]] = {}
    for entry in fs.list_dir(board, step=step):
        if entry.name.startswith("."):
            continue
        if entry.is_dir:
            tasks = lanes.setdefault(entry.name, [])
            for file in fs.walk(entry.path, "*.md", step=step):
                tasks.append(task(file)[0])
        elif entry.path.suffix == ".md":
            found, lane = task(entry.path)
            lanes.setdefault(lane or INBOX, []).append(found)
    names = params.lanes if params.lanes is not None else sorted(lanes)
    out = []
    for name in names:
        tasks = sorted(
            lanes.get(name, []), key=lambda t: (t.due or dt.date.max, t.title.casefold())
        )
        out.append(Lane(name=name, done=name in params.done, count=len(tasks), tasks=tasks))
    return BoardData(
        path=str(board),
        lanes=out,
        open=sum(lane.count for lane in out if not lane.done),
        overdue=sum(t.overdue for lane in out if not lane.done for t in lane.tasks),
    )


def board_scan(ctx: StepContext, params: BoardParams) -> StepOutput:
    data = scan(ctx.path(params.path), params, ctx.today, ctx.fs, ctx.step)
    lines = [
        f"{data.open} open tasks" + (f", **{data.overdue} overdue**" if data.overdue else "") + "."
    ]
    for lane in data.lanes:
        lines += ["", f"**{lane.name}** ({lane.count})"]
        if lane.done:
            continue
        for task in lane.tasks[: params.show]:
            due = ""
            if task.due is not None:
                due = f" — **overdue, {task.due}**" if task.overdue else f" — due {task.due}"
            lines.append(f"- {task.title}{due}")
        if lane.count > params.show:
            lines.append(f"- ... and {lane.count - params.show} more")
    return StepOutput(markdown="\n".join(lines), data=data)


@hookimpl
def register_step_types(register: Callable[[StepType], None]) -> None:
    register(
        StepType(
            name="board-scan",
            title="Board",
            description="Tasks on a board kept as markdown files in lane folders: counts per "
            "lane, titles, due dates, overdue flagged.",
            params_model=BoardParams,
            data_model=BoardData,
            version="1.0",
            handler=board_scan,
            paths_from_params=lambda p: ([p.path], []),
        )
    )
