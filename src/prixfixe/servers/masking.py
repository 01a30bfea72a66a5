"""Every message a mounted server sends is masked where it enters prixfixe, before anything
parses, keeps, indexes or passes on any of it.

CONTRACT: `Upstream` reads a server only through `masked(read_stream)`, so each JSON-RPC
message the server sends (a response's result, an error's message and data, a
notification's or request's params: tool, resource, template and prompt lists, contents,
prompt messages, completions, `_meta`, log messages, progress, server info and instructions,
requests to the client) has passed `mask_json` before the client session sees it. The lists
kept on disk (`catalogue.py`) are masked again when written and when read.

`mask_json` walks the whole JSON structure: every string (object keys too, so a `_meta` key or
a schema's property name) is masked with `REDACTOR.redact`, which knows every resolved
credential (a server's own are resolved before it starts) in its plain and encoded forms.
Binary data is never masked in place, which would leave a corrupt half: a blob
(`{"blob": ...}`), an image's or audio's `data`, or a `data:` URI whose bytes hold a value
(`REDACTOR.holds_base64`) is replaced whole by a text saying it was withheld; binary data
that holds none passes unchanged. A `resource_link`'s URI is a string like any other.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

import mcp_types as types
from mcp.shared._stream_protocols import ReadStream
from mcp.shared.message import SessionMessage

from prixfixe.leash.redact import REDACTOR

#: What replaces binary data that holds a credential value.
WITHHELD = "[withheld by prixfixe: this {kind} held a credential value]"
#: What replaces a `data:` URI whose payload holds one.
WITHHELD_URI = "data:text/plain,withheld%20by%20prixfixe"

_BINARY_KINDS = ("image", "audio")


def mask_json(data: Any) -> Any:
    """`data` (JSON-like: dicts, lists, strings, numbers) with every registered credential
    value masked, binary data holding one replaced whole (see the module). Containers are
    copied, never changed; nothing is copied while no value is registered."""
    if not REDACTOR.active:
        return data
    return _walk(data)


def _walk(data: Any) -> Any:
    if isinstance(data, str):
        return _string(data)
    if isinstance(data, dict):
        return _object(data)
    if isinstance(data, list | tuple):
        return [_walk(item) for item in data]
    return data


def _string(text: str) -> str:
    if text.startswith("data:"):
        head, sep, payload = text.partition(",")
        if sep and head.endswith(";base64") and REDACTOR.holds_base64(payload):
            return WITHHELD_URI
    return REDACTOR.redact(text)


def _object(data: dict[Any, Any]) -> dict[Any, Any]:
    blob = data.get("blob")
    if isinstance(blob, str):  # resource contents: the rest masked, the bytes whole or gone
        rest = {k: v for k, v in data.items() if k != "blob"}
        if REDACTOR.holds_base64(blob):
            rest |= {"mimeType": "text/plain", "text": WITHHELD.format(kind="blob")}
            return _plain(rest)
        return _plain(rest) | {"blob": blob}
    kind, payload = data.get("type"), data.get("data")
    if kind in _BINARY_KINDS and isinstance(payload, str):  # image or audio content
        rest = {k: v for k, v in data.items() if k != "data"}
        if REDACTOR.holds_base64(payload):
            rest.pop("mimeType", None)
            rest |= {"type": "text", "text": WITHHELD.format(kind=kind)}
            return _plain(rest)
        return _plain(rest) | {"data": payload}
    return _plain(data)


def _plain(data: dict[Any, Any]) -> dict[Any, Any]:
    return {_walk(k): _walk(v) for k, v in data.items()}


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
