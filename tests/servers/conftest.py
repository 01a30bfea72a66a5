"""Mounting real MCP servers: the fixture server beside this file, and third-party servers
installed by `scripts/test-servers.sh` (each in its own virtual environment)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from prixfixe.app import App
from prixfixe.leash.exec import observe_spawns, unobserve_spawns
from tests.conftest import AppFactory

FIXTURE_SERVER = Path(__file__).with_name("fixture_server.py")
ROOT = Path(__file__).parents[2]
#: Where scripts/test-servers.sh installs third-party servers (one venv each).
TEST_SERVERS = ROOT / ".cache" / "test-servers"


def fixture_table(name: str = "fix", *, timeout: float = 15, extra: str = "") -> str:
    """A `[servers.NAME]` table mounting the fixture server."""
    return (
        f"[servers.{name}]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(FIXTURE_SERVER))}]\n"
        f"timeout = {timeout}\n"
        f"{extra}\n"
    )


def script_table(name: str, script: Path, source: str, *, timeout: float = 15) -> str:
    """A `[servers.NAME]` table mounting a tiny Python program written to `script` (one that
    hangs at start, or exits at once), for the faults the fixture server cannot play."""
    script.write_text(source, encoding="utf-8")
    return (
        f"[servers.{name}]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(script))}]\n"
        f"timeout = {timeout}\n"
    )


def installed_server(name: str, script: str) -> str:
    """The console script of a third-party server `scripts/test-servers.sh` installed; a
    failure (never a skip) when it is missing, so CI cannot pass without it."""
    path = TEST_SERVERS / name / "bin" / script
    if not path.exists():
        pytest.fail(f"{path} is missing: run scripts/test-servers.sh before the tests")
    return str(path)


@pytest.fixture
def mounted(make_app: AppFactory) -> Callable[..., App]:
    """An app with the given config text (the fixture server mounted as `fix` by default)."""

    def build(config: str | None = None, *, env: dict[str, str] | None = None) -> App:
        return make_app(config=fixture_table() if config is None else config, env=env)

    return build


@pytest.fixture
def spawns() -> Iterator[list[tuple[str, ...]]]:
    """Every argv the exec gate starts during the test, at the point of effect."""
    seen: list[tuple[str, ...]] = []
    observe_spawns(seen.append)
    yield seen
    unobserve_spawns(seen.append)


async def ready(app: App) -> None:
    """The first start of a configuration reads its lists in the background: wait for it."""
    with anyio.fail_after(20):
        await app.servers.settled()


def text_of(result: Any) -> str:
    """The joined text blocks of a tool result."""
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def data_of(result: Any) -> Any:
    return result.structured_content
