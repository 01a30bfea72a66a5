"""The `program` step: a program kept in a routine (a config file), run by `routine_run`
through real MCP clients. Its value is the step's data; its calls take the dispatch a direct
call takes, counted against the session running the routine; a failing program fails the
step (line, calls that ran) and the routine goes on."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from prixfixe.app import App
from prixfixe.programs.runner import CallRecord, ProgramFailure, ProgramOutcome
from prixfixe.programs.step import failure_message
from tests.programs.conftest import ProbePlugin, client, run, text_of

pytestmark = pytest.mark.anyio

Probed = Callable[..., App]


def _routine(*steps: tuple[str, str], name: str = "morning", extra: str = "") -> str:
    """A routine of `program` steps, each (name, code), the code a TOML literal string."""
    out = f"[routines.{name}]\n"
    for step, code in steps:
        out += (
            f'[[routines.{name}.steps]]\nname = {json.dumps(step)}\ntype = "program"\n'
            f"code = '''\n{code}'''\n{extra}"
        )
    return out


async def _routine_run(
    app: App, revision: str = "legacy", name: str = "morning"
) -> tuple[str, dict[str, Any]]:
    async with client(app, revision) as connected:
        result = await connected.call_tool("routine_run", {"name": name, "format": "both"})
    assert not result.is_error, text_of(result)
    return result.content[0].text, result.structured_content or {}  # type: ignore[union-attr]


def _reminders(app: App) -> list[str]:
    return [r.record["text"] for r in app.store.query("reminder").records]


GREET = (
    "names = ['ana', 'bo']\n"
    "said = [await call_tool('probe_greet', {'name': n}) for n in names]\n"
    "{'greetings': said, 'count': len(said)}\n"
)


async def test_a_routine_keeps_a_program_and_its_report_holds_the_value(
    probed: Probed, revision: str
) -> None:
    app = probed(_routine(("hello", GREET)))
    markdown, report = await _routine_run(app, revision)
    assert report["status"] == "ok"
    (step,) = report["steps"]
    assert (step["type"], step["version"], step["status"]) == ("program", "1.0", "ok")
    assert step["data"] == {
        "value": {"greetings": ["hello ana", "hello bo"], "count": 2},
        "calls": [
            {"name": "probe_greet", "ok": True, "error": None},
            {"name": "probe_greet", "ok": True, "error": None},
        ],
        "truncated": False,
        "note": None,
        "printed": None,
    }
    # For people: the value as JSON in a code block, then the calls it made.
    assert '```json\n{\n "greetings": [\n  "hello ana",\n  "hello bo"\n ],' in markdown
    assert "_2 calls: probe_greet ok x2._" in markdown


async def test_a_value_that_reads_as_markdown_cannot_pass_for_a_section(
    probed: Probed,
) -> None:
    code = "'## not a step of the report\\n- ' + await call_tool('probe_greet', {'name': 'x'})\n"
    app = probed(_routine(("said", code)))
    markdown, report = await _routine_run(app)
    assert report["steps"][0]["data"]["value"] == "## not a step of the report\n- hello x"
    assert "\n#### not a step of the report\n- hello x" in markdown
    assert "\n## not a step" not in markdown


async def test_a_long_value_is_shown_bounded_and_kept_whole_in_the_data(probed: Probed) -> None:
    code = "'x' * 5000\n"
    config = _routine(("long", code), extra="max_chars = 100\n")
    markdown, report = await _routine_run(probed(config))
    assert report["steps"][0]["data"]["value"] == "x" * 5000
    assert "```text\n" + "x" * 100 + "\n```" in markdown
    assert "... 4900 more characters (the step's data has the whole value)" in markdown
    assert "_0 calls._" in markdown


async def test_a_value_over_the_result_limit_is_cut_with_a_note(probed: Probed) -> None:
    config = _routine(("many", "list(range(2000))\n")) + "[programs]\nmax_result_tokens = 50\n"
    markdown, report = await _routine_run(probed(config))
    data = report["steps"][0]["data"]
    assert data["truncated"] is True
    assert data["note"].startswith(f"kept {len(data['value'])} of 2000 list items")
    assert f"_The value was cut: {data['note']}._" in markdown


async def test_a_failing_program_fails_its_step_with_the_line_and_the_calls_that_ran(
    probed: Probed, revision: str
) -> None:
    broken = (
        "await call_tool('store_put', {'kind': 'reminder', 'record': {'text': 'kept', "
        "'due': '2030-01-01'}})\n"
        "await call_tool('probe_greet', {'name': 'a'})\n"
        "x = 1 / 0\n"
    )
    app = probed(_routine(("broken", broken), ("hello", GREET)))
    markdown, report = await _routine_run(app, revision)
    assert report["status"] == "partial"  # the routine went on
    failed, hello = report["steps"]
    assert failed["status"] == "failed"
    assert failed["data"] is None
    assert failed["error"] == {
        "kind": "error",
        "message": "step 'broken': the program failed at line 3: ZeroDivisionError: division "
        "by zero; before it failed, 2 calls: store_put ok, probe_greet ok. What those calls "
        "changed stays changed: nothing is rolled back.",
    }
    assert hello["status"] == "ok"
    assert "## broken — failed (error)\n\n> step 'broken': the program failed at line 3" in (
        markdown
    )
    assert _reminders(app) == ["kept"]  # not rolled back


async def test_a_syntax_error_names_its_line_and_that_no_call_ran(probed: Probed) -> None:
    _, report = await _routine_run(probed(_routine(("typo", "x = 1\ndef (:\n"))))
    message = report["steps"][0]["error"]["message"]
    assert message.startswith("step 'typo': the program failed at line 2: ")
    assert message.endswith("; no tool call had run.")
    assert "\n" not in message  # one line: a report quotes it


async def test_a_denied_facet_inside_a_steps_program_is_refused_as_a_direct_call_is(
    probed: Probed, probe: ProbePlugin, revision: str
) -> None:
    code = "try:\n    await call_tool('secret_touch')\nexcept ToolError as e:\n    r = str(e)\nr\n"
    app = probed('[mcp]\ndeny = ["secret"]\n' + _routine(("sneak", code)))
    _, report = await _routine_run(app, revision)
    async with client(app, revision) as connected:
        direct = await connected.call_tool("tool_invoke", {"name": "secret_touch"})
    assert probe.touched == 0  # the handler never ran
    assert direct.is_error
    assert report["steps"][0]["data"]["value"] == f"secret_touch: {text_of(direct)}"
    assert report["steps"][0]["data"]["calls"] == [
        {"name": "secret_touch", "ok": False, "error": f"secret_touch: {text_of(direct)}"}
    ]


async def test_with_the_programs_facet_denied_the_step_is_refused_and_nothing_runs(
    probed: Probed,
) -> None:
    put = (
        "await call_tool('store_put', {'kind': 'reminder', 'record': {'text': 'never', "
        "'due': '2030-01-01'}})\n"
    )
    app = probed('[mcp]\ndeny = ["programs"]\n' + _routine(("put", put)))
    _, report = await _routine_run(app)
    (step,) = report["steps"]
    assert step["error"]["kind"] == "refused"
    assert (
        "tool 'program_run' is in facet 'programs', which is denied by" in step["error"]["message"]
    )
    assert _reminders(app) == []


async def test_a_steps_calls_count_against_the_session_running_the_routine(
    probed: Probed, revision: str
) -> None:
    code = (
        "out = []\n"
        "for i in range(3):\n"
        "    try:\n"
        "        out.append(await call_tool('probe_greet', {'name': str(i)}))\n"
        "    except ToolError as e:\n"
        "        out.append(str(e))\n"
        "out\n"
    )
    app = probed("[leash]\nmax_calls = 3\n" + _routine(("count", code)))
    _, report = await _routine_run(app, revision)  # routine_run is the first of three
    value = report["steps"][0]["data"]["value"]
    assert value[:2] == ["hello 0", "hello 1"]
    assert value[2].startswith("probe_greet: the leash allows 3")


async def test_a_limit_above_the_configured_one_is_refused_naming_it(probed: Probed) -> None:
    config = _routine(("hello", GREET), extra="limits = { max_calls = 500 }\n")
    _, report = await _routine_run(probed(config))
    (step,) = report["steps"]
    assert step["error"]["kind"] == "refused"
    assert (
        "limits.max_calls 500 is above the configured 50 ([programs] max_calls)"
        in step["error"]["message"]
    )


async def test_a_lowered_limit_applies(probed: Probed) -> None:
    config = _routine(("hello", GREET), extra="limits = { max_calls = 1 }\n")
    _, report = await _routine_run(probed(config))
    (step,) = report["steps"]
    assert step["status"] == "failed"
    assert (
        "made its 1 tool calls (max_calls); probe_greet was not called" in step["error"]["message"]
    )
    assert "before it failed, 1 call: probe_greet ok." in step["error"]["message"]


async def test_a_program_cannot_run_a_program_step_through_a_routine(
    probed: Probed, probe: ProbePlugin, revision: str
) -> None:
    inner = "await call_tool('secret_touch')\n"
    app = probed(_routine(("inner", inner)))
    outer = "r = await call_tool('routine_run', {'name': 'morning', 'format': 'data'})\nr"
    async with client(app, revision) as connected:
        result = await run(connected, outer)
    assert not result.is_error, text_of(result)
    (step,) = result.structured_content["value"]["steps"]  # type: ignore[index]
    assert step["error"]["kind"] == "refused"
    assert "a program cannot run inside a program" in step["error"]["message"]
    assert probe.touched == 0


async def test_an_inline_program_step_runs_like_program_run(probed: Probed, revision: str) -> None:
    async with client(probed(), revision) as connected:
        result = await connected.call_tool(
            "step_run", {"type": "program", "params": {"code": GREET}, "format": "data"}
        )
    assert not result.is_error, text_of(result)
    (step,) = (result.structured_content or {})["steps"]
    assert step["data"]["value"]["count"] == 2


async def test_without_the_extra_the_step_fails_with_the_same_reason(
    no_extra: None, probed: Probed, revision: str
) -> None:
    _, report = await _routine_run(probed(_routine(("hello", GREET))), revision)
    (step,) = report["steps"]
    assert step["error"]["kind"] == "unavailable"
    message = step["error"]["message"]
    assert message.startswith(
        "step 'hello': the program failed: programs unavailable: the programs extra "
        "(pydantic-monty) is not installed"
    )
    assert message.endswith("to enable them: pip install 'prixfixe[programs]'")


def test_a_failure_names_only_what_a_tool_could_be_called() -> None:
    outcome = ProgramOutcome(
        calls=[CallRecord("## heading\nbreak", error="unknown"), CallRecord("fix.add", ok=True)],
        failure=ProgramFailure("runtime", "Exception: boom", line=2),
    )
    assert failure_message("s", outcome) == (
        "step 's': the program failed at line 2: Exception: boom; before it failed, 2 calls: "
        "? failed, fix.add ok. What those calls changed stays changed: nothing is rolled back."
    )


async def test_where_no_program_can_run_the_step_says_so(probed: Probed) -> None:
    app = probed(_routine(("hello", GREET)))
    stored = await app.routines.run(app.routines.get("morning"), lambda: app.store)
    (step,) = stored.report.steps
    assert step.error is not None
    assert (step.error.kind, step.error.message) == (
        "error",
        "step 'hello': programs cannot run here",
    )
