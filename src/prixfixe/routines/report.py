"""A routine's report: the data contract agents read, and the markdown people read.

The report envelope has its own schema version (`REPORT_VERSION`); each step's `data` follows
its step type's schema, whose version travels with it (`StepResult.version`). A failed step is
data too — status, error kind and message — so a report is never lost to one bad step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel

from prixfixe.routines.spec import INLINE_ROUTINE, STEP_ROUTINE
from prixfixe.words import plural

#: The report envelope's schema version. Same policy as step data: minor adds, major breaks.
#: 1.1: a step's `title`.
REPORT_VERSION = "1.1"
#: The pin key that names the envelope in `schema_major` (step types are pinned by name).
REPORT_PIN = "report"


class Failure(BaseModel):
    kind: str
    message: str


class StepResult(BaseModel):
    name: str
    type: str
    status: Literal["ok", "failed"]
    version: str
    data: dict[str, Any] | None = None
    error: Failure | None = None
    #: Its section's heading for people: its type's title when the step kept the type's name
    #: (`deadline-calc` is "Deadlines"), else None and the heading is its name (since 1.1).
    title: str | None = None

    @property
    def heading(self) -> str:
        return self.title or self.name


class Report(BaseModel):
    version: str
    routine: str
    generation: int
    status: Literal["ok", "partial", "failed"]
    started: str
    ms: int
    steps: list[StepResult]


def overall(steps: Sequence[StepResult]) -> Literal["ok", "partial", "failed"]:
    failed = sum(1 for s in steps if s.status == "failed")
    if not failed:
        return "ok"
    return "failed" if failed == len(steps) else "partial"


def title(report: Report) -> str:
    if report.routine == INLINE_ROUTINE:
        return "Inline routine"
    if report.routine == STEP_ROUTINE and report.steps:
        return f"Step {report.steps[0].name}"
    return report.routine


def render(report: Report, sections: Sequence[str], note: str = "") -> str:
    """The report as markdown: a heading per step, failures as a quoted line with their kind."""
    failed = sum(1 for s in report.steps if s.status == "failed")
    counts = f"{len(report.steps) - failed} ok" + (f", {failed} failed" if failed else "")
    when = report.started.replace("T", " ")[:16] + " UTC"
    lines = [
        f"# {title(report)}",
        "",
        f"_Generation {report.generation} · {when} · {plural(len(report.steps), 'step')}: "
        f"{counts} · "
        f"{report.ms / 1000:.1f} s_",
        "",
    ]
    for step, section in zip(report.steps, sections, strict=True):
        if step.status == "ok" or step.error is None:
            lines += [f"## {step.heading}", "", section.strip() or "_Nothing to report._", ""]
        else:
            lines += [
                f"## {step.heading} — failed ({step.error.kind})",
                "",
                f"> {step.error.message}",
                "",
            ]
    if note:
        lines += ["---", "", note, ""]
    return "\n".join(lines).rstrip() + "\n"
