"""Opaque, stable list cursors: a page starts after a key, not at an offset.

A cursor is `base64url(JSON {"l": listing, "a": last key})`. Keys are kept sorted, so the
next page is found with a binary search wherever it is in the list (page 1,000 costs what page
1 costs), and a cursor stays valid while entries are added or removed: the next page is
simply what sorts after the last key the client saw. A cursor that does not decode, or was
issued for the other listing, is refused with -32602.
"""

from __future__ import annotations

import base64
import binascii
import json
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from prixfixe.errors import InvalidListCursorError

#: The longest cursor accepted; real ones are a URI plus a few bytes.
MAX_CURSOR_CHARS = 12_000


@dataclass(frozen=True)
class Window:
    """The slice `[start, stop)` of the sorted keys to return, and the next cursor."""

    start: int
    stop: int
    next_cursor: str | None


def encode_cursor(listing: str, after: str) -> str:
    raw = json.dumps({"l": listing, "a": after}, separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(listing: str, cursor: str) -> str:
    """The key a cursor continues after; `InvalidListCursorError` if it is not one of ours."""
    if len(cursor) > MAX_CURSOR_CHARS:
        raise InvalidListCursorError(listing, "it is too long to be one this server issued")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
    except (binascii.Error, ValueError):
        raise InvalidListCursorError(listing, "it is not a cursor this server issued") from None
    if not (isinstance(data, dict) and isinstance(data.get("a"), str) and "l" in data):
        raise InvalidListCursorError(listing, "it is not a cursor this server issued")
    if data["l"] != listing:
        raise InvalidListCursorError(listing, f"it was issued by {data['l']}")
    return str(data["a"])


def window(listing: str, keys: Sequence[str], cursor: str | None, size: int) -> Window:
    """The page of sorted `keys` that `cursor` asks for (the first page without one)."""
    start = 0 if not cursor else bisect_right(keys, decode_cursor(listing, cursor))
    stop = min(start + size, len(keys))
    more = stop < len(keys)
    return Window(start, stop, encode_cursor(listing, keys[stop - 1]) if more else None)
