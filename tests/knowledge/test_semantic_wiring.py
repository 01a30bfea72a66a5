"""`[search] knowledge_semantic` reaches every knowledge writer and reader: a tool's write embeds
what it added before clients are told, the health resource and the `kb-search` step report the
mode searches run in, and `prixfixe kb reindex --embeddings` is the explicit rebuild. It is off
by default, even though tool search ranks by meaning by default: ingest embeds nothing. Without
numpy, every write still succeeds and each reader says why it ran keyword-only."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client

from prixfixe.cli import cli
from prixfixe.knowledge import KNOWLEDGE_OWNER, vectors
from prixfixe.knowledge.ingest import put_text
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.knowledge.conftest import GUIDE

pytestmark = pytest.mark.anyio

SEMANTIC = "[search]\nknowledge_semantic = true\n"
ROUTINE = """
[routines.morning]
[[routines.morning.steps]]
name = "garden"
type = "kb-search"
query = "when should the plants get water"
collection = "garden"
"""


async def read_json(client: Client, uri: str) -> dict[str, Any]:
    (contents,) = (await client.read_resource(uri)).contents
    body: dict[str, Any] = json.loads(contents.text)  # type: ignore[union-attr]
    return body


async def add_through_the_tool(client: Client) -> None:
    result = await client.call_tool(
        "tool_invoke",
        {
            "name": "kb_document_add",
            "arguments": {"collection": "garden", "path": "guide.md", "text": GUIDE},
        },
    )
    assert result.is_error is False, result.content


async def test_a_tool_write_embeds_its_chunks_and_health_reports_hybrid(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(config=SEMANTIC, plugins=[])
    async with Client(build_server(app), mode=revision) as client:
        await add_through_the_tool(client)
        health = await read_json(client, "prixfixe://knowledge/health")
    state = vectors.state(app.store.slice(KNOWLEDGE_OWNER))
    assert state.record is not None
    assert state.pending == 0
    assert state.record.vectors == state.chunks == health["chunks"] > 0
    assert health["search_mode"] == "hybrid"
    assert health["vectors"]["pending"] == 0
    assert "search_note" not in health


async def test_the_kb_search_step_runs_hybrid_when_semantic_is_on(make_app: AppFactory) -> None:
    app = make_app(config=SEMANTIC + ROUTINE, plugins=[])
    async with Client(build_server(app)) as client:
        await add_through_the_tool(client)
        result = await client.call_tool("routine_run", {"name": "morning", "format": "data"})
    assert result.is_error is False, result.content
    (step,) = result.structured_content["steps"]  # type: ignore[index]
    assert (step["status"], step["data"]["mode"], step["data"]["note"]) == ("ok", "hybrid", "")


async def test_by_default_nothing_is_embedded_and_health_says_keyword(
    make_app: AppFactory,
) -> None:
    app = make_app(plugins=[])
    async with Client(build_server(app)) as client:
        # Tool search ranks by meaning by default (the model is loaded); ingest still does not.
        searched = await client.call_tool("tool_search", {"query": "add a document"})
        assert app.finder.semantic is True, searched.content
        await add_through_the_tool(client)
        health = await read_json(client, "prixfixe://knowledge/health")
    assert vectors.state(app.store.slice(KNOWLEDGE_OWNER)).record is None
    assert health["search_mode"] == "keyword"
    assert "vectors" not in health
    assert "search_note" not in health


async def test_without_numpy_a_write_succeeds_and_health_says_why_keyword(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # wordllama brings numpy; without it the dense half cannot even be imported.
    monkeypatch.setitem(sys.modules, "numpy", None)
    monkeypatch.delitem(sys.modules, "prixfixe.search.semantic", raising=False)
    app = make_app(config=SEMANTIC, plugins=[])
    async with Client(build_server(app)) as client:
        await add_through_the_tool(client)
        health = await read_json(client, "prixfixe://knowledge/health")
    assert vectors.state(app.store.slice(KNOWLEDGE_OWNER)).record is None
    assert health["search_mode"] == "keyword"
    assert "pip install 'wordllama>=0.3.8,<0.4'" in health["search_note"]
    assert health["vectors"]["pending"] == health["chunks"] > 0


def test_reindex_embeddings_takes_no_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner(env={"PRIXFIXE_HOME": str(tmp_path / "home")})
    result = runner.invoke(cli, ["kb", "reindex", "--embeddings", "--collection", "garden"])
    assert result.exit_code != 0
    assert "--embeddings rebuilds every collection's vectors" in result.output
    assert "Traceback" not in result.output


def test_reindex_embeddings_rebuilds_every_vector_with_the_current_model(
    tmp_path: Path, make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(plugins=[])
    kb = app.store.slice(KNOWLEDGE_OWNER)
    put_text(kb, "garden", "guide.md", GUIDE)
    app.close_store()
    runner = CliRunner(env={"PRIXFIXE_HOME": str(tmp_path / "home")})
    result = runner.invoke(cli, ["kb", "reindex", "--embeddings", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    done = json.loads(result.output)
    state = vectors.state(app.store.slice(KNOWLEDGE_OWNER))
    assert state.record is not None
    assert state.record.model == done["model"]
    assert done["embedded"] == state.chunks == state.record.vectors > 0
