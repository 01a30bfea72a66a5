"""Step types that run a program of the user's: `script` (its trimmed stdout becomes the
report section) and `harness` (it prints one JSON object, which becomes the step's data).

What runs is a command line the configuration wrote, never one a client chose: a configured
step gives `command` (a list, or a string split like a shell would, without running one) or
`run = NAME`, naming an entry of `[commands]`; an inline step (`routine_eval`, `step_run`)
may only use `run`, since `command` and `cwd` are config-only. Either way the step declares
exactly that command line, argument for argument, so it is in the default grant exactly when
the configuration names it; `[leash] exec` can narrow that.

CONTRACT: a command runs in the folder of the configuration that wrote it (`cwd`, when the
configuration gives one, resolved against that folder): a `run = NAME` names a `[commands]`
entry, which runs where that file is, never in the server's working directory, so an inline
step cannot make a configured `python3 report.py` read a checkout's `report.py`.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.steps import StepContext, StepOutput, StepType
from prixfixe.errors import StepFailure
from prixfixe.leash import Completed
from prixfixe.leash.exec import CommandLine

#: The most characters of stdout a script's data keeps (its markdown is the same text).
MAX_TEXT = 20_000


class CommandParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run: str | None = Field(
        default=None, description="Name of a configured command ([commands]) to run."
    )
    command: list[str] | None = Field(
        default=None,
        min_length=1,
        description="Config only: the program and its arguments (a string is split like a shell).",
    )
    cwd: str | None = Field(
        default=None, description="Config only: working directory (default: the config's)."
    )

    @field_validator("command", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return shlex.split(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_command(self) -> CommandParams:
        if (self.run is None) == (self.command is None):
            raise ValueError("give exactly one of run (a configured command's name) or command")
        return self


def command_lines(
    params: CommandParams, named: Mapping[str, tuple[str, ...]]
) -> Sequence[CommandLine]:
    """The one command line this step runs (a `KeyError` for an unknown `run` name)."""
    return [CommandLine(argv[0], tuple(argv[1:])) for argv in [_argv(params, named)]]


def _argv(params: CommandParams, named: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    if params.command is not None:
        return tuple(params.command)
    assert params.run is not None
    return named[params.run]


async def _run(ctx: StepContext, params: CommandParams) -> tuple[Completed, tuple[str, ...]]:
    cwd: Path | None
    if params.cwd:
        cwd = ctx.path(params.cwd)
    elif params.run is not None:
        # A named command runs where the configuration that named it is, even when a client
        # named it inline: the server's working directory (a checkout) has no say in what
        # its relative arguments or `python -m` mean.
        cwd = ctx.commands_dir
    else:
        cwd = None  # the step's base directory: its configuration's folder
    argv = _argv(params, ctx.commands)
    done = await ctx.run(argv, cwd=cwd)
    if done.returncode != 0:
        tail = [ln for ln in done.stderr.strip().splitlines() if ln.strip()][-3:]
        said = f": {' / '.join(tail)}" if tail else " (no error output)"
        raise StepFailure(
            f"step {ctx.step!r}: {argv[0]!r} exited with status {done.returncode}{said}",
            kind="exit-status",
            exit_code=done.returncode,
        )
    return done, argv


# -- script ---------------------------------------------------------------------------------


class ScriptData(BaseModel):
    command: list[str]
    exit_code: int
    output: str = Field(description="stdout, trimmed (cut at 20,000 characters).")
    truncated: bool


class ScriptParams(CommandParams):
    markdown: bool = Field(
        default=False,
        description="Config only: the output is markdown, shown as it is (default: shown "
        "verbatim in a code block, as a terminal would).",
    )


def code_block(text: str) -> str:
    """`text` fenced so nothing in it is read as markdown: the fence is longer than any run of
    backticks inside."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


async def script(ctx: StepContext, params: ScriptParams) -> StepOutput:
    done, argv = await _run(ctx, params)
    text = done.stdout.strip()
    truncated = done.truncated or len(text) > MAX_TEXT
    text = text[:MAX_TEXT]
    data = ScriptData(
        command=list(argv), exit_code=done.returncode, output=text, truncated=truncated
    )
    if not text:
        return StepOutput(markdown="(no output)", data=data)
    return StepOutput(markdown=text if params.markdown else code_block(text), data=data)


# -- harness --------------------------------------------------------------------------------


class HarnessData(BaseModel):
    """Whatever JSON object the program printed (its own contract)."""

    model_config = ConfigDict(extra="allow")


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= 120 else text[:117] + "..."


async def harness(ctx: StepContext, params: CommandParams) -> StepOutput:
    done, argv = await _run(ctx, params)
    text = done.stdout.strip()
    try:
        data = json.loads(text)
    except ValueError as exc:
        begin = _shown(text[:60]) if text else "(nothing)"
        raise StepFailure(
            f"step {ctx.step!r}: {argv[0]!r} must print one JSON object, but its "
            f"output is not JSON ({exc}); it began: {begin}",
            kind="invalid-output",
        ) from None
    if not isinstance(data, dict):
        raise StepFailure(
            f"step {ctx.step!r}: {argv[0]!r} must print one JSON object, not a "
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
            description="Run a program; its trimmed stdout becomes the report section (in a "
            "code block unless markdown = true). A non-zero exit fails the step.",
            params_model=ScriptParams,
            data_model=ScriptData,
            version="1.0",
            handler=script,
            commands_from_params=command_lines,
            config_only=("command", "cwd", "markdown"),
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
            commands_from_params=command_lines,
            config_only=("command", "cwd"),
        )
    )
