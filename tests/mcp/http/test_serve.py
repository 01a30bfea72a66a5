"""`prixfixe serve --http` over real HTTP on 127.0.0.1, in a subprocess."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import CORE_TOOLS
from tests.mcp.http.conftest import (
    INITIALIZE,
    JSON_SSE,
    PLUGIN,
    Served,
    ServeFactory,
    connect,
    server_env,
    wait_exit,
)
from tests.mcp.http.plugin import STARTED
from tests.search_text import searched

# Real server processes: seconds apiece. Tests that only read share one per module.
pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def _post(url: str, body: Any = INITIALIZE, **headers: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(url, json=body, headers={**JSON_SSE, **headers})


@pytest.mark.parametrize("stateless", [False, True], ids=["stateful", "stateless"])
async def test_both_revisions_list_call_and_read_over_http(
    request: pytest.FixtureRequest, revision: str, stateless: bool
) -> None:
    served: Served = request.getfixturevalue(
        "shared_stateless_server" if stateless else "shared_server"
    )
    with anyio.fail_after(30):
        async with connect(served.url, mode=revision) as client:
            tools = await client.list_tools()
            assert [t.name for t in tools.tools] == CORE_TOOLS
            found = await client.call_tool("tool_search", {"query": "describe a tool schema"})
            assert searched(found).names[0] == "tool_describe"
            health = await client.read_resource("prixfixe://system/health")
            assert json.loads(health.contents[0].text)["status"] == "ok"  # type: ignore[union-attr]
            with pytest.raises(MCPError) as caught:
                await client.read_resource("prixfixe://nothing/here")
    assert caught.value.code == (-32002 if revision == "legacy" else -32602)


async def test_a_stateless_server_refuses_2025_subscriptions_instead_of_never_firing(
    shared_stateless_server: Served, shared_server: Served
) -> None:
    uri = "prixfixe://system/health"
    with anyio.fail_after(30):
        async with connect(shared_stateless_server.url, mode="legacy") as client:
            resources = client.server_capabilities.resources
            assert resources is not None
            assert resources.subscribe is False
            tools = client.server_capabilities.tools
            assert tools is not None
            assert tools.list_changed is False
            with pytest.raises(MCPError) as caught:
                await client.subscribe_resource(uri)
        # A server that keeps sessions still serves them, and says so.
        async with connect(shared_server.url, mode="legacy") as client:
            resources = client.server_capabilities.resources
            assert resources is not None
            assert resources.subscribe is True
            await client.subscribe_resource(uri)
    assert caught.value.code == -32601  # method not found: nothing was registered


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
async def test_a_foreign_origin_gets_403_and_a_loopback_origin_is_served(
    shared_server: Served, protocol: str
) -> None:
    served = shared_server
    since = served.mark()
    version = {"MCP-Protocol-Version": protocol} if protocol == "2026-07-28" else {}
    refused = await _post(served.url, Origin="http://evil.example", **version)
    assert refused.status_code == 403
    assert "origin 'http://evil.example'" in refused.json()["error"]["message"]
    allowed = await _post(served.url, Origin=served.base)
    assert allowed.status_code == 200
    logged = "refused a request from origin 'http://evil.example'"
    assert logged in served.stderr_with(logged, since)  # the line may still be in the pipe


async def test_a_foreign_host_header_gets_421(shared_server: Served) -> None:
    served = shared_server
    refused = await _post(served.url, Host="attacker.example")
    assert refused.status_code == 421
    assert "host 'attacker.example'" in refused.json()["error"]["message"]
    port = served.url.split(":")[2].split("/")[0]
    assert (await _post(served.url, Host=f"localhost:{port}")).status_code == 200


async def test_configured_origins_and_hosts_are_accepted(serve: ServeFactory) -> None:
    served = serve(
        config='[http]\nallowed_origins = ["https://app.example.org"]\n'
        'allowed_hosts = ["mcp.example.org"]\n'
    )
    assert (await _post(served.url, Origin="https://app.example.org")).status_code == 200
    assert (await _post(served.url, Origin="https://other.example.org")).status_code == 403
    assert (await _post(served.url, Host="mcp.example.org")).status_code == 200


async def test_a_token_is_required_when_configured_and_never_printed(
    serve: ServeFactory,
) -> None:
    secret = "s3cret-token-value-123"
    served = serve("--token-env", "PF_TEST_TOKEN", PF_TEST_TOKEN=secret)
    missing = await _post(served.url)
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer ")
    wrong = await _post(served.url, Authorization="Bearer not-the-token")
    assert wrong.status_code == 401
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    basic = await _post(served.url, Authorization="Basic czNjcmV0")
    assert basic.status_code == 401
    with anyio.fail_after(30):
        async with connect(served.url, headers={"Authorization": f"Bearer {secret}"}) as client:
            assert len((await client.list_tools()).tools) == len(CORE_TOOLS)
        async with connect(
            served.url, mode="2026-07-28", headers={"Authorization": f"Bearer {secret}"}
        ) as client:
            assert len((await client.list_tools()).tools) == len(CORE_TOOLS)
    assert served.stop() == 0
    output = served.stderr()
    assert "bearer token from environment variable PF_TEST_TOKEN" in output
    assert secret not in output


async def test_a_token_from_a_file_reference_in_the_config(
    serve: ServeFactory, tmp_path: Path
) -> None:
    (tmp_path / "token").write_text("file-token-0123456789\n", encoding="utf-8")
    (tmp_path / "token").chmod(0o600)
    served = serve(config=f'[http]\ntoken = {{file = "{tmp_path / "token"}"}}\n')
    assert (await _post(served.url)).status_code == 401
    bearer = "Bearer file-token-0123456789"
    assert (await _post(served.url, Authorization=bearer)).status_code == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_refuses_to_bind_beyond_loopback_without_a_token(tmp_path: Path, host: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "prixfixe", "serve", "--http", "--host", host, "--port", "0"],
        cwd=tmp_path,
        env=server_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert f"refusing to serve on {host}" in done.stderr
    assert "[http] token" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_token_reference_to_an_unset_variable_is_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "prixfixe", "serve", "--http", "--token-env", "PF_UNSET_X"],
        cwd=tmp_path,
        env=server_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "environment variable PF_UNSET_X, which is not set" in done.stderr
    assert "Traceback" not in done.stderr


async def test_a_body_over_the_configured_size_gets_413(serve: ServeFactory) -> None:
    served = serve(config="[http]\nmax_body_bytes = 2048\n")
    big = {**INITIALIZE, "params": {**INITIALIZE["params"], "padding": "x" * 4096}}
    assert (await _post(served.url, big)).status_code == 413
    assert (await _post(served.url)).status_code == 200


async def test_a_client_that_disconnects_mid_request_leaves_the_server_serving(
    serve: ServeFactory,
) -> None:
    served = serve(*PLUGIN)
    with anyio.fail_after(30):
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(served.url, json=INITIALIZE, headers=JSON_SSE)
            session = {
                **JSON_SSE,
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(served.url, json=initialized, headers=session)
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "slow_echo", "arguments": {"seconds": 5}},
            }
            async with http.stream("POST", served.url, json=call, headers=session) as stream:
                assert stream.status_code == 200  # the server took the call ...
            # ... and the client hung up without reading the answer.
        for revision in ("legacy", "2026-07-28"):
            async with connect(served.url, mode=revision) as client:
                quick = await client.call_tool("slow_echo", {"seconds": 0})
                assert quick.content[0].text == "done after 0s"  # type: ignore[union-attr]
    assert served.process.poll() is None
    assert served.stop() == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_signal_lets_in_flight_calls_finish_then_closes_the_store(
    serve: ServeFactory, tmp_path: Path, sig: int
) -> None:
    served = serve(*PLUGIN)
    results: list[Any] = []
    with anyio.fail_after(60):
        async with connect(served.url) as client:
            put = await client.call_tool(
                "store_put",
                {"kind": "reminder", "record": {"text": "stop cleanly", "due": "2026-01-01"}},
            )
            assert put.is_error is False
            wal = tmp_path / "home" / "store.sqlite3-wal"
            assert wal.exists()  # the store is open, in WAL mode

            async def call() -> None:
                results.append(await client.call_tool("slow_echo", {"seconds": 1.5}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                # Signal once the call is being served (its request is in flight).
                await served.wait_for_line(STARTED)
                served.process.send_signal(sig)
        assert await wait_exit(served.process) == 0
    assert results[0].content[0].text == "done after 1.5s"
    assert "prixfixe: stopped; the store is closed" in served.stderr()
    assert not wal.exists()  # the last connection closed: SQLite checkpointed and removed it


async def test_idle_sessions_expire(serve: ServeFactory) -> None:
    served = serve(*PLUGIN, config="[http]\nsession_idle_seconds = 0.5\n")
    opened = await _post(served.url)
    session_id = opened.headers["mcp-session-id"]
    session = {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    ping = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
    assert (await _post(served.url, ping, **session)).status_code == 200
    # Any request would keep the session alive: wait for the server to say it expired it.
    await served.wait_for_line(f"Session {session_id} idle timeout")
    assert (await _post(served.url, ping, **session)).status_code == 404


async def test_without_the_page_other_paths_get_404_and_the_endpoint_with_a_slash_redirects(
    serve: ServeFactory,
) -> None:
    served = serve("--no-web")
    async with httpx2.AsyncClient(timeout=30) as http:
        assert (await http.get(served.base + "/elsewhere")).status_code == 404
        slash = await http.post(served.url + "/", json=INITIALIZE, headers=JSON_SSE)
        assert slash.status_code == 307
        assert slash.headers["location"] == served.url
        assert (await http.post(served.url, json=INITIALIZE, headers=JSON_SSE)).status_code == 200
