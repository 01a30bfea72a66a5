"""Fixtures: an app with the plugin loaded through its installed entry point (as a user's
prixfixe loads it), and observers of what the gates let through, at the point of effect.
Helpers the tests call are in `health_helpers.py`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from prixfixe.app import App

from health_helpers import PLUGIN, AppFactory
from loopback import Listener, Web, listener, web_server


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No test sees the developer's config, plugin allowlist, leash or store."""
    for name in (
        "PRIXFIXE_CONFIG",
        "PRIXFIXE_EXPOSE",
        "PRIXFIXE_LOAD_PLUGINS",
        "PRIXFIXE_LEASH",
        "PRIXFIXE_HOME",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PRIXFIXE_HOME", str(tmp_path / "prixfixe-home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def make_app(tmp_path: Path) -> AppFactory:
    """`make_app(config, path=None, plugins="health")`: an app reading `config` as its
    prixfixe.toml, loading only the installed plugins named (through their entry points),
    its programs found on `path` (default: this process's PATH)."""

    def factory(config: str = "", *, path: str | None = None, plugins: str = PLUGIN) -> App:
        (tmp_path / "prixfixe.toml").write_text(config, encoding="utf-8")
        env = {
            "PRIXFIXE_HOME": str(tmp_path / "home"),
            # Named, so it loads: a folder's own prixfixe.toml is read only once trusted.
            "PRIXFIXE_CONFIG": str(tmp_path / "prixfixe.toml"),
            "PRIXFIXE_LOAD_PLUGINS": plugins,
            "PATH": os.environ.get("PATH", "") if path is None else path,
        }
        return App.build(env=env, cwd=tmp_path, extra_plugins=[])

    return factory


@pytest.fixture
def spawned() -> Iterator[list[tuple[str, ...]]]:
    """Every argv the exec gate starts while the test runs (at the point of effect)."""
    from prixfixe.leash.exec import observe_spawns, unobserve_spawns

    seen: list[tuple[str, ...]] = []
    observe_spawns(seen.append)
    yield seen
    unobserve_spawns(seen.append)


@pytest.fixture
def connections() -> Iterator[list[tuple[str, int]]]:
    """Every (host, port) the network gate lets an HTTP request through to."""
    from prixfixe.leash.net import observe_connections, unobserve_connections

    seen: list[tuple[str, int]] = []

    def record(host: str, port: int) -> None:
        seen.append((host, port))

    observe_connections(record)
    yield seen
    unobserve_connections(record)


@pytest.fixture
def web() -> Iterator[Web]:
    """An HTTP server on loopback that records the paths it is asked for."""
    with web_server() as server:
        yield server


@pytest.fixture
def tcp() -> Iterator[Listener]:
    """A TCP listener on loopback that never accepts: `connected()` tells whether anything
    connected to it."""
    with listener() as found:
        yield found
