"""stdio under bad input: every request gets an answer, no line is held whole beyond a bound,
and the server keeps serving."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from prixfixe.mcp.stdio import MAX_LINE_BYTES, bounded_lines, screen_line
from tests.conftest import CORE_TOOLS

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("request_id", "named"),
    [(1.5, "number"), (True, "boolean"), (None, "null"), ({"a": 1}, "object"), ([1], "array")],
)
def test_a_request_whose_id_is_not_a_string_or_integer_is_answered_with_32600(
    request_id: object, named: str
) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}).encode()
    refused = screen_line(line)
    assert refused is not None
    assert (refused.id, refused.error.code) == (None, -32600)
    assert (
        refused.error.message == f"Invalid Request: id must be a string or an integer, not {named}"
    )


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":"seven","method":"tools/list"}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":3,"result":{}}',
        b"not json at all",  # the SDK's own parse answers this one with -32700
        b"[" * 100_000,  # too deep for json: left to the SDK's parser, which refuses it
    ],
)
def test_well_formed_messages_and_unparseable_text_pass_the_screen(line: bytes) -> None:
    assert screen_line(line) is None


class _Chunks:
    """An async `read(n)` over fixed chunks, as a pipe delivers them."""

    def __init__(self, *chunks: bytes) -> None:
        self._chunks = list(chunks)
        self.largest_read = 0

    async def read(self, n: int) -> bytes:
        self.largest_read = max(self.largest_read, n)
        return self._chunks.pop(0) if self._chunks else b""


async def test_an_over_long_line_is_refused_as_it_streams_and_the_next_line_is_read() -> None:
    refused: list[types.JSONRPCError] = []

    async def refuse(error: types.JSONRPCError) -> None:
        refused.append(error)

    good = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    # 3 KiB of one line with a 1 KiB limit, in 512-byte pieces, then a good line split in two.
    source = _Chunks(*([b"x" * 512] * 6), b"\n" + good[:10], good[10:] + b"\n", b"\n\n")
    lines = [line async for line in bounded_lines(source.read, refuse, limit=1024)]
    assert lines == [good.decode()]
    assert [e.error.message for e in refused] == [
        "Invalid Request: the message is longer than 1024 bytes"
    ]


async def test_a_last_line_without_a_newline_is_still_read_and_a_bad_id_is_refused() -> None:
    refused: list[types.JSONRPCError] = []

    async def refuse(error: types.JSONRPCError) -> None:
        refused.append(error)

    bad = b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n'
    last = b'{"jsonrpc":"2.0","id":2,"method":"ping"}'
    lines = [line async for line in bounded_lines(_Chunks(bad + last).read, refuse, limit=1024)]
    assert lines == [last.decode()]
    assert [e.error.code for e in refused] == [-32600]


def _exchange(
    folder: Path, lines: list[str], wanted: set[int], seconds: float = 30
) -> tuple[list[dict[str, Any]], str]:
    """Start `prixfixe serve` in `folder`, write `lines`, read replies until every id in
    `wanted` is answered (requests run concurrently, so in any order), then close stdin and
    return the replies and the server's stderr; the server must exit 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    env |= {"XDG_CONFIG_HOME": str(folder / "xdg"), "PRIXFIXE_HOME": str(folder / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "prixfixe", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=folder,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdin.write(("\n".join(lines) + "\n").encode())
    proc.stdin.flush()
    replies: list[dict[str, Any]] = []
    deadline = time.monotonic() + seconds
    while not wanted <= {r.get("id") for r in replies} and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        replies.append(json.loads(line))
    proc.stdin.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=30) == 0
    return replies, stderr


@pytest.mark.slow
def test_a_real_server_answers_every_bad_request_and_keeps_serving(tmp_path: Path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    lines = [
        '{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":true,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',  # before initialize
        "x" * (MAX_LINE_BYTES + 1),
        json.dumps(initialize),
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        '{"jsonrpc":"2.0","id":4,"method":"tools/list"}',
    ]
    replies, stderr = _exchange(tmp_path, lines, {4})

    refused = [r["error"] for r in replies if r.get("id") is None]
    assert [e["code"] for e in refused] == [-32600] * 5
    assert sum("longer than" in e["message"] for e in refused) == 1
    by_id = {r["id"]: r for r in replies if r.get("id") is not None}
    assert by_id[2]["error"]["code"] == -32602
    assert "not initialized; send initialize first" in by_id[2]["error"]["message"]
    assert "result" in by_id[3]
    assert len(by_id[4]["result"]["tools"]) == len(CORE_TOOLS)
    assert stderr.count("rejected input") == 5
    assert "Traceback" not in stderr


_METHODS = (
    "tools/call",
    "tools/list",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "resources/subscribe",
    "prompts/get",
    "prompts/list",
    "completion/complete",
    "logging/setLevel",
    "ping",
    "no/such/method",
)
_VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
_PARAMS = _VALUE | st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["store_put", "tool_search", "nope"]) | st.text(max_size=10),
        "arguments": _VALUE,
        "uri": st.sampled_from(["prixfixe://store/reminder/1", "prixfixe://x"]) | st.text(),
        "level": st.sampled_from(["debug", "loud"]),
        "ref": _VALUE,
        "argument": _VALUE,
    },
)


@pytest.mark.slow
@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    # Each example is a server process: shrinking would take minutes; the failing lines print.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(
    st.lists(
        st.tuples(st.sampled_from(_METHODS), _PARAMS)
        | st.text(max_size=60).filter(lambda t: "\n" not in t and "\r" not in t)
        | _VALUE,
        min_size=10,
        max_size=40,
    )
)
def test_fuzzed_json_rpc_over_stdio_is_answered_without_internal_errors_or_tracebacks(
    messages: list[Any],
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        lines = [
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "fuzz", "version": "1"},
                    },
                }
            ),
            '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        ]
        expected: set[int] = set()
        for number, message in enumerate(messages, start=1):
            if isinstance(message, tuple):
                method, params = message
                lines.append(
                    json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
                )
                expected.add(number)
            elif isinstance(message, str):
                lines.append(message)
            else:
                lines.append(json.dumps(message))
        lines.append('{"jsonrpc":"2.0","id":999999,"method":"tools/list"}')
        replies, stderr = _exchange(home, lines, expected | {999999}, seconds=60)
    answered = {r["id"]: r for r in replies if "id" in r and ("result" in r or "error" in r)}
    assert 999999 in answered, "the server kept serving to the last request"
    assert expected <= set(answered), "every request with an id got an answer"
    internal = [r for r in answered.values() if r.get("error", {}).get("code") == -32603]
    assert internal == []
    assert "Traceback" not in stderr


def test_early_requests_are_forgotten_once_answered_whatever_the_answer() -> None:
    from mcp.shared.message import SessionMessage

    from prixfixe.mcp.stdio import _EarlyRequests

    early = _EarlyRequests()
    for number in range(1000):  # a client that never initializes, answered every time
        early.saw(types.JSONRPCRequest(jsonrpc="2.0", id=number, method="ping"))
        answer = types.JSONRPCResponse(jsonrpc="2.0", id=number, result={})
        assert early.explain(SessionMessage(answer)).message is answer
    refused = types.JSONRPCError(
        jsonrpc="2.0",
        id=5000,
        error=types.ErrorData(code=-32602, message="Invalid request parameters"),
    )
    early.saw(types.JSONRPCRequest(jsonrpc="2.0", id=5000, method="tools/list"))
    explained = early.explain(SessionMessage(refused)).message
    assert isinstance(explained, types.JSONRPCError)
    assert "not initialized" in explained.error.message
    assert early._early == set()
