"""Six real servers nobody here wrote, installed by scripts/test-servers.sh from PyPI
(`mcp-server-time`, `mcp-server-git`, `mcp-server-fetch`) and npm
(`@modelcontextprotocol/server-everything`, `-filesystem`, `-memory`), mounted through
`[servers.NAME]` and used through `mcp.Client` on prixfixe on both protocol revisions: search
finds a tool of each for a plain request, describe shows its schema, invoke calls it and
returns what the server itself returns to the SDK's own client, unchanged. Nothing leaves the
machine: fetch reads a page served on 127.0.0.1 here, git a repository made here, filesystem
and memory files here. With all six mounted, the default listing is the same seven tools."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from prixfixe.app import DEFAULT_TOKEN_BUDGET, DEFAULT_TOOL_BUDGET, App
from prixfixe.mcp.server import build_server
from prixfixe.tokens import count_tokens
from tests.search_text import searched
from tests.servers.conftest import text_of
from tests.servers.real_servers import Pages, Spec, by_name, loopback_pages, six

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def pages() -> Iterator[Pages]:
    with loopback_pages() as served:
        yield served


@pytest.fixture
def servers(tmp_path: Path) -> dict[str, Spec]:
    return by_name(six(tmp_path / "servers"))


def _app(make_app: Callable[..., App], specs: list[Spec]) -> App:
    env: dict[str, str] = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
    for spec in specs:
        env.update(spec.app_env())
    return make_app(config="".join(s.table() for s in specs), env=env, plugins=[])


async def _direct(spec: Spec, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The same calls made on the server by the SDK's own client, no prixfixe between."""
    params = StdioServerParameters(command=spec.command, args=list(spec.args), env=spec.env)
    async with Client(params, mode="legacy") as client:
        return [await client.call_tool(name, args) for name, args in calls]


def _same(through: Any, direct: Any) -> None:
    assert through.is_error == direct.is_error
    assert through.content == direct.content
    assert through.structured_content == direct.structured_content


@dataclass(frozen=True)
class Case:
    """A plain request that should find `tool`, what its description shows, and a call."""

    server: str
    query: str
    tool: str
    shows: tuple[str, ...]
    arguments: Callable[[Path, str], dict[str, Any]]


CASES = [
    Case(
        "time",
        "convert a time from one timezone to another",
        "convert_time",
        ("- source_timezone (string, required)", "- time (string, required)"),
        lambda _tmp, _url: {
            "source_timezone": "UTC",
            "time": "12:00",
            "target_timezone": "Asia/Tokyo",
        },
    ),
    Case(
        "git",
        "show the working tree status of a git repository",
        "git_status",
        ("- repo_path (string, required)",),
        lambda tmp, _url: {"repo_path": str(tmp / "servers" / "repo")},
    ),
    Case(
        "fetch",
        "fetch a web page from a URL and read it as markdown",
        "fetch",
        ("- url (uri, required)", "- max_length (integer, default 5000, 1..999999)"),
        lambda _tmp, url: {"url": f"{url}/page.html"},
    ),
    Case(
        "everything",
        "add two numbers and return their sum",
        "get-sum",
        ("- a (number, required)", "- b (number, required)"),
        lambda _tmp, _url: {"a": 2, "b": 40},
    ),
    Case(
        "filesystem",
        "read the complete contents of a text file",
        "read_text_file",
        ("- path (string, required)",),
        lambda tmp, _url: {"path": str(tmp / "servers" / "files" / "hello.txt")},
    ),
    Case(
        "memory",
        "search the knowledge graph for nodes matching a query",
        "search_nodes",
        ("- query (string, required)",),
        lambda _tmp, _url: {"query": "Ana"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.server for c in CASES])
async def test_a_real_servers_tool_is_found_described_and_called_unchanged(
    case: Case,
    servers: dict[str, Spec],
    make_app: Callable[..., App],
    tmp_path: Path,
    pages: Pages,
    revision: str,
) -> None:
    spec = servers[case.server]
    name = f"{case.server}.{case.tool}"
    arguments = case.arguments(tmp_path, pages.url)
    app = _app(make_app, [spec])
    async with Client(build_server(app), mode=revision) as client:
        found = await client.call_tool("tool_search", {"query": case.query})
        described = await client.call_tool("tool_describe", {"name": name})
        called = await client.call_tool("tool_invoke", {"name": name, "arguments": arguments})
    (direct,) = await _direct(spec, [(case.tool, arguments)])
    assert name in searched(found).names[:3], searched(found).text
    shown = text_of(described)
    assert shown.startswith(f"{name} ("), shown
    for fragment in case.shows:
        assert fragment in shown, shown
    upstream = {t.name: t for t in app.servers.catalogued(case.server) or []}
    assert app.registry.get(name).wire.input_schema == upstream[case.tool].input_schema
    assert not called.is_error, text_of(called)
    _same(called, direct)


async def test_fetch_reads_the_loopback_page_and_its_robots_txt(
    servers: dict[str, Spec], make_app: Callable[..., App], pages: Pages
) -> None:
    app = _app(make_app, [servers["fetch"]])
    async with Client(build_server(app), mode="legacy") as client:
        called = await client.call_tool(
            "tool_invoke", {"name": "fetch.fetch", "arguments": {"url": f"{pages.url}/page.html"}}
        )
    assert "prixfixe reached this page on 127.0.0.1 only." in text_of(called)
    assert pages.seen == ["/robots.txt", "/page.html"]


async def test_git_shows_the_unstaged_change_in_the_repository_made_here(
    servers: dict[str, Spec], make_app: Callable[..., App], tmp_path: Path
) -> None:
    app = _app(make_app, [servers["git"]])
    repo = str(tmp_path / "servers" / "repo")
    async with Client(build_server(app), mode="legacy") as client:
        diff = await client.call_tool(
            "tool_invoke", {"name": "git.git_diff_unstaged", "arguments": {"repo_path": repo}}
        )
        log = await client.call_tool(
            "tool_invoke", {"name": "git.git_log", "arguments": {"repo_path": repo}}
        )
    assert "+second line" in text_of(diff)
    assert "Add the notes" in text_of(log)


async def test_memory_keeps_what_prixfixe_wrote_for_a_direct_client_to_read(
    servers: dict[str, Spec], make_app: Callable[..., App]
) -> None:
    spec = servers["memory"]
    entity = {"name": "Ana", "entityType": "person", "observations": ["mounts six servers"]}
    app = _app(make_app, [spec])
    async with Client(build_server(app), mode="legacy") as client:
        created = await client.call_tool(
            "tool_invoke", {"name": "memory.create_entities", "arguments": {"entities": [entity]}}
        )
        graph = await client.call_tool("tool_invoke", {"name": "memory.read_graph"})
    assert not created.is_error, text_of(created)
    (direct,) = await _direct(spec, [("read_graph", {})])
    _same(graph, direct)
    assert json.loads(text_of(direct))["entities"][0]["name"] == "Ana"


async def test_an_image_from_a_real_server_passes_through_unchanged(
    servers: dict[str, Spec], make_app: Callable[..., App]
) -> None:
    spec = servers["everything"]
    app = _app(make_app, [spec])
    async with Client(build_server(app), mode="legacy") as client:
        called = await client.call_tool("tool_invoke", {"name": "everything.get-tiny-image"})
    (direct,) = await _direct(spec, [("get-tiny-image", {})])
    assert any(isinstance(c, types.ImageContent) for c in called.content)
    _same(called, direct)


async def _listing(app: App, revision: str) -> str:
    async with Client(build_server(app), mode=revision) as client:
        await client.call_tool("tool_search", {"query": "time"})  # every list read in
        tools = (await client.list_tools()).tools
    wire = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    return json.dumps(wire, separators=(",", ":"), ensure_ascii=False)


async def test_with_all_six_mounted_the_listing_is_the_same_seven_tools_in_budget(
    servers: dict[str, Spec], make_app: Callable[..., App], tmp_path: Path, revision: str
) -> None:
    bare = await _listing(make_app(plugins=[]), revision)
    app = _app(make_app, list(servers.values()))
    mounted = await _listing(app, revision)
    counts = {name: len(app.servers.catalogued(name) or []) for name in servers}
    assert all(counts.values()), counts
    assert sum(counts.values()) >= 45
    assert mounted == bare
    assert len(json.loads(mounted)) <= DEFAULT_TOOL_BUDGET
    assert count_tokens(mounted) <= DEFAULT_TOKEN_BUDGET
