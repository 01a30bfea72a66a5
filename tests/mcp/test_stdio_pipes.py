"""`prixfixe serve` reads and writes pipes on the event loop (`_Pipe`) when both its stdin and
stdout are pipes, and otherwise (a file, a terminal) uses the SDK's threaded files; both answer
the same, and a message larger than the pipe holds is written whole while the reader is slow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from prixfixe.mcp.stdio import _Pipe

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "pipes", "version": "0"},
    },
}
MESSAGES = [
    INITIALIZE,
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "tool_describe", "arguments": {"name": "tool_search"}}},
]  # fmt: skip


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    return env | {"XDG_CONFIG_HOME": str(folder / "xdg"), "PRIXFIXE_HOME": str(folder / "home")}


@pytest.mark.slow
def test_a_server_whose_stdout_is_a_file_answers_through_the_sdks_threads(tmp_path: Path) -> None:
    answers = tmp_path / "out.jsonl"
    with answers.open("wb") as stdout:
        proc = subprocess.Popen(
            [sys.executable, "-m", "prixfixe", "serve"],
            stdin=subprocess.PIPE,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=_env(tmp_path),
            cwd=tmp_path,
        )
        assert proc.stdin is not None
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in MESSAGES).encode())
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while answers.read_text().count("\n") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.stdin.close()  # only once both are answered: the end of input ends the server
        assert proc.stderr is not None
        stderr = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0, stderr
    replies = {r["id"]: r for r in map(json.loads, answers.read_text().splitlines())}
    assert replies[1]["result"]["serverInfo"]["name"] == "prixfixe"
    assert "tool_search" in replies[2]["result"]["content"][0]["text"]


@pytest.mark.anyio
async def test_a_pipe_message_larger_than_the_pipe_is_written_whole_to_a_slow_reader() -> None:
    read_fd, write_fd = os.pipe()
    assert _Pipe.usable(read_fd)
    assert _Pipe.usable(write_fd)
    reader, writer = _Pipe(read_fd), _Pipe(write_fd)
    message = b"x" * (1 << 20)  # far over a pipe's 64 KiB: the writer must wait for room
    received = bytearray()

    async def read_slowly() -> None:
        await anyio.sleep(0.05)  # the writer fills the pipe first
        while len(received) < len(message) + 1:
            received.extend(await reader.read(1 << 16))

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_slowly)
            await writer.write(message.decode() + "\n")
            await writer.flush()
    finally:
        reader.restore()
        writer.restore()
        os.close(read_fd)
        os.close(write_fd)
    assert bytes(received) == message + b"\n"


@pytest.mark.anyio
async def test_a_pipe_read_waits_for_what_is_written_later() -> None:
    read_fd, write_fd = os.pipe()
    reader = _Pipe(read_fd)
    got: list[bytes] = []

    async def read() -> None:
        got.append(await reader.read(100))  # nothing there yet: waits, the loop runs on

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            await anyio.sleep(0.05)
            assert got == []
            os.write(write_fd, b"later\n")
    finally:
        reader.restore()
        os.close(read_fd)
        os.close(write_fd)
    assert got == [b"later\n"]


def test_a_file_is_not_a_pipe(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"")
    with path.open("rb") as file:
        assert not _Pipe.usable(file.fileno())


def test_a_pipes_blocking_flag_is_put_back() -> None:
    read_fd, write_fd = os.pipe()
    try:
        pipe = _Pipe(read_fd)
        assert not os.get_blocking(read_fd)
        pipe.restore()
        assert os.get_blocking(read_fd)
    finally:
        os.close(read_fd)
        os.close(write_fd)
