"""Process start to `initialize` response over stdio: `prixfixe serve` beside a bare SDK server.

Each run spawns the server, writes one `initialize` JSON-RPC request to its stdin at once (the
pipe holds it until the server reads), and stops the clock when the response line arrives on
stdout; then stdin is closed and the process reaped, outside the timing. Servers:

* **prixfixe serve**: the real console script from the running interpreter's environment;
* **bare SDK server**: `python benchmarks/bare_server.py`, a bare low-level `Server` on the SDK's
  stdio transport - the baseline;
* **prixfixe, no CLI** (diagnostic): `python benchmarks/bare_server.py --prixfixe`, prixfixe's
  `App.build` + `serve_stdio` without the click CLI, to show what the CLI layer costs;
* **interpreter only** (floor): `python -c pass`, spawn to exit.

Runs alternate (the order rotates each repetition) after untimed warm-up runs. Every server
gets the same scratch working directory, config home and a private bytecode cache
(`PYTHONPYCACHEPREFIX`) that the warm-up fills, so each starts from cached bytecode as an
installed package would, whatever `PYTHONDONTWRITEBYTECODE` says. Then each server runs once more
under `PYTHONPROFILEIMPORTTIME=1` and the import time is summed by top-level package, so the
packages prixfixe adds to start-up are named.

Run from the repository root as `python benchmarks/bench_startup.py` or
`python -m benchmarks.bench_startup` (`--quick` for 5 runs each).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a file: make `benchmarks` importable from the checkout.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

from benchmarks import _common
from benchmarks._common import ROOT, markdown_table, write_json, write_section

NAME = "startup"
TARGET = 1.2
BARE_SCRIPT = ROOT / "benchmarks" / "bare_server.py"
TIMEOUT_S = 60.0
INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench_startup", "version": "0"},
            },
        },
        separators=(",", ":"),
    )
    + "\n"
).encode()


@dataclass(frozen=True)
class Target:
    key: str
    label: str
    argv: list[str]
    #: False: the floor, timed from spawn to exit (it answers nothing).
    answers: bool = True


def prixfixe_command() -> str:
    return _common.prixfixe_command("bench_startup")


def targets() -> list[Target]:
    python = sys.executable
    return [
        Target("bare", "bare SDK server", [python, str(BARE_SCRIPT)]),
        Target("prixfixe", "prixfixe serve", [prixfixe_command(), "serve"]),
        Target(
            "launcher",
            "prixfixe, no CLI (diagnostic)",
            [python, str(BARE_SCRIPT), "--prixfixe"],
        ),
        Target("floor", "interpreter only (python -c pass)", [python, "-c", "pass"], answers=False),
    ]


def child_env(workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
    env["XDG_CONFIG_HOME"] = str(workdir / "xdg")
    return env


def time_once(
    target: Target, env: dict[str, str], cwd: Path, stderr_path: Path | None = None
) -> tuple[float, float]:
    """Wall seconds from spawn to the `initialize` response line (to exit, for the floor), and
    the child's CPU seconds over its whole life, which a busy machine does not inflate."""
    with (stderr_path or Path(os.devnull)).open("wb") as stderr:
        # Stderr goes to a file: an import-time trace would fill a pipe and stall the server.
        start = time.perf_counter()
        proc = subprocess.Popen(
            target.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
            cwd=cwd,
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        watchdog = threading.Timer(TIMEOUT_S, proc.kill)  # a hung server must not hang the run
        watchdog.start()
        line = b""
        try:
            if target.answers:
                proc.stdin.write(INITIALIZE)
                proc.stdin.flush()
                line = proc.stdout.readline()
            elapsed = time.perf_counter() - start
            proc.stdin.close()  # EOF: the server shuts down
            # wait4, not Popen.wait: it also returns the child's resource usage.
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if not target.answers:
                elapsed = time.perf_counter() - start
        finally:
            watchdog.cancel()
            proc.stdout.close()
            if proc.returncode is None:
                proc.kill()
                proc.wait()
    if target.answers:
        reply = json.loads(line) if line.strip() else {}
        if reply.get("id") != 1 or "result" not in reply:
            raise RuntimeError(f"{target.label}: no initialize result, got {line[:300]!r}")
    return elapsed, usage.ru_utime + usage.ru_stime


_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def import_profile(
    target: Target, env: dict[str, str], cwd: Path, runs: int
) -> tuple[float, dict[str, float]]:
    """Median total import ms and median self ms per top-level package, over `runs` runs."""
    totals: list[float] = []
    per_package: dict[str, list[float]] = defaultdict(list)
    trace = cwd / f"importtime-{target.key}.txt"
    for _ in range(runs):
        time_once(target, {**env, "PYTHONPROFILEIMPORTTIME": "1"}, cwd, trace)
        sums: dict[str, float] = defaultdict(float)
        total = 0.0
        for line in trace.read_text(encoding="utf-8", errors="replace").splitlines():
            m = _IMPORT_LINE.match(line)
            if m is None:
                continue
            self_us, cumulative_us, indent, module = m.groups()
            if len(indent) == 1:  # a top-level import: its cumulative time covers its subtree
                total += int(cumulative_us) / 1000
            sums[module.split(".")[0]] += int(self_us) / 1000
        totals.append(total)
        for package, ms in sums.items():
            per_package[package].append(ms)
    # A package absent from some runs counts as 0 ms there.
    medians = {
        p: statistics.median(v + [0.0] * (runs - len(v))) for p, v in per_package.items()
    }
    return statistics.median(totals), medians


def _p90(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15, help="timed runs per server")
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs per server")
    parser.add_argument("--import-runs", type=int, default=3, help="-X importtime runs")
    parser.add_argument("--quick", action="store_true", help="5 runs each, 1 import-time run")
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.warmup, args.import_runs = 5, 1, 1

    all_targets = targets()
    wall: dict[str, list[float]] = {t.key: [] for t in all_targets}
    cpu: dict[str, list[float]] = {t.key: [] for t in all_targets}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        env = child_env(workdir)
        for _ in range(args.warmup):  # the first fills the bytecode cache
            for t in all_targets:
                time_once(t, env, workdir)
        for i in range(args.runs):
            order = all_targets[i % len(all_targets) :] + all_targets[: i % len(all_targets)]
            for t in order:
                elapsed, cpu_s = time_once(t, env, workdir)
                wall[t.key].append(elapsed)
                cpu[t.key].append(cpu_s)
        imports = {
            key: import_profile(t, env, workdir, args.import_runs)
            for t in all_targets
            if (key := t.key) in ("bare", "prixfixe")
        }

    base, base_p90, base_min = (
        statistics.median(wall["bare"]), _p90(wall["bare"]), min(wall["bare"])
    )
    base_cpu = statistics.median(cpu["bare"])
    rows: list[dict[str, Any]] = []
    for t in all_targets:
        v, c = wall[t.key], cpu[t.key]
        rows.append(
            {
                "key": t.key,
                "label": t.label,
                "argv": [Path(a).name if os.sep in a else a for a in t.argv],
                "runs_ms": [round(x * 1000, 2) for x in v],
                "cpu_runs_ms": [round(x * 1000, 2) for x in c],
                "median_ms": statistics.median(v) * 1000,
                "p90_ms": _p90(v) * 1000,
                "min_ms": min(v) * 1000,
                "cpu_median_ms": statistics.median(c) * 1000,
                "ratio_median": statistics.median(v) / base,
                "ratio_p90": _p90(v) / base_p90,
                "ratio_min": min(v) / base_min,
                "ratio_cpu": statistics.median(c) / base_cpu,
            }
        )
    table = markdown_table(
        [
            "server",
            "median ms",
            "p90 ms",
            "min ms",
            "x bare (median)",
            "x bare (p90)",
            "x bare (min)",
            "CPU ms (median)",
            "x bare (CPU)",
        ],
        [
            [
                r["label"],
                f"{r['median_ms']:.0f}",
                f"{r['p90_ms']:.0f}",
                f"{r['min_ms']:.0f}",
                f"{r['ratio_median']:.2f}",
                f"{r['ratio_p90']:.2f}",
                f"{r['ratio_min']:.2f}",
                f"{r['cpu_median_ms']:.0f}",
                f"{r['ratio_cpu']:.2f}",
            ]
            for r in rows
        ],
    )
    pf_row = next(r for r in rows if r["key"] == "prixfixe")
    ratio = pf_row["ratio_median"]
    verdict = (
        f"target <= {TARGET}x bare {'met' if ratio <= TARGET else 'NOT met'}: "
        f"prixfixe serve {ratio:.3f}x bare (median wall time; "
        f"{pf_row['ratio_min']:.2f}x by best run, {pf_row['ratio_cpu']:.2f}x by CPU time)"
    )

    bare_total, bare_pkgs = imports["bare"]
    pf_total, pf_pkgs = imports["prixfixe"]
    # Only packages the bare server never imports are attributed: a shared package's self time
    # swings by tens of ms with whichever garbage collection happens to run inside it.
    added = sorted(
        ((p, ms) for p, ms in pf_pkgs.items() if p not in bare_pkgs), key=lambda i: -i[1]
    )
    added_total = sum(ms for _, ms in added)
    shown = [(p, ms) for p, ms in added if ms >= 0.5][:12]
    import_table = markdown_table(
        ["package (prixfixe serve only)", "self import ms"],
        [[f"`{p}`", f"{ms:.1f}"] for p, ms in shown]
        + [[f"all {len(added)} packages the bare server does not import", f"{added_total:.1f}"]],
    )
    import_line = (
        f"import time (median of {args.import_runs} traced runs): prixfixe serve "
        f"{pf_total:.0f} ms, bare {bare_total:.0f} ms ({pf_total - bare_total:+.0f} ms); "
        f"packages only prixfixe imports: {added_total:.0f} ms"
    )
    print(table)
    print(verdict)
    print(import_line)
    print(import_table)

    data: dict[str, Any] = {
        "runs": args.runs,
        "warmup": args.warmup,
        "target_ratio": TARGET,
        "target_met": ratio <= TARGET,
        "rows": rows,
        "import_ms": {"prixfixe": pf_total, "bare": bare_total, "added_packages": added_total},
        "import_ms_by_package": {"prixfixe": pf_pkgs, "bare": bare_pkgs},
    }
    if not args.no_write:
        markdown = f"""## Start-up: process start to `initialize` response (stdio)

Time from spawning the server to reading its `initialize` response line on stdout (raw
subprocess and pipes; the request is written at once), {args.runs} runs per server in rotating
order after {args.warmup} warm-up runs, all from cached bytecode. Baseline: a bare SDK
low-level `Server` on the SDK's stdio transport (`benchmarks/bare_server.py`). "prixfixe, no
CLI" starts prixfixe's app and stdio server without the click CLI; "interpreter only" is
`python -c pass`, spawn to exit, the floor under every row. CPU time is the child's whole life
(start-up, the answer, shutdown); unlike wall time it does not grow when the machine is busy.

{table}

Result: {verdict}.

Where prixfixe's extra start-up goes ({import_line}), by top-level package, from
`PYTHONPROFILEIMPORTTIME` traces:

{import_table}

Modules loaded with `importlib.import_module` (the built-in plugins) do not appear in such traces;
their module bodies, `App.build` and the garbage collections that more imports bring are the rest
of the gap between the traced import time and the wall-time difference.

Script: `benchmarks/bench_startup.py`."""
        write_json(NAME, data)
        write_section(NAME, markdown)
    return data


if __name__ == "__main__":
    main()
