"""The discovery trio: find a tool, read its schemas, call it — without it being listed."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any

import anyio.to_thread
import mcp_types as types
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

from prixfixe.curation import CuratedEntry, curator_for
from prixfixe.curation.calls import call_text, example_arguments
from prixfixe.curation.curator import entry_lines
from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.tool import Tool, ToolContext, ToolResult
from prixfixe.errors import ToolRefusedError
from prixfixe.schema import shape_text
from prixfixe.words import shorten

if TYPE_CHECKING:
    from prixfixe.core.facets import Exposure
    from prixfixe.core.registry import Registry
    from prixfixe.declarations.host import Host

TRIO = frozenset({"tool_search", "tool_describe", "tool_invoke"})


#: The longest phrasing, and the most phrasings, one search takes.
MAX_PHRASE = 1000
MAX_PHRASES = 10


def _check_phrases(query: str | list[str]) -> str | list[str]:
    phrasings = [query] if isinstance(query, str) else query
    if not 1 <= len(phrasings) <= MAX_PHRASES:
        raise ValueError(f"give one phrasing, or a list of 1 to {MAX_PHRASES}")
    for phrasing in phrasings:
        if not 1 <= len(phrasing) <= MAX_PHRASE:
            raise ValueError(f"each phrasing is 1 to {MAX_PHRASE} characters")
    return query


#: One phrasing or several; advertised as one short schema (a string, or strings), checked
#: here (a union's own constraints would name its branches, not `query`, in an error).
Phrases = Annotated[
    str | list[str],
    AfterValidator(_check_phrases),
    WithJsonSchema({"type": ["string", "array"], "items": {"type": "string"}}),
]


class SearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: Phrases = Field(description="The task in a few words, or a list of phrasings.")
    limit: int = Field(default=5, ge=1, le=50)
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
    sure: bool = Field(
        default=False, description="True: the first result is very likely the tool asked for."
    )
    results: list[SearchMatch]


class DescribeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Exact tool name.", min_length=1)


class DescribeOutput(BaseModel):
    name: str
    title: str
    description: str
    facet: str
    mutates: bool
    listed: bool = Field(description="Whether tools/list shows it; if not, use tool_invoke.")
    plugin: str
    annotations: dict[str, Any]
    parameters: list[CuratedEntry] = Field(
        description="The arguments curated: dot paths, explained, read-only ones left out."
    )
    example_call: str = Field(description="A call with every required argument.")
    input_schema: dict[str, Any] = Field(description="The exact schema arguments are checked by.")
    output_schema: dict[str, Any] | None
    usage: str
    examples: list[str]


class InvokeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Exact tool name.", min_length=1)
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="As tool_describe shows them."
    )


#: How many of a facet's tool names its line in the instructions shows.
CONTENTS_NAMES = 4


def contents_lines(
    registry: Registry, exposure: Exposure, servers: Mapping[str, str | None]
) -> list[str]:
    """The table of contents the instructions carry: one line for each facet this server can
    reach (listed or not, how many tools, its first tool names) and each mounted server
    (`servers`: name to what is known of it, its configured description and what it says of
    itself, or None when nothing is: its tools not read yet, no description), so
    a model knows what exists before it searches. Denied facets are left out."""
    lines: list[str] = []
    facets = registry.facets()
    for facet in [*facets, *(s for s in servers if s not in facets)]:
        if not exposure.reachable(facet):
            continue
        tools = facets.get(facet, [])
        kind = ["listed"] if exposure.listed(facet) else []
        if facet in servers:
            kind.insert(0, "mounted server")
        about = servers.get(facet)
        said = f" {_first_sentence(about)}" if about else ""
        if not tools:
            lines.append(f"- {facet} ({', '.join([*kind, 'tools not read yet'])}){said}")
            continue
        names = [e.name.removeprefix(f"{facet}.") for e in tools]
        shown = ", ".join(names[:CONTENTS_NAMES]) + (", ..." if len(names) > CONTENTS_NAMES else "")
        count = f"{len(names)} tool" + ("" if len(names) == 1 else "s")
        lines.append(f"- {facet} ({', '.join([*kind, count])}):{said} {shown}")
    return lines


def _first_sentence(text: str) -> str:
    first = " ".join(text.split())
    sentence = re.split(r"(?<=[.!?:])\s", first, maxsplit=1)[0]
    sentence = shorten(sentence, 100)
    return sentence if sentence.endswith((".", "!", "?", ":", "…")) else sentence + "."


def search_data(
    host: Host, query: str | list[str], limit: int = 5, facet: str | None = None
) -> SearchOutput:
    """The ranked tools for `query` (several phrasings: fused), as data (what `prixfixe tools
    search --json` prints)."""
    outcome = host.finder.find(query, limit=limit, facet=facet)
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
    return SearchOutput(
        query=outcome.query,
        good_match=outcome.good_match,
        sure=outcome.sure and outcome.good_match,
        results=matches,
    )


#: The most characters of a tool's summary a search result line shows.
SUMMARY_CHARS = 100


def search_text(data: SearchOutput, listed: Callable[[str], bool]) -> str:
    """What the model reads of a search: one short line a tool, every hit in rank order (a
    right tool ranked second is a hit the model can use, never hidden as a near miss), and
    no schema. The head says "Matches" only when the ranker is sure of the first hit (right
    about four times in five), "Possible matches" when it is a good match but not a sure one
    (right about half the time: the model should read the summaries), and otherwise that
    nothing fits well; under a good match each hit the ranker is unsure of is marked `weak`."""
    if not data.results:
        return f"No tool fits {data.query!r}. Try other words for the same task."
    if data.sure:
        head = f"Matches for {data.query!r}:"
    elif data.good_match:
        head = f"Possible matches for {data.query!r} (not sure which; read the summaries):"
    else:
        head = f"No good match for {data.query!r}; nearest:"
    lines = [head]
    for m in data.results:
        notes = [
            n
            for n, on in (
                ("weak", data.good_match and m.weak),
                ("listed", listed(m.facet)),
                ("mutates", m.mutates),
            )
            if on
        ]
        shown_notes = f" ({', '.join(notes)})" if notes else ""
        summary = shorten(m.summary, SUMMARY_CHARS)
        lines.append(f"- {m.name}{shown_notes}: {summary}")
    return "\n".join(lines)


async def tool_search(ctx: ToolContext, args: SearchInput) -> ToolResult:
    await ctx.app.servers_ready()  # a search right after start sees every mounted server
    if ctx.app.finder.ready(args.facet):
        data = search_data(ctx.app, args.query, limit=args.limit, facet=args.facet)
    else:
        # The first search (or the first since the tools changed) builds the index, and may
        # load the embedding model and embed every tool: off the event loop.
        data = await anyio.to_thread.run_sync(
            lambda: search_data(ctx.app, args.query, limit=args.limit, facet=args.facet)
        )
    return ToolResult(text=search_text(data, ctx.app.exposure.listed), data=data)


def describe_data(host: Host, name: str) -> DescribeOutput:
    """Everything about one reachable tool, as data (`prixfixe tools describe --json`)."""
    entry = host.reachable(name)
    tool = entry.tool
    listed = host.exposure.listed(tool.facet)
    curated = curator_for(host.registry).schema(entry.input_schema, f"tool:{tool.name}")
    example = call_text(tool.name, example_arguments(curated.fields), listed=listed)
    return DescribeOutput(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        facet=tool.facet,
        mutates=tool.mutates,
        listed=listed,
        plugin=tool.owner,
        annotations=entry.annotations.model_dump(mode="json", by_alias=True, exclude_none=True),
        parameters=curated.view(f"arguments of {tool.name}").entries,
        example_call=example,
        input_schema=entry.input_schema,
        output_schema=entry.output_schema,
        usage=tool.usage,
        examples=list(tool.examples),
    )


def describe_text(data: DescribeOutput) -> str:
    """What the model reads of a tool: its description, one line per argument (curated: nested
    fields as dot paths, explained), the shape it returns and an example call; not the raw JSON
    Schemas."""
    effect = "mutates" if data.mutates else "read-only"
    how = "listed: call it directly" if data.listed else "not listed: call through tool_invoke"
    lines = [f"{data.name} ({effect}; {how})", data.description]
    arguments = entry_lines(data.parameters, "schema")
    lines += ["Arguments:", *arguments] if arguments else ["Arguments: none"]
    if data.output_schema is not None:
        lines.append(f"Returns: {shape_text(data.output_schema)}")
    if data.usage:
        lines.append(f"Usage: {data.usage}")
    lines.append(f"Call: {data.example_call}")
    return "\n".join(lines)


async def tool_describe(ctx: ToolContext, args: DescribeInput) -> ToolResult:
    await ctx.app.servers_ready(args.name)  # waits only for a server still reading its list
    data = describe_data(ctx.app, args.name)
    return ToolResult(text=describe_text(data), data=data)


async def tool_invoke(
    ctx: ToolContext, args: InvokeInput
) -> types.CallToolResult | types.InputRequiredResult:
    if args.name in TRIO:
        raise ToolRefusedError(
            f"tool_invoke does not call {args.name!r}: call the discovery tools directly",
            name=args.name,
        )
    # Returned as this call's own result, which `App.call_tool` redacts: not twice.
    return await ctx.app.call_tool(args.name, args.arguments, ctx.request, redact=False)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    register(
        Tool(
            name="tool_search",
            title="Search tools",
            description="Find tools for a task, listed or not.",
            input_model=SearchInput,
            handler=tool_search,
            mutates=False,
            facet="core",
            always_load=True,
            keywords=("find", "discover", "lookup", "capability"),
            examples=("which tool can do X", "find a tool for reminders"),
            usage="Search first, then tool_describe the best hit, then tool_invoke it.",
        )
    )
    register(
        Tool(
            name="tool_describe",
            title="Describe a tool",
            description="A tool's arguments, result and how to call it.",
            input_model=DescribeInput,
            handler=tool_describe,
            mutates=False,
            facet="core",
            always_load=True,
            keywords=("schema", "help", "parameters", "inspect"),
            examples=("what arguments does this tool take",),
            usage="Use the exact name from tool_search.",
        )
    )
    register(
        Tool(
            name="tool_invoke",
            title="Invoke a tool",
            description="Call any tool by name, listed or not.",
            input_model=InvokeInput,
            handler=tool_invoke,
            mutates=True,
            destructive=True,
            facet="core",
            always_load=True,
            keywords=("call", "run", "execute"),
            examples=("run a tool that is not listed",),
            usage=(
                "Arguments are validated against the tool's input schema; errors name the "
                "field. Discovery tools are called directly, not through tool_invoke."
            ),
        )
    )
