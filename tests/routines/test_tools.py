"""The six routine tools through a real `mcp.Client`, on both protocol revisions."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from prixfixe.app import App
from prixfixe.mcp.server import build_server
from tests.conftest import CORE_TOOLS, AppFactory
from tests.step_fixtures import StepsPlugin

pytestmark = pytest.mark.anyio

CONFIG = """
[routines.demo]
description = "Fixture steps"

[[routines.demo.steps]]
type = "echo"
name = "hello"
text = "hello"

[[routines.demo.steps]]
type = "boom"

[[routines.demo.steps]]
type = "fail"
name = "remote"

[[routines.demo.steps]]
type = "bad-data"

[[routines.demo.steps]]
type = "echo"
name = "bye"
text = "bye"
times = 2

[routines.pair]
[[routines.pair.steps]]
type = "meet"
name = "left"
me = "a"
other = "b"
parallel = true

[[routines.pair.steps]]
type = "meet"
name = "right"
me = "b"
other = "a"
parallel = true

[[routines.pair.steps]]
type = "echo"
name = "after"
text = "done"
"""


@pytest.fixture
def steps() -> StepsPlugin:
    return StepsPlugin()


@pytest.fixture
def app(make_app: AppFactory, steps: StepsPlugin) -> App:
    return make_app(config=CONFIG, plugins=[steps], env=dict(os.environ))


def _text(result: Any, i: int = 0) -> str:
    return str(result.content[i].text)


async def test_a_routine_report_keeps_config_order_and_turns_failures_into_data(
    app: App, revision: str
) -> None:
    async with Client(build_server(app), mode=revision) as client:
        result = await client.call_tool("routine_run", {"name": "demo", "format": "data"})
    assert result.is_error is False
    data = result.structured_content
    assert data is not None
    assert [s["name"] for s in data["steps"]] == ["hello", "boom", "remote", "bad-data", "bye"]
    assert [s["status"] for s in data["steps"]] == ["ok", "failed", "failed", "failed", "ok"]
    assert data["status"] == "partial"
    boom, remote, bad = data["steps"][1:4]
    assert boom["error"]["kind"] == "crash"
    assert "RuntimeError: the fixture step crashed on purpose" in boom["error"]["message"]
    assert remote["error"] == {
        "kind": "unavailable",
        "message": "step 'remote': the service said no",
    }
    assert bad["error"]["kind"] == "invalid-output"
    assert "breaks its schema 1.0: text" in bad["error"]["message"]
    assert data["steps"][4]["data"] == {"text": "bye", "times": 2}


async def test_data_format_validates_against_the_advertised_output_schema_and_is_also_text(
    app: App, revision: str
) -> None:
    async with Client(build_server(app), mode=revision) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        results = {
            "routine_run": await client.call_tool(
                "routine_run", {"name": "demo", "format": "data"}
            ),
            "step_run": await client.call_tool(
                "step_run", {"type": "echo", "params": {"text": "x"}, "format": "data"}
            ),
            "routine_eval": await client.call_tool(
                "routine_eval", {"steps": [{"type": "echo", "text": "y"}], "format": "data"}
            ),
            "report_get": await client.call_tool("report_get", {"format": "data"}),
        }
    assert set(tools) & set(results) == {"routine_run"}, "the others are reached by discovery"
    for name, result in results.items():
        # The tool's output schema, as tool_describe gives it (listed or not).
        schema = app.registry.get(name).output_schema
        assert schema is not None, name
        Draft202012Validator(schema).validate(result.structured_content)
        assert len(result.content) == 1
        assert json.loads(_text(result)) == result.structured_content


async def test_markdown_format_is_the_report_for_people_and_both_gives_markdown_then_json(
    app: App, revision: str
) -> None:
    async with Client(build_server(app), mode=revision) as client:
        md = await client.call_tool("routine_run", {"name": "demo"})
        both = await client.call_tool("routine_run", {"name": "demo", "format": "both"})
    text = _text(md)
    assert len(md.content) == 1
    assert text.startswith("# demo\n")
    assert "## hello\n\nhello" in text
    assert "## boom — failed (crash)" in text
    assert "## bye\n\nbye bye" in text
    assert len(both.content) == 2
    assert _text(both).startswith("# demo")
    assert json.loads(_text(both, 1))["routine"] == "demo"


async def test_curated_format_shows_each_steps_data_explained_and_keeps_the_typed_report(
    app: App, revision: str
) -> None:
    async with Client(build_server(app), mode=revision) as client:
        curated = await client.call_tool("routine_run", {"name": "demo", "format": "curated"})
        fetched = await client.call_tool("report_get", {"format": "curated"})
    text = _text(curated)
    assert len(curated.content) == 1
    lines = text.splitlines()
    assert lines[0].startswith("demo: partial (generation ")
    assert lines[1:4] == ["## hello (echo): ok", "text: hello", "times: 1"]
    assert "## boom (boom): failed" in lines
    assert "RuntimeError: the fixture step crashed on purpose" in text
    assert lines[-3:] == ["## bye (echo): ok", "text: bye", "times: 2"]
    assert curated.structured_content is not None
    assert curated.structured_content["steps"][4]["data"] == {"text": "bye", "times": 2}
    assert _text(fetched) == text, "a kept report curates the same"


async def test_reports_are_kept_by_generation_and_fetched_again(app: App, revision: str) -> None:
    async with Client(build_server(app), mode=revision) as client:
        first = await client.call_tool("routine_run", {"name": "demo", "format": "data"})
        second = await client.call_tool("step_run", {"type": "echo", "params": {"text": "x"}})
        gen1 = first.structured_content["generation"]  # type: ignore[index]
        gen2 = second.structured_content["generation"]  # type: ignore[index]
        assert gen2 > gen1
        latest = await client.call_tool("report_get", {"format": "data"})
        assert latest.structured_content["generation"] == gen2  # type: ignore[index]
        assert latest.structured_content["routine"] == "(step)"  # type: ignore[index]
        of_demo = await client.call_tool("report_get", {"routine": "demo", "format": "data"})
        assert of_demo.structured_content == first.structured_content
        again = await client.call_tool("report_get", {"generation": gen1})
        assert _text(again).startswith("# demo")
        missing = await client.call_tool("report_get", {"generation": gen2 + 100})
    assert missing.is_error is True
    assert f"no report at generation {gen2 + 100}" in _text(missing)


async def test_the_report_generation_is_a_store_generation(app: App) -> None:
    async with Client(build_server(app), mode="legacy") as client:
        put = await client.call_tool(
            "store_put", {"kind": "reminder", "record": {"text": "x", "due": "2030-01-01"}}
        )
        run = await client.call_tool("step_run", {"type": "echo", "params": {"text": "x"}})
        put2 = await client.call_tool(
            "store_put", {"kind": "reminder", "record": {"text": "y", "due": "2030-01-01"}}
        )
    generations = [r.structured_content["generation"] for r in (put, run, put2)]  # type: ignore[index]
    assert generations == sorted(generations)
    assert len(set(generations)) == 3


async def test_parallel_steps_overlap_and_the_report_keeps_config_order(
    app: App, steps: StepsPlugin, revision: str
) -> None:
    # Each `meet` step finishes only after the other has started: run one after the other,
    # they would wait forever (and the test's bound would fail it).
    with anyio.fail_after(20):
        async with Client(build_server(app), mode=revision) as client:
            result = await client.call_tool("routine_run", {"name": "pair", "format": "data"})
    data = result.structured_content
    assert data is not None
    assert [s["name"] for s in data["steps"]] == ["left", "right", "after"]
    assert all(s["status"] == "ok" for s in data["steps"])
    assert steps.ran[-1] == "after"


async def test_routine_eval_has_exactly_the_semantics_of_a_configured_routine(
    app: App, revision: str
) -> None:
    inline = [
        {"type": "echo", "name": "hello", "text": "hello"},
        {"type": "boom"},
        {"type": "fail", "name": "remote"},
        {"type": "bad-data"},
        {"type": "echo", "name": "bye", "text": "bye", "times": 2},
    ]
    async with Client(build_server(app), mode=revision) as client:
        configured = await client.call_tool("routine_run", {"name": "demo", "format": "both"})
        evaluated = await client.call_tool("routine_eval", {"steps": inline, "format": "both"})

    def comparable(result: Any) -> Any:
        data = dict(result.structured_content)
        for key in ("routine", "generation", "started", "ms"):
            data.pop(key)
        return data

    assert comparable(evaluated) == comparable(configured)
    body = _text(configured).split("\n", 4)[4]  # after the title and the report line
    assert _text(evaluated).split("\n", 4)[4] == body


async def test_unknown_routine_is_a_tool_error_with_a_suggestion(app: App, revision: str) -> None:
    async with Client(build_server(app), mode=revision) as client:
        result = await client.call_tool("routine_run", {"name": "dmeo"})
    assert result.is_error is True
    assert "unknown routine 'dmeo'; did you mean 'demo'?" in _text(result)


async def test_inline_steps_with_a_typo_name_the_step_and_the_key(app: App, revision: str) -> None:
    async with Client(build_server(app), mode=revision) as client:
        typo = await client.call_tool(
            "routine_eval",
            {"steps": [{"type": "echo", "text": "a"}, {"type": "echo", "name": "b", "txet": "x"}]},
        )
        unknown = await client.call_tool("step_run", {"type": "ecko", "params": {}})
        bad_value = await client.call_tool(
            "step_run", {"type": "echo", "params": {"text": "a", "times": 99}}
        )
    assert typo.is_error is True
    assert "steps[1].txet: step 'b' (echo): unknown key 'txet'; did you mean 'text'?" in _text(typo)
    assert unknown.is_error is True
    assert "unknown step type 'ecko'; did you mean 'echo'?" in _text(unknown)
    assert bad_value.is_error is True
    assert "key 'times': input should be less than or equal to 10 (got 99)" in _text(bad_value)


async def test_inline_steps_cannot_carry_credentials(app: App) -> None:
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool(
            "routine_eval",
            {"steps": [{"type": "echo", "text": "a", "secrets": {"T": {"env": "HOME"}}}]},
        )
    assert result.is_error is True
    assert "credentials are configured in a routine, not passed inline" in _text(result)


async def test_steps_list_shows_each_type_with_its_data_schema_and_version(
    app: App, revision: str
) -> None:
    async with Client(build_server(app), mode=revision) as client:
        everything = await client.call_tool("steps_list", {})
        one = await client.call_tool("steps_list", {"type": "git-status"})
    types = {t["type"]: t for t in everything.structured_content["step_types"]}  # type: ignore[index]
    assert {
        "git-status",
        "git-unpushed",
        "git-tend",
        "deadline-calc",
        "countdown-calc",
        "reminders",
        "board-scan",
        "script",
        "harness",
        "echo",
    } <= set(types)
    status = one.structured_content["step_types"][0]  # type: ignore[index]
    assert status["version"] == "1.1"
    # Read through libgit2: git only when its params ask to fetch.
    assert status["programs"] == ["(chosen by its params)"]
    assert types["git-unpushed"]["programs"] == []
    assert types["git-tend"]["programs"] == ["git"]
    assert "clean" in status["data"]["properties"]["repos"]["items"]["properties"]["status"]["enum"]
    assert status["params"]["required"] == ["repos"]


async def test_routine_list_shows_configured_routines_and_the_built_in_morning(
    app: App, revision: str
) -> None:
    async with Client(build_server(app), mode=revision) as client:
        result = await client.call_tool("routine_list", {})
    names = [r["name"] for r in result.structured_content["routines"]]  # type: ignore[index]
    assert names == ["demo", "pair", "morning"]
    assert "- demo [" in _text(result)


async def test_a_pinned_old_major_is_refused_loudly_before_anything_runs(
    app: App, steps: StepsPlugin, revision: str
) -> None:
    async with Client(build_server(app), mode=revision) as client:
        pinned = await client.call_tool(
            "routine_run", {"name": "demo", "schema_major": {"echo": 0}}
        )
        assert pinned.is_error is True
        assert steps.ran == []
        text = _text(pinned)
        assert "schema pin mismatch: 'echo' data is version 1.0, you pinned major 0" in text
        assert "none is returned" in text
        right = await client.call_tool(
            "routine_run", {"name": "demo", "schema_major": {"echo": 1, "report": 1}}
        )
        assert right.is_error is False
        typo = await client.call_tool("report_get", {"schema_major": {"ecko": 1}})
        assert typo.is_error is True
        assert "'ecko', which is neither 'report' nor a step type" in _text(typo)
        old = await client.call_tool("report_get", {"schema_major": {"report": 2}})
        assert old.is_error is True
        assert "'report' data is version 1.1, you pinned major 2" in _text(old)


async def test_routine_run_sends_progress_per_step_when_asked(app: App, revision: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async with Client(build_server(app), mode=revision) as client:
        await client.call_tool("routine_run", {"name": "demo"}, progress_callback=progress)
    assert [p[0] for p in seen] == [1, 2, 3, 4, 5]
    assert {p[1] for p in seen} == {5}
    assert seen[0][2] == "hello: ok"
    assert seen[1][2] == "boom: failed"


async def test_cancelling_routine_run_stops_the_remaining_steps(
    make_app: AppFactory, steps: StepsPlugin, revision: str
) -> None:
    config = """
[routines.long]
[[routines.long.steps]]
type = "echo"
name = "first"
text = "1"
[[routines.long.steps]]
type = "block"
[[routines.long.steps]]
type = "echo"
name = "never"
text = "3"
"""
    app = make_app(config=config, plugins=[steps])
    progressed: list[str | None] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        progressed.append(message)

    with anyio.fail_after(20):
        async with Client(build_server(app), mode=revision) as client:
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await client.call_tool(
                        "routine_run", {"name": "long"}, progress_callback=progress
                    )

                tg.start_soon(call)
                await steps.blocking.wait()
                tg.cancel_scope.cancel()
            await steps.cancelled.wait()
            # The server is still serving after the cancelled call.
            assert len((await client.list_tools()).tools) == len(CORE_TOOLS)
    assert progressed == ["first: ok"]
    assert steps.ran == ["first"]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_routine_run_over_stdio_sends_progress_and_keeps_the_report(
    tmp_path: Path, mode: str
) -> None:
    from mcp import StdioServerParameters

    (tmp_path / "prixfixe.toml").write_text(
        '[routines.two]\n[[routines.two.steps]]\ntype = "reminders"\n'
        '[[routines.two.steps]]\ntype = "board-scan"\npath = "no-board"\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "prixfixe", "serve"],
        env={
            **env,
            "PRIXFIXE_HOME": str(tmp_path / "home"),
            "PRIXFIXE_CONFIG": str(tmp_path / "prixfixe.toml"),
        },
        cwd=tmp_path,
    )
    seen: list[str | None] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    with anyio.fail_after(60):
        async with Client(params, mode=mode) as client:
            run = await client.call_tool(
                "routine_run", {"name": "two", "format": "data"}, progress_callback=progress
            )
            again = await client.call_tool("report_get", {"format": "data"})
    assert seen == ["reminders: ok", "board-scan: failed"]
    assert run.structured_content is not None
    assert run.structured_content["status"] == "partial"
    assert again.structured_content == run.structured_content
