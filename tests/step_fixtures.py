"""Step types used by the tests: real plugins on the real `register_step_types` hook.

`StepsPlugin` holds the events and the log its steps share with a test, so a test can wait
for a step to start (never sleep) and see which steps ran.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from prixfixe import StepContext, StepFailure, StepOutput, StepType, hookimpl


class EchoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="What to say.")
    times: int = Field(default=1, ge=1, le=10)


class EchoData(BaseModel):
    text: str
    times: int


class Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GateParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    me: str
    other: str


class Nothing(BaseModel):
    pass


class StepsPlugin:
    """Fixture step types; one instance per test, so events and logs are per test."""

    __name__ = "steps_fixture"

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.started: dict[str, anyio.Event] = {}
        self.cancelled = anyio.Event()
        self.blocking = anyio.Event()

    def event(self, name: str) -> anyio.Event:
        return self.started.setdefault(name, anyio.Event())

    async def echo(self, ctx: StepContext, params: EchoParams) -> StepOutput:
        self.ran.append(ctx.step)
        return StepOutput(
            markdown=" ".join([params.text] * params.times),
            data=EchoData(text=params.text, times=params.times),
        )

    async def meet(self, ctx: StepContext, params: GateParams) -> StepOutput:
        """Finishes only once the other step has started too: proof the two overlap."""
        self.event(params.me).set()
        await self.event(params.other).wait()
        self.ran.append(ctx.step)
        return StepOutput(markdown=f"{params.me} met {params.other}", data=Nothing())

    async def block(self, ctx: StepContext, params: Empty) -> StepOutput:
        self.blocking.set()
        try:
            await anyio.Event().wait()  # until cancelled
        finally:
            self.cancelled.set()
        raise AssertionError("unreachable")

    async def boom(self, ctx: StepContext, params: Empty) -> StepOutput:
        raise RuntimeError("the fixture step crashed on purpose")

    async def fail(self, ctx: StepContext, params: Empty) -> StepOutput:
        raise StepFailure(f"step {ctx.step!r}: the service said no", kind="unavailable")

    async def bad_data(self, ctx: StepContext, params: Empty) -> StepOutput:
        return StepOutput(markdown="wrong", data={"text": 5})

    def secret_env(self, ctx: StepContext, params: Empty) -> StepOutput:
        return StepOutput(markdown="has secrets", data=Nothing())

    @hookimpl
    def register_step_types(self, register: Callable[[StepType], None]) -> None:
        def add(name: str, handler: Any, params: type[BaseModel], data: type[BaseModel]) -> None:
            register(
                StepType(
                    name=name,
                    description=f"Fixture step {name}.",
                    params_model=params,
                    data_model=data,
                    version="1.0",
                    handler=handler,
                )
            )

        add("echo", self.echo, EchoParams, EchoData)
        add("meet", self.meet, GateParams, Nothing)
        add("block", self.block, Empty, Nothing)
        add("boom", self.boom, Empty, Nothing)
        add("fail", self.fail, Empty, Nothing)
        add("bad-data", self.bad_data, Empty, EchoData)


def many_step_types_plugin(count: int) -> object:
    """A plugin registering `count` step types (they must not change tools/list)."""

    class Many:
        __name__ = f"many_steps_{count}"

        @hookimpl
        def register_step_types(self, register: Callable[[StepType], None]) -> None:
            async def handler(ctx: StepContext, params: EchoParams) -> StepOutput:
                return StepOutput(markdown=params.text, data=EchoData(text=params.text, times=1))

            for i in range(count):
                register(
                    StepType(
                        name=f"extra-{i:03d}",
                        description=f"Extra step type {i}.",
                        params_model=EchoParams,
                        data_model=EchoData,
                        version="1.0",
                        handler=handler,
                    )
                )

    return Many()
