"""`prixfixe serve --http` under faults: stalled and abandoned connections, a full file table,
stops with requests stuck, bad tokens, and fuzzed JSON-RPC, each against a real server process.

Each test asserts where the effect shows: the server closes a connection (within a bound well
above the configured timeout), answers an authorised client, logs one line, writes no
traceback on its stderr.
"""

from __future__ import annotations

import contextlib
import json
import resource
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    wait_ready,
)
from tests.mcp.http.plugin import STARTED

# Each test starts a real server process: seconds apiece.
pytestmark = pytest.mark.slow

TOKEN = "fault-test-token-0123456789"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


def address(served: Served) -> tuple[str, int]:
    host, port = served.url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    return host.strip("[]"), int(port)


def head(served: Served, *, length: int | None = None, **headers: str) -> bytes:
    """A POST's request line and headers for the MCP endpoint (a body of `length` bytes)."""
    host, port = address(served)
    lines = ["POST /mcp HTTP/1.1", f"Host: {host}:{port}"]
    lines += [f"{k}: {v}" for k, v in {**JSON_SSE, **headers}.items()]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@asynccontextmanager
async def raw(served: Served) -> AsyncIterator[anyio.abc.SocketStream]:
    host, port = address(served)
    async with await anyio.connect_tcp(host, port) as stream:
        yield stream


async def until_closed(stream: anyio.abc.SocketStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    while True:
        try:
            received += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            return received


async def until(stream: anyio.abc.SocketStream, marker: bytes) -> bytes:
    received = b""
    while marker not in received:
        received += await stream.receive()
    return received


async def post(url: str, body: Any = INITIALIZE, **headers: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(url, json=body, headers={**JSON_SSE, **headers})


def no_traceback(served: Served) -> None:
    output = served.stderr()
    assert "Traceback" not in output, output[-4000:]
    assert "Exception in ASGI application" not in output, output[-4000:]


# Connections that stall: before their headers end, mid-body, or many at once.


@pytest.mark.anyio
async def test_a_connection_that_never_finishes_its_headers_is_answered_408_and_closed(
    serve: ServeFactory,
) -> None:
    served = serve(config="[http]\nheader_timeout_seconds = 1\n")
    async with raw(served) as silent, raw(served) as partial:
        await partial.send(head(served)[:40])  # the request line and half a header
        with anyio.fail_after(10):
            assert await until_closed(silent) == b""
            assert (await until_closed(partial)).startswith(b"HTTP/1.1 408 ")
    assert (await post(served.url)).status_code == 200  # and it still serves
    no_traceback(served)


@pytest.mark.anyio
async def test_a_body_that_stalls_is_answered_408_and_closed(serve: ServeFactory) -> None:
    served = serve(config="[http]\nbody_timeout_seconds = 1\n")
    async with raw(served) as stream:
        await stream.send(head(served, length=100) + b'{"jsonrpc": "2.0"')
        with anyio.fail_after(10):
            answer = await until_closed(stream)
    assert answer.startswith(b"HTTP/1.1 408 ")
    await served.wait_for_line("did not send its request body within 1s")
    assert (await post(served.url)).status_code == 200
    no_traceback(served)


@pytest.mark.anyio
async def test_stalled_connections_beyond_the_cap_do_not_lock_out_an_authorised_client(
    serve: ServeFactory,
) -> None:
    served = serve(
        "--token-env", "PF_TOKEN", config="[http]\nmax_connections = 8\n", PF_TOKEN=TOKEN
    )
    async with AsyncExitStack() as stack:
        stalled = [await stack.enter_async_context(raw(served)) for _ in range(30)]
        for stream in stalled:
            await stream.send(b"POST /mcp HTTP/1.1\r\n")  # no token, and no end of headers
        with anyio.fail_after(20):
            assert (await post(served.url, **BEARER)).status_code == 200
            # The oldest stalled connection made room: the server closed it.
            assert await until_closed(stalled[0]) == b""
    await served.wait_for_line("most open connections")
    no_traceback(served)


def start_with_file_limit(tmp_path: Path, limit: int, *args: str, **env: str) -> Served:
    def lower_limit() -> None:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))

    process = subprocess.Popen(
        [sys.executable, "-m", "prixfixe", "serve", "--http", "--port", "0", *args],
        cwd=tmp_path,
        env=server_env(tmp_path, **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lower_limit,
    )
    return wait_ready(process)


@pytest.mark.anyio
async def test_with_the_open_file_limit_at_200_250_stalled_clients_leave_room_and_no_tracebacks(
    tmp_path: Path,
) -> None:
    served = start_with_file_limit(tmp_path, 200, "--token-env", "PF_TOKEN", PF_TOKEN=TOKEN)
    try:
        async with AsyncExitStack() as stack:
            for _ in range(250):
                stream = await stack.enter_async_context(raw(served))
                await stream.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            with anyio.fail_after(20):
                assert (await post(served.url, **BEARER)).status_code == 200
        no_traceback(served)
        assert len(served.stderr().splitlines()) < 20  # a few lines, not a flood
        assert served.stop() == 0
    finally:
        if served.process.poll() is None:
            served.process.kill()
            served.process.wait()


# Stopping with requests stuck, and clients that hang up.


@pytest.mark.anyio
async def test_a_stop_does_not_wait_for_a_request_body_that_never_comes(
    serve: ServeFactory,
) -> None:
    served = serve(config="[http]\nshutdown_grace_seconds = 60\nbody_timeout_seconds = 60\n")
    async with raw(served) as stream:
        # `Expect: 100-continue`: the server says "100 Continue" once it reads the body.
        await stream.send(head(served, length=1000, Expect="100-continue"))
        with anyio.fail_after(10):
            await until(stream, b"100 Continue")
        await stream.send(b'{"jsonrpc": ')
        served.process.terminate()
        assert await wait_exit(served.process, 10) == 0  # far less than the 60 s grace
    assert "prixfixe: stopped; the store is closed" in served.stderr()
    no_traceback(served)


@pytest.mark.anyio
async def test_a_call_still_running_after_the_grace_is_ended_without_a_traceback(
    serve: ServeFactory, revision: str
) -> None:
    served = serve(*PLUGIN, config="[http]\nshutdown_grace_seconds = 1\n")

    async def call() -> None:
        with contextlib.suppress(Exception):  # the server ends the call: no answer comes
            async with connect(served.url, mode=revision) as client:
                await client.call_tool("slow_echo", {"seconds": 30})

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await served.wait_for_line(STARTED)
        served.process.terminate()
        assert await wait_exit(served.process, 15) == 0  # far less than the call's 30 s
        tg.cancel_scope.cancel()
    assert "prixfixe: stopped; the store is closed" in served.stderr()
    no_traceback(served)


@pytest.mark.anyio
async def test_a_client_that_hangs_up_mid_body_leaves_no_traceback(serve: ServeFactory) -> None:
    served = serve()
    async with raw(served) as stream:
        await stream.send(head(served, length=1000, Expect="100-continue"))
        with anyio.fail_after(10):
            await until(stream, b"100 Continue")
        await stream.send(b'{"jsonrpc": ')
    # The server saw the hang-up before this request, which it answers.
    assert (await post(served.url)).status_code == 200
    no_traceback(served)


# Tokens.


@pytest.mark.anyio
async def test_a_request_without_a_token_is_refused_and_logged(serve: ServeFactory) -> None:
    served = serve("--token-env", "PF_TOKEN", PF_TOKEN=TOKEN)
    assert (await post(served.url)).status_code == 401
    await served.wait_for_line("refused a request without a bearer token")
    assert (await post(served.url, Authorization="Basic eDp5")).status_code == 401
    await served.wait_for_line("refused a request with Basic authorization")


def refused_at_start(tmp_path: Path, *args: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "prixfixe", "serve", "--http", "--port", "0", *args],
        cwd=tmp_path,
        env=server_env(tmp_path, **env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


@pytest.mark.parametrize("value", ["   ", "\t\n", " padded-token-value "])
def test_a_token_no_client_could_send_is_refused_at_start(tmp_path: Path, value: str) -> None:
    stderr = refused_at_start(tmp_path, "--token-env", "PF_TOKEN", PF_TOKEN=value)
    assert "--token-env refers to environment variable PF_TOKEN" in stderr
    assert "whitespace" in stderr


def test_a_token_file_that_never_ends_is_refused_at_start(tmp_path: Path) -> None:
    stderr = refused_at_start(tmp_path, "--token-file", "/dev/zero")
    assert "--token-file refers to file /dev/zero, which is larger than" in stderr


def test_a_token_too_short_to_resist_guessing_is_refused_at_start(tmp_path: Path) -> None:
    stderr = refused_at_start(tmp_path, "--token-env", "PF_TOKEN", PF_TOKEN="hunter2")
    assert "environment variable PF_TOKEN, which is 7 characters" in stderr
    assert "at least 16" in stderr
    assert "hunter2" not in stderr, "the message never echoes the token"


def test_a_token_file_holding_only_whitespace_is_refused_at_start(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("  \n\n", encoding="utf-8")
    stderr = refused_at_start(tmp_path, "--token-file", str(tmp_path / "token"))
    assert "whitespace" in stderr


# Sessions.


@pytest.mark.anyio
async def test_an_open_event_stream_does_not_keep_a_session_alive_forever(
    serve: ServeFactory,
) -> None:
    served = serve(*PLUGIN, config="[http]\nsession_idle_seconds = 1\n")
    opened = await post(served.url)
    session_id = opened.headers["mcp-session-id"]
    session = {
        "Accept": "text/event-stream",
        "mcp-session-id": session_id,
        "mcp-protocol-version": "2025-11-25",
    }
    with anyio.fail_after(15):
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            http.stream("GET", served.url, headers=session) as stream,
        ):
            assert stream.status_code == 200
            async for _ in stream.aiter_bytes():
                pass  # the server ends the stream; a client still there would reopen it
        # This client does not: the session expires one idle period later.
        await served.wait_for_line(f"Session {session_id} idle timeout")
    ping = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
    del session["Accept"]
    assert (await post(served.url, ping, **session)).status_code == 404
    no_traceback(served)


# Fuzzed JSON-RPC through real requests.

METHODS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/roots/list_changed",
]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=10), children, max_size=4),
    ),
    max_leaves=12,
)
#: Parameters shaped like the real ones, with wrong values and types among them.
shaped_params = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from([*CORE_TOOLS, "nope", ""]) | json_scalars,
        "arguments": json_values,
        "uri": st.sampled_from(
            ["prixfixe://system/health", "prixfixe://nothing", "", "x:/", "prixfixe://"]
        )
        | json_scalars,
        "protocolVersion": st.sampled_from(["2025-11-25", "2026-07-28", "1999-01-01", ""]),
        "capabilities": json_values,
        "clientInfo": json_values,
        "level": st.sampled_from(["debug", "info", "loud", ""]),
        "cursor": st.text(max_size=12) | json_scalars,
        "requestId": json_scalars,
        "ref": json_values,
        "argument": json_values,
    },
)
MISSING = object()


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`good` nine times in ten, else `bad`: requests must get past parsing to test more."""
    return st.integers(0, 9).flatmap(lambda n: bad if n == 9 else good)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    """A JSON-RPC message, mostly well-formed in its envelope, each part sometimes wrong."""
    parts = {
        "jsonrpc": draw(mostly(st.just("2.0"), json_scalars | st.just(MISSING))),
        "method": draw(mostly(st.sampled_from(METHODS), json_scalars | st.just(MISSING))),
        "id": draw(mostly(st.integers(0, 1000), json_values | st.just(MISSING))),
        "params": draw(mostly(shaped_params, json_values | st.just(MISSING))),
    }
    if draw(st.integers(0, 9)) == 9:
        parts[draw(st.sampled_from(["result", "error"]))] = draw(json_values)
    return {key: value for key, value in parts.items() if value is not MISSING}


MODES = st.sampled_from(["session", "modern", "no session", "wrong version"])


def header_safe(value: Any) -> bool:
    return isinstance(value, str) and value.isascii() and value.isprintable()


@st.composite
def requests(draw: st.DrawFn) -> tuple[bytes, str, dict[str, str]]:
    """A request body, the mode it is sent in, and the headers 2026-07-28 wants beside it."""
    mode = draw(MODES)
    kind = draw(mostly(st.just("message"), st.sampled_from(["batch", "json", "bytes"])))
    if kind == "bytes":
        return draw(st.binary(max_size=64)), mode, {}
    if kind == "json":
        return json.dumps(draw(json_values)).encode(), mode, {}
    drawn = draw(st.lists(messages(), min_size=1, max_size=3 if kind == "batch" else 1))
    headers: dict[str, str] = {}
    if mode == "modern" and draw(mostly(st.just(True), st.just(False))):
        # The envelope the stateless revision checks first, so the request gets past it.
        message = drawn[0]
        params = message.setdefault("params", {})
        if isinstance(params, dict):
            extra = draw(st.dictionaries(st.text(max_size=5), json_values, max_size=2))
            params["_meta"] = {**MODERN_META, **extra}
            name = params.get("name", params.get("uri"))
            if isinstance(name, str) and header_safe(name):
                headers["Mcp-Name"] = name
        method = message.get("method")
        if isinstance(method, str) and header_safe(method):
            headers["Mcp-Method"] = method
    body = drawn if kind == "batch" else drawn[0]
    return json.dumps(body).encode(), mode, headers


def json_rpc_errors(response: httpx2.Response) -> list[dict[str, Any]]:
    """Every JSON-RPC error object in an answer, whether plain JSON or server-sent events."""
    texts = [response.text]
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        texts = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
    found: list[dict[str, Any]] = []
    for text in texts:
        try:
            value = json.loads(text)
        except ValueError:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and isinstance(item.get("error"), dict):
                found.append(item["error"])
    return found


@pytest.mark.anyio
async def test_fuzzed_json_rpc_over_http_never_breaks_the_server(serve: ServeFactory) -> None:
    served = serve()
    opened = await post(served.url)
    versions = {
        "session": {"Mcp-Session-Id": opened.headers["mcp-session-id"]},
        "modern": {"MCP-Protocol-Version": "2026-07-28"},
        "no session": {},
        "wrong version": {"MCP-Protocol-Version": "1999-01-01"},
    }
    versions["session"]["MCP-Protocol-Version"] = "2025-11-25"
    answered: list[int] = []

    with httpx2.Client(timeout=20, headers=JSON_SSE) as http:

        @settings(
            max_examples=200,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(request=requests())
        def one_request(request: tuple[bytes, str, dict[str, str]]) -> None:
            body, mode, headers = request
            response = http.post(served.url, content=body, headers={**versions[mode], **headers})
            assert response.status_code < 500, (body, mode, response.text)
            for error in json_rpc_errors(response):
                assert error.get("code") != -32603, (body, mode, response.text)
            answered.append(response.status_code)

        await anyio.to_thread.run_sync(one_request)
    assert len(answered) >= 200
    with anyio.fail_after(30):
        async with connect(served.url) as client:  # it keeps serving
            assert [t.name for t in (await client.list_tools()).tools] == CORE_TOOLS
    no_traceback(served)
