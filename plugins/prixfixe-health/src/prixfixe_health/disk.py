"""`disk-check`: used and free space of the file systems holding configured paths.

Each path is checked by the file gate before anything is measured (a configured step's paths
are its declared reads, so the default grant holds exactly them; an inline step naming
another path is refused with nothing measured). Space is `shutil.disk_usage` (statvfs): `free`
is what an unprivileged user may still write, and the percentage is `used / (used + free)`,
as `df` counts it. Thresholds are percentages of that.

The plugin keeps the last reading of each path in its own table (`{prefix}disk_readings`,
created by migration `0001_disk_readings`), so the data says how much each path's file
system grew since the previous run.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path
from typing import Literal

from prixfixe import StepContext, StepFailure, StepOutput, StepType, StoreMigration
from pydantic import BaseModel, ConfigDict, Field, model_validator

from prixfixe_health.levels import Level, check_order, flagged, level_of, worst
from prixfixe_health.units import size

#: The plugin's own table: one row per path, its latest reading. Append-only: a change to it
#: is a new migration after this one, never an edit of this one.
MIGRATIONS = (
    StoreMigration(
        name="0001_disk_readings",
        statements=(
            "CREATE TABLE {prefix}disk_readings ("
            "path TEXT PRIMARY KEY, used_bytes INTEGER NOT NULL, read_at TEXT NOT NULL)",
        ),
    ),
)


class DiskParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paths: list[str] = Field(
        min_length=1,
        description="Paths whose file systems are checked (~ and paths relative to the "
        "config's folder allowed); each is a read the file grant holds.",
    )
    warn_percent: float = Field(
        default=80, gt=0, le=100, description="Used space (percent) at which a path warns."
    )
    critical_percent: float = Field(
        default=90, gt=0, le=100, description="Used space (percent) at which a path is critical."
    )

    @model_validator(mode="after")
    def _ordered(self) -> DiskParams:
        check_order(self.warn_percent, self.critical_percent, "warn_percent, critical_percent")
        return self


def disk_paths(params: DiskParams) -> tuple[list[str], list[str]]:
    """What a configured disk-check reads: its paths (the file grant's default roots)."""
    return list(params.paths), []


class PathUsage(BaseModel):
    path: str = Field(description="The path, resolved (absolute, symlinks followed).")
    status: Literal["ok", "warn", "critical", "missing"]
    mount: str | None = Field(description="Mount point of its file system; null when missing.")
    total_bytes: int | None
    used_bytes: int | None
    free_bytes: int | None = Field(description="What an unprivileged user may still write.")
    used_percent: float | None = Field(description="used / (used + free), as df counts it.")
    growth_bytes: int | None = Field(
        description="Used bytes gained since the previous reading (negative: freed); null "
        "on the first reading or when missing."
    )
    since: dt.datetime | None = Field(description="When the previous reading was taken (UTC).")


class DiskData(BaseModel):
    status: Level = Field(description="The worst of the paths (a missing path warns).")
    warn_percent: float
    critical_percent: float
    paths: list[PathUsage]


def mount_point(path: Path) -> Path:
    """The mount point of the file system holding `path` (an existing, resolved path). Only
    `stat` is used on the way up; nothing outside the grant is opened or listed."""
    path = path if path.is_dir() else path.parent
    while not os.path.ismount(path):
        path = path.parent
    return path


def measure(real: Path, params: DiskParams, step: str) -> PathUsage:
    if not real.exists():
        return PathUsage(
            path=str(real), status="missing", mount=None, total_bytes=None, used_bytes=None,
            free_bytes=None, used_percent=None, growth_bytes=None, since=None,
        )  # fmt: skip
    try:
        usage = shutil.disk_usage(real)
    except OSError as exc:
        raise StepFailure(
            f"step {step!r}: cannot read the space of {str(real)!r}: {exc.strerror or exc}",
            kind="error",
            path=str(real),
        ) from None
    seen = usage.used + usage.free
    percent = round(100 * usage.used / seen, 1) if seen else 0.0
    return PathUsage(
        path=str(real),
        status=level_of(percent, warn=params.warn_percent, critical=params.critical_percent),
        mount=str(mount_point(real)),
        total_bytes=usage.total,
        used_bytes=usage.used,
        free_bytes=usage.free,
        used_percent=percent,
        growth_bytes=None,
        since=None,
    )


def remember(ctx: StepContext, usages: list[PathUsage], now: dt.datetime) -> list[PathUsage]:
    """`usages` with their growth since the previous reading; this reading is kept as the
    next one's baseline. Blocking (the store): the handler runs in a worker thread."""
    measured = [u for u in usages if u.used_bytes is not None]
    if not measured:
        return usages
    own = ctx.slice()
    marks = ", ".join("?" for _ in measured)
    rows = own.query(
        f"SELECT path, used_bytes, read_at FROM {{prefix}}disk_readings WHERE path IN ({marks})",
        [u.path for u in measured],
    )
    before = {path: (used, dt.datetime.fromisoformat(at)) for path, used, at in rows}
    own.executemany(
        "INSERT INTO {prefix}disk_readings (path, used_bytes, read_at) VALUES (?, ?, ?) "
        "ON CONFLICT (path) DO UPDATE SET used_bytes = excluded.used_bytes, "
        "read_at = excluded.read_at",
        [(u.path, u.used_bytes, now.isoformat()) for u in measured],
    )
    out = []
    for usage in usages:
        previous = before.get(usage.path)
        if previous is not None and usage.used_bytes is not None:
            usage = usage.model_copy(
                update={"growth_bytes": usage.used_bytes - previous[0], "since": previous[1]}
            )
        out.append(usage)
    return out


def _line(usage: PathUsage) -> str:
    if usage.status == "missing" or usage.used_percent is None or usage.free_bytes is None:
        return f"- `{usage.path}` does not exist — **warn**"
    grew = ""
    if usage.growth_bytes:
        sign = "+" if usage.growth_bytes > 0 else "-"
        grew = f", {sign}{size(abs(usage.growth_bytes))} since the last reading"
    return (
        f"- `{usage.path}` (on `{usage.mount}`): {usage.used_percent:g}% used, "
        f"{size(usage.free_bytes)} free of {size(usage.total_bytes or 0)}{grew}"
        f"{flagged(usage.status)}"
    )


def disk_check(ctx: StepContext, params: DiskParams) -> StepOutput:
    # Every path passes the file gate first: one refused path fails the step, nothing measured.
    reals = [ctx.fs.check(ctx.path(p), step=ctx.step) for p in params.paths]
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    usages = remember(ctx, [measure(real, params, ctx.step) for real in reals], now)
    status = worst("warn" if u.status == "missing" else u.status for u in usages)
    data = DiskData(
        status=status,
        warn_percent=params.warn_percent,
        critical_percent=params.critical_percent,
        paths=usages,
    )
    counts = {level: sum(u.status == level for u in usages) for level in ("critical", "warn")}
    counts["warn"] += sum(u.status == "missing" for u in usages)
    said = ", ".join(f"**{n} {level}**" for level, n in counts.items() if n)
    head = f"{len(usages)} path{'s' if len(usages) != 1 else ''}: {said or 'all ok'}."
    return StepOutput(markdown="\n".join([head, *map(_line, usages)]), data=data)


STEP_TYPE = StepType(
    name="disk-check",
    description="Used and free space of the file systems holding configured paths, with "
    "warning and critical thresholds (percent used) and the growth since the last reading.",
    params_model=DiskParams,
    data_model=DiskData,
    version="1.0",
    handler=disk_check,
    paths_from_params=disk_paths,
)
