"""A mounted server that is still starting, or did not start: only discovery and calls to its
own tools wait for it (bounded), and a call naming one of its tools says which of the two it
is and why, not "unknown tool"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from prixfixe.app import App
from prixfixe.mcp.server import build_server
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
    async with Client(build_server(app), mode="legacy") as client:
        await ready(app)
        assert broken.state == "failed"
        assert len(spawns) == 1
        invoked = await client.call_tool("tool_invoke", {"name": "broken.forecast"})
        # The call started it again (its first failure has no backoff): it failed again.
        assert len(spawns) == 2
        described = await client.call_tool("tool_describe", {"name": "broken.forecast"})
    for answer in (invoked, described):
        assert answer.is_error
        said = text_of(answer)
        assert said.startswith(
            "server 'broken': its tools are not known because it could not start: "
            "exited with status 1"
        ), said
        assert "'no API token in WEATHER_TOKEN'" in said
        assert "naming one of its tools starts it again" in said
        assert "unknown tool" not in said


async def test_a_name_outside_every_server_is_still_an_unknown_tool(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    app = make_app(config=script_table("broken", tmp_path / "broken.py", BROKEN))
    async with Client(build_server(app), mode="legacy") as client:
        await ready(app)
        invoked = await client.call_tool("tool_invoke", {"name": "brokn.forecast"})
    assert invoked.is_error
    assert text_of(invoked).startswith("unknown tool 'brokn.forecast'")
