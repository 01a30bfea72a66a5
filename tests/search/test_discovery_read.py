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
from tests.search_text import searched
from tests.servers.conftest import installed_server, ready
from tests.servers.real_servers import node, npm_server

pytestmark = pytest.mark.anyio


def _time_table() -> str:
    program = installed_server("time", "mcp-server-time")
    return f'[servers.time]\ncommand = "{program}"\nargs = ["--local-timezone=UTC"]\n'


def _memory_table(tmp: Path) -> str:
    return (
        "[servers.memory]\n"
        f"command = {json.dumps(node())}\n"
        f"args = [{json.dumps(npm_server('server-memory'))}]\n"
        'start = "eager"\n'
        "[servers.memory.env]\n"
        'MEMORY_FILE_PATH = {env = "PFX_TEST_MEMORY_FILE"}\n'
    )


async def _search(app: App, arguments: dict[str, object]):  # type: ignore[no-untyped-def]
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
async def test_remember_a_fact_ranks_the_memory_servers_tools_above_the_store(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    app = make_app(
        config=_memory_table(tmp_path),
        env={"PFX_TEST_MEMORY_FILE": str(tmp_path / "memory.jsonl")},
    )
    found = await _search(app, {"query": "Remember that Alice works at Acme"})
    assert found.names, found.text
    assert found.names[0].startswith("memory."), found.text
    if "store_put" in found.names:
        first_memory = min(i for i, n in enumerate(found.names) if n.startswith("memory."))
        assert first_memory < found.names.index("store_put")


@pytest.mark.parametrize(
    "query",
    [
        "search the knowledge base",
        "look up in my notes",
        "find documentation about deployment",
        "search my docs",
    ],
)
async def test_the_kb_search_tool_is_found_first(
    make_app: Callable[..., App], query: str
) -> None:
    found = await _search(make_app(), {"query": query})
    assert found.names[0] == "kb_search", found.text
