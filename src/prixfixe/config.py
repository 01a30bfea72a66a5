"""Configuration: one TOML file, found on a fixed search path, validated strictly.

Search order: `$PRIXFIXE_CONFIG` (which must then exist), `./prixfixe.toml`, then
`prixfixe.toml` in the user config dir. The first file found is the one used; the others are
not merged, so what is in force is always one readable file plus the environment.

CONTRACT (trust): a configuration can start programs, so only the person's word loads one.
`$PRIXFIXE_CONFIG` and the user config dir's file are theirs; `./prixfixe.toml` is the
working directory's content (a checkout's, often), and loads only while its resolved path and
the SHA-256 of its bytes match a record `prixfixe trust` wrote (or it lies under a folder in
`$PRIXFIXE_TRUSTED_PATHS`). Otherwise it is left unread, one line on stderr says so and how to
trust it, and the user's own file (or the defaults) is in force. The bytes hashed are the bytes
parsed: a file changed after the check is never the one loaded.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from prixfixe.dates import zone_named
from prixfixe.errors import ConfigError
from prixfixe.secrets import CredentialRef, Secret, SecretRef

CONFIG_ENV = "PRIXFIXE_CONFIG"
CONFIG_FILENAME = "prixfixe.toml"
HOME_ENV = "PRIXFIXE_HOME"
STORE_URL_ENV = "PRIXFIXE_STORE_URL"


class McpConfig(BaseModel):
    """`[mcp]`: which facets a connection lists, which are off limits, and whether a call's
    missing arguments may be asked of the person."""

    model_config = ConfigDict(extra="forbid")

    expose: list[str] | None = Field(
        default=None, description="Facets whose tools tools/list shows (default: core)."
    )
    deny: list[str] = Field(
        default_factory=list,
        description="Facets removed from listing, search and invocation.",
    )
    ask_for_arguments: bool = Field(
        default=True,
        description="Ask the person (an elicitation form) for a call's missing or "
        "out-of-enum arguments when the client supports elicitation; false: never ask.",
    )
    never_ask: list[str] = Field(
        default_factory=list,
        description="Tools that never ask for missing arguments: such a call fails with a "
        "structured error naming each field, as with a client that cannot ask.",
    )


IndexVariant = Literal["summary", "full", "stats"]
DEFAULT_ADVERTISE: tuple[IndexVariant, ...] = ("summary", "stats")


class CapabilityIndexConfig(BaseModel):
    """`[resources.capability_index]`: which index variants `resources/list` shows."""

    model_config = ConfigDict(extra="forbid")

    advertise: list[IndexVariant] = Field(
        default_factory=lambda: list(DEFAULT_ADVERTISE),
        description="Variants listed in resources/list; every variant stays readable by URI.",
    )


class ResourcesConfig(BaseModel):
    """`[resources]`: paging and read bounds of the resource service."""

    model_config = ConfigDict(extra="forbid")

    page_size: int = Field(
        default=100, ge=1, le=1000, description="Resources per resources/list page."
    )
    max_read_bytes: int = Field(
        default=4_000_000,
        ge=1024,
        description="Largest resources/read answer, in bytes of content (before base64).",
    )
    capability_index: CapabilityIndexConfig = Field(default_factory=CapabilityIndexConfig)


class StepConfig(BaseModel):
    """`[[routines.NAME.steps]]`: one step. Params sit beside these keys and are checked
    against the step type's params model once plugins are loaded."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(description="The step type, e.g. git-status (prixfixe steps list).")
    name: str | None = Field(
        default=None, description="The step's name in the report (default: its type)."
    )
    parallel: bool = Field(
        default=False, description="Run concurrently with the adjacent parallel steps."
    )
    timeout: float | None = Field(
        default=None, gt=0, le=86400, description="Seconds before the step is stopped."
    )
    secrets: dict[str, CredentialRef] = Field(
        default_factory=dict,
        description="Environment variables for the step's programs, as credential references.",
    )


class RoutineConfig(BaseModel):
    """`[routines.NAME]`: a sequence of steps producing one report."""

    model_config = ConfigDict(extra="forbid")

    description: str = Field(default="", description="One line for routine_list.")
    timeout: float | None = Field(
        default=None, gt=0, le=86400, description="Default timeout of its steps, in seconds."
    )
    steps: list[StepConfig] = Field(min_length=1, description="The steps, in report order.")


class LeashConfig(BaseModel):
    """`[leash]`: what subprocesses may run, which files may be opened, which hosts reached,
    and two caveats. A key left out falls back to what configured steps and plugins declare;
    `PRIXFIXE_LEASH` (JSON with the same keys) beats the file, key by key."""

    model_config = ConfigDict(extra="forbid")

    exec: list[str] | None = Field(
        default=None,
        description="Programs steps may run; narrows the default (the command lines "
        "configured steps declare), never widens it.",
    )
    fs_read: list[str] | None = Field(
        default=None,
        description="Folders files may be read from (default: the paths configured steps name).",
    )
    fs_write: list[str] | None = Field(
        default=None,
        description="Folders files may be written under (default: the paths configured "
        "steps write, e.g. git-tend's repositories).",
    )
    net: list[str] | None = Field(
        default=None,
        description="Hosts outbound connections may reach (default: the hosts configured "
        "steps' types declare; nothing else).",
    )
    max_calls: int | None = Field(
        default=None, ge=1, description="Most tool calls one MCP session may make."
    )
    valid_for_generation: int | None = Field(
        default=None,
        ge=0,
        description="The leash holds only while the store generation is at most this; past "
        "it, nothing is run until the configuration is renewed.",
    )


#: Names of `[commands]` entries: what an inline step's `run` refers to.
COMMAND_NAME_PATTERN = r"^[a-z][a-z0-9_.-]{0,63}$"


class HttpConfig(BaseModel):
    """`[http]`: `prixfixe serve --http` — where it listens and who may talk to it."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field(default="127.0.0.1", description="Address to bind (--host beats it).")
    port: int = Field(default=8765, ge=0, le=65535, description="Port (--port beats it).")
    path: str = Field(default="/mcp", pattern=r"^/[A-Za-z0-9._~/-]*$", description="MCP endpoint.")
    stateless: bool = Field(default=False, description="No sessions (--stateless).")
    token: SecretRef | None = Field(
        default=None, description="Bearer token reference; required off loopback."
    )
    allowed_origins: list[str] = Field(
        default_factory=list, description="Origins accepted besides loopback ones."
    )
    allowed_hosts: list[str] = Field(
        default_factory=list, description="Host header values accepted besides loopback ones."
    )
    max_body_bytes: int = Field(
        default=4 * 1024 * 1024, ge=1024, description="Largest request body; larger gets 413."
    )
    session_idle_seconds: float = Field(
        default=1800, gt=0, le=7 * 24 * 3600, description="Idle stateful sessions end after this."
    )
    max_sessions: int = Field(default=1000, ge=1, description="Most open stateful sessions.")
    shutdown_grace_seconds: float = Field(
        default=10, ge=0, le=600, description="How long in-flight requests may finish on stop."
    )
    header_timeout_seconds: float = Field(
        default=10, gt=0, le=600, description="A request's line and headers must arrive in this."
    )
    body_timeout_seconds: float = Field(
        default=30, gt=0, le=3600, description="A request's body must arrive in this; else 408."
    )
    keep_alive_seconds: int = Field(
        default=5, ge=1, le=600, description="An idle keep-alive connection closes after this."
    )
    max_connections: int = Field(
        default=512, ge=1, le=100_000, description="Most open connections (and the file limit)."
    )
    web: bool = Field(
        default=True,
        description="Also serve the read-only web page (reports, records, capabilities, "
        "plugins, token budget) at / beside the MCP endpoint; false: MCP only.",
    )
    state_keys: list[SecretRef] = Field(
        default_factory=list,
        description="Keys (references, each at least 32 bytes) that seal a 2026-07-28 round "
        "trip's requestState; the first seals, all unseal. The same on every instance, so any "
        "one resumes a round trip another began. None: a key of this process only.",
    )


class StoreConfig(BaseModel):
    """`[store]`: where records are kept. Unset: the SQLite file in `$PRIXFIXE_HOME`.
    `PRIXFIXE_STORE_URL` beats `url`."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(
        default=None,
        description="postgresql://USER@HOST:PORT/DATABASE: records on PostgreSQL (the "
        "prixfixe[postgres] extra), shared by every instance given the same URL; plugins' own "
        "tables (reports, knowledge) stay in the local file. Unset: all in the local file.",
    )
    password: SecretRef | None = Field(
        default=None, description="The database password: a reference, never in the url."
    )

    @field_validator("url")
    @classmethod
    def _postgres_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("expected postgresql://USER@HOST:PORT/DATABASE")
        from urllib.parse import urlsplit

        if urlsplit(value).password is not None:
            raise ValueError(
                'the url holds a password; give it as password = {env = "NAME"} or '
                '{file = "PATH"} (credentials are references, never values)'
            )
        return value


class ReportsConfig(BaseModel):
    """`[reports]`: how many routine reports are kept, and for how long. 0 turns a limit off
    (TOML has no null; None does the same in code)."""

    model_config = ConfigDict(extra="forbid")

    keep: int | None = Field(
        default=200, ge=0, description="Newest reports kept, across routines (0: no count limit)."
    )
    max_age_days: float | None = Field(
        default=90,
        ge=0,
        description="Reports kept longer than this many days are deleted (0: no age limit).",
    )


class ActivityConfig(BaseModel):
    """`[activity]`: the log of the tool calls agents made (`prixfixe activity`, the web
    page's Activity). 0 turns a limit off (TOML has no null; None does the same in code)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        default=True, description="Log every MCP tool call (tool, outcome, duration, tokens)."
    )
    keep_arguments: bool = Field(
        default=False,
        description="Keep each call's arguments too, with every registered secret masked.",
    )
    max_entries: int | None = Field(
        default=10000, ge=0, description="Newest calls kept (0: no count limit)."
    )
    max_age_days: float | None = Field(
        default=30, ge=0, description="Calls older than this many days are deleted (0: none)."
    )


class SearchConfig(BaseModel):
    """`[search]`: how `tool_search` ranks, and whether knowledge search ranks by meaning too."""

    model_config = ConfigDict(extra="forbid")

    semantic: bool = Field(
        default=True,
        description="tool_search fuses dense embeddings (wordllama, loaded on the first "
        "search) with the lexical ranking; false: lexical only.",
    )
    knowledge_semantic: bool = Field(
        default=False,
        description="Knowledge search is hybrid too: every ingested chunk is embedded and "
        "searches fuse the same embeddings (costs ingest time and a vector a chunk).",
    )


class TimeConfig(BaseModel):
    """`[time]`: the time zone that says which day today is, for relative dates (`friday`,
    `in 3 days`) and for routines. `PRIXFIXE_TZ` beats it."""

    model_config = ConfigDict(extra="forbid")

    zone: str | None = Field(
        default=None,
        description="An IANA time zone, e.g. Europe/Lisbon (default: this machine's).",
    )

    @field_validator("zone")
    @classmethod
    def _known(cls, value: str | None) -> str | None:
        if value is not None:
            zone_named(value)  # an unknown zone stops prixfixe now, naming it
        return value


class ProgramsConfig(BaseModel):
    """`[programs]`: the limits every program `program_run` runs is held to (docs/programs.md).
    A call may lower them for its own program (its `limits` argument), never raise them."""

    model_config = ConfigDict(extra="forbid")

    timeout_seconds: float = Field(
        default=30,
        gt=0,
        le=3600,
        description="Wall time of a whole program, its tool calls included.",
    )
    max_memory_mb: int = Field(
        default=64, ge=1, le=16384, description="Heap memory a program may hold, in MiB."
    )
    max_calls: int = Field(
        default=50, ge=1, le=10000, description="Tool calls one program may make."
    )
    max_result_tokens: int = Field(
        default=2000,
        ge=50,
        le=200000,
        description="cl100k tokens of the value a program returns; a larger value is cut.",
    )
    workers: int = Field(
        default=2,
        ge=1,
        le=64,
        description="Sandbox processes at most; more programs at once wait for one.",
    )


#: A configured knowledge folder's name: its collection's name unless `collection` says
#: otherwise, so it follows the collection rule.
KNOWLEDGE_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
KNOWLEDGE_NAME_HELP = (
    "a knowledge folder's name is 1-64 lowercase letters, digits, _ and -, starting with a "
    "letter or digit (it names its collection unless collection = ... does)"
)


class KnowledgeFolderConfig(BaseModel):
    """`[knowledge.folders.NAME]`: a folder ingested into a collection, kept in step while
    a server serves. Trusted configuration: it is a declared file read, like a step's path."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        min_length=1,
        description="The folder (~ expanded; a relative path is relative to this file's folder).",
    )
    collection: str | None = Field(
        default=None,
        pattern=KNOWLEDGE_NAME_PATTERN,
        description="The collection its documents go to (default: the folder's NAME).",
    )
    watch: bool = Field(
        default=True,
        description="While a server serves, re-ingest the files that change (false: only "
        "when the server starts and with prixfixe kb sync).",
    )
    include: list[Annotated[str, StringConstraints(min_length=1)]] | None = Field(
        default=None,
        min_length=1,
        description="Globs on paths relative to the folder (* matches across folders too); "
        "default: every document.",
    )

    def folder(self, base_dir: Path) -> Path:
        """The folder as an absolute path: `~` expanded, relative to `base_dir`."""
        path = Path(self.path).expanduser()
        return Path(os.path.normpath(path if path.is_absolute() else base_dir / path))


class KnowledgeConfig(BaseModel):
    """`[knowledge]`: configured folders, and how quickly a watched change is ingested."""

    model_config = ConfigDict(extra="forbid")

    debounce_ms: int = Field(
        default=200,
        ge=1,
        le=60_000,
        description="A watched folder's changes are ingested once it has been quiet this many "
        "milliseconds (one that never goes quiet: every 1.6 s, or 8 times this if longer).",
    )
    folders: dict[
        Annotated[str, StringConstraints(pattern=KNOWLEDGE_NAME_PATTERN)], KnowledgeFolderConfig
    ] = Field(default_factory=dict, description="Folders kept in collections, by name.")

    @model_validator(mode="after")
    def _one_folder_per_collection(self) -> KnowledgeConfig:
        owners: dict[str, str] = {}
        for name, folder in self.folders.items():
            collection = folder.collection or name
            if collection in owners:
                raise ValueError(
                    f"folders {owners[collection]!r} and {name!r} both fill collection "
                    f"{collection!r}; give each folder its own collection"
                )
            owners[collection] = name
        return self


#: A mounted server's name: it names its facet and prefixes its tools (`NAME.tool`), so it has
#: no dot and follows the facet rule.
SERVER_NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,63}$"
SERVER_NAME_HELP = (
    "a server's name is 1-64 lowercase letters, digits, _ and -, starting with a letter "
    "(it names the server's facet and prefixes its tools, NAME.tool)"
)


class ServerConfig(BaseModel):
    """`[servers.NAME]`: an MCP server mounted behind the fixed menu, over stdio (`command`)
    or streamable HTTP (`url`)."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(
        default=None,
        description="stdio: the program to start; granted to the exec gate for this server only.",
    )
    args: list[str] = Field(default_factory=list, description="stdio: the program's arguments.")
    env: dict[str, CredentialRef] = Field(
        default_factory=dict,
        description="stdio: environment variables it gets, each a credential reference "
        "({env = ...}, {file = ...} or {cmd = ...}); no other of prixfixe's variables pass "
        "but a minimal set (PATH, HOME, LANG) and the machine's certificate and proxy "
        "settings (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, HTTPS_PROXY, ...).",
    )
    cwd: str | None = Field(default=None, description="stdio: its working directory.")
    url: str | None = Field(
        default=None,
        description="streamable HTTP: the endpoint URL; its host is granted to the net gate.",
    )
    headers: dict[str, CredentialRef] = Field(
        default_factory=dict,
        description="streamable HTTP: request headers, each a credential reference.",
    )
    enabled: bool = Field(default=True, description="false: configured but not mounted.")
    description: str | None = Field(
        default=None,
        max_length=500,
        description="What this server is for, in your words: shown in the instructions' table "
        "of contents and searched with its tools (beside what the server says of itself).",
    )
    start: Literal["lazy", "eager"] = Field(
        default="lazy",
        description="lazy: started on first use; eager: started with prixfixe.",
    )
    timeout: float = Field(
        default=60, gt=0, description="Seconds one request to it may take before it fails."
    )
    ask_for_arguments: bool | list[str] = Field(
        default=False,
        description="Whether prixfixe may ask the person (an elicitation form naming this "
        "server) for its tools' missing arguments: false (never), true (any but a "
        "secret-looking one: password, token, code, ...), or the argument names it may ask "
        "for. Its own elicitation requests are never relayed (see docs/servers.md).",
    )

    @model_validator(mode="after")
    def _one_transport(self) -> ServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                'give exactly one of command = "PROGRAM" (stdio) or url = "URL" (HTTP)'
            )
        if self.url is not None and (self.args or self.env or self.cwd is not None):
            raise ValueError("args, env and cwd apply to a command (stdio), not to a url")
        if self.command is not None and self.headers:
            raise ValueError("headers apply to a url (streamable HTTP), not to a command")
        return self


class ConfigModel(BaseModel):
    """The whole file. Unknown keys are errors: a typo must not be silently ignored."""

    model_config = ConfigDict(extra="forbid")

    mcp: McpConfig = Field(default_factory=McpConfig)
    resources: ResourcesConfig = Field(default_factory=ResourcesConfig)
    routines: dict[str, RoutineConfig] = Field(default_factory=dict)
    leash: LeashConfig = Field(default_factory=LeashConfig)
    commands: dict[str, list[str] | str] = Field(
        default_factory=dict,
        description="Named command lines (a list, or a string split like a shell) that "
        "script and harness steps run with run = NAME; the only commands an inline step "
        "may run.",
    )
    http: HttpConfig = Field(default_factory=HttpConfig)
    reports: ReportsConfig = Field(default_factory=ReportsConfig)
    activity: ActivityConfig = Field(default_factory=ActivityConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    time: TimeConfig = Field(default_factory=TimeConfig)
    knowledge: KnowledgeConfig = Field(default_factory=KnowledgeConfig)
    programs: ProgramsConfig = Field(default_factory=ProgramsConfig)
    servers: dict[Annotated[str, StringConstraints(pattern=SERVER_NAME_PATTERN)], ServerConfig] = (
        Field(
            default_factory=dict,
            description="MCP servers mounted behind the fixed menu, by name (see docs/servers.md).",
        )
    )


#: Where the configuration in force came from: `$PRIXFIXE_CONFIG` ("env"), a trusted
#: `./prixfixe.toml` ("folder"), the user config dir ("user"), or none ("defaults").
ConfigOrigin = Literal["env", "folder", "user", "defaults"]


@dataclass(frozen=True)
class Ignored:
    """A working directory's `prixfixe.toml` left unread: never trusted, or changed since."""

    path: Path
    changed: bool

    @property
    def reason(self) -> str:
        return "changed since it was trusted" if self.changed else "not trusted"

    @property
    def trust_command(self) -> str:
        import shlex

        return f"prixfixe trust {shlex.quote(str(self.path))}"

    def line(self, using: str) -> str:
        """The one line that says it was ignored, what is in force instead, and the fix."""
        verb = "has" if self.changed else "is"
        return (
            f"{self.path} {verb} {self.reason}, so it was not loaded (a folder's configuration "
            f"can start programs); using {using}. To trust it: {self.trust_command}"
        )


@dataclass(frozen=True)
class LoadedConfig:
    """The configuration in force, where it came from, and where else was looked."""

    model: ConfigModel
    path: Path | None
    searched: tuple[Path, ...] = field(default_factory=tuple)
    origin: ConfigOrigin = "defaults"
    #: A working directory's file that was found but not trusted (the user's is in force).
    ignored: Ignored | None = None

    @property
    def source(self) -> str:
        return str(self.path) if self.path else "built-in defaults"


def user_config_dir() -> Path:
    from platformdirs import user_config_path

    return user_config_path("prixfixe", appauthor=False)


def home_dir(env: Mapping[str, str]) -> Path:
    """Where prixfixe keeps its data (the store): `$PRIXFIXE_HOME`, else the user data dir."""
    value = env.get(HOME_ENV)
    if value:
        return Path(value).expanduser()
    from platformdirs import user_data_path

    return user_data_path("prixfixe", appauthor=False)


def shared_store_url(model: ConfigModel, env: Mapping[str, str]) -> str | None:
    """The PostgreSQL URL in force (`$PRIXFIXE_STORE_URL`, else `[store] url`), without
    resolving its password; None: the local SQLite store."""
    return env.get(STORE_URL_ENV, "").strip() or model.store.url


def store_url(model: ConfigModel, env: Mapping[str, str]) -> tuple[str | None, Secret | None]:
    """The PostgreSQL URL in force (`$PRIXFIXE_STORE_URL`, else `[store] url`) and its
    password (`[store] password`, resolved); `(None, None)`: the local SQLite store."""
    url = shared_store_url(model, env)
    if url is None or model.store.password is None:
        return url, None
    return url, model.store.password.resolve(env, key="store.password")


def search_paths(env: Mapping[str, str], cwd: Path) -> list[Path]:
    paths: list[Path] = []
    if env.get(CONFIG_ENV):
        paths.append(Path(env[CONFIG_ENV]).expanduser())
    paths.append(cwd / CONFIG_FILENAME)
    paths.append(user_config_dir() / CONFIG_FILENAME)
    return paths


@dataclass(frozen=True)
class Found:
    """The file a lookup chose (with the bytes read from it, the ones to parse), or none."""

    path: Path | None
    data: bytes | None
    origin: ConfigOrigin
    searched: tuple[Path, ...]
    ignored: Ignored | None = None


def find_config(env: Mapping[str, str], cwd: Path) -> Found:
    """The file the search path chooses, trust applied, read but not parsed (see the module)."""
    paths = search_paths(env, cwd)
    searched = tuple(paths)
    explicit = env.get(CONFIG_ENV)
    if explicit:
        if not paths[0].is_file():
            raise ConfigError(
                f"{CONFIG_ENV} is set to {explicit!r}, but there is no file there",
                file=str(paths[0]),
            )
        return Found(paths[0], read_config_bytes(paths[0]), "env", searched)
    folder, user = paths[-2], paths[-1]
    ignored: Ignored | None = None
    if folder.is_file():
        real = Path(os.path.realpath(folder))
        if user.is_file() and real == Path(os.path.realpath(user)):
            return Found(user, read_config_bytes(user), "user", searched)  # cwd is that dir
        data = read_config_bytes(real)
        verdict = trust_verdict(real, data, env)
        if verdict == "trusted":
            # The resolved path: relative paths and commands in it resolve beside the file
            # that was trusted, not beside a link to it in another folder.
            return Found(real, data, "folder", searched)
        ignored = Ignored(folder.absolute(), changed=verdict == "changed")
    if user.is_file():
        return Found(user, read_config_bytes(user), "user", searched, ignored)
    return Found(None, None, "defaults", searched, ignored)


def load_config(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> LoadedConfig:
    """Find and validate the configuration file; raise `ConfigError` naming file and key. An
    untrusted `./prixfixe.toml` is left unread, said once on stderr (the log)."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    found = find_config(env, cwd)
    model = ConfigModel()
    if found.path is not None and found.data is not None:
        model = parse_config_bytes(found.data, found.path)
    loaded = LoadedConfig(model, found.path, found.searched, found.origin, found.ignored)
    if found.ignored is not None:
        _say_ignored(found.ignored, loaded.source)
    return loaded


_said: set[tuple[Path, bool]] = set()


def _say_ignored(ignored: Ignored, using: str) -> None:
    """One line on stderr (through the log), once a process per file and reason."""
    if (ignored.path, ignored.changed) in _said:
        return
    _said.add((ignored.path, ignored.changed))
    import logging

    logging.getLogger(__name__).warning("%s", ignored.line(using))


#: The largest configuration file read; a config is a page of TOML, not a data file.
MAX_CONFIG_BYTES = 1024 * 1024


def read_config_bytes(path: Path) -> bytes:
    """A configuration file's bytes, bounded; a `ConfigError` naming the file otherwise."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)  # bounded: never more than the limit
    except OSError as exc:
        raise ConfigError(f"cannot be read: {exc}", file=str(path)) from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"is larger than {MAX_CONFIG_BYTES} bytes; is it the right file?", file=str(path)
        )
    return data


def parse_config_file(path: Path) -> ConfigModel:
    return parse_config_bytes(read_config_bytes(path), path)


def parse_config_bytes(data: bytes, path: Path) -> ConfigModel:
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", file=str(path)) from None
    except RecursionError:
        raise ConfigError(
            "not valid TOML here: its values nest too deeply", file=str(path)
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot be read: {exc}", file=str(path)) from None
    return validate_config(raw, file=str(path))


# -- trust ------------------------------------------------------------------------------------

#: Folders (joined like PATH) whose configurations are trusted without a record, as mise's
#: MISE_TRUSTED_CONFIG_PATHS: the person's word, given through their environment.
TRUSTED_PATHS_ENV = "PRIXFIXE_TRUSTED_PATHS"
TRUST_FILENAME = "trusted-configs.json"
TRUST_VERSION = 1

TrustVerdict = Literal["trusted", "changed", "untrusted"]


@dataclass(frozen=True)
class TrustRecord:
    """One trusted file: its resolved path, the SHA-256 of its bytes, and when."""

    path: str
    sha256: str
    trusted_at: str


def trust_file() -> Path:
    """Where trust records are kept: the user state dir (platformdirs), not beside a config."""
    from platformdirs import user_state_path

    return user_state_path("prixfixe", appauthor=False) / TRUST_FILENAME


def digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def trusted_paths(env: Mapping[str, str]) -> list[Path]:
    """`$PRIXFIXE_TRUSTED_PATHS`' folders, resolved; relative entries mean nothing (they would
    be relative to the very folder in question) and are left out."""
    out: list[Path] = []
    for part in env.get(TRUSTED_PATHS_ENV, "").split(os.pathsep):
        path = Path(part).expanduser() if part.strip() else None
        if path is not None and path.is_absolute():
            out.append(Path(os.path.realpath(path)))
    return out


def trust_verdict(real: Path, data: bytes, env: Mapping[str, str]) -> TrustVerdict:
    """Whether the file at resolved path `real`, holding `data`, may be loaded."""
    if any(real.is_relative_to(folder) for folder in trusted_paths(env)):
        return "trusted"
    record = read_trust().get(str(real))
    if record is None:
        return "untrusted"
    return "trusted" if record.sha256 == digest(data) else "changed"


def is_trusted_now(config: Path) -> bool:
    """Whether a trust record matches `config`'s bytes now (False for a file not there)."""
    real = Path(os.path.realpath(config.expanduser()))
    record = read_trust().get(str(real))
    if record is None or not real.is_file():
        return False
    return record.sha256 == digest(read_config_bytes(real))


def read_trust(path: Path | None = None) -> dict[str, TrustRecord]:
    """The trust records. A missing file is none; one another user could have written, or
    that is not the format, trusts nothing (said once) rather than stopping prixfixe."""
    path = trust_file() if path is None else path
    try:
        return _parse_trust(path)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        _say_once(f"{path}: trust records not used ({exc}); no folder's configuration is trusted")
        return {}


def _parse_trust(path: Path) -> dict[str, TrustRecord]:
    import json

    with path.open("rb") as handle:
        if os.name == "posix":
            info = os.fstat(handle.fileno())
            if info.st_uid != os.getuid() or info.st_mode & 0o022:
                raise ValueError("it is writable by, or belongs to, another user")
        raw = json.loads(handle.read(MAX_CONFIG_BYTES).decode("utf-8"))
    if not isinstance(raw, dict) or raw.get("version") != TRUST_VERSION:
        raise ValueError(f"expected a version {TRUST_VERSION} record")
    records: dict[str, TrustRecord] = {}
    for item in raw.get("trusted", []):
        if not isinstance(item, dict):
            raise ValueError("a record is not an object")
        file, sha256, when = (item.get(k) for k in ("path", "sha256", "trusted_at"))
        if not (isinstance(file, str) and isinstance(sha256, str) and isinstance(when, str)):
            raise ValueError("a record lacks path, sha256 or trusted_at")
        record = TrustRecord(file, sha256, when)
        records[record.path] = record
    return records


_said_once: set[str] = set()


def _say_once(message: str) -> None:
    if message not in _said_once:
        _said_once.add(message)
        import logging

        logging.getLogger(__name__).warning("%s", message)


def write_trust(records: Mapping[str, TrustRecord], path: Path | None = None) -> Path:
    """Replace the trust records atomically (a temporary file, then a rename), owner-only."""
    import json
    import tempfile

    path = trust_file() if path is None else path
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = {
        "version": TRUST_VERSION,
        "trusted": [
            {"path": r.path, "sha256": r.sha256, "trusted_at": r.trusted_at}
            for r in sorted(records.values(), key=lambda r: r.path)
        ],
    }
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path


def _trust_records_for_change(path: Path) -> dict[str, TrustRecord]:
    """The records, to change: unreadable ones stop the change rather than being lost."""
    try:
        return _parse_trust(path)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"cannot use the trust records: {exc}; fix or remove the file", file=str(path)
        ) from None


def trust_config(config: Path) -> tuple[TrustRecord, ConfigModel]:
    """Record `config` (resolved) as trusted with the hash of its bytes now; the file must be
    a valid configuration. Return the record and what it configures."""
    import datetime as dt

    real = Path(os.path.realpath(config.expanduser()))
    if not real.is_file():
        raise ConfigError("there is no file there", file=str(config))
    data = read_config_bytes(real)
    model = parse_config_bytes(data, real)
    store = trust_file()
    records = _trust_records_for_change(store)
    now = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    record = TrustRecord(str(real), digest(data), now)
    records[record.path] = record
    write_trust(records, store)
    return record, model


def revoke_trust(config: Path) -> TrustRecord | None:
    """Forget `config`'s record (by its resolved path, or as given for a file now gone)."""
    store = trust_file()
    records = _trust_records_for_change(store)
    given = str(config.expanduser().absolute())
    real = os.path.realpath(config.expanduser())
    removed = records.pop(real, None) or records.pop(given, None)
    if removed is not None:
        write_trust(records, store)
    return removed


def validate_config(raw: dict[str, Any], *, file: str) -> ConfigModel:
    try:
        # strict: TOML has types, so "8765" for a port or "yes" for a flag is a mistake to
        # name, not a value to guess at.
        return ConfigModel.model_validate(raw, strict=True)
    except ValidationError as exc:
        problems = [_describe(err) for err in exc.errors()]
        key = config_key(exc.errors()[0]["loc"]) if exc.errors() else None
        raise ConfigError("; ".join(problems), file=file, key=key) from None


def config_key(loc: Any) -> str:
    """A pydantic error location as a config key: `routines.morning.steps[1].timeout`."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _describe(err: Any) -> str:
    loc = config_key(err["loc"])
    kind = err["type"]
    if kind == "extra_forbidden":
        return f"{loc}: unknown key (check its spelling; prixfixe init --print shows every section)"
    if _holds_credentials(tuple(err["loc"])):
        # Never echo what was written where a credential reference belongs: it may be one.
        return f"{loc}: {err['msg'].removeprefix('Value error, ')}"
    if err["loc"][:1] == ("servers",) and err["loc"][-1:] == ("[key]",):
        return f"servers.{err['input']}: {SERVER_NAME_HELP}"
    if err["loc"][:2] == ("knowledge", "folders") and err["loc"][-1:] == ("[key]",):
        return f"knowledge.folders.{err['input']}: {KNOWLEDGE_NAME_HELP}"
    if err["loc"][:1] in (("knowledge",), ("time",)) and kind == "value_error":
        return f"{loc}: {err['msg'].removeprefix('Value error, ')}"  # says it all
    got = err.get("input")
    return f"{loc}: {err['msg'].lower()} (got {type(got).__name__} {got!r})"


def _holds_credentials(loc: tuple[Any, ...]) -> bool:
    """Whether an error's location is (or holds) a credential reference: a step's `secrets`,
    `http.token`, a server's `env` or `headers`, or a whole `[servers.NAME]` table."""
    if "secrets" in loc or loc[:2] == ("http", "token") or loc[:1] == ("store",):
        return True
    return loc[:1] == ("servers",) and (len(loc) == 2 or loc[2:3] in (("env",), ("headers",)))
