"""Tool search for one app: builds the ranking index from the registry, caches it per registry
version and facet filter, and keeps denied facets out of every answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from prixfixe.core.registry import RegisteredTool
from prixfixe.errors import PrixfixeError
from prixfixe.tools.search import SearchDocument, SearchIndex

if TYPE_CHECKING:
    from prixfixe.core.facets import Exposure
    from prixfixe.core.registry import Registry


@dataclass(frozen=True)
class Found:
    entry: RegisteredTool
    score: float
    weak: bool


@dataclass(frozen=True)
class FindOutcome:
    query: str
    good_match: bool
    found: list[Found]


def document(entry: RegisteredTool) -> SearchDocument:
    """What the ranking sees of a tool: everything a person would search by, no schema JSON."""
    properties = entry.input_schema.get("properties", {})
    params = tuple(
        (name, str(spec.get("description", "")) if isinstance(spec, dict) else "")
        for name, spec in properties.items()
    )
    tool = entry.tool
    return SearchDocument(
        name=tool.name,
        description=tool.description,
        params=params,
        keywords=tool.keywords,
        examples=tool.examples,
    )


class Finder:
    """Searches the tools of `registry` that `exposure` lets this server reach."""

    def __init__(self, registry: Registry, exposure: Exposure) -> None:
        self._registry = registry
        self._exposure = exposure
        self._indexes: dict[str | None, tuple[int, SearchIndex, dict[str, RegisteredTool]]] = {}

    def _index(self, facet: str | None) -> tuple[SearchIndex, dict[str, RegisteredTool]]:
        version = self._registry.version
        cached = self._indexes.get(facet)
        if cached is None or cached[0] != version:
            exposure = self._exposure
            entries = {
                e.name: e
                for e in self._registry
                if exposure.reachable(e.tool.facet) and (facet is None or e.tool.facet == facet)
            }
            index = SearchIndex(document(e) for e in entries.values())
            cached = (version, index, entries)
            self._indexes[facet] = cached
        return cached[1], cached[2]

    def find(self, query: str, limit: int = 5, facet: str | None = None) -> FindOutcome:
        if facet is not None:
            facets = self._registry.facets()
            if facet not in facets or not self._exposure.reachable(facet):
                known = sorted(f for f in facets if self._exposure.reachable(f))
                raise PrixfixeError(
                    f"unknown facet {facet!r}; facets you can search: {', '.join(known)}",
                    facet=facet,
                )
        if not query.strip():
            raise PrixfixeError("query is empty: say what you want to do, in a few words")
        index, entries = self._index(facet)
        result = index.search(query, limit=limit)
        found = [Found(entries[h.name], h.score, h.weak) for h in result.hits]
        return FindOutcome(query=query, good_match=result.good_match, found=found)
