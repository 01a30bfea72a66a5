"""Mounted servers in the doctor report and the capability index: what is known of each
without starting one (its kept tool list, enabled, denied), and what its tools would cost a
model listed directly against prixfixe's own listing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

from prixfixe.app import DEFAULT_TOKEN_BUDGET, DEFAULT_TOOL_BUDGET, App
from prixfixe.config import home_dir
from prixfixe.mcp.server import build_server
from prixfixe.servers import catalogue
from prixfixe.servers.status import listing_json
from prixfixe.system.capability_index import INDEX_URIS
from prixfixe.system.doctor import doctor_report
from prixfixe.tokens import count_tokens
from prixfixe.web.budget import token_budget
from tests.servers.conftest import fixture_table

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

Mounted = Callable[..., App]


def _report(app: App) -> dict[str, object]:
    return doctor_report(app, tool_budget=DEFAULT_TOOL_BUDGET, token_budget=DEFAULT_TOKEN_BUDGET)


def _kept(app: App, name: str) -> list[types.Tool] | None:
    config = app.config.model.servers[name]
    return catalogue.load(catalogue.catalogue_path(app.home, name, config))


async def _start_every_server(app: App) -> None:
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": "echo"})  # waits for lists to be read


def test_doctor_starts_no_server_and_says_a_new_servers_tools_are_not_read_yet(
    mounted: Mounted, spawns: list[tuple[str, ...]]
) -> None:
    app = mounted(fixture_table() + fixture_table("off", extra="enabled = false"))
    section = _report(app)["servers"]
    assert spawns == []
    assert section == {
        "servers": [
            {
                "name": "fix",
                "transport": "stdio",
                "state": "not read yet",
                "enabled": True,
                "denied": False,
                "tools": None,
                "read_at": None,
                "listed_tokens": None,
            },
            {
                "name": "off",
                "transport": "stdio",
                "state": "disabled",
                "enabled": False,
                "denied": False,
                "tools": None,
                "read_at": None,
                "listed_tokens": None,
            },
        ],
        "mounted": 1,
        "tools": 0,
        "direct_tokens": 0,
        "mounted_tokens": 0,
        "prixfixe_tokens": count_tokens(app.list_tools_json()),
        "unread": ["fix"],
    }


async def test_doctor_shows_a_kept_tool_list_and_what_it_would_cost_listed_directly(
    mounted: Mounted, spawns: list[tuple[str, ...]]
) -> None:
    app = mounted()
    await _start_every_server(app)
    tools = _kept(app, "fix")
    assert tools is not None
    spawned = len(spawns)
    again = mounted()  # a new process: it knows the server only from disk
    section = _report(again)["servers"]
    assert len(spawns) == spawned  # doctor started nothing
    (fix,) = section["servers"]  # type: ignore[index]
    assert fix["state"] == "tools kept"
    assert fix["tools"] == len(tools) >= 10
    assert fix["read_at"].endswith("Z")
    # The tokens a direct connection's tools/list would put in the model's context.
    direct = count_tokens(listing_json(tools))
    assert fix["listed_tokens"] == direct
    assert section["direct_tokens"] == direct  # type: ignore[index]
    assert section["prixfixe_tokens"] == count_tokens(again.list_tools_json())  # type: ignore[index]
    # Issue 30: the web page's budget says the doctor's figures, counted by the same function.
    budget = token_budget(again)
    assert budget.direct_tokens == direct
    assert budget.listed_tokens == section["prixfixe_tokens"]  # type: ignore[index]
    # prixfixe's copies (`fix.NAME`, titled) are a second figure, named as such in both.
    assert budget.mounted_tokens == section["mounted_tokens"] > direct  # type: ignore[index]
    assert budget.mounted_tokens == sum(r.all_tokens for r in budget.sources if r.name == "fix")


def test_a_denied_server_is_shown_denied_and_counts_as_not_mounted(mounted: Mounted) -> None:
    app = mounted('[mcp]\ndeny = ["fix"]\n' + fixture_table())
    section = _report(app)["servers"]
    (fix,) = section["servers"]  # type: ignore[index]
    assert (fix["state"], fix["denied"]) == ("denied", True)
    assert section["mounted"] == 0  # type: ignore[index]
    assert section["unread"] == []  # type: ignore[index]


async def test_the_capability_index_names_each_mounted_server_with_its_tools(
    mounted: Mounted, revision: str
) -> None:
    app = mounted()
    before = app.capability_index.text("summary")
    assert "Mounted MCP servers (a facet each; tools SERVER.tool): " in before
    assert "fix: tools not read yet" in before
    async with Client(build_server(app), mode=revision) as client:
        await client.call_tool("tool_search", {"query": "echo"})
        summary = (await client.read_resource(INDEX_URIS["summary"])).contents[0]
        full = (await client.read_resource(INDEX_URIS["full"])).contents[0]
    assert isinstance(summary, types.TextResourceContents)
    assert isinstance(full, types.TextResourceContents)
    count = sum(1 for e in app.registry if e.tool.facet == "fix")
    assert f"fix: echo, add, picture +{count - 3}" in summary.text
    assert f"fix ({count})" in summary.text  # its facet, with the tool count
    servers = {s["name"]: s for s in json.loads(full.text)["servers"]}
    assert servers["fix"]["facet"] == "fix"
    assert servers["fix"]["tools"] == count
    assert "fix.add" in servers["fix"]["tool_names"]


def test_a_denied_server_is_not_in_the_capability_index(mounted: Mounted) -> None:
    app = mounted('[mcp]\ndeny = ["fix"]\n' + fixture_table())
    assert "fix:" not in app.capability_index.text("summary")
    assert json.loads(app.capability_index.text("full"))["servers"] == []


def _many_servers(tmp_path: Path, count: int, tools: int) -> str:
    """`count` servers, each with a kept list of `tools` tools (no process ever runs)."""
    tables = "".join(fixture_table(f"srv{i:02d}") for i in range(count))
    (tmp_path / "prixfixe.toml").write_text(tables)
    from prixfixe.config import load_config

    config = load_config(
        {"PRIXFIXE_HOME": str(tmp_path / "home"), "PRIXFIXE_TRUSTED_PATHS": str(tmp_path)},
        tmp_path,
    )
    home = home_dir({"PRIXFIXE_HOME": str(tmp_path / "home")})
    for name, server in config.model.servers.items():
        listed = [
            types.Tool(
                name=f"action_{j}",
                description=f"Does thing {j} of server {name} with the widget and gadget.",
                input_schema={"type": "object", "properties": {"x": {"type": "string"}}},
            )
            for j in range(tools)
        ]
        catalogue.save(catalogue.catalogue_path(home, name, server), listed)
    return tables


def test_the_summary_stays_small_with_forty_servers_mounted(
    mounted: Mounted, tmp_path: Path
) -> None:
    bare = count_tokens(mounted("").capability_index.text("summary"))
    tables = _many_servers(tmp_path, 40, 20)
    app = mounted(tables)
    assert sum(1 for e in app.registry if e.tool.facet.startswith("srv")) == 800
    summary = app.capability_index.text("summary")
    # 800 mounted tools cost the summary about 500 tokens: servers and facets are capped.
    assert "; +20 more" in summary  # servers past the first 20
    assert count_tokens(summary) < bare + 600, (bare, count_tokens(summary))
