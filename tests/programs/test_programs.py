"""`program_run` through real MCP clients: a program chains tools (one a mounted server's)
and only its value comes back; every limit refuses clearly; it reaches nothing a direct call
could not (asserted at the point of effect); failures say where, and which calls had run."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from prixfixe.app import App
from prixfixe.leash.fs import observe_opens, unobserve_opens
from prixfixe.leash.net import observe_connections, unobserve_connections
from tests.conftest import AppFactory
from tests.programs.conftest import ProbePlugin, client, run, text_of
from tests.servers.conftest import fixture_table, ready

pytestmark = pytest.mark.anyio

Probed = Callable[..., App]


def _reminders(app: App) -> list[Any]:
    return list(app.store.query("reminder").records)


# -- chaining --------------------------------------------------------------------------------


@pytest.mark.slow
async def test_a_program_chains_tools_one_mounted_and_only_its_value_comes_back(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(config=fixture_table())
    await ready(app)
    code = (
        "put = await call_tool('store_put', {'kind': 'reminder', "
        "'record': {'text': 'water the plants', 'due': '2030-01-01'}})\n"
        "total = await call_tool('fix.add', {'a': 2, 'b': 40})\n"
        "found = await call_tool('store_query', {'kind': 'reminder'})\n"
        "{'sum': total, 'reminders': len(found['records']), 'id': put['id']}"
    )
    async with client(app, revision) as connected:
        result = await run(connected, code)
    text = text_of(result)
    assert not result.is_error, text
    data = result.structured_content
    assert data is not None
    assert data["value"]["reminders"] == 1
    assert json.dumps(data["value"]["sum"]).count("42") == 1
    assert [c["name"] for c in data["calls"]] == ["store_put", "fix.add", "store_query"]
    assert all(c["ok"] for c in data["calls"])
    # The records the program read stay in the sandbox: only the value reaches the client.
    assert "water the plants" not in text
    assert "water the plants" not in json.dumps(data)
    first, footer = text.splitlines()
    assert json.loads(first) == data["value"]
    assert footer == "3 calls: store_put ok, fix.add ok, store_query ok."
    # And the write happened, through the store's own tool.
    assert [r.record["text"] for r in _reminders(app)] == ["water the plants"]


async def test_results_are_typed_values_and_gather_runs_calls_together(
    probed: Probed, revision: str
) -> None:
    code = (
        "import asyncio\n"
        "a, b = await asyncio.gather(call_tool('store_kinds'), call_tool('probe_greet', "
        "{'name': 'Ana'}))\n"
        "[type(a).__name__, sorted(k['name'] for k in a['kinds'])[:1], b]"
    )
    async with client(probed(), revision) as connected:
        result = await run(connected, code)
    assert not result.is_error, text_of(result)
    value = result.structured_content["value"]  # type: ignore[index]
    assert value[0] == "dict"
    assert value[2] == "hello Ana"  # a tool without structured output: its text


# -- limits ----------------------------------------------------------------------------------


async def test_an_endless_loop_stops_at_the_time_limit(probed: Probed) -> None:
    async with client(probed()) as connected:
        result = await run(connected, "x = 0\nwhile True:\n    x += 1\n", {"timeout_seconds": 1})
        after = await run(connected, "1 + 1")
    assert result.is_error
    assert result.structured_content["error"]["kind"] == "timeout"  # type: ignore[index]
    assert "time limit of 1 s (timeout_seconds)" in text_of(result)
    assert not after.is_error
    assert after.structured_content["value"] == 2


async def test_a_program_waiting_on_a_tool_stops_at_the_wall_time(probed: Probed) -> None:
    # Waiting is not computing: only the wall time stops a program stuck in a tool call.
    async with client(probed()) as connected:
        result = await run(connected, "await call_tool('probe_meet')", {"timeout_seconds": 1})
    assert result.is_error
    data = result.structured_content
    assert data["error"]["kind"] == "timeout"  # type: ignore[index]
    assert data["calls"] == [  # type: ignore[index]
        {"name": "probe_meet", "ok": False, "error": "stopped by the time limit"}
    ]
    assert "tool calls included" in text_of(result)


async def test_a_huge_list_stops_at_the_memory_limit(probed: Probed) -> None:
    code = "x = [0] * 10\nwhile True:\n    x = x + x\n"
    async with client(probed()) as connected:
        result = await run(connected, code, {"max_memory_mb": 8})
    assert result.is_error
    data = result.structured_content
    assert data["error"]["kind"] == "memory"  # type: ignore[index]
    assert data["error"]["line"] == 3  # type: ignore[index]
    assert "more than its 8 MiB of memory (max_memory_mb)" in text_of(result)


async def test_the_call_past_the_limit_raises_inside_the_program(probed: Probed) -> None:
    code = (
        "n = 0\n"
        "try:\n"
        "    while True:\n"
        "        await call_tool('probe_greet', {'name': 'x'})\n"
        "        n += 1\n"
        "except ToolError as e:\n"
        "    said = str(e)\n"
        "[n, said]"
    )
    async with client(probed()) as connected:
        result = await run(connected, code, {"max_calls": 3})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    n, said = data["value"]  # type: ignore[index]
    assert n == 3
    assert "made its 3 tool calls (max_calls)" in said
    assert len(data["calls"]) == 3  # type: ignore[index]
    assert "3 calls: probe_greet ok x3." in text_of(result)


async def test_a_big_value_is_cut_with_a_note_of_what_was_left_out(probed: Probed) -> None:
    async with client(probed()) as connected:
        listed = await run(connected, "list(range(5000))", {"max_result_tokens": 100})
        long = await run(connected, "'word ' * 5000", {"max_result_tokens": 100})
    data = listed.structured_content
    assert not listed.is_error
    assert data["truncated"] is True  # type: ignore[index]
    kept = len(data["value"])  # type: ignore[index]
    assert 0 < kept < 5000
    assert data["value"] == list(range(kept))  # type: ignore[index]
    assert data["note"] == (  # type: ignore[index]
        f"kept {kept} of 5000 list items to stay within 100 tokens (max_result_tokens)"
    )
    assert f"[cut: kept {kept} of 5000 list items" in text_of(listed)
    text = long.structured_content
    assert text["truncated"]
    assert "of 25000 characters" in text["note"]


async def test_limits_may_only_be_lowered(probed: Probed) -> None:
    async with client(probed()) as connected:
        result = await run(connected, "1", {"max_calls": 51})
        too_long = await run(connected, "x = 1\n" * 4000)
    assert result.is_error
    assert "limits.max_calls 51 is above the configured 50 ([programs] max_calls)" in text_of(
        result
    )
    assert too_long.is_error
    assert text_of(too_long).startswith("code is 24000 characters; a program is at most 20000")
    assert "x = 1" not in text_of(too_long)  # the code is not echoed back


async def test_configured_limits_apply(probed: Probed) -> None:
    app = probed("[programs]\nmax_calls = 1\n")
    code = "await call_tool('probe_greet', {'name': 'a'})\nawait call_tool('store_kinds')"
    async with client(app) as connected:
        result = await run(connected, code)
    assert result.is_error
    assert "made its 1 tool calls (max_calls); store_kinds was not called" in text_of(result)


# -- the same authority as direct calls ------------------------------------------------------


async def test_a_denied_facet_is_refused_as_a_direct_call_is_and_nothing_runs(
    probed: Probed, probe: ProbePlugin, revision: str
) -> None:
    app = probed('[mcp]\ndeny = ["secret"]\n')
    code = "try:\n    await call_tool('secret_touch')\nexcept ToolError as e:\n    r = str(e)\nr"
    async with client(app, revision) as connected:
        direct = await connected.call_tool("tool_invoke", {"name": "secret_touch"})
        result = await run(connected, code)
    assert probe.touched == 0  # the handler never ran
    assert direct.is_error
    assert result.structured_content["value"] == f"secret_touch: {text_of(direct)}"  # type: ignore[index]
    assert "denied" in text_of(direct)


async def test_a_file_outside_the_grant_is_refused_by_the_gate_and_not_opened(
    probed: Probed, tmp_path: Path
) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("the-file-content-must-not-leak")
    opened: list[Path] = []
    observe_opens(opened.append)
    try:
        async with client(probed()) as connected:
            result = await run(
                connected, f"await call_tool('probe_read', {{'path': {str(secret)!r}}})"
            )
            direct = await connected.call_tool(
                "tool_invoke", {"name": "probe_read", "arguments": {"path": str(secret)}}
            )
    finally:
        unobserve_opens(opened.append)
    assert result.is_error
    assert direct.is_error
    assert opened == []
    assert "the-file-content-must-not-leak" not in result.model_dump_json()
    assert text_of(direct) in text_of(result)  # the gate's own refusal, word for word


async def test_an_ungranted_host_is_refused_and_not_reached(probed: Probed) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    port = listener.getsockname()[1]
    reached: list[tuple[str, int]] = []

    def seen(host: str, at: int) -> None:
        reached.append((host, at))

    observe_connections(seen)
    try:
        async with client(probed()) as connected:
            code = f"await call_tool('probe_fetch', {{'url': 'http://127.0.0.1:{port}/'}})"
            result = await run(connected, code)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    finally:
        unobserve_connections(seen)
        listener.close()
    assert result.is_error
    assert reached == []
    assert "127.0.0.1" in text_of(result)


async def test_open_in_a_program_writes_nothing(probed: Probed, tmp_path: Path) -> None:
    marker = tmp_path / "marker.txt"
    async with client(probed()) as connected:
        result = await run(connected, f"open({str(marker)!r}, 'w').write('x')")
    assert result.is_error
    assert not marker.exists()
    assert "PermissionError" in text_of(result)
    assert result.structured_content["error"]["line"] == 1  # type: ignore[index]


@pytest.mark.parametrize(
    "code",
    [
        "import os\nos.environ.get('PROGRAM_SECRET')",
        "import os\nos.getenv('PROGRAM_SECRET')",
        "__import__('os').environ['PROGRAM_SECRET']",
        "import subprocess",
        "import os\nos.listdir('/')",
        "from pathlib import Path\nPath('/proc/self/environ').read_text()",
    ],
)
async def test_imports_and_the_environment_give_nothing(
    probed: Probed, monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    monkeypatch.setenv("PROGRAM_SECRET", "environment-value-must-not-leak")
    async with client(probed()) as connected:
        result = await run(connected, code)
    assert result.is_error
    assert "environment-value-must-not-leak" not in result.model_dump_json()


async def test_program_run_the_trio_and_tool_invoke_cannot_be_called_from_a_program(
    probed: Probed,
) -> None:
    async with client(probed()) as connected:
        for name in ("program_run", "tool_invoke", "tool_search", "tool_describe"):
            result = await run(connected, f"await call_tool({name!r}, {{}})")
            assert result.is_error
            assert f"{name} cannot be called from a program" in text_of(result)


async def test_a_program_never_asks_the_person_a_missing_argument_gets_the_fallback(
    probed: Probed,
) -> None:
    asked: list[Any] = []

    async def person(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ana"})

    async with client(probed(), elicitation_callback=person) as connected:
        direct = await connected.call_tool("tool_invoke", {"name": "probe_greet"})
        result = await run(connected, "await call_tool('probe_greet')")
    assert len(asked) == 1  # the direct call asked; the program's call did not
    assert not direct.is_error
    assert result.is_error
    assert "missing required argument 'name'" in text_of(result)


async def test_max_calls_counts_a_programs_calls_as_direct_ones(
    probed: Probed, revision: str
) -> None:
    app = probed("[leash]\nmax_calls = 3\n")
    code = (
        "out = []\n"
        "for i in range(3):\n"
        "    try:\n"
        "        out.append(await call_tool('probe_greet', {'name': str(i)}))\n"
        "    except ToolError as e:\n"
        "        out.append(str(e))\n"
        "out"
    )
    async with client(app, revision) as connected:
        result = await run(connected, code)  # this call is the first of three
        after = await connected.call_tool(
            "tool_invoke", {"name": "probe_greet", "arguments": {"name": "z"}}
        )
    if revision == "legacy":
        value = result.structured_content["value"]  # type: ignore[index]
        assert value[:2] == ["hello 0", "hello 1"]
        assert value[2].startswith("probe_greet: the leash allows 3 tool calls per session")
        assert after.is_error
        assert "the leash allows 3 tool calls" in text_of(after)
    else:  # stateless: one count for the process, spent the same way
        value = result.structured_content["value"]  # type: ignore[index]
        assert value[:2] == ["hello 0", "hello 1"]
        assert "the leash allows 3" in value[2]


# -- failures --------------------------------------------------------------------------------


async def test_syntax_and_runtime_errors_give_their_line(probed: Probed) -> None:
    async with client(probed()) as connected:
        syntax = await run(connected, "x = 1\ndef (:\n")
        runtime = await run(connected, "x = 1\ny = 2\nz = x / 0\n")
    assert syntax.is_error
    assert runtime.is_error
    assert syntax.structured_content["error"]["kind"] == "syntax"  # type: ignore[index]
    assert text_of(syntax).startswith("The program failed at line 2: ")
    assert text_of(runtime).startswith(
        "The program failed at line 3: ZeroDivisionError: division by zero"
    )
    assert 'File "program", line 3' in text_of(runtime)
    assert text_of(runtime).endswith("No tool call had run.")


async def test_a_failure_reports_the_calls_that_ran_and_that_nothing_is_rolled_back(
    probed: Probed,
) -> None:
    app = probed()
    code = (
        "await call_tool('store_put', {'kind': 'reminder', 'record': {'text': 'kept', "
        "'due': '2030-01-01'}})\n"
        "await call_tool('probe_greet', {'name': 'a'})\n"
        "await call_tool('no_such_tool')\n"
    )
    async with client(app) as connected:
        result = await run(connected, code)
    text = text_of(result)
    assert result.is_error
    assert text.startswith("The program failed at line 3: Exception: no_such_tool: unknown tool")
    assert (
        "Before it failed, 3 calls: store_put ok, probe_greet ok, no_such_tool failed. What "
        "those calls changed stays changed: nothing is rolled back."
    ) in text
    assert [r.record["text"] for r in _reminders(app)] == ["kept"]


async def test_print_is_kept_not_written_to_stdout(
    probed: Probed, capfd: pytest.CaptureFixture[str]
) -> None:
    async with client(probed()) as connected:
        result = await run(connected, "print('hello from the program')\n7")
    assert result.structured_content["printed"] == "hello from the program\n"  # type: ignore[index]
    assert "hello from the program" not in capfd.readouterr().out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds workers in /proc")
async def test_a_crashed_worker_is_a_clear_error_and_the_server_keeps_serving(
    probed: Probed,
) -> None:
    async with client(probed()) as connected:
        crashed = await run(connected, "await call_tool('probe_kill')\n1")
        after = await run(connected, "6 * 7")
    assert crashed.is_error
    assert crashed.structured_content["error"]["kind"] == "crashed"  # type: ignore[index]
    assert "the server keeps serving" in text_of(crashed)
    assert after.structured_content["value"] == 42  # type: ignore[index]


# -- concurrency -----------------------------------------------------------------------------


async def test_two_programs_run_at_once(probed: Probed, probe: ProbePlugin, revision: str) -> None:
    # Each program waits in `probe_meet` until the other is there too: run one after the
    # other, neither would finish.
    results: dict[str, types.CallToolResult] = {}
    async with client(probed(), revision) as connected:

        async def one(tag: str) -> None:
            results[tag] = await run(connected, f"r = await call_tool('probe_meet')\n[{tag!r}, r]")

        async with anyio.create_task_group() as group:
            group.start_soon(one, "a")
            group.start_soon(one, "b")
    assert probe.met == 2
    for tag in ("a", "b"):
        assert results[tag].structured_content["value"] == [tag, "met"]  # type: ignore[index]


# -- discovery and availability --------------------------------------------------------------


async def test_search_finds_program_run_and_it_is_not_listed(probed: Probed, revision: str) -> None:
    async with client(probed(), revision) as connected:
        listed = await connected.list_tools()
        found = await connected.call_tool(
            "tool_search", {"query": "chain several tool calls in one step"}
        )
    assert "program_run" not in [t.name for t in listed.tools]
    assert "program_run" in text_of(found).splitlines()[1]
