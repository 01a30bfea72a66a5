"""A routine step's call to a mounted server's tool (the `mcp-query` step type), with its
authority checked here, where the call is made.

A step may call only a server the configuration mounts (`[servers.NAME]`, enabled): a client
names one of those, never a command line or a URL. A server whose facet `[mcp] deny` denies,
or that a narrowed exposure does not reach, is refused before anything starts. The call goes
through the app's own `Servers` runtime (the same connection, timeouts, restarts and
backoff as `tool_invoke`); its faults are `UpstreamError`s naming the server. A call the
configuration allows is then admitted by the leash like any request to a mounted server
(`Servers.admit`: `valid_for_generation`, and `max_calls` counting it against the session of
the tool call running the routine), or refused before it is sent.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import mcp_types as types

from prixfixe.core.facets import Exposure
from prixfixe.errors import StepFailure
from prixfixe.servers.service import Servers

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext


def check_query(
    servers: Servers, configured: Mapping[str, Any], exposure: Exposure, server: str, tool: str
) -> None:
    """Refuse a call the configuration does not allow, naming why (kind `refused`)."""
    if server not in configured:
        known = ", ".join(configured) or "none"
        hint = difflib.get_close_matches(server, list(configured), n=1)
        mean = f"; did you mean {hint[0]!r}?" if hint else ""
        raise StepFailure(
            f"no server {server!r} is configured in [servers]{mean} (configured: {known}); "
            "a step can call only a server the configuration mounts",
            kind="refused",
        )
    if server in exposure.deny:
        raise StepFailure(
            f"server {server!r} is denied (from {exposure.deny_source}): "
            "its tools cannot be called",
            kind="refused",
        )
    if server not in servers.upstreams:
        raise StepFailure(f"server {server!r} is disabled (enabled = false)", kind="refused")
    if not exposure.reachable(server):
        raise StepFailure(
            f"server {server!r} is not reachable on this server (its facet is narrowed away)",
            kind="refused",
        )
    known_tools = servers.catalogued(server)
    if known_tools is not None and tool not in {t.name for t in known_tools}:
        names = [t.name for t in known_tools]
        hint = difflib.get_close_matches(tool, names, n=1)
        mean = f"; did you mean {hint[0]!r}?" if hint else ""
        raise StepFailure(
            f"server {server!r} has no tool {tool!r}{mean} (its tools: {', '.join(names[:20])}"
            + (" ...)" if len(names) > 20 else ")"),
            kind="not-found",
        )


async def call_mounted(
    servers: Servers,
    configured: Mapping[str, Any],
    exposure: Exposure,
    server: str,
    tool: str,
    arguments: Mapping[str, Any],
    request: ServerRequestContext[Any] | None = None,
) -> types.CallToolResult:
    """Call `tool` (its upstream name) on mounted server `server` for `request` (the tool
    call running the routine; None outside MCP) and return its result as the server gave
    it; refusals are `StepFailure`s (the leash's: `LeashLimitError`), faults `UpstreamError`s."""
    if server in servers.upstreams and exposure.reachable(server):
        await servers.ready(server)  # its tool list, if still being read (not another's)
    check_query(servers, configured, exposure, server, tool)
    await servers.admit(request, True)
    return await servers.upstreams[server].call_tool(tool, dict(arguments))
