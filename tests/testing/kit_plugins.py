"""Plugins the contract kit is tested on: `GoodPlugin` keeps its contract; each other one
breaks one part of it in one way. Real plugins on the real hooks."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import httpx2
from pydantic import BaseModel, ConfigDict, Field

from prixfixe import StepContext, StepOutput, StepType, Tool, ToolContext, hookimpl
from prixfixe.leash.exec import CommandLine

PYTHON = sys.executable
HELLO = (PYTHON, "-c", "print('hello')")


class GreetParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fetch: bool = Field(default=False, description="Also fetch the greeting service's page.")


class Greeting(BaseModel):
    text: str
    fetched: int | None = None


class GreetingLouder(BaseModel):
    text: str
    fetched: int | None = None
    loud: bool


class CardInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    friend: str = Field(description="Whom the card is for.")


def save_card(ctx: ToolContext, args: CardInput) -> str:
    return f"card saved for {args.friend}"


class GoodPlugin:
    """A tool in its own facet, and a step type that runs its one declared command line
    through the exec gate and, given a port, fetches a page from its declared loopback host
    through the network gate."""

    __name__ = "kit_good"
    description = "Save a birthday greeting card to send to a friend."
    data_model: type[BaseModel] = Greeting

    def __init__(self, port: int | None = None) -> None:
        self.port = port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def hosts(self) -> tuple[str, ...]:
        return (f"127.0.0.1:{self.port}",) if self.port else ()

    async def fetch(self, ctx: StepContext) -> int:
        async with ctx.net.client(step=ctx.step) as client:
            return (await client.get(self.url)).status_code

    async def greet(self, ctx: StepContext, params: GreetParams) -> StepOutput:
        done = await ctx.run(list(HELLO))
        fetched = await self.fetch(ctx) if params.fetch else None
        data = Greeting(text=done.stdout.strip(), fetched=fetched)
        return StepOutput(markdown=data.text, data=data)

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="kit_greeting_card_save",
                title="Save a greeting card",
                description=self.description,
                input_model=CardInput,
                handler=save_card,
                mutates=True,
                destructive=False,
                facet="kit",
                keywords=("birthday", "greeting", "card"),
            )
        )

    @hookimpl
    def register_step_types(self, register: Callable[[StepType], None]) -> None:
        register(
            StepType(
                name="kit-greet",
                description="Say hello, by running a tiny program.",
                params_model=GreetParams,
                data_model=self.data_model,
                version="1.0",
                handler=self.greet,
                commands=(CommandLine(HELLO[0], HELLO[1:]),),
                hosts=self.hosts(),
            )
        )


class SchemaChanged(GoodPlugin):
    """Its step type's data gained a field, and its version is still 1.0."""

    __name__ = "kit_schema_changed"
    data_model = GreetingLouder


class Vague(GoodPlugin):
    """Its tool's description says nothing a search could find it by."""

    __name__ = "kit_vague"
    description = "Do it."


class SpawnsDirectly(GoodPlugin):
    """Starts a program it never declared with `subprocess`, around the exec gate."""

    __name__ = "kit_spawns_directly"

    async def greet(self, ctx: StepContext, params: GreetParams) -> StepOutput:
        done = subprocess.run(
            [PYTHON, "-c", "print('sneaky')"], capture_output=True, text=True, check=True
        )
        return StepOutput(markdown=done.stdout, data=Greeting(text=done.stdout.strip()))


class RunsUndeclared(GoodPlugin):
    """Asks the exec gate for a command line it does not declare (the gate refuses)."""

    __name__ = "kit_runs_undeclared"

    async def greet(self, ctx: StepContext, params: GreetParams) -> StepOutput:
        await ctx.run([PYTHON, "-c", "print('not declared')"])
        raise AssertionError("unreachable: the gate refuses")


class ConnectsDirectly(GoodPlugin):
    """Fetches with its own HTTP client, around the network gate, from a host it does not
    declare."""

    __name__ = "kit_connects_directly"

    def hosts(self) -> tuple[str, ...]:
        return ()

    async def fetch(self, ctx: StepContext) -> int:
        async with httpx2.AsyncClient(trust_env=False) as client:
            return (await client.get(self.url)).status_code


class ConnectsUndeclared(GoodPlugin):
    """Fetches through the network gate from a host the configuration grants but the plugin
    never declares."""

    __name__ = "kit_connects_undeclared"

    def hosts(self) -> tuple[str, ...]:
        return ()


class FailsToRegister:
    """Its hook raises while registering."""

    __name__ = "kit_fails_to_register"

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        raise RuntimeError("the kit fixture cannot register")
