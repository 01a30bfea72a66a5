"""CLI start-up: the CPU and wall time of short `prixfixe` commands beside bare interpreters.

Each run spawns one command and waits for it to exit; its CPU time (user + sys, from `wait4`)
is the headline, since a busy machine stretches wall time but hardly CPU time. Commands:

* `prixfixe --version`, `prixfixe --help`: the CLI alone, no command module;
* `prixfixe doctor`: the whole doctor report (it builds the app, counts tokens, opens the store);
* `prixfixe store query reminder`: one store query through the `store_query` tool, as an agent
  would call it.

Baselines, in the same rounds: `python -c pass` (the interpreter, the floor under every row)
and `python -c "import mcp"` (the bare MCP SDK import, which a command that speaks MCP cannot
avoid). Every run gets the same scratch working directory, `PRIXFIXE_HOME` and config home (no
configuration file: the defaults; `PRIXFIXE_LOAD_PLUGINS` empty, so core alone whatever
plugin packages are installed) and a private bytecode cache the warm-up fills; the order of
the commands rotates each round. One more run of each under `PYTHONPROFILEIMPORTTIME=1` counts
the modules it imports and whether the SDK (`mcp`) is among them.

Run from the repository root as `python benchmarks/bench_cli_startup.py` or
`python -m benchmarks.bench_cli_startup` (`--quick` for 5 rounds). `--prixfixe PATH` measures
another installation's console script (e.g. an old checkout's venv) with the same baselines.
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
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a file: make `benchmarks` importable from the checkout.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

from benchmarks import _common
from benchmarks._common import markdown_table, write_json, write_section

NAME = "cli-startup"
#: CPU seconds a command that does not speak MCP should stay under (issue 18).
GOAL_S = 0.3
TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Target:
    key: str
    label: str
    argv: list[str]
    #: A baseline (an interpreter), not a prixfixe command.
    baseline: bool = False


def prixfixe_command() -> str:
    return _common.prixfixe_command("bench_cli_startup")


def targets(prixfixe: str) -> list[Target]:
    python = sys.executable
    return [
        Target("floor", "python -c pass", [python, "-c", "pass"], baseline=True),
        Target("sdk", 'python -c "import mcp"', [python, "-c", "import mcp"], baseline=True),
        Target("version", "prixfixe --version", [prixfixe, "--version"]),
        Target("help", "prixfixe --help", [prixfixe, "--help"]),
        Target("doctor", "prixfixe doctor", [prixfixe, "doctor"]),
        Target(
            "store_query",
            "prixfixe store query reminder",
            [prixfixe, "store", "query", "reminder"],
        ),
    ]


def child_env(workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    for key in ("PYTHONDONTWRITEBYTECODE", "PYTHONPROFILEIMPORTTIME", "COLUMNS"):
        env.pop(key, None)
    env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
    env["PRIXFIXE_HOME"] = str(workdir / "home")
    env["XDG_CONFIG_HOME"] = str(workdir / "xdg")
    env["XDG_DATA_HOME"] = str(workdir / "xdg-data")
    # Core alone, whatever plugin packages the environment holds: their imports are theirs.
    env["PRIXFIXE_LOAD_PLUGINS"] = ""
    return env


def run_once(
    target: Target, env: dict[str, str], cwd: Path, stderr_path: Path | None = None
) -> tuple[float, float]:
    """Wall seconds from spawn to exit and the child's CPU seconds (user + sys)."""
    with (stderr_path or Path(os.devnull)).open("wb") as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(
            target.argv, stdout=subprocess.DEVNULL, stderr=stderr, env=env, cwd=cwd
        )
        try:
            # wait4, not Popen.wait: it also returns the child's resource usage.
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{target.label}: exit status {proc.returncode}")
    return elapsed, usage.ru_utime + usage.ru_stime


_IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)")


def import_trace(target: Target, env: dict[str, str], cwd: Path) -> tuple[int, bool]:
    """How many modules one run imports, and whether the MCP SDK (`mcp`) is one of them."""
    trace = cwd / f"importtime-{target.key}.txt"
    run_once(target, {**env, "PYTHONPROFILEIMPORTTIME": "1"}, cwd, trace)
    modules = [
        m.group(1)
        for line in trace.read_text(encoding="utf-8", errors="replace").splitlines()
        if (m := _IMPORT_LINE.match(line)) is not None
    ]
    return len(modules), any(name == "mcp" or name.startswith("mcp.") for name in modules)


def summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "median_ms": statistics.median(values) * 1000,
        "min_ms": min(values) * 1000,
        "max_ms": max(values) * 1000,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15, help="timed rounds (every command once)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds")
    parser.add_argument("--quick", action="store_true", help="5 rounds, 1 warm-up")
    parser.add_argument(
        "--prixfixe", metavar="PATH", help="the console script to measure (default: this venv's)"
    )
    parser.add_argument(
        "--compare",
        metavar="JSON",
        type=Path,
        help="an earlier run's results file: its CPU medians become a column (and its `note`, if "
        "any, says what it measured)",
    )
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)
    earlier: dict[str, Any] = {}
    if args.compare is not None:
        earlier = json.loads(args.compare.read_text(encoding="utf-8"))
    before = {r["key"]: r["cpu"]["median_ms"] for r in earlier.get("rows", [])}
    if args.quick:
        args.runs, args.warmup = 5, 1

    all_targets = targets(args.prixfixe or prixfixe_command())
    wall: dict[str, list[float]] = {t.key: [] for t in all_targets}
    cpu: dict[str, list[float]] = {t.key: [] for t in all_targets}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        env = child_env(workdir)
        for _ in range(args.warmup):  # the first fills the bytecode cache and makes the store
            for t in all_targets:
                run_once(t, env, workdir)
        for i in range(args.runs):
            shift = i % len(all_targets)
            for t in all_targets[shift:] + all_targets[:shift]:
                elapsed, cpu_s = run_once(t, env, workdir)
                wall[t.key].append(elapsed)
                cpu[t.key].append(cpu_s)
        traces = {t.key: import_trace(t, env, workdir) for t in all_targets}

    floor_cpu = statistics.median(cpu["floor"])
    sdk_cpu = statistics.median(cpu["sdk"])
    rows: list[dict[str, Any]] = []
    for t in all_targets:
        c, w = summary(cpu[t.key]), summary(wall[t.key])
        modules, imports_mcp = traces[t.key]
        rows.append(
            {
                "key": t.key,
                "label": t.label,
                "baseline": t.baseline,
                "cpu": c,
                "wall": w,
                "cpu_runs_ms": [round(x * 1000, 2) for x in cpu[t.key]],
                "wall_runs_ms": [round(x * 1000, 2) for x in wall[t.key]],
                "cpu_over_floor_ms": c["median_ms"] - floor_cpu * 1000,
                "cpu_ratio_sdk": statistics.median(cpu[t.key]) / sdk_cpu,
                "modules": modules,
                "imports_mcp": imports_mcp,
            }
        )
    headers = [
        "command",
        "CPU ms (median)",
        "CPU min-max",
        "wall ms (median)",
        "wall min-max",
        "x SDK import (CPU)",
        "modules",
        "imports `mcp`",
    ]
    if before:
        headers.insert(2, "CPU ms, compared run")
    cells = [
        [
            # Plain text: tests/test_docs.py takes `prixfixe ...` in backquotes for a command.
            r["label"],
            f"{r['cpu']['median_ms']:.0f}",
            f"{r['cpu']['min_ms']:.0f}-{r['cpu']['max_ms']:.0f}",
            f"{r['wall']['median_ms']:.0f}",
            f"{r['wall']['min_ms']:.0f}-{r['wall']['max_ms']:.0f}",
            f"{r['cpu_ratio_sdk']:.2f}",
            str(r["modules"]),
            "yes" if r["imports_mcp"] else "no",
        ]
        for r in rows
    ]
    if before:
        for r, row in zip(rows, cells, strict=True):
            row.insert(2, f"{before[r['key']]:.0f}" if r["key"] in before else "")
    table = markdown_table(headers, cells)
    light = [r for r in rows if not r["baseline"] and not r["imports_mcp"]]
    over = [r["label"] for r in light if r["cpu"]["median_ms"] > GOAL_S * 1000]
    if not light:
        outcome = "NOT met (every command imports mcp)"
    else:
        outcome = f"NOT met ({', '.join(over)})" if over else "met"
    verdict = (
        f"goal <= {GOAL_S * 1000:.0f} ms CPU for the commands that do not import the SDK "
        f"({', '.join(r['label'] for r in light) or 'none'}): {outcome}"
    )
    print(table)
    print(verdict)

    data: dict[str, Any] = {
        "runs": args.runs,
        "warmup": args.warmup,
        "goal_cpu_ms": GOAL_S * 1000,
        "goal_met": bool(light) and not over,
        "rows": rows,
    }
    compared = ""
    if before:
        data["compared"] = {"file": str(args.compare), "note": earlier.get("note"), "cpu": before}
        note = f": {earlier['note']}" if earlier.get("note") else ""
        compared = (
            f"\n\nThe compared run's CPU medians come from `{args.compare.name}`{note}; its "
            f"SDK import took {before.get('sdk', float('nan')):.0f} ms CPU then, this run "
            f"{sdk_cpu * 1000:.0f} ms."
        )
    if not args.no_write:
        markdown = f"""## CLI start-up: short commands, CPU time per process

CPU time (user + sys, from `wait4`) and wall time of one `prixfixe` command from spawn to exit,
{args.runs} rounds in rotating order after {args.warmup} warm-up rounds, all from cached
bytecode, with a scratch `PRIXFIXE_HOME`, config home and working directory (no configuration
file, no third-party plugin loaded). Baselines in the same rounds: `python -c pass`, the
interpreter's floor, and `python -c "import mcp"`, the bare SDK import that every command
building the app pays (its registry parses resource templates with the SDK). "modules" is
the number of modules one run imports (`PYTHONPROFILEIMPORTTIME`), "imports `mcp`" whether the
SDK is among them. Goal (issue 18): at most {GOAL_S * 1000:.0f} ms CPU for a command that does
not need the SDK.{compared}

{table}

Result: {verdict}.

`--version` and `--help` import no command module (the CLI names each command with its help
line and imports its module when it runs), no declaration and no MCP wire type. `doctor` and
`store query` build the app, which costs at least the SDK import: the registry admits the
resource templates with the SDK's RFC 6570 parser, and `from mcp import UriTemplate` loads the
whole SDK, client and server. `doctor` also counts tokens with `bpe_openai`, which reads every
BPE table when imported (about 0.8 s of CPU).

Script: `benchmarks/bench_cli_startup.py`."""
        write_json(NAME, data)
        write_section(NAME, markdown)
    return data


if __name__ == "__main__":
    main()
