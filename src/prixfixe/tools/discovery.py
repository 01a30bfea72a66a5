"""The discovery trio: find a tool, read its schemas, call it — without it being listed."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field

from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.tool import Tool, ToolContext, ToolResult
from prixfixe.errors import ToolRefusedError

TRIO = frozenset({"tool_search", "tool_describe", "tool_invoke"})


class SearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        description="What you want to do, in a few words.", min_length=1, max_length=1000
    )
    limit: int = Field(default=5, ge=1, le=50, description="Most results to return.")
    facet: str | None = Field(default=None, description="Only search this facet.")


class SearchMatch(BaseModel):
    name: str
    summary: str = Field(description="The tool's description, first line only.")
    facet: str
    mutates: bool
    score: float = Field(description="Ranking score; only the order is meaningful.")
    weak: bool = Field(description="True when this is a near miss rather than a good fit.")


class SearchOutput(BaseModel):
    query: str
    good_match: bool = Field(description="False: nothing fits well; results are only nearest.")
    results: list[SearchMatch]


class DescribeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Exact tool name, as tool_search returned it.", min_length=1)


class DescribeOutput(BaseModel):
    name: str
    title: str
    description: str
    facet: str
    mutates: bool
    listed: bool = Field(description="Whether tools/list shows it; if not, use tool_invoke.")
    plugin: str
    annotations: dict[str, Any]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    usage: str
    examples: list[str]


class InvokeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Exact tool name, as tool_search returned it.", min_length=1)
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="Arguments matching the tool's input schema."
    )


async def tool_search(ctx: ToolContext, args: SearchInput) -> ToolResult:
    outcome = ctx.app.finder.find(args.query, limit=args.limit, facet=args.facet)
    matches = [
        SearchMatch(
            name=f.entry.name,
            summary=f.entry.tool.summary,
            facet=f.entry.tool.facet,
            mutates=f.entry.tool.mutates,
            score=round(f.score, 3),
            weak=f.weak,
        )
        for f in outcome.found
    ]
    data = SearchOutput(query=args.query, good_match=outcome.good_match, results=matches)
    lines: list[str] = []
    if not matches:
        lines.append(
            f"No good match for {args.query!r}: no tool shares a term with it. "
            "Try other words for the same task."
        )
    elif not outcome.good_match:
        lines.append(f"No good match for {args.query!r}. Nearest tools, all weak matches:")
    else:
        lines.append(f"Tools for {args.query!r}, best first:")
    for m in matches:
        flag = ", mutates" if m.mutates else ""
        weak = " (weak)" if m.weak and outcome.good_match else ""
        lines.append(f"- {m.name} [{m.facet}{flag}]{weak}: {m.summary}")
    if matches:
        lines.append("Next: tool_describe(name) for its schema; tool_invoke(name, arguments).")
    return ToolResult(text="\n".join(lines), data=data)


async def tool_describe(ctx: ToolContext, args: DescribeInput) -> ToolResult:
    entry = ctx.app.reachable(args.name)
    tool = entry.tool
    data = DescribeOutput(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        facet=tool.facet,
        mutates=tool.mutates,
        listed=ctx.app.exposure.listed(tool.facet),
        plugin=tool.owner,
        annotations=entry.annotations.model_dump(mode="json", by_alias=True, exclude_none=True),
        input_schema=entry.input_schema,
        output_schema=entry.output_schema,
        usage=tool.usage,
        examples=list(tool.examples),
    )
    how = (
        "listed; call it directly" if data.listed else f"call it with tool_invoke({tool.name!r}, …)"
    )
    text = [
        f"# {tool.name} — {tool.title}",
        f"Facet {tool.facet}; {'mutates state' if tool.mutates else 'read-only'}; {how}.",
        "",
        tool.description,
    ]
    if tool.usage:
        text += ["", f"Usage: {tool.usage}"]
    text += ["", "Input schema:", json.dumps(entry.input_schema, indent=1)]
    if entry.output_schema is not None:
        text += ["", "Output schema:", json.dumps(entry.output_schema, indent=1)]
    return ToolResult(text="\n".join(text), data=data)


async def tool_invoke(
    ctx: ToolContext, args: InvokeInput
) -> types.CallToolResult | types.InputRequiredResult:
    if args.name in TRIO:
        raise ToolRefusedError(
            f"tool_invoke does not call {args.name!r}: call the discovery tools directly",
            name=args.name,
        )
    return await ctx.app.call_tool(args.name, args.arguments, ctx.request)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    register(
        Tool(
            name="tool_search",
            title="Search tools",
            description=(
                "Find tools for a task among all of prixfixe's tools, listed or not. Returns "
                "ranked names with one-line summaries (never schemas), or says plainly that "
                "nothing fits well."
            ),
            input_model=SearchInput,
            output_model=SearchOutput,
            handler=tool_search,
            mutates=False,
            facet="core",
            keywords=("find", "discover", "lookup", "capability"),
            examples=("which tool can do X", "find a tool for reminders"),
            usage="Search first, then tool_describe the best hit, then tool_invoke it.",
        )
    )
    register(
        Tool(
            name="tool_describe",
            title="Describe a tool",
            description=(
                "Show one tool in full: description, input and output JSON Schemas, facet, "
                "whether it mutates state, and usage notes."
            ),
            input_model=DescribeInput,
            output_model=DescribeOutput,
            handler=tool_describe,
            mutates=False,
            facet="core",
            keywords=("schema", "help", "parameters", "inspect"),
            examples=("what arguments does this tool take",),
            usage="Use the exact name from tool_search.",
        )
    )
    register(
        Tool(
            name="tool_invoke",
            title="Invoke a tool",
            description=(
                "Call any tool by name with arguments matching its input schema, including "
                "tools that are not listed. Returns that tool's own result."
            ),
            input_model=InvokeInput,
            handler=tool_invoke,
            mutates=True,
            destructive=True,
            facet="core",
            keywords=("call", "run", "execute"),
            examples=("run a tool that is not listed",),
            usage=(
                "Arguments are validated against the tool's input schema; errors name the "
                "field. Discovery tools are called directly, not through tool_invoke."
            ),
        )
    )
