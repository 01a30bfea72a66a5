"""`prixfixe serve` as a real subprocess speaking MCP over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import CORE_TOOLS
from tests.search_text import searched

# Each test starts a real server process: seconds apiece.
pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    env["PRIXFIXE_HOME"] = str(tmp_path / "home")
    env.update(extra)
    return env


def _params(tmp_path: Path, *args: str, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "prixfixe", "serve", *args],
        env=_env(tmp_path, **env),
        cwd=tmp_path,
    )


async def test_serve_over_stdio_lists_and_calls_tools(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with Client(_params(tmp_path), mode="legacy") as client:
            tools = await client.list_tools()
            assert [t.name for t in tools.tools] == CORE_TOOLS
            found = await client.call_tool("tool_search", {"query": "describe a tool schema"})
            assert searched(found).names[0] == "tool_describe"
            described = await client.call_tool("tool_describe", {"name": "tool_search"})
            assert "- query (string|array of string, required)" in described.content[0].text  # type: ignore[union-attr]


async def test_serve_over_stdio_speaks_the_stateless_revision(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with Client(_params(tmp_path), mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            tools = await client.list_tools()
    assert len(tools.tools) == len(CORE_TOOLS)


async def test_serve_with_a_narrow_facet_over_stdio(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with Client(_params(tmp_path, "--facet", "core"), mode="legacy") as client:
            tools = await client.list_tools()
    assert [t.name for t in tools.tools] == CORE_TOOLS


def test_malformed_json_rpc_gets_clear_errors_and_the_server_keeps_serving(tmp_path: Path) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    lines = [
        "this is not json",
        json.dumps(init),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 7}),
        "[1, 2]",
        json.dumps({"jsonrpc": "2.0", "id": 8, "method": "no/such/method"}),
        json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}),
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "prixfixe", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
        cwd=tmp_path,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write("\n".join(lines) + "\n")
    proc.stdin.flush()
    replies: list[dict[str, object]] = []
    # A client keeps stdin open until it has its answers; read until the last one arrives.
    deadline = time.monotonic() + 30
    while not any(r.get("id") == 9 for r in replies) and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        replies.append(json.loads(line))
    proc.stdin.close()
    stderr = proc.stderr.read() if proc.stderr else ""
    assert proc.wait(timeout=30) == 0

    by_id: dict[object, dict[str, Any]] = {r.get("id"): r for r in replies if r.get("id")}
    parse_errors: list[dict[str, Any]] = [r for r in replies if r.get("id") is None]
    assert {r["error"]["code"] for r in parse_errors} == {-32700, -32600}
    assert any("not valid JSON" in r["error"]["message"] for r in parse_errors)
    assert by_id[7]["error"]["code"] == -32600
    assert "method" in by_id[7]["error"]["message"]
    assert by_id[8]["error"]["code"] == -32601
    assert len(by_id[9]["result"]["tools"]) == len(CORE_TOOLS)
    assert "rejected input" in stderr
    assert "Traceback" not in stderr


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_serve_over_stdio_reads_resources_and_notifies_a_subscriber(tmp_path: Path) -> None:
    from tests.resources.conftest import Inbox

    inbox = Inbox()
    record = "prixfixe://store/reminder/1"
    with anyio.fail_after(30):
        async with Client(_params(tmp_path), mode="legacy", message_handler=inbox) as client:
            listed = [r.uri for r in (await client.list_resources()).resources]
            assert "prixfixe://capability-index/summary" in listed
            health = await client.read_resource("prixfixe://system/health")
            assert json.loads(health.contents[0].text)["status"] == "ok"  # type: ignore[union-attr]
            put = {"kind": "reminder", "record": {"text": "call", "due": "2026-12-01"}}
            await client.call_tool("store_put", put)
            await client.subscribe_resource(record)
            await client.call_tool("store_close", {"kind": "reminder", "id": 1})
            await inbox.wait_for(("updated", record))
            closed = await client.read_resource(record)
    assert json.loads(closed.contents[0].text)["closed"] is True  # type: ignore[union-attr]


async def test_serve_over_stdio_delivers_listen_events_on_the_stateless_revision(
    tmp_path: Path,
) -> None:
    from mcp.client.subscriptions import ResourceUpdated

    record = "prixfixe://store/deadline/1"
    with anyio.fail_after(30):
        async with Client(_params(tmp_path), mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            resources = client.server_capabilities.resources
            assert resources is not None
            assert (resources.subscribe, resources.list_changed) == (True, True)
            put = {"kind": "deadline", "record": {"label": "rent", "date": "2026-12-01"}}
            await client.call_tool("store_put", put)
            async with client.listen(resource_subscriptions=[record]) as sub:
                await client.call_tool("store_put", {**put, "id": 1})
                event = await sub.__anext__()
    assert event == ResourceUpdated(record)
