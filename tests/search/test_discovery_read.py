"""What the model reads of discovery (issue 29): honest, complete, cheap.

Through mcp.Client, with real third-party servers mounted (scripts/test-servers.sh): a right
tool ranked second is shown, not hidden as weak; a mounted memory server's tools rank above
prixfixe's own store for "remember ..."; the knowledge base is found by asking for it; the
result text never says "best" when the ranker is unsure; several phrasings in one search are
fused; the instructions list every mounted server and facet, one line each."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from prixfixe.app import App
from prixfixe.mcp.server import build_server
from tests.search_text import Searched, searched
from tests.servers.conftest import installed_server, ready
from tests.servers.real_servers import node, npm_server

pytestmark = pytest.mark.anyio


def _time_table() -> str:
    program = installed_server("time", "mcp-server-time")
    return f'[servers.time]\ncommand = "{program}"\nargs = ["--local-timezone=UTC"]\n'


def _memory_table(tmp: Path, description: str | None = None) -> str:
    return (
        "[servers.memory]\n"
        + (f"description = {json.dumps(description)}\n" if description else "")
        + f"command = {json.dumps(node())}\n"
        f"args = [{json.dumps(npm_server('server-memory'))}]\n"
        'start = "eager"\n'
        "[servers.memory.env]\n"
        'MEMORY_FILE_PATH = {env = "PFX_TEST_MEMORY_FILE"}\n'
    )


async def _search(app: App, arguments: dict[str, object]) -> Searched:
    async with app.serving(), Client(build_server(app), mode="legacy") as client:
        if app.config.model.servers:
            await ready(app)
        return searched(await client.call_tool("tool_search", arguments))


@pytest.mark.slow
async def test_what_time_is_it_in_tokyo_shows_get_current_time(
    make_app: Callable[..., App],
) -> None:
    app = make_app(config=_time_table())
    found = await _search(app, {"query": "What time is it in Tokyo right now?"})
    assert "time.get_current_time" in found.names
    assert "time.get_current_time" in found.names[:2]


@pytest.mark.slow
async def test_remember_a_fact_reaches_the_memory_servers_tools_and_claims_no_sure_match(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    """The memory server says nothing of itself and its tools speak of entities and
    observations: "remember" reaches them as a near-synonym of `memory` (their names), while
    prixfixe's store holds it only as a near-synonym of reminders. The words "works at" still
    favour the store (its `work_days`), so the result must not call that a sure match."""
    app = make_app(
        config=_memory_table(tmp_path),
        env={"PFX_TEST_MEMORY_FILE": str(tmp_path / "memory.jsonl")},
    )
    found = await _search(app, {"query": "Remember that Alice works at Acme", "limit": 8})
    assert any(n.startswith("memory.") for n in found.names), found.text
    assert found.sure == [], found.text


@pytest.mark.slow
async def test_a_servers_configured_description_is_searched_and_shown_in_the_contents(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    """A person can say what a server is for: their words are searched with its tools, and
    the table of contents shows them, before the server has ever been started too (a new
    home: no kept catalogue)."""
    said = "Long-term memory of facts about people, where they work and what they like."
    app = make_app(
        config=_memory_table(tmp_path, description=said),
        env={"PFX_TEST_MEMORY_FILE": str(tmp_path / "memory.jsonl")},
    )
    found = await _search(app, {"query": "Remember that Alice works at Acme", "limit": 8})
    assert found.names[0].startswith("memory."), found.text
    unstarted = make_app(
        config=_memory_table(tmp_path, description=said).replace("eager", "lazy"),
        env={"PRIXFIXE_HOME": str(tmp_path / "another-home")},
    )
    (line,) = [x for x in unstarted.instructions().splitlines() if x.startswith("- memory ")]
    assert line == f"- memory (mounted server, tools not read yet) {said}"


@pytest.mark.parametrize(
    "query",
    [
        "search the knowledge base",
        "look up in my notes",
        "find documentation about deployment",
        "search my docs",
    ],
)
async def test_the_kb_search_tool_is_found_first(make_app: Callable[..., App], query: str) -> None:
    found = await _search(make_app(), {"query": query})
    assert found.names[0] == "kb_search", found.text


async def test_several_phrasings_are_fused_by_each_tools_best_confidence(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    one = await _search(app, {"query": "temperature forecast for a city"})
    other = await _search(app, {"query": "search the knowledge base"})
    both = await _search(
        app, {"query": ["temperature forecast for a city", "search the knowledge base"]}
    )
    # Each phrasing's sure answer is a sure answer of the fused search, whatever the other
    # phrasing matched; the head names both phrasings.
    assert one.sure[:1] == ["weather.forecast"]
    assert other.sure[:1] == ["kb_search"]
    assert {"weather.forecast", "kb_search"} <= set(both.sure)
    assert both.good_match is True
    assert "temperature forecast for a city | search the knowledge base" in both.text
    # The same phrasing twice is the one-phrasing search.
    again = await _search(app, {"query": ["search the knowledge base"] * 2})
    assert again.names == other.names


async def test_a_list_of_phrasings_is_checked_and_named_in_the_error(
    make_app: Callable[..., App],
) -> None:
    async with Client(build_server(make_app()), mode="legacy") as client:
        empty = await client.call_tool("tool_search", {"query": []})
        too_many = await client.call_tool("tool_search", {"query": ["a"] * 11})
        blank = await client.call_tool("tool_search", {"query": ["  ", " "]})
        long_one = await client.call_tool("tool_search", {"query": ["ok", "q" * 1001]})
    for result in (empty, too_many, long_one):
        assert result.is_error is True
        assert "'query'" in result.content[0].text  # type: ignore[union-attr]
    assert blank.is_error is True
    assert "query is empty" in blank.content[0].text  # type: ignore[union-attr]


def test_a_result_never_calls_a_weak_first_hit_a_match() -> None:
    """"Matches" heads only a result whose first hit the ranker is sure of; a good but unsure
    one says "Possible matches"; without good_match no line is marked (all are near misses),
    and every hit is shown in rank order."""
    from prixfixe.tools.discovery import SearchMatch, SearchOutput, search_text

    hits = [
        SearchMatch(name=n, summary="x" * 300, facet="f", mutates=False, score=1.0, weak=weak)
        for n, weak in (("a", False), ("b", True), ("c", True))
    ]

    def text(good_match: bool, sure: bool) -> str:
        data = SearchOutput(query="q", good_match=good_match, sure=sure, results=hits)
        return search_text(data, lambda f: False)

    unsure, possible, sure = text(False, False), text(True, False), text(True, True)
    assert unsure.splitlines()[0] == "No good match for 'q'; nearest:"
    assert [line.split(":")[0] for line in unsure.splitlines()[1:]] == ["- a", "- b", "- c"]
    assert possible.splitlines()[0] == (
        "Possible matches for 'q' (not sure which; read the summaries):"
    )
    assert sure.splitlines()[0] == "Matches for 'q':"
    for good in (possible, sure):
        assert [line.split(":")[0] for line in good.splitlines()[1:]] == [
            "- a",
            "- b (weak)",
            "- c (weak)",
        ]
    # One short line a hit: a long summary is cut.
    assert all(len(line) <= 120 for line in sure.splitlines())


async def test_sure_is_claimed_only_above_the_sure_threshold(
    make_app: Callable[..., App],
) -> None:
    """Through the server: a request in the tool's own words is a sure match; a vague one
    that still matches well enough is only a possible one; `sure` never holds without
    `good_match`."""
    app = make_app()
    exact = await _search(app, {"query": "forecast daily high temperatures for a city"})
    vague = await _search(app, {"query": "save it"})
    assert exact.certain, exact.text
    assert exact.names[0] == "weather.forecast", exact.text
    assert not vague.certain, vague.text
    assert vague.good_match, vague.text  # "Possible matches": good, not sure
    for query in ("save it", "will it be warm", "weather"):
        found = app.finder.find(query)
        assert found.good_match or not found.sure


async def test_the_instructions_list_each_facet_and_mounted_server_in_one_line(
    make_app: Callable[..., App],
) -> None:
    from tests.servers.conftest import fixture_table

    config = (
        fixture_table("fix")
        + '[servers.later]\ncommand = "true"\n'
        + ('[mcp]\ndeny = ["inspect"]\n')
    )
    app = make_app(config=config)
    async with app.serving():
        await ready(app)  # the contents are those at connection: the lists read by then
        async with Client(build_server(app), mode="legacy") as client:
            text = client.instructions or ""
    contents = text.split("What exists (facet: its tools):\n", 1)[1].splitlines()
    facets = [line.split(" (", 1)[0].removeprefix("- ") for line in contents]
    reachable = [f for f in app.registry.facets() if app.exposure.reachable(f)]
    assert sorted(facets) == sorted({*reachable, "later"})
    assert "inspect" not in facets  # denied: not there to find
    by_facet = dict(zip(facets, contents, strict=True))
    assert by_facet["core"].startswith("- core (listed, 7 tools): tool_search, ")
    fix_tools = [e for e in app.registry if e.tool.facet == "fix"]
    assert by_facet["fix"].startswith(f"- fix (mounted server, {len(fix_tools)} tools):")
    assert "add" in by_facet["fix"]
    assert by_facet["later"] == "- later (mounted server, tools not read yet)"


async def test_a_mounted_servers_own_words_reach_its_tools_also_from_its_kept_catalogue(
    make_app: Callable[..., App],
) -> None:
    """No tool of the fixture server says "ledger" or "bookkeeping"; its instructions do."""
    from tests.servers.conftest import fixture_table

    first = make_app(config=fixture_table("fix"))
    found = await _search(first, {"query": "household bookkeeping ledger"})
    assert found.names, found.text
    assert all(n.startswith("fix.") for n in found.names), found.text
    # A later start reads the kept catalogue (no process yet): the words are there too.
    again = make_app(config=fixture_table("fix"))
    assert again.servers.lists("fix") is not None
    assert "ledger" in again.servers.lists("fix").about  # type: ignore[union-attr]
    unstarted = again.finder.find("household bookkeeping ledger")
    assert [f.entry.name for f in unstarted.found] == found.names


async def test_kb_search_finds_a_written_document_and_names_an_unknown_collection(
    make_app: Callable[..., App],
) -> None:
    async with Client(build_server(make_app()), mode="legacy") as client:
        await client.call_tool(
            "tool_invoke",
            {
                "name": "kb_document_add",
                "arguments": {
                    "collection": "notes",
                    "path": "garden.md",
                    "text": "# Garden\n\nWater the tomatoes every morning in July.\n",
                },
            },
        )
        found = await client.call_tool(
            "tool_invoke", {"name": "kb_search", "arguments": {"query": "tomatoes"}}
        )
        unknown = await client.call_tool(
            "tool_invoke",
            {"name": "kb_search", "arguments": {"query": "tomatoes", "collection": "nope"}},
        )
    assert found.is_error is False
    data = found.structured_content
    assert data is not None
    assert [(h["collection"], h["path"]) for h in data["hits"]] == [("notes", "garden.md")]
    assert "**tomatoes**" in found.content[0].text  # type: ignore[union-attr]
    assert unknown.is_error is True
    assert "'nope'" in unknown.content[0].text  # type: ignore[union-attr]
