"""Routines as the engine runs them, built from `[routines.NAME]` tables or an inline list.

Every problem names the routine, the step and the key, so a typo in a config file reads as
`routine 'morning', step 'repos' (git-status): unknown key 'repso' (accepted: fetch, repos)`.
A config problem is a `ConfigError` (the file and key path are in it); an inline one
(`routine_eval`, `step_run`) is a `RoutineError` the caller sees as a tool error.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from prixfixe.config import COMMAND_NAME_PATTERN, LoadedConfig, StepConfig, config_key
from prixfixe.dates import ResolvedDate, has_dates, resolve_dates
from prixfixe.declarations.steps import StepType
from prixfixe.errors import ConfigError, RoutineError
from prixfixe.leash import program_key
from prixfixe.leash.exec import CommandLine
from prixfixe.schema import model_schema
from prixfixe.secrets import CredentialRef

#: Seconds a step may run when neither it nor its routine says otherwise.
DEFAULT_STEP_TIMEOUT = 60.0
ROUTINE_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
STEP_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: The routine name of a `routine_eval` report, and of a `step_run` one. Configured names
#: cannot take these forms.
INLINE_ROUTINE = "(inline)"
STEP_ROUTINE = "(step)"
MORNING = "morning"


@dataclass(frozen=True)
class StepCall:
    """One configured step: its type, validated params and how the engine runs it."""

    name: str
    type: StepType
    params: BaseModel
    parallel: bool
    timeout: float
    secrets: Mapping[str, CredentialRef]
    base_dir: Path
    #: Every command line it may run, programs as the grant names them (paths made absolute).
    commands: tuple[CommandLine, ...]
    #: Its `{cmd = ...}` credentials' command lines: run by the resolver only.
    credential_commands: tuple[CommandLine, ...] = ()
    #: The paths its params say it reads and writes (the file grant's defaults).
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    #: The hosts it connects to (the network grant's defaults).
    hosts: tuple[str, ...] = ()
    #: The params as given (JSON), kept when they hold relative dates (`tomorrow`): each run
    #: resolves them again against its own day. `params` has them as of loading, `dates` says
    #: which they were.
    relative: Mapping[str, Any] | None = None
    dates: tuple[ResolvedDate, ...] = ()

    @property
    def programs(self) -> tuple[str, ...]:
        lines = (*self.commands, *self.credential_commands)
        return tuple(dict.fromkeys(c.program for c in lines))

    def params_on(self, today: dt.date) -> tuple[BaseModel, tuple[ResolvedDate, ...]]:
        """The params on `today`: their relative dates resolved against it (a configured
        `tomorrow` is the day after each run, not after loading); a `RoutineError` if that day
        makes them invalid (a countdown's `start = "friday"` after its fixed end)."""
        if self.relative is None:
            return self.params, ()
        try:
            return _validated(self.type, self.relative, today, f"params on {today}")
        except _Problem as problem:
            raise RoutineError(problem.message) from None

    def summary(self) -> dict[str, Any]:
        dates = [{"key": d.path, "given": d.given, "date": d.date.isoformat()} for d in self.dates]
        return {
            "name": self.name,
            "type": self.type.name,
            "parallel": self.parallel,
            "timeout": self.timeout,
            "programs": list(self.programs),
            "command_lines": [c.show() for c in self.commands],
            "secrets": {k: v.describe() for k, v in self.secrets.items()},
            "params": self.params.model_dump(mode="json", exclude_defaults=True),
            **({"dates": dates} if dates else {}),
        }


@dataclass(frozen=True)
class Routine:
    name: str
    description: str
    steps: tuple[StepCall, ...]
    source: str
    #: Shown at the end of its markdown report (the built-in morning's pointer to a config).
    note: str = ""

    def batches(self) -> list[tuple[StepCall, ...]]:
        """Contiguous `parallel` steps form one batch; every other step is a batch of one."""
        out: list[list[StepCall]] = []
        for step in self.steps:
            if step.parallel and out and out[-1][-1].parallel:
                out[-1].append(step)
            else:
                out.append([step])
        return [tuple(b) for b in out]

    @property
    def programs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for s in self.steps for p in s.programs))

    @property
    def commands(self) -> tuple[CommandLine, ...]:
        return tuple(dict.fromkeys(c for s in self.steps for c in s.commands))


@dataclass
class _Problem(Exception):
    key: str  # relative to the step: "" for the step itself, else "repos", "secrets.TOKEN"
    message: str
    index: int = 0
    routine: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _iso(value: object) -> str:
    """TOML's dates and times as JSON text (ISO 8601), the form params models read."""
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not a config value")


def _params_problem(err: Mapping[str, Any], model: type[BaseModel]) -> tuple[str, str]:
    key = config_key(err["loc"])
    kind = err["type"]
    accepted = ", ".join(sorted(model.model_fields)) or "none"
    if kind == "extra_forbidden":
        hint = difflib.get_close_matches(str(err["loc"][-1]), list(model.model_fields), n=1)
        mean = f"; did you mean {hint[0]!r}?" if hint else ""
        return key, f"unknown key {key!r}{mean} (accepted: {accepted})"
    if kind == "missing":
        info = model.model_fields.get(str(err["loc"][0]))
        desc = f": {info.description}" if info is not None and info.description else ""
        return key, f"missing required key {key!r}{desc}"
    got = err.get("input")
    shown = repr(got) if len(repr(got)) <= 60 else repr(got)[:57] + "..."
    return key, f"key {key!r}: {err['msg'][0].lower()}{err['msg'][1:]} (got {shown})"


@lru_cache(maxsize=256)
def _date_schema(model: type[BaseModel]) -> dict[str, Any] | None:
    """A params model's schema when it has date fields (cached; not to be mutated)."""
    schema = model_schema(model)
    return schema if has_dates(schema) else None


def _validated(
    type_: StepType, given: Mapping[str, Any], today: dt.date, where: str
) -> tuple[BaseModel, tuple[ResolvedDate, ...]]:
    """Params (JSON-ready) checked against the type's model, relative dates resolved against
    `today` first; raise `_Problem` naming every key that is wrong."""
    model_type = type_.params_model
    schema = _date_schema(model_type)
    resolution = resolve_dates(schema, given, today) if schema is not None else None
    if resolution is not None and resolution.problems:
        key = resolution.problems[0][0]
        said = "; ".join(f"key {path!r}: {message}" for path, message in resolution.problems)
        raise _Problem(key, f"{where}: {said}")
    try:
        # Strict, as JSON: a TOML date and an ISO date string mean the same day; a number is
        # not a date (pydantic would read it as a Unix time), "yes" is not a boolean.
        as_json = json.dumps(given if resolution is None else resolution.value, ensure_ascii=False)
        model = model_type.model_validate_json(as_json, strict=True)
    except ValidationError as exc:
        # A misspelt key usually also leaves a required one missing: name the typo first.
        errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        problems = [_params_problem(e, model_type) for e in errors]
        raise _Problem(problems[0][0], f"{where}: " + "; ".join(p[1] for p in problems)) from None
    return model, (() if resolution is None else resolution.resolved)


def parse_step(
    raw: StepConfig,
    *,
    step_types: Mapping[str, StepType],
    base_dir: Path,
    default_timeout: float | None,
    inline: bool,
    named: Mapping[str, tuple[str, ...]],
    today: dt.date | None = None,
) -> StepCall:
    """One step, checked against its type's params model; raise `_Problem` naming the key."""
    type_ = step_types.get(raw.type)
    label = raw.name or raw.type
    if type_ is None:
        hint = difflib.get_close_matches(raw.type, list(step_types), n=1)
        mean = f"; did you mean {hint[0]!r}?" if hint else ""
        raise _Problem(
            "type",
            f"step {label!r}: unknown step type {raw.type!r}{mean} (step types: "
            f"{', '.join(step_types) or 'none'}; see steps_list or prixfixe steps list)",
        )
    name = raw.name or raw.type
    where = f"step {name!r} ({raw.type})"
    if not STEP_NAME_PATTERN.match(name):
        raise _Problem(
            "name",
            f"{where}: step names are 1-64 letters, digits, '_', '-' and '.', starting with a "
            "letter or digit",
        )
    if inline and raw.secrets:
        raise _Problem(
            "secrets",
            f"{where}: credentials are configured in a routine, not passed inline",
        )
    params = dict(raw.model_extra or {})
    chosen = [k for k in type_.config_only if k in params]
    if inline and chosen:
        names = ", ".join(sorted(named)) or "none are configured"
        raise _Problem(
            chosen[0],
            f"{where}: {', '.join(repr(k) for k in chosen)} can be set only in the "
            "configuration, never by a client; an inline step runs a command the "
            f"configuration names, with run = NAME ([commands]: {names})",
        )
    # TOML dates and times as ISO text: the JSON the params model reads.
    given = json.loads(json.dumps(params, default=_iso, ensure_ascii=False))
    model, dates = _validated(type_, given, today or dt.date.today(), where)
    try:
        commands = tuple(c.resolved(base_dir) for c in type_.declared_commands(model, named))
    except KeyError as exc:
        names = ", ".join(sorted(named)) or "none are configured"
        raise _Problem(
            "run", f"{where}: no command named {exc.args[0]!r} in [commands] ({names})"
        ) from None
    credential_commands = tuple(
        CommandLine.exact(ref.argv(), base_dir)
        for ref in raw.secrets.values()
        if ref.cmd and ref.argv()
    )
    reads, writes = type_.declared_paths(model)
    return StepCall(
        name=name,
        type=type_,
        params=model,
        parallel=raw.parallel,
        timeout=raw.timeout or default_timeout or DEFAULT_STEP_TIMEOUT,
        secrets=dict(raw.secrets),
        base_dir=base_dir,
        commands=tuple(dict.fromkeys(commands)),
        credential_commands=tuple(dict.fromkeys(credential_commands)),
        reads=tuple(reads),
        writes=tuple(writes),
        hosts=type_.declared_hosts(model),
        relative=given if dates else None,
        dates=dates,
    )


def _steps(
    raws: Sequence[StepConfig],
    *,
    step_types: Mapping[str, StepType],
    base_dir: Path,
    default_timeout: float | None,
    inline: bool,
    named: Mapping[str, tuple[str, ...]],
    today: dt.date | None = None,
) -> tuple[StepCall, ...]:
    calls: list[StepCall] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raws):
        try:
            call = parse_step(
                raw,
                step_types=step_types,
                base_dir=base_dir,
                default_timeout=default_timeout,
                inline=inline,
                named=named,
                today=today,
            )
        except _Problem as problem:
            problem.index = index
            raise
        if call.name in seen:
            raise _Problem(
                "name",
                f"step name {call.name!r} is used by steps [{seen[call.name]}] and [{index}]; "
                "give each step its own name",
                index=index,
            )
        seen[call.name] = index
        calls.append(call)
    return tuple(calls)


def load_commands(config: LoadedConfig, cwd: Path) -> dict[str, tuple[str, ...]]:
    """The configuration's `[commands]`: name to argv, the program as the grant names it."""
    base_dir = config.path.parent if config.path else cwd
    source = str(config.path) if config.path else "built-in defaults"
    named: dict[str, tuple[str, ...]] = {}
    for name, command in config.model.commands.items():
        key = f"commands.{name}"
        if not re.match(COMMAND_NAME_PATTERN, name):
            raise ConfigError(
                f"command name {name!r}: names are lowercase letters, digits, '_', '-' and "
                "'.', starting with a letter",
                file=source,
                key=key,
            )
        try:
            argv = shlex.split(command) if isinstance(command, str) else list(command)
        except ValueError as exc:
            raise ConfigError(
                f"command {name!r} cannot be split: {exc}", file=source, key=key
            ) from None
        if not argv or not argv[0]:
            raise ConfigError(f"command {name!r} is empty", file=source, key=key)
        named[name] = (program_key(argv[0], base_dir), *argv[1:])
    return named


def load_routines(
    config: LoadedConfig,
    step_types: Mapping[str, StepType],
    cwd: Path,
    named: Mapping[str, tuple[str, ...]] | None = None,
    *,
    today: dt.date | None = None,
) -> dict[str, Routine]:
    """Every configured routine, plus the built-in `morning` unless the config has one;
    `today` is what relative dates in params are checked against (each run resolves them
    again)."""
    named = load_commands(config, cwd) if named is None else named
    base_dir = config.path.parent if config.path else cwd
    source = str(config.path) if config.path else "built-in defaults"
    routines: dict[str, Routine] = {}
    for name, spec in config.model.routines.items():
        if not ROUTINE_NAME_PATTERN.match(name):
            raise ConfigError(
                f"routine name {name!r}: names are lowercase letters, digits, '_' and '-', "
                "starting with a letter",
                file=source,
                key=f"routines.{name}",
            )
        try:
            steps = _steps(
                spec.steps,
                step_types=step_types,
                base_dir=base_dir,
                default_timeout=spec.timeout,
                inline=False,
                named=named,
                today=today,
            )
        except _Problem as problem:
            key = f"routines.{name}.steps[{problem.index}]"
            raise ConfigError(
                f"routine {name!r}, {problem.message}",
                file=source,
                key=f"{key}.{problem.key}" if problem.key else key,
            ) from None
        routines[name] = Routine(name, spec.description, steps, source)
    if MORNING not in routines:
        routines[MORNING] = builtin_morning(step_types, cwd)
    return routines


def inline_routine(
    raws: Sequence[Mapping[str, Any]],
    step_types: Mapping[str, StepType],
    cwd: Path,
    *,
    name: str = INLINE_ROUTINE,
    named: Mapping[str, tuple[str, ...]] | None = None,
    today: dt.date | None = None,
) -> Routine:
    """A routine given as a list of step tables (`routine_eval`), checked like a config one."""
    parsed: list[StepConfig] = []
    for index, raw in enumerate(raws):
        if not isinstance(raw, Mapping):
            raise RoutineError(f"steps[{index}]: a step is an object with a 'type' key")
        try:
            parsed.append(StepConfig.model_validate(raw))
        except ValidationError as exc:
            err = exc.errors()[0]
            key = config_key(err["loc"])
            label = raw.get("name") or raw.get("type") or f"[{index}]"
            raise RoutineError(
                f"steps[{index}].{key}: step {label!r}: {err['msg']}",
                key=f"steps[{index}].{key}",
            ) from None
    try:
        steps = _steps(
            parsed,
            step_types=step_types,
            base_dir=cwd,
            default_timeout=None,
            inline=True,
            named=named or {},
            today=today,
        )
    except _Problem as problem:
        key = f"steps[{problem.index}]" + (f".{problem.key}" if problem.key else "")
        raise RoutineError(f"{key}: {problem.message}", key=key) from None
    if not steps:
        raise RoutineError("steps: give at least one step")
    return Routine(name, "", steps, "inline")


def in_git_worktree(path: Path) -> bool:
    """Whether `path` is inside a git work tree, judged from the file system (no subprocess)."""
    return any((candidate / ".git").exists() for candidate in (path, *path.parents))


def builtin_morning(step_types: Mapping[str, StepType], cwd: Path) -> Routine:
    """The morning routine with no configuration: the working directory's git status when it
    is a repository, the store's reminders, deadlines and countdowns, and where to go next."""
    raws: list[dict[str, Any]] = []
    if in_git_worktree(cwd) and "git-status" in step_types:
        raws.append({"type": "git-status", "name": "git", "repos": [str(cwd)]})
    for type_name in ("reminders", "deadline-calc", "countdown-calc"):
        if type_name in step_types:
            raws.append({"type": type_name})
    parsed = [StepConfig.model_validate(r) for r in raws]
    steps = _steps(
        parsed, step_types=step_types, base_dir=cwd, default_timeout=None, inline=False, named={}
    )
    note = (
        "This is the built-in morning routine: no `[routines.morning]` is configured. To add "
        "your repositories, task board and scripts, run `prixfixe init` (a commented starter "
        "configuration, where prixfixe finds it from any folder) and edit it; "
        "`prixfixe run morning --dry-run` shows what it would run."
    )
    return Routine(
        MORNING,
        "Built-in: git status here, reminders, deadlines and countdowns from the store.",
        steps,
        "built-in",
        note=note,
    )
