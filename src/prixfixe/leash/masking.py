"""Credential values masked structurally in JSON-like data: every string, keys too, and
binary data replaced whole when its bytes hold a value.

CONTRACT: `mask_json(data)` returns `data` (dicts, lists, strings, numbers) with every value
`REDACTOR` knows masked in its plain and encoded forms. Binary data is never masked in place,
which would leave a corrupt half: a blob (`{"blob": ...}`), an image's or audio's `data`, or a
`data:` URI whose bytes hold a value (`REDACTOR.holds_base64`) is replaced whole by a text
saying it was withheld; binary data that holds none passes unchanged. Used where a mounted
server's messages enter (`servers/masking.py`) and where prixfixe's own tool results leave
(`tools/results.redact_result`).
"""

from __future__ import annotations

from typing import Any

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


