"""HTTP load: many concurrent clients calling a tool over streamable HTTP on loopback.

`python -m benchmarks.bench_http` (`--quick` for a short run) starts two servers in
subprocesses on 127.0.0.1, one after the other: `prixfixe serve --http`'s stack
(`prixfixe.mcp.http.serve.serve_http`, with the `bench_echo` tool from `benchmarks/bare_server.py`)
and, as the baseline, a bare SDK low-level server with the same tool on the SDK's own
streamable HTTP app and uvicorn. Against each, N clients (`mcp.Client` over
`streamable_http_client`, one session each) call `bench_echo` M times each, all at once:

- calls per second (all calls / wall time), p50 and p99 latency per call, errors (must be 0);
- the server's resident memory (VmRSS) at start, after a warm-up round, and after the load:
  growth after warm-up is the figure that shows a leak.

Only loopback traffic; the loops are bounded in count and time. Results go to
`benchmarks/results/http.json` and the `http` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a file: make `benchmarks` and `prixfixe` importable from the checkout.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

import anyio

from benchmarks._common import ROOT, markdown_table, write_json, write_section

NAME = "http"
READY = "bench-http: serving on "


# -- the servers (run in a subprocess: `--serve bare|prixfixe`) --------------------------------


async def _serve_bare() -> None:
    import uvicorn

    from benchmarks.bare_server import build_bare_server
    from prixfixe.mcp.http.serve import listen

    server = build_bare_server()
    app = server.streamable_http_app(host="127.0.0.1")
    sock = listen("127.0.0.1", 0)
    print(f"{READY}http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, ws="none")
    await uvicorn.Server(config).serve(sockets=[sock])


async def _serve_prixfixe() -> None:
    from benchmarks.bare_server import echo_plugin, prixfixe_env
    from prixfixe.app import App
    from prixfixe.mcp.http.serve import serve_http
    from prixfixe.mcp.http.settings import resolve_settings

    env = prixfixe_env()
    app = App.build(env=env, extra_plugins=[echo_plugin()])
    settings = resolve_settings(app.config.model.http, env, port=0)

    def announce(line: str) -> None:
        if line.startswith("prixfixe: serving MCP on "):
            print(READY + line.split(" on ", 1)[1].split(" ", 1)[0], flush=True)

    await serve_http(app, settings, announce=announce)


# -- the load -----------------------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    """Resident memory of `pid` in KiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def _load(url: str, clients: int, calls: int, mode: str) -> dict[str, Any]:
    from mcp import Client

    latencies: list[float] = []
    errors: list[str] = []

    async def one_client(index: int) -> None:
        try:
            async with Client(url, mode=mode) as client:
                for i in range(calls):
                    start = time.perf_counter()
                    result = await client.call_tool("bench_echo", {"text": f"c{index} #{i}"})
                    latencies.append(time.perf_counter() - start)
                    if result.is_error or result.content[0].text != f"c{index} #{i}":  # type: ignore[union-attr]
                        errors.append(f"client {index} call {i}: unexpected result")
        except Exception as exc:  # noqa: BLE001 - every failure is counted, none may pass silently
            errors.append(f"client {index}: {type(exc).__name__}: {exc}")

    start = time.perf_counter()
    with anyio.fail_after(600):
        async with anyio.create_task_group() as tg:
            for index in range(clients):
                tg.start_soon(one_client, index)
    wall = time.perf_counter() - start
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000 if ordered else 0.0

    return {
        "calls": len(latencies),
        "errors": len(errors),
        "error_samples": errors[:5],
        "wall_s": round(wall, 3),
        "calls_per_s": round(len(latencies) / wall, 1) if wall else 0.0,
        "p50_ms": round(pct(0.50), 2),
        "p99_ms": round(pct(0.99), 2),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 2) if latencies else 0.0,
    }


def _start(kind: str, home: str) -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    env["PRIXFIXE_HOME"] = home
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_http", "--serve", kind],
        cwd=home,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    for line in process.stdout:
        if line.startswith(READY):
            return process, line[len(READY) :].strip()
        if time.monotonic() > deadline:
            break
    process.kill()
    raise RuntimeError(f"the {kind} server did not start")


def measure(kind: str, clients: int, calls: int, warmup: int, mode: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as home:
        process, url = _start(kind, home)
        try:
            rss_start = rss_kib(process.pid)
            anyio.run(_load, url, clients, warmup, mode)
            rss_warm = rss_kib(process.pid)
            figures = anyio.run(_load, url, clients, calls, mode)
            rss_after = rss_kib(process.pid)
        finally:
            process.terminate()
            process.wait(timeout=30)
    return {
        "server": kind,
        "mode": mode,
        **figures,
        "rss_start_kib": rss_start,
        "rss_warm_kib": rss_warm,
        "rss_after_kib": rss_after,
        "rss_growth_after_warmup_kib": rss_after - rss_warm,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="10 clients x 40 calls")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--calls", type=int, default=200, help="calls per client")
    parser.add_argument(
        "--modes", default="legacy", help="comma list of client modes: legacy, 2026-07-28"
    )
    parser.add_argument("--serve", choices=["bare", "prixfixe"], help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if args.serve:
        anyio.run(_serve_bare if args.serve == "bare" else _serve_prixfixe)
        return {}
    clients, calls = (10, 40) if args.quick else (args.clients, args.calls)
    warmup = max(1, calls // 10)
    runs: list[dict[str, Any]] = []
    for mode in args.modes.split(","):
        for kind in ("bare", "prixfixe"):
            print(f"bench-http: {kind}, {mode}, {clients} clients x {calls} calls ...", flush=True)
            runs.append(measure(kind, clients, calls, warmup, mode))
    rows = []
    for run in runs:
        base = next(r for r in runs if r["server"] == "bare" and r["mode"] == run["mode"])
        rows.append(
            [
                run["server"],
                run["mode"],
                run["calls"],
                run["errors"],
                run["calls_per_s"],
                f"{run['calls_per_s'] / base['calls_per_s']:.2f}x" if base["calls_per_s"] else "-",
                run["p50_ms"],
                run["p99_ms"],
                f"{run['rss_start_kib'] // 1024} / {run['rss_warm_kib'] // 1024} / "
                f"{run['rss_after_kib'] // 1024}",
                run["rss_growth_after_warmup_kib"],
            ]
        )
    headers = [
        "server",
        "client mode",
        "calls",
        "errors",
        "calls/s",
        "vs bare",
        "p50 ms",
        "p99 ms",
        "RSS MiB start / warm / after",
        "RSS growth after warm-up KiB",
    ]
    table = markdown_table(headers, rows)
    print(table)
    data = {"clients": clients, "calls_per_client": calls, "warmup_calls": warmup, "runs": runs}
    if not args.no_write:
        write_json(NAME, data)
        markdown = (
            "## HTTP load: concurrent clients over streamable HTTP\n\n"
            f"`python -m benchmarks.bench_http`: {clients} concurrent clients (one MCP session "
            f"each) x {calls} `tools/call` of a trivial echo tool over streamable HTTP on "
            "127.0.0.1, against prixfixe's HTTP stack (guard, sessions, validation, dispatch) "
            "and a bare SDK low-level server with the same tool on the SDK's streamable HTTP "
            f"app, each in its own process, the client in a third. A warm-up of {warmup} calls "
            "per client runs first; memory growth is measured from after it.\n\n" + table
        )
        write_section(NAME, markdown)
    return data


if __name__ == "__main__":
    main()
