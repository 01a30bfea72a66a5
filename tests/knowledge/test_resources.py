"""The knowledge base as resources, through the real protocol on both revisions: collections
listed with counts, every document in resources/list, a collection's documents page by page,
a document read whole, by section or by chunk span with an outline to choose from, stats,
health and search; names completed; nothing added to the default tools/list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from prixfixe.app import App
from prixfixe.knowledge import KNOWLEDGE_OWNER, catalog
from prixfixe.knowledge.chunking import Format
from prixfixe.knowledge.ingest import create_collection, put_text
from prixfixe.mcp.server import build_server
from prixfixe.store.api import OwnerSlice
from tests.conftest import CORE_TOOLS, AppFactory
from tests.knowledge.conftest import GUIDE, NOTES, Ingest

#: FTS5's index falling out of step with the chunks: on PostgreSQL each chunk's tsvector is a
#: generated column of its own row, which cannot.
SQLITE_ONLY = ("test_knowledge_health_says_degraded_when_chunks_are_missing_from_the_index",)

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
        "prixfixe://knowledge/{collection}/documents{?cursor}",
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
            ref("prixfixe://knowledge/{collection}/documents{?cursor}"),
            {"name": "collection", "value": "g"},
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


LAYERS = """Intro, before any heading.

# Alpha

alpha text

## Beta

beta text

### Gamma

gamma text

## Delta

delta text
"""
#: LAYERS' chunks, in order: the intro, then one per heading.
LAYER_CHUNKS = [
    "Intro, before any heading.\n\n",
    "# Alpha\n\nalpha text\n\n",
    "## Beta\n\nbeta text\n\n",
    "### Gamma\n\ngamma text\n\n",
    "## Delta\n\ndelta text\n",
]
BASE = "prixfixe://knowledge"


def put(kb: OwnerSlice, collection: str, path: str, text: str, fmt: Format = "markdown") -> int:
    """Write a document; its id."""
    put_text(kb, collection, path, text, fmt)
    return next(d.id for d in catalog.documents(kb, collection) if d.path == path)


async def read_text(client: Client, uri: str) -> str:
    (content,) = (await client.read_resource(uri)).contents
    assert isinstance(content, types.TextResourceContents)
    return content.text


async def read_json(client: Client, uri: str) -> Any:
    return json.loads(await read_text(client, uri))


async def not_found(client: Client, uri: str, revision: str) -> str:
    """Read `uri`, which must be not found in the revision's code with the URI; the message."""
    with pytest.raises(MCPError) as caught:
        await client.read_resource(uri)
    assert caught.value.code == NOT_FOUND[revision]
    assert caught.value.data == {"uri": uri}
    return caught.value.message


async def test_every_document_is_listed_in_resources_list_with_path_title_size_and_type(
    app: App, kb: OwnerSlice, revision: str
) -> None:
    doc = put(kb, "manual", "layers.md", LAYERS)
    async with Client(build_server(app), mode=revision) as client:
        listed = {r.uri: r for r in (await client.list_resources()).resources}
    entry = listed[f"{BASE}/manual/document/{doc}"]
    assert (entry.name, entry.title, entry.mime_type, entry.size) == (
        "layers.md",
        "Alpha",
        "text/markdown",
        len(LAYERS),
    )
    assert entry.annotations is not None
    assert entry.annotations.audience == ["assistant"]
    assert {"prixfixe://knowledge/health", "prixfixe://system/health"} <= set(listed)


async def test_paging_resources_list_through_many_documents_returns_each_once_in_uri_order(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[], config="[resources]\npage_size = 7\n")
    kb = app.store.slice(KNOWLEDGE_OWNER)
    for collection, count in (("a-b", 12), ("a", 15), ("zeta", 3)):
        for n in range(count):
            put_text(kb, collection, f"note-{n:02d}.md", f"# Note {n}\n\nabout {collection}\n")
    async with Client(build_server(app), mode=revision) as client:
        pages: list[list[str]] = []
        cursor: str | None = None
        while True:
            page = await client.list_resources(cursor=cursor)
            pages.append([r.uri for r in page.resources])
            cursor = page.next_cursor
            if cursor is None:
                break
    seen = [uri for page in pages for uri in page]
    documents = [uri for uri in seen if "/document/" in uri]
    assert len(documents) == 30
    assert len(seen) == len(set(seen)), "no resource is listed twice"
    assert seen == sorted(seen), "static resources and documents interleave by URI"
    assert all(len(page) == 7 for page in pages[:-1])
    assert 1 <= len(pages[-1]) <= 7
    assert "prixfixe://knowledge/collections" in seen


async def test_a_documents_listing_pages_by_path_and_next_reads_the_rest(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[], config="[resources]\npage_size = 2\n")
    kb = app.store.slice(KNOWLEDGE_OWNER)
    paths = [f"n{n}.md" for n in (3, 1, 4, 5, 9)]
    for path in paths:
        put_text(kb, "notes", path, f"# {path}\n")
    create_collection(kb, "empty")
    async with Client(build_server(app), mode=revision) as client:
        text = await read_text(client, f"{BASE}/notes/documents")
        first = json.loads(text)
        empty = await read_json(client, f"{BASE}/empty/documents")
        listed, pages, uri = [], 0, f"{BASE}/notes/documents"
        while uri:
            page = await read_json(client, uri)
            listed += [d["path"] for d in page["documents"]]
            pages, uri = pages + 1, page["next"]
        with pytest.raises(MCPError) as caught:
            await client.read_resource(f"{BASE}/notes/documents?cursor=bogus")
    assert listed == sorted(paths)
    assert pages == 3
    assert first["next"].startswith(f"{BASE}/notes/documents?cursor=")
    assert first["outline"] == f"{BASE}/notes/document/{{id}}/outline"
    assert len(text.splitlines()) == 4, "compact: a line per document between two"
    assert (empty["documents"], empty["next"]) == ([], None)
    assert caught.value.code == -32602
    assert caught.value.message.startswith(
        f"invalid cursor for {BASE}/notes/documents: it is not a cursor this server issued"
    )
    assert caught.value.data == {"uri": f"{BASE}/notes/documents?cursor=bogus"}


async def test_the_outline_shows_each_section_with_its_level_size_and_uri(
    app: App, kb: OwnerSlice, revision: str
) -> None:
    doc = put(kb, "manual", "layers.md", LAYERS)
    async with Client(build_server(app), mode=revision) as client:
        outline = await read_json(client, f"{BASE}/manual/document/{doc}/outline")
    sizes = [len(chunk) for chunk in LAYER_CHUNKS]
    assert outline["title"] == "Alpha"
    assert outline["chunks"] == 5
    assert outline["bytes"] == len(LAYERS)
    assert [
        (s["seq"], s["heading"], s["level"], s["chunks"], s["bytes"]) for s in outline["sections"]
    ] == [
        (0, "", 0, 1, sizes[0]),
        (1, "Alpha", 1, 4, sum(sizes[1:])),
        (2, "Beta", 2, 2, sizes[2] + sizes[3]),
        (3, "Gamma", 3, 1, sizes[3]),
        (4, "Delta", 2, 1, sizes[4]),
    ]
    assert outline["sections"][0]["start"] == "Intro, before any heading."
    assert outline["sections"][2]["uri"] == f"{BASE}/manual/document/{doc}/section/2"


async def test_a_section_is_its_chunk_and_the_deeper_headings_after_it(
    app: App, kb: OwnerSlice, revision: str
) -> None:
    doc = put(kb, "manual", "layers.md", LAYERS)
    text = put(kb, "manual", "plain.txt", NOTES, "text")
    async with Client(build_server(app), mode=revision) as client:
        got = {
            seq: await read_text(client, f"{BASE}/manual/document/{doc}/section/{seq}")
            for seq in range(5)
        }
        plain = await read_text(client, f"{BASE}/manual/document/{text}/section/0")
        mime = (await client.read_resource(f"{BASE}/manual/document/{doc}/section/2")).contents
    assert got == {
        0: LAYER_CHUNKS[0],
        1: "".join(LAYER_CHUNKS[1:]),
        2: LAYER_CHUNKS[2] + LAYER_CHUNKS[3],
        3: LAYER_CHUNKS[3],
        4: LAYER_CHUNKS[4],
    }
    assert plain == NOTES, "a plain-text chunk is a section of one chunk"
    assert mime[0].mime_type == "text/markdown"


async def test_chunk_spans_read_inclusive_ranges(app: App, kb: OwnerSlice, revision: str) -> None:
    doc = put(kb, "manual", "layers.md", LAYERS)
    async with Client(build_server(app), mode=revision) as client:
        one = await read_text(client, f"{BASE}/manual/document/{doc}/chunks/3")
        span = await read_text(client, f"{BASE}/manual/document/{doc}/chunks/1-3")
        every = await read_text(client, f"{BASE}/manual/document/{doc}/chunks/0-4")
    assert one == LAYER_CHUNKS[3]
    assert span == "".join(LAYER_CHUNKS[1:4])
    assert every == LAYERS


@pytest.mark.parametrize(
    ("span", "says"),
    [
        ("5", "past the last chunk"),
        ("3-9", "past the last chunk"),
        ("4-2", "ends before it starts"),
        ("x", "is not a chunk number or a range"),
        ("1-", "is not a chunk number or a range"),
    ],
)
async def test_a_bad_chunk_span_is_not_found_naming_the_span_and_the_chunk_count(
    app: App, kb: OwnerSlice, span: str, says: str
) -> None:
    doc = put(kb, "manual", "layers.md", LAYERS)
    async with Client(build_server(app), mode="2026-07-28") as client:
        message = await not_found(
            client, f"{BASE}/manual/document/{doc}/chunks/{span}", "2026-07-28"
        )
    assert f"chunk span {span!r}" in message
    assert says in message
    assert "the document has 5 chunks (0-4)" in message


async def test_a_span_over_the_bound_is_refused_naming_the_bound(app: App, kb: OwnerSlice) -> None:
    many = "".join(f"# H{n}\n\nbody\n\n" for n in range(120))
    doc = put(kb, "manual", "many.md", many)
    async with Client(build_server(app), mode="legacy") as client:
        message = await not_found(client, f"{BASE}/manual/document/{doc}/chunks/0-100", "legacy")
        whole = await read_text(client, f"{BASE}/manual/document/{doc}/chunks/10-109")
    assert "is 101 chunks; one read returns at most 100" in message
    assert whole.startswith("# H10\n")
    assert whole.endswith("# H109\n\nbody\n\n")


async def test_unknown_collections_documents_and_sections_are_not_found_with_the_uri(
    app: App, kb: OwnerSlice, revision: str
) -> None:
    doc = put(kb, "manual", "layers.md", LAYERS)
    async with Client(build_server(app), mode=revision) as client:
        for uri, says in (
            (f"{BASE}/manual/document/{doc}/section/5", "no section '5'"),
            (f"{BASE}/manual/document/{doc}/section/x", "no section 'x'"),
            (f"{BASE}/manual/document/{doc}/section/%C2%B2", "no section '²'"),
            (f"{BASE}/manual/document/{'9' * 30}/section/0", "document ids are numbers"),
            (f"{BASE}/manual/document/%C2%B2", "document ids are numbers"),
            (f"{BASE}/manual/document/999/outline", "has no document 999"),
            (f"{BASE}/manual/document/999/section/0", "has no document 999"),
            (f"{BASE}/nope/document/{doc}/chunks/0", "has no document"),
            (f"{BASE}/nope/stats", "unknown collection 'nope'"),
            (f"{BASE}/nope/documents?cursor=x", "unknown collection 'nope'"),
        ):
            assert says in await not_found(client, uri, revision)


async def test_collection_stats_count_documents_chunks_bytes_formats_and_the_largest(
    app: App, kb: OwnerSlice, revision: str
) -> None:
    layers = put(kb, "manual", "layers.md", LAYERS)
    put(kb, "manual", "plain.txt", NOTES, "text")
    put(kb, "manual", "tiny.md", "# Tiny\n")
    put(kb, "other", "elsewhere.md", "# Elsewhere\n")
    async with Client(build_server(app), mode=revision) as client:
        stats = await read_json(client, f"{BASE}/manual/stats")
        health = await read_json(client, f"{BASE}/health")
    assert {k: v for k, v in stats.items() if k != "last_change_gen"} == {
        "collection": "manual",
        "documents": 3,
        "chunks": 7,
        "bytes": len(LAYERS) + len(NOTES) + len("# Tiny\n"),
        "formats": {"markdown": 2, "text": 1},
        "largest": [
            {"path": "layers.md", "bytes": len(LAYERS), "uri": f"{BASE}/manual/document/{layers}"},
            {"path": "plain.txt", "bytes": len(NOTES), "uri": stats["largest"][1]["uri"]},
            {"path": "tiny.md", "bytes": 7, "uri": stats["largest"][2]["uri"]},
        ],
        "documents_uri": f"{BASE}/manual/documents",
    }
    assert 1 <= stats["last_change_gen"] < health["last_change_gen"]


async def test_knowledge_health_reports_the_index_counts_collections_and_search_mode(
    app: App, kb: OwnerSlice, revision: str
) -> None:
    put(kb, "manual", "layers.md", LAYERS)
    put(kb, "other", "plain.txt", NOTES, "text")
    async with Client(build_server(app), mode=revision) as client:
        health = await read_json(client, f"{BASE}/health")
    generation = health.pop("store_generation")
    assert health == {
        "format": "prixfixe.knowledge-health/1",
        "status": "ok",
        "problems": [],
        "search_mode": "keyword",
        "collections": 2,
        "documents": 2,
        "bytes": len(LAYERS) + len(NOTES),
        "collection_names": ["manual", "other"],
        "last_change_gen": health["last_change_gen"],
        "chunks": 6,
        "index": {"state": "ok", "chunks": 6, "indexed": 6, "missing": 0, "orphans": 0},
    }
    assert 1 <= health["last_change_gen"] <= generation


async def test_knowledge_health_says_degraded_when_chunks_are_missing_from_the_index(
    app: App, kb: OwnerSlice
) -> None:
    put(kb, "manual", "layers.md", LAYERS)
    # What a crash between a chunk's write and its index entry would leave behind.
    kb.execute(
        "DELETE FROM {prefix}chunks_fts_docsize WHERE id = (SELECT MIN(id) FROM {prefix}chunks)"
    )
    async with Client(build_server(app), mode="legacy") as client:
        health = await read_json(client, f"{BASE}/health")
    assert health["status"] == "degraded"
    assert health["index"] == {
        "state": "out of step",
        "chunks": 5,
        "indexed": 4,
        "missing": 1,
        "orphans": 0,
    }
    assert health["problems"] == [
        "index: 1 chunks are not indexed and 0 index entries have no chunk: search misses or "
        "mis-ranks them until the index is rebuilt"
    ]


async def test_search_as_a_resource_lists_hits_with_section_and_document_uris_in_markdown(
    app: App, kb: OwnerSlice, revision: str
) -> None:
    doc = put(kb, "manual", "layers.md", LAYERS)
    put(kb, "other", "gamma.md", "# Gamma rays\n\nNot this gamma.\n")
    uri = f"{BASE}/search?q=gamma&collection=manual&limit=5"
    async with Client(build_server(app), mode=revision) as client:
        result = await client.read_resource(uri)
        empty = await read_text(client, f"{BASE}/search?q=wombat")
    (content,) = result.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.mime_type == "text/markdown"
    assert content.text == (
        '1 hit for "gamma" (keyword search, collection=manual)\n'
        "\n"
        "1. Gamma · layers.md · manual\n"
        f"   section: {BASE}/manual/document/{doc}/section/3\n"
        f"   document: {BASE}/manual/document/{doc}\n"
        "   > ### **Gamma** **gamma** text\n"
    )
    assert empty == (
        '0 hits for "wombat" (keyword search)\n'
        "Nothing matched: try other or fewer words, or fewer filters.\n"
    )


async def test_a_search_without_words_or_with_a_bad_limit_or_collection_names_the_variable(
    app: App, kb: OwnerSlice, revision: str
) -> None:
    put(kb, "manual", "layers.md", LAYERS)
    async with Client(build_server(app), mode=revision) as client:
        for uri, says in (
            (f"{BASE}/search", "search needs words to look for in q"),
            (f"{BASE}/search?q=%20", "search needs words to look for in q"),
            (f"{BASE}/search?q=%21%21", "has no words to look for"),
            (f"{BASE}/search?q=gamma&limit=0", "limit '0' is not a number of hits"),
            (f"{BASE}/search?q=gamma&limit=many", "limit 'many' is not a number of hits"),
            (f"{BASE}/search?q=gamma&collection=nope", "unknown collection 'nope'"),
        ):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            assert caught.value.code == -32602
            assert says in caught.value.message
            assert caught.value.data is not None
            assert caught.value.data["uri"] == uri


async def test_search_completes_collections_and_formats(
    app: App, kb: OwnerSlice, revision: str
) -> None:
    put(kb, "manual", "layers.md", LAYERS)
    put(kb, "other", "plain.txt", NOTES, "text")
    template = ref("prixfixe://knowledge/search{?q,collection,path,format,limit}")
    async with Client(build_server(app), mode=revision) as client:
        names = await client.complete(template, {"name": "collection", "value": "m"})
        formats = await client.complete(template, {"name": "format", "value": ""})
    assert names.completion.values == ["manual"]
    assert formats.completion.values == ["markdown", "text"]


async def test_the_documents_template_with_a_cursor_still_matches_the_plain_uri() -> None:
    from mcp import UriTemplate

    parsed = UriTemplate.parse(catalog.DOCUMENTS_TEMPLATE)
    assert parsed.match(catalog.documents_uri("garden")) == {"collection": "garden"}
    assert parsed.match(catalog.documents_uri("garden", "a b/c")) == {
        "collection": "garden",
        "cursor": "a b/c",
    }


async def test_a_damaged_store_leaves_the_listing_up_and_health_says_why(
    make_app: AppFactory, tmp_path: Path, revision: str, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "store.sqlite3").write_bytes(b"not a database, " * 512)
    app = make_app(plugins=[])
    async with Client(build_server(app), mode=revision) as client:
        listed = {r.uri for r in (await client.list_resources()).resources}
        health = await read_json(client, f"{BASE}/health")
    assert {"prixfixe://system/health", f"{BASE}/health"} <= listed
    assert health["status"] == "degraded"
    assert health["problems"][0].startswith("store: ")
    assert "lister of prixfixe://knowledge/{collection}/document/{id} failed" in caplog.text
