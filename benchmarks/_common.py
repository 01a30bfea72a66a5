"""Shared plumbing for the benchmarks: where results go and how they are recorded.

Each benchmark prints a table, writes its raw figures as JSON under `benchmarks/results/`,
and replaces its own section of `docs/benchmarks.md` (between `<!-- bench:NAME -->` markers),
so benchmarks can be re-run one at a time without clobbering each other's figures.
"""

from __future__ import annotations

import json
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "benchmarks" / "results"
DOC = ROOT / "docs" / "benchmarks.md"
SHARED_DATA = ROOT.parent / "shared" / "data"

_DOC_HEADER = """# Benchmarks

Every figure here was produced by a script in `benchmarks/` and is rewritten when that script
runs. Each benchmark measures prixfixe beside a baseline in the same run, so the ratio is the
figure to read; absolute numbers depend on the machine (recorded under each section).

"""


def machine_line() -> str:
    """One line naming the machine and interpreter a result came from."""
    return (
        f"{platform.system()} {platform.machine()}, Python {sys.version.split()[0]}, "
        f"{datetime.now(UTC).strftime('%Y-%m-%d')}"
    )


def write_json(name: str, data: dict[str, Any]) -> Path:
    """Write one benchmark's raw figures to `benchmarks/results/NAME.json`."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def write_section(name: str, markdown: str, doc: Path = DOC) -> None:
    """Replace (or append) the `name` section of docs/benchmarks.md."""
    begin, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{begin}\n{markdown.strip()}\n\n_Measured on {machine_line()}._\n{end}"
    text = doc.read_text(encoding="utf-8") if doc.exists() else _DOC_HEADER
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _m: block, text)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text, encoding="utf-8")


def publish(name: str, results: dict[str, Any], text: str, write: bool = True) -> None:
    """Print a benchmark's report and, unless `write` is false (`--no-write`), keep its raw
    figures (`write_json`) and its section of docs/benchmarks.md (`write_section`)."""
    print(text)
    if write:
        write_json(name, results)
        write_section(name, text)


def markdown_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A GitHub-flavoured markdown table."""
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def prixfixe_command(bench: str) -> str:
    """The `prixfixe` console script next to this interpreter (the venv's), else on PATH."""
    import shutil

    beside = Path(sys.executable).parent / "prixfixe"
    if beside.exists():
        return str(beside)
    found = shutil.which("prixfixe")
    if found is None:
        raise SystemExit(f"{bench}: no `prixfixe` command; install the package first")
    return found


def timed_cpu(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall seconds and this process's CPU seconds one call takes."""
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def spread_of(values: Sequence[float], digits: int = 0) -> dict[str, float]:
    """Median, min and max of `values`, rounded."""
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }
