"""A mounted server's tools through the trio on prixfixe: found, described, invoked, with
their content passed through unchanged; lazily started, kept on disk, re-read on change."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client

from prixfixe.app import App
from prixfixe.mcp.server import build_server
from prixfixe.servers.catalogue import CATALOGUE_DIR
from tests.search_text import searched
from tests.servers.conftest import FIXTURE_SERVER, data_of, fixture_table, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

Mounted = Callable[..., App]


async def test_search_finds_describe_shows_and_invoke_calls_a_mounted_tool(
    mounted: Mounted, revision: str
) -> None:
    app = mounted()
    async with Client(build_server(app), mode=revision) as client:
        found = await client.call_tool("tool_search", {"query": "add two whole numbers"})
        described = await client.call_tool("tool_describe", {"name": "fix.add"})
        called = await client.call_tool(
            "tool_invoke", {"name": "fix.add", "arguments": {"a": 2, "b": 40}}
        )
    assert searched(found).names[0] == "fix.add"
    shown = text_of(described)
    assert shown.startswith("fix.add (read-only; not listed: call through tool_invoke)")
    assert shown.splitlines()[-1].startswith("Call: tool_invoke(name='fix.add', arguments={")
    assert "- a (integer, required)" in shown
    assert "Returns: total" in shown
    entry = app.registry.get("fix.add")
    upstream = app.servers.catalogued("fix")
    assert upstream is not None
    (add,) = [t for t in upstream if t.name == "add"]
    assert entry.wire.input_schema == add.input_schema  # unchanged, not re-generated
    assert entry.wire.output_schema == add.output_schema
    assert entry.wire.annotations == add.annotations
    assert called.is_error is False
    assert data_of(called) == {"total": 42}
    assert json.loads(text_of(called)) == {"total": 42}


async def test_images_errors_and_huge_text_pass_through_unchanged(
    mounted: Mounted, revision: str
) -> None:
    async with Client(build_server(mounted()), mode=revision) as client:
        picture = await client.call_tool("tool_invoke", {"name": "fix.picture"})
        failed = await client.call_tool(
            "tool_invoke", {"name": "fix.fail", "arguments": {"message": "no such thing"}}
        )
        huge = await client.call_tool(
            "tool_invoke", {"name": "fix.huge", "arguments": {"kilobytes": 2048}}
        )
    assert picture.content == [
        types.ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
        types.TextContent(type="text", text="a tiny picture"),
    ]
    assert failed.is_error is True
    assert "no such thing" in text_of(failed)
    assert text_of(huge) == "y" * 2048 * 1024


async def test_arguments_are_checked_against_the_upstream_schema_before_the_call(
    mounted: Mounted, spawns: list[tuple[str, ...]]
) -> None:
    app = mounted()
    async with Client(build_server(app), mode="legacy") as client:
        wrong = await client.call_tool(
            "tool_invoke", {"name": "fix.add", "arguments": {"a": "two"}}
        )
    assert wrong.is_error is True
    assert "argument 'a': expected integer" in text_of(wrong)
    assert "missing required argument 'b'" in text_of(wrong)


async def test_annotations_decide_mutates(mounted: Mounted) -> None:
    app = mounted()
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": "echo"})
    tools = app.registry.tools
    assert tools["fix.echo"].tool.mutates is False
    assert tools["fix.fail"].tool.mutates is True
    assert tools["fix.fail"].annotations.destructive_hint is True
    assert tools["fix.sleep"].tool.mutates is True  # no hints: MCP's default, may write


async def test_a_lazy_server_starts_on_first_use_and_is_reused(
    mounted: Mounted, make_app: Callable[..., App], spawns: list[tuple[str, ...]]
) -> None:
    first = mounted()
    async with Client(build_server(first), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": "echo"})
    assert len(spawns) == 1  # read once: no tool list was kept for this configuration
    spawns.clear()
    app = mounted()
    assert "fix.echo" in app.registry  # from the kept list, with no process
    async with Client(build_server(app), mode="legacy") as client:
        found = await client.call_tool("tool_search", {"query": "echo the text"})
        assert searched(found).names[0] == "fix.echo"
        assert spawns == []
        for word in ("one", "two", "three"):
            echoed = await client.call_tool(
                "tool_invoke", {"name": "fix.echo", "arguments": {"text": word}}
            )
            assert text_of(echoed) == word
    assert len(spawns) == 1
    assert spawns[0][1:] == (str(FIXTURE_SERVER),)


async def test_an_eager_server_starts_with_serving_and_stops_with_it(
    mounted: Mounted, spawns: list[tuple[str, ...]]
) -> None:
    app = mounted(fixture_table(extra='start = "eager"'))
    async with Client(build_server(app), mode="legacy") as client:
        with anyio.fail_after(15):
            await app.servers.settled()
        assert len(spawns) == 1
        assert app.servers.upstreams["fix"].running
        reported = await client.call_tool("tool_invoke", {"name": "fix.environment"})
    pid = data_of(reported)["pid"]
    assert not app.servers.upstreams["fix"].running
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_the_kept_tool_list_follows_the_configuration(
    mounted: Mounted, tmp_path: Path
) -> None:
    async with Client(build_server(mounted()), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": "echo"})
    kept = list((tmp_path / "home" / CATALOGUE_DIR).glob("fix-*.json"))
    assert len(kept) == 1
    changed = mounted(fixture_table(timeout=9))  # another configuration: another list
    assert "fix.echo" not in changed.registry


async def test_list_changed_re_reads_the_tools_and_search_finds_the_new_one(
    mounted: Mounted, tmp_path: Path
) -> None:
    extra = tmp_path / "extra-tools.txt"
    extra.write_text("", encoding="utf-8")
    config = fixture_table() + '[servers.fix.env]\nFIXTURE_TOOLS_FILE = {env = "EXTRA"}\n'
    app = mounted(config, env={"EXTRA": str(extra)})
    changed = anyio.Event()
    app.registry.subscribe(lambda change: changed.set() if change.tools else None)
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool("tool_invoke", {"name": "fix.echo", "arguments": {"text": "x"}})
        assert "fix.zebra_counter" not in app.registry
        changed = anyio.Event()
        extra.write_text("zebra_counter\n", encoding="utf-8")
        await client.call_tool("tool_invoke", {"name": "fix.announce"})
        with anyio.fail_after(10):
            await changed.wait()
        assert "fix.zebra_counter" in app.registry
        found = await client.call_tool("tool_search", {"query": "zebra counter"})
        called = await client.call_tool("tool_invoke", {"name": "fix.zebra_counter"})
    assert searched(found).names[0] == "fix.zebra_counter"
    assert text_of(called) == "extra"


async def test_a_listed_mounted_facet_is_in_tools_list(mounted: Mounted) -> None:
    app = mounted(fixture_table() + '[mcp]\nexpose = ["core", "fix"]\n')
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": "echo"})
        listed = [t.name for t in (await client.list_tools()).tools]
        echoed = await client.call_tool("fix.echo", {"text": "direct"})
    assert "fix.echo" in listed
    assert text_of(echoed) == "direct"


async def test_a_mounted_servers_log_messages_during_a_call_reach_the_calling_client(
    mounted: Mounted, revision: str
) -> None:
    heard: list[types.LoggingMessageNotificationParams] = []

    async def hear(params: types.LoggingMessageNotificationParams) -> None:
        heard.append(params)

    app = mounted()
    async with Client(
        build_server(app), mode=revision, logging_callback=hear, log_level="info"
    ) as client:
        if revision == "legacy":
            await client.set_logging_level("info")
        called = await client.call_tool(
            "tool_invoke", {"name": "fix.chatty", "arguments": {"words": "hello there"}}
        )
    assert called.is_error is False
    assert [(p.level, p.data, p.logger) for p in heard] == [("info", "heard: hello there", "fix")]


async def test_a_client_cancelling_a_call_cancels_it_on_the_mounted_server(
    mounted: Mounted, revision: str, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    arguments = {"name": "fix.wait_for_cancel", "arguments": {"marker": str(marker)}}
    async with Client(build_server(mounted()), mode=revision) as client:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "tool_invoke", arguments)
                while not marker.exists() or marker.read_text() != "started":
                    await anyio.sleep(0.02)
                tg.cancel_scope.cancel()  # the client gives up on the call
        # Seen by the server itself, well before the call's 15 s timeout would stop it.
        with anyio.fail_after(5):
            while marker.read_text() != "cancelled":
                await anyio.sleep(0.02)
        # The server still answers after the cancelled call.
        echoed = await client.call_tool(
            "tool_invoke", {"name": "fix.echo", "arguments": {"text": "still here"}}
        )
    assert echoed.is_error is False
