"""`tools/call` round trips per second for a trivial tool, prixfixe beside a bare SDK server.

The tool is `bench_echo` (read-only, one string parameter, returns it), defined once in
`benchmarks/bare_server.py` for both servers. Three servers are measured side by side:

* **bare**: a bare `mcp.server.lowlevel.Server` with hand-written `tools/list` and `tools/call`
  handlers and a static schema (no argument validation) - the baseline;
* **prixfixe direct**: `bench_echo` in facet `bench`, listed (`PRIXFIXE_EXPOSE=core,bench`)
  and called by name;
* **prixfixe via tool_invoke**: the same tool reached through `tool_invoke`, the path an agent
  takes for a tool that is not listed.

Transports: in memory (`mcp.Client(server)` in this process, on the 2025-11-25 handshake and the
stateless 2026-07-28 revision) and stdio (each server a subprocess started from
`benchmarks/bare_server.py`, with and without `--prixfixe`). Calls are sequential; each client
lists tools and warms up first, then the calls are spread over rounds whose server order rotates,
so drift on a shared machine hits every server alike. Reported: calls/s, p50/p99 latency and the
ratio to bare in the same run. The ratio includes the client's own cost, identical on both sides.

Run from the repository root as `python benchmarks/bench_roundtrip.py` or
`python -m benchmarks.bench_roundtrip` (`--quick` for a short run, `--profile` to print where a
prixfixe call spends its time).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a file: make `benchmarks` and `prixfixe` importable from the checkout.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

import anyio
from mcp import Client, StdioServerParameters

from benchmarks._common import ROOT, markdown_table, write_json, write_section
from benchmarks.bare_server import ECHO_NAME, build_bare_server, echo_plugin, prixfixe_env
from prixfixe.app import App
from prixfixe.mcp.server import build_server

NAME = "roundtrip"
BARE_SCRIPT = ROOT / "benchmarks" / "bare_server.py"
TARGET = 0.8
TEXT = "hello, prixfixe"
MODES = ("legacy", "2026-07-28")
MODE_LABEL = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}


@dataclass(frozen=True)
class Variant:
    key: str
    label: str
    tool: str
    arguments: dict[str, Any]
    prixfixe: bool


VARIANTS = (
    Variant("bare", "bare SDK server", ECHO_NAME, {"text": TEXT}, prixfixe=False),
    Variant("direct", "prixfixe, listed tool", ECHO_NAME, {"text": TEXT}, prixfixe=True),
    Variant(
        "invoke",
        "prixfixe, via tool_invoke",
        "tool_invoke",
        {"name": ECHO_NAME, "arguments": {"text": TEXT}},
        prixfixe=True,
    ),
)


@dataclass
class Samples:
    latencies_ns: list[int] = field(default_factory=list)
    round_seconds: list[float] = field(default_factory=list)

    @property
    def calls_per_s(self) -> float:
        return len(self.latencies_ns) / sum(self.round_seconds)


def _percentile(values: Sequence[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))])


async def _call_checked(client: Client, variant: Variant) -> None:
    result = await client.call_tool(variant.tool, variant.arguments)
    text = getattr(result.content[0], "text", None) if result.content else None
    if result.is_error or text != TEXT:
        # A benchmark of a failing call would measure the error path: stop instead.
        raise RuntimeError(f"{variant.label}: unexpected result {result!r}")


async def run_group(
    clients: dict[str, Client], calls: int, warmup: int, rounds: int
) -> dict[str, Samples]:
    """Time `calls` sequential calls per variant, interleaved over `rounds` rotating rounds."""
    for variant in VARIANTS:
        client = clients[variant.key]
        await client.list_tools()  # as a real client would, and it primes client-side caches
        for _ in range(warmup):
            await _call_checked(client, variant)
    samples = {v.key: Samples() for v in VARIANTS}
    per_round = max(1, calls // rounds)
    for r in range(rounds):
        order = VARIANTS[r % len(VARIANTS) :] + VARIANTS[: r % len(VARIANTS)]
        for variant in order:
            client, tool, arguments = clients[variant.key], variant.tool, variant.arguments
            lat = samples[variant.key].latencies_ns
            start = time.perf_counter()
            for _ in range(per_round):
                t0 = time.perf_counter_ns()
                await client.call_tool(tool, arguments)
                lat.append(time.perf_counter_ns() - t0)
            samples[variant.key].round_seconds.append(time.perf_counter() - start)
    return samples


async def memory_group(
    app: App, mode: str, calls: int, warmup: int, rounds: int
) -> dict[str, Samples]:
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        for v in VARIANTS:
            server = build_server(app) if v.prixfixe else build_bare_server()
            clients[v.key] = await stack.enter_async_context(Client(server, mode=mode))
        return await run_group(clients, calls, warmup, rounds)


def _stdio_params(prixfixe: bool, workdir: Path) -> StdioServerParameters:
    # The SDK starts servers with a minimal environment, so no PRIXFIXE_* setting leaks in; a
    # scratch cwd and config home keep a developer's prixfixe.toml out of the measurement too.
    env = {"XDG_CONFIG_HOME": str(workdir / "xdg"), "PRIXFIXE_EXPOSE": "core,bench"}
    if "PYTHONDONTWRITEBYTECODE" in os.environ:  # honour it: no __pycache__ in the checkout
        env["PYTHONDONTWRITEBYTECODE"] = os.environ["PYTHONDONTWRITEBYTECODE"]
    args = [str(BARE_SCRIPT), *(["--prixfixe"] if prixfixe else [])]
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=workdir)


async def stdio_group(
    workdir: Path, mode: str, calls: int, warmup: int, rounds: int
) -> dict[str, Samples]:
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        for v in VARIANTS:
            params = _stdio_params(v.prixfixe, workdir)
            clients[v.key] = await stack.enter_async_context(Client(params, mode=mode))
        return await run_group(clients, calls, warmup, rounds)


async def dispatch_cost_us(app: App, calls: int) -> float:
    """Microseconds per `App.call_tool` with no protocol around it: prixfixe's own share."""
    arguments = {"text": TEXT}
    for _ in range(200):
        await app.call_tool(ECHO_NAME, arguments)
    start = time.perf_counter()
    for _ in range(calls):
        await app.call_tool(ECHO_NAME, arguments)
    return (time.perf_counter() - start) / calls * 1e6


def profile_prixfixe(app: App, mode: str, calls: int) -> str:
    """cProfile of `calls` direct prixfixe calls in memory: the top of the time, by function."""

    async def loop() -> None:
        async with Client(build_server(app), mode=mode) as client:
            await client.list_tools()
            for _ in range(200):
                await client.call_tool(ECHO_NAME, {"text": TEXT})
            profiler.enable()
            for _ in range(calls):
                await client.call_tool(ECHO_NAME, {"text": TEXT})
            profiler.disable()

    profiler = cProfile.Profile()
    anyio.run(loop)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    out.write(f"== cProfile, {calls} direct calls, in memory, {mode}: top by own time ==\n")
    stats.sort_stats("tottime").print_stats(20)
    out.write("== prixfixe and jsonschema functions, by cumulative time ==\n")
    stats.sort_stats("cumulative").print_stats(r"prixfixe|jsonschema|validation", 25)
    return out.getvalue()


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=2000, help="in-memory calls per server")
    parser.add_argument("--stdio-calls", type=int, default=1000, help="stdio calls per server")
    parser.add_argument("--warmup", type=int, default=200, help="untimed calls per server")
    parser.add_argument("--rounds", type=int, default=20, help="interleaved rounds")
    parser.add_argument("--quick", action="store_true", help="300/150 calls, 3 rounds")
    parser.add_argument(
        "--transports", nargs="+", choices=("memory", "stdio"), default=["memory", "stdio"]
    )
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--profile", action="store_true", help="also print a cProfile")
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.stdio_calls, args.warmup, args.rounds = 300, 150, 50, 3

    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        app = App.build(env=prixfixe_env({}), cwd=workdir, extra_plugins=[echo_plugin()])
        for transport in args.transports:
            for mode in args.modes:
                if transport == "memory":
                    samples = anyio.run(
                        memory_group, app, mode, args.calls, args.warmup, args.rounds
                    )
                else:
                    samples = anyio.run(
                        stdio_group, workdir, mode, args.stdio_calls, args.warmup, args.rounds
                    )
                results += summarize(transport, mode, samples)
        dispatch = anyio.run(dispatch_cost_us, app, max(args.calls, 2000))
        profile = profile_prixfixe(app, "legacy", args.calls) if args.profile else ""

    headers = [
        "transport",
        "revision",
        "server",
        "calls/s",
        "p50 µs",
        "p99 µs",
        "x bare",
        "x bare (p50)",
        "µs/call over bare",
        "per-round x bare: median (min-max)",
    ]
    rows = [
        [
            r["transport"],
            MODE_LABEL[r["mode"]],
            r["label"],
            f"{r['calls_per_s']:,.0f}",
            f"{r['p50_us']:,.0f}",
            f"{r['p99_us']:,.0f}",
            f"{r['ratio']:.2f}",
            f"{r['ratio_p50']:.2f}",
            "" if r["key"] == "bare" else f"{r['extra_us']:+,.0f}",
            ""
            if r["key"] == "bare"
            else f"{r['ratio_median']:.2f} ({r['ratio_min']:.2f}-{r['ratio_max']:.2f})",
        ]
        for r in results
    ]
    table = markdown_table(headers, rows)
    prixfixe_rows = [r for r in results if r["key"] != "bare"]
    missed = [r for r in prixfixe_rows if r["ratio"] < TARGET]
    verdict = (
        f"target >= {TARGET}x bare met by every prixfixe row"
        if not missed
        else f"target >= {TARGET}x bare NOT met by {len(missed)} of {len(prixfixe_rows)} rows: "
        + "; ".join(
            f"{r['transport']} {MODE_LABEL[r['mode']]} {r['label']} {r['ratio']:.3f}x "
            f"(p50 {r['ratio_p50']:.2f}x)"
            for r in missed
        )
    )
    dispatch_line = (
        f"prixfixe's own dispatch (`App.call_tool`: lookup, schema + model validation, handler, "
        f"result), no protocol: {dispatch:.1f} µs per call"
    )
    print(table)
    print(verdict)
    print(dispatch_line)
    if profile:
        print(profile)

    data: dict[str, Any] = {
        "calls": args.calls,
        "stdio_calls": args.stdio_calls,
        "warmup": args.warmup,
        "rounds": args.rounds,
        "target_ratio": TARGET,
        "target_met": not missed,
        "dispatch_us_per_call": dispatch,
        "rows": results,
    }
    if not args.no_write:
        markdown = f"""## `tools/call` round trips

Sequential `tools/call` of a trivial read-only echo tool (one string parameter) through prixfixe,
called directly while listed and through `tool_invoke`, beside a bare SDK low-level `Server`
serving the same tool with hand-written handlers and no argument validation (the baseline,
`benchmarks/bare_server.py`). In memory: `mcp.Client(server)` in one process. Stdio:
each server a subprocess. {args.calls:,} in-memory and {args.stdio_calls:,} stdio calls per
server after {args.warmup} warm-up calls, interleaved over {args.rounds} rotating rounds. "x bare"
is throughput over bare's; "x bare (p50)" is bare's median latency over this row's (higher is
better for both); the per-round column shows how much the ratio moved during the run. The ratio
includes the client's cost, which is the same for every server.

{table}

Result: {verdict}. {dispatch_line}. Script: `benchmarks/bench_roundtrip.py`."""
        write_json(NAME, data)
        write_section(NAME, markdown)
    return data


def summarize(transport: str, mode: str, samples: dict[str, Samples]) -> list[dict[str, Any]]:
    bare = samples["bare"]
    bare_cps = bare.calls_per_s
    out: list[dict[str, Any]] = []
    for v in VARIANTS:
        s = samples[v.key]
        per_round = [
            (len(s.latencies_ns) / len(s.round_seconds) / own)
            / (len(bare.latencies_ns) / len(bare.round_seconds) / base)
            for own, base in zip(s.round_seconds, bare.round_seconds, strict=True)
        ]
        out.append(
            {
                "transport": transport,
                "mode": mode,
                "key": v.key,
                "label": v.label,
                "calls": len(s.latencies_ns),
                "calls_per_s": s.calls_per_s,
                "p50_us": _percentile(s.latencies_ns, 0.50) / 1000,
                "p99_us": _percentile(s.latencies_ns, 0.99) / 1000,
                "mean_us": statistics.fmean(s.latencies_ns) / 1000,
                "ratio": s.calls_per_s / bare_cps,
                # Latency ratio inverted, so that like `ratio` higher is better for prixfixe.
                "ratio_p50": _percentile(bare.latencies_ns, 0.50)
                / _percentile(s.latencies_ns, 0.50),
                "ratio_median": statistics.median(per_round),
                "ratio_min": min(per_round),
                "ratio_max": max(per_round),
                "extra_us": 1e6 / s.calls_per_s - 1e6 / bare_cps,
            }
        )
    return out


if __name__ == "__main__":
    main()
