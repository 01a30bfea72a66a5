"""`mcp-query`: a routine step calling a mounted server's tool, through `routine_run` on the
real protocol, against the fixture server (tests/servers/fixture_server.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from prixfixe.mcp.server import build_server
from prixfixe.routines.builtin.mcp_query import fenced, shown
from tests.conftest import AppFactory
from tests.servers.conftest import fixture_table, spawns, text_of  # noqa: F401 - a fixture

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def _routine(*steps: str) -> str:
    return "[routines.morning]\n" + "".join(
        f"[[routines.morning.steps]]\n{step}\n" for step in steps
    )


ADD = 'name = "sum"\ntype = "mcp-query"\nserver = "fix"\ntool = "add"\narguments = {a = 2, b = 40}'
ECHO = (
    'name = "said"\ntype = "mcp-query"\nserver = "fix"\ntool = "echo"\n'
    'arguments = {text = "## not a heading of the report"}'
)


async def _run(app: Any, revision: str, routine: str = "morning") -> tuple[str, dict[str, Any]]:
    async with Client(build_server(app), mode=revision) as client:
        result = await client.call_tool("routine_run", {"name": routine, "format": "both"})
    assert not result.is_error, text_of(result)
    markdown = result.content[0].text  # type: ignore[union-attr]
    return markdown, result.structured_content or {}


async def test_a_routine_step_calls_a_mounted_tool_and_reports_its_answer_as_markdown_and_data(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(config=fixture_table() + _routine(ADD, ECHO))
    markdown, report = await _run(app, revision)
    assert report["status"] == "ok"
    summed, said = report["steps"]
    assert summed["type"] == "mcp-query"
    assert summed["version"] == "1.0"
    assert summed["data"] == {
        "server": "fix",
        "tool": "add",
        "is_error": False,
        "structured_content": {"total": 42},
        "text": '{\n  "total": 42\n}',
        "truncated": False,
        "other_content": [],
    }
    assert said["data"]["text"] == "## not a heading of the report"
    # JSON is shown as JSON; markdown as markdown, its headings below the step's own, so an
    # upstream's "## heading" cannot pass for a step of the report.
    assert '`fix.add`:\n\n```json\n{\n  "total": 42\n}\n```' in markdown
    assert "\n#### not a heading of the report" in markdown
    assert "\n## not a heading" not in markdown


async def test_a_denied_servers_tool_is_refused_and_the_server_never_starts(
    make_app: AppFactory,
    revision: str,
    spawns: list[tuple[str, ...]],  # noqa: F811 - the fixture
) -> None:
    config = '[mcp]\ndeny = ["fix"]\n' + fixture_table() + _routine(ADD)
    app = make_app(config=config)
    _, report = await _run(app, revision)
    (step,) = report["steps"]
    assert step["status"] == "failed"
    assert step["error"]["kind"] == "refused"
    assert "server 'fix' is denied" in step["error"]["message"]
    assert spawns == []


async def test_a_server_not_in_the_configuration_cannot_be_called_by_an_inline_step(
    make_app: AppFactory,
    revision: str,
    spawns: list[tuple[str, ...]],  # noqa: F811 - the fixture
) -> None:
    app = make_app(config=fixture_table())
    step = {"type": "mcp-query", "server": "github", "tool": "list_issues"}
    async with Client(build_server(app), mode=revision) as client:
        result = await client.call_tool("routine_eval", {"steps": [step], "format": "data"})
    (failed,) = (result.structured_content or {})["steps"]
    assert failed["error"]["kind"] == "refused"
    assert "no server 'github' is configured in [servers]" in failed["error"]["message"]
    assert all("github" not in " ".join(argv) for argv in spawns)


async def test_an_upstream_error_answer_is_the_steps_failure_not_a_traceback(
    make_app: AppFactory, revision: str
) -> None:
    failing = (
        'name = "broken"\ntype = "mcp-query"\nserver = "fix"\ntool = "fail"\n'
        'arguments = {message = "the API is down"}'
    )
    crashing = 'name = "gone"\ntype = "mcp-query"\nserver = "fix"\ntool = "crash"'
    app = make_app(config=fixture_table() + _routine(failing, crashing, ADD))
    markdown, report = await _run(app, revision)
    broken, gone, summed = report["steps"]
    assert broken["status"] == "failed"
    assert broken["error"]["message"] == (
        "step 'broken': server 'fix' tool 'fail' answered with an error: "
        "Error executing tool fail: the API is down"
    )
    assert gone["status"] == "failed"
    assert gone["error"]["message"].startswith("step 'gone': server 'fix': ")
    assert "Traceback" not in markdown + json.dumps(report)
    # The next step restarts the server (after its backoff) or says it waits; never a crash.
    assert report["status"] == "partial"
    assert summed["status"] in ("ok", "failed")


async def test_an_error_answer_can_be_reported_as_data(make_app: AppFactory) -> None:
    step = (
        'name = "broken"\ntype = "mcp-query"\nserver = "fix"\ntool = "fail"\n'
        'arguments = {message = "rate limited"}\non_error = "report"'
    )
    app = make_app(config=fixture_table() + _routine(step))
    markdown, report = await _run(app, "legacy")
    (broken,) = report["steps"]
    assert broken["status"] == "ok"
    assert broken["data"]["is_error"] is True
    assert "rate limited" in broken["data"]["text"]
    assert "`fix.fail` answered with an error:" in markdown


async def test_a_tool_the_server_does_not_have_is_named_with_a_suggestion(
    make_app: AppFactory,
) -> None:
    step = 'name = "typo"\ntype = "mcp-query"\nserver = "fix"\ntool = "ecko"'
    app = make_app(config=fixture_table() + _routine(step))
    _, report = await _run(app, "legacy")
    (typo,) = report["steps"]
    assert typo["error"]["kind"] == "not-found"
    assert "server 'fix' has no tool 'ecko'; did you mean 'echo'?" in typo["error"]["message"]


async def test_content_that_is_not_text_is_named_not_shown(make_app: AppFactory) -> None:
    step = 'name = "pic"\ntype = "mcp-query"\nserver = "fix"\ntool = "picture"'
    app = make_app(config=fixture_table() + _routine(step))
    markdown, report = await _run(app, "legacy")
    (pic,) = report["steps"]
    assert pic["data"]["other_content"] == ["image (image/png)"]
    assert pic["data"]["text"] == "a tiny picture"
    assert "Also: image (image/png) (not shown)" in markdown
    assert "iVBORw0KGgo" not in markdown + json.dumps(report)


def test_long_text_is_bounded_and_a_fence_cannot_be_closed_from_inside() -> None:
    text = shown("x" * 5000, 100)
    assert text.startswith("```text\n" + "x" * 100 + "\n```")
    assert "4900 more characters" in text
    assert fenced("a ``` b") == "````\na ``` b\n````"
    assert shown("plain words", 100) == "```text\nplain words\n```"
    assert shown("- item\n# Title\n```\n# kept in code\n```", 100) == (
        "- item\n### Title\n```\n# kept in code\n```"
    )
