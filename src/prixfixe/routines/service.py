"""The routines of one app: configured and built-in routines, the exec gate, and running a
routine through to a kept report. The tools and the CLI both come through here."""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread

from prixfixe.config import LoadedConfig, ReportsConfig
from prixfixe.dates import Clock, configured_clock, local_clock
from prixfixe.declarations.steps import ProgramRunner, ResourceReader, ServerToolCaller, StepType
from prixfixe.errors import RoutineError
from prixfixe.leash import ExecGate, policy
from prixfixe.leash.exec import CommandLine
from prixfixe.leash.fs import FsGate
from prixfixe.leash.net import NetGate
from prixfixe.routines import REPORTS_OWNER as REPORTS_OWNER
from prixfixe.routines import archive, engine
from prixfixe.routines.archive import StoredReport
from prixfixe.routines.contract import check_pins
from prixfixe.routines.report import REPORT_PIN, REPORT_VERSION, Report
from prixfixe.routines.spec import (
    STEP_ROUTINE,
    Routine,
    inline_routine,
    load_commands,
    load_routines,
)
from prixfixe.store.api import Store


@dataclass
class Routines:
    routines: dict[str, Routine]
    gate: ExecGate
    step_types: Mapping[str, StepType]
    cwd: Path
    env: Mapping[str, str]
    leash: policy.Leash
    #: The configuration's `[commands]`: the only command lines an inline step may name.
    named: Mapping[str, tuple[str, ...]]
    fs: FsGate
    net: NetGate
    #: `[reports]`: how many reports are kept, and for how long.
    reports: ReportsConfig = field(default_factory=ReportsConfig)
    #: `[search] knowledge_semantic`: searches steps run (`kb-search`) fuse dense embeddings.
    semantic: bool = False
    #: Which day it is (`[time] zone`, `PRIXFIXE_TZ`): what steps count from and what
    #: relative dates in params (`tomorrow`) are resolved against.
    clock: Clock = field(default_factory=local_clock)
    #: The folder of the configuration that defined `named`: where a named command runs,
    #: for a configured step and an inline one alike (None: each step's base directory).
    commands_dir: Path | None = None

    @classmethod
    def load(
        cls,
        config: LoadedConfig,
        step_types: Mapping[str, StepType],
        env: Mapping[str, str],
        cwd: Path,
    ) -> Routines:
        """Check every configured routine (a `ConfigError` names routine, step and key) and
        derive the leash: what their steps declare, overridden by `[leash]` and
        `PRIXFIXE_LEASH`."""
        clock = configured_clock(config.model.time.zone, env, file=config.source)
        named = load_commands(config, cwd)
        routines = load_routines(config, step_types, cwd, named, today=clock.today())
        base_dir = config.path.parent if config.path else cwd
        steps = [s for r in routines.values() for s in r.steps]
        declared = policy.Declared(
            commands=(
                *(c for s in steps for c in s.commands),
                *(CommandLine.exact(argv, base_dir) for argv in named.values()),
            ),
            credential_commands=tuple(c for s in steps for c in s.credential_commands),
            reads=tuple(policy.root_of(p, s.base_dir) for s in steps for p in s.reads),
            writes=tuple(policy.root_of(p, s.base_dir) for s in steps for p in s.writes),
            hosts=tuple(h for s in steps for h in s.hosts),
        )
        leash = policy.build(config, env, declared, base_dir=base_dir)
        fs = FsGate(leash.fs)
        net = NetGate(leash.net)
        gate = ExecGate(leash.exec, env, fs=fs)
        reports = config.model.reports
        semantic = config.model.search.knowledge_semantic
        return cls(
            routines,
            gate,
            step_types,
            cwd,
            env,
            leash,
            named,
            fs,
            net,
            reports,
            semantic,
            clock,
            commands_dir=base_dir,
        )

    # -- which routine ------------------------------------------------------------------------

    def get(self, name: str) -> Routine:
        found = self.routines.get(name)
        if found is None:
            hint = difflib.get_close_matches(name, list(self.routines), n=1)
            mean = f"; did you mean {hint[0]!r}?" if hint else ""
            raise RoutineError(
                f"unknown routine {name!r}{mean} (routines: {', '.join(self.routines)})",
                name=name,
            )
        return found

    def inline(self, steps: Sequence[Mapping[str, Any]]) -> Routine:
        return inline_routine(
            steps, self.step_types, self.cwd, named=self.named, today=self.clock.today()
        )

    def single(self, type_name: str, params: Mapping[str, Any]) -> Routine:
        if "type" in params:
            raise RoutineError("params: 'type' is the step type, given beside params")
        return inline_routine(
            [{**params, "type": type_name}],
            self.step_types,
            self.cwd,
            name=STEP_ROUTINE,
            named=self.named,
            today=self.clock.today(),
        )

    # -- running ------------------------------------------------------------------------------

    def check_pins(self, routine: Routine, pins: Mapping[str, int] | None) -> None:
        versions = {s.type.name: s.type.version for s in routine.steps}
        check_pins(pins, {REPORT_PIN: REPORT_VERSION, **versions}, self.step_types)

    async def run(
        self,
        routine: Routine,
        store: Callable[[], Store],
        *,
        pins: Mapping[str, int] | None = None,
        on_step: engine.OnStep | None = None,
        today: dt.date | None = None,
        resources: ResourceReader | None = None,
        servers: ServerToolCaller | None = None,
        programs: ProgramRunner | None = None,
    ) -> StoredReport:
        """Run `routine` and keep its report; a pin the data no longer meets refuses the run
        before anything starts. `today` is the date steps count from (default: today in the
        configured time zone)."""
        self.check_pins(routine, pins)
        if self.leash.valid_for_generation is not None:
            generation = await anyio.to_thread.run_sync(lambda: store().generation())
            self.leash.check_generation(generation)
        context = engine.RunContext(
            gate=self.gate,
            env=self.env,
            store=store,
            fs=self.fs,
            net=self.net,
            today=today or self.clock.today(),
            resources=resources,
            servers=servers,
            programs=programs,
            named=self.named,
            commands_dir=self.commands_dir,
            semantic=self.semantic,
        )
        outcome = await engine.run(routine, context, on_step)
        return await anyio.to_thread.run_sync(
            lambda: self._keep(store(), outcome.report, outcome.sections, routine.note)
        )

    def _keep(
        self, store: Store, report: Report, sections: Sequence[str], note: str
    ) -> StoredReport:
        """Keep the report (redacted), then prune what `[reports]` no longer keeps."""
        slice_ = store.slice(REPORTS_OWNER)
        stored = archive.save(slice_, report, sections, note)
        archive.prune(slice_, self.reports.keep, self.reports.max_age_days)
        return stored

    async def report(
        self,
        store: Callable[[], Store],
        generation: int | None,
        routine: str | None = None,
        pins: Mapping[str, int] | None = None,
    ) -> StoredReport:
        stored = await anyio.to_thread.run_sync(
            lambda: archive.load(store().slice(REPORTS_OWNER), generation, routine)
        )
        versions = {s.type: s.version for s in stored.report.steps}
        check_pins(pins, {REPORT_PIN: stored.report.version, **versions}, self.step_types)
        return stored
