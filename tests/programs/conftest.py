"""A plugin whose tools let the program tests assert at the point of effect: a counter a
denied tool would bump, a file read and a fetch through the leash's gates, a rendezvous only
two programs running at once can pass, and a tool that kills the sandbox's workers."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from pydantic import BaseModel, ConfigDict, Field

from prixfixe import Tool, ToolContext, hookimpl
from prixfixe.app import App
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory


class PathInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="A file.")


class UrlInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="A URL.")


class NameInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Who.")


class Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProbePlugin:
    """Tools in facets `probe` (reachable) and `secret` (denied by the tests that need it)."""

    def __init__(self) -> None:
        self.touched = 0
        self.met = 0
        self.both = anyio.Event()

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        def tool(name: str, model: type[BaseModel], handler: Any, facet: str = "probe") -> None:
            register(
                Tool(
                    name=name,
                    title=name,
                    description=f"Test tool {name}.",
                    input_model=model,
                    handler=handler,
                    mutates=True,
                    facet=facet,
                )
            )

        tool("secret_touch", Empty, self.touch, facet="secret")
        tool("probe_read", PathInput, self.read)
        tool("probe_fetch", UrlInput, self.fetch)
        tool("probe_meet", Empty, self.meet)
        tool("probe_kill", Empty, self.kill)
        tool("probe_greet", NameInput, self.greet)

    def touch(self, ctx: ToolContext, args: Empty) -> str:
        self.touched += 1
        return "touched"

    async def read(self, ctx: ToolContext, args: PathInput) -> str:
        data = await anyio.to_thread.run_sync(
            lambda: ctx.app.routines.fs.read_bytes(args.path, 10_000)
        )
        return data.decode()

    async def fetch(self, ctx: ToolContext, args: UrlInput) -> str:
        async with ctx.app.routines.net.client() as client:
            response = await client.get(args.url)
        return response.text

    async def meet(self, ctx: ToolContext, args: Empty) -> str:
        """Returns only once two calls are in it at the same time (or fails after 20 s)."""
        self.met += 1
        if self.met >= 2:
            self.both.set()
        with anyio.fail_after(20):
            await self.both.wait()
        return "met"

    def kill(self, ctx: ToolContext, args: Empty) -> str:
        """Kill this process's sandbox workers (children running the monty binary)."""
        killed = 0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                exe = os.readlink(entry / "exe")
            except (OSError, ValueError, IndexError):
                continue
            if ppid == os.getpid() and Path(exe).name == "monty":
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
        return f"killed {killed}"

    def greet(self, ctx: ToolContext, args: NameInput) -> str:
        return f"hello {args.name}"


@pytest.fixture
def no_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """`import pydantic_monty` fails, as when `prixfixe[programs]` is not installed."""
    for name in list(sys.modules):
        if name == "pydantic_monty" or name.startswith("pydantic_monty."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pydantic_monty", None)


@pytest.fixture
def probe() -> ProbePlugin:
    return ProbePlugin()


@pytest.fixture
def probed(make_app: AppFactory, probe: ProbePlugin) -> Callable[..., App]:
    def build(config: str | None = None, *, env: dict[str, str] | None = None) -> App:
        return make_app(config=config, env=env, plugins=[probe])

    return build


def client(app: App, revision: str = "legacy", **kwargs: Any) -> Client:
    return Client(build_server(app), mode=revision, **kwargs)


async def run(
    connected: Client, code: str, limits: dict[str, Any] | None = None
) -> types.CallToolResult:
    """`program_run` through `tool_invoke` (it is not listed), as a model reaches it."""
    arguments: dict[str, Any] = {"code": code}
    if limits is not None:
        arguments["limits"] = limits
    result = await connected.call_tool(
        "tool_invoke", {"name": "program_run", "arguments": arguments}
    )
    assert isinstance(result, types.CallToolResult)
    return result


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))
