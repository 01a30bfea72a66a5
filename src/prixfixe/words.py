"""Counted nouns for messages people read: `1 repository`, `2 repositories`, `0 templates`."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """`count` and `word`, the noun in the plural unless there is exactly one: `many` when the
    plural is not `word` + "s" (`repository` → `repositories`)."""
    return f"{count:,} {word}" if count == 1 else f"{count:,} {many or word + 's'}"
