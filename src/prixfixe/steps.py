"""What a plugin declares to add a step type: `StepType`, the `StepContext` its handler gets,
and the `StepOutput` it returns.

A step type costs an agent nothing: it is not a tool. Routines (config-defined sequences of
steps) and the tools `step_run` / `routine_eval` run it; `steps_list` discloses it on demand.
Every step returns markdown for people and data for agents; the data's shape is a pydantic
model whose JSON Schema carries a version (`MAJOR.MINOR`). Like `tool.py`, this module sits low
so a plugin imports little.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from pydantic import BaseModel

from prixfixe.secrets import Secret

if TYPE_CHECKING:
    from prixfixe.leash import Completed
    from prixfixe.store.api import OwnerSlice, Store, StoredRecord

#: Step type names: lowercase words joined by `-` (plugins may namespace with `.`).
STEP_TYPE_PATTERN = re.compile(r"^[a-z][a-z0-9._-]{0,63}$")
#: Data schema versions: `MAJOR.MINOR`. Minor bumps only add; anything else is a new major.
VERSION_PATTERN = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")


@dataclass(frozen=True)
class StepOutput:
    """What a step returns: a markdown section for people and typed data for agents."""

    markdown: str
    data: BaseModel | dict[str, Any]


class _Runner(Protocol):
    async def __call__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None,
        env: Mapping[str, str | Secret] | None,
        input: bytes | None,
    ) -> Completed: ...


#: Reads a prixfixe resource's text by URI (what `resources/read` would return).
ResourceReader: TypeAlias = Callable[[str], Awaitable[str]]


@dataclass(frozen=True, kw_only=True)
class StepContext:
    """What a running step may reach: its name, its credentials, the exec gate (`run`) and the
    store. Paths in params are resolved with `path()` against the directory of the config
    that defined the step (the working directory for inline steps)."""

    step: str
    type: str
    base_dir: Path
    today: dt.date
    secrets: Mapping[str, Secret] = field(default_factory=dict)
    owner: str = ""
    runner: _Runner = field(repr=False)
    store_opener: Callable[[], Store] = field(repr=False)
    resource_reader: ResourceReader | None = field(default=None, repr=False)

    def path(self, value: str) -> Path:
        """A params path: `~` expanded, relative ones against the step's base directory."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.base_dir / path

    async def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        input: bytes | None = None,
    ) -> Completed:
        """Run a program through the exec gate: it must be one the step type declared and
        the grant holds. The step's credentials are in the child's environment."""
        merged: dict[str, str | Secret] = {**self.secrets, **(env or {})}
        return await self.runner(argv, cwd=cwd, env=merged, input=input)

    async def read_resource(self, uri: str) -> str:
        """The text of a prixfixe resource, as a client reading it would get it."""
        if self.resource_reader is None:
            from prixfixe.errors import StepFailure

            raise StepFailure(f"step {self.step!r}: resources cannot be read here", kind="error")
        return await self.resource_reader(uri)

    @property
    def store(self) -> Store:
        """The store (blocking: call it from a worker thread, e.g. `anyio.to_thread`)."""
        return self.store_opener()

    def slice(self) -> OwnerSlice:
        """The step type's plugin's own store tables (blocking)."""
        return self.store.slice(self.owner)

    async def records(
        self, kind: str, where: Mapping[str, Any] | None = None, *, limit: int = 1000
    ) -> list[StoredRecord]:
        """Open records of `kind` matching `where`, in id order, at most `limit`."""
        import anyio.to_thread

        def read() -> list[StoredRecord]:
            out: list[StoredRecord] = []
            cursor: str | None = None
            while len(out) < limit:
                page = self.store.query(
                    kind, where=where, limit=min(500, limit - len(out)), cursor=cursor
                )
                out += page.records
                cursor = page.next_cursor
                if cursor is None:
                    break
            return out

        return await anyio.to_thread.run_sync(read)


StepHandler: TypeAlias = Callable[[StepContext, Any], "Awaitable[StepOutput] | StepOutput"]


@dataclass(frozen=True, kw_only=True)
class StepType:
    """A step type, declared in full: nothing about it is inferred from the handler.

    `params_model` must forbid unknown keys, so a typo in a config step is an error naming the
    key. `data_model` is the data contract: its JSON Schema is published with `version`
    (`MAJOR.MINOR`; bump the minor for additions, the major for anything else). `programs` are
    the programs it runs; `programs_from_params` adds ones named by its params (a script's
    command). The exec gate refuses anything else.
    """

    name: str
    description: str
    params_model: type[BaseModel]
    data_model: type[BaseModel]
    version: str
    handler: StepHandler
    programs: tuple[str, ...] = ()
    programs_from_params: Callable[[Any], Sequence[str]] | None = None
    owner: str = field(default="", compare=False)

    @property
    def major(self) -> int:
        return int(self.version.split(".", 1)[0])

    @property
    def summary(self) -> str:
        first = self.description.strip().split("\n", 1)[0].strip()
        return re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0]

    def declared_programs(self, params: BaseModel) -> tuple[str, ...]:
        """Every program a step with these params may run, as written."""
        extra = tuple(self.programs_from_params(params)) if self.programs_from_params else ()
        return tuple(dict.fromkeys((*self.programs, *extra)))
