"""A plugin the HTTP tests load into a `prixfixe serve --http` subprocess (`--plugin`)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

import anyio
from pydantic import BaseModel, ConfigDict, Field

from prixfixe import Tool, ToolContext, hookimpl

STARTED = "slow_echo: started"

# The SDK logs a session's expiry at INFO; let it through (the CLI's root handler prints it on
# stderr) so a test can wait for that line instead of sleeping past the idle bound.
logging.getLogger("mcp.server.streamable_http_manager").setLevel(logging.INFO)


class SlowInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seconds: float = Field(ge=0, le=30, description="How long to take.")


async def slow(ctx: ToolContext, args: SlowInput) -> str:
    # A line the tests wait for: the call is being served (no guessing with a sleep).
    print(STARTED, file=sys.stderr, flush=True)
    await anyio.sleep(args.seconds)
    return f"done after {args.seconds:g}s"


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    register(
        Tool(
            name="slow_echo",
            title="Take a while",
            description="Answer after the given number of seconds (for shutdown tests).",
            input_model=SlowInput,
            handler=slow,
            mutates=False,
            facet="core",
        )
    )
