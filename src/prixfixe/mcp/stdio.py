"""stdio transport with answers for malformed input.

The SDK's stdio reader drops a line it cannot parse (it logs at debug level), so a client that
sends a broken message waits forever. JSON-RPC 2.0 says such a line gets an error response
with `id: null` (or the request's id when it can be read): -32700 for text that is not JSON,
-32600 for JSON that is not a valid message. This filter sits between the transport and the
server, answers those, logs one line on stderr, and passes everything else through untouched.

It also reads stdin itself, in bounded pieces: a line longer than `MAX_LINE_BYTES` is refused
as it streams in, and a request whose id the SDK would misread as a notification is answered.

When stdin and stdout are pipes or sockets (what an MCP client gives its server), both are read
and written on the event loop (`_Pipe`: non-blocking, waiting for readiness), not in a worker
thread per read, per write and per flush as the SDK's files are: those three thread hops were
most of what a request cost the server. Anything else (a terminal, a file) keeps the SDK's
threads, and the descriptors' flags are put back as they were when serving ends.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

if TYPE_CHECKING:
    from prixfixe.app import App

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
#: What the SDK answers a request that comes before `initialize`.
_SDK_EARLY = "Invalid request parameters"


def malformed_response(exc: Exception) -> types.JSONRPCError:
    """The JSON-RPC error answering an inbound item the transport could not decode."""
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        if errors and errors[0]["type"] == "json_invalid":
            detail = errors[0].get("ctx", {}).get("error", "")
            message = f"Parse error: the message is not valid JSON ({detail})".replace(" ()", "")
            return _error(None, PARSE_ERROR, message)
        request_id = _request_id(errors)
        problems = sorted(
            {_problem(e) for e in errors if e["loc"] and e["loc"][0] == "JSONRPCRequest"}
        )
        if not problems:
            problems = ["expected a JSON-RPC 2.0 request, notification or response object"]
        message = "Invalid Request: " + "; ".join(problems)
        return _error(request_id, INVALID_REQUEST, message)
    return _error(None, INVALID_REQUEST, f"Invalid Request: {type(exc).__name__}: {exc}")


def _problem(error: Any) -> str:
    field = ".".join(str(p) for p in error["loc"][1:]) or "(message)"
    return f"{field}: {error['msg'].lower()}"


def _request_id(errors: list[Any]) -> types.RequestId | None:
    for error in errors:
        candidate = error.get("input")
        if isinstance(candidate, dict):
            value = candidate.get("id")
            if isinstance(value, str | int) and not isinstance(value, bool):
                return value
    return None


def _error(request_id: types.RequestId | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


#: The longest line (one JSON-RPC message) the server reads: the HTTP transport's default body
#: limit. A longer line is refused with -32600 and skipped up to its newline, never held whole.
MAX_LINE_BYTES = 4 * 1024 * 1024
_CHUNK = 64 * 1024


def screen_line(line: bytes) -> types.JSONRPCError | None:
    """The error answering a line the SDK would misread, or None to pass it on.

    The SDK reads a request whose `id` is not a string or an integer (a float, a boolean, null,
    an object) as a notification and never answers it, so its client waits forever; MCP
    requires a string or integer id, so such a request gets -32600 here."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None  # the SDK's own parse answers -32700 (see malformed_response)
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None
    request_id = message["id"]
    if isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    ):
        return None
    kind = "null" if request_id is None else type(request_id).__name__
    kind = {"dict": "object", "list": "array", "bool": "boolean", "float": "number"}.get(kind, kind)
    return _error(
        None,
        INVALID_REQUEST,
        f"Invalid Request: id must be a string or an integer, not {kind}",
    )


async def bounded_lines(read: Any, refuse: Any, limit: int = MAX_LINE_BYTES) -> AsyncIterator[str]:
    """Lines of UTF-8 text from `read` (an async `read(n) -> bytes`), each at most `limit`
    bytes. An over-long line is dropped as it streams in (memory stays bounded) and
    `await refuse(error)` answers it; a line `screen_line` refuses is answered the same way."""
    buffer = bytearray()
    skipping = False
    while True:
        chunk = await read(_CHUNK)
        if not chunk:
            if buffer and not skipping:
                yield buffer.decode("utf-8", errors="replace")
            return
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            piece = chunk[start:] if newline < 0 else chunk[start:newline]
            if not skipping:
                buffer += piece
                if len(buffer) > limit:
                    buffer.clear()
                    skipping = True
                    await refuse(
                        _error(
                            None,
                            INVALID_REQUEST,
                            f"Invalid Request: the message is longer than {limit} bytes",
                        )
                    )
            if newline < 0:
                break
            if skipping:
                skipping = False
            elif buffer.strip():
                line = bytes(buffer)
                buffer.clear()
                refused = screen_line(line)
                if refused is not None:
                    await refuse(refused)
                else:
                    yield line.decode("utf-8", errors="replace")
            else:
                buffer.clear()
            start = newline + 1


class _BoundedStdin:
    """What the SDK's `stdio_server` reads: an async iterator of lines, bounded and screened."""

    def __init__(self, binary: Any, refuse: Any, pipe: _Pipe | None = None) -> None:
        self._read = pipe.read if pipe is not None else anyio.wrap_file(binary).read
        self._refuse = refuse

    def __aiter__(self) -> AsyncIterator[str]:
        return bounded_lines(self._read, self._refuse)


class _Pipe:
    """A pipe or socket descriptor read and written on the event loop: non-blocking, waiting
    for readiness when it has nothing to give or no room to take (see the module)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._flags = os.get_blocking(fd)
        os.set_blocking(fd, False)
        self._pending = bytearray()

    @staticmethod
    def usable(fd: int) -> bool:
        if os.name != "posix":  # pragma: no cover - the selector loop's readiness is POSIX's
            return False
        try:
            mode = os.fstat(fd).st_mode
        except OSError:  # pragma: no cover - a closed descriptor: the SDK's files say so
            return False
        return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)

    def restore(self) -> None:
        with contextlib.suppress(OSError):
            os.set_blocking(self.fd, self._flags)

    async def read(self, size: int) -> bytes:
        while True:
            try:
                return os.read(self.fd, size)
            except BlockingIOError:
                await anyio.wait_readable(self.fd)

    # The SDK's `stdout` (`anyio.AsyncFile[str]`'s write and flush): a message is written
    # whole at its flush.
    async def write(self, text: str) -> None:
        self._pending += text.encode()

    async def flush(self) -> None:
        data, self._pending = self._pending, bytearray()
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.fd, view) :]
            except BlockingIOError:
                await anyio.wait_writable(self.fd)


@contextmanager
def _pipes(stdin_file: Any) -> Iterator[tuple[_Pipe | None, _Pipe | None]]:
    """The wire's stdin and stdout as `_Pipe`s where both are pipes or sockets, else (None,
    None): the SDK's threaded files. fd 1 writes to stderr meanwhile (what the SDK does with
    the stdout it claims), so a stray print never reaches the wire."""
    read_fd = stdin_file.fileno()
    if not (_Pipe.usable(read_fd) and _Pipe.usable(1)):
        yield None, None
        return
    private = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:  # pragma: no cover - no stderr: stray output goes nowhere
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    reader, writer = _Pipe(read_fd), _Pipe(private)
    try:
        yield reader, writer
    finally:
        reader.restore()
        writer.restore()
        os.dup2(private, 1)
        os.close(private)


class _EarlyRequests:
    """Requests sent before `initialize` on the handshake revision: the SDK refuses them with
    a bare "Invalid request parameters"; their answer here says what is missing."""

    def __init__(self) -> None:
        self._initialized = False
        self._early: set[types.RequestId] = set()

    def saw(self, message: Any) -> None:
        if self._initialized or not isinstance(message, types.JSONRPCRequest):
            return
        if message.method == "initialize":
            self._initialized = True
            return
        meta = (message.params or {}).get("_meta") if isinstance(message.params, dict) else None
        if not (isinstance(meta, dict) and any("protocolVersion" in key for key in meta)):
            self._early.add(message.id)  # a stateless request names its revision in _meta

    def explain(self, item: SessionMessage) -> SessionMessage:
        message = item.message
        if not self._early or not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            return item
        if message.id not in self._early:
            return item
        self._early.discard(message.id)  # answered, however: the set never outgrows what waits
        if not isinstance(message, types.JSONRPCError) or (
            message.error.code != INVALID_PARAMS or message.error.message != _SDK_EARLY
        ):
            return item
        error = message.error.model_copy(
            update={
                "message": f"{_SDK_EARLY}: the session is not initialized; send initialize "
                "first (or name the 2026-07-28 revision in each request's _meta)"
            }
        )
        return SessionMessage(message.model_copy(update={"error": error}), item.metadata)


@contextmanager
def _claimed_stdin() -> Iterator[Any]:
    """The wire's stdin as a private binary file; fd 0 reads the null device meanwhile, so a
    handler or child that reads stdin gets end-of-file instead of a client's messages (what
    the SDK does for the stdin it opens itself)."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # closefd=False: a worker thread may still block on it after the transport exits.
        yield os.fdopen(private, "rb", buffering=0, closefd=False)
    finally:
        os.dup2(private, 0)


class _Replies:
    """The server's write stream (the SDK's `WriteStream` protocol) with the early-request
    answers explained on their way out: no extra task or stream on the reply path."""

    def __init__(self, wire: Any, early: _EarlyRequests) -> None:
        self._wire, self._early = wire, early

    async def send(self, item: SessionMessage, /) -> None:
        await self._wire.send(self._early.explain(item))

    async def aclose(self) -> None:
        await self._wire.aclose()

    async def __aenter__(self) -> _Replies:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    wire: Any = None  # the SDK's write stream, once stdio_server has made it

    async def refuse(reply: types.JSONRPCError) -> None:
        print(f"prixfixe: rejected input: {reply.error.message}", file=sys.stderr)
        # Memory streams take several senders; after the server closed the wire, at shutdown,
        # the stderr line is all that is left to say.
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await wire.send(SessionMessage(reply))

    with _claimed_stdin() as stdin_file, _pipes(stdin_file) as (reader, writer):
        stdin = _BoundedStdin(stdin_file, refuse, reader)
        async with stdio_server(stdin=stdin, stdout=writer) as (read_stream, write_stream):  # type: ignore[arg-type]
            wire = write_stream
            inbound_send, inbound_receive = anyio.create_memory_object_stream[
                SessionMessage | Exception
            ](0)
            early = _EarlyRequests()

            async def screen() -> None:
                async with inbound_send, read_stream:
                    async for item in read_stream:
                        if isinstance(item, Exception):
                            await refuse(malformed_response(item))
                            continue
                        early.saw(item.message)
                        await inbound_send.send(item)

            async with anyio.create_task_group() as tg:
                tg.start_soon(screen)
                # run() closes the write stream when it ends, which ends the SDK's writer.
                await server.run(
                    inbound_receive,
                    _Replies(write_stream, early),
                    server.create_initialization_options(),
                )
                tg.cancel_scope.cancel()


async def serve_app(app: App) -> None:
    """Serve `app` over stdin and stdout until the client closes them."""
    from prixfixe.mcp.server import build_server

    await serve_stdio(build_server(app))
