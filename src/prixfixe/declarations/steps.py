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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from pydantic import BaseModel

from prixfixe.declarations.declaration_type import DeclarationType
from prixfixe.errors import RegistryError
from prixfixe.leash.exec import CommandLine
from prixfixe.leash.fs import FsGate, FsGrant
from prixfixe.leash.net import NetGate, NetGrant
from prixfixe.secrets import Secret

if TYPE_CHECKING:
    import mcp_types

    from prixfixe.leash import Completed
    from prixfixe.programs.runner import ProgramOutcome
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
#: Calls a mounted server's tool: (server, tool, arguments) to the server's own result.
ServerToolCaller: TypeAlias = Callable[
    [str, str, Mapping[str, Any]], Awaitable["mcp_types.CallToolResult"]
]

#: Runs a program (`program` steps): (code, limits to lower) to how it ended, its calls made
#: through the same dispatch as `program_run`'s, counted against the calling session.
ProgramRunner: TypeAlias = Callable[[str, Mapping[str, Any]], Awaitable["ProgramOutcome"]]


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
    #: The server's variables the step type declares (`StepType.env`), for its programs.
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    owner: str = ""
    runner: _Runner = field(repr=False)
    store_opener: Callable[[], Store] = field(repr=False)
    resource_reader: ResourceReader | None = field(default=None, repr=False)
    #: Calls a tool of a server mounted in `[servers]` (None where none can run).
    server_caller: ServerToolCaller | None = field(default=None, repr=False)
    #: Runs a program in the sandbox, as `program_run` does (None where none can run).
    program_runner: ProgramRunner | None = field(default=None, repr=False)
    #: The file gate: every file or folder a step opens goes through `fs.check`, `fs.walk`
    #: or `fs.read_bytes`.
    fs: FsGate = field(default_factory=lambda: FsGate(FsGrant((), (), "none")), repr=False)
    #: The network gate: every HTTP connection goes through `net.client()`.
    net: NetGate = field(default_factory=lambda: NetGate(NetGrant((), "none")), repr=False)
    #: The configuration's named command lines (`[commands]`), program first.
    commands: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    #: The folder of the configuration file that defined `commands`: where a named command
    #: runs, whoever named it (never the server's working directory). None: `base_dir`.
    commands_dir: Path | None = None
    #: `[search] knowledge_semantic`: a step that searches (`kb-search`) fuses dense embeddings.
    semantic: bool = False

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
        merged: dict[str, str | Secret] = {**self.env, **self.secrets, **(env or {})}
        return await self.runner(argv, cwd=cwd, env=merged, input=input)

    async def read_resource(self, uri: str) -> str:
        """The text of a prixfixe resource, as a client reading it would get it."""
        if self.resource_reader is None:
            from prixfixe.errors import StepFailure

            raise StepFailure(f"step {self.step!r}: resources cannot be read here", kind="error")
        return await self.resource_reader(uri)

    async def call_server_tool(
        self, server: str, tool: str, arguments: Mapping[str, Any]
    ) -> mcp_types.CallToolResult:
        """Call `tool` on mounted server `server` (one the configuration mounts, not denied),
        as `tool_invoke` would; its result unchanged."""
        if self.server_caller is None:
            from prixfixe.errors import StepFailure

            raise StepFailure(
                f"step {self.step!r}: mounted servers cannot be called here", kind="error"
            )
        return await self.server_caller(server, tool, arguments)

    async def run_program(self, code: str, limits: Mapping[str, Any]) -> ProgramOutcome:
        """Run `code` as `program_run` would (`limits` may only lower `[programs]`): each of
        its tool calls dispatched as a direct call of the session running this step."""
        if self.program_runner is None:
            from prixfixe.errors import StepFailure

            raise StepFailure(f"step {self.step!r}: programs cannot run here", kind="error")
        return await self.program_runner(code, limits)

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


#: What a step's params name for the file grant's defaults: (paths it reads, paths it writes).
PathNeeds: TypeAlias = tuple[Sequence[str], Sequence[str]]


@dataclass(frozen=True, kw_only=True)
class StepType:
    """A step type, declared in full: nothing about it is inferred from the handler.

    `params_model` must forbid unknown keys, so a typo in a config step is an error naming the
    key. `data_model` is the data contract: its JSON Schema is published with `version`
    (`MAJOR.MINOR`; bump the minor for additions, the major for anything else).

    Its authority is declared too, and the leash refuses anything else:
    - `commands`: the exact command lines it runs (`CommandLine`: program and argument
      shapes); `commands_from_params(params, named)` adds ones its params choose (a script's
      configured command; `named` is the configuration's `[commands]`).
    - `config_only`: params only the configuration may set; an inline step (`step_run`,
      `routine_eval`) giving one is refused, so a client never chooses them.
    - `paths_from_params(params)`: the paths a configured step reads and writes; they are the
      file grant's default roots.
    - `hosts`: the hosts it connects to (the network grant's default);
      `hosts_from_params(params)` adds the ones a configured step's params name.
    - `env`: variables of the server's environment its programs receive (say `SSH_AUTH_SOCK`);
      children get nothing else but PATH, HOME, locale, time zone and the step's credentials.
    """

    name: str
    description: str
    params_model: type[BaseModel]
    data_model: type[BaseModel]
    version: str
    handler: StepHandler
    commands: tuple[CommandLine, ...] = ()
    commands_from_params: (
        Callable[[Any, Mapping[str, tuple[str, ...]]], Sequence[CommandLine]] | None
    ) = None
    config_only: tuple[str, ...] = ()
    paths_from_params: Callable[[Any], PathNeeds] | None = None
    hosts: tuple[str, ...] = ()
    hosts_from_params: Callable[[Any], Sequence[str]] | None = None
    env: tuple[str, ...] = ()
    #: Its section's heading in a report (`Deadlines`) when a step keeps the type's name;
    #: empty: the step's name is the heading.
    title: str = ""
    owner: str = field(default="", compare=False)

    @property
    def major(self) -> int:
        return int(self.version.split(".", 1)[0])

    @property
    def summary(self) -> str:
        first = self.description.strip().split("\n", 1)[0].strip()
        return re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0]

    @property
    def programs(self) -> tuple[str, ...]:
        """The programs of its fixed command lines (params may add more)."""
        return tuple(dict.fromkeys(c.program for c in self.commands))

    def declared_commands(
        self, params: BaseModel, named: Mapping[str, tuple[str, ...]] | None = None
    ) -> tuple[CommandLine, ...]:
        """Every command line a step with these params may run, programs as written."""
        extra = (
            tuple(self.commands_from_params(params, named or {}))
            if self.commands_from_params
            else ()
        )
        return tuple(dict.fromkeys((*self.commands, *extra)))

    def declared_hosts(self, params: BaseModel) -> tuple[str, ...]:
        """Every host a step with these params may connect to: `hosts`, then its params'."""
        extra = tuple(self.hosts_from_params(params)) if self.hosts_from_params else ()
        return tuple(dict.fromkeys((*self.hosts, *extra)))

    def declared_paths(self, params: BaseModel) -> PathNeeds:
        return self.paths_from_params(params) if self.paths_from_params else ((), ())


# -- registration ---------------------------------------------------------------------------


def _admit_step_type(step_type: StepType, owner: str) -> StepType:
    where = f"plugin {owner!r} step type {step_type.name!r}"
    if not STEP_TYPE_PATTERN.match(step_type.name):
        raise RegistryError(
            f"{where}: step type names are lowercase letters, digits, '-', '_' and '.', "
            "starting with a letter"
        )
    if not VERSION_PATTERN.match(str(step_type.version)):
        raise RegistryError(
            f"{where}: version must be 'MAJOR.MINOR' (e.g. '1.0'), got {step_type.version!r}"
        )
    for label, model in (
        ("params_model", step_type.params_model),
        ("data_model", step_type.data_model),
    ):
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise RegistryError(f"{where}: {label} must be a pydantic model class")
    if step_type.params_model.model_config.get("extra") != "forbid":
        raise RegistryError(
            f"{where}: params_model must set model_config = ConfigDict(extra='forbid'), so a "
            "typo in a step's key is an error instead of being ignored"
        )
    if not callable(step_type.handler):
        raise RegistryError(f"{where}: handler is not callable")
    return replace(step_type, owner=owner)


STEP_TYPES: DeclarationType[StepType, StepType] = DeclarationType(
    declared=StepType,
    hook="register_step_types",
    field="step_types",
    what="step type",
    key=lambda step_type: step_type.name,
    admit=_admit_step_type,
    # As before the table: the index lists step types, yet a step type registered late was
    # never announced as an index change. Kept so this restructuring changes no behaviour.
    refreshes_index=False,
)
