"""A mounted server's tools as prixfixe `Tool` declarations, in the facet named after it.

Each keeps the upstream's description, input and output schemas and annotations unchanged
(raw JSON Schema, not re-generated); `readOnlyHint` decides `mutates` (MCP's default is
"may write"), `destructiveHint` and `idempotentHint` carry over. What the server says of itself
(`about`: its initialize result's instructions and description) goes to each tool's `about`,
which search weighs low, so a request in the server's terms reaches its tools. The handler calls the
upstream under its real name and returns its `CallToolResult` as it is; `keep`, when given,
is told each result first (the server's last-result memory, which `inspect` reads).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ConfigDict

from prixfixe.declarations.tool import Tool, ToolContext
from prixfixe.servers.naming import mounted_names

#: Calls upstream tool `name` with `arguments` on behalf of a tool call's context.
UpstreamCall = Callable[[str, dict[str, Any], ToolContext], Awaitable[types.CallToolResult]]
#: Told each result of a mounted tool, by its prixfixe name, with the arguments it was called with.
KeepResult = Callable[[str, dict[str, Any], types.CallToolResult], None]


class RawArguments(BaseModel):
    """The input model of every mounted tool: its arguments are checked against the server's
    own schema (`Tool.input_schema`), and search reads their names from that schema too."""

    model_config = ConfigDict(extra="allow")


def mounted_tool(
    server: str,
    name: str,
    tool: types.Tool,
    call: UpstreamCall,
    keep: KeepResult | None = None,
    about: str = "",
) -> Tool:
    real = tool.name
    hints = tool.annotations
    read_only = bool(hints and hints.read_only_hint)

    async def handler(ctx: ToolContext, arguments: dict[str, Any]) -> types.CallToolResult:
        result = await call(real, arguments, ctx)
        if keep is not None:
            keep(name, arguments, result)
        return result

    title = tool.title or (hints.title if hints and hints.title else None) or real
    return Tool(
        name=name,
        title=title,
        description=(tool.description or "").strip() or f"{real} (from the {server} server)",
        input_model=RawArguments,
        handler=handler,
        mutates=not read_only,
        facet=server,
        destructive=None if read_only or hints is None else hints.destructive_hint,
        idempotent=None if read_only or hints is None else hints.idempotent_hint,
        keywords=(server,),
        about=about,
        usage=f"Runs {real!r} on the mounted MCP server {server!r}.",
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=hints,
    )


def mounted_tools(
    server: str,
    tools: list[types.Tool],
    call: UpstreamCall,
    keep: KeepResult | None = None,
    about: str = "",
) -> list[Tool]:
    """Every tool of `server` as a declaration named `server.tool` (see `naming.py`)."""
    by_real = {t.name: t for t in tools}
    names = mounted_names(server, by_real)
    return [
        mounted_tool(server, name, by_real[real], call, keep, about) for name, real in names.items()
    ]
