"""stdio transport with answers for malformed input.

The SDK's stdio reader drops a line it cannot parse (it logs at debug level), so a client that
sends a broken message waits forever. JSON-RPC 2.0 says such a line gets an error response
with `id: null` (or the request's id when it can be read): -32700 for text that is not JSON,
-32600 for JSON that is not a valid message. This filter sits between the transport and the
server, answers those, logs one line on stderr, and passes everything else through untouched.
"""

from __future__ import annotations

import logging
import sys
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


async def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        inbound_send, inbound_receive = anyio.create_memory_object_stream[
            SessionMessage | Exception
        ](0)

        async def screen() -> None:
            async with inbound_send, read_stream:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        reply = malformed_response(item)
                        print(f"prixfixe: rejected input: {reply.error.message}", file=sys.stderr)
                        await write_stream.send(SessionMessage(reply))
                        continue
                    await inbound_send.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(screen)
            await server.run(inbound_receive, write_stream, server.create_initialization_options())
            tg.cancel_scope.cancel()


async def serve_app(app: App) -> None:
    """Serve `app` over stdin and stdout until the client closes them."""
    from prixfixe.mcp.server import build_server

    await serve_stdio(build_server(app))
