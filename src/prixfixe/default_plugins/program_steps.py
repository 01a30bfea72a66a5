"""Step types that run a program of the user's: `script` (its trimmed stdout becomes the
report section) and `harness` (it prints one JSON object, which becomes the step's data).

The program is the first word of `command` (a list, or a string split like a shell would,
without running one). It is declared from the params, so it is in the default grant exactly
when a configured step names it; `[leash] exec` can narrow that, and inline steps
(`routine_eval`, `step_run`) can only run programs a configured step already declares.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from prixfixe.errors import StepFailure
from prixfixe.hookspecs import hookimpl
from prixfixe.leash import Completed
from prixfixe.steps import StepContext, StepOutput, StepType

#: The most characters of stdout a script's data keeps (its markdown is the same text).
MAX_TEXT = 20_000


class CommandParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: list[str] = Field(
        min_length=1, description="The program and its arguments (a string is split like a shell)."
    )
    cwd: str | None = Field(default=None, description="Working directory (default: the config's).")

    @field_validator("command", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return shlex.split(value) if isinstance(value, str) else value


def command_programs(params: CommandParams) -> Sequence[str]:
    return [params.command[0]]


async def _run(ctx: StepContext, params: CommandParams) -> Completed:
    cwd = ctx.path(params.cwd) if params.cwd else None
    done = await ctx.run(params.command, cwd=cwd)
    if done.returncode != 0:
        tail = [ln for ln in done.stderr.strip().splitlines() if ln.strip()][-3:]
        said = f": {' / '.join(tail)}" if tail else " (no error output)"
        raise StepFailure(
            f"step {ctx.step!r}: {params.command[0]!r} exited with status {done.returncode}{said}",
            kind="exit-status",
            exit_code=done.returncode,
        )
    return done


# -- script ---------------------------------------------------------------------------------


class ScriptData(BaseModel):
    command: list[str]
    exit_code: int
    output: str = Field(description="stdout, trimmed (cut at 20,000 characters).")
    truncated: bool


async def script(ctx: StepContext, params: CommandParams) -> StepOutput:
    done = await _run(ctx, params)
    text = done.stdout.strip()
    truncated = done.truncated or len(text) > MAX_TEXT
    text = text[:MAX_TEXT]
    data = ScriptData(
        command=params.command, exit_code=done.returncode, output=text, truncated=truncated
    )
    return StepOutput(markdown=text, data=data)


# -- harness --------------------------------------------------------------------------------


class HarnessData(BaseModel):
    """Whatever JSON object the program printed (its own contract)."""

    model_config = ConfigDict(extra="allow")


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= 120 else text[:117] + "..."


async def harness(ctx: StepContext, params: CommandParams) -> StepOutput:
    done = await _run(ctx, params)
    text = done.stdout.strip()
    try:
        data = json.loads(text)
    except ValueError as exc:
        begin = _shown(text[:60]) if text else "(nothing)"
        raise StepFailure(
            f"step {ctx.step!r}: {params.command[0]!r} must print one JSON object, but its "
            f"output is not JSON ({exc}); it began: {begin}",
            kind="invalid-output",
        ) from None
    if not isinstance(data, dict):
        raise StepFailure(
            f"step {ctx.step!r}: {params.command[0]!r} must print one JSON object, not a "
            f"{type(data).__name__}",
            kind="invalid-output",
        )
    summary = data.get("summary") or data.get("markdown")
    if isinstance(summary, str):
        markdown = summary
    else:
        markdown = "\n".join(f"- {k}: {_shown(v)}" for k, v in list(data.items())[:20])
    return StepOutput(markdown=markdown, data=data)


@hookimpl
def register_step_types(register: Callable[[StepType], None]) -> None:
    register(
        StepType(
            name="script",
            description="Run a program; its trimmed stdout becomes the report section. A "
            "non-zero exit fails the step.",
            params_model=CommandParams,
            data_model=ScriptData,
            version="1.0",
            handler=script,
            programs_from_params=command_programs,
        )
    )
    register(
        StepType(
            name="harness",
            description="Run a program that prints one JSON object; the object becomes the "
            "step's data (a `summary` string in it becomes the section).",
            params_model=CommandParams,
            data_model=HarnessData,
            version="1.0",
            handler=harness,
            programs_from_params=command_programs,
        )
    )
