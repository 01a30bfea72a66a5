"""resources/list, resources/templates/list and resources/read through a real client, on both
protocol revisions: paging, text and binary contents, and the error codes."""

from __future__ import annotations

import base64
import json

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from prixfixe.core.paging import encode_cursor
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.plugin_fixtures import PNG, ResourcesPlugin

pytestmark = pytest.mark.anyio

NOT_FOUND = {"legacy": -32002, "2026-07-28": -32602}


async def test_paging_through_1000_resources_returns_each_exactly_once(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[ResourcesPlugin(count=1000)], config="[resources]\npage_size = 64\n")
    seen: list[str] = []
    pages = 0
    async with Client(build_server(app), mode=revision) as client:
        cursor: str | None = None
        while True:
            page = await client.list_resources(cursor=cursor)
            pages += 1
            assert len(page.resources) <= 64
            seen += [r.uri for r in page.resources]
            cursor = page.next_cursor
            if cursor is None:
                break
    items = [u for u in seen if u.startswith("fixture://items/")]
    assert sorted(items) == [f"fixture://items/{i:05d}" for i in range(1000)]
    assert len(seen) == len(set(seen)), "no resource is listed twice"
    assert pages == -(-len(seen) // 64)


async def test_listed_resources_carry_their_declared_fields_and_annotations(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[ResourcesPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        listed = {r.uri: r for r in (await client.list_resources()).resources}
    logo = listed["fixture://logo.png"]
    assert (logo.name, logo.mime_type, logo.size) == ("logo", "image/png", len(PNG))
    assert logo.annotations is not None
    assert logo.annotations.audience == ["user"]
    assert logo.annotations.priority == 0.2
    assert logo.annotations.last_modified == "2026-01-02T03:04:05Z"
    assert "fixture://huge" not in listed, "listed=False keeps it out of the listing"
    assert "prixfixe://system/health" in listed


async def test_a_cursor_stays_valid_while_resources_are_added(make_app: AppFactory) -> None:
    from prixfixe import Resource

    app = make_app(plugins=[ResourcesPlugin(count=10)], config="[resources]\npage_size = 4\n")
    async with Client(build_server(app), mode="legacy") as client:
        first = await client.list_resources()
        # A plugin adds a resource that sorts before the page boundary: it does not shift
        # the next page (keyset, not offset), so nothing is repeated or skipped after it.
        app.registry.add_plugin(
            "late", resources=[Resource(uri="aaa://first", name="a", reader=lambda c, v: "")]
        )
        rest: list[str] = []
        cursor = first.next_cursor
        while cursor is not None:
            page = await client.list_resources(cursor=cursor)
            rest += [r.uri for r in page.resources]
            cursor = page.next_cursor
    before = [r.uri for r in first.resources]
    assert not set(before) & set(rest)
    assert "aaa://first" not in rest
    assert sorted(before + rest) == before + rest


async def test_an_invalid_cursor_is_invalid_params(make_app: AppFactory, revision: str) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        other_listing = encode_cursor("resources/templates/list", "x")
        for cursor in ("not a cursor!", "eyJ4IjoxfQ", other_listing):
            with pytest.raises(MCPError) as caught:
                await client.list_resources(cursor=cursor)
            assert caught.value.code == -32602
            assert "invalid cursor for resources/list" in caught.value.message
        with pytest.raises(MCPError) as caught:
            await client.list_resource_templates(cursor="%%%")
        assert caught.value.code == -32602


async def test_templates_are_listed_with_their_uri_templates(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[ResourcesPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        result = await client.list_resource_templates()
    templates = {t.uri_template: t for t in result.resource_templates}
    assert set(templates) == {
        "fixture://notes/{name}",
        "prixfixe://store/{kind}/{id}",
        "prixfixe://knowledge/{collection}/documents{?cursor}",
        "prixfixe://knowledge/{collection}/document/{id}",
        "prixfixe://knowledge/{collection}/document/{id}/outline",
        "prixfixe://knowledge/{collection}/document/{id}/section/{seq}",
        "prixfixe://knowledge/{collection}/document/{id}/chunks/{span}",
        "prixfixe://knowledge/{collection}/stats",
        "prixfixe://knowledge/search{?q,collection,path,format,limit}",
    }
    assert templates["fixture://notes/{name}"].mime_type == "text/markdown"
    assert result.next_cursor is None


async def test_reading_text_and_binary_gives_the_right_contents_and_mime_types(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[ResourcesPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        text = await client.read_resource("fixture://items/00002")
        blob = await client.read_resource("fixture://logo.png")
        note = await client.read_resource("fixture://notes/alpha")
    (t,) = text.contents
    assert (t.uri, t.mime_type, t.text) == ("fixture://items/00002", "text/plain", "item 2\n")  # type: ignore[union-attr]
    (b,) = blob.contents
    assert b.mime_type == "image/png"
    assert base64.b64decode(b.blob) == PNG  # type: ignore[union-attr]
    (n,) = note.contents
    assert (n.mime_type, n.text) == ("text/markdown", "# Alpha\n")  # type: ignore[union-attr]


async def test_not_found_uses_the_code_of_the_negotiated_revision_with_the_uri(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[ResourcesPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        for uri in (
            "fixture://nothing-here",
            "fixture://notes/gamma",
            "prixfixe://store/reminder/9",
        ):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            assert caught.value.code == NOT_FOUND[revision]
            assert caught.value.data == {"uri": uri}
            assert uri in caught.value.message


async def test_a_failing_reader_is_an_internal_error_naming_the_uri_and_the_cause(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[ResourcesPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource("fixture://broken")
        # ...and the server keeps serving.
        ok = await client.read_resource("fixture://counter")
    assert caught.value.code == -32603
    assert caught.value.message == (
        "reading fixture://broken failed: RuntimeError: the fixture reader failed on purpose"
    )
    assert caught.value.data == {"uri": "fixture://broken"}
    assert ok.contents[0].text == "counter=0\n"  # type: ignore[union-attr]


async def test_reads_over_the_configured_bound_are_refused_clearly(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[ResourcesPlugin()], config="[resources]\nmax_read_bytes = 2048\n")
    async with Client(build_server(app), mode=revision) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource("fixture://huge")
        small = await client.read_resource("fixture://items/00000")
    assert caught.value.code == -32603
    assert "is 5,000 bytes; reads are bounded at 2,048 bytes" in caught.value.message
    assert "max_read_bytes" in caught.value.message
    assert small.contents[0].text == "item 0\n"  # type: ignore[union-attr]


async def test_a_store_record_is_readable_as_json(make_app: AppFactory, revision: str) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        await client.call_tool(
            "store_put", {"kind": "deadline", "record": {"label": "taxes", "date": "2026-04-30"}}
        )
        result = await client.read_resource("prixfixe://store/deadline/1")
    (contents,) = result.contents
    assert contents.mime_type == "application/json"
    document = json.loads(contents.text)  # type: ignore[union-attr]
    assert document["record"] == {"label": "taxes", "date": "2026-04-30", "notes": None}
    assert (document["kind"], document["id"], document["closed"]) == ("deadline", 1, False)
