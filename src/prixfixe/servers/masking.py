"""Every message a mounted server sends is masked where it enters prixfixe, before anything
parses, keeps, indexes or passes on any of it.

CONTRACT: `Upstream` reads a server only through `masked(read_stream)`, so each JSON-RPC
message the server sends (a response's result, an error's message and data, a
notification's or request's params: tool, resource, template and prompt lists, contents,
prompt messages, completions, `_meta`, log messages, progress, server info and instructions,
requests to the client) has passed `mask_json` before the client session sees it. The lists
kept on disk (`catalogue.py`) are masked again when written and when read.

`mask_json` (`prixfixe.leash.masking`, shared with prixfixe's own results) walks the whole
JSON structure: every string (object keys too, so a `_meta` key or a schema's property name)
is masked with `REDACTOR.redact`, which knows every resolved credential (a server's own are
resolved before it starts) in its plain and encoded forms. Binary data is never masked in
place, which would leave a corrupt half: a blob, an image's or audio's `data`, or a `data:`
URI whose bytes hold a value is replaced whole by a text saying it was withheld; binary data
that holds none passes unchanged. A `resource_link`'s URI is a string like any other.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

import mcp_types as types
from mcp.shared._stream_protocols import ReadStream
from mcp.shared.message import SessionMessage

from prixfixe.leash.masking import WITHHELD, WITHHELD_URI, mask_json
from prixfixe.leash.redact import REDACTOR


def mask_message(item: SessionMessage | Exception) -> SessionMessage | Exception:
    """One message read from a server, masked (a transport's exception passes as it is: it is
    logged, and logging is masked)."""
    if not isinstance(item, SessionMessage) or not REDACTOR.active:
        return item
    message = item.message
    masked: types.JSONRPCMessage
    if isinstance(message, types.JSONRPCResponse):
        masked = message.model_copy(update={"result": mask_json(message.result)})
    elif isinstance(message, types.JSONRPCError):
        error = message.error.model_copy(
            update={
                "message": REDACTOR.redact(message.error.message),
                "data": mask_json(message.error.data),
            }
        )
        masked = message.model_copy(update={"error": error})
    else:  # a notification or a request: its params
        masked = message.model_copy(update={"params": mask_json(message.params)})
    return SessionMessage(masked, item.metadata)


class MaskedReadStream:
    """A server's read stream whose every message has passed `mask_message`."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception]) -> None:
        self._inner = inner

    async def receive(self) -> SessionMessage | Exception:
        return mask_message(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> MaskedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        return mask_message(await self._inner.__anext__())

    async def __aenter__(self) -> MaskedReadStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)

    def __getattr__(self, name: str) -> Any:
        # What a transport adds (`last_context`, read with getattr by the dispatcher).
        return getattr(self._inner, name)


def masked(read: ReadStream[SessionMessage | Exception]) -> MaskedReadStream:
    """`read`, every message masked (see the module)."""
    return MaskedReadStream(read)


__all__ = ["WITHHELD", "WITHHELD_URI", "MaskedReadStream", "mask_json", "mask_message", "masked"]
