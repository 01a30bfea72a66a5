"""Search hits as compact markdown, what a model reads of a search: for each hit its heading,
document and collection, the URI of the section to read next and of the whole document, and
the snippet (matched words in `**bold**`) quoted, so a document's text is never taken for the
server's own words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the ranker's modules load when a search runs, not with the readers
    from prixfixe.knowledge.search import Found


def render(query: str, found: Found) -> str:
    count = len(found.hits)
    filters = "".join(f", {key}={value}" for key, value in found.filters.items())
    noun = "hit" if count == 1 else "hits"
    lines = [f'{count} {noun} for "{query}" ({found.mode} search{filters})']
    if found.note:
        lines.append(f"Note: {found.note}")
    if not found.hits:
        lines.append("Nothing matched: try other or fewer words, or fewer filters.")
    for n, hit in enumerate(found.hits, 1):
        where = " · ".join(part for part in (hit.heading, hit.path, hit.collection) if part)
        lines += [
            "",
            f"{n}. {where}",
            f"   section: {hit.section_uri}",
            f"   document: {hit.uri}",
            f"   > {' '.join(hit.snippet.split())}",
        ]
    return "\n".join(lines) + "\n"
