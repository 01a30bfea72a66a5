"""Fixtures: a fake forge on loopback, and an app with this plugin loaded from its entry point
(`PRIXFIXE_LOAD_PLUGINS=forge`, so no other installed plugin joins in), driven through the
real protocol (`mcp.Client` on the app's server)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from prixfixe.app import App
from prixfixe.mcp.server import build_server

from fakeforge import TOKEN, FakeForge, running

#: The moment the review steps measure ages against (the fixtures' dates lead up to it).
NOW = dt.datetime(2026, 3, 11, 9, 0, tzinfo=dt.UTC)
#: The variable the tests' credential references read the fake forge's token from.
TOKEN_ENV = "FORGE_TEST_TOKEN"
#: A step's `secrets` table giving it both forge tokens (TOML).
BOTH_TOKENS = (
    f'{{ GITHUB_TOKEN = {{ env = "{TOKEN_ENV}" }}, GITLAB_TOKEN = {{ env = "{TOKEN_ENV}" }} }}'
)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No test sees the developer's config, plugins, data or working directory, a value one test
    registered with the redactor masks nothing in another, and the review steps' clock is
    `NOW`."""
    from prixfixe.leash.redact import REDACTOR

    for name in ("PRIXFIXE_CONFIG", "PRIXFIXE_EXPOSE", "PRIXFIXE_LOAD_PLUGINS", "PRIXFIXE_LEASH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PRIXFIXE_HOME", str(tmp_path / "prixfixe-home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("prixfixe_forge.reviews.utcnow", lambda: NOW)
    REDACTOR.clear()
    yield tmp_path
    REDACTOR.clear()


@pytest.fixture
def forge() -> Iterator[FakeForge]:
    with running() as fake:
        yield fake


AppFactory = Callable[..., App]


@pytest.fixture
def make_app(tmp_path: Path) -> AppFactory:
    """An app from `config` (written to tmp_path/prixfixe.toml), with this plugin only."""

    def factory(config: str = "", env: dict[str, str] | None = None) -> App:
        (tmp_path / "prixfixe.toml").write_text(config, encoding="utf-8")
        return App.build(
            env={
                "PRIXFIXE_HOME": str(tmp_path / "home"),
                # Named, so it loads: a folder's own prixfixe.toml is read only once trusted.
                "PRIXFIXE_CONFIG": str(tmp_path / "prixfixe.toml"),
                "PRIXFIXE_LOAD_PLUGINS": "forge",
                TOKEN_ENV: TOKEN,
                **(env or {}),
            },
            cwd=tmp_path,
            extra_plugins=[],
        )

    return factory


async def call(app: App, tool: str, arguments: dict[str, Any]) -> Any:
    """A tool's result through the real protocol."""
    async with Client(build_server(app), mode="legacy") as client:
        return await client.call_tool(tool, arguments)


async def run_routine(app: App, name: str) -> dict[str, Any]:
    """`routine_run(name)` through the protocol: the report's data, and its markdown under
    `"markdown"`."""
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool("routine_run", {"name": name, "format": "both"})
    assert result.is_error is False, result
    data: dict[str, Any] = dict(result.structured_content or {})
    first = result.content[0]
    assert first.type == "text"
    data["markdown"] = first.text
    return data


def step_of(report: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in report["steps"] if s["name"] == name)
    return found
