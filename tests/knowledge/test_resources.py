"""The knowledge base as resources, through the real protocol on both revisions: collections
listed with counts, a collection's documents, a document read whole, names completed, and
nothing added to the default tools/list."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from prixfixe.app import App
from prixfixe.mcp.server import build_server
from tests.conftest import CORE_TOOLS
from tests.knowledge.conftest import GUIDE, NOTES, Ingest

pytestmark = pytest.mark.anyio

NOT_FOUND = {"legacy": -32002, "2026-07-28": -32602}


def ref(uri: str) -> types.ResourceTemplateReference:
    return types.ResourceTemplateReference(type="ref/resource", uri=uri)


async def test_collections_documents_and_a_whole_document_are_read_as_resources(
    app: App, add: Ingest, revision: str
) -> None:
    add()
    async with Client(build_server(app), mode=revision) as client:
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        collections = await client.read_resource("prixfixe://knowledge/collections")
        documents = await client.read_resource("prixfixe://knowledge/garden/documents")
        (docs_text,) = documents.contents
        guide = next(
            d
            for d in json.loads(docs_text.text)["documents"]  # type: ignore[union-attr]
            if d["path"] == "guide.md"
        )
        document = await client.read_resource(guide["uri"])
        tools = await client.list_tools()
    assert "prixfixe://knowledge/collections" in {r.uri for r in listed.resources}
    assert {
        "prixfixe://knowledge/{collection}/documents",
        "prixfixe://knowledge/{collection}/document/{id}",
    } <= {t.uri_template for t in templates.resource_templates}
    (text,) = collections.contents
    (garden,) = json.loads(text.text)["collections"]  # type: ignore[union-attr]
    assert garden["bytes"] == len(GUIDE) + len("# Bees\n\nBees make honey.\n") + len(NOTES)
    assert garden["gen"] >= 1
    assert {k: v for k, v in garden.items() if k not in ("bytes", "gen")} == {
        "name": "garden",
        "documents": 3,
        "chunks": 5,
        "uri": "prixfixe://knowledge/garden/documents",
    }
    assert (guide["title"], guide["chunks"]) == ("Garden guide", 3)
    (body,) = document.contents
    assert (body.mime_type, body.text) == ("text/markdown", GUIDE)  # type: ignore[union-attr]
    assert [t.name for t in tools.tools] == CORE_TOOLS


async def test_unknown_collections_and_documents_are_not_found_with_the_uri(
    app: App, add: Ingest, revision: str
) -> None:
    add()
    async with Client(build_server(app), mode=revision) as client:
        for uri, says in (
            ("prixfixe://knowledge/nope/documents", "unknown collection 'nope'"),
            ("prixfixe://knowledge/garden/document/999", "has no document 999"),
            ("prixfixe://knowledge/garden/document/abc", "document ids are numbers"),
        ):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            assert caught.value.code == NOT_FOUND[revision]
            assert caught.value.data == {"uri": uri}
            assert says in caught.value.message


async def test_collection_names_and_document_ids_complete(
    app: App, add: Ingest, folder: Path, revision: str
) -> None:
    add()
    add(folder / "deep", "bees")
    async with Client(build_server(app), mode=revision) as client:
        names = await client.complete(
            ref("prixfixe://knowledge/{collection}/documents"), {"name": "collection", "value": "g"}
        )
        every = await client.complete(
            ref("prixfixe://knowledge/{collection}/document/{id}"),
            {"name": "collection", "value": ""},
        )
        ids = await client.complete(
            ref("prixfixe://knowledge/{collection}/document/{id}"),
            {"name": "id", "value": ""},
            context_arguments={"collection": "bees"},
        )
    assert names.completion.values == ["garden"]
    assert every.completion.values == ["bees", "garden"]
    assert len(ids.completion.values) == 1


async def test_an_empty_knowledge_base_lists_no_collections(app: App, revision: str) -> None:
    async with Client(build_server(app), mode=revision) as client:
        result = await client.read_resource("prixfixe://knowledge/collections")
    (text,) = result.contents
    assert json.loads(text.text) == {"collections": []}  # type: ignore[union-attr]
