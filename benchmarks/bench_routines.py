"""Routines benchmark: the morning routine over 20 real git repositories, git steps in one
parallel batch against the same steps run one after another, in the same run.

The benchmark creates its repositories (each a clone of its own local bare remote, with one
commit pushed; a few left dirty, a few with unpushed commits, a few behind their fetched
upstream) and a routine of, per repository, a `git-status` and a `git-unpushed` step (40 steps
reading through libgit2, no process), followed by `reminders`, `deadline-calc` and
`countdown-calc` over the store. The two routines differ only in `parallel = true` on the git
steps. A third row is the same work as two steps over all 20 repositories (each step looks at
up to 8 repositories at once). Two more rows compare the read paths alone: libgit2 against the
git command lines the steps ran before, through the defanged exec gate.

Each round runs every variant once, in rotating order, through the engine and the store
exactly as `prixfixe run` does (the report is kept); wall time per run, median and best of the
rounds. The ratio sequential / parallel is the figure to read: it depends on the machine's
cores, as process start-up is CPU work.

Run from the repository root: `python -m benchmarks.bench_routines [--quick]`.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

import anyio
import anyio.to_thread

from benchmarks._common import markdown_table, write_json, write_section
from prixfixe.app import App

NAME = "routines"
REPOS = 20
GIT = (
    "-c", "user.name=prixfixe bench",
    "-c", "user.email=bench@prixfixe.invalid",
    "-c", "commit.gpgsign=false",
    "-c", "init.defaultBranch=main",
)  # fmt: skip


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *GIT, *args], cwd=cwd, check=True, capture_output=True)


def make_repos(root: Path, count: int) -> list[Path]:
    """`count` clones of their own bare remotes, in mixed states."""
    repos: list[Path] = []
    for i in range(count):
        remote, seed, clone = root / f"r{i:02d}.git", root / f"seed{i:02d}", root / f"repo{i:02d}"
        git(root, "init", "-q", "--bare", str(remote))
        git(root, "init", "-q", str(seed))
        for n in range(3):
            (seed / f"file{n}.txt").write_text(f"{i} {n}\n")
            git(seed, "add", ".")
            git(seed, "commit", "-q", "-m", f"commit {n}")
        git(seed, "remote", "add", "origin", str(remote))
        git(seed, "push", "-q", "-u", "origin", "main")
        git(root, "clone", "-q", str(remote), str(clone))
        if i % 5 == 1:  # dirty
            (clone / "file0.txt").write_text("edited\n")
            (clone / "new.txt").write_text("new\n")
        elif i % 5 == 2:  # unpushed commits
            (clone / "local.txt").write_text("local\n")
            git(clone, "add", ".")
            git(clone, "commit", "-q", "-m", "local work")
        elif i % 5 == 3:  # behind its fetched upstream
            (seed / "upstream.txt").write_text("news\n")
            git(seed, "add", ".")
            git(seed, "commit", "-q", "-m", "upstream work")
            git(seed, "push", "-q")
            git(clone, "fetch", "-q")
        repos.append(clone)
    return repos


def routine(name: str, repos: list[Path], *, parallel: bool | None) -> str:
    """`parallel` True/False: one step per repository; None: two steps over all of them."""
    lines = [f"[routines.{name}]"]

    def step(type_: str, step_name: str, repo_list: str, batch: bool) -> None:
        lines.extend(
            [
                f"[[routines.{name}.steps]]",
                f'type = "{type_}"',
                f'name = "{step_name}"',
                f"repos = {repo_list}",
                f"parallel = {'true' if batch else 'false'}",
            ]
        )

    if parallel is None:
        everything = "[" + ", ".join(f'"{r}"' for r in repos) + "]"
        step("git-status", "status", everything, False)
        step("git-unpushed", "unpushed", everything, False)
    else:
        for i, repo in enumerate(repos):
            step("git-status", f"status-{i:02d}", f'["{repo}"]', parallel)
            step("git-unpushed", f"unpushed-{i:02d}", f'["{repo}"]', parallel)
    for type_ in ("reminders", "deadline-calc", "countdown-calc"):
        lines.extend([f"[[routines.{name}.steps]]", f'type = "{type_}"'])
    return "\n".join(lines) + "\n"


VARIANTS = {
    "parallel": "git steps in one parallel batch (40 steps)",
    "sequential": "the same steps one after another",
    "two-steps": "two steps over all 20 repositories (8 at a time within a step)",
    "reads-libgit2": "read paths alone: status and unpushed of 20 repositories through libgit2 "
    "(worker threads, 8 at a time)",
    "reads-git": "read paths alone: the same through defanged git, as before (80 git commands, "
    "each after its config scan, 8 at a time)",
    "floor": "floor: the same 80 git commands by plain subprocess.run, one by one (no store steps)",
}


def cpu_seconds() -> float:
    """CPU time of this process and its reaped children (the git processes)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_once(app: App, name: str) -> tuple[float, float]:
    """Wall and CPU seconds of one run of routine `name`."""
    routine_ = app.routines.get(name)

    async def go() -> Any:
        return await app.routines.run(routine_, lambda: app.store)

    c0, t0 = cpu_seconds(), time.perf_counter()
    stored = anyio.run(go)
    elapsed, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    failed = [s.name for s in stored.report.steps if s.status != "ok"]
    if failed:
        raise SystemExit(f"benchmark routine {name} had failed steps: {failed}")
    return elapsed, cpu


#: The git command lines the read-only steps ran before they read through libgit2: git-status
#: one, git-unpushed three (its status, the count and the list).
OLD_READS = (
    ("status", "--porcelain=v2", "--branch", "--untracked-files=normal",
     "--ignore-submodules=dirty"),
    ("status", "--porcelain=v2", "--branch", "--untracked-files=normal",
     "--ignore-submodules=dirty"),
    ("rev-list", "--count", "@{upstream}..HEAD"),
    ("log", "--no-show-signature", "--no-ext-diff", "--no-textconv", "--max-count", "20",
     "--format=%h%x1f%s", "@{upstream}..HEAD"),
)  # fmt: skip


def reads_once(repos: list[Path], how: str) -> tuple[float, float]:
    """The read-only steps' work over every repository, 8 at a time as a step does: through
    libgit2 in worker threads (what the steps do), or the same reads as the git command lines
    they used to run, through the real exec gate (defanged: a config scan before each)."""
    from prixfixe.leash import libgit
    from prixfixe.leash.exec import CommandLine, ExecGate, make_grant
    from prixfixe.leash.fs import FsGate, FsGrant

    root = repos[0].parent
    argvs = [["git", "-C", str(r), *args] for r in repos for args in OLD_READS]
    declared = [CommandLine.exact(a, root) for a in argvs]
    gate = ExecGate(
        make_grant(declared, None, base_dir=root, source="bench"),
        dict(os.environ),
        FsGate(FsGrant((root,), (), "bench")),
    )
    limiter = anyio.CapacityLimiter(8)

    async def one(repo: Path) -> None:
        async with limiter:
            if how == "libgit2":
                await anyio.to_thread.run_sync(libgit.status, repo)
                await anyio.to_thread.run_sync(libgit.unpushed, repo, 20)
                return
            for args in OLD_READS:
                argv = ["git", "-C", str(repo), *args]
                await gate.run(argv, step="bench", declared=declared, base_dir=root)

    async def go() -> None:
        async with anyio.create_task_group() as tg:
            for repo in repos:
                tg.start_soon(one, repo)

    c0, t0 = cpu_seconds(), time.perf_counter()
    anyio.run(go)
    return time.perf_counter() - t0, cpu_seconds() - c0


def floor_once(repos: list[Path]) -> tuple[float, float]:
    """The same 80 git commands the git steps run, by plain `subprocess.run`, one by one."""
    status = ["status", "--porcelain=v2", "--branch", "--untracked-files=normal"]
    span = ["@{upstream}..HEAD"]
    c0, t0 = cpu_seconds(), time.perf_counter()
    for repo in repos:
        for args in (status, status, ["rev-list", "--count", *span],
                     ["log", "--max-count=20", "--format=%h%x1f%s", *span]):  # fmt: skip
            subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    return time.perf_counter() - t0, cpu_seconds() - c0


def bench(workdir: Path, rounds: int, count: int) -> dict[str, Any]:
    (workdir / "repos").mkdir()
    repos = make_repos(workdir / "repos", count)
    config = workdir / "prixfixe.toml"
    config.write_text(
        routine("parallel", repos, parallel=True)
        + routine("sequential", repos, parallel=False)
        + routine("two-steps", repos, parallel=None)
    )
    env = {**os.environ, "PRIXFIXE_CONFIG": str(config), "PRIXFIXE_HOME": str(workdir / "home")}
    app = App.build(env=env, cwd=workdir)
    try:
        store = app.store
        store.put("reminder", {"text": "standup", "due": "2026-01-05", "recurrence": "weekdays"})
        store.put("deadline", {"label": "release", "date": "2027-01-31"})
        store.put("countdown", {"label": "quarter", "start": "2026-01-01", "end": "2027-03-31"})

        def once(name: str) -> tuple[float, float]:
            if name in ("reads-libgit2", "reads-git"):
                return reads_once(repos, name.removeprefix("reads-"))
            return floor_once(repos) if name == "floor" else run_once(app, name)

        for name in VARIANTS:  # warm-up: imports, page cache, git's own caches
            once(name)
        times: dict[str, list[float]] = {name: [] for name in VARIANTS}
        cpu: dict[str, list[float]] = {name: [] for name in VARIANTS}
        order = list(VARIANTS)
        for r in range(rounds):
            for name in order[r % len(order) :] + order[: r % len(order)]:
                wall, used = once(name)
                times[name].append(wall)
                cpu[name].append(used)
            print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    finally:
        app.close_store()
    return {
        name: {
            "median_s": statistics.median(samples),
            "min_s": min(samples),
            "cpu_median_s": statistics.median(cpu[name]),
            "samples_s": samples,
        }
        for name, samples in times.items()
    }


HEADERS = ["routine", "median ms", "best ms", "x parallel (median)", "CPU ms (median)"]


def report(results: dict[str, Any], rounds: int, count: int) -> str:
    base = results["parallel"]
    rows = []
    for name, label in VARIANTS.items():
        r = results[name]
        rows.append(
            [
                label,
                f"{r['median_s'] * 1000:,.0f}",
                f"{r['min_s'] * 1000:,.0f}",
                f"{r['median_s'] / base['median_s']:.2f}",
                f"{r['cpu_median_s'] * 1000:,.0f}",
            ]
        )
    speedup = results["sequential"]["median_s"] / base["median_s"]
    lib, old = results["reads-libgit2"], results["reads-git"]
    reads = old["median_s"] / lib["median_s"]
    reads_cpu = old["cpu_median_s"] / lib["cpu_median_s"]
    cores = os.cpu_count() or 1
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"""## Routines: the morning routine over {count} git repositories

`benchmarks/bench_routines.py` creates {count} real repositories (clones of local bare
remotes; some dirty, some with unpushed commits, some behind) and runs a morning routine of a
`git-status` and a `git-unpushed` step per repository (both read through libgit2 in worker
threads, starting no process) plus `reminders`, `deadline-calc` and
`countdown-calc` over the store, through the engine and the store as `prixfixe run` does
(report kept). The routines differ only in `parallel = true` on the {2 * count} git steps.
{rounds} rounds in rotating order after a warm-up; wall time per run, and CPU time of this
process and the `git` processes it started. The two read-path rows do the read-only steps' work
alone, interleaved with the rest: through libgit2 as the steps now do, and as the git command
lines they ran before, through the real exec gate with git defanged (a config scan before each
command). The floor row runs those git commands by hand, without prixfixe or its defences.
Machine: {cores} CPU cores, load average {load} when it finished (starting `git` processes is
CPU work, so the parallel gain grows with free cores; on a busy machine, re-run before drawing
fine conclusions).

{markdown_table(HEADERS, rows)}

Result: the parallel batch runs the routine {speedup:.2f}x as fast as the same steps run one
after another. Reading through libgit2 instead of defanged git (see docs/security.md) takes
1/{reads:.1f} of the wall time and 1/{reads_cpu:.1f} of the CPU time of the same reads.
"""


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 10")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--repos", type=int, default=REPOS, help=f"repositories (default {REPOS})")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 10
    workdir = Path(tempfile.mkdtemp(prefix="prixfixe-bench-routines-"))
    try:
        results = bench(workdir, rounds, args.repos)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    data = {
        "quick": args.quick,
        "rounds": rounds,
        "repos": args.repos,
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg(),
        "variants": results,
        "speedup_sequential_over_parallel": results["sequential"]["median_s"]
        / results["parallel"]["median_s"],
    }
    markdown = report(results, rounds, args.repos)
    print(markdown)
    if not args.no_write:
        write_json(NAME, data)
        write_section(NAME, markdown)
    return data


if __name__ == "__main__":
    main()
