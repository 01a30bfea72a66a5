"""Reports kept in the store, identified by the store generation of the write that kept them.

Reports live in the routines plugin's own table, not in a store kind: a kind is public (anyone
could `store_put` a forged report, and every `store_query` page would carry report bodies);
a table in the plugin's slice is reachable only through `report_get`. The write goes through
the store's one write path, so the report's generation is a real store generation: monotonic
across processes and restarts, never a timestamp.

A report is redacted before it is written (every registered secret value masked, see
`prixfixe.leash.redact`), so the file never holds a value a step printed. On PostgreSQL the
table is in the shared database (its migrations carry PostgreSQL's dialect), so every instance
serves every report. Reports do not pile up forever: `prune` keeps the newest `keep` and drops
those kept longer ago than `max_age_days` (`[reports]` in the configuration).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from prixfixe.declarations.kinds import StoreMigration
from prixfixe.errors import RoutineError
from prixfixe.leash.redact import REDACTOR
from prixfixe.routines.report import Report, render
from prixfixe.store.api import OwnerSlice
from prixfixe.store.faults import MAX_SQLITE_INT

MIGRATIONS = (
    StoreMigration(
        name="0001_reports",
        statements=(
            "CREATE TABLE {prefix}reports (generation INTEGER PRIMARY KEY, "
            "routine TEXT NOT NULL, status TEXT NOT NULL, body TEXT NOT NULL)",
            "CREATE INDEX {prefix}reports_by_routine ON {prefix}reports (routine, generation)",
        ),
        postgres=(
            "CREATE TABLE {prefix}reports (generation BIGINT PRIMARY KEY, "
            "routine TEXT NOT NULL, status TEXT NOT NULL, body TEXT NOT NULL)",
            "CREATE INDEX {prefix}reports_by_routine ON {prefix}reports (routine, generation)",
        ),
    ),
    StoreMigration(
        name="0002_reports_created",
        statements=(
            # When the report was kept, in Unix seconds: what the age limit compares, without
            # parsing every body. Reports kept before count from when their run started.
            "ALTER TABLE {prefix}reports ADD COLUMN created REAL",
            "UPDATE {prefix}reports SET created = COALESCE("
            "CAST(strftime('%s', json_extract(body, '$.report.started')) AS REAL), "
            "CAST(strftime('%s', 'now') AS REAL))",
            "CREATE INDEX {prefix}reports_by_created ON {prefix}reports (created)",
        ),
        # A new database has no earlier reports to date.
        postgres=(
            "ALTER TABLE {prefix}reports ADD COLUMN created DOUBLE PRECISION",
            "CREATE INDEX {prefix}reports_by_created ON {prefix}reports (created)",
        ),
    ),
)
#: A report's generation as a client may ask for it: a store generation, 1 to 2^63 - 1 (what
#: SQLite can hold), so a larger one is refused by name before it reaches the store.
ReportGeneration = Annotated[int, Field(ge=1, le=MAX_SQLITE_INT)]
#: Seconds in a day, for `max_age_days`.
DAY = 86400.0


@dataclass(frozen=True)
class StoredReport:
    """A report with what its markdown needs: each step's section and the routine's note."""

    report: Report
    sections: tuple[str, ...]
    note: str = ""

    @property
    def markdown(self) -> str:
        return render(self.report, self.sections, self.note)


def save(
    slice_: OwnerSlice,
    report: Report,
    sections: Sequence[str],
    note: str,
    *,
    now: float | None = None,
) -> StoredReport:
    """Keep `report`, redacted; its `generation` becomes the generation of this write. The
    returned report is the redacted one: what was kept is what anyone is shown."""
    data = REDACTOR.redact_data(report.model_dump(mode="json", exclude={"generation"}))
    sections = [REDACTOR.redact(section) for section in sections]
    note = REDACTOR.redact(note)
    body = json.dumps({"report": data, "sections": sections, "note": note}, ensure_ascii=False)
    generation = slice_.execute_stamped(
        "INSERT INTO {prefix}reports (generation, routine, status, body, created) "
        "VALUES (:generation, :routine, :status, :body, :created)",
        {
            "routine": report.routine,
            "status": report.status,
            "body": body,
            "created": time.time() if now is None else now,
        },
    )
    kept = Report.model_validate({**data, "generation": generation})
    return StoredReport(kept, tuple(sections), note)


def prune(
    slice_: OwnerSlice,
    keep: int | None,
    max_age_days: float | None,
    *,
    now: float | None = None,
) -> int:
    """Delete the reports beyond the newest `keep` (across routines) and those kept more than
    `max_age_days` before `now`; None or 0 turns either limit off. Returns how many went.

    Nothing is written when nothing is due: an idle prune does not advance the generation."""
    clauses: list[str] = []
    params: list[object] = []
    if keep:
        clauses.append(
            "generation NOT IN (SELECT generation FROM {prefix}reports "
            "ORDER BY generation DESC LIMIT ?)"
        )
        params.append(keep)
    if max_age_days:
        clauses.append("created < ?")
        params.append((time.time() if now is None else now) - max_age_days * DAY)
    if not clauses:
        return 0
    where = " WHERE " + " OR ".join(clauses)
    ((due,),) = slice_.query("SELECT count(*) FROM {prefix}reports" + where, params)
    if not due:
        return 0
    return slice_.execute("DELETE FROM {prefix}reports" + where, params)


def load(slice_: OwnerSlice, generation: int | None, routine: str | None = None) -> StoredReport:
    """The report kept at `generation` (None: the latest), optionally only of `routine`."""
    sql = "SELECT generation, body FROM {prefix}reports"
    clauses: list[str] = []
    params: list[object] = []
    if generation is not None and not 1 <= generation <= MAX_SQLITE_INT:
        clauses.append("FALSE")  # no report has it, and SQLite could not bind it
    elif generation is not None:
        clauses.append("generation = ?")
        params.append(generation)
    if routine is not None:
        clauses.append("routine = ?")
        params.append(routine)
    if clauses:
        sql += " WHERE " + " AND ".join(clauses)
    rows = slice_.query(sql + " ORDER BY generation DESC LIMIT 1", params)
    if not rows:
        of = f" of routine {routine!r}" if routine else ""
        if generation is None:
            raise RoutineError(
                f"no report{of} yet: run a routine first (routine_run)",
                cli=f"no report{of} yet: run a routine first (prixfixe run NAME; prixfixe "
                "routines lists them)",
            )
        gone = (
            f"no report{of} at generation {generation}: it was never kept, or it was pruned "
            "([reports] keep and max_age_days bound how many are kept and for how long); "
        )
        raise RoutineError(
            f"{gone}generation='latest' gives the newest",
            cli=f"{gone}prixfixe report without a generation shows the newest",
            generation=generation,
        )
    gen, body = rows[0]
    stored = json.loads(body)
    report = Report.model_validate({**stored["report"], "generation": gen})
    return StoredReport(report, tuple(stored["sections"]), stored.get("note", ""))
