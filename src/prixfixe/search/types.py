"""What goes into an index and what comes out of a search."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Embedder", "SearchDocument", "SearchHit", "SearchResult"]


@dataclass(frozen=True)
class SearchDocument:
    """What the ranker sees of one tool (or any other named thing to be found).

    ``params`` are (name, description) pairs of the inputs; ``keywords`` and ``examples`` (whole
    example requests) are written for search and weigh more than a passing mention. ``about``
    is what the document's provider says of itself (a mounted server's description and
    instructions, shared by all its tools): weak evidence, weighed low.
    """

    name: str
    description: str
    params: Sequence[tuple[str, str]] = ()
    keywords: Sequence[str] = ()
    examples: Sequence[str] = ()
    about: str = ""


@dataclass(frozen=True)
class SearchHit:
    """One ranked document; ``weak`` when it is not a confident answer."""

    name: str
    score: float
    weak: bool
    #: How sure this hit is, on the scale of :attr:`SearchResult.confidence` (comparable
    #: across queries of one index, which is how :meth:`SearchIndex.search_many` fuses).
    confidence: float = field(default=0.0, compare=False)


@dataclass(frozen=True)
class SearchResult:
    """Hits best first; ``good_match`` is False when none of them is a confident answer."""

    hits: list[SearchHit]
    good_match: bool
    #: How sure the best hit is, from 0 (no evidence) up; ``good_match`` is
    #: ``confidence >= Tuning.good_match``. Comparable across queries of one index.
    confidence: float = 0.0
    #: The best hit is very likely the one asked for (``confidence`` at or above
    #: ``Tuning.sure_match``, or ``dense_sure_match`` when fused with meaning): about four
    #: times in five on MetaTool, where a merely good match is right about half the time.
    sure: bool = False


class Embedder(Protocol):
    """A text embedding model, for ranking by meaning beside words (``prixfixe[semantic]``)."""

    #: Names the model and its version: part of the key of every cached vector, so a new
    #: model never reuses an old model's vectors.
    @property
    def model_id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> Any:
        """One vector per text, as rows of a 2-d array-like (any length; cosine is used)."""
        ...
