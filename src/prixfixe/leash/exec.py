"""The exec gate: the one way prixfixe starts a subprocess.

A step type declares the exact command lines it runs (`CommandLine`: a program and the shape
of every argument: a literal, a path slot, or a value slot with a pattern). The grant is a set
of command lines: by default exactly those of the configured steps, configured `[commands]`
and credential commands; `[leash] exec = [programs]` narrows it (it never widens it). A step
may run only an argv that matches one of its own declared command lines *and* the grant,
so a client choosing a step's params can fill slots, never add an option or pick a program.
Path slots are checked by the file gate. A refusal is an `ExecRefusedError` naming the
command line and the grant, raised before anything starts.

Children get a minimal environment (`leash.env`), never the server's. git runs defanged
(`leash.git`), because a repository's own config is untrusted.

Programs are compared by name as written: a bare name (`git`) is found on `PATH` when run; a
path (`./scripts/weather.sh`, `~/bin/x`) is made absolute against the directory of the config
that named it. Granting `python3 -c CODE` grants that code only; a configured command line is
granted exactly, argument for argument.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import anyio
import anyio.abc

from prixfixe.errors import ExecRefusedError, StepFailure
from prixfixe.secrets import Secret

if TYPE_CHECKING:
    from prixfixe.leash.fs import FsGate

#: The most stdout (and, separately, stderr) kept from one process; the rest is read and dropped.
MAX_OUTPUT_BYTES = 1_000_000

SlotKind = Literal["read-path", "write-path", "value"]


def program_key(program: str, base_dir: Path) -> str:
    """A program as the grant names it: a bare name as is, a path made absolute."""
    if "/" not in program and not program.startswith("~"):
        return program
    path = Path(program).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    return os.path.normpath(path)


@dataclass(frozen=True)
class Slot:
    """An argument the caller fills. A path slot takes an absolute path that does not start
    with `-` (checked against the file grant when the command runs, for reading or for
    writing); a value slot takes text its `pattern` matches in full (so a pattern that does not
    start with `-` never lets a filled slot become an option). Neither takes a NUL byte."""

    name: str
    kind: SlotKind
    pattern: str = ""

    def accepts(self, arg: str) -> bool:
        if not arg or "\0" in arg:
            return False
        if self.kind == "value":
            return re.fullmatch(self.pattern, arg) is not None
        return not arg.startswith("-") and os.path.isabs(arg)

    def show(self) -> str:
        return f"{{{self.name}}}" if self.kind != "value" else f"{{{self.name}:{self.pattern}}}"


def read_path(name: str) -> Slot:
    return Slot(name, "read-path")


def write_path(name: str) -> Slot:
    return Slot(name, "write-path")


def value(name: str, pattern: str) -> Slot:
    return Slot(name, "value", pattern)


Arg = str | Slot


@dataclass(frozen=True)
class CommandLine:
    """One command line a step may run: the program and each argument's shape."""

    program: str
    args: tuple[Arg, ...] = ()

    @classmethod
    def exact(cls, argv: Sequence[str], base_dir: Path) -> CommandLine:
        """A command line granted argument for argument (a configured script's)."""
        return cls(program_key(argv[0], base_dir), tuple(argv[1:]))

    def resolved(self, base_dir: Path) -> CommandLine:
        key = program_key(self.program, base_dir)
        return self if key == self.program else CommandLine(key, self.args)

    def match(self, program: str, args: Sequence[str]) -> dict[str, tuple[Slot, str]] | None:
        """Slot values by name when `program args` has this shape, else None."""
        if program != self.program or len(args) != len(self.args):
            return None
        filled: dict[str, tuple[Slot, str]] = {}
        for shape, arg in zip(self.args, args, strict=True):
            if isinstance(shape, Slot):
                if not shape.accepts(arg):
                    return None
                filled[shape.name] = (shape, arg)
            elif shape != arg:
                return None
        return filled

    def show(self) -> str:
        parts = [self.program, *(a.show() if isinstance(a, Slot) else a for a in self.args)]
        return " ".join(parts)

    @property
    def slots(self) -> tuple[Slot, ...]:
        return tuple(a for a in self.args if isinstance(a, Slot))


@dataclass(frozen=True)
class Grant:
    """The command lines subprocesses may run, and where that choice came from."""

    commands: frozenset[CommandLine]
    source: str
    #: Command lines granted to the credential resolver only, never to a step.
    credential_commands: frozenset[CommandLine] = field(default_factory=frozenset)

    @property
    def programs(self) -> frozenset[str]:
        return frozenset(c.program for c in self.commands | self.credential_commands)

    def allows(self, line: CommandLine) -> bool:
        return line in self.commands

    def allows_program(self, program: str) -> bool:
        return program in self.programs

    def describe(self) -> str:
        names = ", ".join(sorted(self.programs)) or "nothing"
        return f"[{names}] ({self.source})"

    def lines(self) -> list[str]:
        return sorted(c.show() for c in self.commands)


def make_grant(
    declared: Iterable[CommandLine],
    narrow: Sequence[str] | None,
    *,
    base_dir: Path,
    source: str,
    credential: Iterable[CommandLine] = (),
) -> Grant:
    """The declared command lines, narrowed to the programs `narrow` (`[leash] exec`) names."""
    lines, creds = frozenset(declared), frozenset(credential)
    if narrow is None:
        return Grant(lines, "the command lines configured steps declare", creds)
    allowed = {program_key(p, base_dir) for p in narrow}
    return Grant(
        frozenset(c for c in lines if c.program in allowed),
        f"configured steps' command lines, narrowed by {source}",
        frozenset(c for c in creds if c.program in allowed),
    )


@dataclass(frozen=True)
class Completed:
    """A finished process: exit status and decoded output (capped at `MAX_OUTPUT_BYTES`)."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    truncated: bool = False
    #: stdout as the process wrote it (`stdout` replaces bytes that are not UTF-8), for the
    #: gate's own git config scan, which compares names byte for byte. Empty in what a step
    #: gets: its output is redacted, and this copy would not be.
    stdout_bytes: bytes = dataclasses.field(default=b"", repr=False)


#: Called just before a process starts, with the argv it will run (audits and the red-team
#: tests watch spawns here, at the point of effect).
SpawnObserver = Callable[[tuple[str, ...]], None]
_spawn_observers: list[SpawnObserver] = []


def observe_spawns(observer: SpawnObserver) -> None:
    """Call `observer(argv)` for every process the gate starts from now on (for audits and
    the red-team tests, which assert at the point of effect)."""
    _spawn_observers.append(observer)


def unobserve_spawns(observer: SpawnObserver) -> None:
    with contextlib.suppress(ValueError):
        _spawn_observers.remove(observer)


class ExecGate:
    """Checks every command line against the step's declaration and the grant, then runs it
    with a minimal environment and a bounded, killable life."""

    def __init__(self, grant: Grant, env: Mapping[str, str], fs: FsGate | None = None) -> None:
        self.grant = grant
        self._env = dict(env)
        self.fs = fs

    def _not_granted(self, line: CommandLine, step: str) -> ExecRefusedError:
        return ExecRefusedError(
            f"step {step!r}: {line.show()!r} is not granted; the exec grant is "
            f"{self.grant.describe()}",
            program=line.program,
            grant=self.grant.lines(),
        )

    def granted(
        self, program: str, args: Sequence[str], *, step: str, declared: Iterable[CommandLine]
    ) -> tuple[CommandLine, dict[str, tuple[Slot, str]]]:
        """The step's granted command line `program args` matches, with its filled slots;
        an `ExecRefusedError` when it matches none of the step's own lines or none granted."""
        declared = tuple(declared)
        mine = [(c, f) for c in declared if (f := c.match(program, args)) is not None]
        if not mine:
            own = "; ".join(c.show() for c in declared) or "no command lines"
            shown = " ".join([program, *args])
            raise ExecRefusedError(
                f"step {step!r} ran {shown!r}, which is not one of the command lines it "
                f"declares ({own})",
                program=program,
                grant=self.grant.lines(),
            )
        for line, filled in mine:
            if self.grant.allows(line):
                return line, filled
        raise self._not_granted(mine[0][0], step)

    def check_declared(self, lines: Iterable[CommandLine], *, step: str) -> None:
        """Refuse a step before it starts when one of its command lines is not granted."""
        for line in lines:
            if not self.grant.allows(line):
                raise self._not_granted(line, step)

    def _check_paths(
        self, line: CommandLine, filled: dict[str, tuple[Slot, str]], step: str
    ) -> None:
        for slot, arg in filled.values():
            if slot.kind == "value":
                continue
            if self.fs is None:
                raise ExecRefusedError(
                    f"step {step!r}: {line.show()!r} takes a path, and no file grant is set",
                    program=line.program,
                    grant=self.grant.lines(),
                )
            self.fs.check(arg, write=slot.kind == "write-path", step=step)

    async def run(
        self,
        argv: Sequence[str],
        *,
        step: str,
        declared: Iterable[CommandLine],
        base_dir: Path,
        cwd: Path | None = None,
        env: Mapping[str, str | Secret] | None = None,
        input: bytes | None = None,
    ) -> Completed:
        """Run `argv` to completion. Cancellation (a timeout, a cancelled request) kills the
        process and everything it started, then re-raises."""
        if not argv:
            raise StepFailure(f"step {step!r}: empty command", kind="error")
        key = program_key(argv[0], base_dir)
        declared = tuple(declared)
        line, filled = self.granted(key, argv[1:], step=step, declared=declared)
        self._check_paths(line, filled, step)
        return await self._start(
            key, argv, step=step, base_dir=base_dir, cwd=cwd, env=env, input=input
        )

    async def run_credential(self, argv: Sequence[str], *, step: str, base_dir: Path) -> Completed:
        """Run a `{cmd = ...}` credential's exact configured command line, which is granted to
        the credential resolver and nothing else."""
        line = CommandLine.exact(argv, base_dir)
        if line not in self.grant.credential_commands:
            raise ExecRefusedError(
                f"step {step!r}: credential command {line.show()!r} is not granted; the exec "
                f"grant is {self.grant.describe()}",
                program=line.program,
                grant=self.grant.lines(),
            )
        # Not redacted: this output is the credential, registered once it is resolved.
        return await self._start(line.program, argv, step=step, base_dir=base_dir, redact=False)

    async def _start(
        self,
        key: str,
        argv: Sequence[str],
        *,
        step: str,
        base_dir: Path,
        cwd: Path | None = None,
        env: Mapping[str, str | Secret] | None = None,
        input: bytes | None = None,
        redact: bool = True,
    ) -> Completed:
        from prixfixe.leash import env as child

        child_env = child.minimal(self._env)
        for name, val in (env or {}).items():
            child_env[name] = val.reveal() if isinstance(val, Secret) else val
        executable = _locate(key, child_env.get("PATH"), step)
        command = [executable, *argv[1:]]
        if os.path.basename(key) == "git":
            from prixfixe.leash import git

            async def scan(scan_argv: Sequence[str], scan_env: dict[str, str]) -> Completed:
                return await _run(
                    tuple([executable, *scan_argv[1:]]),
                    tuple(scan_argv),
                    cwd or base_dir,
                    scan_env,
                    None,
                    step,
                )

            command, child_env = await git.prepare(command, child_env, scan)
        done = await _run(tuple(command), tuple(argv), cwd or base_dir, child_env, input, step)
        if not redact:
            return done
        # Masked here, before any step cuts the text: half a credential is no longer one the
        # redactor can recognise.
        from prixfixe.leash.redact import REDACTOR

        return dataclasses.replace(
            done,
            stdout=REDACTOR.redact(done.stdout),
            stderr=REDACTOR.redact(done.stderr),
            stdout_bytes=b"",
        )

    async def open_server(
        self,
        argv: Sequence[str],
        *,
        base_dir: Path,
        cwd: Path | None = None,
        env: Mapping[str, str | Secret] | None = None,
    ) -> anyio.abc.Process:
        """Start a mounted MCP server: its configured command line exactly as granted, with a
        minimal environment plus `env` (its own resolved references) and its stdin, stdout and
        stderr piped, in its own process group. The caller owns the process and ends it with
        `kill_group`; its errors name the server, these do not."""
        if not argv:
            raise StepFailure("empty command", kind="error")
        line = CommandLine.exact(argv, base_dir)
        if not self.grant.allows(line):
            raise ExecRefusedError(
                f"{line.show()!r} is not granted; the exec grant is {self.grant.describe()}",
                program=line.program,
                grant=self.grant.lines(),
            )
        from prixfixe.leash import env as child

        child_env = child.for_server(self._env)
        for name, val in (env or {}).items():
            child_env[name] = val.reveal() if isinstance(val, Secret) else val
        executable = (
            line.program
            if "/" in line.program
            else shutil.which(line.program, path=child_env.get("PATH"))
        )
        if executable is None or not os.path.exists(executable):
            raise StepFailure(
                f"program {line.program!r} was not found"
                + ("" if "/" in line.program else " on PATH (is it installed?)"),
                kind="program-missing",
            )
        command = (executable, *argv[1:])
        workdir = cwd or base_dir
        if any("\0" in part for part in (*command, str(workdir))):
            raise StepFailure("a NUL character in its command", kind="error")
        for observer in list(_spawn_observers):
            observer(command)
        try:
            return await anyio.open_process(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=workdir,
                env=child_env,
                start_new_session=True,
            )
        except OSError as exc:
            raise StepFailure(
                f"could not start {argv[0]!r} in {str(workdir)!r}: {exc.strerror or exc}",
                kind="program-missing",
            ) from None


def kill_group(process: anyio.abc.Process) -> None:
    """Kill a process the gate started and everything it started (its process group)."""
    _kill_group(process)


def _locate(program: str, path: str | None, step: str) -> str:
    if "/" in program:
        if not os.path.exists(program):
            raise StepFailure(
                f"step {step!r}: program {program!r} does not exist", kind="program-missing"
            )
        return program
    found = shutil.which(program, path=path)
    if found is None:
        raise StepFailure(
            f"step {step!r}: program {program!r} was not found on PATH (is it installed?)",
            kind="program-missing",
        )
    return found


async def _run(
    command: tuple[str, ...],
    argv: tuple[str, ...],
    cwd: Path,
    env: dict[str, str],
    input: bytes | None,
    step: str,
) -> Completed:
    if any("\0" in part for part in (*command, str(cwd))):
        # The OS cannot take it; say so instead of a ValueError from deep in subprocess.
        raise StepFailure(
            f"step {step!r}: a NUL character in its command line or working directory",
            kind="error",
        )
    if cwd.exists() and not cwd.is_dir():
        raise StepFailure(
            f"step {step!r}: working directory {str(cwd)!r} is not a directory", kind="not-found"
        )
    for observer in list(_spawn_observers):
        observer(command)
    try:
        process = await anyio.open_process(
            command,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            # Its own process group, so a timeout kills what it started too.
            start_new_session=True,
        )
    except FileNotFoundError:
        if not cwd.is_dir():
            raise StepFailure(
                f"step {step!r}: working directory {str(cwd)!r} does not exist", kind="not-found"
            ) from None
        raise StepFailure(
            f"step {step!r}: could not start {argv[0]!r}", kind="program-missing"
        ) from None
    except PermissionError:
        raise StepFailure(
            f"step {step!r}: {argv[0]!r} is not executable", kind="program-missing"
        ) from None
    out, err = bytearray(), bytearray()
    truncated = False

    async def drain(stream: anyio.abc.ByteReceiveStream | None, into: bytearray) -> None:
        nonlocal truncated
        if stream is None:
            return
        async for chunk in stream:
            room = MAX_OUTPUT_BYTES - len(into)
            if room > 0:
                into += chunk[:room]
            if len(chunk) > room:
                truncated = True

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(drain, process.stdout, out)
            tg.start_soon(drain, process.stderr, err)
            if input is not None and process.stdin is not None:
                await process.stdin.send(input)
                await process.stdin.aclose()
        returncode = await process.wait()
    except BaseException:
        with anyio.CancelScope(shield=True):
            _kill_group(process)
            await process.wait()
            await process.aclose()
        raise
    await process.aclose()
    return Completed(
        argv=argv,
        returncode=returncode,
        stdout=out.decode("utf-8", errors="replace"),
        stderr=err.decode("utf-8", errors="replace"),
        truncated=truncated,
        stdout_bytes=bytes(out),
    )


def _kill_group(process: anyio.abc.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            process.kill()
