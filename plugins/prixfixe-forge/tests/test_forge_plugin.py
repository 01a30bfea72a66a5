"""The package as a plugin: what its entry point registers, its golden data schemas, and real
step data checked against them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from prixfixe.app import App
from prixfixe.routines.contract import check_goldens

from conftest import BOTH_TOKENS, AppFactory, run_routine
from fakeforge import FakeForge

pytestmark = pytest.mark.anyio

GOLDEN = Path(__file__).resolve().parent / "golden" / "steps"
REGENERATE = "prixfixe steps golden tests/golden/steps --plugin forge --write"
TYPES = {
    "github-pr-scan",
    "gitlab-mr-review",
    "gitlab-group-mrs",
    "mr-sla-check",
    "url-watch",
    "chores-check",
}


def test_the_entry_point_adds_six_step_types_a_table_and_no_tool(make_app: AppFactory) -> None:
    app = make_app()
    (info,) = [p for p in app.plugins if p.name == "forge"]
    assert info.status == "loaded"
    owned = {t.name for t in app.registry.step_types.values() if t.owner == "forge"}
    assert owned == TYPES
    bare = App.build(
        env={"PRIXFIXE_LOAD_PLUGINS": "", "PRIXFIXE_HOME": str(Path.cwd() / "bare")},
        extra_plugins=[],
    )
    assert sorted(app.registry.tools) == sorted(bare.registry.tools)
    assert [m.name for m in app.registry.migrations.get("forge", [])] == ["0001_url_watch"]


def test_every_step_type_has_a_golden_schema_that_matches(make_app: AppFactory) -> None:
    types = [t for t in make_app().registry.step_types.values() if t.owner == "forge"]
    assert {p.stem for p in GOLDEN.glob("*.json")} == TYPES
    problems = check_goldens(types, GOLDEN)
    assert problems == [], f"{problems}\nIf a version bump is intended: {REGENERATE}"


async def test_what_the_steps_return_validates_against_the_golden_schemas(
    make_app: AppFactory, forge: FakeForge, tmp_path: Path
) -> None:
    (tmp_path / "board").mkdir()
    (tmp_path / "board" / "chores.toml").write_text('[[chore]]\nname = "Sweep"\nevery = "1d"\n')
    secrets = BOTH_TOKENS
    steps: list[dict[str, Any]] = [
        {"type": "github-pr-scan", "user": "octocat", "api_url": forge.api("github")},
        {"type": "gitlab-mr-review", "user": "alice", "api_url": forge.api("gitlab")},
        {"type": "gitlab-group-mrs", "group": "42", "api_url": forge.api("gitlab")},
        {
            "type": "mr-sla-check",
            "hours": 24,
            "github_user": "octocat",
            "github_api_url": forge.api("github"),
            "gitlab_group": "acme/platform",
            "gitlab_api_url": forge.api("gitlab"),
        },
        {"type": "url-watch", "url": forge.url("/page/fixed")},
        {"type": "chores-check", "path": "board"},
    ]
    text = f'[leash]\nnet = ["127.0.0.1:{forge.port}"]\n[routines.all]\n'
    for step in steps:
        text += "[[routines.all.steps]]\n"
        text += "".join(f"{k} = {json.dumps(v)}\n" for k, v in step.items())
        text += f"secrets = {secrets}\n"
    report = await run_routine(make_app(text), "all")
    assert [s["status"] for s in report["steps"]] == ["ok"] * 6, report["steps"]
    for step in report["steps"]:
        golden = json.loads((GOLDEN / f"{step['type']}.json").read_text())
        assert step["version"] == golden["version"]
        Draft202012Validator(golden["schema"]).validate(step["data"])
