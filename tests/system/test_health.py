"""`prixfixe://system/health`: store, schema versions, plugins and uptime as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory

pytestmark = pytest.mark.anyio

HEALTH = "prixfixe://system/health"


async def test_health_reports_the_store_plugins_and_uptime(
    make_app: AppFactory, revision: str
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        result = await client.read_resource(HEALTH)
    (contents,) = result.contents
    assert contents.mime_type == "application/json"
    health = json.loads(contents.text)  # type: ignore[union-attr]
    assert health["status"] == "ok"
    assert health["problems"] == []
    assert health["store"]["reachable"] is True
    assert health["store"]["schema_versions"]["core"] >= 1
    plugins = {p["name"]: p["status"] for p in health["plugins"]}
    assert plugins["prixfixe.default_plugins.system"] == "loaded"
    assert plugins["weather_fixture"] == "loaded"
    assert health["uptime_s"] >= 0
    assert health["registry"]["tools"] >= 7


async def test_an_unreachable_store_is_reported_not_raised(
    make_app: AppFactory, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the store's directory should be")
    app = make_app(env={"PRIXFIXE_HOME": str(blocker)})
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.read_resource(HEALTH)
    health = json.loads(result.contents[0].text)  # type: ignore[union-attr]
    assert health["status"] == "degraded"
    assert health["store"]["reachable"] is False
    assert health["problems"][0].startswith("store: ")
