"""The package as a user installs it: its entry point, what loading it adds (three step types
and a table; no tools, so an agent's listing costs the same), and the allowlist that keeps it
out."""

from __future__ import annotations

import json
from importlib.metadata import entry_points, version

import pytest
from prixfixe.declarations.tool import TOOLS

from health_helpers import PLUGIN, AppFactory, connected
from prixfixe_health import disk

pytestmark = pytest.mark.anyio


def test_the_entry_point_names_the_plugin_module() -> None:
    (found,) = [ep for ep in entry_points(group="prixfixe") if ep.name == PLUGIN]
    assert found.value == "prixfixe_health.plugin"
    assert found.dist is not None
    assert found.dist.name == "prixfixe-health"


def test_it_loads_by_name_with_three_step_types_a_migration_and_no_tools(
    make_app: AppFactory,
) -> None:
    app = make_app()
    (info,) = [p for p in app.plugins if p.name == PLUGIN]
    assert (info.origin, info.status) == (f"prixfixe-health {version('prixfixe-health')}", "loaded")
    owned = sorted(n for n, t in app.registry.step_types.items() if t.owner == PLUGIN)
    assert owned == ["disk-check", "gpu-check", "service-check"]
    assert app.registry.migrations[PLUGIN] == disk.MIGRATIONS
    assert PLUGIN not in app.registry.by_owner(TOOLS)


def test_an_allowlist_without_it_loads_none_of_it(make_app: AppFactory) -> None:
    app = make_app(plugins="")
    (info,) = [p for p in app.plugins if p.name == PLUGIN]
    assert info.status == "skipped: not in PRIXFIXE_LOAD_PLUGINS"
    assert "disk-check" not in app.registry.step_types


async def test_the_tools_an_agent_is_listed_cost_the_same_with_it_installed(
    make_app: AppFactory,
) -> None:
    async def listing(plugins: str) -> str:
        async with connected(make_app(plugins=plugins)) as client:
            tools = (await client.list_tools()).tools
        return json.dumps([t.model_dump(mode="json", by_alias=True) for t in tools])

    assert await listing(PLUGIN) == await listing("")


async def test_steps_list_discloses_a_step_type_on_demand(make_app: AppFactory) -> None:
    async with connected(make_app()) as client:
        result = await client.call_tool("steps_list", {"type": "gpu-check"})
    assert result.is_error is False
    assert result.structured_content is not None
    (gpu,) = result.structured_content["step_types"]
    assert (gpu["type"], gpu["version"], gpu["programs"]) == ("gpu-check", "1.0", ["nvidia-smi"])
