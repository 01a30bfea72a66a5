"""The stdio transport to a mounted server's process: the process (started by the exec gate)
as the read and write streams a `ClientSession` runs on.

Unlike the SDK's `stdio_client`, it does not start the process (the exec gate does, with the
server's minimal environment), it bounds what it reads, and it says why the connection ended:

- stdout carries one JSON-RPC message a line, each at most `MAX_MESSAGE_BYTES`. A longer one
  ends the connection (a message that size is a fault, and reading it would cost unbounded
  memory); a line that is not JSON-RPC is logged and skipped, as a stray `print` would be.
- stderr goes to prixfixe's log, line by line, each line cut at `MAX_LOG_LINE`, at most
  `LOG_LINES_PER_SECOND` a second (the rest counted, not logged); the last few lines are
  kept for the message when the process dies. It is never written to prixfixe's stdout.
- when stdout ends, the process's exit status (and its last stderr line) becomes `ended`,
  which the connection's errors quote.

Closing stops the process: stdin closed, a short grace, then its whole process group killed.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from prixfixe.leash.exec import kill_group

log = logging.getLogger("prixfixe.servers")

#: The largest message read from a server (the HTTP body limit's default).
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
#: Each stderr line is cut at this many characters in the log.
MAX_LOG_LINE = 1000
#: A server's stderr lines logged per second; the rest are counted and dropped.
LOG_LINES_PER_SECOND = 50
#: How long a server has to exit once its stdin is closed, before it is killed.
EXIT_GRACE = 2.0
#: How long a closed stdin waits for the server's exit status, to say it exited.
STDIN_EXIT_GRACE = 0.5
#: Stray (non JSON-RPC) stdout lines shown in the log, per connection.
MAX_STRAY_LOGGED = 20


@dataclass
class Ending:
    """Why a connection ended, once it has: what errors about it say."""

    server: str
    reason: str | None = None
    stderr_tail: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=3))
    ended: anyio.Event = field(default_factory=anyio.Event)

    def end(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        self.ended.set()

    def describe(self) -> str:
        reason = self.reason or "closed the connection"
        if not self.stderr_tail:
            return reason
        # The last few lines, not the last one only: npm and uv end on a generic hint, and
        # the cause (a certificate, a proxy, a missing package) is a line or two above it.
        lines = " | ".join(repr(line) for line in self.stderr_tail)
        return f"{reason} (its last error output: {lines})"


class _StderrLog:
    """One server's stderr lines into the log, rate-bounded."""

    def __init__(self, ending: Ending) -> None:
        self.ending = ending
        self.window = 0.0
        self.count = 0
        self.dropped = 0

    def line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        if not text.strip():
            return
        text = text if len(text) <= MAX_LOG_LINE else text[:MAX_LOG_LINE] + "..."
        self.ending.stderr_tail.append(text)
        now = time.monotonic()
        if now - self.window >= 1.0:
            if self.dropped:
                log.warning("[%s] %d stderr lines not logged", self.ending.server, self.dropped)
            self.window, self.count, self.dropped = now, 0, 0
        self.count += 1
        if self.count > LOG_LINES_PER_SECOND:
            self.dropped += 1
            return
        log.info("[%s] %s", self.ending.server, text)


async def _lines(
    stream: anyio.abc.ByteReceiveStream, limit: int, *, cut: bool
) -> AsyncIterator[bytes]:
    """`stream`'s lines, each at most `limit` bytes: a longer one is cut there and the rest
    of it skipped (`cut`), or raises `OverflowError`."""
    buffer = bytearray()
    skipping = False
    with contextlib.suppress(
        anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError
    ):
        async for chunk in stream:
            buffer += chunk
            while True:
                end = buffer.find(b"\n")
                if end < 0:
                    break
                line = bytes(buffer[:end])
                del buffer[: end + 1]
                if skipping:
                    skipping = False
                    continue
                yield line
            if len(buffer) > limit:
                if not cut:
                    raise OverflowError(len(buffer))
                if not skipping:
                    yield bytes(buffer[:limit])
                skipping = True
                buffer.clear()
    if buffer and not skipping:
        yield bytes(buffer)


@asynccontextmanager
async def process_transport(
    process: anyio.abc.Process, ending: Ending
) -> AsyncIterator[TransportStreams]:
    """The read and write streams of a `ClientSession` over `process`'s stdin and stdout."""
    stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
    if stdin is None or stdout is None or stderr is None:
        raise ValueError("the server's process needs its stdin, stdout and stderr piped")
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    server = ending.server

    async def read_stdout() -> None:
        stray = 0
        reason: str | None = None
        try:
            async for line in _lines(stdout, MAX_MESSAGE_BYTES, cut=False):
                if not line.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except ValueError:
                    stray += 1
                    if stray <= MAX_STRAY_LOGGED:
                        shown = line[:200].decode("utf-8", "replace")
                        log.warning(
                            "[%s] ignored a stdout line that is not JSON-RPC: %r", server, shown
                        )
                    continue
                await to_session.send(SessionMessage(message))
        except OverflowError:
            reason = f"sent a message over {MAX_MESSAGE_BYTES:,} bytes (the limit)"
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the session closed first
        if reason is None:
            status = await exit_status(process)
            reason = "closed its stdout" if status is None else f"exited with status {status}"
        # Said before the session sees the end, so the error of a call in flight quotes it.
        ending.end(reason)
        await to_session.aclose()

    async def read_stderr() -> None:
        sink = _StderrLog(ending)
        async for line in _lines(stderr, MAX_LOG_LINE * 4, cut=True):
            sink.line(line)

    async def write_stdin() -> None:
        try:
            async with from_session:
                async for item in from_session:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send(data.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # A server that exited is said to have exited, whichever pipe noticed first.
            status = await exit_status(process, STDIN_EXIT_GRACE)
            ending.end(
                "stopped reading its stdin" if status is None else f"exited with status {status}"
            )

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stdout)
        tg.start_soon(read_stderr)
        tg.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await stop(process)
                ending.end("was stopped")
                for stream in (read_stream, write_stream):
                    await stream.aclose()
            tg.cancel_scope.cancel()


async def exit_status(process: anyio.abc.Process, grace: float = EXIT_GRACE) -> int | None:
    """The process's exit status once it has exited, waiting at most `grace` seconds.

    Polled, not `process.wait()`: on asyncio that also waits for its pipes to close, which a
    child it started may hold open long after it exited."""
    with anyio.move_on_after(grace):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode


async def stop(process: anyio.abc.Process) -> None:
    """Close its stdin, give it `EXIT_GRACE` to exit, then kill its process group."""
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        if process.stdin is not None:
            await process.stdin.aclose()
    await exit_status(process)
    kill_group(process)  # also whatever it started, which may outlive it
    await exit_status(process)
    with contextlib.suppress(OSError):
        await process.aclose()
