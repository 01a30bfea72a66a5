"""The fastmcp peer `bench_http.py` measures prixfixe against: the same trivial `bench_echo`
tool as `bare_server.py`'s, on fastmcp's streamable HTTP app, served by uvicorn on 127.0.0.1.

Not a benchmark and never run by prixfixe's own interpreter: fastmcp is not a dependency of
prixfixe, so it lives in a virtual environment of its own (the benchmark's `--fastmcp-python`,
by default `.cache-fastmcp/bin/python` at the repository root, made with
`python3 -m venv .cache-fastmcp && .cache-fastmcp/bin/pip install fastmcp`), and this file runs
on that interpreter:

    .cache-fastmcp/bin/python benchmarks/fastmcp_echo_server.py

It binds a free loopback port itself (as the other two servers of the benchmark do), prints
`bench-http: serving on URL` once it listens, and serves until it is stopped. The tool has
`bare_server.py`'s name, title, description, parameter and annotations (written out again here:
this interpreter cannot import prixfixe's benchmarks), is async like the bare server's handler,
declares no output schema (neither does the bare server's) and returns the text as it is;
everything else is fastmcp's defaults (stateful sessions, SSE responses), the app
`FastMCP.run(transport="http")` would serve. fastmcp and its SDK are imported by name so that
prixfixe's type checker, which has neither, reads this file as plain Python.
"""

from __future__ import annotations

import importlib
import socket
from typing import Annotated, Any

from pydantic import Field

READY = "bench-http: serving on "


async def bench_echo(text: Annotated[str, Field(description="The text to return.")]) -> str:
    return text


def build() -> Any:
    """fastmcp's server with `bench_echo` and nothing else."""
    fastmcp = importlib.import_module("fastmcp")
    types = importlib.import_module("mcp.types")
    server = fastmcp.FastMCP("fastmcp-echo")
    server.tool(
        bench_echo,
        name="bench_echo",
        title="Echo",
        description="Return the given text unchanged.",
        # No output schema, as the bare server's tool has none (fastmcp's default for a `str`
        # result is one, with the text repeated as structured content).
        output_schema=None,
        annotations=types.ToolAnnotations(
            readOnlyHint=True, destructiveHint=False, idempotentHint=True
        ),
    )
    return server


def main() -> None:
    uvicorn = importlib.import_module("uvicorn")
    app = build().http_app(path="/mcp")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    print(f"{READY}http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, ws="none")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
