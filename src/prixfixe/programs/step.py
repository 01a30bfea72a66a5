"""`program`: a program kept as a routine step, so a composition a person likes runs every
morning. The step's `code` is what `program_run` takes; it runs through `App.run_program`
(`StepContext.run_program`), that is `run_program` with the request of the tool call running
the routine: each of its calls goes through the dispatch a direct call of that session takes
(facets, deny lists, the leash, `max_calls`, redaction), and counts against that session as
`mcp-query`'s calls do. A routine run from the CLI (`prixfixe run`) or the web app has no
session to count against: its calls are the person's.

A program that fails fails the step (its message: the line, the error, the calls that had
run, and that nothing is rolled back); the routine goes on, as with any step failure. Where
`program_run` would be refused (facet `programs` denied, the sandbox unavailable, inside a
program), the step is refused with the same reason.

The value is untrusted (tools' results): the markdown shows it bounded, in a code block
unless it is a string that reads as markdown, whose headings go below the step's own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.steps import StepContext, StepOutput, StepType
from prixfixe.errors import PrixfixeError, StepFailure
from prixfixe.programs.runner import CallRecord, ProgramOutcome
from prixfixe.programs.tool import MAX_CODE_CHARS, CallOutcome, ProgramLimits, calls_footer
from prixfixe.routines.builtin.mcp_query import fenced, nested, reads_as_markdown

#: The step's failure kinds, by the program's (anything else is `error`).
_KINDS = {"timeout": "timeout", "unavailable": "unavailable"}
#: What a tool's name (a mounted one's too) looks like in the markdown's calls line.
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class ProgramStepParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(
        min_length=1,
        max_length=MAX_CODE_CHARS,
        description="Python, as program_run takes it: await call_tool(name, arguments); the "
        "last expression is the step's value.",
    )
    limits: ProgramLimits | None = Field(
        default=None, description="Lower the configured [programs] limits for this program."
    )
    max_chars: int = Field(
        default=4000, ge=100, le=100_000, description="Most characters of the value shown."
    )


class ProgramStepData(BaseModel):
    value: Any = Field(
        description="The program's last expression, as JSON (cut to max_result_tokens)."
    )
    calls: list[CallOutcome] = Field(description="Every tool call the program made, in order.")
    truncated: bool = Field(description="True: the value was cut to fit.")
    note: str | None = Field(description="What the cut left out.")
    printed: str | None = Field(description="What the program printed.")


def failure_message(step: str, outcome: ProgramOutcome) -> str:
    """The failed program on one line (a report quotes it): where, why, which calls ran."""
    failure = outcome.failure
    assert failure is not None
    where = f" at line {failure.line}" if failure.line is not None else ""
    said = f"step {step!r}: the program failed{where}: {failure.message}"
    if outcome.calls:
        said += (
            f"; before it failed, {calls_footer(records(outcome.calls))} What those calls changed "
            "stays changed: nothing is rolled back."
        )
    elif failure.kind != "unavailable":
        said += "; no tool call had run."
    return " ".join(said.split())


def markdown_of(data: ProgramStepData, limit: int) -> str:
    value = data.value
    if isinstance(value, str):
        text, lang = value, "text"
    else:
        text, lang = json.dumps(value, ensure_ascii=False, indent=1), "json"
    cut = text[:limit]
    more = len(text) - len(cut)
    body = nested(cut) if lang == "text" and reads_as_markdown(cut) else fenced(cut, lang)
    parts = [body]
    if more:
        parts.append(f"... {more} more characters (the step's data has the whole value)")
    if data.note:
        parts.append(f"_The value was cut: {data.note}._")
    parts.append(f"_{calls_footer(records(data.calls))}_")
    return "\n\n".join(parts)


def records(calls: Sequence[CallOutcome | CallRecord]) -> list[CallRecord]:
    """The calls as the report names them; a name no tool could have (a program may pass
    anything to `call_tool`) is shown as `?`, so it cannot break the report's markdown."""
    return [CallRecord(c.name if _NAME.match(c.name) else "?", c.ok) for c in calls]


async def program_step(ctx: StepContext, params: ProgramStepParams) -> StepOutput:
    asked = params.limits.model_dump() if params.limits is not None else {}
    try:
        outcome = await ctx.run_program(params.code, asked)
    except StepFailure:
        raise
    except PrixfixeError as exc:  # its facet denied, a limit above [programs], nesting
        raise StepFailure(f"step {ctx.step!r}: {exc.message}", kind="refused") from None
    if outcome.failure is not None:
        raise StepFailure(
            failure_message(ctx.step, outcome), kind=_KINDS.get(outcome.failure.kind, "error")
        )
    data = ProgramStepData(
        value=outcome.value,
        calls=[CallOutcome(**c.as_data()) for c in outcome.calls],
        truncated=outcome.truncated,
        note=outcome.note,
        printed=outcome.printed or None,
    )
    return StepOutput(markdown=markdown_of(data, params.max_chars), data=data)


@hookimpl
def register_step_types(register: Callable[[StepType], None]) -> None:
    register(
        StepType(
            name="program",
            description="Run a program (Python, as program_run takes it) that chains tool "
            "calls; report its value: bounded for people, whole (to max_result_tokens) as data.",
            params_model=ProgramStepParams,
            data_model=ProgramStepData,
            version="1.0",
            handler=program_step,
        )
    )
