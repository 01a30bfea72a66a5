"""The routine tools in `core`: list, run, run one step, list step types, fetch a report, and
run an inline routine. Step types are not tools: adding one never changes `tools/list`.

`format` chooses the text blocks: `markdown` (the report for people), `data` (its JSON),
`both`, or `curated` (each step's data as curated entries: dot paths explained by the step
type's data schema, empty and internal values left out, long values cut — for reading large
data without its JSON). `structuredContent` always carries the typed report, because the
tools advertise an `outputSchema` and the MCP spec requires structured results to match it
whenever one is given.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, Literal

import anyio
import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field

from prixfixe.curation import Curator, curator_for
from prixfixe.dates import FORMS_SHORT, has_dates
from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.kinds import StoreMigration
from prixfixe.declarations.steps import StepType
from prixfixe.declarations.tool import Tool, ToolContext, ToolResult
from prixfixe.routines import archive
from prixfixe.routines.archive import StoredReport
from prixfixe.routines.contract import data_schema
from prixfixe.routines.engine import OnStep
from prixfixe.routines.report import Report, StepResult, title
from prixfixe.routines.service import Routines
from prixfixe.routines.spec import Routine
from prixfixe.schema import model_schema, shape_text

log = logging.getLogger(__name__)

Format = Literal["markdown", "data", "both", "curated"]
#: The most steps one inline routine may hold.
MAX_INLINE_STEPS = 50


def _pins() -> Any:
    # Explained in each tool's usage (tool_describe): every listed byte costs every session.
    return Field(default_factory=dict)


PIN_USAGE = (
    "schema_major pins the data majors your code expects, {step type or 'report': major}; "
    "a report whose data has another major is refused with an error instead of returned."
)


class ListInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    format: Format = "markdown"
    schema_major: dict[str, int] = _pins()


class StepRunInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str = Field(description="Step type, from steps_list.")
    params: dict[str, Any] = Field(default_factory=dict)
    format: Format = "markdown"
    schema_major: dict[str, int] = _pins()


class StepsListInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str | None = Field(default=None, description="One type; omit for all.")


class RoutinesOutput(BaseModel):
    routines: list[dict[str, Any]]


class StepTypesOutput(BaseModel):
    step_types: list[dict[str, Any]]


class ReportGetInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    generation: archive.ReportGeneration | Literal["latest"] = "latest"
    routine: str | None = None
    format: Format = "markdown"
    schema_major: dict[str, int] = _pins()


class EvalInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    steps: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_INLINE_STEPS,
        description="As in config: {type, name?, parallel?, timeout?, ...params}.",
    )
    format: Format = "markdown"
    schema_major: dict[str, int] = _pins()


# -- results --------------------------------------------------------------------------------


def curated_text(report: Report, curator: Curator, step_types: Mapping[str, StepType]) -> str:
    """A report as a model reads it curated: a heading per step and its data's entries."""
    lines = [f"{title(report)}: {report.status} (generation {report.generation})"]
    for step in report.steps:
        lines.append(f"## {step.name} ({step.type}): {step.status}")
        if step.error is not None:
            lines.append(f"error: {step.error.message}")
        if step.data is None:
            continue
        step_type = step_types.get(step.type)
        schema = data_schema(step_type) if step_type is not None else None
        lines.append(curator.data(step.data, f"step:{step.type}", schema).text() or "(no data)")
    return "\n".join(lines)


def report_result(stored: StoredReport, fmt: Format, ctx: ToolContext) -> types.CallToolResult:
    data = stored.report.model_dump(mode="json")
    blocks: list[types.ContentBlock] = []
    if fmt == "curated":
        curator = curator_for(ctx.app.registry)
        text = curated_text(stored.report, curator, ctx.app.registry.step_types)
        blocks.append(types.TextContent(type="text", text=text))
    if fmt in ("markdown", "both"):
        blocks.append(types.TextContent(type="text", text=stored.markdown))
    if fmt in ("data", "both"):
        compact = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        blocks.append(types.TextContent(type="text", text=compact))
    return types.CallToolResult(content=blocks, structured_content=data)


def _routines(ctx: ToolContext) -> Routines:
    return ctx.app.routines


def _progress(ctx: ToolContext) -> OnStep | None:
    """Progress per finished step, when the request can carry it (the SDK sends nothing
    unless the client asked with a progress token)."""
    request = ctx.request
    if request is None:
        return None

    async def on_step(done: int, total: int, result: StepResult) -> None:
        message = f"{result.name}: {result.status}"
        try:
            await request.session.report_progress(done, total, message)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            log.debug("progress for step %s not delivered: the client is gone", result.name)

    return on_step


async def _run(ctx: ToolContext, routine: Routine, pins: dict[str, int] | None) -> StoredReport:
    return await _routines(ctx).run(
        routine,
        lambda: ctx.app.store,
        pins=pins,
        on_step=_progress(ctx),
        resources=ctx.app.read_resource_text,
        servers=ctx.app.call_server_tool,
        programs=ctx.app.run_program,
    )


# -- handlers -------------------------------------------------------------------------------


async def routine_list(ctx: ToolContext, args: ListInput) -> ToolResult:
    routines = _routines(ctx).routines
    rows = [
        {
            "name": r.name,
            "description": r.description,
            "source": r.source,
            "steps": [
                {"name": s.name, "type": s.type.name, "parallel": s.parallel} for s in r.steps
            ],
        }
        for r in routines.values()
    ]
    lines = ["Routines (run one with routine_run):"]
    for r in routines.values():
        steps = ", ".join(f"{s.name} ({s.type.name})" for s in r.steps)
        about = f": {r.description}" if r.description else ""
        lines.append(f"- {r.name} [{r.source}]{about} Steps: {steps}.")
    return ToolResult(text="\n".join(lines), data=RoutinesOutput(routines=rows))


async def routine_run(ctx: ToolContext, args: RunInput) -> types.CallToolResult:
    routine = _routines(ctx).get(args.name)
    return report_result(await _run(ctx, routine, args.schema_major), args.format, ctx)


async def step_run(ctx: ToolContext, args: StepRunInput) -> types.CallToolResult:
    routine = _routines(ctx).single(args.type, args.params)
    return report_result(await _run(ctx, routine, args.schema_major), args.format, ctx)


async def routine_eval(ctx: ToolContext, args: EvalInput) -> types.CallToolResult:
    routine = _routines(ctx).inline(args.steps)
    return report_result(await _run(ctx, routine, args.schema_major), args.format, ctx)


async def report_get(ctx: ToolContext, args: ReportGetInput) -> types.CallToolResult:
    generation = None if args.generation == "latest" else args.generation
    stored = await _routines(ctx).report(
        lambda: ctx.app.store, generation, args.routine, args.schema_major
    )
    return report_result(stored, args.format, ctx)


async def steps_list(ctx: ToolContext, args: StepsListInput) -> ToolResult:
    from prixfixe.errors import RoutineError

    types_ = _routines(ctx).step_types
    if args.type is not None and args.type not in types_:
        raise RoutineError(f"unknown step type {args.type!r} (step types: {', '.join(types_)})")
    chosen = [types_[args.type]] if args.type else list(types_.values())
    rows = [
        {
            "type": t.name,
            "description": t.description,
            "version": t.version,
            "programs": list(t.programs)
            or (["(chosen by its params)"] if t.commands_from_params else []),
            "command_lines": [c.show() for c in t.commands]
            + (["(command lines its params choose)"] if t.commands_from_params else []),
            "config_only": list(t.config_only),
            "hosts": list(t.hosts)
            + (["(named in the configuration)"] if t.hosts_from_params else []),
            "params": model_schema(t.params_model),
            "data": data_schema(t),
            "plugin": t.owner,
        }
        for t in chosen
    ]
    lines = ["Step types (run one with step_run, several with routine_eval):"]
    for t in chosen:
        params = shape_text(model_schema(t.params_model)) or "none"
        data = shape_text(data_schema(t))
        lines.append(f"- {t.name} v{t.version}: {t.summary} Params: {params}. Data: {data}.")
    if any(has_dates(model_schema(t.params_model)) for t in chosen):
        zone = _routines(ctx).clock.name
        lines.append(f"Date params: {FORMS_SHORT} (resolved in {zone} on each run).")
    return ToolResult(text="\n".join(lines), data=StepTypesOutput(step_types=rows))


def _step_type_words(registry: Any) -> list[str]:
    """step_run is found by what each step type does: its name and its summary."""
    return [f"{t.name.replace('-', ' ')} {t.summary}" for t in registry.step_types.values()]


# -- registration ---------------------------------------------------------------------------

#: The tools that run step types: the capability index lists them beside each step type.
STEP_TOOLS = ("step_run", "routine_eval", "routine_run", "steps_list")


@hookimpl
def register_store_migrations(register: Callable[[StoreMigration], None]) -> None:
    for migration in archive.MIGRATIONS:
        register(migration)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    register(
        Tool(
            name="routine_list",
            title="List routines",
            description="List routines (configured step sequences, each making one report).",
            input_model=ListInput,
            output_model=RoutinesOutput,
            handler=routine_list,
            mutates=False,
            facet="routines",
            keywords=("routines", "dashboard", "morning", "list", "configured"),
            examples=("which routines are there", "what does the morning routine run"),
        )
    )
    register(
        Tool(
            name="routine_run",
            title="Run a routine",
            description="Run a routine (such as morning) and keep its report.",
            input_model=RunInput,
            output_model=Report,
            handler=routine_run,
            mutates=True,
            destructive=False,
            facet="core",
            keywords=(
                "routine",
                "run",
                "dashboard",
                "morning",
                "report",
                "status",
                "daily",
                "repositories",
                "commits",
                "unpushed",
                "git",
            ),
            examples=(
                "run my morning dashboard",
                "what is the state of my repos",
                "which repos have uncommitted changes",
            ),
            usage=(
                "Progress is sent per step when the request has a progress token; cancelling "
                "stops the remaining steps. The report's generation identifies it for "
                f"report_get. {PIN_USAGE}"
            ),
        )
    )
    register(
        Tool(
            name="step_run",
            title="Run a step",
            description="Run one step type with params, as a one-step routine.",
            input_model=StepRunInput,
            search_words=_step_type_words,
            output_model=Report,
            handler=step_run,
            mutates=True,
            destructive=False,
            facet="routines",
            keywords=("step", "run", "git", "status", "deadline", "countdown", "board"),
            examples=("check git status of a repo", "how many days until a deadline"),
            usage=(
                "Params are the step type's, as steps_list shows them; a date param takes "
                f"{FORMS_SHORT}, resolved in the server's time zone on each run. {PIN_USAGE}"
            ),
        )
    )
    register(
        Tool(
            name="steps_list",
            title="List step types",
            description="List step types: params, data JSON Schema and schema version.",
            input_model=StepsListInput,
            output_model=StepTypesOutput,
            handler=steps_list,
            mutates=False,
            facet="routines",
            keywords=("step", "types", "schema", "version", "data", "contract"),
            examples=("which step types exist", "what data does git-status return"),
        )
    )
    register(
        Tool(
            name="report_get",
            title="Get a report",
            description="Fetch a kept report by generation (default: latest).",
            input_model=ReportGetInput,
            output_model=Report,
            handler=report_get,
            mutates=False,
            facet="routines",
            keywords=("report", "latest", "previous", "generation", "dashboard", "again"),
            examples=("show the last morning report", "what did the dashboard say"),
            usage=f"routine narrows it to one routine's reports. {PIN_USAGE}",
        )
    )
    register(
        Tool(
            name="routine_eval",
            title="Run inline steps",
            description=(
                "Run a list of steps as a routine, exactly as if configured. Only programs "
                "already granted may run."
            ),
            input_model=EvalInput,
            output_model=Report,
            handler=routine_eval,
            mutates=True,
            destructive=False,
            facet="routines",
            keywords=("routine", "inline", "steps", "evaluate", "adhoc", "compose"),
            examples=("run git-status and reminders together",),
            usage=(
                "Steps are tables as in a config file; a typo names the step and the key. "
                f"Credentials cannot be passed inline. {PIN_USAGE}"
            ),
        )
    )
