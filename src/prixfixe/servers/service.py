"""The mounted servers of one app: their connections, their tools in the registry, their
catalogues on disk, and the task group their connections run in while prixfixe serves.

How a lazily started server is searchable before it runs: its tool list is kept on disk
(`catalogue.py`, keyed by a hash of its configuration) and registered when the app is built,
so search, describe and even a `tools/list` that exposes its facet cost no process. A server
with no list yet (first use of this configuration) is started in the background when serving
starts, to read it (and then kept running, as if used: the start is paid already). Only
discovery waits for every one of those reads (`settled`, bounded by the start timeout), so a
search made right after start sees every server; a call naming a tool of a server whose list
is not known waits for that server alone, at most its `timeout` (`ready`), and is then told
that it is still starting or why it did not start (`check_known`), not "unknown tool". No
other call waits for a starting server. Starting at the first discovery call instead would
make that search pay every server's start-up; reading lists only from disk would leave a new
server unsearchable until something else started it. A server whose start failed has no list
to register; the next call naming one of its tools starts it again (after its backoff).

A denied facet's server is never started; its kept tools stay registered, so calling one
says it is denied rather than unknown. Its resources, templates and prompts are not
registered at all (nothing listed), and a read or subscription under its URI prefix is
refused as not found, saying why.

Resources, templates and prompts (`resources.py`, `prompts.py`) are kept and registered like
tools, under the owner `server:NAME`: prixfixe lists and pages them as its own. Every URI
under a server's prefix is read through it (`ResourceService.add_namespace`); the server is
the notifier's `Watcher` for those URIs, so a subscription in either revision subscribes
upstream, counted (one upstream subscription however many sessions), and the server's
`resources/updated` goes to the notifier under the namespaced URI, which delivers it to
exactly the sessions subscribed to it.

CONTRACT (the leash's caveats): every request that reaches a mounted server passes `admit`
first, however it got here — a tool call (`tools/call`, `tool_invoke`, an `mcp-query` step,
`query.py`), a resource read, a prompt, a completion — and a refusal (`LeashLimitError`)
means the server never hears of it. Past `valid_for_generation` nothing passes; `max_calls`
counts each of them against the session that asked, except the tool call a `tools/call`
carries itself (that request was counted as it came in).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import mcp_types as types

from prixfixe.config import LoadedConfig, ServerConfig
from prixfixe.core.facets import Exposure
from prixfixe.core.registry import Registry
from prixfixe.declarations.resource import MOUNT_OWNER_PREFIX
from prixfixe.declarations.tool import ToolContext
from prixfixe.errors import (
    ConfigError,
    PromptError,
    PromptRenderError,
    RegistryError,
    ResourceNotFoundError,
    ServerNotStartedError,
    ToolDeniedError,
    UpstreamError,
)
from prixfixe.servers import catalogue
from prixfixe.servers.catalogue import Lists
from prixfixe.servers.prompts import mounted_prompts
from prixfixe.servers.resources import (
    forwarding_reader,
    mounted_resources,
    mounted_uri,
    prefix_of,
    split_uri,
)
from prixfixe.servers.tools import mounted_tools
from prixfixe.servers.upstream import Launch, Read, Upstream, UpstreamRefusal
from prixfixe.tools.last_results import LastResults, last_results

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from prixfixe.resources.notify import Notifier
    from prixfixe.resources.service import ResourceService

log = logging.getLogger("prixfixe.servers")

#: The registry owner of a mounted server's tools, resources and prompts.
OWNER_PREFIX = MOUNT_OWNER_PREFIX
#: How a server says it has no such resource: -32002 before 2026-07-28, -32602 (with
#: `data.uri`) from it on.
NOT_FOUND_CODES = (-32002, -32602)


#: Lets one request reach a mounted server, or raises `LeashLimitError`: (the request that
#: asks, None outside MCP; whether `max_calls` counts it here).
Admit = Callable[["ServerRequestContext[Any] | None", bool], Awaitable[None]]


async def _admit_all(request: ServerRequestContext[Any] | None, counted: bool) -> None:
    return None


def owner_of(name: str) -> str:
    return OWNER_PREFIX + name


def check_names(servers: Iterable[str], plugin_facets: Iterable[str], config: LoadedConfig) -> None:
    """A server names its facet: it may not take a facet a plugin's tools are in (`core`
    would list every one of its tools)."""
    taken = set(plugin_facets)
    for name in servers:
        if name in taken:
            raise ConfigError(
                f"server name {name!r} is already a facet of prixfixe's tools; choose another "
                f"name (taken: {', '.join(sorted(taken))})",
                file=str(config.path) if config.path else None,
                key=f"servers.{name}",
            )


class Servers:
    def __init__(
        self,
        configs: Mapping[str, ServerConfig],
        registry: Registry,
        exposure: Exposure,
        launch: Launch,
        home: Path,
        admit: Admit = _admit_all,
    ) -> None:
        self.registry = registry
        self.admit = admit
        self.exposure = exposure
        self.home = home
        self.upstreams = {
            name: Upstream(name, config, launch, self._lists_read, self._updated)
            for name, config in configs.items()
            if config.enabled
        }
        self._known: dict[str, Lists] = {}
        self._reading: dict[str, anyio.Event] = {}
        self._since: dict[str, float] = {}  # when each read in `_reading` began (monotonic)
        self._tg: anyio.abc.TaskGroup | None = None
        self._serving = False
        self._notifier: Notifier | None = None
        self._watching: Counter[str] = Counter()  # namespaced URI -> its subscribers
        #: Each mounted tool's last result, for `inspect` (`result:NAME`).
        self.last_results: LastResults = last_results(registry)

    def reachable(self, name: str) -> bool:
        return self.exposure.reachable(name)

    def _catalogue(self, upstream: Upstream) -> Path:
        return catalogue.catalogue_path(self.home, upstream.name, upstream.config)

    # -- lists into the registry ----------------------------------------------------------

    def mount_catalogued(self) -> None:
        """Register every server's kept lists (no process is started)."""
        for upstream in self.upstreams.values():
            lists = catalogue.load_lists(self._catalogue(upstream))
            if lists is not None:
                self._register(upstream, lists)

    def serve_into(self, resources: ResourceService, notifier: Notifier) -> None:
        """Serve every URI under each server's prefix through it, and hear who subscribes."""
        for name in self.upstreams:
            reader = forwarding_reader(name, owner_of(name), partial(self._read, name))
            resources.add_namespace(prefix_of(name), reader)
        notifier.watchers.append(self)
        self._notifier = notifier

    def _lists_read(self, upstream: Upstream, read: Read) -> None:
        known = self._known.get(upstream.name)
        lists = Lists(
            tools=read.tools if read.tools is not None else known.tools if known else [],
            resources=_pick(read.resources, known.resources if known else []),
            templates=_pick(read.templates, known.templates if known else []),
            prompts=_pick(read.prompts, known.prompts if known else []),
            about=read.about if read.about is not None else known.about if known else "",
        )
        if self._register(upstream, lists):
            catalogue.save(
                self._catalogue(upstream),
                lists.tools,
                resources=lists.resources,
                templates=lists.templates,
                prompts=lists.prompts,
                about=lists.about,
            )

    def _register(self, upstream: Upstream, lists: Lists) -> bool:
        """Put `lists` in the registry as the server's whole lists; False if unchanged."""
        name = upstream.name
        known = self._known.get(name)
        if known == lists:
            return False
        owner = owner_of(name)
        if known is None or (known.tools, known.about) != (lists.tools, lists.about):
            declared = mounted_tools(
                name,
                lists.tools,
                lambda real, args, ctx: self._call(name, real, args, ctx),
                self.last_results.keep,
                self.about(name, lists.about) or "",
            )
            self.registry.replace_plugin(owner, tools=declared)
        # A denied server's resources and prompts are not registered: nothing lists them.
        reachable = self.reachable(name)
        if reachable and (
            known is None
            or (known.resources, known.templates) != (lists.resources, lists.templates)
        ):
            statics, families = mounted_resources(
                name,
                owner,
                lists.resources,
                lists.templates,
                lambda uri, request: self._read(name, uri, request),
                lambda t, v, value, chosen, request: self._complete(
                    name, types.ResourceTemplateReference(uri=t), v, value, chosen, request
                ),
            )
            self._replace(name, resources=statics, templates=families)
        if reachable and (known is None or known.prompts != lists.prompts):
            prompts = mounted_prompts(
                name,
                lists.prompts,
                lambda real, args, request: self._get_prompt(name, real, args, request),
                lambda real, a, value, chosen, request: self._complete(
                    name, types.PromptReference(name=real), a, value, chosen, request
                ),
            )
            self._replace(name, prompts=prompts)
        self._known[name] = lists
        return True

    def _replace(self, name: str, **declared: Iterable[object]) -> None:
        try:
            self.registry.replace_plugin(owner_of(name), **declared)
        except RegistryError as exc:  # a plugin took one of its names: keep what was there
            log.warning("[%s] its %s are not mounted: %s", name, " and ".join(declared), exc)

    def catalogued(self, name: str) -> list[types.Tool] | None:
        """The server's tool list as last read (from it or from disk)."""
        known = self._known.get(name)
        return None if known is None else known.tools

    def about(self, name: str, said: str | None) -> str | None:
        """What is known of server `name` to search it by and to show in the table of
        contents: its configured `description` (the person's words) first, then what it says
        of itself (`said`; None when its tools are not read yet)."""
        configured = self.upstreams[name].config.description
        parts = [p.strip() for p in (configured, said) if p and p.strip()]
        return "\n".join(parts) if parts else said

    def lists(self, name: str) -> Lists | None:
        """Everything the server lists, as last read (from it or from disk)."""
        return self._known.get(name)

    # -- resources, prompts, completion ---------------------------------------------------

    def _open(self, name: str, uri: str) -> Upstream:
        if not self.reachable(name):
            raise ResourceNotFoundError(
                uri, f"the mounted server {name!r} is denied on this server ([mcp] deny)"
            )
        return self.upstreams[name]

    async def _read(
        self, name: str, uri: str, request: ServerRequestContext[Any] | None
    ) -> types.ReadResourceResult:
        mounted = mounted_uri(name, uri)
        upstream = self._open(name, mounted)
        await self.admit(request, True)
        try:
            return await upstream.read_resource(uri)
        except UpstreamRefusal as exc:
            if exc.error.code in NOT_FOUND_CODES:
                detail = f"the mounted server {name!r} has no such resource"
                raise ResourceNotFoundError(mounted, f"{detail} ({exc.error.message})") from None
            exc.data["uri"] = mounted
            raise
        except UpstreamError as exc:
            exc.data["uri"] = mounted
            raise

    async def _get_prompt(
        self,
        name: str,
        prompt: str,
        arguments: dict[str, str],
        request: ServerRequestContext[Any] | None,
    ) -> types.GetPromptResult:
        if not self.reachable(name):
            raise PromptError(f"the mounted server {name!r} is denied on this server", server=name)
        await self.admit(request, True)
        try:
            return await self.upstreams[name].get_prompt(prompt, arguments)
        except UpstreamRefusal as exc:
            if exc.error.code == -32602:  # the arguments: the client's to fix
                raise PromptError(exc.message, server=name) from None
            raise PromptRenderError(exc.message, server=name) from None
        except UpstreamError as exc:
            raise PromptRenderError(exc.message, server=name) from None

    async def _complete(
        self,
        name: str,
        ref: types.ResourceTemplateReference | types.PromptReference,
        argument: str,
        value: str,
        chosen: Mapping[str, str],
        request: ServerRequestContext[Any] | None,
    ) -> types.Completion | None:
        if not self.reachable(name):
            return None
        await self.admit(request, True)
        return await self.upstreams[name].complete(ref, argument, value, chosen)

    # -- subscriptions (the notifier's `Watcher`) -------------------------------------------

    async def watch(self, uri: str, request: ServerRequestContext[Any] | None = None) -> None:
        """One more subscriber to `uri`: the first subscribes the server to it (starting the
        server if need be), a request the leash admits and counts for the session asking like
        any other that reaches the server. A URI of no mounted server is not ours."""
        found = split_uri(uri)
        if found is None or found[0] not in self.upstreams:
            return
        name, real = found
        upstream = self._open(name, uri)
        self._watching[uri] += 1
        if self._watching[uri] > 1:
            return
        try:
            await self.admit(request, True)
            await upstream.watch(real)
        except BaseException:
            self._watching[uri] -= 1
            if self._watching[uri] <= 0:
                del self._watching[uri]
            raise

    def unwatch(self, uri: str) -> None:
        if self._watching.get(uri, 0) <= 0:
            return
        self._watching[uri] -= 1
        if self._watching[uri] == 0:
            del self._watching[uri]
            found = split_uri(uri)
            if found is not None and found[0] in self.upstreams:
                self.upstreams[found[0]].unwatch(found[1])

    def _updated(self, upstream: Upstream, uri: str) -> None:
        if self._notifier is not None:
            self._notifier.changed(mounted_uri(upstream.name, uri))

    # -- calls ----------------------------------------------------------------------------

    async def _call(
        self, name: str, tool: str, arguments: dict[str, Any], ctx: ToolContext
    ) -> types.CallToolResult:
        if not self.reachable(name):  # App.reachable refuses first; this is the second lock
            raise UpstreamError(name, "is not reachable on this server (denied or narrowed)")
        upstream = self.upstreams[name]
        await self.admit(ctx.request, False)  # its `tools/call` was counted as it came in
        if ctx.request is None:
            return await upstream.call_tool(tool, arguments)
        return await upstream.call_tool(tool, arguments, ctx.progress, ctx.log)

    def server_of(self, tool: str) -> str | None:
        """The mounted server whose namespace tool name `tool` is in (`SERVER.tool`), if any."""
        head, dot, _ = tool.partition(".")
        return head if dot and head in self.upstreams else None

    def _pending(self, name: str) -> bool:
        event = self._reading.get(name)
        return event is not None and not event.is_set()

    async def settled(self) -> None:
        """Discovery's wait: until the tool lists being read at start are in, at most the
        longest start timeout of those still pending (+1s), so a search right after start
        sees every server. Nothing else waits for every server (see `ready`)."""
        pending = [(name, e) for name, e in self._reading.items() if not e.is_set()]
        if not pending:  # read already: no wait, no checkpoint, on every call after
            return
        bound = max(self.upstreams[name].start_timeout for name, _ in pending) + 1
        with anyio.move_on_after(bound):
            for _, event in pending:
                await event.wait()

    async def ready(self, name: str) -> None:
        """A call naming one of server `name`'s tools while its tool list is not known:
        wait for its start to read it, at most its `timeout`. A server whose start failed is
        started again first, once its backoff allows (its tools cannot be known otherwise).
        No wait for a server whose list is known, nor for any other server."""
        if name in self._known or name not in self.upstreams or not self.reachable(name):
            return
        upstream = self.upstreams[name]
        if not self._pending(name):
            if self._tg is None or upstream.backoff.wait_left() > 0:
                return
            self._read_soon(self._tg, upstream)
        with anyio.move_on_after(upstream.config.timeout):
            await self._reading[name].wait()

    def check_known(self, tool: str) -> None:
        """Raise `ServerNotStartedError` when `tool`, a name not registered, is in the
        namespace of a reachable server whose tool list is not known: it says whether the
        server is still starting or why it did not start, where "unknown tool" would mislead
        (`ToolDeniedError` when that server is denied, as for its registered tools)."""
        name = self.server_of(tool)
        if name is None or name in self._known:
            return
        if name in self.exposure.deny:  # as its tools would say if they were registered
            raise ToolDeniedError(tool, name, self.exposure.deny_source)
        if not self.reachable(name):  # narrowed away: its tools stay out of sight
            return
        upstream = self.upstreams[name]
        if self._pending(name):
            since = time.monotonic() - self._since[name]
            raise ServerNotStartedError(
                name,
                tool,
                "starting",
                f"is still starting ({since:.0f}s so far; a start may take up to "
                f"{upstream.start_timeout:g}s), so its tools are not known yet; call again "
                "once it has started (tool_search waits for it)",
            )
        if upstream.last_error is not None:
            wait = upstream.backoff.wait_left()
            again = (
                f"a call naming one of its tools starts it again in {wait:.1f}s or later"
                if wait > 0
                else "the next call naming one of its tools starts it again"
            )
            raise ServerNotStartedError(
                name,
                tool,
                "failed",
                f"its tools are not known because it {upstream.last_error}; {again}",
            )
        raise ServerNotStartedError(
            name,
            tool,
            "stopped",
            "has not started, so its tools are not known yet (a mounted server runs only "
            f"while prixfixe serves; `prixfixe servers test {name}` reads its tools)",
        )

    # -- serving --------------------------------------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Let servers run for the life of the block; stop every one at its end. Eager
        servers start now, servers with no kept tool list are read once (see the module)."""
        if self._serving:  # a nested server run shares the outer one's connections
            yield
            return
        self._serving = True
        try:
            async with anyio.create_task_group() as tg:
                for upstream in self.upstreams.values():
                    upstream.attach(tg)
                for upstream in self.upstreams.values():
                    eager = upstream.config.start == "eager"
                    if self.reachable(upstream.name) and (
                        eager or upstream.name not in self._known
                    ):
                        self._read_soon(tg, upstream)
                self._tg = tg
                try:
                    yield
                finally:
                    for upstream in self.upstreams.values():
                        upstream.stop("prixfixe stopped")
                    tg.cancel_scope.cancel()
        finally:
            for upstream in self.upstreams.values():
                upstream.detach()
            self._reading.clear()
            self._since.clear()
            self._tg = None
            self._serving = False

    def _read_soon(self, tg: anyio.abc.TaskGroup, upstream: Upstream) -> None:
        """Start `upstream` in the background, to read its lists (`ready` and `settled` wait)."""
        self._reading[upstream.name] = anyio.Event()
        self._since[upstream.name] = time.monotonic()
        tg.start_soon(self._start, upstream)

    async def _start(self, upstream: Upstream) -> None:
        try:
            await upstream.session()
        except UpstreamError as exc:
            log.warning("%s", exc.message)
        finally:
            self._reading[upstream.name].set()


def _pick(read: list[Any] | None, known: list[Any]) -> list[Any]:
    return known if read is None else read
