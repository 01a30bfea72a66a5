"""HTTP load: many concurrent clients calling a tool over streamable HTTP on loopback.

`python -m benchmarks.bench_http` (`--quick` for a short run) starts two servers in
subprocesses on 127.0.0.1 and keeps both up for the whole run: `prixfixe serve --http`'s stack
(`prixfixe.mcp.http.serve.serve_http`, with the `bench_echo` tool from `benchmarks/bare_server.py`)
and, as the baseline, a bare SDK low-level server with the same tool on the SDK's own
streamable HTTP app and uvicorn. After an untimed warm-up round against each, rounds alternate
between them (bare, prixfixe, then prixfixe, bare, ...: `--pairs` pairs). In each round N
clients (`mcp.Client` over `streamable_http_client`, one session each) connect, then all call
`bench_echo` M times at once; only that call phase is timed. Per round:

- calls per second (calls / wall time), p50 and p99 latency per call, errors (must be 0);
- the server process's CPU time per call (user + system from `/proc/PID/stat`, every thread).
  The clients share the machine's cores with the server, so throughput moves with whatever
  else runs; CPU time per call is what the server itself spends, and the figure to read is
  its ratio prixfixe / bare, per pair of rounds;
- the server's resident memory (VmRSS) at start, after the warm-up, and after every round:
  growth after the warm-up is the figure that shows a leak.

Only loopback traffic; the loops are bounded in count and time. Results go to
`benchmarks/results/http.json` and the `http` section of docs/benchmarks.md (`--no-write`:
print only).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
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
KINDS = ("bare", "prixfixe")
CLK_TCK = os.sysconf("SC_CLK_TCK")


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


# -- what the server process uses (Linux /proc) ------------------------------------------------


def rss_kib(pid: int) -> int:
    """Resident memory of `pid` in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time `pid` has used so far, all its threads (`os.times` sees only
    this process and its waited-for children)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # Fields after the command name, which is in parentheses and may hold spaces: the first
    # is field 3 (state), so utime (14) and stime (15) are at 11 and 12.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


# -- one round of load ---------------------------------------------------------------------------


class _Barrier:
    """Counts parties down; its event fires when every one has arrived."""

    def __init__(self, parties: int) -> None:
        self.left = parties
        self.event = anyio.Event()

    def arrive(self) -> None:
        self.left -= 1
        if self.left <= 0:
            self.event.set()


async def _round(url: str, clients: int, calls: int, mode: str, pid: int) -> dict[str, Any]:
    """Connect `clients` sessions, then time `calls` calls from each, all at once."""
    from mcp import Client

    latencies: list[float] = []
    errors: list[str] = []
    connected, finished = _Barrier(clients), _Barrier(clients)
    go, release = anyio.Event(), anyio.Event()

    async def one_client(index: int) -> None:
        arrived = done = False
        try:
            async with Client(url, mode=mode) as client:
                connected.arrive()
                arrived = True
                await go.wait()
                for i in range(calls):
                    start = time.perf_counter()
                    result = await client.call_tool("bench_echo", {"text": f"c{index} #{i}"})
                    latencies.append(time.perf_counter() - start)
                    if result.is_error or result.content[0].text != f"c{index} #{i}":  # type: ignore[union-attr]
                        errors.append(f"client {index} call {i}: unexpected result")
                finished.arrive()
                done = True
                await release.wait()
        except Exception as exc:  # noqa: BLE001 - every failure is counted, none may pass silently
            errors.append(f"client {index}: {type(exc).__name__}: {exc}")
        finally:
            if not arrived:
                connected.arrive()
            if not done:
                finished.arrive()

    with anyio.fail_after(600):
        async with anyio.create_task_group() as tg:
            for index in range(clients):
                tg.start_soon(one_client, index)
            await connected.event.wait()
            cpu_start, client_start = cpu_seconds(pid), time.process_time()
            start = time.perf_counter()
            go.set()
            await finished.event.wait()
            wall = time.perf_counter() - start
            cpu = cpu_seconds(pid) - cpu_start
            client_cpu = time.process_time() - client_start
            release.set()
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000 if ordered else 0.0

    count = len(latencies)
    return {
        "calls": count,
        "errors": len(errors),
        "error_samples": errors[:5],
        "wall_s": round(wall, 3),
        "calls_per_s": round(count / wall, 1) if wall else 0.0,
        "p50_ms": round(pct(0.50), 2),
        "p99_ms": round(pct(0.99), 2),
        "server_cpu_s": round(cpu, 2),
        "server_cpu_us_per_call": round(cpu / count * 1e6, 1) if count else 0.0,
        "server_busy": round(cpu / wall, 3) if wall else 0.0,
        "client_cpu_s": round(client_cpu, 2),
        "client_busy": round(client_cpu / wall, 3) if wall else 0.0,
    }


# -- the run -------------------------------------------------------------------------------------


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


@contextlib.contextmanager
def servers() -> Iterator[dict[str, tuple[int, str]]]:
    """Both servers up, each with its own scratch home: kind -> (pid, url)."""
    with contextlib.ExitStack() as stack:
        running: dict[str, tuple[int, str]] = {}
        for kind in KINDS:
            home = stack.enter_context(tempfile.TemporaryDirectory())
            process, url = _start(kind, home)
            stack.callback(_stop, process)
            running[kind] = (process.pid, url)
        yield running


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run(clients: int, calls: int, warmup: int, pairs: int, modes: list[str]) -> dict[str, Any]:
    rounds: list[dict[str, Any]] = []
    memory: dict[str, dict[str, int]] = {}
    with servers() as running:
        for kind, (pid, _url) in running.items():
            memory[kind] = {"start": rss_kib(pid)}
        for mode in modes:
            for pid, url in running.values():
                anyio.run(_round, url, clients, warmup, mode, pid)
        for kind, (pid, _url) in running.items():
            memory[kind]["warm"] = memory[kind]["peak"] = rss_kib(pid)
        for mode in modes:
            for pair in range(pairs):
                # Alternate which side goes first, so neither always follows the other.
                for kind in KINDS if pair % 2 == 0 else KINDS[::-1]:
                    pid, url = running[kind]
                    figures = anyio.run(_round, url, clients, calls, mode, pid)
                    rounds.append({"server": kind, "mode": mode, "pair": pair, **figures})
                    rss = rss_kib(pid)
                    memory[kind]["peak"] = max(memory[kind]["peak"], rss)
                    print(
                        f"bench-http: {mode} pair {pair + 1}/{pairs} {kind:8} "
                        f"{figures['calls_per_s']:8.1f} calls/s, "
                        f"{figures['server_cpu_us_per_call']:7.1f} µs CPU/call, "
                        f"errors {figures['errors']}",
                        flush=True,
                    )
        for kind, (pid, _url) in running.items():
            memory[kind]["after"] = rss_kib(pid)
    return {"rounds": rounds, "rss_kib": memory}


def _spread(values: Sequence[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def summarize(rounds: list[dict[str, Any]], modes: list[str]) -> list[dict[str, Any]]:
    """Per mode and server: medians and ranges over the rounds, and prixfixe / bare by pair."""
    out: list[dict[str, Any]] = []
    for mode in modes:
        mine = [r for r in rounds if r["mode"] == mode]
        by_pair = {(r["server"], r["pair"]): r for r in mine}
        pairs = sorted({r["pair"] for r in mine})
        for kind in KINDS:
            side = [r for r in mine if r["server"] == kind]
            row: dict[str, Any] = {
                "server": kind,
                "mode": mode,
                "rounds": len(side),
                "calls": sum(r["calls"] for r in side),
                "errors": sum(r["errors"] for r in side),
                "error_samples": [e for r in side for e in r["error_samples"]][:5],
            }
            for key in (
                "calls_per_s",
                "p50_ms",
                "p99_ms",
                "server_cpu_us_per_call",
                "server_busy",
                "client_busy",
            ):
                row[key] = _spread([r[key] for r in side])
            if kind != "bare":
                cpu = [
                    by_pair[kind, p]["server_cpu_us_per_call"]
                    / by_pair["bare", p]["server_cpu_us_per_call"]
                    for p in pairs
                ]
                rate = [
                    by_pair[kind, p]["calls_per_s"] / by_pair["bare", p]["calls_per_s"]
                    for p in pairs
                ]
                row["cpu_per_call_vs_bare"] = _spread(cpu)
                row["calls_per_s_vs_bare"] = _spread(rate)
            out.append(row)
    return out


def _fmt(spread: dict[str, float], digits: int = 1) -> str:
    return (
        f"{spread['median']:,.{digits}f} ({spread['min']:,.{digits}f}-{spread['max']:,.{digits}f})"
    )


def _ratio(spread: dict[str, float]) -> str:
    return f"{spread['median']:.2f}x ({spread['min']:.2f}-{spread['max']:.2f})"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--quick", action="store_true", help="10 clients x 40 calls, 3 pairs of rounds"
    )
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--calls", type=int, default=100, help="calls per client per round")
    parser.add_argument(
        "--pairs", type=int, default=5, help="interleaved pairs of rounds (bare + prixfixe)"
    )
    parser.add_argument(
        "--modes", default="legacy", help="comma list of client modes: legacy, 2026-07-28"
    )
    parser.add_argument("--serve", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)
    if args.serve:
        anyio.run(_serve_bare if args.serve == "bare" else _serve_prixfixe)
        return {}
    clients, calls, pairs = (
        (10, 40, 3) if args.quick else (args.clients, args.calls, max(1, args.pairs))
    )
    warmup = max(5, calls // 5)
    modes = args.modes.split(",")
    print(
        f"bench-http: {clients} clients x {calls} calls a round, {pairs} interleaved pairs "
        f"of rounds per mode ({', '.join(modes)}), after {warmup} warm-up calls per client",
        flush=True,
    )
    measured = run(clients, calls, warmup, pairs, modes)
    rows = summarize(measured["rounds"], modes)
    memory = measured["rss_kib"]
    table = markdown_table(
        [
            "server",
            "client mode",
            "calls",
            "errors",
            "calls/s",
            "p50 ms",
            "p99 ms",
            "server CPU µs/call",
            "server CPU / wall",
            "clients' CPU / wall",
            "RSS MiB start / warm / after",
            "RSS growth after warm-up KiB",
        ],
        [
            [
                r["server"],
                r["mode"],
                f"{r['calls']:,}",
                r["errors"],
                _fmt(r["calls_per_s"]),
                _fmt(r["p50_ms"]),
                _fmt(r["p99_ms"]),
                _fmt(r["server_cpu_us_per_call"], 0),
                _fmt(r["server_busy"], 2),
                _fmt(r["client_busy"], 2),
                f"{memory[r['server']]['start'] // 1024} / {memory[r['server']]['warm'] // 1024}"
                f" / {memory[r['server']]['after'] // 1024}",
                memory[r["server"]]["after"] - memory[r["server"]]["warm"],
            ]
            for r in rows
        ],
    )
    ratios = [
        f"{r['mode']}: server CPU per call prixfixe / bare **{_ratio(r['cpu_per_call_vs_bare'])}**"
        f", calls/s prixfixe / bare {_ratio(r['calls_per_s_vs_bare'])}"
        for r in rows
        if r["server"] != "bare"
    ]
    errors = sum(r["errors"] for r in rows)
    error_line = (
        "errors: 0"
        if not errors
        else f"errors: {errors} (must be 0): "
        + "; ".join(e for r in rows for e in r["error_samples"])
    )
    print(table)
    print("\n".join(ratios))
    print(error_line)
    data = {
        "clients": clients,
        "calls_per_client": calls,
        "warmup_calls": warmup,
        "pairs": pairs,
        "modes": modes,
        "clock_ticks_per_s": CLK_TCK,
        "cpu_count": os.cpu_count(),
        "summary": rows,
        "rss_kib": memory,
        "rounds": measured["rounds"],
    }
    if not args.no_write:
        write_json(NAME, data)
        ratio_lines = "\n".join(f"- {line}" for line in ratios)
        markdown = (
            "## HTTP load: concurrent clients over streamable HTTP\n\n"
            f"`python -m benchmarks.bench_http`: {clients} concurrent clients (one MCP session "
            f"each) x {calls} `tools/call` of a trivial echo tool over streamable HTTP on "
            "127.0.0.1, against prixfixe's HTTP stack (guard, sessions, validation, dispatch) "
            "and a bare SDK low-level server with the same tool on the SDK's streamable HTTP "
            "app, each in its own process for the whole run, the clients in a third. After a "
            f"warm-up round of {warmup} calls per client against each, {pairs} pairs of rounds "
            "alternate between the servers (bare first in even pairs, prixfixe first in odd "
            "ones); each round connects its sessions, then times only the calls. Figures are "
            "the median over the rounds with the range in brackets.\n\n"
            f"The machine has {os.cpu_count()} cores, shared by the clients, the server under "
            "load and whatever else runs, so calls/s and latency move from round to round. "
            "**Server CPU per call** (user + system time of the server process during the "
            "timed calls, from `/proc/PID/stat`, over the calls) is what the server itself "
            "spends and is much steadier; the headline is its ratio prixfixe / bare, taken "
            "pair by pair. The CPU / wall columns show who set the pace (the clients all run "
            "in one Python process): a figure near 1.00 is a process using a whole core; when "
            "neither is, other work on the machine did. RSS growth is measured from after the "
            "warm-up to after the last round.\n\n"
            f"{ratio_lines}\n- {error_line}\n\n{table}"
        )
        write_section(NAME, markdown)
    return data


if __name__ == "__main__":
    main()
