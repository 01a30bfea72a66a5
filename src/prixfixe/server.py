"""The MCP layer: a thin low-level `Server` over the app. Both protocol revisions the SDK
serves (2025-11-25 with `initialize`, 2026-07-28 stateless) reach the same handlers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from prixfixe import __version__
from prixfixe.app import App
from prixfixe.errors import PrixfixeError, to_mcp_error

SERVER_NAME = "prixfixe"


def build_server(app: App) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return app.list_tools_result()

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            return await app.call_tool(params.name, params.arguments, ctx)
        except PrixfixeError as exc:
            raise to_mcp_error(exc) from None

    def input_schema(name: str) -> dict[str, Any] | None:
        return app.registry.get(name).input_schema if name in app.registry else None

    @asynccontextmanager
    async def lifespan(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            # The store opens on first use; whatever opened it, shutdown closes it.
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(app.close_store)

    return Server(
        SERVER_NAME,
        version=__version__,
        title="prixfixe",
        instructions=app.instructions(),
        lifespan=lifespan,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(app: App) -> None:
    from prixfixe.stdio import serve_stdio as serve

    await serve(build_server(app))
