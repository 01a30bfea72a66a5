"""The sandbox programs run in: pydantic-monty's pool of worker processes, its limits, and
whether it can run here at all.

CONTRACT: nothing is imported or spawned until a program runs (`Programs.session`); the pool
starts then, once, and `close` (called when the app stops serving) stops its workers. The
worker is the `monty` binary the `pydantic-monty-runtime` wheel installs: prixfixe's own
dependency, started with no command line a client chooses, so it does not pass the leash's
exec gate (what a program reaches, it reaches through tools, which do).
"""

from __future__ import annotations

import gc
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from prixfixe.errors import PrixfixeError, ToolRefusedError

if TYPE_CHECKING:
    from pydantic_monty import AsyncMonty, AsyncMontySession

    from prixfixe.config import ProgramsConfig

#: How to get the sandbox, said wherever it is missing.
FIX = "pip install 'prixfixe[programs]'"
#: Where the worker binary's wheel exists (pydantic-monty-runtime 1.4).
PLATFORMS = "Linux x86_64/aarch64 (glibc 2.28+), macOS arm64 and Windows"


@dataclass(frozen=True)
class Availability:
    """Whether programs can run here; `detail` says with what, or why not."""

    ok: bool
    detail: str
    binary: str | None = None

    @property
    def message(self) -> str:
        """The line a failed `program_run` and `prixfixe doctor` show."""
        if self.ok:
            return f"programs available ({self.detail})"
        return f"programs unavailable: {self.detail}; to enable them: {FIX}"


def availability() -> Availability:
    """Check (without starting anything) that pydantic-monty imports and its worker binary
    is there and executable."""
    try:
        import pydantic_monty
    except ImportError as exc:
        return Availability(False, f"the programs extra (pydantic-monty) is not installed ({exc})")
    version = getattr(pydantic_monty, "__version__", "?")
    try:
        from pydantic_monty._binary import find_monty_binary

        binary = find_monty_binary()
    except (ImportError, FileNotFoundError, OSError):
        return Availability(
            False,
            f"pydantic-monty {version} is installed but its worker binary (monty) was not "
            f"found; its wheel exists for {PLATFORMS}",
        )
    path = Path(binary)
    if not path.is_file() or not os.access(path, os.X_OK):
        return Availability(
            False, f"the sandbox worker {binary} is missing or not executable (MONTY_BIN?)"
        )
    return Availability(True, f"pydantic-monty {version}, worker {binary}", binary)


class SandboxUnavailableError(PrixfixeError):
    """The sandbox cannot run here (the extra is missing, or its worker does not start)."""


@dataclass(frozen=True)
class Limits:
    """What one program may spend. A call may lower the configured ones, never raise them."""

    timeout_seconds: float
    max_memory_mb: int
    max_calls: int
    max_result_tokens: int

    @classmethod
    def configured(cls, settings: ProgramsConfig) -> Limits:
        return cls(
            timeout_seconds=settings.timeout_seconds,
            max_memory_mb=settings.max_memory_mb,
            max_calls=settings.max_calls,
            max_result_tokens=settings.max_result_tokens,
        )

    def lowered(self, asked: dict[str, Any]) -> Limits:
        """These limits with the ones `asked` (None: unchanged) put in their place; one above
        its configured value is refused, naming it."""
        changes: dict[str, Any] = {}
        for f in fields(self):
            value = asked.get(f.name)
            if value is None:
                continue
            ceiling = getattr(self, f.name)
            if value > ceiling:
                raise ToolRefusedError(
                    f"limits.{f.name} {value} is above the configured {ceiling} "
                    f"([programs] {f.name}): a call may only lower a program's limits",
                    key=f.name,
                    limit=ceiling,
                )
            changes[f.name] = value
        return replace(self, **changes)

    def sandbox(self) -> dict[str, Any]:
        """pydantic-monty's `ResourceLimits` for these limits. Execution time is capped at the
        wall time too (monty's clock runs only while the program computes, not while it waits
        on a tool); suspensions (tool calls, their results, sleeps) are a backstop above the
        calls limit, which the host function counts itself."""
        return {
            "max_feed_duration_secs": self.timeout_seconds,
            "max_total_sleep_secs": self.timeout_seconds,
            "max_memory": self.max_memory_mb * 1024 * 1024,
            "max_suspensions": 4 * self.max_calls + 100,
            "max_recursion_depth": 200,
        }


class Programs:
    """The configured limits and the worker pool, started on first use."""

    def __init__(self, settings: ProgramsConfig) -> None:
        self.settings = settings
        self.limits = Limits.configured(settings)
        self._available: Availability | None = None
        self._pool: AsyncMonty | None = None
        self._lock: anyio.Lock | None = None

    def availability(self) -> Availability:
        """Whether programs can run here (checked once, on first use)."""
        if self._available is None:
            self._available = availability()
        return self._available

    @property
    def started(self) -> bool:
        return self._pool is not None

    async def _started_pool(self) -> AsyncMonty:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self._pool is None:
                available = self.availability()
                if not available.ok:
                    raise SandboxUnavailableError(available.message)
                from pydantic_monty import AsyncMonty

                pool = AsyncMonty(
                    binary_path=available.binary,
                    min_processes=0,  # a worker starts with the first program
                    max_processes=self.settings.workers,
                )
                await pool.__aenter__()
                self._pool = pool
            return self._pool

    @asynccontextmanager
    async def session(self, limits: Limits) -> AsyncIterator[AsyncMontySession]:
        """A sandbox session under `limits`, on a worker of its own (a program running at
        the same time has another); raises `SandboxUnavailableError` when none can start."""
        pool = await self._started_pool()
        checkout = pool.checkout(
            limits=limits.sandbox(),  # type: ignore[arg-type]
            os_policy={"sleep": "system", "process_time": "zero"},
        )
        try:
            session = await checkout.__aenter__()
        except RuntimeError as exc:  # "failed to spawn monty worker: ..."
            raise SandboxUnavailableError(
                f"programs unavailable: the sandbox worker could not start ({exc}); "
                f"to repair the install: {FIX}"
            ) from None
        # Handed back to the pool however the program ended, even when the wall time
        # cancelled it mid-run (shielded: the cancellation must not skip this).
        try:
            yield session
        except BaseException as exc:
            with anyio.move_on_after(10, shield=True):
                await checkout.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        with anyio.move_on_after(10, shield=True):
            await checkout.__aexit__(None, None, None)

    async def close(self) -> None:
        """Stop the workers, if any started. The pool is dropped and collected here, while the
        event loop runs: left to the interpreter's exit, its finalizer can abort the process."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        with anyio.CancelScope(shield=True):
            await pool.__aexit__(None, None, None)
        del pool
        gc.collect()
