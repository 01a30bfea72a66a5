"""Reading tool_search results as a model does: from their text, the only payload they carry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Searched:
    good_match: bool
    names: list[str]
    notes: dict[str, list[str]]  # name -> ("listed", "mutates")
    text: str


def searched(result: Any) -> Searched:
    """The good-match verdict and the tools named, in order, by a tool_search result."""
    assert result.is_error is False, result.content
    assert result.structured_content is None, "search results carry their payload once, as text"
    (block,) = result.content
    text: str = block.text
    head, *rows = text.splitlines()
    names: list[str] = []
    notes: dict[str, list[str]] = {}
    for row in rows:
        assert row.startswith("- "), row
        label = row[2:].split(": ", 1)[0]
        name, _, rest = label.partition(" (")
        names.append(name)
        notes[name] = rest.rstrip(")").split(", ") if rest else []
    return Searched(head.startswith("Best for"), names, notes, text)
