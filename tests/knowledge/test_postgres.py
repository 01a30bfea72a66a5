"""One knowledge base for every instance on one PostgreSQL database: documents ingested
through one app are searched and read through another, re-ingest is incremental by hash,
a file deleted leaves search on both, the other instance's subscribers hear of each change,
and a query is words whatever it holds. Two apps, one fresh database each test; without
PostgreSQL's programs these tests fail, never skip (as in tests/store)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from prixfixe.app import App
from prixfixe.config import STORE_URL_ENV
from prixfixe.errors import KnowledgeError
from prixfixe.knowledge import KNOWLEDGE_OWNER, catalog
from prixfixe.knowledge.backend import KnowledgeTables, postgres, tables_of
from prixfixe.knowledge.ingest import IngestResult, ingest, put_text
from prixfixe.knowledge.pg import glob_regex
from prixfixe.knowledge.search import find, search
from prixfixe.leash.fs import FsGate, FsGrant
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.resources.conftest import Inbox

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


@pytest.fixture
def two(make_app: AppFactory, postgres_url: str, tmp_path: Path) -> Iterator[tuple[App, App]]:
    """Two apps, each with its own home (its own local file), on one database."""
    env = {STORE_URL_ENV: postgres_url}
    a = make_app(plugins=[], env={**env, "PRIXFIXE_HOME": str(tmp_path / "a")})
    b = make_app(plugins=[], env={**env, "PRIXFIXE_HOME": str(tmp_path / "b")})
    yield a, b
    a.close_store()
    b.close_store()


def _tables(app: App) -> KnowledgeTables:
    tables = tables_of(app.store)
    assert postgres(tables) is not None
    return tables


def _ingest(app: App, folder: Path) -> IngestResult:
    return ingest(_tables(app), FsGate(FsGrant((folder,), (), "test")), folder, "garden")


def _paths(tables: KnowledgeTables, word: str) -> list[str]:
    return sorted(hit.path for hit in search(tables, word))


def _text(result: Any) -> str:
    return str(result.contents[0].text)


async def test_a_document_ingested_through_one_instance_is_searched_and_read_through_another(
    two: tuple[App, App], folder: Path
) -> None:
    a, b = two
    assert _ingest(a, folder).added == ["deep/bees.md", "guide.md", "notes.txt"]
    kb_b = _tables(b)
    assert _paths(kb_b, "honey") == ["deep/bees.md"]
    assert _paths(kb_b, "pruning") == ["guide.md"]  # stemmed: Prune
    guide = next(d for d in catalog.documents(kb_b, "garden") if d.path == "guide.md")
    async with Client(build_server(b)) as client:
        read = await client.read_resource(catalog.document_uri("garden", guide.id))
        assert _text(read) == (folder / "guide.md").read_text()
        found = _text(await client.read_resource("prixfixe://knowledge/search?q=quokka"))
    assert found.splitlines()[0] == '1 hit for "quokka" (keyword search)'
    assert f"section: {catalog.section_uri('garden', guide.id, 1)}" in found
    assert "**quokka**" in found


def test_re_ingesting_an_unchanged_folder_writes_nothing_on_the_database(
    two: tuple[App, App], folder: Path
) -> None:
    a, b = two
    _ingest(a, folder)
    before = b.store.generation()
    again = _ingest(b, folder)
    assert (again.added, again.updated, again.removed, again.generation) == ([], [], [], None)
    assert sorted(again.unchanged) == ["deep/bees.md", "guide.md", "notes.txt"]
    assert b.store.generation() == a.store.generation() == before


def test_a_deleted_file_leaves_search_on_both_instances(two: tuple[App, App], folder: Path) -> None:
    a, b = two
    _ingest(a, folder)
    assert _paths(_tables(b), "wombats") == ["notes.txt"]
    (folder / "notes.txt").unlink()
    assert _ingest(b, folder).removed == ["notes.txt"]
    assert _paths(_tables(a), "wombats") == _paths(_tables(b), "wombats") == []
    assert _tables(a).query("SELECT COUNT(*) FROM {prefix}chunks WHERE body LIKE ?", ["%wombat%"])
    assert [d.path for d in catalog.documents(_tables(a), "garden")] == [
        "deep/bees.md",
        "guide.md",
    ]


async def test_the_other_instance_s_subscribers_hear_of_a_change_once(
    two: tuple[App, App],
) -> None:
    a, b = two
    kb_a = _tables(a)
    put_text(kb_a, "notes", "watched.md", "# Watched\n\nfirst version\n")
    watched = catalog.document_uri("notes", catalog.documents(kb_a, "notes")[0].id)
    inbox = Inbox()
    async with Client(build_server(b), mode="legacy", message_handler=inbox) as client:
        assert watched in [r.uri for r in (await client.list_resources()).resources]
        assert "first version" in _text(await client.read_resource(watched))
        await client.subscribe_resource(watched)
        put_text(kb_a, "notes", "watched.md", "# Watched\n\nsecond version\n")
        await inbox.wait_for(("updated", watched))
        put_text(kb_a, "notes", "other.md", "# Other\n\nnew\n")  # a listing changed
        await inbox.wait_for(("resources_list_changed", None))
        assert "second version" in _text(await client.read_resource(watched))
    assert inbox.updated(watched) == 1


async def test_the_slice_the_cli_and_watched_folders_use_writes_the_shared_knowledge_base(
    two: tuple[App, App], folder: Path
) -> None:
    """`prixfixe kb` and configured folders reach the knowledge base through the store's
    slice (`app.store.slice`): on PostgreSQL that is the shared database too, and the other
    instance's subscribers hear of what they write."""
    a, b = two
    kb_a = a.store.slice(KNOWLEDGE_OWNER)
    assert postgres(kb_a) is not None
    ingest(kb_a, FsGate(FsGrant((folder,), (), "test")), folder, "garden")
    guide = next(d for d in catalog.documents(_tables(b), "garden") if d.path == "guide.md")
    watched = catalog.document_uri("garden", guide.id)
    inbox = Inbox()
    async with Client(build_server(b), mode="legacy", message_handler=inbox) as client:
        await client.list_resources()
        await client.subscribe_resource(watched)
        (folder / "guide.md").write_text("# Garden guide\n\nNow about cacti.\n", encoding="utf-8")
        (folder / "notes.txt").unlink()
        result = ingest(kb_a, FsGate(FsGrant((folder,), (), "test")), folder, "garden")
        assert (result.updated, result.removed) == (["guide.md"], ["notes.txt"])
        await inbox.wait_for(("resources_list_changed", None))
        assert "cacti" in _text(await client.read_resource(watched))
    assert inbox.items == [("updated", watched), ("resources_list_changed", None)]
    assert _paths(_tables(b), "cacti") == ["guide.md"]


def test_kb_commands_of_two_homes_share_the_knowledge_base_on_one_database(
    postgres_url: str, folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from prixfixe.cli import cli

    monkeypatch.setenv(STORE_URL_ENV, postgres_url)
    runner = CliRunner()

    def kb(home: str, *args: str) -> Any:
        monkeypatch.setenv("PRIXFIXE_HOME", str(tmp_path / home))
        result = runner.invoke(cli, ["kb", *args, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    added = kb("a", "add", str(folder), "--collection", "garden", "--grant")
    assert sorted(added["added"]) == ["deep/bees.md", "guide.md", "notes.txt"]
    again = kb("b", "add", str(folder), "--collection", "garden", "--grant")
    assert (again["added"], again["generation"], len(again["unchanged"])) == ([], None, 3)
    listed = kb("b", "list")
    assert [(c["name"], c["documents"], c["bytes"]) for c in listed] == [
        ("garden", 3, sum(len(p.read_bytes()) for p in folder.rglob("*.*")))
    ]
    assert kb("b", "search", "tomatoes")[0]["heading"] == "Watering"


HOSTILE = [
    'quokka" OR body MATCH "x',
    "quokka & !roses | (tomatoes <-> water):*",
    "quokka'; DROP TABLE knowledge_chunks; --",
    "\\quokka\\ \\\\ %s %(x)s ?",
    "NEAR(quokka roses) AND NOT *",
    "quokka " + "a" * 5000,
    "quokka " * 20000,
]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
async def test_a_hostile_query_is_words_never_tsquery_or_sql(
    two: tuple[App, App], folder: Path, query: str
) -> None:
    a, b = two
    _ingest(a, folder)
    found = find(_tables(a), query)
    assert "guide.md" in {hit.path for hit in found.hits}
    assert found.mode == "keyword"
    uri = f"prixfixe://knowledge/search?q={quote(query, safe='')}"
    async with Client(build_server(b)) as client:
        if len(uri) > 100_000:  # longer than a URI template matches: not found, never SQL
            with pytest.raises(MCPError, match=r"^resource not found"):
                await client.read_resource(uri)
            return
        text = _text(await client.read_resource(uri))
    assert "guide.md" in text
    assert "(keyword search)" in text.splitlines()[0]


@pytest.mark.parametrize("query", ["", "   ", "&|!<->:*()'\"\\", "-- ;"])
async def test_a_query_without_words_is_a_clear_error_never_sql_text(
    two: tuple[App, App], folder: Path, query: str
) -> None:
    a, _ = two
    _ingest(a, folder)
    with pytest.raises(KnowledgeError, match="no words to look for"):
        search(_tables(a), query)
    async with Client(build_server(a)) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(f"prixfixe://knowledge/search?q={quote(query, safe='')}")
    message = str(raised.value)
    assert "words" in message
    assert "syntax" not in message
    assert "psycopg" not in message


def test_stop_words_alone_find_nothing_and_hybrid_says_it_is_keyword_only(
    two: tuple[App, App], folder: Path
) -> None:
    a, _ = two
    _ingest(a, folder)
    assert find(_tables(a), "the and of").hits == []
    hybrid = find(_tables(a), "quokka", semantic=True)
    assert (hybrid.mode, [h.path for h in hybrid.hits]) == ("keyword", ["guide.md"])
    assert "PostgreSQL" in hybrid.note


GLOBS = {
    "deep/*": ["deep/bees.md"],
    "*.md": ["deep/bees.md", "guide.md"],
    "?otes.txt": ["notes.txt"],
    "[gn]*": ["guide.md", "notes.txt"],
    "[^gn]*": ["deep/bees.md"],
    "[z-a]*": [],
    "[]": [],
    "[[:alpha:]]*": [],
    "x{1,2}(\\": [],
    "*[": [],
}


@pytest.mark.parametrize("glob", GLOBS, ids=range(len(GLOBS)))
def test_a_path_glob_filters_as_sqlite_globs_do_and_is_never_a_regex_error(
    two: tuple[App, App], folder: Path, glob: str
) -> None:
    a, _ = two
    _ingest(a, folder)
    (folder / "notes.txt").write_text("honey honey bees quokka\n", encoding="utf-8")
    _ingest(a, folder)
    found = find(_tables(a), "honey bees quokka wombats", path=glob)
    assert sorted({hit.path for hit in found.hits}) == GLOBS[glob]
    assert glob_regex("notes/*.md") == "^notes\\/.*\\.md$"


async def test_a_nul_character_is_a_clear_refusal_never_a_driver_error(
    two: tuple[App, App], folder: Path
) -> None:
    a, _ = two
    _ingest(a, folder)
    with pytest.raises(KnowledgeError, match="NUL character"):
        find(_tables(a), "quokka", collection="gar\x00den")
    async with Client(build_server(a)) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("prixfixe://knowledge/search?q=quokka&collection=a%00b")
    assert "NUL character" in str(raised.value)
    with pytest.raises(KnowledgeError, match="NUL character"):
        put_text(_tables(a), "garden", "nul.md", "# Nul\n\n\x00\n")
    assert [d.path for d in catalog.documents(_tables(a), "garden")] == [
        "deep/bees.md",
        "guide.md",
        "notes.txt",
    ]
