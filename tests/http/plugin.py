"""A plugin the HTTP tests load into a `prixfixe serve --http` subprocess (`--plugin`)."""

from __future__ import annotations

from collections.abc import Callable

import anyio
from pydantic import BaseModel, ConfigDict, Field

from prixfixe import Tool, ToolContext, hookimpl


class SlowInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seconds: float = Field(ge=0, le=30, description="How long to take.")


async def slow(ctx: ToolContext, args: SlowInput) -> str:
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
