"""A small MCP server (stdio, on the `mcp` SDK) whose tools misbehave on request, mounted by
the tests in this folder: it echoes, sleeps, crashes, writes garbage and oversized or
malformed answers to stdout, floods stderr and reports the environment it was given.

Run as `python fixture_server.py`; `FIXTURE_TOOLS_FILE`, when set, names a file whose lines
are extra tool names it lists (read at each `tools/list`), so a test can change its tools
and call `announce` to send `notifications/tools/list_changed`.

It also serves notes as resources (`fix://notes/alpha`, a blob `fix://pixel`, the template
`fix://notes/{name}` whose `name` completes), a prompt `greet` whose `name` completes, and
takes `resources/subscribe`: `edit_note` changes a note and sends `resources/updated` when it
is subscribed to; `new_note` and `new_prompt` add one and send the list's `list_changed`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.resources.types import FunctionResource
from mcp_types import ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel

#: What it says of itself at initialize: search finds its tools by these words too.
INSTRUCTIONS = "Keeps the household ledger: bookkeeping of the family accounts."
server = MCPServer("fixture", instructions=INSTRUCTIONS)


#: The protocol's stdout, kept before the SDK diverts fd 1 to stderr (as SDK 2.x does, to
#: protect the channel): what a stray print in a server on another SDK writes to.
_WIRE = os.dup(1)


def _raw_stdout(text: str) -> None:
    """Write straight to the stdout the protocol uses."""
    data = text.encode()
    while data:
        data = data[os.write(_WIRE, data) :]


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return text


class Sum(BaseModel):
    total: int


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> Sum:
    """Add two whole numbers and return the total as structured data."""
    return Sum(total=a + b)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def picture() -> list[ImageContent | TextContent]:
    """Return a tiny image and a caption."""
    return [
        ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
        TextContent(type="text", text="a tiny picture"),
    ]


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def fail(message: str) -> str:
    """Fail with the message (an isError result)."""
    raise ToolError(message)


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleep, then say so."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
async def wait_for_cancel(marker: str) -> str:
    """Write `started` to the file `marker`, wait, and write `cancelled` there if cancelled."""
    Path(marker).write_text("started")
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        Path(marker).write_text("cancelled")
        raise
    return "waited"


@server.tool()
def crash(status: int = 3) -> str:
    """Exit the whole process at once, after a last word on stderr."""
    sys.stderr.write("fixture: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(status)


@server.tool()
def garbage() -> str:
    """Write a line that is not JSON-RPC to stdout, then answer normally."""
    _raw_stdout("this is not JSON-RPC {\n")
    return "still here"


@server.tool()
def malformed(ctx: Context) -> str:
    """Answer this very request with a result that is not a tool result, before the real one."""
    reply = {"jsonrpc": "2.0", "id": int(ctx.request_id), "result": {"content": "not a list"}}
    _raw_stdout(json.dumps(reply) + "\n")
    return "the real answer, too late"


@server.tool()
def oversized(megabytes: int = 5) -> str:
    """Write one stdout line of that many megabytes (past any sane message bound)."""
    _raw_stdout("x" * (megabytes * 1024 * 1024) + "\n")
    return "after the flood"


@server.tool()
def huge(kilobytes: int) -> str:
    """Return that many kilobytes of text."""
    return "y" * (kilobytes * 1024)


@server.tool()
def shout(lines: int) -> str:
    """Write that many lines to stderr, then answer."""
    for i in range(lines):
        sys.stderr.write(f"fixture stderr line {i}\n")
    sys.stderr.flush()
    return f"wrote {lines} lines"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def environment() -> dict[str, Any]:
    """The process's environment variables and working directory."""
    return {"env": dict(os.environ), "cwd": os.getcwd(), "pid": os.getpid()}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def chatty(ctx: Context, words: str) -> str:
    """Log `words` to the client at info, then answer."""
    await ctx.info(f"heard: {words}")
    return "said"


@server.tool()
async def announce(ctx: Context) -> str:
    """Re-read the extra tool names and tell the client the tool list changed."""
    _load_extra()
    await ctx.session.send_tool_list_changed()
    return "announced"


_extra: set[str] = set()


def _load_extra() -> None:
    path = os.environ.get("FIXTURE_TOOLS_FILE")
    names = set()
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as file:
            names = {line.strip() for line in file if line.strip()}
    for name in _extra - names:
        server.remove_tool(name)
    for name in names - _extra:
        server.add_tool(lambda: "extra", name=name, description=f"An extra tool called {name}.")
    _extra.clear()
    _extra.update(names)


# -- resources, prompts, completion, subscriptions ------------------------------------------

_notes = {"alpha": "# Alpha\n\nthe first note", "beta": "the second note"}
_subscribed: set[str] = set()
PIXEL = bytes([137, 80, 78, 71, 0, 255])


@server.resource(
    "fix://notes/alpha",
    name="alpha",
    title="Alpha note",
    description="The first note.",
    mime_type="text/markdown",
)
def alpha() -> str:
    return _notes["alpha"]


@server.resource("fix://pixel", name="pixel", description="A tiny image.", mime_type="image/png")
def pixel() -> bytes:
    return PIXEL


@server.resource("fix://notes/{name}", name="note", description="A note by its name.")
def note(name: str) -> str:
    if name not in _notes:
        raise ResourceNotFoundError(f"no note {name!r}")
    return _notes[name]


@server.resource("fix://broken", name="broken", description="A resource whose read fails.")
def broken() -> str:
    raise RuntimeError("the disk is on fire")


@server.prompt(title="Greeting")
def greet(name: str, style: str = "plain") -> str:
    """Greet someone by name."""
    return f"Hello, {name}! ({style})"


@server.completion()  # type: ignore[untyped-decorator, no-untyped-call]
async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: types.CompletionContext | None,
) -> types.Completion | None:
    if argument.name == "name":
        pool = (
            sorted(_notes)
            if isinstance(ref, types.ResourceTemplateReference)
            else [
                "Ada",
                "Alan",
                "Grace",
            ]
        )
        found = [v for v in pool if v.startswith(argument.value)]
        return types.Completion(values=found, total=len(found), has_more=False)
    return None


async def _subscribe(
    ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
) -> types.EmptyResult:
    _subscribed.add(params.uri)
    return types.EmptyResult()


async def _unsubscribe(
    ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
) -> types.EmptyResult:
    _subscribed.discard(params.uri)
    return types.EmptyResult()


server._lowlevel_server.add_request_handler(
    "resources/subscribe", types.SubscribeRequestParams, _subscribe
)
server._lowlevel_server.add_request_handler(
    "resources/unsubscribe", types.UnsubscribeRequestParams, _unsubscribe
)


@server.tool()
async def edit_note(name: str, text: str, ctx: Context) -> str:
    """Change a note; tell the client when someone is subscribed to it."""
    _notes[name] = text
    uri = f"fix://notes/{name}"
    if uri in _subscribed:
        await ctx.session.send_resource_updated(uri)
        return "edited, told"
    return "edited"


@server.tool()
def subscriptions() -> list[str]:
    """The URIs the client is subscribed to."""
    return sorted(_subscribed)


@server.tool()
async def new_note(name: str, text: str, ctx: Context) -> str:
    """Add a note as a listed resource and say the resource list changed."""
    _notes[name] = text
    server.add_resource(
        FunctionResource(uri=f"fix://notes/{name}", name=name, fn=lambda: _notes[name])
    )
    await ctx.session.send_resource_list_changed()
    return "added"


@server.tool()
async def new_prompt(name: str, ctx: Context) -> str:
    """Add a prompt and say the prompt list changed."""
    server.add_prompt(
        Prompt.from_function(lambda: f"the {name} prompt", name=name, description=f"{name}.")
    )
    await ctx.session.send_prompt_list_changed()
    return "added"


if __name__ == "__main__":
    _load_extra()
    server.run("stdio")
