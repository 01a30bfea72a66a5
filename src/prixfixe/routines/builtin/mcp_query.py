"""`mcp-query`: call a tool of an MCP server mounted behind prixfixe (`[servers.NAME]`) inside
a routine, so a morning report can hold, say, the open issues a mounted GitHub server lists.

Its authority is the configuration's: the step names a server the configuration mounts (never
a command line or a URL), a server denied by `[mcp] deny` is refused, and the call runs
through the app's mount runtime (`StepContext.call_server_tool`), as `tool_invoke` does.

The server's answer is untrusted text: the markdown shows it bounded, inside a code block
unless it reads as markdown, so it cannot pass itself off as the report's own headings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field

from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.steps import StepContext, StepOutput, StepType
from prixfixe.errors import StepFailure

#: The most characters of the server's text kept in the step's data.
MAX_DATA_CHARS = 65_536
#: Lines that make a text read as markdown (a heading, a list item, a table row, a quote).
_MARKDOWN = re.compile(r"^(#{1,6} |[-*+] |\d+\. |\|.*\||> )", re.MULTILINE)
_HEADING = re.compile(r"^(#{1,6}) ")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


class McpQueryParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str = Field(description="A server configured in [servers] (its NAME).")
    tool: str = Field(description="The tool's name on that server (as it lists it, unprefixed).")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="The tool's arguments, as its input schema asks."
    )
    max_chars: int = Field(
        default=4000, ge=100, le=100_000, description="Most characters shown in the markdown."
    )
    on_error: Literal["fail", "report"] = Field(
        default="fail",
        description="An error answer (isError) from the tool: fail the step, or report it "
        "as data (is_error true).",
    )


class McpQueryData(BaseModel):
    server: str
    tool: str
    is_error: bool = Field(description="The tool answered with an error (isError).")
    structured_content: dict[str, Any] | None = Field(
        description="The tool's structuredContent, when it gave one."
    )
    text: str = Field(description="The tool's text content blocks, joined by blank lines.")
    truncated: bool = Field(description=f"text was cut to {MAX_DATA_CHARS} characters.")
    other_content: list[str] = Field(
        description="Content blocks that are not text, by type and MIME type: 'image (image/png)'."
    )


def _other(block: types.ContentBlock) -> str | None:
    if isinstance(block, types.TextContent):
        return None
    mime = getattr(block, "mime_type", None)
    if isinstance(block, types.EmbeddedResource):
        mime = block.resource.mime_type
    return f"{block.type} ({mime})" if mime else block.type


def data_of(server: str, tool: str, result: types.CallToolResult) -> McpQueryData:
    text = "\n\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
    return McpQueryData(
        server=server,
        tool=tool,
        is_error=bool(result.is_error),
        structured_content=result.structured_content,
        text=text[:MAX_DATA_CHARS],
        truncated=len(text) > MAX_DATA_CHARS,
        other_content=[o for o in map(_other, result.content) if o is not None],
    )


def fenced(text: str, lang: str = "") -> str:
    """`text` in a code block whose fence no run of backticks in it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def nested(markdown: str) -> str:
    """`markdown` with its headings two levels down (outside code blocks), below the step's
    own `##` heading: a server's text cannot pass for a section of the report."""
    lines = []
    fence: str | None = None
    for line in markdown.split("\n"):
        opened = _FENCE.match(line)
        if opened and (fence is None or opened.group(1).startswith(fence)):
            fence = opened.group(1) if fence is None else None
        elif fence is None and (heading := _HEADING.match(line)):
            line = "#" * min(6, len(heading.group(1)) + 2) + line[len(heading.group(1)) :]
        lines.append(line)
    return "\n".join(lines)


def reads_as_markdown(text: str) -> bool:
    """Whether `text` has a line only markdown has (a heading, a list item, a table row)."""
    return _MARKDOWN.search(text) is not None


def shown(text: str, limit: int) -> str:
    """The text as the report's markdown shows it: bounded; JSON and plain text fenced,
    markdown as it is."""
    cut = text[:limit]
    more = len(text) - len(cut)
    try:
        json.loads(text)
        body = fenced(cut, "json")
    except ValueError:
        body = nested(cut) if reads_as_markdown(cut) else fenced(cut, "text")
    return body + (
        f"\n\n... {more} more characters (the step's data has up to {MAX_DATA_CHARS})"
        if more
        else ""
    )


def markdown_of(data: McpQueryData, limit: int) -> str:
    head = f"`{data.server}.{data.tool}`" + (" answered with an error:" if data.is_error else ":")
    parts = [head]
    if data.text:
        parts.append(shown(data.text, limit))
    elif data.structured_content is not None:
        compact = json.dumps(data.structured_content, ensure_ascii=False, indent=1)
        parts.append(shown(compact, limit))
    else:
        parts.append("(no text)")
    if data.other_content:
        parts.append("Also: " + ", ".join(data.other_content) + " (not shown)")
    return "\n\n".join(parts)


async def mcp_query(ctx: StepContext, params: McpQueryParams) -> StepOutput:
    result = await ctx.call_server_tool(params.server, params.tool, params.arguments)
    data = data_of(params.server, params.tool, result)
    if data.is_error and params.on_error == "fail":
        said = data.text.strip().splitlines()[0][:500] if data.text.strip() else "no message"
        raise StepFailure(
            f"step {ctx.step!r}: server {params.server!r} tool {params.tool!r} answered with an "
            f"error: {said}",
            kind="error",
        )
    return StepOutput(markdown=markdown_of(data, params.max_chars), data=data)


@hookimpl
def register_step_types(register: Callable[[StepType], None]) -> None:
    register(
        StepType(
            name="mcp-query",
            description="Call a tool of an MCP server mounted in [servers] and report its "
            "answer: the text for people (bounded), the text and structured content as data.",
            params_model=McpQueryParams,
            data_model=McpQueryData,
            version="1.0",
            handler=mcp_query,
        )
    )
