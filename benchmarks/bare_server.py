"""The baseline for the round-trip and startup benchmarks, runnable as a stdio MCP server.

`python benchmarks/bare_server.py` serves a bare `mcp.server.lowlevel.Server` with one trivial
tool, `bench_echo`: hand-written `tools/list` / `tools/call` handlers and a static schema, no
argument validation, nothing else. It is what the SDK costs before any framework runs.

`python benchmarks/bare_server.py --prixfixe` serves prixfixe itself (`App.build` plus
`prixfixe.mcp.stdio.serve_app`) with the same `bench_echo` tool registered by an embedded plugin
in facet `bench`, listed by default (`PRIXFIXE_EXPOSE=core,bench` unless the environment sets
it). A stdio subprocess cannot see an in-process plugin, so this launcher is how a prixfixe
server with the trivial tool is started over stdio.

The bare path imports neither prixfixe nor pydantic models of its own, so its start-up time is
the SDK's alone.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

ECHO_NAME = "bench_echo"
ECHO_FACET = "bench"
ECHO_TITLE = "Echo"
ECHO_DESCRIPTION = "Return the given text unchanged."
ECHO_PARAM_DESCRIPTION = "The text to return."
#: The schema prixfixe derives from the echo plugin's input model, written out by hand, so
#: both servers advertise the same contract.
ECHO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": ECHO_PARAM_DESCRIPTION}},
    "required": ["text"],
    "additionalProperties": False,
}
#: `-32602` Invalid params, what the spec uses for an unknown tool.
_INVALID_PARAMS = -32602


def build_bare_server() -> Server[Any]:
    """A bare low-level server with `bench_echo` and nothing else."""
    echo = types.Tool(
        name=ECHO_NAME,
        title=ECHO_TITLE,
        description=ECHO_DESCRIPTION,
        input_schema=ECHO_SCHEMA,
        annotations=types.ToolAnnotations(
            read_only_hint=True, destructive_hint=False, idempotent_hint=True
        ),
    )
    listing = types.ListToolsResult(tools=[echo])

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name != ECHO_NAME:
            raise MCPError(_INVALID_PARAMS, f"unknown tool {params.name!r}")
        text = (params.arguments or {}).get("text", "")
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(text))])

    return Server("bare", version="0", on_list_tools=list_tools, on_call_tool=call_tool)


def echo_plugin() -> object:
    """A prixfixe plugin registering `bench_echo` (read-only, one string parameter).

    prixfixe is imported here, not at module level, so the bare server never loads it.
    """
    from pydantic import BaseModel, ConfigDict, Field

    from prixfixe import Tool, ToolContext, hookimpl

    class EchoInput(BaseModel):
        model_config = ConfigDict(extra="forbid")

        text: str = Field(description=ECHO_PARAM_DESCRIPTION)

    # Async, like the bare server's handler: a synchronous handler runs in a worker thread
    # (so it never blocks the loop), which costs about 100 µs a call on its own.
    async def echo(ctx: ToolContext, args: EchoInput) -> str:
        return args.text

    class EchoPlugin:
        __name__ = "bench_echo_plugin"

        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            register(
                Tool(
                    name=ECHO_NAME,
                    title=ECHO_TITLE,
                    description=ECHO_DESCRIPTION,
                    input_model=EchoInput,
                    handler=echo,
                    mutates=False,
                    facet=ECHO_FACET,
                )
            )

    return EchoPlugin()


def prixfixe_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the prixfixe echo server is built with: `bench` listed unless set."""
    env = dict(os.environ if base is None else base)
    env.setdefault("PRIXFIXE_EXPOSE", f"core,{ECHO_FACET}")
    return env


async def serve_bare() -> None:
    """Serve the bare server over stdio, the same way `prixfixe.mcp.stdio.serve_app` does."""
    from mcp.server.stdio import stdio_server

    server = build_bare_server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a benchmark MCP server over stdio.")
    parser.add_argument(
        "--prixfixe",
        action="store_true",
        help="serve prixfixe with bench_echo registered, instead of the bare SDK server",
    )
    args = parser.parse_args(argv)
    if not args.prixfixe:
        anyio.run(serve_bare)
        return
    from prixfixe.app import App
    from prixfixe.mcp.stdio import serve_app as serve_stdio

    app = App.build(env=prixfixe_env(), extra_plugins=[echo_plugin()])
    anyio.run(serve_stdio, app)


if __name__ == "__main__":
    main()
