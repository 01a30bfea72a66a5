"""Every fault of a mounted server is an error naming it, prixfixe keeps serving, and the
server is started again (with backoff) on its next use: a crash, a hang, a line that is not
JSON-RPC, a malformed result, an oversized message, a flood on stderr."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from mcp import Client

from prixfixe.app import App
from prixfixe.mcp.server import build_server
from tests.servers.conftest import fixture_table, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

Mounted = Callable[..., App]


async def _invoke(client: Client, name: str, **arguments: object) -> tuple[bool, str]:
    result = await client.call_tool("tool_invoke", {"name": f"fix.{name}", "arguments": arguments})
    return bool(result.is_error), text_of(result)


async def _still_serves(client: Client) -> None:
    assert await _invoke(client, "echo", text="alive") == (False, "alive")
    assert (await client.list_tools()).tools  # prixfixe itself never went away


async def test_a_crash_names_the_server_and_the_next_call_restarts_it(
    mounted: Mounted, revision: str, spawns: list[tuple[str, ...]]
) -> None:
    async with Client(build_server(mounted()), mode=revision) as client:
        failed, text = await _invoke(client, "crash", status=7)
        assert failed
        assert text.startswith("server 'fix': exited with status 7")
        assert "fixture: crashing on purpose" in text  # its last stderr line
        await _still_serves(client)
    assert len(spawns) == 2


async def test_a_hung_call_times_out_and_the_server_is_restarted(
    mounted: Mounted, revision: str
) -> None:
    async with Client(build_server(mounted(fixture_table(timeout=3))), mode=revision) as client:
        failed, text = await _invoke(client, "sleep", seconds=3600)
        assert failed
        assert text == (
            "server 'fix': did not answer 'sleep' within 3s; it was stopped and is started "
            "again on its next use"
        )
        await _still_serves(client)


async def test_a_stray_stdout_line_is_logged_and_the_answer_still_arrives(
    mounted: Mounted, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="prixfixe.servers")
    async with Client(build_server(mounted()), mode="legacy") as client:
        assert await _invoke(client, "garbage") == (False, "still here")
        await _still_serves(client)
    assert "[fix] ignored a stdout line that is not JSON-RPC: 'this is not JSON-RPC {'" in (
        caplog.text
    )


async def test_a_malformed_result_is_an_error_naming_the_server(
    mounted: Mounted, revision: str
) -> None:
    async with Client(build_server(mounted()), mode=revision) as client:
        failed, text = await _invoke(client, "malformed")
        assert failed
        assert text.startswith("server 'fix': answered 'malformed' with a malformed result: ")
        await _still_serves(client)


async def test_an_oversized_message_ends_the_connection_not_prixfixe(
    mounted: Mounted, revision: str
) -> None:
    async with Client(build_server(mounted()), mode=revision) as client:
        failed, text = await _invoke(client, "oversized", megabytes=6)
        assert failed
        assert text.startswith("server 'fix': sent a message over 4,194,304 bytes (the limit)")
        await _still_serves(client)


async def test_stderr_goes_to_the_log_bounded_and_never_to_stdout(
    mounted: Mounted, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO, logger="prixfixe.servers")
    async with Client(build_server(mounted()), mode="legacy") as client:
        assert await _invoke(client, "shout", lines=20_000) == (False, "wrote 20000 lines")
        await _still_serves(client)
    lines = [r.getMessage() for r in caplog.records if "fixture stderr line" in r.getMessage()]
    assert lines[0] == "[fix] fixture stderr line 0"
    assert len(lines) < 20_000  # rate-bounded: the rest are counted, not logged
    assert "fixture stderr line" not in capfd.readouterr().out


async def test_repeated_faults_back_off_instead_of_restarting_in_a_loop(
    mounted: Mounted, spawns: list[tuple[str, ...]]
) -> None:
    async with Client(build_server(mounted()), mode="legacy") as client:
        assert (await _invoke(client, "crash"))[0]
        assert (await _invoke(client, "crash"))[0]  # restarted at once after the first fault
        failed, text = await _invoke(client, "echo", text="too soon")
    assert failed
    assert text.startswith("server 'fix': exited with status 3")
    assert "it is started again on a use in 0.5s or later" in text.replace("0.4s", "0.5s")
    assert len(spawns) == 2


async def test_a_server_that_cannot_start_is_an_error_naming_it(
    make_app: Callable[..., App],
) -> None:
    app = make_app(config='[servers.ghost]\ncommand = "/nonexistent/mcp-ghost"\n')
    async with Client(build_server(app), mode="legacy") as client:
        found = await client.call_tool("tool_search", {"query": "anything at all"})
        called = await client.call_tool("tool_invoke", {"name": "ghost.tool"})
    assert not found.is_error
    assert called.is_error
    said = text_of(called)
    assert said.startswith(
        "server 'ghost': its tools are not known because it could not start: "
        "program '/nonexistent/mcp-ghost' was not found"
    ), said
    upstream = app.servers.upstreams["ghost"]
    assert upstream.state == "failed"
    # Named once: the gate's message names the server, and the error around it does not again.
    assert upstream.last_error == "could not start: program '/nonexistent/mcp-ghost' was not found"


def test_a_start_failure_quotes_the_last_lines_of_stderr_not_only_the_last() -> None:
    """npm and uv end on a generic hint; the cause is a line or two above it."""
    from prixfixe.servers.stdio import Ending

    ending = Ending("npx-server")
    for line in (
        "npm error code UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
        "npm error request to https://registry.npmjs.org/x failed",
        "npm error A complete log of this run can be found in: /tmp/x.log",
    ):
        ending.stderr_tail.append(line)
    ending.end("exited with status 1")
    said = ending.describe()
    assert said.startswith("exited with status 1 (its last error output: ")
    assert "UNABLE_TO_GET_ISSUER_CERT_LOCALLY" in said
    assert said.endswith("'npm error A complete log of this run can be found in: /tmp/x.log')")
