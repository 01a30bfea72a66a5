"""Semantic ranking, tool search's default: wordllama's embeddings (a dependency, never skipped)
fused with the lexical ranker, loaded offline on the first search, with tool vectors cached by
content hash; a model that cannot load leaves search lexical."""

from __future__ import annotations

import logging
import sys
import threading
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from prixfixe.config import ConfigModel
from prixfixe.core.facets import Exposure
from prixfixe.core.registry import Registry
from prixfixe.declarations.tool import Tool, ToolContext
from prixfixe.search import SearchDocument, SearchIndex, semantic
from prixfixe.search.semantic import (
    SemanticUnavailableError,
    VectorCache,
    WordLlamaEmbedder,
    load_wordllama,
)
from prixfixe.tools.finder import VECTOR_CACHE, Finder

CATALOGUE = [
    SearchDocument("surf_forecast", "Swell height, period and wind for surf spots."),
    SearchDocument("currency_convert", "Convert an amount between currencies at today's rate."),
    SearchDocument("recipe_finder", "Find recipes by ingredient and cuisine."),
    SearchDocument("files.delete", "Delete a file from the workspace."),
    SearchDocument("flight_status", "Departure and arrival times of a flight."),
    SearchDocument("weather_forecast", "Temperature and rain for a city for the next days."),
]


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    return load_wordllama()


class CountingEmbedder:
    """Wraps a real embedder and records every text it was asked to embed."""

    def __init__(self, inner: WordLlamaEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.embedded.extend(texts)
        return self.inner.embed(texts)


@pytest.mark.parametrize(
    ("query", "tool"),
    [
        ("how big are the waves at the beach", "surf_forecast"),
        ("what can I cook with eggplant", "recipe_finder"),
        ("how many euros is 20 dollars", "currency_convert"),
        ("is my plane late", "flight_status"),
    ],
)
def test_a_paraphrase_sharing_no_word_with_the_tool_is_found_only_with_embeddings(
    embedder: WordLlamaEmbedder, query: str, tool: str
) -> None:
    assert SearchIndex(CATALOGUE).search(query).hits == []
    assert SearchIndex(CATALOGUE, embedder=embedder).search(query).hits[0].name == tool


def test_an_exact_word_match_stays_first_and_confident_when_fused(
    embedder: WordLlamaEmbedder,
) -> None:
    result = SearchIndex(CATALOGUE, embedder=embedder).search("delete file")
    assert result.hits[0].name == "files.delete"
    assert result.good_match is True
    assert result.hits[0].weak is False


def test_a_query_unrelated_to_every_tool_abstains_with_weak_nearest_hits(
    embedder: WordLlamaEmbedder,
) -> None:
    result = SearchIndex(CATALOGUE, embedder=embedder).search("quantum entanglement of photons")
    assert result.good_match is False
    assert result.hits, "the nearest tools are still offered"
    assert all(hit.weak for hit in result.hits)


def test_a_stop_word_only_query_still_gives_no_hits(embedder: WordLlamaEmbedder) -> None:
    index = SearchIndex(CATALOGUE, embedder=embedder)
    assert index.search("could you please help me with this").hits == []


def test_a_restart_reads_tool_vectors_from_the_cache_file_and_embeds_only_new_tools(
    embedder: WordLlamaEmbedder, tmp_path: Path
) -> None:
    path = tmp_path / "vectors.npz"
    first = CountingEmbedder(embedder)
    SearchIndex(CATALOGUE, embedder=first, vector_cache=VectorCache(path))
    assert len(first.embedded) == len(CATALOGUE)
    assert path.is_file()

    restarted = CountingEmbedder(embedder)
    added = SearchDocument("git_status", "Show the working tree status of a repository.")
    index = SearchIndex([*CATALOGUE, added], embedder=restarted, vector_cache=VectorCache(path))
    assert len(restarted.embedded) == 1, "only the new tool is embedded"
    assert "working tree" in restarted.embedded[0]
    assert index.search("is my plane late").hits[0].name == "flight_status"


def test_a_changed_description_is_embedded_again(
    embedder: WordLlamaEmbedder, tmp_path: Path
) -> None:
    cache = VectorCache(tmp_path / "vectors.npz")
    counting = CountingEmbedder(embedder)
    SearchIndex(CATALOGUE[:1], embedder=counting, vector_cache=cache)
    changed = SearchDocument("surf_forecast", "Tide tables for harbours.")
    SearchIndex([changed], embedder=counting, vector_cache=cache)
    assert len(counting.embedded) == 2


def test_a_damaged_cache_file_is_ignored_and_rewritten(
    embedder: WordLlamaEmbedder, tmp_path: Path
) -> None:
    path = tmp_path / "vectors.npz"
    path.write_bytes(b"not a cache")
    index = SearchIndex(CATALOGUE, embedder=embedder, vector_cache=VectorCache(path))
    assert index.search("is my plane late").hits[0].name == "flight_status"
    assert len(VectorCache(path).vectors(embedder, [])) == 0
    reread = CountingEmbedder(embedder)
    SearchIndex(CATALOGUE, embedder=reread, vector_cache=VectorCache(path))
    assert reread.embedded == []


def test_without_wordllama_installed_the_error_names_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(name: str) -> types.ModuleType:
        raise ImportError(name)

    monkeypatch.setattr(semantic.importlib, "import_module", missing)
    with pytest.raises(SemanticUnavailableError, match=r"pip install 'wordllama>=0\.3\.8,<0\.4'"):
        load_wordllama()


def test_a_wordllama_without_its_model_in_the_wheel_is_an_error_not_a_download(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = types.ModuleType("wordllama")
    fake.__file__ = str(tmp_path / "__init__.py")

    def load(*args: object, **kwargs: object) -> None:
        raise AssertionError("must not try to load (or download) a model")

    fake.WordLlama = types.SimpleNamespace(load=load)  # type: ignore[attr-defined]
    monkeypatch.setattr(semantic.importlib, "import_module", lambda name: fake)
    with pytest.raises(SemanticUnavailableError, match="does not ship its model") as caught:
        load_wordllama()
    assert "l2_supercat_256.safetensors" in str(caught.value)


def _handler(ctx: ToolContext, args: object) -> str:  # never called
    return ""


def _demo_registry() -> Registry:
    """The catalogue above as registered tools of one plugin."""
    from pydantic import BaseModel

    registry = Registry()
    registry.add_tools(
        [
            Tool(
                name=doc.name.replace(".", "_"),
                title=doc.name,
                description=doc.description,
                input_model=BaseModel,
                handler=_handler,
                mutates=False,
                facet="core",
            )
            for doc in CATALOGUE
        ],
        owner="demo",
    )
    return registry


EXPOSURE = Exposure(("core",), "default", (), "default")


def test_search_semantic_is_the_default_loaded_by_the_first_search_and_cached_under_home(
    tmp_path: Path,
) -> None:
    registry, exposure = _demo_registry(), EXPOSURE
    off = ConfigModel.model_validate({"search": {"semantic": False}})
    lexical = Finder.configured(registry, exposure, off, tmp_path)
    assert lexical.find("is my plane late").found == []
    assert not (tmp_path / VECTOR_CACHE).exists()

    finder = Finder.configured(registry, exposure, ConfigModel(), tmp_path)  # the default
    assert not (tmp_path / VECTOR_CACHE).exists(), "nothing is loaded before the first search"
    assert finder.ready() is False
    outcome = finder.find("is my plane late")
    assert outcome.found[0].entry.name == "flight_status"
    assert (tmp_path / VECTOR_CACHE).is_file()
    assert finder.ready() is True


@pytest.mark.parametrize("broken", ["no model", "no numpy"])
def test_a_model_that_cannot_load_leaves_tool_search_lexical_with_one_warning(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    broken: str,
) -> None:
    if broken == "no model":

        def unavailable() -> WordLlamaEmbedder:
            raise SemanticUnavailableError("wordllama 9 does not ship its model")

        monkeypatch.setattr(semantic, "shared_wordllama", unavailable)
        said = "tool search is lexical only: wordllama 9 does not ship its model"
    else:  # what an install without numpy sees: the module cannot be imported
        monkeypatch.setitem(sys.modules, "numpy", None)
        monkeypatch.delitem(sys.modules, "prixfixe.search.semantic")
        said = "tool search is lexical only: semantic ranking needs numpy"
    registry = _demo_registry()
    finder = Finder.configured(registry, EXPOSURE, ConfigModel(), tmp_path)
    with caplog.at_level(logging.WARNING, logger="prixfixe.tools.finder"):
        assert finder.find("delete file").found[0].entry.name == "files_delete"
        assert finder.find("is my plane late").found == [], "lexical: no shared word, no hit"
        registry.add_tools([], owner="another")  # a rebuild does not try (or warn) again
        finder.find("delete file")
    (message,) = [r.getMessage() for r in caplog.records]
    assert message.startswith(said)
    assert finder.semantic is False
    assert not (tmp_path / VECTOR_CACHE).exists()


class ThreadRecordingEmbedder(CountingEmbedder):
    """Records the thread each embedding ran on."""

    def __init__(self, inner: WordLlamaEmbedder) -> None:
        super().__init__(inner)
        self.threads: list[threading.Thread] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.threads.append(threading.current_thread())
        return super().embed(texts)


@pytest.mark.anyio
async def test_the_default_server_ranks_a_paraphrase_sharing_no_word_and_embeds_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: WordLlamaEmbedder
) -> None:
    from mcp import Client

    from prixfixe.app import App
    from prixfixe.mcp.server import build_server
    from tests.plugin_fixtures import SurfPlugin
    from tests.search_text import searched

    recording = ThreadRecordingEmbedder(embedder)
    monkeypatch.setattr(semantic, "shared_wordllama", lambda: recording)
    app = App.build(
        env={"PRIXFIXE_HOME": str(tmp_path / "home"), "PRIXFIXE_LOAD_PLUGINS": ""},
        cwd=tmp_path,
        extra_plugins=[SurfPlugin()],
    )
    async with Client(build_server(app), mode="legacy") as client:
        loop_thread = threading.current_thread()
        found = await client.call_tool("tool_search", {"query": "a swell hitting Torquay"})
        again = await client.call_tool("tool_search", {"query": "a swell hitting the coast"})
    assert searched(found).names[0] == "surf.report"
    assert searched(again).names[0] == "surf.report"
    # Every tool was embedded once, by the first search, in a worker thread; the second
    # search embedded only its query.
    (first_tools, first_query, second_query) = recording.threads
    assert first_tools is not loop_thread
    assert first_query is not loop_thread
    assert second_query is loop_thread, "a built index is searched on the loop"
    assert recording.embedded[-1] == "a swell hitting the coast"
    assert any(text.startswith("surf report. Wave height") for text in recording.embedded)


class NarrowEmbedder:
    """Another model (another width) sharing the cache file."""

    model_id = "narrow-test-model"

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        return np.array([[len(t), 1.0, 2.0] for t in texts], dtype=np.float32)


def test_a_model_of_another_width_shares_the_cache_file_without_breaking_it(
    embedder: WordLlamaEmbedder, tmp_path: Path
) -> None:
    path = tmp_path / "vectors.npz"
    SearchIndex(CATALOGUE, embedder=embedder, vector_cache=VectorCache(path))
    narrow = SearchIndex(CATALOGUE, embedder=NarrowEmbedder(), vector_cache=VectorCache(path))
    assert len(narrow.search("delete file").hits) > 0
    again = CountingEmbedder(embedder)
    SearchIndex(CATALOGUE, embedder=again, vector_cache=VectorCache(path))
    assert len(again.embedded) == len(CATALOGUE), "the file now holds the narrow model's"


def test_an_unwritable_cache_folder_costs_only_the_cache(
    embedder: WordLlamaEmbedder, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would be")
    cache = VectorCache(blocker / "cache" / "vectors.npz")
    index = SearchIndex(CATALOGUE, embedder=embedder, vector_cache=cache)
    assert index.search("is my plane late").hits[0].name == "flight_status"


@pytest.mark.anyio
async def test_a_server_configured_with_search_semantic_fuses_through_tool_search(
    tmp_path: Path,
) -> None:
    from mcp import Client

    from prixfixe.app import App
    from prixfixe.mcp.server import build_server
    from tests.search_text import searched

    (tmp_path / "prixfixe.toml").write_text("[search]\nsemantic = true\n", encoding="utf-8")
    app = App.build(env={"PRIXFIXE_HOME": str(tmp_path / "home")}, cwd=tmp_path)
    async with Client(build_server(app), mode="legacy") as client:
        found = await client.call_tool("tool_search", {"query": "note something to remember"})
    assert searched(found).names, "a fused search still answers"
    assert (tmp_path / "home" / VECTOR_CACHE).is_file(), "tool vectors were cached under home"


STARTUP = """
import json, pathlib, sys, anyio
from mcp import Client
from prixfixe.app import App
from prixfixe.mcp.server import build_server

async def main():
    app = App.build(cwd=pathlib.Path(sys.argv[1]))
    seen = {}
    async with Client(build_server(app), mode="legacy") as client:
        await client.list_tools()
        seen["serving"] = sorted(m for m in ("numpy", "wordllama") if m in sys.modules)
        await client.call_tool("tool_search", {"query": "remember this"})
        seen["searched"] = sorted(m for m in ("numpy", "wordllama") if m in sys.modules)
    print(json.dumps(seen))

anyio.run(main)
"""


def test_a_server_imports_neither_numpy_nor_wordllama_before_its_first_search(
    tmp_path: Path,
) -> None:
    import json
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-c", STARTUP, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen == {"serving": [], "searched": ["numpy", "wordllama"]}
