"""Configuration: one TOML file, found on a fixed search path, validated strictly.

Search order: `$PRIXFIXE_CONFIG` (which must then exist), `./prixfixe.toml`, then
`prixfixe.toml` in the user config dir. The first file found is the one used; the others are
not merged, so what is in force is always one readable file plus the environment.
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


class SearchConfig(BaseModel):
    """`[search]`: how `tool_search` ranks."""

    model_config = ConfigDict(extra="forbid")

    semantic: bool = Field(
        default=False,
        description="Fuse dense embeddings (wordllama, from the prixfixe[semantic] extra) "
        "with the lexical ranking.",
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
        "but a minimal set (PATH, HOME, LANG).",
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
    store: StoreConfig = Field(default_factory=StoreConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    time: TimeConfig = Field(default_factory=TimeConfig)
    knowledge: KnowledgeConfig = Field(default_factory=KnowledgeConfig)
    servers: dict[Annotated[str, StringConstraints(pattern=SERVER_NAME_PATTERN)], ServerConfig] = (
        Field(
            default_factory=dict,
            description="MCP servers mounted behind the fixed menu, by name (see docs/servers.md).",
        )
    )


@dataclass(frozen=True)
class LoadedConfig:
    """The configuration in force, where it came from, and where else was looked."""

    model: ConfigModel
    path: Path | None
    searched: tuple[Path, ...] = field(default_factory=tuple)

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


def load_config(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> LoadedConfig:
    """Find and validate the configuration file; raise `ConfigError` naming file and key."""
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    paths = search_paths(env, cwd)
    explicit = env.get(CONFIG_ENV)
    if explicit and not paths[0].is_file():
        raise ConfigError(
            f"{CONFIG_ENV} is set to {explicit!r}, but there is no file there",
            file=str(paths[0]),
        )
    for path in paths:
        if path.is_file():
            return LoadedConfig(parse_config_file(path), path, tuple(paths))
    return LoadedConfig(ConfigModel(), None, tuple(paths))


#: The largest configuration file read; a config is a page of TOML, not a data file.
MAX_CONFIG_BYTES = 1024 * 1024


def parse_config_file(path: Path) -> ConfigModel:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)  # bounded: never more than the limit
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"is larger than {MAX_CONFIG_BYTES} bytes; is it the right file?", file=str(path)
            )
        raw = tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", file=str(path)) from None
    except RecursionError:
        raise ConfigError(
            "not valid TOML here: its values nest too deeply", file=str(path)
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot be read: {exc}", file=str(path)) from None
    return validate_config(raw, file=str(path))


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
