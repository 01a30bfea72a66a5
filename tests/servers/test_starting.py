"""A mounted server that is still starting, or did not start: only discovery and calls to its
own tools wait for it (bounded), and a call naming one of its tools says which of the two it
is and why, not "unknown tool"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from prixfixe.app import App
from prixfixe.cli import cli
from prixfixe.mcp.server import build_server
from prixfixe.servers.backoff import Backoff
from tests.servers.conftest import fixture_table, ready, script_table, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

#: Reads its stdin and never answers: stuck in `initialize` (until its stdin is closed).
STUCK = "import sys\nsys.stdin.buffer.read()\n"
#: Exits at once with status 1, saying why on stderr (as a server missing its token does).
BROKEN = "import sys\nprint('no API token in WEATHER_TOKEN', file=sys.stderr)\nsys.exit(1)\n"


async def test_a_server_stuck_at_start_holds_up_no_call_but_to_its_own_tools(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    config = fixture_table() + script_table("stuck", tmp_path / "stuck.py", STUCK, timeout=1)
    app = make_app(config=config)
    stuck = app.servers.upstreams["stuck"]
    async with Client(build_server(app), mode="legacy") as client:
        core = await client.call_tool("store_query", {"kind": "reminder"})
        # Answered while the stuck server is still in its start (bounded by 30s, not 1s).
        assert stuck.state == "starting"
        plugin = await client.call_tool("weather.forecast", {"city": "Lisbon", "days": 1})
        assert stuck.state == "starting"
        echoed = await client.call_tool(
            "tool_invoke", {"name": "fix.echo", "arguments": {"text": "other server"}}
        )
        assert stuck.state == "starting"
        # Its own tool waits at most its `timeout` (1s), then says it is still starting.
        invoked = await client.call_tool("tool_invoke", {"name": "stuck.lookup"})
        described = await client.call_tool("tool_describe", {"name": "stuck.lookup"})
        assert stuck.state == "starting"
    assert not core.is_error, text_of(core)
    assert not plugin.is_error, text_of(plugin)
    assert (echoed.is_error, text_of(echoed)) == (False, "other server")
    for answer in (invoked, described):
        assert answer.is_error
        said = text_of(answer)
        assert said.startswith("server 'stuck': is still starting"), said
        assert "its tools are not known yet" in said
        assert "unknown tool" not in said


async def test_a_call_to_a_tool_of_a_server_that_did_not_start_says_why(
    make_app: Callable[..., App], tmp_path: Path, spawns: list[tuple[str, ...]]
) -> None:
    app = make_app(config=script_table("broken", tmp_path / "broken.py", BROKEN))
    broken = app.servers.upstreams["broken"]
    broken.backoff = Backoff(clock=lambda: 0.0)  # time stands still: its waits never end
    async with Client(build_server(app), mode="legacy") as client:
        await ready(app)
        assert broken.state == "failed"
        assert len(spawns) == 1
        invoked = await client.call_tool("tool_invoke", {"name": "broken.forecast"})
        # The call started it again (a first failure has no backoff wait): it failed again.
        assert len(spawns) == 2
        # Now it waits out its backoff: neither call starts it.
        described = await client.call_tool("tool_describe", {"name": "broken.forecast"})
        with pytest.raises(MCPError) as direct:  # a name not registered: invalid params
            await client.call_tool("broken.forecast", {})
        assert len(spawns) == 2
    assert direct.value.error.code == INVALID_PARAMS
    for said in (text_of(invoked), text_of(described), direct.value.error.message):
        assert said.startswith(
            "server 'broken': its tools are not known because it could not start: "
            "exited with status 1"
        ), said
        assert "'no API token in WEATHER_TOKEN'" in said
        assert "unknown tool" not in said
    assert text_of(invoked).endswith(
        "a call naming one of its tools starts it again in 0.5s or later"
    )


async def test_a_server_that_never_started_says_so_where_prixfixe_does_not_serve(
    make_app: Callable[..., App], tmp_path: Path, spawns: list[tuple[str, ...]]
) -> None:
    """`prixfixe tools describe` runs no server: a tool of one with no kept list is not
    "unknown", it is unknown yet, and the person is told how to read it."""
    make_app(config=script_table("broken", tmp_path / "broken.py", BROKEN))
    result = CliRunner().invoke(cli, ["tools", "describe", "broken.forecast"])
    assert result.exit_code == 1
    assert "server 'broken': has not started, so its tools are not known yet" in result.output
    assert "prixfixe servers test broken" in result.output
    assert "unknown tool" not in result.output
    assert spawns == []


async def test_a_name_outside_every_server_is_still_an_unknown_tool(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    app = make_app(config=script_table("broken", tmp_path / "broken.py", BROKEN))
    async with Client(build_server(app), mode="legacy") as client:
        await ready(app)
        for name in ("brokn.forecast", "forecast"):
            invoked = await client.call_tool("tool_invoke", {"name": name})
            assert invoked.is_error
            assert text_of(invoked).startswith(f"unknown tool {name!r}")


async def test_a_tool_of_a_denied_server_with_no_list_is_denied_and_nothing_starts(
    make_app: Callable[..., App], tmp_path: Path, spawns: list[tuple[str, ...]]
) -> None:
    table = script_table("broken", tmp_path / "broken.py", BROKEN)
    denied = make_app(config='[mcp]\ndeny = ["broken"]\n' + table)
    async with Client(build_server(denied), mode="legacy") as client:
        refused = await client.call_tool("tool_invoke", {"name": "broken.forecast"})
    assert refused.is_error
    assert text_of(refused).startswith(
        "tool 'broken.forecast' is in facet 'broken', which is denied"
    )
    # Narrowed away (not denied): its tools stay out of sight, as any unreachable tool does.
    narrowed = make_app(config=table, facet="core")
    async with Client(build_server(narrowed), mode="legacy") as client:
        hidden = await client.call_tool("tool_invoke", {"name": "broken.forecast"})
    assert hidden.is_error
    assert text_of(hidden).startswith("unknown tool 'broken.forecast'")
    assert spawns == []
