"""The routines of one app: configured and built-in routines, the exec gate, and running a
routine through to a kept report. The tools and the CLI both come through here."""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread

from prixfixe.config import LoadedConfig
from prixfixe.errors import RoutineError
from prixfixe.leash import ExecGate, make_grant
from prixfixe.routines import archive, engine
from prixfixe.routines.archive import StoredReport
from prixfixe.routines.contract import check_pins
from prixfixe.routines.report import REPORT_PIN, REPORT_VERSION
from prixfixe.routines.spec import STEP_ROUTINE, Routine, inline_routine, load_routines
from prixfixe.steps import ResourceReader, StepType
from prixfixe.store.api import Store

#: The plugin that owns the reports table (it declares the table's migrations).
REPORTS_OWNER = "prixfixe.default_plugins.routines"


@dataclass
class Routines:
    routines: dict[str, Routine]
    gate: ExecGate
    step_types: Mapping[str, StepType]
    cwd: Path
    env: Mapping[str, str]

    @classmethod
    def load(
        cls,
        config: LoadedConfig,
        step_types: Mapping[str, StepType],
        env: Mapping[str, str],
        cwd: Path,
    ) -> Routines:
        """Check every configured routine (a `ConfigError` names routine, step and key) and
        derive the grant: what their steps declare, narrowed by `[leash] exec`."""
        routines = load_routines(config, step_types, cwd)
        declared = [p for r in routines.values() for p in r.programs]
        base_dir = config.path.parent if config.path else cwd
        grant = make_grant(
            declared,
            config.model.leash.exec,
            base_dir=base_dir,
            source=f"[leash] exec in {config.path}",
        )
        return cls(routines, ExecGate(grant, env), step_types, cwd, env)

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
        return inline_routine(steps, self.step_types, self.cwd)

    def single(self, type_name: str, params: Mapping[str, Any]) -> Routine:
        if "type" in params:
            raise RoutineError("params: 'type' is the step type, given beside params")
        return inline_routine(
            [{**params, "type": type_name}], self.step_types, self.cwd, name=STEP_ROUTINE
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
    ) -> StoredReport:
        """Run `routine` and keep its report; a pin the data no longer meets refuses the run
        before anything starts. `today` is the date steps count from (default: today)."""
        self.check_pins(routine, pins)
        outcome = await engine.run(
            routine,
            gate=self.gate,
            env=self.env,
            store=store,
            on_step=on_step,
            today=today,
            resources=resources,
        )
        return await anyio.to_thread.run_sync(
            lambda: archive.save(
                store().slice(REPORTS_OWNER), outcome.report, outcome.sections, routine.note
            )
        )

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
