"""Reports kept in the store, identified by the store generation of the write that kept them.

Reports live in the routines plugin's own table, not in a store kind: a kind is public (anyone
could `store_put` a forged report, and every `store_query` page would carry report bodies);
a table in the plugin's slice is reachable only through `report_get`. The write goes through
the store's one write path, so the report's generation is a real store generation: monotonic
across processes and restarts, never a timestamp.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from prixfixe.errors import RoutineError
from prixfixe.kinds import StoreMigration
from prixfixe.routines.report import Report, render
from prixfixe.store.api import OwnerSlice

MIGRATIONS = (
    StoreMigration(
        name="0001_reports",
        statements=(
            "CREATE TABLE {prefix}reports (generation INTEGER PRIMARY KEY, "
            "routine TEXT NOT NULL, status TEXT NOT NULL, body TEXT NOT NULL)",
            "CREATE INDEX {prefix}reports_by_routine ON {prefix}reports (routine, generation)",
        ),
    ),
)


@dataclass(frozen=True)
class StoredReport:
    """A report with what its markdown needs: each step's section and the routine's note."""

    report: Report
    sections: tuple[str, ...]
    note: str = ""

    @property
    def markdown(self) -> str:
        return render(self.report, self.sections, self.note)


def save(slice_: OwnerSlice, report: Report, sections: Sequence[str], note: str) -> StoredReport:
    """Keep `report`; its `generation` becomes the generation of this write."""
    body = json.dumps(
        {
            "report": report.model_dump(mode="json", exclude={"generation"}),
            "sections": list(sections),
            "note": note,
        },
        ensure_ascii=False,
    )
    generation = slice_.execute_stamped(
        "INSERT INTO {prefix}reports (generation, routine, status, body) "
        "VALUES (:generation, :routine, :status, :body)",
        {"routine": report.routine, "status": report.status, "body": body},
    )
    return StoredReport(report.model_copy(update={"generation": generation}), tuple(sections), note)


def load(slice_: OwnerSlice, generation: int | None, routine: str | None = None) -> StoredReport:
    """The report kept at `generation` (None: the latest), optionally only of `routine`."""
    sql = "SELECT generation, body FROM {prefix}reports"
    clauses: list[str] = []
    params: list[object] = []
    if generation is not None:
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
                f"no report{of} yet: run a routine first (routine_run, or prixfixe run NAME)"
            )
        raise RoutineError(
            f"no report{of} at generation {generation} (generation='latest' gives the newest)",
            generation=generation,
        )
    gen, body = rows[0]
    stored = json.loads(body)
    report = Report.model_validate({**stored["report"], "generation": gen})
    return StoredReport(report, tuple(stored["sections"]), stored.get("note", ""))
