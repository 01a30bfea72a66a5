"""A streamable HTTP upstream: `@modelcontextprotocol/server-everything` serving
`streamableHttp` on 127.0.0.1 only, mounted with `url = ...` and a header from a credential
reference, used through the trio; and refused by the net gate, before any connection, when
`[leash] net` does not grant its host.

Between prixfixe and the server sits a TCP relay on 127.0.0.1 that counts the connections it
accepts and keeps the bytes sent to the server: the point of effect for "the header was
sent" and "nothing connected"."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client

from prixfixe.app import App
from prixfixe.mcp.server import build_server
from tests.search_text import searched
from tests.servers.conftest import text_of
from tests.servers.real_servers import node, npm_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

KEY = "everything-key-7f3a"
#: Makes the server listen on 127.0.0.1 only (it listens on every interface by itself).
LOOPBACK_ONLY = Path(__file__).with_name("fixtures") / "loopback_only.cjs"
#: What the relay keeps of the bytes sent upstream (enough for the first requests' headers).
KEEP = 64 * 1024


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@dataclass
class Relay:
    """Connections accepted on `port`, each piped to the upstream."""

    port: int
    accepted: int = 0
    sent: bytearray = field(default_factory=bytearray)


async def _pipe(
    source: anyio.abc.ByteStream, sink: anyio.abc.ByteStream, keep: bytearray | None
) -> None:
    try:
        async for chunk in source:
            if keep is not None and len(keep) < KEEP:
                keep += chunk
            await sink.send(chunk)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    finally:
        await sink.aclose()


@pytest.fixture
async def everything() -> AsyncIterator[int]:
    """server-everything's streamable HTTP transport on a free port; yields the port once it
    says it listens (bounded wait), stops it after."""
    port = _free_port()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PORT": str(port),
        "NODE_OPTIONS": f'--require "{LOOPBACK_ONLY}"',
    }
    process = await anyio.open_process(
        [node(), npm_server("server-everything"), "streamableHttp"], env=env
    )
    try:
        assert process.stderr is not None
        lines = BufferedByteReceiveStream(process.stderr)
        with anyio.fail_after(30):
            while b"listening on port" not in await lines.receive_until(b"\n", 4096):
                pass
        yield port
    finally:
        process.terminate()
        with anyio.move_on_after(5):
            await process.wait()
        await process.aclose()


@pytest.fixture
async def relay(everything: int) -> AsyncIterator[Relay]:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    seen = Relay(port=listener.extra(anyio.abc.SocketAttribute.local_port))

    async def handle(client: anyio.abc.SocketStream) -> None:
        seen.accepted += 1
        upstream = await anyio.connect_tcp("127.0.0.1", everything)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_pipe, client, upstream, seen.sent)
            tg.start_soon(_pipe, upstream, client, None)

    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        yield seen
        tg.cancel_scope.cancel()


def _table(port: int, extra: str = "") -> str:
    return (
        "[servers.web]\n"
        f'url = "http://127.0.0.1:{port}/mcp"\n'
        "timeout = 30\n"
        '[servers.web.headers]\nX-Api-Key = {env = "PFX_WEB_KEY"}\n'
        f"{extra}"
    )


def _app(make_app: Callable[..., App], port: int, extra: str = "") -> App:
    return make_app(config=_table(port, extra), env={"PFX_WEB_KEY": KEY}, plugins=[])


async def test_a_streamable_http_server_is_found_described_and_called(
    make_app: Callable[..., App], relay: Relay, revision: str
) -> None:
    app = _app(make_app, relay.port)
    async with Client(build_server(app), mode=revision) as client:
        found = await client.call_tool("tool_search", {"query": "add two numbers together"})
        described = await client.call_tool("tool_describe", {"name": "web.get-sum"})
        summed = await client.call_tool(
            "tool_invoke", {"name": "web.get-sum", "arguments": {"a": 19, "b": 23}}
        )
        echoed = await client.call_tool(
            "tool_invoke", {"name": "web.echo", "arguments": {"message": "over HTTP"}}
        )
    assert "web.get-sum" in searched(found).names[:3], searched(found).text
    assert "- a (number, required)" in text_of(described)
    assert not summed.is_error, text_of(summed)
    assert "42" in text_of(summed)
    assert text_of(echoed) == "Echo: over HTTP"
    assert app.servers.upstreams["web"].server_info is not None
    # The header came from its reference and reached the server on the wire.
    assert f"x-api-key: {KEY}".encode() in bytes(relay.sent).lower()
    assert relay.accepted >= 1


async def test_the_http_upstreams_results_are_what_a_direct_client_gets(
    make_app: Callable[..., App], relay: Relay
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get-sum", {"a": 1.5, "b": 2}),
        ("get-structured-content", {"location": "New York"}),
        ("get-tiny-image", {}),
    ]
    app = _app(make_app, relay.port)
    async with Client(build_server(app), mode="legacy") as client:
        through = [
            await client.call_tool("tool_invoke", {"name": f"web.{tool}", "arguments": args})
            for tool, args in calls
        ]
    async with Client(f"http://127.0.0.1:{relay.port}/mcp", mode="legacy") as direct_client:
        direct = [await direct_client.call_tool(tool, args) for tool, args in calls]
    for mine, theirs in zip(through, direct, strict=True):
        assert not mine.is_error, text_of(mine)
        assert mine.content == theirs.content
        assert mine.structured_content == theirs.structured_content


async def test_a_net_grant_without_the_host_refuses_before_any_connection(
    make_app: Callable[..., App], relay: Relay
) -> None:
    async with Client(build_server(_app(make_app, relay.port)), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": "echo"})  # its tool list is kept
    relay.accepted = 0
    app = _app(make_app, relay.port, '[leash]\nnet = ["example.com"]\n')
    async with Client(build_server(app), mode="legacy") as client:
        refused = await client.call_tool(
            "tool_invoke", {"name": "web.echo", "arguments": {"message": "x"}}
        )
    assert refused.is_error
    message = text_of(refused)
    assert "server 'web'" in message
    assert f"127.0.0.1:{relay.port} is not granted; the network grant is [example.com]" in message
    assert relay.accepted == 0
