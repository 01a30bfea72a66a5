"""`prixfixe serve --http` as a real subprocess on a free loopback port."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.readiness import Deadline

ROOT = Path(__file__).resolve().parents[3]
READY = "prixfixe: serving MCP on "


@dataclass
class Served:
    """A running `prixfixe serve --http` process and what it printed on stderr."""

    process: subprocess.Popen[str]
    url: str
    lines: list[str] = field(default_factory=list)
    _queue: queue.Queue[str | None] = field(default_factory=queue.Queue)
    #: The pump reached the end of its stderr (it queues None there).
    _eof: bool = False

    @property
    def base(self) -> str:
        return self.url.rsplit("/", 1)[0]

    def stderr(self, since: int = 0) -> str:
        """What it printed, from line `since` on (a `mark()`): a shared server's output
        since a test began."""
        self._drain()
        return "\n".join(self.lines[since:])

    def mark(self) -> int:
        self._drain()
        return len(self.lines)

    def stderr_with(self, text: str, since: int = 0, seconds: float = 30) -> str:
        """`stderr(since)` once a line containing `text` is among it: a line the server has
        written may not have been read from its pipe yet (a loaded machine), so it is waited
        for (bounded; then what there is, for the test's own assertion to report)."""
        end = time.monotonic() + seconds
        self._drain()
        while not any(text in line for line in self.lines[since:]):
            left = end - time.monotonic()
            if left <= 0 or self._eof:
                break
            self._next_line(min(left, 0.1))
        return "\n".join(self.lines[since:])

    def _drain(self) -> None:
        while True:
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                return
            self._take(line)

    def _take(self, line: str | None) -> None:
        if line is None:
            self._eof = True
        else:
            self.lines.append(line)

    async def wait_for_line(self, text: str, seconds: float = 30) -> str:
        """The first stderr line containing `text`, waiting for it (bounded) if need be."""
        self._drain()
        found = next((line for line in self.lines if text in line), None)
        with anyio.fail_after(seconds):
            while found is None:
                # Block in a worker thread, so the event loop keeps serving the test's own
                # calls, and wake every 0.1 s so the bound above can end the wait.
                line = await anyio.to_thread.run_sync(self._next_line, 0.1)
                if line is not None and text in line:
                    found = line
                elif line is None and self.process.poll() is not None:
                    self._drain()
                    raise AssertionError(f"server exited before printing {text!r}: {self.lines}")
        return found

    def _next_line(self, timeout: float) -> str | None:
        try:
            line = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        self._take(line)
        return line

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=timeout)
        # What it wrote before exiting may still be in its pipe: read it to the end (the pump
        # thread queues None there), bounded (a child still holding the pipe delays its end).
        end = time.monotonic() + min(timeout, 5.0)
        while not self._eof and time.monotonic() < end:
            self._next_line(end - time.monotonic())
        return code


#: Raw-request pieces the HTTP tests share: the headers a streamable-HTTP POST carries, an
#: `initialize` on the handshake revision, and the flag that loads the test plugin.
JSON_SSE = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
PLUGIN = ("--plugin", "tests.mcp.http.plugin")


def server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    env["PRIXFIXE_HOME"] = str(tmp_path / "home")
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    env["PRIXFIXE_TRUSTED_PATHS"] = str(tmp_path)  # the test's own ./prixfixe.toml loads
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def start(
    tmp_path: Path, *args: str, config: str | None = None, **env: str
) -> subprocess.Popen[str]:
    if config is not None:
        (tmp_path / "prixfixe.toml").write_text(config, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, "-m", "prixfixe", "serve", "--http", "--port", "0", *args],
        cwd=tmp_path,
        env=server_env(tmp_path, **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_ready(
    process: subprocess.Popen[str], ready: str = READY, deadline: Deadline | None = None
) -> Served:
    """Read stderr until the ready line, the one starting with `ready`; the URL is on it
    (`prixfixe web`'s names the page's). Bounded by `deadline` (`tests.readiness`: a floor,
    then a bound measured against this machine's speed at the time), not a fixed guess."""
    deadline = deadline or Deadline()
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    while True:
        try:
            line = lines.get(timeout=deadline.left())
        except queue.Empty:
            if process.poll() is None and deadline.extend():
                continue
            process.kill()
            raise AssertionError(f"server not ready {deadline.describe()}: {seen}") from None
        if line is None:
            raise AssertionError(f"server exited ({process.wait()}): {seen}")
        seen.append(line)
        if line.startswith(ready):
            url = line[len(ready) :].split(" ", 1)[0]
            return Served(process, url, seen, lines)


ServeFactory = Callable[..., Served]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServeFactory]:
    started: list[Served] = []

    def factory(*args: str, config: str | None = None, **env: str) -> Served:
        served = wait_ready(start(tmp_path, *args, config=config, **env))
        started.append(served)
        return served

    yield factory
    for served in started:
        if served.process.poll() is None:
            served.process.kill()
            served.process.wait(timeout=10)


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One `prixfixe serve --http` with the defaults, for the tests of a module that only
    read from it (each server costs about a second of CPU to start, two under coverage);
    stopped with SIGTERM at the end, so it exits cleanly."""
    served = wait_ready(start(tmp_path_factory.mktemp("served")))
    yield served
    assert served.stop() == 0


@pytest.fixture(scope="module")
def shared_stateless_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """As `shared_server`, started with `--stateless`."""
    served = wait_ready(start(tmp_path_factory.mktemp("served"), "--stateless"))
    yield served
    assert served.stop() == 0


@asynccontextmanager
async def connect(
    url: str, mode: str = "legacy", headers: dict[str, str] | None = None, **options: Any
) -> AsyncIterator[Client]:
    """An `mcp.Client` over streamable HTTP, with extra headers (a token) and `Client`
    options (an elicitation callback) when given."""
    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=httpx2.Timeout(30)) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, **options) as client,
    ):
        yield client


async def wait_exit(process: subprocess.Popen[str], seconds: float = 30) -> int:
    with anyio.fail_after(seconds):
        return await anyio.to_thread.run_sync(process.wait)
