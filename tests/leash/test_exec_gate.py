"""The exec gate and credentials, with real subprocesses: what is granted, what is refused,
and how a refusal, a missing program, a hang or a bad credential reads in the report."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from pydantic import BaseModel, ConfigDict

from prixfixe import StepContext, StepOutput, StepType, hookimpl
from prixfixe.app import App
from prixfixe.leash.exec import CommandLine, read_path
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory

pytestmark = pytest.mark.anyio

PY = sys.executable
SECRET = "s3cr3t-value-not-to-leak"


def script(name: str, code: str, **extra: str) -> str:
    lines = [
        "[[routines.r.steps]]",
        'type = "script"',
        f'name = "{name}"',
        f"command = [{json.dumps(PY)}, '-c', {json.dumps(code)}]",
    ]
    lines += [f"{k} = {v}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def harness(name: str, code: str, **extra: str) -> str:
    return script(name, code, **extra).replace('type = "script"', 'type = "harness"')


async def run(app: App, tool: str = "routine_run", **args: Any) -> Any:
    arguments = args or {"name": "r"}
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool(tool, {**arguments, "format": "both"})
    return result


def steps(result: Any) -> dict[str, dict[str, Any]]:
    assert result.is_error is False, result.content[0].text
    return {s["name"]: s for s in result.structured_content["steps"]}


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


async def test_the_default_grant_is_exactly_what_configured_steps_declare(
    make_app: AppFactory,
) -> None:
    app = make_app(
        config="[routines.r]\n" + script("py", "print(' hi ')") + "[[routines.r.steps]]\n"
        'type = "git-tend"\nrepos = ["."]\n',
        env=env(),
        plugins=[],
    )
    assert app.routines.gate.grant.programs == {PY, "git"}
    assert f"{PY} -c print(' hi ')" in app.routines.gate.grant.lines()
    assert any(line.startswith("git -C {repo} status") for line in app.routines.gate.grant.lines())
    result = steps(await run(app))
    assert result["py"]["status"] == "ok"
    assert result["py"]["data"] == {
        "command": [PY, "-c", "print(' hi ')"],
        "exit_code": 0,
        "output": "hi",
        "truncated": False,
    }


async def test_leash_exec_narrows_the_grant_and_a_refusal_names_program_and_grant(
    make_app: AppFactory,
) -> None:
    config = (
        "[leash]\nexec = ['sh']\n[routines.r]\n"
        + script("py", "print(1)")
        + '[[routines.r.steps]]\ntype = "script"\nname = "shell"\ncommand = "sh -c \'echo ok\'"\n'
    )
    app = make_app(config=config, env=env(), plugins=[])
    assert app.routines.gate.grant.programs == {"sh"}
    result = await run(app)
    by_name = steps(result)
    assert by_name["shell"]["data"]["output"] == "ok"
    refused = by_name["py"]
    assert refused["status"] == "failed"
    assert refused["error"]["kind"] == "refused"
    message = refused["error"]["message"]
    assert f"{PY} -c print(1)' is not granted; the exec grant is [sh]" in message
    assert "narrowed by [leash] exec in" in message
    assert "## py — failed (refused)" in result.content[0].text


async def test_inline_steps_run_only_command_lines_the_configuration_names(
    make_app: AppFactory,
) -> None:
    config = (
        f"[commands]\nsay = [{json.dumps(PY)}, '-c', 'print(2)']\n"
        "[leash]\nexec = [" + json.dumps(PY) + "]\n"
        "[routines.r]\n" + script("py", "print(1)")
    )
    app = make_app(config=config, env=env(), plugins=[])
    alone = await run(app, "step_run", type="script", params={"command": ["sh", "-c", "echo x"]})
    assert alone.is_error is True
    text = alone.content[0].text
    assert "'command' can be set only in the configuration, never by a client" in text
    assert "run = NAME ([commands]: say)" in text
    mixed = await run(
        app,
        "routine_eval",
        steps=[
            {"type": "script", "name": "granted", "run": "say"},
            {"type": "git-tend", "name": "widening", "repos": ["."]},
        ],
    )
    by_name = steps(mixed)
    assert by_name["granted"]["data"]["output"] == "2"
    assert by_name["widening"]["error"]["kind"] == "refused"
    assert "is not granted; the exec grant is" in by_name["widening"]["error"]["message"]


class SneakyParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Sneaky:
    """Declares git but runs sh: the gate holds each step to its own declaration."""

    __name__ = "sneaky_fixture"

    @hookimpl
    def register_step_types(self, register: Callable[[StepType], None]) -> None:
        async def handler(ctx: StepContext, params: SneakyParams) -> StepOutput:
            await ctx.run(["sh", "-c", "echo hi"])
            return StepOutput(markdown="", data=SneakyParams())

        git_status = CommandLine("git", ("-C", read_path("repo"), "status"))

        register(
            StepType(
                name="sneaky",
                description="Runs what it did not declare.",
                params_model=SneakyParams,
                data_model=SneakyParams,
                version="1.0",
                handler=handler,
                commands=(git_status,),
            )
        )


async def test_a_step_may_run_only_programs_it_declared_even_if_another_step_is_granted_them(
    make_app: AppFactory,
) -> None:
    config = (
        "[routines.r]\n"
        '[[routines.r.steps]]\ntype = "script"\nname = "shell"\ncommand = ["sh", "-c", "echo"]\n'
        '[[routines.r.steps]]\ntype = "sneaky"\n'
    )
    app = make_app(config=config, env=env(), plugins=[Sneaky()])
    assert "sh" in app.routines.gate.grant.programs
    failure = steps(await run(app))["sneaky"]["error"]
    assert failure["kind"] == "refused"
    assert "ran 'sh -c echo hi', which is not one of the command lines it declares " in (
        failure["message"]
    )


async def test_a_program_missing_from_the_machine_is_a_soft_failure(make_app: AppFactory) -> None:
    config = (
        "[routines.r]\n"
        '[[routines.r.steps]]\ntype = "script"\nname = "ghost"\n'
        'command = ["prixfixe-no-such-program-x"]\n' + script("fine", "print(3)")
    )
    by_name = steps(await run(make_app(config=config, env=env(), plugins=[])))
    assert by_name["ghost"]["error"] == {
        "kind": "program-missing",
        "message": "step 'ghost': program 'prixfixe-no-such-program-x' was not found on PATH "
        "(is it installed?)",
    }
    assert by_name["fine"]["status"] == "ok"


async def test_a_hanging_script_times_out_and_its_process_is_killed(
    make_app: AppFactory, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    code = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    config = "[routines.r]\n" + script("hang", code, timeout="0.5") + script("next", "print(4)")
    with anyio.fail_after(30):
        by_name = steps(await run(make_app(config=config, env=env(), plugins=[])))
    assert by_name["hang"]["error"]["kind"] == "timeout"
    assert (
        "step 'hang' (script) did not finish within 0.5 s and was stopped"
        in (by_name["hang"]["error"]["message"])
    )
    assert by_name["next"]["data"]["output"] == "4"
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)


async def test_the_default_step_timeout_comes_from_the_routine(make_app: AppFactory) -> None:
    config = (
        "[routines.r]\ntimeout = 7\n"
        + script("a", "print(1)")
        + script("b", "print(1)", timeout="3")
    )
    app = make_app(config=config, env=env(), plugins=[])
    assert [s.timeout for s in app.routines.get("r").steps] == [7, 3]
    assert make_app(env=env(), plugins=[]).routines.get("morning").steps[0].timeout == 60


async def test_a_failing_script_reports_its_exit_status_and_stderr(make_app: AppFactory) -> None:
    code = "import sys; print('partial'); sys.stderr.write('disk full\\n'); sys.exit(3)"
    config = "[routines.r]\n" + script("bad", code)
    failure = steps(await run(make_app(config=config, env=env(), plugins=[])))["bad"]["error"]
    assert failure["kind"] == "exit-status"
    assert f"step 'bad': {PY!r} exited with status 3: disk full" == failure["message"]


async def test_a_harness_object_becomes_the_data_and_bad_json_names_the_step(
    make_app: AppFactory,
) -> None:
    config = (
        "[routines.r]\n"
        + harness("good", "import json; print(json.dumps({'passed': 41, 'failed': 1}))")
        + harness("prose", "print('all good!')")
        + harness("array", "print('[1, 2]')")
    )
    result = await run(make_app(config=config, env=env(), plugins=[]))
    by_name = steps(result)
    assert by_name["good"]["data"] == {"passed": 41, "failed": 1}
    assert "- passed: 41" in result.content[0].text
    prose = by_name["prose"]["error"]
    assert prose["kind"] == "invalid-output"
    assert prose["message"].startswith(f"step 'prose': {PY!r} must print one JSON object, but")
    assert "it began: all good!" in prose["message"]
    assert "not a list" in by_name["array"]["error"]["message"]


async def test_credentials_reach_the_child_as_environment_and_never_the_report(
    make_app: AppFactory, tmp_path: Path
) -> None:
    (tmp_path / "token.txt").write_text(SECRET + "\n")
    code = (
        "import json, os; print(json.dumps({k: len(os.environ[k]) for k in "
        "('FROM_ENV', 'FROM_FILE', 'FROM_CMD')}))"
    )
    cmd = json.dumps([PY, "-c", f"print({SECRET!r})"])
    config = "[routines.r]\n" + harness(
        "creds",
        code,
        secrets=(
            '{ FROM_ENV = { env = "PF_TEST_TOKEN" }, FROM_FILE = { file = "token.txt" }, '
            f"FROM_CMD = {{ cmd = {cmd} }} }}"
        ),
    )
    app = make_app(config=config, env=env(PF_TEST_TOKEN=SECRET), plugins=[])
    result = await run(app)
    n = len(SECRET)
    assert steps(result)["creds"]["data"] == {"FROM_ENV": n, "FROM_FILE": n, "FROM_CMD": n}
    assert SECRET not in json.dumps(result.structured_content)
    assert all(SECRET not in block.text for block in result.content)


async def test_an_unresolvable_credential_fails_the_step_naming_variable_not_value(
    make_app: AppFactory,
) -> None:
    config = (
        "[routines.r]\n"
        + harness("creds", "print('{}')", secrets='{ TOKEN = { env = "PF_UNSET_VARIABLE" } }')
        + script("other", "print(5)")
    )
    by_name = steps(await run(make_app(config=config, env=env(), plugins=[])))
    assert by_name["creds"]["error"] == {
        "kind": "credential",
        "message": "step 'creds': credential TOKEN (env PF_UNSET_VARIABLE): environment variable "
        "PF_UNSET_VARIABLE is not set",
    }
    assert by_name["other"]["status"] == "ok"


async def test_a_credential_command_passes_the_gate(make_app: AppFactory) -> None:
    config = (
        "[leash]\nexec = ["
        + json.dumps(PY)
        + "]\n[routines.r]\n"
        + harness("creds", "print('{}')", secrets="{ TOKEN = { cmd = \"sh -c 'echo x'\" } }")
        + script("other", "print(6)")
    )
    app = make_app(config=config, env=env(), plugins=[])
    failure = steps(await run(app))["creds"]["error"]
    assert failure["kind"] == "refused"
    assert "credential command 'sh -c echo x' is not granted" in failure["message"]
