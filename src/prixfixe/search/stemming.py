"""English Snowball stems, three times faster than the pure-Python stemmer gives them.

The pure-Python stemmer of ``snowballstemmer`` spends most of its time in one generic routine,
``find_among``: a binary search over a table of suffixes, one character compared at a time.
Snowball defines that search as "the longest entry of the table that the word ends with (or
starts with); if that entry's condition fails, the next longest entry that it ends with", so a
dict of each table's entries answers it in a few slices and lookups. Only that search (and the
prelude's scan for a ``y`` that most words do not have) is replaced; the algorithm is
snowballstemmer's own, so its stems are the stems (tests/search/test_stemming.py compares them
word for word).
"""

from __future__ import annotations

from typing import Any

import snowballstemmer
from snowballstemmer.english_stemmer import EnglishStemmer

__all__ = ["english_stemmer"]

#: Per table of entries (keyed by ``id``: the tables are class attributes, alive for good),
#: the entries by the letter a word must end (or start) with to match them, longest first, each
#: with its index; the empty entry, which some tables have, matches every word and comes last.
_Candidates = tuple[tuple[str, int], ...]
_TABLES: dict[int, tuple[dict[str, _Candidates], _Candidates]] = {}


def _table(among: list[Any], at: int) -> tuple[dict[str, _Candidates], _Candidates]:
    """``among``'s entries grouped by their letter at ``at`` (-1: last, 0: first)."""
    empty = tuple((e.s, i) for i, e in enumerate(among) if not e.s)
    grouped: dict[str, list[tuple[str, int]]] = {}
    for i, entry in enumerate(among):
        if entry.s:
            grouped.setdefault(entry.s[at], []).append((entry.s, i))
    return (
        {c: (*sorted(found, key=lambda e: -len(e[0])), *empty) for c, found in grouped.items()},
        empty,
    )


def _tables() -> None:
    for name, among in vars(EnglishStemmer).items():
        if name.startswith("a_") and isinstance(among, list):
            _TABLES[id(among)] = _table(among, -1)
            _TABLES[~id(among)] = _table(among, 0)


class FastEnglishStemmer(EnglishStemmer):  # type: ignore[misc]
    """snowballstemmer's English stemmer with its suffix tables looked up by dict."""

    # The working state the generated code keeps on the instance.
    current: str
    cursor: int
    limit: int
    limit_backward: int
    B_Y_found: bool

    def find_among_b(self, among: list[Any]) -> int:
        by_last, empty = _TABLES[id(among)]
        cursor = self.cursor
        low = self.limit_backward
        current = self.current
        candidates = by_last.get(current[cursor - 1], empty) if cursor > low else empty
        for text, i in candidates:
            if current.endswith(text, low, cursor):
                entry = among[i]
                if entry.method is not None:  # a condition to test: the library's own search
                    return int(super().find_among_b(among))
                self.cursor = cursor - len(text)
                return int(entry.result)
        return 0

    def find_among(self, among: list[Any]) -> int:
        by_first, empty = _TABLES[~id(among)]
        cursor = self.cursor
        limit = self.limit
        current = self.current
        candidates = by_first.get(current[cursor], empty) if cursor < limit else empty
        for text, i in candidates:
            if current.startswith(text, cursor, limit):
                entry = among[i]
                if entry.method is not None:
                    return int(super().find_among(among))
                self.cursor = cursor + len(text)
                return int(entry.result)
        return 0

    def _EnglishStemmer__r_prelude(self) -> bool:  # the name it overrides, mangled
        # The prelude only marks a "y" as a consonant and drops a leading apostrophe.
        if "y" in self.current or self.current.startswith("'"):
            return bool(EnglishStemmer._EnglishStemmer__r_prelude(self))
        self.B_Y_found = False
        return True


_tables()


def english_stemmer() -> Any:
    """A new English stemmer (``stemWord(word) -> stem``): PyStemmer's C one where installed
    (snowballstemmer prefers it too), else the pure-Python one with fast suffix lookups."""
    stemmer = snowballstemmer.stemmer("english")
    return FastEnglishStemmer() if type(stemmer) is EnglishStemmer else stemmer
