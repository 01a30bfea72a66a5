"""Words for messages people read: counted nouns (`1 repository`, `2 repositories`,
`0 templates`) and text cut short at a word (`shorten`)."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """`count` and `word`, the noun in the plural unless there is exactly one: `many` when the
    plural is not `word` + "s" (`repository` → `repositories`)."""
    return f"{count:,} {word}" if count == 1 else f"{count:,} {many or word + 's'}"


def shorten(text: str, width: int) -> str:
    """`text` in at most `width` characters: whole when it fits, else cut at the last space
    that leaves room (mid-word only when one word fills the width) and ended with "…"."""
    if len(text) <= width:
        return text
    room = text[: width - 1]
    mid_word = not room[-1:].isspace() and not text[width - 1].isspace()
    if mid_word and len(room.split()) > 1:
        room = room.rsplit(None, 1)[0]
    return room.rstrip(" ,;:-") + "…"
