"""The running server as a plugin sees it: `ctx.app` in a tool's, reader's or prompt's context.

A Protocol, so this module (and a plugin) depends on no part of the server that assembles it;
the assembled application (`App`, the top layer) is the one implementation. It holds what
plugins reach through `ctx.app` — the built-in ones included — and nothing else: a plugin that
needs more asks for a new member here, which keeps the surface plugins rely on in one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from prixfixe.declarations.interaction import LogLevels

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.context import ServerRequestContext

    from prixfixe.core.facets import Exposure
    from prixfixe.core.plugins import PluginInfo
    from prixfixe.core.registry import RegisteredTool, Registry
    from prixfixe.programs.runner import ProgramOutcome
    from prixfixe.programs.sandbox import Programs
    from prixfixe.resources.notify import Notifier
    from prixfixe.routines.service import Routines
    from prixfixe.store.api import Store
    from prixfixe.system.capability_index import CapabilityIndex
    from prixfixe.tools.finder import Finder


class Host(LogLevels, Protocol):
    """What plugin code may reach of the running server."""

    @property
    def registry(self) -> Registry:
        """Every declared tool, step type, store kind, resource and prompt."""
        ...

    @property
    def exposure(self) -> Exposure:
        """Which facets this server lists, reaches and denies."""
        ...

    @property
    def plugins(self) -> Sequence[PluginInfo]:
        """The plugins loaded, skipped or failed, and why."""
        ...

    @property
    def started_at(self) -> float:
        """When the server started (Unix seconds)."""
        ...

    @property
    def started_monotonic(self) -> float:
        """When the server started (`time.monotonic()`), for uptime."""
        ...

    @property
    def store(self) -> Store:
        """The store, opened on first use (blocking: use from a worker thread)."""
        ...

    @property
    def notifier(self) -> Notifier:
        """Tell subscribed clients a resource changed: `ctx.app.notifier.changed(uri)`."""
        ...

    @property
    def semantic_search(self) -> bool:
        """`[search] knowledge_semantic`: knowledge search fuses dense embeddings."""
        ...

    @property
    def routines(self) -> Routines:
        """Configured and built-in routines, and the gates their steps pass."""
        ...

    @property
    def finder(self) -> Finder:
        """Tool search over the tools this server may serve."""
        ...

    @property
    def capability_index(self) -> CapabilityIndex:
        """The capability index in its three sizes."""
        ...

    async def servers_ready(self, tool: str | None = None) -> None:
        """Wait (bounded) for mounted servers still reading their tool lists at start: every
        one (`tool` None: a search), else only the one whose tools `tool` would be among."""
        ...

    def reachable(self, name: str) -> RegisteredTool:
        """The tool called `name` if this server may serve it; else a clear error."""
        ...

    async def call_tool(
        self,
        name: str,
        arguments: Any,
        request: ServerRequestContext[Any] | None = None,
        *,
        redact: bool = True,
        interactive: bool = True,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Validate and run one tool, as `tools/call` does (`redact=False`: the caller
        returns the result from a tool call of its own, which redacts it; `interactive=False`:
        nothing is asked of the person, a missing argument gets the fallback error)."""
        ...

    async def count_call(self, request: ServerRequestContext[Any]) -> str | None:
        """Count one tool call against `[leash] max_calls`; the refusal when it is spent."""
        ...

    @property
    def programs(self) -> Programs:
        """The program sandbox (`program_run`): its limits, and its pool, started on first
        use."""
        ...

    async def run_program(self, code: str, limits: Mapping[str, Any]) -> ProgramOutcome:
        """A routine's `program` step: run `code` as `program_run` would, under `[programs]`
        lowered by `limits`, its calls counted against the session running the routine."""
        ...

    async def read_resource_text(self, uri: str) -> str:
        """A resource's text contents, joined."""
        ...

    async def call_server_tool(
        self, server: str, tool: str, arguments: Mapping[str, Any]
    ) -> types.CallToolResult:
        """Call a tool of a server mounted in `[servers]` (its upstream name), unless denied."""
        ...
