"""The exec gate: the one way prixfixe starts a subprocess.

The grant is a set of programs. By default it is exactly the programs the configured steps
declare; `[leash] exec = [...]` narrows it (it never widens it). Each step may run only what it
declared *and* the grant holds, so one step's grant is not another's. A refused program is a
`ExecRefusedError` naming the program and the grant.

Programs are compared by name as written: a bare name (`git`) is found on `PATH` when run; a
path (`./scripts/weather.sh`, `~/bin/x`) is made absolute against the directory of the config
that named it. Granting `python3` grants whatever `python3` can do: grant a script by its path
to grant only that script.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc

from prixfixe.errors import ExecRefusedError, StepFailure
from prixfixe.secrets import Secret

#: The most stdout (and, separately, stderr) kept from one process; the rest is read and dropped.
MAX_OUTPUT_BYTES = 1_000_000


def program_key(program: str, base_dir: Path) -> str:
    """A program as the grant names it: a bare name as is, a path made absolute."""
    if "/" not in program and not program.startswith("~"):
        return program
    path = Path(program).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    return os.path.normpath(path)


@dataclass(frozen=True)
class Grant:
    """The programs subprocesses may run, and where that choice came from."""

    programs: frozenset[str]
    source: str

    def allows(self, program: str) -> bool:
        return program in self.programs

    def describe(self) -> str:
        names = ", ".join(sorted(self.programs)) or "nothing"
        return f"[{names}] ({self.source})"


def make_grant(
    declared: Iterable[str], narrow: Sequence[str] | None, *, base_dir: Path, source: str
) -> Grant:
    """The declared programs, narrowed to `narrow` (`[leash] exec`) when that is given."""
    programs = frozenset(declared)
    if narrow is None:
        return Grant(programs, "the programs configured steps declare")
    allowed = {program_key(p, base_dir) for p in narrow}
    return Grant(programs & allowed, f"configured steps' programs, narrowed by {source}")


@dataclass(frozen=True)
class Completed:
    """A finished process: exit status and decoded output (capped at `MAX_OUTPUT_BYTES`)."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    truncated: bool = False


class ExecGate:
    """Checks every program against the grant, then runs it with a bounded, killable life."""

    def __init__(self, grant: Grant, env: Mapping[str, str]) -> None:
        self.grant = grant
        self._env = dict(env)

    def check(self, program: str, *, step: str, declared: Iterable[str]) -> None:
        """Refuse `program` unless the step declared it and the grant holds it."""
        declared = tuple(declared)
        if program not in declared:
            raise ExecRefusedError(
                f"step {step!r} ran program {program!r}, which it does not declare "
                f"(it declares: {', '.join(declared) or 'no programs'})",
                program=program,
                grant=sorted(self.grant.programs),
            )
        if not self.grant.allows(program):
            raise ExecRefusedError(
                f"step {step!r}: program {program!r} is not granted; the grant is "
                f"{self.grant.describe()}",
                program=program,
                grant=sorted(self.grant.programs),
            )

    async def run(
        self,
        argv: Sequence[str],
        *,
        step: str,
        declared: Iterable[str],
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
        self.check(key, step=step, declared=declared)
        child_env = dict(self._env)
        for name, value in (env or {}).items():
            child_env[name] = value.reveal() if isinstance(value, Secret) else value
        executable = _locate(key, child_env.get("PATH"), step)
        return await _run(
            (executable, *argv[1:]), tuple(argv), cwd or base_dir, child_env, input, step
        )


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
    )


def _kill_group(process: anyio.abc.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            process.kill()
