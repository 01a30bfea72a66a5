"""The peer `bench_programs.py` measures prixfixe's `program_run` against: fastmcp's proxy of
the same real servers with its CodeMode transform (`search`, `get_schema`, `execute`: a Python
program run in a pydantic-monty sandbox, chaining `call_tool`), served over stdio.

Not a benchmark and never run by prixfixe's own interpreter: fastmcp is not a dependency of
prixfixe, so it lives in a virtual environment of its own (the benchmark's `--fastmcp-python`,
by default `.cache-fastmcp/bin/python`, made with `python3 -m venv .cache-fastmcp &&
.cache-fastmcp/bin/pip install fastmcp pydantic-monty`), and this file runs on that
interpreter:

    .cache-fastmcp/bin/python benchmarks/fastmcp_codemode_server.py CONFIG.json

CONFIG.json is an MCP config, `{"mcpServers": {NAME: {"command", "args", "env"}}}`; fastmcp
names each proxied tool `NAME_TOOL`. CodeMode's defaults throughout (its search's brief
results, its get_schema's detailed ones, 50 calls a program).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit("usage: fastmcp_codemode_server.py CONFIG.json")
    config = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    server = importlib.import_module("fastmcp.server")
    code_mode = importlib.import_module("fastmcp.experimental.transforms.code_mode")
    proxy = server.create_proxy(config, name="fastmcp-codemode")
    proxy.add_transform(code_mode.CodeMode())
    proxy.run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main(sys.argv[1:])
