"""`prixfixe servers test NAME`: start one configured server through the same runtime a
mounted server runs in (the exec gate's grant, the minimal environment, its credentials from
their references), read what it offers, keep its tool list on disk, and stop it.

The server runs in a task group of its own, not the serving one: the test must work when
nothing serves, and must not start any other server.

A start can take a while (`npx` fetching a package): `progress`, when given, is told each step
as a line a person reads — starting (and what runs), every `TICK_SECONDS` while it waits,
answered and listing, listed, failed, done — with the seconds since the start.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types

from prixfixe.config import ServerConfig
from prixfixe.errors import UpstreamError
from prixfixe.servers import catalogue
from prixfixe.servers.status import listing_tokens
from prixfixe.servers.upstream import Launch, Read, Upstream

#: How often a waiting test says it is still waiting.
TICK_SECONDS = 5.0
#: The longest command line (or URL) a progress line shows.
SHOWN_CHARS = 120


@dataclass(frozen=True)
class Probe:
    """What one test of a server found: its tools, or why it could not be started."""

    name: str
    transport: str
    state: str  # "started" (and stopped after) or "failed"
    seconds: float | None = None
    tools: list[types.Tool] = field(default_factory=list)
    listed_tokens: int | None = None
    resources: int | None = None
    templates: int | None = None
    prompts: int | None = None
    server: str | None = None
    error: str | None = None
    kept: Path | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": self.transport,
            "state": self.state,
            "ok": self.ok,
            "error": self.error,
            "server": self.server,
            "start_seconds": None if self.seconds is None else round(self.seconds, 3),
            "tools": [{"name": t.name, "description": t.description} for t in self.tools],
            "tool_count": len(self.tools),
            "listed_tokens": self.listed_tokens,
            "resources": self.resources,
            "resource_templates": self.templates,
            "prompts": self.prompts,
            "catalogue": None if self.kept is None else str(self.kept),
        }


def refusal(name: str, config: ServerConfig, deny: frozenset[str], source: str) -> str | None:
    """Why the server may not be started at all (before anything runs), or None."""
    if name in deny:
        return f"server {name!r}: is denied (from {source}); a denied server is never started"
    if not config.enabled:
        return f"server {name!r}: is disabled (enabled = false); enable it to test it"
    return None


async def probe(
    name: str,
    config: ServerConfig,
    launch: Launch,
    home: Path,
    progress: Callable[[str], None] | None = None,
) -> Probe:
    """Start server `name`, read its tools (and resources and prompts when it offers them),
    keep its tool list on disk, stop it. Every fault is in the result, never raised.

    The lists come from the runtime's own start (tools, then resources and prompts when the
    server offers them); the first of each read counts."""
    transport = "stdio" if config.command is not None else "http"
    path = catalogue.catalogue_path(home, name, config)
    reads: list[Read] = []
    upstream = Upstream(name, config, launch, lambda _upstream, read: reads.append(read))
    clock = time.monotonic()
    seconds = 0.0
    error: str | None = None
    say = progress or _silent
    waiting = [f"still starting {name}"]

    def elapsed() -> str:
        return f"{time.monotonic() - clock:.1f} s"

    def answered(_initialized: object) -> None:
        say(f"{name} answered after {elapsed()}; listing tools…")
        waiting[0] = f"still listing {name}'s tools"

    async def tick() -> None:
        while True:
            await anyio.sleep(TICK_SECONDS)
            say(f"{waiting[0]}: {elapsed()}…")

    say(f"starting {name} ({_runs(config)})…")
    upstream.on_initialized = answered
    async with anyio.create_task_group() as tg:
        upstream.attach(tg)
        if progress is not None:
            tg.start_soon(tick)
        try:
            await upstream.session()  # started: its lists are read
            seconds = time.monotonic() - clock
        except UpstreamError as exc:
            error = exc.message
            say(f"{name} failed after {elapsed()}")
        finally:
            upstream.stop("the test is over")
            tg.cancel_scope.cancel()
    upstream.detach()
    if error is not None:
        return Probe(name, transport, "failed", error=error)
    tools = next((r.tools for r in reads if r.tools is not None), [])
    say(f"listed {len(tools)} tools in {seconds:.1f} s; stopped {name}")
    resources = next((r.resources for r in reads if r.resources is not None), None)
    templates = next((r.templates for r in reads if r.templates is not None), None)
    prompts = next((r.prompts for r in reads if r.prompts is not None), None)
    catalogue.save(
        path, tools, resources=resources or (), templates=templates or (), prompts=prompts or ()
    )
    say(f"done in {elapsed()}")
    return Probe(
        name,
        transport,
        "started",
        seconds=seconds,
        tools=tools,
        listed_tokens=listing_tokens(tools),
        resources=None if resources is None else len(resources),
        templates=None if templates is None else len(templates),
        prompts=None if prompts is None else len(prompts),
        server=_described(upstream.server_info),
        kept=path,
    )


def _described(info: types.Implementation | None) -> str | None:
    if info is None:
        return None
    return f"{info.name} {info.version}".strip()


def _silent(_text: str) -> None:
    """Progress nobody asked for."""


def _runs(config: ServerConfig) -> str:
    """What a start runs, as a person would type it (the URL of an HTTP server), shortened."""
    if config.command is not None:
        shown = shlex.join([config.command, *config.args])
    else:
        shown = str(config.url)
    return shown if len(shown) <= SHOWN_CHARS else shown[: SHOWN_CHARS - 1] + "…"
