"""Tool search for one app: ranks the registry's tools with `prixfixe.search`, keeps denied
facets out of every answer, and rebuilds its index only as far as the registry changed.

Analysing a tool's texts is the costly part of an index, so analysed tools are kept per plugin
and reused while that plugin's tools are the same objects; a registry change re-analyses only
the plugin that changed, then reassembles the index (IDF depends on the whole catalogue).

With `[search] semantic` (the default) the index also fuses dense embeddings (wordllama,
`prixfixe.search.semantic`). CONTRACT: the model is loaded by the first search that builds an
index, never at start-up (neither numpy nor wordllama is imported before); a model that cannot
be loaded leaves search lexical with one warning in the log, never an error. Tool vectors are
cached by content hash in the prixfixe home, so a restart re-embeds only the tools that changed.
Building an index (the first search, or the first after the registry changed) can take a
moment: `ready()` says whether a search would build, so that a caller on an event loop can
search in a worker thread then; builds are serialised by a lock."""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from prixfixe.declarations.tool import TOOLS, RegisteredTool, Tool
from prixfixe.errors import PrixfixeError
from prixfixe.search import (
    AnalyzedDocument,
    Embedder,
    SearchDocument,
    SearchIndex,
    analyze,
    analyze_fields,
)

if TYPE_CHECKING:
    from prixfixe.config import ConfigModel
    from prixfixe.core.facets import Exposure
    from prixfixe.core.registry import Registry
    from prixfixe.search.semantic import VectorCache

#: Where tool vectors are cached, under the prixfixe home.
VECTOR_CACHE = Path("cache") / "search-vectors.npz"

log = logging.getLogger(__name__)


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
    #: How sure the best hit is (`prixfixe.search.SearchResult.confidence`).
    confidence: float = 0.0
    #: The best hit is very likely the one asked for (`prixfixe.search.SearchResult.sure`).
    sure: bool = False


def _params(tool: Tool) -> tuple[tuple[str, str], ...]:
    """Input names and descriptions: a raw schema's top-level properties (a mounted server's
    tool), else the model's fields (generating the JSON Schema of every tool only to read these
    would dominate building the index)."""
    if tool.input_schema is not None:
        properties = tool.input_schema.get("properties")
        if not isinstance(properties, Mapping):
            return ()
        return tuple((str(name), _description(spec)) for name, spec in properties.items())
    model = tool.input_model
    return tuple(
        (info.alias or name, info.description or "") for name, info in model.model_fields.items()
    )


def _description(spec: object) -> str:
    text = spec.get("description") if isinstance(spec, Mapping) else None
    return text if isinstance(text, str) else ""


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while an index is built: the build allocates many
    small objects without cycles (tuples, dicts, strings) that its passes walk to free nothing,
    and at 10,000 tools a full pass lands inside the build."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def document(entry: RegisteredTool, registry: Registry | None = None) -> SearchDocument:
    """What the ranking sees of a tool: everything a person would search by, no schema JSON;
    with `registry`, also the words the tool draws from it (`Tool.search_words`)."""
    tool = entry.tool
    drawn = tuple(tool.search_words(registry)) if tool.search_words and registry else ()
    return SearchDocument(
        name=tool.name,
        description=tool.description,
        params=_params(tool),
        keywords=tool.keywords + drawn,
        examples=tool.examples,
        about=tool.about,
    )


@dataclass(frozen=True)
class _Analysed:
    """One plugin's tools as last analysed."""

    entries: tuple[RegisteredTool, ...]
    docs: tuple[AnalyzedDocument, ...]

    def holds(self, entries: tuple[RegisteredTool, ...]) -> bool:
        return len(entries) == len(self.entries) and all(
            a is b for a, b in zip(entries, self.entries, strict=True)
        )


@dataclass(frozen=True)
class _Built:
    version: int
    index: SearchIndex
    entries: dict[str, RegisteredTool]


class Finder:
    """Searches the tools of `registry` that `exposure` lets this server reach."""

    def __init__(
        self,
        registry: Registry,
        exposure: Exposure,
        *,
        embedder: Embedder | None = None,
        vector_cache: VectorCache | None = None,
        semantic_cache: Path | None = None,
    ) -> None:
        """`embedder`: fuse its embeddings now (tool vectors in `vector_cache`, else in
        memory); else `semantic_cache`: load wordllama (shared with the knowledge base) when
        the first index is built, caching tool vectors in that file, or stay lexical if it
        cannot be loaded."""
        self._registry = registry
        self._exposure = exposure
        self._embedder = embedder
        self._vector_cache = vector_cache
        #: The cache file of an embedder still to load; None once tried (or never asked).
        self._pending_model = semantic_cache if embedder is None else None
        self._indexes: dict[str | None, _Built] = {}
        self._analysed: dict[str, _Analysed] = {}
        self._analysed_version = -1
        self._building = threading.Lock()

    @classmethod
    def configured(
        cls, registry: Registry, exposure: Exposure, config: ConfigModel, home: Path
    ) -> Finder:
        """The finder `[search]` asks for: fused with wordllama's embeddings (loaded by the
        first search) unless `semantic = false`, then lexical."""
        if not config.search.semantic:
            return cls(registry, exposure)
        return cls(registry, exposure, semantic_cache=home / VECTOR_CACHE)

    @property
    def semantic(self) -> bool:
        """Whether searches fuse embeddings (before the first search: whether they will try)."""
        return self._embedder is not None or self._pending_model is not None

    def _load_model(self) -> None:
        """Load the pending embedder once; on failure stay lexical and say why, once."""
        cache_path, self._pending_model = self._pending_model, None
        assert cache_path is not None
        try:
            from prixfixe.search.semantic import (
                SemanticUnavailableError,
                VectorCache,
                shared_wordllama,
            )
        except ImportError as exc:  # numpy, which wordllama brings, is missing
            log.warning(
                "tool search is lexical only: semantic ranking needs %s, which is not "
                "installed (pip install 'wordllama>=0.3.8,<0.4')",
                exc.name or "numpy",
            )
            return
        try:
            embedder = shared_wordllama()
        except SemanticUnavailableError as exc:
            log.warning("tool search is lexical only: %s", exc.message)
            return
        self._embedder = embedder
        self._vector_cache = VectorCache(cache_path)
        # Analysed tools do not keep the text an embedder reads: analyse them again.
        self._analysed = {}
        self._analysed_version = -1

    def _analyze(self, entry: RegisteredTool) -> AnalyzedDocument:
        if self._embedder is not None:  # it embeds the document: keep it
            return analyze(document(entry, self._registry))
        tool = entry.tool
        drawn = tuple(tool.search_words(self._registry)) if tool.search_words else ()
        return analyze_fields(
            tool.name,
            tool.description,
            _params(tool),
            tool.keywords + drawn,
            tool.examples,
            tool.about,
        )

    def _refresh_analysis(self) -> None:
        """Re-analyse the plugins whose tools changed since the last build, no others."""
        version = self._registry.version
        if version == self._analysed_version:
            return
        fresh: dict[str, _Analysed] = {}
        for owner, entries in self._registry.by_owner(TOOLS).items():
            known = self._analysed.get(owner)
            # A tool that draws words from the registry may change with another plugin.
            draws = any(e.tool.search_words for e in entries)
            if known is None or draws or not known.holds(entries):
                docs = tuple(map(self._analyze, entries))
                known = _Analysed(entries, docs)
            fresh[owner] = known
        self._analysed = fresh
        self._analysed_version = version

    def ready(self, facet: str | None = None) -> bool:
        """Whether a search of `facet` would use a built index (no model to load, no tool to
        analyse or embed): cheap enough for an event loop."""
        built = self._indexes.get(facet)
        return built is not None and built.version == self._registry.version

    def _index(self, facet: str | None) -> _Built:
        version = self._registry.version
        built = self._indexes.get(facet)
        if built is not None and built.version == version:
            return built
        with self._building:
            version = self._registry.version
            built = self._indexes.get(facet)
            if built is None or built.version != version:
                if self._pending_model is not None:
                    self._load_model()
                with _cyclic_gc_paused():
                    built = self._build(facet, version)
                self._indexes[facet] = built
        return built

    def _build(self, facet: str | None, version: int) -> _Built:
        """The index of `facet` (None: every reachable facet) at registry `version`."""
        self._refresh_analysis()
        # Asked once a facet rather than once a tool: a catalogue has few facets.
        searched: dict[str, bool] = {}
        entries: dict[str, RegisteredTool] = {}
        docs: list[AnalyzedDocument] = []
        for analysed in self._analysed.values():
            for entry, doc in zip(analysed.entries, analysed.docs, strict=True):
                tool_facet = entry.tool.facet
                keep = searched.get(tool_facet)
                if keep is None:
                    keep = searched[tool_facet] = self._exposure.reachable(tool_facet) and (
                        facet is None or tool_facet == facet
                    )
                if keep:
                    entries[entry.name] = entry
                    docs.append(doc)
        if self._embedder is not None and self._vector_cache is None:
            from prixfixe.search.semantic import VectorCache

            # In memory at least: a rebuild after a plugin changed embeds only its tools.
            self._vector_cache = VectorCache()
        index = SearchIndex(docs, embedder=self._embedder, vector_cache=self._vector_cache)
        return _Built(version, index, entries)

    def find(
        self, query: str | Sequence[str], limit: int = 5, facet: str | None = None
    ) -> FindOutcome:
        """The tools for `query`, best first; several phrasings (a list) are fused by
        `SearchIndex.search_many`."""
        if facet is not None:
            facets = self._registry.facets()
            if facet not in facets or not self._exposure.reachable(facet):
                known = sorted(f for f in facets if self._exposure.reachable(f))
                raise PrixfixeError(
                    f"unknown facet {facet!r}; facets you can search: {', '.join(known)}",
                    facet=facet,
                )
        phrasings = [query] if isinstance(query, str) else list(query)
        if not any(q.strip() for q in phrasings):
            raise PrixfixeError("query is empty: say what you want to do, in a few words")
        built = self._index(facet)
        result = built.index.search_many(phrasings, limit=limit)
        found = [Found(built.entries[h.name], h.score, h.weak) for h in result.hits]
        return FindOutcome(
            query=" | ".join(q for q in phrasings if q.strip()),
            good_match=result.good_match,
            found=found,
            confidence=result.confidence,
            sure=result.sure,
        )
