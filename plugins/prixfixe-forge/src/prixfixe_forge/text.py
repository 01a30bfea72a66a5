"""Markdown from untrusted text: titles, names and URLs a forge or a page sent.

What a server sends is shown on one line that cannot open a block (a heading, list, quote or
fence) or a link of its own, and a link target is shown only when it is a plain http(s) URL.
"""

from __future__ import annotations

import datetime as dt
import re

#: A line start that could open a block: a heading, quote, list, rule, fence or table.
_BLOCK_START = re.compile(r"[#>|~=]|[-+](?:\s|$)")
_ORDERED = re.compile(r"\d{1,9}(?=[.)](?:\s|$))")
_PLAIN_URL = re.compile(r"https?://[^\s<>()\[\]\\`\"']+", re.ASCII)


def one_line(text: str, limit: int = 200) -> str:
    """`text` as inline markdown on one line, at most `limit` characters: whitespace collapsed,
    brackets, backslashes, `<`, `*` and `_` escaped, and a block-opening start escaped."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    flat = re.sub(r"([\[\]\\<*_`])", r"\\\1", flat)
    if ordered := _ORDERED.match(flat):
        return flat[: ordered.end()] + "\\" + flat[ordered.end() :]
    return "\\" + flat if _BLOCK_START.match(flat) else flat


def link(text: str, url: str) -> str:
    """A markdown link to `url` labelled `text`, or the label alone when `url` is not a plain
    http(s) URL (a `javascript:` target, spaces, brackets or quotes)."""
    label = one_line(text)
    return f"[{label}]({url})" if _PLAIN_URL.fullmatch(url) else label


def hours(value: float) -> str:
    """A waiting time for people: `40 min`, `5 h`, `3 d`."""
    if value < 1:
        return f"{max(0, round(value * 60))} min"
    if value < 48:
        return f"{round(value)} h"
    return f"{round(value / 24)} d"


def when(value: dt.datetime) -> str:
    """A moment for people, in UTC to the minute."""
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"
