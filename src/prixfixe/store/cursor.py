"""Opaque, signed keyset cursors.

A cursor is `base64url(payload) "." base64url(mac)`, where the payload holds the kind, the
query's fingerprint, and the sort value and id of the last record returned (a sort value that
is text SQLite holds but not UTF-8, from a damaged body, as its bytes in hex), and the MAC is an
HMAC-SHA256 (truncated to 96 bits) under a secret kept in the store file. A cursor from another
store, an edited one, one for another kind or another filter or order is refused by name. It
holds no offset: the next page is "after this (value, id)", so it stays valid while records
are added.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any

from prixfixe.errors import InvalidCursorError
from prixfixe.store.query import QuerySpec

MAX_CURSOR_CHARS = 2048


def encode_cursor(secret: bytes, spec: QuerySpec, last_value: Any, last_id: int) -> str:
    data: dict[str, Any] = {"k": spec.kind, "q": spec.fingerprint(), "v": last_value, "i": last_id}
    if isinstance(last_value, bytes):
        # Text that is not UTF-8 (a damaged record's sort value): its bytes, in hex.
        data["v"], data["t"] = None, last_value.hex()
    payload = json.dumps(
        data,
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode()
    return f"{_b64(payload)}.{_b64(_mac(secret, payload))}"


def decode_cursor(secret: bytes, spec: QuerySpec, cursor: str) -> tuple[Any, int]:
    """The (last value, last id) a cursor continues after; raise naming why it is refused."""
    if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_CHARS or cursor.count(".") != 1:
        raise InvalidCursorError(spec.kind, "malformed cursor (pass next_cursor unchanged)")
    body, mac = cursor.split(".")
    try:
        payload, given = _unb64(body), _unb64(mac)
    except (binascii.Error, ValueError):
        raise InvalidCursorError(
            spec.kind, "malformed cursor (pass next_cursor unchanged)"
        ) from None
    if not hmac.compare_digest(given, _mac(secret, payload)):
        raise InvalidCursorError(
            spec.kind, "this cursor was not issued by this store (or it was altered)"
        )
    try:
        data = json.loads(payload)
    except ValueError:  # a signed payload is always JSON; this is defence in depth
        raise InvalidCursorError(spec.kind, "malformed cursor") from None
    if not isinstance(data, dict) or not {"k", "q", "v", "i"} <= data.keys():
        raise InvalidCursorError(spec.kind, "malformed cursor (pass next_cursor unchanged)")
    if data["k"] != spec.kind:
        raise InvalidCursorError(spec.kind, f"the cursor is for kind {data['k']!r}")
    if data["q"] != spec.fingerprint():
        raise InvalidCursorError(
            spec.kind,
            "the cursor belongs to a different query (where, order_by or include_closed changed)",
        )
    last_id = data["i"]
    if not isinstance(last_id, int) or isinstance(last_id, bool):
        raise InvalidCursorError(spec.kind, "malformed cursor (pass next_cursor unchanged)")
    if "t" in data:
        try:
            return bytes.fromhex(data["t"]), last_id
        except (TypeError, ValueError):  # signed, so never; defence in depth
            raise InvalidCursorError(spec.kind, "malformed cursor") from None
    return data["v"], last_id


def _mac(secret: bytes, payload: bytes) -> bytes:
    return hmac.new(secret, payload, hashlib.sha256).digest()[:12]


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
