"""The peer `bench_discovery_real.py` measures prixfixe against: fastmcp's proxy of the same
real servers with its BM25 search transform, served over stdio.

Not a benchmark and never run by prixfixe's own interpreter: fastmcp is not a dependency of
prixfixe, so it lives in a virtual environment of its own (the benchmark's `--fastmcp-python`,
by default `.cache-fastmcp/bin/python` at the repository root, made with
`python3 -m venv .cache-fastmcp && .cache-fastmcp/bin/pip install fastmcp`), and this file runs
on that interpreter:

    .cache-fastmcp/bin/python benchmarks/fastmcp_search_server.py CONFIG.json

CONFIG.json is an MCP config, `{"mcpServers": {NAME: {"command", "args", "env"}}}`. fastmcp
names each proxied tool `NAME_TOOL`; the transform replaces the listing with `search_tools`
(BM25 over each tool's name, description and parameters; its default five results, each a
whole `tools/list` entry) and `call_tool`, its defaults throughout. fastmcp is imported by name
so that prixfixe's type checker, which does not have it, reads this file as plain Python.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit("usage: fastmcp_search_server.py CONFIG.json")
    config = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    server = importlib.import_module("fastmcp.server")
    search = importlib.import_module("fastmcp.server.transforms.search")
    proxy = server.create_proxy(config, name="fastmcp-bm25")
    proxy.add_transform(search.BM25SearchTransform())
    proxy.run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main(sys.argv[1:])
