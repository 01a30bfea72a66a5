"""The assembled application: config, plugins, registry and facet policy, shared by the MCP
layer and the CLI, with the one dispatch path every tool call goes through."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types

from prixfixe.config import (
    LoadedConfig,
    home_dir,
    load_config,
    shared_store_url,
    store_url,
)
from prixfixe.core.calls import PluginCrash, call_plugin
from prixfixe.core.facets import Exposure, check_known_facets, resolve_exposure
from prixfixe.core.plugins import PluginInfo, build_plugin_manager, collect
from prixfixe.core.registry import RegisteredTool, Registry, RegistryChange
from prixfixe.declarations.interaction import InputRequired, input_required_result
from prixfixe.declarations.tool import ToolContext, ToolResult
from prixfixe.errors import (
    LeashLimitError,
    MissingClientCapabilityError,
    PrixfixeError,
    ToolDeniedError,
    ToolRefusedError,
    UnknownToolError,
)
from prixfixe.store import Store, StoreChange, StoreObserver, open_store
from prixfixe.tools.elicitation import check_never_ask, settle_arguments
from prixfixe.tools.results import error_result, redact_result, tool_output

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from prixfixe.knowledge.watch import FolderSync
    from prixfixe.programs.runner import ProgramOutcome
    from prixfixe.programs.sandbox import Programs
    from prixfixe.prompts.service import PromptService
    from prixfixe.resources.notify import Notifier
    from prixfixe.resources.service import ResourceService
    from prixfixe.routines.service import Routines
    from prixfixe.servers.service import Servers
    from prixfixe.system.activity import ActivityLog, Outcome
    from prixfixe.system.capability_index import CapabilityIndex
    from prixfixe.tools.finder import Finder

#: The most tools a default `tools/list` may hold, and the most cl100k tokens its compact JSON
#: (`App.list_tools_json`, as a client receives it; prixfixe's own tools list no output
#: schema, see `RegisteredTool.wire`) may cost. Tests pin both; raising either is a design
#: change.
DEFAULT_TOOL_BUDGET = 7
DEFAULT_TOKEN_BUDGET = 700
#: MCP log levels, least severe first (RFC 5424 order).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@dataclass
class App:
    config: LoadedConfig
    exposure: Exposure
    registry: Registry
    plugins: list[PluginInfo]
    env: Mapping[str, str] = field(repr=False)
    _listing: tuple[int, types.ListToolsResult] | None = field(default=None, repr=False)
    _store: Store | None = field(default=None, repr=False)
    _store_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _store_observers: list[StoreObserver] = field(default_factory=list, repr=False)
    started_at: float = field(default_factory=time.time, repr=False)
    started_monotonic: float = field(default_factory=time.monotonic, repr=False)
    #: The working directory: where a config-less routine and inline steps resolve paths.
    cwd: Path = field(default_factory=Path.cwd)
    _log_levels: dict[object, str] = field(default_factory=dict, repr=False)
    _calls: dict[object, int] = field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls,
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        facet: str | None = None,
        extra_plugins: Sequence[object] = (),
        config: LoadedConfig | None = None,
    ) -> App:
        """Load config (unless given, as loaded from the same `env` and `cwd`) and plugins and
        check the facet policy; raise `PrixfixeError` if invalid."""
        env = dict(os.environ) if env is None else dict(env)
        config = load_config(env, cwd) if config is None else config
        pm, infos = build_plugin_manager(env, extra_plugins)
        registry = collect(pm, infos)
        exposure = resolve_exposure(config, env, narrow=facet)
        # A mounted server is a facet before its tools are known (a lazy one never started).
        servers = list(config.model.servers)
        check_known_facets(exposure, [*registry.facets(), *servers], config)
        check_never_ask(config, registry)
        app = cls(
            config=config,
            exposure=exposure,
            registry=registry,
            plugins=infos,
            env=env,
            cwd=Path.cwd() if cwd is None else cwd,
        )
        app.routines  # noqa: B018 - a typo in a routine's step is a config error now, not later
        if servers:
            from prixfixe.servers.service import check_names

            check_names(servers, registry.facets(), config)
            app.servers.mount_catalogued()
        return app

    @cached_property
    def routines(self) -> Routines:
        """Configured and built-in routines, and the exec gate their steps define."""
        from prixfixe.routines.service import Routines

        return Routines.load(self.config, self.registry.step_types, self.env, self.cwd)

    @cached_property
    def programs(self) -> Programs:
        """The program sandbox (`program_run`): nothing of it is imported or started until a
        program runs; `serving` stops its workers when the server stops."""
        from prixfixe.programs.sandbox import Programs

        return Programs(self.config.model.programs)

    @cached_property
    def finder(self) -> Finder:
        # Imported on first search: the ranker and its stemmer are not needed to start serving.
        from prixfixe.tools.finder import Finder

        return Finder.configured(self.registry, self.exposure, self.config.model, self.home)

    # -- mounted servers --------------------------------------------------------------------

    @cached_property
    def servers(self) -> Servers:
        """The `[servers]` mounted behind the trio: connections, tools, catalogues."""
        from prixfixe.servers.service import Servers
        from prixfixe.servers.upstream import Launch

        routines = self.routines
        base_dir = self.config.path.parent if self.config.path else self.cwd
        launch = Launch(gate=routines.gate, net=routines.net, env=self.env, base_dir=base_dir)
        servers = Servers(
            self.config.model.servers,
            self.registry,
            self.exposure,
            launch,
            self.home,
            admit=self.admit_mounted,
        )
        servers.serve_into(self.resources, self.notifier)
        return servers

    async def call_server_tool(
        self, server: str, tool: str, arguments: Mapping[str, Any]
    ) -> types.CallToolResult:
        """A routine step's call to a mounted server's tool (`mcp-query`), counted against the
        session of the tool call running the routine (`routine_eval`, `routine_run`, ...)."""
        from prixfixe.servers.query import call_mounted

        servers = self.config.model.servers
        return await call_mounted(
            self.servers, servers, self.exposure, server, tool, arguments, _CALLING.get()
        )

    async def run_program(self, code: str, limits: Mapping[str, Any]) -> ProgramOutcome:
        """A routine's `program` step: `code` run as `program_run` runs it, under `[programs]`
        lowered by `limits` (one above it refused), each call dispatched with the request of
        the tool call running the routine, so it counts against that session as `mcp-query`
        does. Refused where `program_run` would be: its facet denied or out of reach, or
        inside a program (no program inside a program)."""
        from prixfixe.programs.runner import PROGRAM_TOOL, inside_program, run_program

        self.reachable(PROGRAM_TOOL)
        if inside_program():
            raise ToolRefusedError(
                "a program cannot run inside a program (this routine was run by one): run "
                "the routine directly"
            )
        lowered = self.programs.limits.lowered(dict(limits))
        return await run_program(self, code, _CALLING.get(), lowered)

    async def admit_mounted(self, request: ServerRequestContext[Any] | None, counted: bool) -> None:
        """Let one request reach a mounted server, or raise `LeashLimitError`: past
        `valid_for_generation` none does, and `counted` ones count against `max_calls` for
        the session asking (`count_call`; a person at the CLI has no session to count)."""
        leash = self.routines.leash
        if leash.valid_for_generation is not None:
            generation = await anyio.to_thread.run_sync(lambda: self.store.generation())
            leash.check_generation(generation)
        if counted and request is not None:
            spent = await self.count_call(request)
            if spent is not None:
                raise LeashLimitError(spent)

    @asynccontextmanager
    async def serving(self, *, folders: bool = True) -> AsyncIterator[None]:
        """What runs while a server serves this app: its mounted servers' connections and,
        unless `folders` is false, its configured knowledge folders (ingested at start in a
        worker thread, then watched); at the end, the program sandbox's workers stop, if a
        program started them."""
        async with AsyncExitStack() as stack:
            stack.push_async_callback(self._stop_programs)
            stack.push_async_callback(self._stop_activity)
            if self.config.model.servers:
                await stack.enter_async_context(self.servers.running())
            if folders and self.config.model.knowledge.folders:
                await stack.enter_async_context(self.knowledge_folders.running())
            yield

    async def _stop_programs(self) -> None:
        """Stop the program sandbox's workers, if a program ever started them."""
        programs: Programs | None = self.__dict__.get("programs")
        if programs is not None:
            await programs.close()

    async def _stop_activity(self) -> None:
        """Write the calls still waiting for the activity log's worker, and stop it."""
        activity: ActivityLog | None = self.__dict__.get("activity")
        if activity is not None:
            await anyio.to_thread.run_sync(activity.close)

    @cached_property
    def activity(self) -> ActivityLog:
        """The log of the tool calls agents made (`[activity]`; see `system.activity`)."""
        from prixfixe.system.activity import ActivityLog

        return ActivityLog(self.config.model.activity, lambda: self.store)

    @cached_property
    def knowledge_folders(self) -> FolderSync:
        """The configured `[knowledge.folders]`, kept in step with their collections."""
        from prixfixe.knowledge import KNOWLEDGE_OWNER
        from prixfixe.knowledge.watch import FolderSync, configured

        base_dir = self.config.path.parent if self.config.path else self.cwd
        return FolderSync(
            configured(self.config, base_dir),
            lambda: self.store.slice(KNOWLEDGE_OWNER),
            self.routines.fs,
            self.notifier,
            debounce_ms=self.config.model.knowledge.debounce_ms,
            semantic=self.semantic_search,
        )

    # -- the store --------------------------------------------------------------------------

    @property
    def home(self) -> Path:
        return home_dir(self.env)

    @property
    def store(self) -> Store:
        """The store, opened (and migrated) on first use, so starting a server costs nothing.

        Opening blocks on file I/O: async code reaches it from a worker thread."""
        with self._store_lock:
            if self._store is None:
                url, password = store_url(self.config.model, self.env)
                store = open_store(
                    self.home,
                    self.registry.kinds,
                    self.registry.migrations,
                    url=url,
                    password=password,
                )
                for observer in self._store_observers:
                    store.observe(observer)
                self._store = store
            return self._store

    def observe_store(self, observer: StoreObserver) -> None:
        """Tell `observer` of every committed write through this app's store, from now on
        (including after the store is closed and opened again)."""
        with self._store_lock:
            self._store_observers.append(observer)
            if self._store is not None:
                self._store.observe(observer)

    def close_store(self) -> None:
        """Close the store if it was opened (after writing the activity log's pending calls);
        the next use opens it again."""
        activity: ActivityLog | None = self.__dict__.get("activity")
        if activity is not None:
            activity.close()  # its worker opens the store under the lock: not while held
        with self._store_lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    @property
    def semantic_search(self) -> bool:
        """`[search] knowledge_semantic`: knowledge search (and ingest) fuses dense embeddings;
        tool search reads `[search] semantic` itself (`Finder.configured`)."""
        return self.config.model.search.knowledge_semantic

    # -- resources --------------------------------------------------------------------------

    @cached_property
    def notifier(self) -> Notifier:
        """Who is subscribed to which resource, and delivery of their change notifications."""
        from prixfixe.resources.notify import Notifier

        notifier = Notifier()
        self.observe_store(lambda change: notifier.changed(*_changed_uris(change)))
        notifier.watchers.append(_OpensStore(self))
        self.registry.subscribe(lambda change: self._registry_changed(notifier, change))
        return notifier

    @cached_property
    def resources(self) -> ResourceService:
        from prixfixe.resources.service import ResourceService
        from prixfixe.system.capability_index import unadvertised

        settings = self.config.model.resources
        hidden = unadvertised(settings.capability_index.advertise)
        return ResourceService(self.registry, settings, host=self, hidden=hidden)

    async def read_resource_text(self, uri: str) -> str:
        """A resource's text contents, joined (for steps that read resources)."""
        import mcp_types as types

        result = await self.resources.read(uri)
        return "".join(c.text for c in result.contents if isinstance(c, types.TextResourceContents))

    @cached_property
    def prompts(self) -> PromptService:
        from prixfixe.prompts.service import PromptService

        return PromptService(self.registry, host=self)

    @cached_property
    def capability_index(self) -> CapabilityIndex:
        from prixfixe.routines.tools import STEP_TOOLS
        from prixfixe.store.tools import STORE_TOOLS
        from prixfixe.system.capability_index import CapabilityIndex

        # The relationships the built-in plugins declare beside their tools.
        return CapabilityIndex(
            self.registry,
            self.exposure,
            {"store_kind": STORE_TOOLS, "step_type": STEP_TOOLS},
            servers=[n for n, c in self.config.model.servers.items() if c.enabled],
            described={
                n: c.description for n, c in self.config.model.servers.items() if c.description
            },
        )

    def _registry_changed(self, notifier: Notifier, change: RegistryChange) -> None:
        from prixfixe.system.capability_index import INDEX_URIS

        changed = [
            t
            for t in self.registry.declaration_types
            if change[t.field] or change.removed.get(t.field)
        ]
        listings = {t.listing for t in changed}
        if "resources" in listings:
            notifier.list_changed()
        # A tool in an unlisted facet changes no `tools/list`: only search finds it.
        listed_before = (
            {t.name for t in self._listing[1].tools} if self._listing is not None else set()
        )
        if "tools" in listings and (
            any(self.exposure.listed(self.registry.get(n).tool.facet) for n in change.tools)
            or not listed_before.isdisjoint(change.removed.get("tools", ()))
        ):
            notifier.tools_changed()
        if "prompts" in listings:
            notifier.prompts_changed()
        if any(t.refreshes_index for t in changed):
            notifier.changed(*INDEX_URIS.values())

    # -- logging to clients -----------------------------------------------------------------

    def set_log_level(self, request: ServerRequestContext[Any], level: str) -> None:
        """`logging/setLevel` (2025-11-25): the least severe level this connection hears."""
        from prixfixe.resources.notify import connection_of

        connection = connection_of(request)
        if connection is None:
            return
        if connection not in self._log_levels:
            connection.exit_stack.callback(self._log_levels.pop, connection, None)
        self._log_levels[connection] = level

    def log_level_allows(self, request: ServerRequestContext[Any], level: str) -> bool:
        """Whether a log message at `level` may go to this request's client. On 2026-07-28
        the SDK applies the per-request opt-in itself."""
        from prixfixe.resources.notify import connection_of

        connection = connection_of(request)
        floor = self._log_levels.get(connection) if connection is not None else None
        return floor is None or LOG_LEVELS.index(level) >= LOG_LEVELS.index(floor)

    # -- the leash's per-session caveat ----------------------------------------------------

    async def count_call(self, request: ServerRequestContext[Any]) -> str | None:
        """Count one `tools/call` against `[leash] max_calls`; the refusal when it is spent.

        A handshake-era session counts on its own (a session lives on one instance).
        Stateless (2026-07-28) requests have no session: they share one count, held in the
        database when the store is PostgreSQL (so every instance behind one address counts
        together, across restarts), else in this process for its life. The shared count is
        keyed by the limit and `valid_for_generation`, so renewing the leash renews it."""
        from prixfixe.resources.notify import connection_of

        leash = self.routines.leash
        limit = leash.max_calls
        if limit is None:
            return None
        connection = connection_of(request)
        if connection is None and shared_store_url(self.config.model, self.env) is not None:
            scope = f"leash.max_calls:{limit}:{leash.valid_for_generation}"
            count = await anyio.to_thread.run_sync(self._count_shared, scope)
            if count <= limit:
                return None
            return (
                f"the leash allows {limit} stateless tool calls across this deployment and "
                f"they have been used (max_calls, {leash.sources['max_calls']}; counted in "
                "the shared database); raising max_calls or renewing valid_for_generation "
                "starts a new count"
            )
        key: object = connection if connection is not None else _STATELESS
        if key not in self._calls and connection is not None:
            connection.exit_stack.callback(self._calls.pop, connection, None)
        self._calls[key] = count = self._calls.get(key, 0) + 1
        if count <= limit:
            return None
        return (
            f"the leash allows {limit} tool calls per session and this session has used them "
            f"(max_calls, {leash.sources['max_calls']}); start a new session"
        )

    def _count_shared(self, scope: str) -> int:
        from prixfixe.store.postgres import PostgresStore

        store = self.store  # opened here, in a worker thread, on a first call
        assert isinstance(store, PostgresStore)
        return store.count(scope)

    # -- what a connection sees -------------------------------------------------------------

    def listed_tools(self) -> list[RegisteredTool]:
        return [e for e in self.registry if self.exposure.listed(e.tool.facet)]

    def list_tools_result(self) -> types.ListToolsResult:
        """The `tools/list` answer, built once per registry version so it is byte-stable."""
        if self._listing is None or self._listing[0] != self.registry.version:
            result = types.ListToolsResult(tools=[e.wire for e in self.listed_tools()])
            self._listing = (self.registry.version, result)
        return self._listing[1]

    def list_tools_json(self) -> str:
        """The listed tools as compact wire JSON: what a client puts in the model's context."""
        tools = [
            t.model_dump(mode="json", by_alias=True, exclude_none=True)
            for t in self.list_tools_result().tools
        ]
        return json.dumps(tools, separators=(",", ":"), ensure_ascii=False)

    def instructions(self) -> str:
        """What a client is told once, when a session starts: how to reach every tool, the
        facets, a table of contents (each reachable facet and mounted server in one line), and
        the day it is then (a session that outlives the day keeps this text)."""
        from prixfixe.dates import WEEKDAY_NAMES
        from prixfixe.tools.discovery import contents_lines

        clock = self.routines.clock
        now = clock.now()
        servers: dict[str, str | None] = {}
        for name, server in self.config.model.servers.items():
            if server.enabled:
                lists = self.servers.lists(name)
                servers[name] = self.servers.about(name, None if lists is None else lists.about)
        contents = contents_lines(self.registry, self.exposure, servers)
        return "\n".join(
            [
                "Call the listed tools directly. Many more are not listed: find one with "
                "tool_search(query), learn its arguments with tool_describe(name), call it "
                "with tool_invoke(name, arguments). "
                f"{_PROGRAMS_LINE if self.exposure.reachable('programs') else ''}"
                f"Facets: {self.exposure.describe()}. "
                f"Today (at connection): {WEEKDAY_NAMES[now.weekday()]} {now.date()}, "
                f"{clock.name}.",
                "What exists (facet: its tools):",
                *contents,
            ]
        )

    # -- reaching a tool ------------------------------------------------------------------

    async def servers_ready(self, tool: str | None = None) -> None:
        """Wait for mounted servers still reading their tool lists: every one for a search
        (`tool` None), else only the server whose namespace `tool` is in (see `Servers`)."""
        if not self.config.model.servers:
            return
        if tool is None:
            await self.servers.settled()
            return
        server = self.servers.server_of(tool)
        if server is not None:
            await self.servers.ready(server)

    def reachable(self, name: str) -> RegisteredTool:
        """The tool called `name`, if this server may serve it; else a clear error."""
        if name not in self.registry:
            if self.config.model.servers:  # a tool of a server still starting, or not started
                self.servers.check_known(name)
            pool = [e.name for e in self.registry if self.exposure.reachable(e.tool.facet)]
            raise UnknownToolError(name, self.registry.suggest(name, pool))
        entry = self.registry.get(name)
        facet = entry.tool.facet
        if facet in self.exposure.deny:
            raise ToolDeniedError(name, facet, self.exposure.deny_source)
        if not self.exposure.reachable(facet):
            raise UnknownToolError(name)
        return entry

    async def call_tool(
        self,
        name: str,
        arguments: Any,
        request: ServerRequestContext[Any] | None = None,
        *,
        redact: bool = True,
        interactive: bool = True,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Validate and run one tool. Unknown or denied names raise; everything that goes
        wrong inside the call (bad arguments, a failing handler) is an `isError` result the
        model can read and correct, as the MCP spec asks for tool execution errors. A tool
        that asks the client for input on 2026-07-28 ends with an `input_required` result.
        Every result passes the redactor: no registered secret value reaches the client.
        `redact=False` is for a tool handler returning the result as its own (`tool_invoke`):
        the handler runs only inside `call_tool`, which redacts what it returns, once.
        `interactive=False` (a program's call, `program_run`) asks the person nothing: a
        missing argument gets the fallback error a client without elicitation gets, and the
        handler's own `ctx.ask` is an error. A call with a `request` (an agent's, over MCP) is
        handed to the activity log (`system.activity`), marked `via` the call it runs inside."""
        calling = _CALLING.set(request)  # what a routine's `mcp-query` steps count against
        via = _VIA.get()
        inside = _VIA.set(name)
        started = time.monotonic()
        returned: list[Any] = []  # what the handler returned, before it became the result
        try:
            result = await self._call_tool(name, arguments, request, interactive, returned)
        except Exception as exc:
            if request is not None:  # an agent's call (a person at the CLI has no request)
                outcome: Outcome = "refused" if isinstance(exc, PrixfixeError) else "error"
                self._log_call(name, arguments, request, via, started, outcome, None, None)
            raise
        finally:
            _CALLING.reset(calling)
            _VIA.reset(inside)
        if request is not None:
            if isinstance(result, types.InputRequiredResult):
                self._log_call(name, arguments, request, via, started, "input required", None, None)
            else:
                outcome = "error" if result.is_error else "ok"
                data = returned[0].data if returned and name == "tool_search" else None
                self._log_call(name, arguments, request, via, started, outcome, result, data)
        if redact and isinstance(result, types.CallToolResult):
            return redact_result(result)
        return result

    def log_refused(self, name: str, arguments: Any, request: ServerRequestContext[Any]) -> None:
        """Log a call refused before dispatch (the session spent the leash's `max_calls`)."""
        self._log_call(name, arguments, request, None, time.monotonic(), "refused", None, None)

    def _log_call(
        self,
        name: str,
        arguments: Any,
        request: ServerRequestContext[Any],
        via: str | None,
        started: float,
        outcome: Outcome,
        result: types.CallToolResult | None,
        searched: Any,
    ) -> None:
        """Hand one call to the activity log: references only, nothing counted or written here
        (the log's worker thread does that). `searched` is what `tool_search` found (its
        query and whether it had a good match)."""
        settings = self.config.model.activity
        if not settings.enabled:
            return
        from prixfixe.system.activity import Pending

        entry = self.registry.get(name) if name in self.registry else None
        server = self.servers.server_of(name) if self.config.model.servers else None
        texts: list[str] = []
        search: Mapping[str, Any] | None = None
        if result is not None:
            texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
        if searched is not None:
            search = {
                "query": getattr(searched, "query", None),
                "good_match": getattr(searched, "good_match", None),
            }
        self.activity.record(
            Pending(
                at=time.time(),
                tool=name,
                server=server,
                facet=None if entry is None else entry.tool.facet,
                via=via,
                outcome=outcome,
                duration_ms=(time.monotonic() - started) * 1000,
                client=_client_name(request),
                texts=texts,
                search=search,
                arguments=arguments if settings.keep_arguments else None,
            )
        )

    async def _call_tool(
        self,
        name: str,
        arguments: Any,
        request: ServerRequestContext[Any] | None,
        interactive: bool = True,
        returned: list[Any] | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """`call_tool`'s work; a `ToolResult` the handler returned is appended to `returned`."""
        if name not in self.registry:
            await self.servers_ready(name)  # its server may still be reading its tool list
        entry = self.reachable(name)
        what = f"tool {name!r}"
        try:
            model = self.config.model
            settled = await settle_arguments(
                self,
                entry,
                arguments,
                request,
                model.mcp,
                model.servers,
                interactive=interactive,
            )
            if isinstance(settled, types.CallToolResult):
                return settled  # invalid arguments, not asked for (or answered no)
            context = ToolContext(
                app=self,
                request=settled.request,
                owner=entry.tool.owner,
                interactive=interactive,
            )
            try:
                return await call_plugin(
                    entry.tool.handler,
                    context,
                    settled.arguments,
                    what=what,
                    convert=partial(_kept, returned, partial(tool_output, entry)),
                )
            except InputRequired as needed:
                raise settled.carry(needed) from None  # keeps the answers across its rounds
        except InputRequired as needed:
            result: types.InputRequiredResult = input_required_result(needed)
            return result
        except MissingClientCapabilityError:
            raise  # a protocol error (-32021), not the tool's result
        except PrixfixeError as exc:
            # No MCP request: a person at the CLI made the call, so the message names commands.
            return error_result(exc.message if request is not None else exc.for_people)
        except PluginCrash as crash:
            return error_result(str(crash))


#: The instructions' one line about programs (when their facet is reachable).
_PROGRAMS_LINE = "Chain several calls in one step with program_run(code), a Python program. "
#: The tool whose call is running (None outside one): an inner call's `via` in the activity log.
_VIA: ContextVar[str | None] = ContextVar("prixfixe_via", default=None)
#: The count key of requests that have no session (stateless HTTP).
_STATELESS = object()
#: The MCP request of the tool call running (None outside MCP).
_CALLING: ContextVar[ServerRequestContext[Any] | None] = ContextVar(
    "prixfixe_calling", default=None
)


def _kept(
    returned: list[Any] | None,
    convert: Callable[[Any], types.CallToolResult | types.InputRequiredResult],
    output: Any,
) -> types.CallToolResult | types.InputRequiredResult:
    """`convert(output)`, after appending a `ToolResult` output to `returned`."""
    if returned is not None and isinstance(output, ToolResult):
        returned.append(output)
    return convert(output)


def _client_name(request: ServerRequestContext[Any]) -> str | None:
    """The client's name from its `initialize` (`clientInfo`), if it gave one."""
    params = getattr(request.session, "client_params", None)
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    return name if isinstance(name, str) else None


@dataclass(frozen=True)
class _OpensStore:
    """A subscriber to a record's URI opens the store (in a worker thread) before the
    subscription is answered: a store shared with other instances (PostgreSQL) listens for
    their writes only once opened, and a subscriber must hear every write after it subscribed."""

    app: App

    async def watch(self, uri: str, request: ServerRequestContext[Any] | None = None) -> None:
        import anyio.to_thread

        from prixfixe.store.uris import RECORD_TEMPLATE

        if uri.startswith(RECORD_TEMPLATE.split("{", 1)[0]) and self.app._store is None:
            await anyio.to_thread.run_sync(lambda: self.app.store)

    def unwatch(self, uri: str) -> None:
        pass


def _changed_uris(change: StoreChange) -> list[str]:
    from prixfixe.store.uris import record_uri

    if change.kind is None:
        return []
    return [record_uri(change.kind, record_id) for record_id in change.ids]
