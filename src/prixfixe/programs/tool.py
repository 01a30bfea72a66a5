"""`program_run`: run a short Python program that chains tool calls; only its value (and a
line listing the calls it made) comes back. Not listed (facet `programs`): `tool_search`
finds it, and the server's instructions name it in one line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.tool import Tool, ToolContext, ToolResult
from prixfixe.errors import ToolRefusedError
from prixfixe.programs.runner import PROGRAM_TOOL, CallRecord, ProgramOutcome, run_program
from prixfixe.programs.runner import value_text as _value_text

#: The longest program `program_run` takes, in characters.
MAX_CODE_CHARS = 20_000
#: The most calls the footer names one by one (runs of one tool count as one).
FOOTER_RUNS = 20


class ProgramLimits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout_seconds: float | None = Field(default=None, gt=0, description="Wall time, seconds.")
    max_memory_mb: int | None = Field(default=None, ge=1, description="Memory, MiB.")
    max_calls: int | None = Field(default=None, ge=1, description="Tool calls.")
    max_result_tokens: int | None = Field(
        default=None, ge=1, description="Tokens of the returned value."
    )


class ProgramInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Its length is checked by the handler: a validation error would quote the whole code.
    code: str = Field(
        min_length=1,
        description="Python; await call_tool(name, arguments); the last expression is returned.",
    )
    limits: ProgramLimits | None = Field(
        default=None, description="Lower the configured limits for this program."
    )


class CallOutcome(BaseModel):
    name: str
    ok: bool
    error: str | None = None


class ProgramError(BaseModel):
    kind: Literal["syntax", "runtime", "timeout", "memory", "calls", "crashed", "unavailable"]
    message: str
    line: int | None = None
    traceback: str | None = None


class ProgramOutput(BaseModel):
    value: Any = Field(default=None, description="The program's last expression, as JSON.")
    calls: list[CallOutcome] = Field(description="Every tool call the program made, in order.")
    truncated: bool = Field(default=False, description="True: the value was cut to fit.")
    note: str | None = Field(default=None, description="What the cut left out.")
    printed: str | None = Field(default=None, description="What the program printed.")
    error: ProgramError | None = Field(default=None, description="Why the program failed.")


def calls_footer(calls: list[CallRecord]) -> str:
    """One line naming the calls: `3 calls: store_query ok, fix.add ok x2`."""
    if not calls:
        return "0 calls."
    runs: list[tuple[str, int]] = []
    for record in calls:
        said = f"{record.name} {'ok' if record.ok else 'failed'}"
        if runs and runs[-1][0] == said:
            runs[-1] = (said, runs[-1][1] + 1)
        else:
            runs.append((said, 1))
    shown = [s if n == 1 else f"{s} x{n}" for s, n in runs[:FOOTER_RUNS]]
    more = f", ... ({len(runs) - FOOTER_RUNS} more)" if len(runs) > FOOTER_RUNS else ""
    noun = "call" if len(calls) == 1 else "calls"
    return f"{len(calls)} {noun}: {', '.join(shown)}{more}."


def outcome_text(outcome: ProgramOutcome) -> str:
    """What the model reads: the value and the calls line; or where and why the program
    failed, and which calls had run (their effects stay)."""
    if outcome.failure is None:
        parts = [_value_text(outcome.value)]
        if outcome.note:
            parts.append(f"[cut: {outcome.note}]")
        if outcome.printed:
            parts.append(f"printed:\n{outcome.printed}")
        parts.append(calls_footer(outcome.calls))
        return "\n".join(parts)
    failure = outcome.failure
    where = f" at line {failure.line}" if failure.line is not None else ""
    parts = [f"The program failed{where}: {failure.message}"]
    if failure.traceback:
        lines = failure.traceback.splitlines()
        # Its last line is the error again, said above: where it happened is what it adds.
        cut = lines[-1] and failure.message.startswith(lines[-1])
        shown = lines[:-1] if cut and len(lines) > 1 else lines
        parts.append("\n".join(shown))
    if outcome.printed:
        parts.append(f"printed:\n{outcome.printed}")
    if outcome.calls:
        parts.append(
            f"Before it failed, {calls_footer(outcome.calls)} What those calls changed stays "
            "changed: nothing is rolled back."
        )
    else:
        parts.append("No tool call had run.")
    return "\n".join(parts)


def outcome_data(outcome: ProgramOutcome) -> ProgramOutput:
    failure = outcome.failure
    return ProgramOutput(
        value=outcome.value,
        calls=[CallOutcome(**c.as_data()) for c in outcome.calls],
        truncated=outcome.truncated,
        note=outcome.note,
        printed=outcome.printed or None,
        error=None
        if failure is None
        else ProgramError(
            kind=failure.kind,
            message=failure.message,
            line=failure.line,
            traceback=failure.traceback,
        ),
    )


async def program_run(ctx: ToolContext, args: ProgramInput) -> ToolResult:
    if len(args.code) > MAX_CODE_CHARS:
        raise ToolRefusedError(
            f"code is {len(args.code)} characters; a program is at most {MAX_CODE_CHARS}: "
            "write a shorter one (loop over calls rather than spelling each out)",
            limit=MAX_CODE_CHARS,
        )
    programs = ctx.app.programs
    asked = args.limits.model_dump() if args.limits is not None else {}
    limits = programs.limits.lowered(asked)
    outcome = await run_program(ctx.app, args.code, ctx.request, limits)
    return ToolResult(
        text=outcome_text(outcome), data=outcome_data(outcome), is_error=not outcome.ok
    )


USAGE = (
    "r = await call_tool('store_query', {'kind': 'reminder'}) gives the tool's structured "
    "result as dicts and lists (its shape: tool_describe NAME, under Returns), else its text; "
    "a failed call raises ToolError. asyncio.gather runs calls at once. Return only what you "
    "need (the last expression, or return). No files, network or environment; imports: json, "
    "re, math, datetime, asyncio, collections, itertools."
)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    register(
        Tool(
            name=PROGRAM_TOOL,
            title="Run a program",
            description=(
                "Run a short Python program that chains tool calls in one step "
                "(await call_tool(name, arguments)); only its last expression's value "
                "comes back."
            ),
            input_model=ProgramInput,
            output_model=ProgramOutput,
            handler=program_run,
            mutates=True,  # a program may call tools that mutate
            facet="programs",
            keywords=(
                "program",
                "script",
                "code",
                "python",
                "chain",
                "compose",
                "combine",
                "batch",
                "pipeline",
                "loop",
                "several",
                "multiple",
                "sandbox",
                "steps",
            ),
            examples=(
                "chain several tool calls in one step",
                "run a script that calls tools",
                "call a tool for each item of a list",
                "combine the results of several tools",
                "do a multi-step task without reading every result",
            ),
            usage=USAGE,
        )
    )
