"""The data contract: each step type's schema is checked in as a golden file, a change needs a
version bump, and a consumer that pinned another major is refused before anything runs."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from prixfixe.cli import cli
from prixfixe.routines.contract import check_goldens

from health_helpers import GOLDEN, PLUGIN, AppFactory, routine, tool_error

pytestmark = pytest.mark.anyio

REGENERATE = (
    "prixfixe steps golden plugins/prixfixe-health/tests/golden/steps --plugin health --write"
)


def test_every_step_type_has_a_golden_schema_that_matches(make_app: AppFactory) -> None:
    mine = [t for t in make_app().registry.step_types.values() if t.owner == PLUGIN]
    assert sorted(t.name for t in mine) == ["disk-check", "gpu-check", "service-check"]
    assert {t.name for t in mine} == {p.stem for p in GOLDEN.glob("*.json")}
    problems = check_goldens(mine, GOLDEN)
    assert problems == [], f"{problems}\nIf a version bump is intended: {REGENERATE}"


def test_the_golden_command_checks_this_plugins_schemas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRIXFIXE_LOAD_PLUGINS", PLUGIN)
    done = CliRunner().invoke(cli, ["steps", "golden", str(GOLDEN), "--plugin", PLUGIN])
    assert done.exit_code == 0, done.output
    assert "All 3 step data schemas match" in done.output


async def test_a_consumer_pinned_to_another_major_gets_no_data(make_app: AppFactory) -> None:
    app = make_app(routine('type = "gpu-check"'))
    said = await tool_error(
        app, "routine_run", {"name": "health", "schema_major": {"gpu-check": 2}}
    )
    assert "'gpu-check' data is version 1.0, you pinned major 2" in said
