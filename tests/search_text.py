"""Reading tool_search results as a model does: from their text, the only payload they carry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Searched:
    good_match: bool
    names: list[str]
    notes: dict[str, list[str]]  # name -> ("weak", "listed", "mutates")
    text: str
    #: The head calls the first hit a sure match ("Matches for"), not a possible one.
    certain: bool = False

    @property
    def sure(self) -> list[str]:
        """The hits the result calls confident (none when it says nothing fits well)."""
        if not self.good_match:
            return []
        return [n for n in self.names if "weak" not in self.notes[n]]


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
    good = head.startswith(("Matches for", "Possible matches for"))
    assert good or head.startswith(("No good match for", "No tool fits")), head
    return Searched(good, names, notes, text, certain=head.startswith("Matches for"))
