"""The routine engine: batches, timeouts, soft failures, progress and cancellation.

Steps run in config order; a contiguous run of `parallel = true` steps is one batch whose
steps run concurrently, and the report keeps config order whatever finishes first. A step that
fails — a refused program, a timeout, a crash, data that breaks its own schema — becomes a
failed entry in the report and the routine goes on. Only a fault of the run itself raises: an
unknown routine, invalid steps, or a run the exec gate refuses entirely. Cancelling the run
(the client cancelled the request, a person pressed Ctrl-C) stops the running steps, kills
their processes and starts no more.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ValidationError

from prixfixe.core.calls import PluginCrash, call_plugin
from prixfixe.dates import ResolvedDate
from prixfixe.declarations.steps import (
    ProgramRunner,
    ResourceReader,
    ServerToolCaller,
    StepContext,
    StepOutput,
)
from prixfixe.errors import PrixfixeError, RoutineError, StepFailure
from prixfixe.leash import Completed, ExecGate
from prixfixe.leash.fs import FsGate
from prixfixe.leash.net import NetGate
from prixfixe.routines import credentials
from prixfixe.routines.report import REPORT_VERSION, Failure, Report, StepResult, overall
from prixfixe.routines.spec import Routine, StepCall
from prixfixe.secrets import Secret
from prixfixe.store.api import Store

#: Called as each step ends: (steps done, steps in all, that step's result).
OnStep = Callable[[int, int, StepResult], Awaitable[None]]


@dataclass(frozen=True)
class Outcome:
    """A finished run before it is kept: the report (generation 0 until stored) and each
    step's markdown section."""

    report: Report
    sections: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class RunContext:
    """What every step of one run shares, built once per run: the exec gate and the file and
    network gates, the server's environment, the store, the day steps count from, how a step
    reads a resource, calls a mounted server's tool and runs a program, and the
    configuration's named command lines (`[commands]`)."""

    gate: ExecGate
    env: Mapping[str, str]
    store: Callable[[], Store]
    fs: FsGate
    net: NetGate
    today: dt.date = field(default_factory=dt.date.today)
    resources: ResourceReader | None = None
    servers: ServerToolCaller | None = None
    programs: ProgramRunner | None = None
    named: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: The folder of the configuration that defined `named`: where those commands run.
    commands_dir: Path | None = None
    semantic: bool = False  # `[search] knowledge_semantic`


def refusals(routine: Routine, gate: ExecGate) -> dict[str, list[str]]:
    """Each step's command lines the grant does not hold (steps with none left out)."""
    out: dict[str, list[str]] = {}
    for step in routine.steps:
        missing = [c.show() for c in step.commands if not gate.grant.allows(c)]
        missing += [
            c.show() for c in step.credential_commands if c not in gate.grant.credential_commands
        ]
        if missing:
            out[step.name] = missing
    return out


def check_runnable(routine: Routine, gate: ExecGate) -> None:
    """Refuse the whole run when the gate would refuse every one of its steps."""
    refused = refusals(routine, gate)
    if routine.steps and len(refused) == len(routine.steps):
        listing = "; ".join(f"step {s!r} needs {', '.join(p)}" for s, p in refused.items())
        inline = "; inline steps may run only command lines the configuration grants" * (
            routine.source == "inline"
        )
        raise RoutineError(
            f"the exec gate refuses every step of this run: {listing}. The grant is "
            f"{gate.grant.describe()}{inline}",
            refused=refused,
        )


async def run(routine: Routine, context: RunContext, on_step: OnStep | None = None) -> Outcome:
    check_runnable(routine, context.gate)
    started = dt.datetime.now(dt.UTC)
    clock = time.monotonic()
    total = len(routine.steps)
    results: dict[int, tuple[StepResult, str]] = {}
    index = {id(step): i for i, step in enumerate(routine.steps)}

    async def one(call: StepCall) -> None:
        outcome = await run_step(call, context)
        results[index[id(call)]] = outcome
        if on_step is not None:
            await on_step(len(results), total, outcome[0])

    for batch in routine.batches():
        if len(batch) == 1:
            await one(batch[0])
            continue
        async with anyio.create_task_group() as tg:
            for call in batch:
                tg.start_soon(one, call)

    ordered = [results[i] for i in range(total)]
    steps = [r for r, _ in ordered]
    report = Report(
        version=REPORT_VERSION,
        routine=routine.name,
        generation=0,
        status=overall(steps),
        started=started.isoformat(timespec="seconds").replace("+00:00", "Z"),
        ms=round((time.monotonic() - clock) * 1000),
        steps=steps,
    )
    return Outcome(report, tuple(s for _, s in ordered))


async def run_step(call: StepCall, context: RunContext) -> tuple[StepResult, str]:
    """Run one step to a result: its data, or its failure as data. Only cancellation escapes."""
    base: dict[str, Any] = {"name": call.name, "type": call.type.name, "version": call.type.version}
    if call.type.title and call.name == call.type.name:
        base["title"] = call.type.title
    try:
        with anyio.fail_after(call.timeout):
            data, markdown = await _attempt(call, context)
    except TimeoutError:
        failure = Failure(
            kind="timeout",
            message=f"step {call.name!r} ({call.type.name}) did not finish within "
            f"{call.timeout:g} s and was stopped (set its timeout = SECONDS to allow more)",
        )
    except StepFailure as exc:
        failure = Failure(kind=exc.kind, message=exc.message)
    except PrixfixeError as exc:
        failure = Failure(kind="error", message=f"step {call.name!r}: {exc.message}")
    except PluginCrash as crash:
        failure = Failure(
            kind="crash", message=f"step {call.name!r} ({call.type.name}) crashed: {crash.reason}"
        )
    else:
        return StepResult(**base, status="ok", data=data), markdown
    return StepResult(**base, status="failed", error=failure), ""


async def _attempt(call: StepCall, context: RunContext) -> tuple[dict[str, Any], str]:
    gate, env = context.gate, context.env
    # The gate is asked before anything starts, so a refused step has no side effects.
    gate.check_declared(call.commands, step=call.name)
    params, dates = call.params_on(context.today)
    passed = {name: env[name] for name in call.type.env if name in env}
    secrets: dict[str, Secret] = {}
    for name, ref in call.secrets.items():
        secrets[name] = await credentials.resolve(
            name, ref, step=call.name, env=env, gate=gate, base_dir=call.base_dir
        )

    async def runner(
        argv: Sequence[str],
        *,
        cwd: Path | None,
        env: Mapping[str, str | Secret] | None,
        input: bytes | None,
    ) -> Completed:
        return await gate.run(
            argv,
            step=call.name,
            declared=call.commands,
            base_dir=call.base_dir,
            cwd=cwd,
            env=env,
            input=input,
        )

    ctx = StepContext(
        step=call.name,
        type=call.type.name,
        base_dir=call.base_dir,
        today=context.today,
        secrets=secrets,
        env=passed,
        owner=call.type.owner,
        runner=runner,
        store_opener=context.store,
        resource_reader=context.resources,
        server_caller=context.servers,
        program_runner=context.programs,
        fs=context.fs,
        net=context.net,
        commands=context.named,
        commands_dir=context.commands_dir,
        semantic=context.semantic,
    )
    # A step past its deadline is abandoned, not waited for: the run reports it and goes on.
    return await call_plugin(
        call.type.handler,
        ctx,
        params,
        what=f"step {call.name!r} ({call.type.name})",
        convert=lambda output: (_checked(call, output), _with_dates(output.markdown, dates)),
        abandon_on_cancel=True,
    )


def _with_dates(markdown: str, dates: Sequence[ResolvedDate]) -> str:
    """The step's markdown, and the days its relative date params named on this run."""
    if not dates:
        return markdown
    said = ", ".join(d.text() for d in dates)
    return f"{markdown.rstrip()}\n\n_Dates: {said}._" if markdown.strip() else f"_Dates: {said}._"


def _checked(call: StepCall, output: Any) -> dict[str, Any]:
    """The step's data, validated against its own data model: the contract is enforced here."""
    where = f"step {call.name!r} ({call.type.name})"
    if not isinstance(output, StepOutput):
        raise StepFailure(
            f"{where} returned {type(output).__name__}, not a StepOutput", kind="invalid-output"
        )
    model = call.type.data_model
    data = output.data
    try:
        if not isinstance(data, model):
            raw = data.model_dump(mode="json") if isinstance(data, BaseModel) else data
            data = model.model_validate(raw)
        dumped: dict[str, Any] = data.model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(data)"
        raise StepFailure(
            f"{where} returned data that breaks its schema {call.type.version}: {loc}: "
            f"{first['msg']}",
            kind="invalid-output",
        ) from None
    return dumped
