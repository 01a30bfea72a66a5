"""CLI start-up: the CPU and wall time of short `prixfixe` commands beside bare interpreters.

Each run spawns one command and waits for it to exit; its CPU time (user + sys, from `wait4`)
is the headline, since a busy machine stretches wall time but hardly CPU time. Commands:

* `prixfixe --version`, `prixfixe --help`: the CLI alone, no command module;
* `prixfixe doctor`: the whole doctor report (it builds the app, counts tokens, opens the store);
* `prixfixe store query reminder`: one store query through the `store_query` tool, as an agent
  would call it;
* `prixfixe kb search watering`, `prixfixe tools search "add a reminder"`: a knowledge-base
  search and a tool search (issue 30: with `store query`, commands that build the app but speak
  no MCP).

Baselines, in the same rounds: `python -c pass` (the interpreter, the floor under every row) and
`python -c "import mcp"` (the bare MCP SDK import, which a command that speaks MCP cannot
avoid); with `--peer CMD` (repeatable) another tool's command too, such as `llm plugins`, to see
the CLI beside its peers; with `--before-src DIR` every prixfixe command again with `DIR`
(another checkout's `src`) first on `PYTHONPATH`, so before and after are measured in the same
rounds on the same machine load. Every run gets the same scratch working directory,
`PRIXFIXE_HOME` and config home (no configuration file: the defaults; `PRIXFIXE_LOAD_PLUGINS`
empty, so core alone whatever plugin packages are installed) and a private bytecode cache the
warm-up fills; the order of the commands rotates each round. One more run of each under
`PYTHONPROFILEIMPORTTIME=1` counts the modules it imports and whether the SDK (`mcp`) is among
them.

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
#: CPU seconds the CLI alone (`--version`, `--help`) should stay under (issue 18).
GOAL_S = 0.3
#: CPU seconds a short command that builds the app but speaks no MCP should stay under
#: (issue 30: `store query`, `kb search`, `tools search`).
APP_GOAL_S = 0.6
TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Target:
    key: str
    label: str
    argv: list[str]
    #: A baseline (an interpreter, a peer's command, the code before), not a goal's subject.
    baseline: bool = False
    #: The CPU seconds it should stay under, if it has a goal.
    goal_s: float | None = None
    #: Extra environment for its runs (the code before: its `src` on PYTHONPATH).
    env: tuple[tuple[str, str], ...] = ()


def prixfixe_command() -> str:
    return _common.prixfixe_command("bench_cli_startup")


def targets(
    prixfixe: str, peers: Sequence[str] = (), before_src: Path | None = None
) -> list[Target]:
    import shlex

    python = sys.executable
    own = [
        Target("version", "prixfixe --version", [prixfixe, "--version"], goal_s=GOAL_S),
        Target("help", "prixfixe --help", [prixfixe, "--help"], goal_s=GOAL_S),
        Target("doctor", "prixfixe doctor", [prixfixe, "doctor"]),
        Target(
            "store_query",
            "prixfixe store query reminder",
            [prixfixe, "store", "query", "reminder"],
            goal_s=APP_GOAL_S,
        ),
        Target(
            "kb_search",
            "prixfixe kb search watering",
            [prixfixe, "kb", "search", "watering"],
            goal_s=APP_GOAL_S,
        ),
        Target(
            "tools_search",
            'prixfixe tools search "add a reminder"',
            [prixfixe, "tools", "search", "add a reminder"],
            goal_s=APP_GOAL_S,
        ),
    ]
    out = [
        Target("floor", "python -c pass", [python, "-c", "pass"], baseline=True),
        Target("sdk", 'python -c "import mcp"', [python, "-c", "import mcp"], baseline=True),
    ]
    for peer in peers:
        argv = shlex.split(peer)
        label = " ".join([Path(argv[0]).name, *argv[1:]])
        out.append(Target(f"peer:{label}", label, argv, baseline=True))
    out += own
    if before_src is not None:
        path = str(before_src.resolve())
        out += [
            Target(
                f"before:{t.key}",
                f"{t.label} (before)",
                t.argv,
                baseline=True,
                env=(("PYTHONPATH", path),),
            )
            for t in own
        ]
    return out


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
    env = {**env, **dict(target.env)}
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
        "--peer",
        metavar="CMD",
        action="append",
        default=[],
        help="another tool's command to measure beside prixfixe's, e.g. 'llm plugins' "
        "(repeatable; a baseline row)",
    )
    parser.add_argument(
        "--before-src",
        metavar="DIR",
        type=Path,
        help="another checkout's src directory: every prixfixe command runs again with it "
        "first on PYTHONPATH, in the same rounds (rows marked 'before')",
    )
    parser.add_argument(
        "--note-before",
        metavar="TEXT",
        default="",
        help="what --before-src holds, said in the written section (e.g. a commit)",
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

    all_targets = targets(args.prixfixe or prixfixe_command(), args.peer, args.before_src)
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
                "goal_ms": None if t.goal_s is None else t.goal_s * 1000,
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
    verdicts: list[str] = []
    met = True
    for goal_s, what in ((GOAL_S, "the CLI alone"), (APP_GOAL_S, "commands that build the app")):
        subject = [r for r in rows if r["goal_ms"] == goal_s * 1000]
        over = [r["label"] for r in subject if r["cpu"]["median_ms"] > goal_s * 1000]
        sdk = [r["label"] for r in subject if r["imports_mcp"]]
        misses = [*over, *(f"{label} imports mcp" for label in sdk if label not in over)]
        met = met and not misses
        outcome = f"NOT met ({', '.join(misses)})" if misses else "met"
        names = ", ".join(r["label"] for r in subject)
        verdicts.append(
            f"goal <= {goal_s * 1000:.0f} ms CPU and no SDK import for {what} ({names}): {outcome}"
        )
    verdict = "; ".join(verdicts)
    print(table)
    print(verdict)

    data: dict[str, Any] = {
        "runs": args.runs,
        "warmup": args.warmup,
        "goal_cpu_ms": GOAL_S * 1000,
        "app_goal_cpu_ms": APP_GOAL_S * 1000,
        "goal_met": met,
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
        peers = [r["label"] for r in rows if r["key"].startswith("peer:")]
        extra = ""
        if peers:
            extra += f" Peers' commands, in the same rounds: {', '.join(peers)}."
        if args.before_src is not None:
            extra += (
                " Rows marked (before) run the same console script with another checkout's "
                "`src` first on `PYTHONPATH`"
                + (f" ({args.note_before})" if args.note_before else "")
                + ", in the same rounds."
            )
        markdown = f"""## CLI start-up: short commands, CPU time per process

CPU time (user + sys, from `wait4`) and wall time of one `prixfixe` command from spawn to exit,
{args.runs} rounds in rotating order after {args.warmup} warm-up rounds, all from cached
bytecode, with a scratch `PRIXFIXE_HOME`, config home and working directory (no configuration
file, no third-party plugin loaded). Baselines in the same rounds: `python -c pass`, the
interpreter's floor, and `python -c "import mcp"`, the bare SDK import.{extra} "modules" is
the number of modules one run imports (`PYTHONPROFILEIMPORTTIME`), "imports `mcp`" whether the
SDK is among them. Goals: at most {GOAL_S * 1000:.0f} ms CPU for the CLI alone (issue 18), at
most {APP_GOAL_S * 1000:.0f} ms CPU and no SDK import for `store query`, `kb search` and
`tools search` (issue 30).{compared}

{table}

Result: {verdict}.

`--version` and `--help` import no command module (the CLI names each command with its help
line and imports its module when it runs), no declaration and no MCP wire type. `store query`,
`kb search` and `tools search` build the app (config, plugins, registry, store) but import
neither the SDK's client nor its server: the registry parses resource templates with the
SDK's own RFC 6570 module loaded from its file alone (`from mcp import UriTemplate` ran the
package's `__init__`, which imports the whole SDK), the git steps import pygit2 and the
knowledge readers the ranker only when they run. What they still pay is the app itself: the
MCP wire types (`mcp_types`: pydantic models of both protocol revisions, which the app's
tool results are made of), the configuration's and plugins' models and the store; `tools
search` also loads the embedding model it ranks with. `doctor` builds the listing and counts
tokens with `bpe_openai`, which reads every BPE table when imported.

Script: `benchmarks/bench_cli_startup.py`."""
        write_json(NAME, data)
        write_section(NAME, markdown)
    return data


if __name__ == "__main__":
    main()
