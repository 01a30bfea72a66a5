"""Mounting `hostile_server.py`: the config table that runs it with a spec of tools, and what
it wrote down of the requests it received."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HOSTILE_SERVER = Path(__file__).with_name("hostile_server.py")


def hostile_table(
    folder: Path, tools: list[dict[str, Any]], *, name: str = "hostile", extra: str = ""
) -> tuple[str, Path]:
    """A config mounting the hostile server as `name` with `tools` (see its docstring), and
    the file it logs every request it receives to."""
    spec = folder / f"{name}-spec.json"
    spec.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    log = folder / f"{name}-received.jsonl"
    table = (
        f"[servers.{name}]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(HOSTILE_SERVER), str(spec), str(log)])}\n"
        "timeout = 15\n"
    )
    return table + extra + "\n", log


def received(log: Path, method: str | None = None) -> list[dict[str, Any]]:
    """The requests the server received (of `method` only, when given), in order."""
    if not log.exists():
        return []
    entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return [e for e in entries if method is None or e["method"] == method]
