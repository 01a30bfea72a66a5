"""`prixfixe.core.calls`: the one way plugin code is called — off the event loop when it is
synchronous, with its result converted inside the same error mapping."""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio
import anyio.lowlevel
import pytest
from mcp import Client
from pydantic import BaseModel, ConfigDict

from prixfixe import Tool, ToolContext, hookimpl
from prixfixe.core.calls import PluginCrash, call_plugin
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory

pytestmark = pytest.mark.anyio


class Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BlockingPlugin:
    """A synchronous tool that blocks until the event loop has ticked (or gives up)."""

    __name__ = "blocking_fixture"

    def __init__(self) -> None:
        self.loop_ticked = threading.Event()

    def wait_for_the_loop(self, ctx: ToolContext, args: Empty) -> str:
        # Blocks its thread the way file or store I/O would; on the event loop it would also
        # stop the ticker below, and the wait would end unanswered.
        return "ticked" if self.loop_ticked.wait(timeout=2) else "the loop never ticked"

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="blocking.wait",
                title="Wait for the loop",
                description="Block until the event loop has run other tasks.",
                input_model=Empty,
                handler=self.wait_for_the_loop,
                mutates=False,
                facet="blocking",
            )
        )


def returns_an_int(ctx: ToolContext, args: Empty) -> int:
    return 42


class WrongTypePlugin:
    __name__ = "wrong_type_fixture"

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="wrong.type",
                title="Return an int",
                description="A broken tool: returns a number, which no tool may return.",
                input_model=Empty,
                handler=returns_an_int,  # type: ignore[arg-type]
                mutates=False,
                facet="wrong",
            )
        )


async def test_a_synchronous_tool_runs_off_the_event_loop(make_app: AppFactory) -> None:
    plugin = BlockingPlugin()
    app = make_app(plugins=[plugin])
    ticks = 0
    answer: list[str] = []

    async def call() -> None:
        result = await app.call_tool("blocking.wait", {})
        answer.append(result.content[0].text)  # type: ignore[union-attr]

    async def tick() -> None:
        nonlocal ticks
        while not answer:
            await anyio.lowlevel.checkpoint()
            ticks += 1
            if ticks == 3:
                plugin.loop_ticked.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            tg.start_soon(tick)
    assert answer == ["ticked"]
    assert ticks >= 3


async def test_a_tool_returning_a_wrong_type_is_an_error_result_and_the_server_keeps_serving(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(env={"PRIXFIXE_EXPOSE": "core,wrong"}, plugins=[WrongTypePlugin()])
    async with Client(build_server(app), mode=revision) as client:
        wrong = await client.call_tool("wrong.type", {})
        after = await client.call_tool("tool_search", {"query": "number"})
    assert wrong.is_error is True
    text = wrong.content[0].text  # type: ignore[union-attr]
    assert text == "tool 'wrong.type' failed: TypeError: tool 'wrong.type' returned int"
    assert after.is_error is False


async def test_a_coroutine_function_is_awaited_on_the_event_loop() -> None:
    loop_thread = threading.get_ident()

    async def plugin_code(x: int) -> int:
        return x + (threading.get_ident() == loop_thread)

    assert await call_plugin(plugin_code, 1, what="the test", convert=int) == 2


async def test_a_synchronous_callable_runs_in_a_worker_thread() -> None:
    loop_thread = threading.get_ident()

    def plugin_code() -> bool:
        return threading.get_ident() != loop_thread

    assert await call_plugin(plugin_code, what="the test", convert=bool) is True


async def test_an_unexpected_exception_is_a_crash_naming_the_caller_and_the_error() -> None:
    def plugin_code() -> None:
        raise KeyError("missing")

    with pytest.raises(PluginCrash) as raised:
        await call_plugin(plugin_code, what="reader of x://y", convert=str)
    assert str(raised.value) == "reader of x://y failed: KeyError: 'missing'"
    assert raised.value.reason == "KeyError: 'missing'"


async def test_a_conversion_error_is_mapped_like_the_plugins_own() -> None:
    def convert(output: object) -> str:
        raise TypeError(f"returned {type(output).__name__}")

    with pytest.raises(PluginCrash, match="tool 't' failed: TypeError: returned int"):
        await call_plugin(lambda: 1, what="tool 't'", convert=convert)
