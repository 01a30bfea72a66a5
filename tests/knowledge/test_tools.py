"""The knowledge base's mutation tools through the real protocol on both revisions: found with
tool_search and described, not listed; documents and collections written with tool_invoke;
subscribers told; bad input refused by name with nothing written."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.subscriptions import ResourceUpdated, Subscription
from mcp.shared.exceptions import MCPError

from prixfixe.app import App
from prixfixe.knowledge.ingest import MAX_DOCUMENT_BYTES
from prixfixe.mcp.server import build_server
from tests.conftest import CORE_TOOLS
from tests.knowledge.conftest import GUIDE
from tests.resources.conftest import Inbox
from tests.search_text import searched

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

TOOLS = [
    "kb_document_add",
    "kb_document_update",
    "kb_document_remove",
    "kb_collection_create",
    "kb_collection_remove",
]
DOC = "prixfixe://knowledge/garden/document/{}"


async def invoke(client: Client, name: str, **arguments: Any) -> Any:
    return await client.call_tool("tool_invoke", {"name": name, "arguments": arguments})


async def ok(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await invoke(client, name, **arguments)
    assert result.is_error is False, result.content[0].text
    data: dict[str, Any] = result.structured_content
    return data


async def refused(client: Client, name: str, **arguments: Any) -> str:
    result = await invoke(client, name, **arguments)
    assert result.is_error is True
    return str(result.content[0].text)


async def read(client: Client, uri: str) -> str:
    (contents,) = (await client.read_resource(uri)).contents
    return str(contents.text)  # type: ignore[union-attr]


async def collections(client: Client) -> dict[str, int]:
    body = json.loads(await read(client, "prixfixe://knowledge/collections"))
    return {c["name"]: c["documents"] for c in body["collections"]}


async def test_the_tools_are_found_and_described_but_never_listed(app: App, revision: str) -> None:
    async with Client(build_server(app), mode=revision) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        found = searched(
            await client.call_tool("tool_search", {"query": "add a note to the knowledge base"})
        )
        removing = searched(
            await client.call_tool("tool_search", {"query": "delete a knowledge collection"})
        )
        described = await client.call_tool("tool_describe", {"name": "kb_document_update"})
    assert listed == CORE_TOOLS
    assert found.names[0] == "kb_document_add"
    assert found.notes["kb_document_add"] == ["mutates"]
    assert removing.names[0] == "kb_collection_remove"
    text = described.content[0].text  # type: ignore[union-attr]
    assert text.splitlines()[0] == (
        "kb_document_update (mutates; not listed: call through tool_invoke)"
    )
    assert text.splitlines()[-1].startswith("Call: tool_invoke(name='kb_document_update', ")
    for line in (
        "- collection (string, required): Collection name: 1-64 of a-z, 0-9, '-', '_'.",
        "- id (integer|null): The document's id; or give path.",
        "- format (markdown|text|null): Default: the document's own.",
        "Returns: change, collection, collection_created, generation, document, documents_uri",
    ):
        assert line in text.splitlines()
    entry = app.registry.get("kb_document_update")
    assert (entry.tool.facet, entry.tool.owner) == (
        "knowledge",
        "prixfixe.default_plugins.knowledge_tools",
    )
    assert entry.annotations.idempotent_hint is True
    assert entry.output_schema is not None
    assert entry.output_schema["properties"]["change"]["enum"] == [
        "added",
        "updated",
        "unchanged",
        "removed",
    ]


async def test_a_document_is_added_updated_and_removed_with_links_to_what_was_written(
    app: App, revision: str
) -> None:
    async with Client(build_server(app), mode=revision) as client:
        added = await invoke(
            client, "kb_document_add", collection="garden", path="guide.md", text=GUIDE
        )
        first = await read(client, DOC.format(1))
        same = await ok(client, "kb_document_update", collection="garden", id=1, text=GUIDE)
        changed = await ok(
            client, "kb_document_update", collection="garden", path="guide.md", text="# Short\n"
        )
        second = await read(client, DOC.format(1))
        notes = await ok(
            client, "kb_document_add", collection="garden", path="todo.txt", text="Dig.\n"
        )
        gone = await ok(client, "kb_document_remove", collection="garden", path="guide.md")
        with pytest.raises(MCPError):
            await read(client, DOC.format(1))
        left = await collections(client)
    assert added.structured_content == {
        "change": "added",
        "collection": "garden",
        "collection_created": True,
        "generation": added.structured_content["generation"],
        "document": {
            "id": 1,
            "path": "guide.md",
            "title": "Garden guide",
            "format": "markdown",
            "bytes": len(GUIDE),
            "chunks": 3,
            "uri": DOC.format(1),
        },
        "documents_uri": "prixfixe://knowledge/garden/documents",
    }
    assert added.content[0].text == (
        "Added document 1 'guide.md' ('Garden guide') to collection 'garden' (new) (3 chunks, "
        f"{len(GUIDE)} bytes, store generation {added.structured_content['generation']}).\n"
        f"{DOC.format(1)}"
    )
    assert first == GUIDE
    assert (same["change"], same["generation"]) == ("unchanged", None)
    assert changed["change"] == "updated"
    assert changed["generation"] > added.structured_content["generation"]
    assert changed["document"]["title"] == "Short"
    assert second == "# Short\n"
    assert notes["document"]["format"] == "text", "a .txt path is plain text by default"
    assert gone["change"] == "removed"
    assert gone["document"]["path"] == "guide.md"
    assert left == {"garden": 1}


async def test_a_collection_holding_documents_is_removed_only_with_their_count_confirmed(
    app: App, revision: str
) -> None:
    async with Client(build_server(app), mode=revision) as client:
        created = await ok(client, "kb_collection_create", collection="notes")
        twice = await refused(client, "kb_collection_create", collection="notes")
        for name in ("a.md", "b.md"):
            await ok(client, "kb_document_add", collection="notes", path=name, text=f"# {name}\n")
        unconfirmed = await refused(client, "kb_collection_remove", collection="notes")
        stale = await refused(
            client, "kb_collection_remove", collection="notes", confirm_documents=1
        )
        kept = await collections(client)
        removed = await ok(client, "kb_collection_remove", collection="notes", confirm_documents=2)
        await ok(client, "kb_collection_create", collection="empty")
        emptied = await ok(client, "kb_collection_remove", collection="empty")
        after = await collections(client)
    assert created["documents_uri"] == "prixfixe://knowledge/notes/documents"
    assert twice == "collection 'notes' already exists"
    assert unconfirmed.startswith(
        "collection 'notes' holds 2 documents; nothing was removed. To remove it with all of "
        "them, call again with confirm_documents=2"
    )
    assert stale.startswith("collection 'notes' holds 2 documents, not 1; nothing was removed.")
    assert kept == {"notes": 2}
    assert (removed["change"], removed["documents_removed"]) == ("removed", 2)
    assert removed["documents_uri"] is None
    assert emptied["documents_removed"] == 0, "an empty collection needs no confirmation"
    assert after == {}


async def test_bad_names_paths_and_ids_are_refused_by_name_and_the_server_keeps_serving(
    app: App, revision: str
) -> None:
    async with Client(build_server(app), mode=revision) as client:
        await ok(client, "kb_document_add", collection="garden", path="guide.md", text=GUIDE)
        said = [
            await refused(client, "kb_document_add", collection="Bad Name", path="a.md", text="x"),
            await refused(client, "kb_document_add", collection="garden", path="../x", text="x"),
            await refused(
                client, "kb_document_add", collection="garden", path="guide.md", text="x"
            ),
            await refused(client, "kb_document_update", collection="garden", id=999, text="x"),
            await refused(
                client, "kb_document_update", collection="garden", path="nope.md", text="x"
            ),
            await refused(client, "kb_document_update", collection="garden", text="x"),
            await refused(client, "kb_document_remove", collection="nope", id=1),
            await refused(client, "kb_collection_remove", collection="nope"),
        ]
        still = await read(client, DOC.format(1))
        left = await collections(client)
    assert said[0].startswith("collection name 'Bad Name' is not valid")
    assert said[1].startswith("document path '../x' is not valid")
    assert said[2].startswith("collection 'garden' already has a document 'guide.md' (id 1)")
    assert said[3] == (
        "collection 'garden' has no document 999 "
        "(its documents: prixfixe://knowledge/garden/documents)"
    )
    assert said[4].startswith("collection 'garden' has no document 'nope.md'")
    assert said[5] == "give the document's id or its path, not both and not neither"
    assert said[6] == "unknown collection 'nope' (collections: garden)"
    assert said[7] == "unknown collection 'nope' (collections: garden)"
    assert still == GUIDE, "a refused write changes nothing"
    assert left == {"garden": 1}


async def test_text_over_the_limit_is_refused_naming_the_limit_and_nothing_is_written(
    app: App, revision: str
) -> None:
    big = "x" * (MAX_DOCUMENT_BYTES + 1)
    async with Client(build_server(app), mode=revision) as client:
        said = await refused(client, "kb_document_add", collection="big", path="a.md", text=big)
        left = await collections(client)
        fine = await ok(client, "kb_document_add", collection="small", path="a.md", text="ok")
    assert "the limit is 1,000,000" in said
    assert left == {}
    assert fine["change"] == "added"


async def next_event(sub: Subscription) -> Any:
    with anyio.fail_after(10):
        return await sub.__anext__()


async def test_a_subscriber_to_a_document_hears_exactly_one_update_when_it_changes(
    app: App,
) -> None:
    """The second document is a sentinel: notifications arrive in the order of the changes,
    so once its update has arrived, anything the first one's would have sent has too."""
    inbox = Inbox()
    async with Client(build_server(app), mode="legacy", message_handler=inbox) as client:
        await ok(client, "kb_document_add", collection="garden", path="a.md", text="# A\n")
        await ok(client, "kb_document_add", collection="garden", path="b.md", text="# B\n")
        await client.subscribe_resource(DOC.format(1))
        await client.subscribe_resource(DOC.format(2))
        await ok(client, "kb_document_update", collection="garden", id=1, text="# A, again\n")
        await ok(client, "kb_document_update", collection="garden", id=1, text="# A, again\n")
        await ok(client, "kb_document_update", collection="garden", id=2, text="# B, again\n")
        await inbox.wait_for(("updated", DOC.format(2)))
    assert inbox.items == [("updated", DOC.format(1)), ("updated", DOC.format(2))]


async def test_a_listening_stream_hears_each_change_to_a_document_once(app: App) -> None:
    async with Client(build_server(app), mode="2026-07-28") as client:
        await ok(client, "kb_document_add", collection="garden", path="a.md", text="# A\n")
        await ok(client, "kb_document_add", collection="garden", path="b.md", text="# B\n")
        async with client.listen(resource_subscriptions=[DOC.format(1), DOC.format(2)]) as sub:
            await ok(client, "kb_document_update", collection="garden", id=1, text="# A2\n")
            assert await next_event(sub) == ResourceUpdated(DOC.format(1))
            await ok(client, "kb_document_update", collection="garden", id=1, text="# A2\n")
            await ok(client, "kb_document_remove", collection="garden", id=2)
            assert await next_event(sub) == ResourceUpdated(DOC.format(2)), "unchanged: silent"
