"""The activity log: every MCP tool call an agent made, through `mcp.Client` on a real SQLite
store, read back from the store, by `prixfixe activity` and (tests/web) by the web page."""

from __future__ import annotations

import json
import time
from pathlib import Path

import mcp_types as types
import pytest
from click.testing import CliRunner
from mcp import Client

from prixfixe.app import App
from prixfixe.cli import cli
from prixfixe.leash.redact import REDACTOR
from prixfixe.mcp.server import build_server
from prixfixe.secrets import Secret
from prixfixe.system.activity import (
    ACTIVITY_OWNER,
    DAY,
    MAX_ARGUMENTS,
    MAX_TEXT,
    Call,
    Pending,
    parse_since,
    read_calls,
    result_tokens,
    summarize,
)
from prixfixe.tokens import count_tokens
from tests.conftest import AppFactory
from tests.programs.conftest import run
from tests.servers.conftest import fixture_table, ready

pytestmark = pytest.mark.anyio

#: Lexical search only: no embedding model loaded for a test about logging.
LEXICAL = "[search]\nsemantic = false\n"
NO_MATCH = "xylophone quantum zebra"


def logged(app: App) -> list[Call]:
    app.activity.flush()
    return read_calls(app.store.slice(ACTIVITY_OWNER))


def store_bytes(home: Path) -> bytes:
    """Every byte of every file under the store's home (database, WAL, shared memory)."""
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


async def test_each_call_is_logged_with_its_outcome_duration_tokens_and_client(
    make_app: AppFactory,
) -> None:
    app = make_app(config=LEXICAL)
    async with Client(build_server(app), mode="legacy") as client:
        found = await client.call_tool("tool_search", {"query": "weather forecast for a city"})
        await client.call_tool("tool_search", {"query": NO_MATCH})
        forecast = await client.call_tool(
            "tool_invoke", {"name": "weather.forecast", "arguments": {"city": "Lisbon"}}
        )
        failed = await client.call_tool("tool_invoke", {"name": "archive_explode"})
    assert not found.is_error
    assert not forecast.is_error
    assert failed.is_error
    calls = list(reversed(logged(app)))  # oldest first
    assert [(c.tool, c.via, c.outcome) for c in calls] == [
        ("tool_search", None, "ok"),
        ("tool_search", None, "ok"),
        ("weather.forecast", "tool_invoke", "ok"),
        ("tool_invoke", None, "ok"),
        ("archive_explode", "tool_invoke", "error"),
        ("tool_invoke", None, "error"),
    ]
    search, miss, inner = calls[0], calls[1], calls[2]
    assert (search.query, search.good_match) == ("weather forecast for a city", True)
    assert (miss.query, miss.good_match) == (NO_MATCH, False)
    assert inner.facet == "weather"
    assert inner.server is None
    text = forecast.content[0].text  # type: ignore[union-attr]
    assert inner.tokens == count_tokens(text) > 0
    assert all(c.duration_ms >= 0 and c.client == "mcp" for c in calls)
    assert all(c.arguments is None for c in calls)  # not kept by default
    summary = summarize(logged(app))
    assert [(m.query, m.times) for m in summary.missed] == [(NO_MATCH, 1)]
    assert summary.outcomes == {"ok": 4, "error": 2}
    assert summary.tools[0].tool in ("tool_search", "tool_invoke")


async def test_a_mounted_servers_calls_name_it_and_a_programs_calls_are_marked(
    make_app: AppFactory,
) -> None:
    app = make_app(config=LEXICAL + fixture_table())
    await ready(app)
    async with Client(build_server(app), mode="legacy") as client:
        direct = await client.call_tool(
            "tool_invoke", {"name": "fix.echo", "arguments": {"text": "hi"}}
        )
        ran = await run(client, "await call_tool('fix.add', {'a': 2, 'b': 40})")
    assert not direct.is_error
    assert not ran.is_error
    calls = list(reversed(logged(app)))
    assert [(c.tool, c.via, c.server, c.outcome) for c in calls] == [
        ("fix.echo", "tool_invoke", "fix", "ok"),
        ("tool_invoke", None, None, "ok"),
        ("fix.add", "program_run", "fix", "ok"),
        ("program_run", "tool_invoke", None, "ok"),
        ("tool_invoke", None, None, "ok"),
    ]


async def test_a_call_that_asks_the_person_is_logged_as_input_required(
    make_app: AppFactory,
) -> None:
    async def person(context: object, params: object) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    app = make_app(config=LEXICAL)
    record = {"text": "water the plants", "due": "2026-05-01"}  # no kind: asked for
    async with Client(build_server(app), mode="2026-07-28", elicitation_callback=person) as client:
        asked = await client.session.call_tool(
            "store_put", {"record": record}, allow_input_required=True
        )
    assert isinstance(asked, types.InputRequiredResult)
    (call,) = logged(app)
    assert (call.tool, call.outcome, call.tokens) == ("store_put", "input required", None)


async def test_a_refused_call_is_logged_as_refused(make_app: AppFactory) -> None:
    app = make_app(config=LEXICAL)
    async with Client(build_server(app), mode="legacy") as client:
        with pytest.raises(Exception, match="no_such_tool"):
            await client.call_tool("no_such_tool", {})
    (call,) = logged(app)
    assert (call.tool, call.outcome, call.facet) == ("no_such_tool", "refused", None)


async def test_a_call_past_the_leash_max_calls_is_logged_as_refused(
    make_app: AppFactory,
) -> None:
    app = make_app(config=LEXICAL + "[leash]\nmax_calls = 1\n")
    async with Client(build_server(app), mode="legacy") as client:
        first = await client.call_tool("tool_search", {"query": "weather"})
        second = await client.call_tool("tool_search", {"query": "forecast"})
    assert not first.is_error
    assert second.is_error
    assert [(c.tool, c.outcome, c.query) for c in logged(app)] == [
        ("tool_search", "refused", None),
        ("tool_search", "ok", "weather"),
    ]


async def test_logging_a_call_does_not_advance_the_store_generation(
    make_app: AppFactory,
) -> None:
    # A leash's `valid_for_generation` would otherwise end on the first logged call.
    app = make_app(config=LEXICAL)
    before = app.store.generation()
    async with Client(build_server(app), mode="legacy") as client:
        for _ in range(3):
            await client.call_tool("tool_search", {"query": "weather"})
    assert len(logged(app)) == 3
    assert app.store.generation() == before


async def test_arguments_and_results_are_not_kept_by_default(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = make_app(config=LEXICAL)
    city = "Marker-city-80417"
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool(
            "tool_invoke", {"name": "weather.forecast", "arguments": {"city": city}}
        )
    assert city in result.content[0].text  # type: ignore[union-attr]  # the result has it
    assert len(logged(app)) == 2
    app.close_store()
    assert city.encode() not in store_bytes(tmp_path / "home")


async def test_a_secret_in_a_search_query_is_never_stored(
    make_app: AppFactory, tmp_path: Path
) -> None:
    secret = "sk-query-3f9a0c2e7d"
    REDACTOR.add(Secret(secret, "env QUERY_TOKEN"))
    app = make_app(config=LEXICAL)  # the query is kept by default: masked
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": f"use {secret} to send mail"})
    (call,) = logged(app)
    assert call.query == "use ******** to send mail"
    app.close_store()
    assert secret.encode() not in store_bytes(tmp_path / "home")


async def test_kept_arguments_are_masked_so_a_secret_is_never_stored(
    make_app: AppFactory, tmp_path: Path
) -> None:
    secret = "sk-activity-8c1f6a5e2d9b"
    REDACTOR.add(Secret(secret, "env ACTIVITY_TOKEN"))
    app = make_app(config=LEXICAL + "[activity]\nkeep_arguments = true\n")
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool(
            "tool_invoke",
            {"name": "weather.forecast", "arguments": {"city": f"Lisbon {secret}"}},
        )
        await client.call_tool("tool_search", {"query": f"find {secret} please"})
    calls = logged(app)
    inner = next(c for c in calls if c.tool == "weather.forecast")
    assert inner.arguments == {"city": "Lisbon ********"}
    search = next(c for c in calls if c.tool == "tool_search")
    assert search.query == "find ******** please"
    app.close_store()
    raw = store_bytes(tmp_path / "home")
    assert b"Lisbon ********" in raw  # the arguments were written, masked
    assert secret.encode() not in raw


async def test_the_log_is_pruned_by_count_and_by_age(make_app: AppFactory) -> None:
    app = make_app(config=LEXICAL + "[activity]\nmax_entries = 3\nmax_age_days = 1\n")
    old = Pending(
        at=time.time() - 2 * DAY,
        tool="old_tool",
        server=None,
        facet=None,
        via=None,
        outcome="ok",
        duration_ms=1.0,
        client=None,
    )
    app.activity.record(old)
    async with Client(build_server(app), mode="legacy") as client:
        for word in ("one", "two", "three", "four", "five"):
            await client.call_tool("tool_search", {"query": word})
    calls = logged(app)
    assert [c.query for c in calls] == ["five", "four", "three"]


async def test_a_disabled_log_keeps_nothing(make_app: AppFactory) -> None:
    app = make_app(config=LEXICAL + "[activity]\nenabled = false\n")
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": "weather"})
    assert logged(app) == []


async def test_a_call_whose_entry_cannot_be_written_still_answers(
    make_app: AppFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the store's directory should be")
    app = make_app(config=LEXICAL, env={"PRIXFIXE_HOME": str(blocker)})
    async with Client(build_server(app), mode="legacy") as client:
        first = await client.call_tool("tool_search", {"query": "weather"})
        app.activity.flush()
        second = await client.call_tool("tool_search", {"query": "forecast"})
        app.activity.flush()
    assert not first.is_error
    assert not second.is_error
    assert "activity log: 1 calls not written" in caplog.text
    assert caplog.text.count("not written") == 1  # once, not for every call


def test_a_huge_result_is_counted_on_a_sample() -> None:
    text = "word " * 40000  # 200,000 characters
    estimate = result_tokens([text])
    assert estimate is not None
    assert abs(estimate - count_tokens(text)) / count_tokens(text) < 0.01
    assert result_tokens([]) is None


@pytest.mark.parametrize(("text", "seconds"), [("30m", 1800), ("1d", DAY), ("2w", 14 * DAY)])
def test_spans(text: str, seconds: float) -> None:
    assert parse_since(text) == seconds


@pytest.mark.parametrize("text", ["", "d", "1y", "-1d", "abc"])
def test_a_bad_span_is_named(text: str) -> None:
    with pytest.raises(ValueError, match="is not a span"):
        parse_since(text)


async def test_the_cli_shows_calls_failures_and_searches_without_a_good_match(
    make_app: AppFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(config=LEXICAL)
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": NO_MATCH})
        await client.call_tool("tool_invoke", {"name": "archive_explode"})
    app.close_store()
    monkeypatch.setenv("PRIXFIXE_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    shown = runner.invoke(cli, ["activity"])
    assert shown.exit_code == 0, shown.output
    assert "3 tool calls since" in shown.output
    assert "Searches with no good match" in shown.output
    assert NO_MATCH in shown.output
    assert "archive_explode" in shown.output
    assert "error" in shown.output
    only_failed = runner.invoke(cli, ["activity", "--failed"])
    assert "archive_explode" in only_failed.output
    assert "Latest failed calls (2 of 2)" in only_failed.output
    data = json.loads(runner.invoke(cli, ["activity", "--searches", "--json"]).output)
    assert [c["query"] for c in data["calls"]] == [NO_MATCH]
    assert data["summary"]["searches_without_good_match"][0]["query"] == NO_MATCH
    assert data["summary"]["outcomes"] == {"ok": 1, "error": 2}
    assert data["summary"]["searches"] == 1
    nothing = runner.invoke(cli, ["activity", "--since", "0s"])
    assert "No tool calls logged since" in nothing.output
    bad = runner.invoke(cli, ["activity", "--since", "soon"])
    assert bad.exit_code == 2
    assert "is not a span" in bad.output


async def test_names_the_caller_chose_are_redacted_and_bounded(make_app: AppFactory) -> None:
    secret = "sk-name-5b0c7e1d"
    REDACTOR.add(Secret(secret, "env NAME_TOKEN"))
    app = make_app(config=LEXICAL + "[activity]\nkeep_arguments = true\n")
    async with Client(build_server(app), mode="legacy") as client:
        with pytest.raises(Exception, match="tool_"):
            await client.call_tool(f"tool_{secret}_" + "y" * 1000, {})
        await client.call_tool(
            "tool_invoke",
            {"name": "weather.forecast", "arguments": {"city": "x" * (MAX_ARGUMENTS + 10)}},
        )
    calls = logged(app)
    unknown = calls[-1].tool
    assert unknown.startswith("tool_********_yyy")
    assert len(unknown) == MAX_TEXT
    assert unknown.endswith("…")
    inner = next(c for c in calls if c.tool == "weather.forecast")
    assert inner.arguments == {"omitted": f"{MAX_ARGUMENTS + 22:,} characters of JSON"}


async def test_the_cli_says_when_every_search_matched_and_when_the_log_is_off(
    make_app: AppFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(config=LEXICAL)
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": "weather forecast for a city"})
    app.close_store()
    monkeypatch.setenv("PRIXFIXE_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    searches = runner.invoke(cli, ["activity", "--searches"])
    assert searches.exit_code == 0, searches.output
    assert "Every search had a good match (1 search)." in searches.output
    assert "Most used" not in searches.output
    assert "weather forecast for a city" in searches.output
    failed = runner.invoke(cli, ["activity", "--failed"])
    assert "No failed calls in that time." in failed.output
    (tmp_path / "prixfixe.toml").write_text(LEXICAL + "[activity]\nenabled = false\n")
    off = runner.invoke(cli, ["activity"])
    assert "The activity log is off ([activity] enabled = false)" in off.output
    assert "1 tool call since" in off.output  # what was logged before stays until pruned
    none = runner.invoke(cli, ["activity", "--failed", "--searches"])
    assert "No search in that time." not in none.output  # --failed: no search summary
    assert "Latest failed calls" not in none.output
