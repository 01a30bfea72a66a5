"""The least an MCP proxy written with the Python SDK does: the baseline for `bench_servers.py`'s
mounted-call latency.

`python benchmarks/bare_proxy.py COMMAND [ARG...]` starts `COMMAND` as an MCP server over the
SDK's `stdio_client`, and serves a bare `mcp.server.lowlevel.Server` over the SDK's
`stdio_server` whose `tools/call` hands each call to that server's session as it came and
returns its result as it went: no argument check, no masking, no leash, no naming, no
discovery tools. Whatever a call costs here beyond calling the server directly is what any
process between a client and a server costs when built on the SDK (a second stdio hop, each
message parsed and written again, two sessions' bookkeeping); what prixfixe costs beyond this
is its own.

The server's environment is this process's (the benchmark gives it nothing secret).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def serve(command: str, args: Sequence[str]) -> None:
    params = StdioServerParameters(command=command, args=list(args), env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as upstream:
        await upstream.initialize()

        async def list_tools(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return await upstream.list_tools()

        async def call_tool(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            result = await upstream.call_tool(params.name, params.arguments)
            assert isinstance(result, types.CallToolResult)
            return result

        server: Server[Any] = Server(
            "bare-proxy", version="0", on_list_tools=list_tools, on_call_tool=call_tool
        )
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: Sequence[str] | None = None) -> None:
    command, *args = sys.argv[1:] if argv is None else argv
    anyio.run(serve, command, args)


if __name__ == "__main__":
    main()
