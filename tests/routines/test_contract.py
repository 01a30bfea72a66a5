"""The data contract: golden schemas, version bumps, real output against the schemas."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from prixfixe.app import App
from prixfixe.cli import cli
from prixfixe.core.plugins import DEFAULT_PLUGINS
from prixfixe.declarations.steps import StepType
from prixfixe.knowledge import KNOWLEDGE_OWNER
from prixfixe.knowledge.ingest import put_text
from prixfixe.routines.contract import breaking_changes, check_goldens, golden, write_goldens
from tests.conftest import AppFactory
from tests.gitrepos import commit, remote_and_clone
from tests.servers.conftest import fixture_table
from tests.step_fixtures import StepsPlugin

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "steps"
REGENERATE = "prixfixe steps golden tests/golden/steps --plugin prixfixe.default_plugins --write"


def builtin_types() -> list[StepType]:
    registry = App.build(env={}, extra_plugins=[]).registry
    return [t for t in registry.step_types.values() if t.owner in DEFAULT_PLUGINS]


def test_every_built_in_step_type_has_a_golden_schema_that_matches() -> None:
    types = builtin_types()
    assert {t.name for t in types} == {p.stem for p in GOLDEN.glob("*.json")}
    problems = check_goldens(types, GOLDEN)
    assert problems == [], f"{problems}\nIf a version bump is intended: {REGENERATE}"


class EchoDataRenamed(BaseModel):
    words: str
    times: int


class EchoDataMore(BaseModel):
    text: str
    times: int
    loud: bool


def _echo() -> StepType:
    return next(
        t
        for t in App.build(env={}, extra_plugins=[StepsPlugin()]).registry.step_types.values()
        if t.name == "echo"
    )


def test_a_schema_change_without_a_version_bump_fails(tmp_path: Path) -> None:
    echo = _echo()
    write_goldens([echo], tmp_path)
    assert check_goldens([echo], tmp_path) == []
    changed = replace(echo, data_model=EchoDataMore)
    (problem,) = check_goldens([changed], tmp_path)
    assert problem.startswith("echo: its data schema changed but its version is still 1.0")
    assert "prixfixe steps golden DIR --write" in problem


def test_a_minor_bump_must_be_additive_and_a_bump_needs_new_golden_files(tmp_path: Path) -> None:
    echo = _echo()
    write_goldens([echo], tmp_path)
    (breaking,) = check_goldens(
        [replace(echo, data_model=EchoDataRenamed, version="1.1")], tmp_path
    )
    assert "1.0 -> 1.1 is a minor bump, but the change breaks readers" in breaking
    assert "data.text removed" in breaking
    (additive,) = check_goldens([replace(echo, data_model=EchoDataMore, version="1.1")], tmp_path)
    assert "the golden file is out of date" in additive
    (major,) = check_goldens([replace(echo, data_model=EchoDataRenamed, version="2.0")], tmp_path)
    assert "the golden file is out of date" in major
    write_goldens([replace(echo, data_model=EchoDataRenamed, version="2.0")], tmp_path)
    assert json.loads((tmp_path / "echo.json").read_text())["version"] == "2.0"
    (down,) = check_goldens([echo], tmp_path)
    assert "version went down from 2.0 to 1.0" in down


def test_breaking_changes_are_removals_type_changes_and_fields_no_longer_required() -> None:
    old = golden(_echo())["schema"]
    assert breaking_changes(old, old) == []
    more = json.loads(json.dumps(old))
    more["properties"]["extra"] = {"type": "string"}
    assert breaking_changes(old, more) == []
    retyped = json.loads(json.dumps(old))
    retyped["properties"]["times"]["type"] = "string"
    assert breaking_changes(old, retyped) == ["data.times: type integer -> string"]
    optional = json.loads(json.dumps(old))
    optional["required"] = ["text"]
    assert breaking_changes(old, optional) == ["data.times no longer always present"]


def test_the_golden_command_checks_and_writes(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(
        cli, ["steps", "golden", str(GOLDEN), "--plugin", "prixfixe.default_plugins"]
    )
    assert ok.exit_code == 0, ok.output
    count = len(builtin_types())
    assert f"All {count} step data schemas match" in ok.output
    missing = runner.invoke(cli, ["steps", "golden", str(tmp_path / "none")])
    assert missing.exit_code == 1
    assert "git-status: no golden schema at" in missing.stderr
    wrote = runner.invoke(cli, ["steps", "golden", str(tmp_path / "new"), "--write"])
    assert wrote.exit_code == 0
    assert len(list((tmp_path / "new").glob("*.json"))) == count


def test_every_built_in_step_types_real_output_validates_against_its_golden_schema(
    make_app: AppFactory, tmp_path: Path
) -> None:
    _, repo = remote_and_clone(tmp_path)
    commit(repo, "local.txt")
    (tmp_path / "board" / "todo").mkdir(parents=True)
    (tmp_path / "board" / "todo" / "a.md").write_text("---\ndue: 2020-01-01\n---\n# A\n")
    py = json.dumps(sys.executable)
    config = f"""
[routines.all]
[[routines.all.steps]]
type = "git-status"
repos = ["{repo}", "{tmp_path / "nope"}"]
parallel = true
[[routines.all.steps]]
type = "git-unpushed"
repos = ["{repo}"]
parallel = true
[[routines.all.steps]]
type = "git-tend"
repos = ["{repo}"]
[[routines.all.steps]]
type = "reminders"
[[routines.all.steps]]
type = "deadline-calc"
deadlines = [{{ label = "x", date = 2020-01-01 }}]
[[routines.all.steps]]
type = "countdown-calc"
countdowns = [{{ label = "y", start = 2020-01-01, end = 2099-01-01 }}]
[[routines.all.steps]]
type = "board-scan"
path = "board"
[[routines.all.steps]]
type = "script"
command = [{py}, "-c", "print('hello')"]
[[routines.all.steps]]
type = "harness"
command = [{py}, "-c", "print('{{\\"ok\\": true}}')"]
[[routines.all.steps]]
type = "capability-index"
variant = "stats"
[[routines.all.steps]]
type = "kb-search"
query = "notes"
[[routines.all.steps]]
type = "mcp-query"
server = "fix"
tool = "add"
arguments = {{ a = 1, b = 2 }}
[[routines.all.steps]]
type = "program"
code = "r = await call_tool('store_query', {{'kind': 'reminder'}})\\nlen(r['records'])"
{fixture_table()}"""
    app = make_app(config=config, env=dict(os.environ), plugins=[])
    app.store.put("reminder", {"text": "r", "due": "2020-01-01"})
    app.store.put("deadline", {"label": "d", "date": "2030-01-01", "notes": "n"})
    app.store.put("countdown", {"label": "c", "start": "2020-01-01", "end": "2099-12-31"})
    put_text(app.store.slice(KNOWLEDGE_OWNER), "notes", "a.md", "# Notes\n\nSome notes.\n")

    async def go() -> Any:
        async with app.serving():
            return await app.routines.run(
                app.routines.get("all"),
                lambda: app.store,
                resources=app.read_resource_text,
                servers=app.call_server_tool,
                programs=app.run_program,
            )

    try:
        stored = anyio.run(go)
    finally:
        app.close_store()
    assert {s.type for s in stored.report.steps} == {t.name for t in builtin_types()}
    for step in stored.report.steps:
        assert step.status == "ok", step.error
        document = json.loads((GOLDEN / f"{step.type}.json").read_text())
        assert document["version"] == step.version
        Draft202012Validator(document["schema"]).validate(step.data)
