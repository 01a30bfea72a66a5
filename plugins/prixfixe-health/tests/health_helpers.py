"""What the tests call: run routines and steps through a real MCP client, check data against
the golden schemas, write configurations and fake programs."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from mcp import Client
from prixfixe.app import App
from prixfixe.mcp.server import build_server

GOLDEN = Path(__file__).resolve().parent / "golden" / "steps"
#: The plugin's name: its entry point's, and the owner of what it registers.
PLUGIN = "health"

AppFactory = Callable[..., App]


@asynccontextmanager
async def connected(app: App) -> AsyncIterator[Client]:
    """A real MCP client on the app (legacy revision); the store is closed afterwards."""
    try:
        async with Client(build_server(app), mode="legacy") as client:
            yield client
    finally:
        app.close_store()


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A routine tool's report as (data, markdown), with `format = both`."""
    result = await client.call_tool(tool, {**arguments, "format": "both"})
    assert result.is_error is False, result.content
    assert result.structured_content is not None
    return result.structured_content, str(result.content[0].text)  # type: ignore[union-attr]


async def run_routine(app: App, name: str = "health") -> tuple[list[dict[str, Any]], str]:
    """Run configured routine `name` through `routine_run`: its steps and its markdown."""
    async with connected(app) as client:
        report, markdown = await call(client, "routine_run", {"name": name})
    return report["steps"], markdown


async def run_step(app: App, type_: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run one inline step (`step_run`, as an agent would): the report's one step."""
    async with connected(app) as client:
        report, _ = await call(client, "step_run", {"type": type_, "params": params})
    (step,) = report["steps"]
    return dict(step)


async def tool_error(app: App, tool: str, arguments: dict[str, Any]) -> str:
    """The error a routine tool answers when it refuses to run at all (invalid params, or
    every command line the run needs refused by the exec gate)."""
    async with connected(app) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error is True
    return str(result.content[0].text)  # type: ignore[union-attr]


def golden_schema(type_: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((GOLDEN / f"{type_}.json").read_text())
    return document


def assert_golden(step: dict[str, Any]) -> None:
    """The step ran and its data matches its type's golden schema at the same version."""
    assert step["status"] == "ok", step["error"]
    document = golden_schema(step["type"])
    assert document["version"] == step["version"]
    Draft202012Validator(document["schema"]).validate(step["data"])


def routine(*steps: str, leash: str = "") -> str:
    """A `[routines.health]` config of the given step tables (TOML bodies after `type`)."""
    body = "".join(f"\n[[routines.health.steps]]\n{s.strip()}\n" for s in steps)
    return f"{leash}\n[routines.health]{body}"


def program(folder: Path, name: str, script: str) -> Path:
    """An executable shell script `folder/name` (a fake of a real program, on a test PATH)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def search_path(*folders: Path) -> str:
    """A PATH of exactly `folders`: a real `nvidia-smi` or `systemctl` elsewhere is never
    found (the fakes use only the shell's built-ins)."""
    return os.pathsep.join(map(str, folders))


def names(items: Sequence[dict[str, Any]]) -> list[str]:
    return [str(item["name"]) for item in items]
