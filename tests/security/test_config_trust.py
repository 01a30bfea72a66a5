"""Attacks through files in the folder prixfixe starts in: a checkout's `prixfixe.toml`, its
`report.py` beside a configured command's relative argument, its `click.py` beside a client's
`python -m prixfixe` entry. Each is asserted where it would take effect, a marker file the
planted program writes, in real processes started as a client or a person would.

The trusted party is the person: their environment (`PRIXFIXE_CONFIG`), their own config
folder, and what they have trusted with `prixfixe trust`; a folder's files are content."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

# Each test starts real server processes: seconds apiece.
pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PY = sys.executable
#: How the tests start prixfixe: as a client entry does without an executable (`-P`: the
#: folder it starts in is not on sys.path, so the checkout cannot replace prixfixe itself).
PRIXFIXE = [PY, "-P", "-m", "prixfixe"]


def _env(tmp_path: Path) -> dict[str, str]:
    """A person's environment: their own config and state folders in tmp_path, no variable of
    prixfixe's (so nothing is trusted by `PRIXFIXE_TRUSTED_PATHS` or pinned)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        XDG_STATE_HOME=str(tmp_path / "xdg-state"),
        XDG_DATA_HOME=str(tmp_path / "xdg-data"),
        PRIXFIXE_HOME=str(tmp_path / "data"),
        PRIXFIXE_LOAD_PLUGINS="",
    )
    return env


def _writes(marker: Path) -> list[str]:
    """A Python command line that writes `marker` and prints what it did."""
    return [PY, "-c", f"open({str(marker)!r}, 'w').write('ran'); print('wrote {marker.name}')"]


def _eager_server(name: str, marker: Path) -> str:
    argv = _writes(marker)
    return (
        f"[servers.{name}]\ncommand = {json.dumps(argv[0])}\n"
        f'args = {json.dumps(argv[1:])}\nstart = "eager"\n'
    )


def _morning(marker: Path) -> str:
    return (
        "[routines.morning]\n[[routines.morning.steps]]\n"
        f'type = "script"\nname = "it"\ncommand = {json.dumps(_writes(marker))}\n'
    )


def _user_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "xdg-config" / "prixfixe" / "prixfixe.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PRIXFIXE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@asynccontextmanager
async def _serving(env: dict[str, str], cwd: Path) -> AsyncIterator[Any]:
    params = StdioServerParameters(
        command=PRIXFIXE[0], args=[*PRIXFIXE[1:], "serve"], env=env, cwd=cwd
    )
    async with Client(params, mode="legacy") as client:
        yield client


async def _appears(path: Path) -> None:
    """Wait for `path` (bounded by the caller's deadline)."""
    while not path.exists():
        await anyio.sleep(0.05)


# -- a checkout's configuration is not the person's --------------------------------------------


async def test_a_checkouts_eager_server_never_starts_until_trusted_and_not_once_changed(
    tmp_path: Path,
) -> None:
    env = _env(tmp_path)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    hostile, mine = tmp_path / "hostile-ran", tmp_path / "mine-ran"
    config = checkout / "prixfixe.toml"
    config.write_text(_eager_server("evil", hostile))
    _user_config(tmp_path, _eager_server("mine", mine))

    # Untrusted: the person's own configuration is the one in force (its eager server runs),
    # the checkout's never (only one file is ever loaded, so its server had the same chance).
    with anyio.fail_after(60):
        async with _serving(env, checkout) as client:
            await client.list_tools()
            await _appears(mine)
    assert not hostile.exists()

    # Trusted, that exact file loads: its server starts (the marker can be written at all).
    done = _cli(env, checkout, "trust")
    assert done.returncode == 0, done.stderr
    assert f"Trusted {config.resolve()}" in done.stdout
    assert "server evil (eager) runs:" in done.stdout
    with anyio.fail_after(60):
        async with _serving(env, checkout) as client:
            await client.list_tools()
            await _appears(hostile)

    # Changed (a pull, an edit): untrusted again, the person's configuration back in force.
    hostile.unlink()
    mine.unlink()
    config.write_text(config.read_text() + "# a harmless-looking change\n")
    with anyio.fail_after(60):
        async with _serving(env, checkout) as client:
            await client.list_tools()
            await _appears(mine)
    assert not hostile.exists()


def test_prixfixe_run_in_a_checkout_runs_the_persons_routine_not_the_checkouts(
    tmp_path: Path,
) -> None:
    env = _env(tmp_path)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    hostile, mine = tmp_path / "hostile-ran", tmp_path / "mine-ran"
    config = checkout / "prixfixe.toml"
    config.write_text(_morning(hostile))
    _user_config(tmp_path, _morning(mine))

    done = _cli(env, checkout, "run", "morning")
    assert done.returncode == 0, done.stderr
    assert not hostile.exists()
    assert mine.exists()
    assert "wrote mine-ran" in done.stdout
    said = [line for line in done.stderr.splitlines() if str(config) in line]
    assert len(said) == 1  # one clear line: the file, why, what is used, how to trust it
    assert "is not trusted, so it was not loaded" in said[0]
    assert f"To trust it: prixfixe trust {config}" in said[0]

    assert _cli(env, checkout, "trust").returncode == 0
    mine.unlink()
    done = _cli(env, checkout, "run", "morning")
    assert done.returncode == 0, done.stderr
    assert hostile.exists()  # trusted: the checkout's routine is in force
    assert not mine.exists()


# -- a configured command runs where its configuration is ----------------------------------------


async def test_an_inline_run_name_runs_in_the_configurations_folder_not_the_servers(
    tmp_path: Path,
) -> None:
    env = _env(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.py").write_text('print("the configuration\'s report")\n')
    config = mine / "prixfixe.toml"
    config.write_text(
        f"[commands]\nr = [{json.dumps(PY)}, 'report.py']\nm = [{json.dumps(PY)}, '-m', 'report']\n"
    )
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    marker = tmp_path / "checkout-ran"
    (checkout / "report.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nprint(\"the checkout's report\")\n"
    )
    env["PRIXFIXE_CONFIG"] = str(config)

    with anyio.fail_after(60):
        async with _serving(env, checkout) as client:
            single = await client.call_tool(
                "step_run", {"type": "script", "params": {"run": "r"}, "format": "data"}
            )
            steps = [
                {"type": "script", "name": "a", "run": "r"},
                {"type": "harness", "name": "b", "run": "m"},
            ]
            both = await client.call_tool("routine_eval", {"steps": steps, "format": "data"})
    assert not marker.exists()
    assert single.structured_content is not None, single.content
    assert single.structured_content["steps"][0]["data"]["output"] == "the configuration's report"
    assert both.structured_content is not None, both.content
    first, second = both.structured_content["steps"]
    assert first["data"]["output"] == "the configuration's report"
    # `python -m report` found the configuration's report.py (not JSON, so the harness fails
    # on its output, quoting it): the checkout's never ran.
    assert second["status"] == "failed"
    assert "the configuration's report" in second["error"]["message"]


# -- a client's `python -m prixfixe` entry --------------------------------------------------------


async def test_the_python_entry_a_client_gets_never_imports_from_the_folder_it_starts_in(
    tmp_path: Path,
) -> None:
    env = _env(tmp_path)
    env["PATH"] = "/usr/bin:/bin"  # no prixfixe executable: the entry names this Python
    written = tmp_path / "client.json"
    done = subprocess.run(
        [PY, "-m", "prixfixe", "client", "generic", "--write", "--file", str(written)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    entry = json.loads(written.read_text())["mcpServers"]["prixfixe"]
    assert entry["command"] == PY
    assert entry["args"] == ["-P", "-m", "prixfixe", "serve"]

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    marker = tmp_path / "click-ran"
    (checkout / "click.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    # The plant works: `python -m prixfixe` without -P, started there, imports it.
    subprocess.run([PY, "-m", "prixfixe", "--version"], cwd=checkout, env=env, timeout=120)
    assert marker.exists()
    marker.unlink()

    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env={**env, **entry.get("env", {})},
        cwd=checkout,
    )
    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client:
            assert (await client.list_tools()).tools
    assert not marker.exists()
