"""Store benchmark: puts per second, query latency on an indexed field, and deep pages.

For each store size (10k and 1M `reminder` records; `--quick`: 10k only, fewer samples) it
measures, through prixfixe's store interface (`SQLiteStore`: validation, JSON bodies, history,
the generation counter, signed cursors):

* puts per second, single (one transaction each) and batched (`put_many`, 1,000 a transaction).
  Single puts alternate with the floor's inserts in blocks of 50 (prixfixe first in even
  rounds, sqlite3 first in odd ones), so both sides see the same disk and the same neighbours;
  the figures are medians over the blocks, with the range, and the ratio is taken round by
  round. Each block's CPU time per put (this process, user + system) is recorded beside its
  wall time: wall time follows the disk's fsync latency, CPU time is the store's own cost;
* query latency p50 / p99 on the indexed field `due`: equality (`{"due": D}`, 50 a page) and a
  range sorted on it (`{"due": {">=": D}}`, `order_by="due"`);
* the time to fetch page 1 and page 1,000 of a query sorted on `due`, following cursors.

The floor, measured in the same run on the same rows: plain `sqlite3` on a table with real
columns (`text`, `due`, `recurrence`) and an index on `(due, id)`, same pragmas (WAL,
synchronous FULL): inserts one per transaction and 1,000 per transaction, the same selects, and
keyset and OFFSET paging. Timings never appear in the test suite; read the ratios.

Run from the repository root: `python -m benchmarks.bench_store [--quick] [--no-write]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

from benchmarks._common import markdown_table, spread_of, timed_cpu, write_json, write_section
from prixfixe.store.sqlite import SQLiteStore
from prixfixe.store.tools import BUILTIN_KINDS

KINDS = {k.name: replace(k, owner="prixfixe.default_plugins.store") for k in BUILTIN_KINDS}
BATCH = 1000
SINGLE_BLOCK = 50  # single puts per timed block; the two sides alternate block by block
DAYS = 1096  # due dates spread over three years: ~9 records a day at 10k, ~900 at 1M
START = dt.date(2026, 1, 1)
RECURRENCE = ("daily", "weekly", None, None, "monthly")


def record(i: int) -> dict[str, Any]:
    return {
        "text": f"reminder {i}: call about invoice {i * 7 % 1000}",
        "due": (START + dt.timedelta(days=(i * 7919) % DAYS)).isoformat(),
        "recurrence": RECURRENCE[i % len(RECURRENCE)],
    }


def chunks(start: int, stop: int) -> Iterator[list[dict[str, Any]]]:
    for lo in range(start, stop, BATCH):
        yield [record(i) for i in range(lo, min(lo + BATCH, stop))]


def sample_days(count: int) -> list[str]:
    return [(START + dt.timedelta(days=(i * 613) % DAYS)).isoformat() for i in range(count)]


# -- the floor: plain sqlite3 ------------------------------------------------------------------


def plain_open(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS plain (id INTEGER PRIMARY KEY, text TEXT NOT NULL,"
        " due TEXT NOT NULL, recurrence TEXT)"
    )
    conn.execute("CREATE INDEX IF NOT EXISTS plain_due ON plain (due, id)")
    return conn


def plain_rows(batch: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["text"], r["due"], r["recurrence"]) for r in batch]


PLAIN_INSERT = "INSERT INTO plain (text, due, recurrence) VALUES (?, ?, ?)"
PLAIN_COLUMNS = "id, text, due, recurrence"


# -- measuring ----------------------------------------------------------------------------------


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call takes."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def latencies(fn: Callable[[str], object], days: Sequence[str]) -> dict[str, float]:
    for day in days[:10]:  # warm the caches the same way for both sides
        fn(day)
    ms = sorted(timed(partial(fn, day)) * 1000 for day in days)
    return {
        "p50_ms": round(statistics.median(ms), 3),
        "p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 3),
    }


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()
    return round(statistics.median(timed(fn) * 1000 for _ in range(repeat)), 3)


def bench_size(workdir: Path, size: int, *, singles: int, samples: int) -> dict[str, Any]:
    store_dir = workdir / f"prixfixe-{size}"
    plain_path = workdir / f"plain-{size}.sqlite3"
    store = SQLiteStore.open(store_dir / "store.sqlite3", KINDS)
    plain = plain_open(plain_path)
    out: dict[str, Any] = {"records": size}
    try:
        # Batched puts: the bulk load itself, 1,000 records a transaction.
        t_store = t_plain = 0.0
        for batch in chunks(0, size):
            t_store += timed(partial(store.put_many, "reminder", batch))
            rows = plain_rows(batch)

            def plain_batch(rows: list[tuple[Any, ...]] = rows) -> None:
                plain.execute("BEGIN")
                plain.executemany(PLAIN_INSERT, rows)
                plain.execute("COMMIT")

            t_plain += timed(plain_batch)
        out["batched_puts_per_s"] = round(size / t_store)
        out["plain_batched_inserts_per_s"] = round(size / t_plain)

        out.update(bench_singles(store, plain, size, singles))

        days = sample_days(samples)
        out["query_equality"] = latencies(
            lambda d: store.query("reminder", where={"due": d}, limit=50), days
        )
        out["plain_equality"] = latencies(
            lambda d: plain.execute(
                f"SELECT {PLAIN_COLUMNS} FROM plain WHERE due = ? ORDER BY id LIMIT 50", (d,)
            ).fetchall(),
            days,
        )
        out["query_range_sorted"] = latencies(
            lambda d: store.query("reminder", where={"due": {">=": d}}, order_by="due", limit=50),
            days,
        )
        out["plain_range_sorted"] = latencies(
            lambda d: plain.execute(
                f"SELECT {PLAIN_COLUMNS} FROM plain WHERE due >= ? ORDER BY due, id LIMIT 50",
                (d,),
            ).fetchall(),
            days,
        )
        out["plan_equality"] = store.explain("reminder", where={"due": days[0]})
        out.update(bench_pages(store, plain, size))
        out["store_file_mb"] = round(sum(p.stat().st_size for p in store_dir.iterdir()) / 1e6, 1)
        out["plain_file_mb"] = round(
            sum(p.stat().st_size for p in workdir.glob(f"plain-{size}.sqlite3*")) / 1e6, 1
        )
    finally:
        store.close()
        plain.close()
    return out


def bench_singles(
    store: SQLiteStore, plain: sqlite3.Connection, size: int, singles: int
) -> dict[str, Any]:
    """Single puts into the loaded store, one transaction each, interleaved with the floor's
    single inserts in blocks of `SINGLE_BLOCK`: per block a rate and CPU time per put, per
    round (one block each side) the ratios."""
    rounds = max(1, singles // SINGLE_BLOCK)
    rate: dict[str, list[float]] = {"store": [], "plain": []}
    cpu_us: dict[str, list[float]] = {"store": [], "plain": []}
    for n in range(rounds):
        lo = size + n * SINGLE_BLOCK
        block = [record(i) for i in range(lo, lo + SINGLE_BLOCK)]
        rows = plain_rows(block)

        def puts(block: list[dict[str, Any]] = block) -> None:
            for r in block:
                store.put("reminder", r)

        def inserts(rows: list[tuple[Any, ...]] = rows) -> None:
            for row in rows:  # autocommit: one transaction each, as `store.put`
                plain.execute(PLAIN_INSERT, row)

        sides = (("store", puts), ("plain", inserts))
        for side, fn in sides if n % 2 == 0 else sides[::-1]:
            wall, cpu = timed_cpu(fn)
            rate[side].append(SINGLE_BLOCK / wall)
            cpu_us[side].append(cpu / SINGLE_BLOCK * 1e6)
    rate_ratio = [a / b for a, b in zip(rate["store"], rate["plain"], strict=True)]
    cpu_ratio = [a / b for a, b in zip(cpu_us["store"], cpu_us["plain"], strict=True) if b]
    return {
        "single_rounds": rounds,
        "single_block": SINGLE_BLOCK,
        "single_puts_per_s": spread_of(rate["store"]),
        "plain_single_inserts_per_s": spread_of(rate["plain"]),
        "single_vs_floor": spread_of(rate_ratio, 3),
        "single_cpu_us_per_put": spread_of(cpu_us["store"], 1),
        "plain_single_cpu_us_per_insert": spread_of(cpu_us["plain"], 1),
        "single_cpu_vs_floor": spread_of(cpu_ratio, 3) if cpu_ratio else None,
    }


def bench_pages(store: SQLiteStore, plain: sqlite3.Connection, size: int) -> dict[str, Any]:
    """Page 1 and page 1,000 of everything sorted on `due` (page size: 50, or less so that
    1,000 pages exist)."""
    page_size = max(1, min(50, size // 1000))
    target = 1000
    cursor: str | None = None
    t_walk = time.perf_counter()
    for _ in range(target - 1):
        page = store.query("reminder", order_by="due", limit=page_size, cursor=cursor)
        cursor = page.next_cursor
    walk_s = time.perf_counter() - t_walk
    assert cursor is not None
    deep = cursor
    first_ms = median_ms(lambda: store.query("reminder", order_by="due", limit=page_size), 20)
    deep_ms = median_ms(
        lambda: store.query("reminder", order_by="due", limit=page_size, cursor=deep), 20
    )
    # The floor: keyset on (due, id) after the last row of page 999, and OFFSET.
    last_due, last_id = plain.execute(
        "SELECT due, id FROM plain ORDER BY due, id LIMIT 1 OFFSET ?",
        ((target - 1) * page_size - 1,),
    ).fetchone()
    keyset = f"SELECT {PLAIN_COLUMNS} FROM plain WHERE (due, id) > (?, ?) ORDER BY due, id LIMIT ?"
    first_sql = f"SELECT {PLAIN_COLUMNS} FROM plain ORDER BY due, id LIMIT ?"
    offset_sql = f"SELECT {PLAIN_COLUMNS} FROM plain ORDER BY due, id LIMIT ? OFFSET ?"
    return {
        "page_size": page_size,
        "page_1_ms": first_ms,
        "page_1000_ms": deep_ms,
        "walk_999_pages_s": round(walk_s, 2),
        "plain_keyset_page_1_ms": median_ms(
            lambda: plain.execute(first_sql, (page_size,)).fetchall(), 20
        ),
        "plain_keyset_page_1000_ms": median_ms(
            lambda: plain.execute(keyset, (last_due, last_id, page_size)).fetchall(), 20
        ),
        "plain_offset_page_1000_ms": median_ms(
            lambda: plain.execute(offset_sql, (page_size, (target - 1) * page_size)).fetchall(),
            20,
        ),
        "plan_page_1000": store.explain("reminder", order_by="due", cursor=deep),
    }


# -- reporting -----------------------------------------------------------------------------------


def _n(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _x(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


def _f2(value: float) -> str:
    return f"{value:.2f}"


def _spread(spread: dict[str, float], fmt: Callable[[float], str]) -> str:
    return f"{fmt(spread['median'])} ({fmt(spread['min'])}-{fmt(spread['max'])})"


def report(results: list[dict[str, Any]], quick: bool) -> str:
    singles = markdown_table(
        [
            "records",
            "single puts/s",
            "sqlite3 single inserts/s",
            "x floor, by round",
            "CPU µs a put",
            "sqlite3 CPU µs an insert",
            "CPU x floor, by round",
        ],
        [
            [
                f"{r['records']:,}",
                _spread(r["single_puts_per_s"], _n),
                _spread(r["plain_single_inserts_per_s"], _n),
                _spread(r["single_vs_floor"], _f2),
                _spread(r["single_cpu_us_per_put"], _n),
                _spread(r["plain_single_cpu_us_per_insert"], _n),
                _spread(r["single_cpu_vs_floor"], _f2) if r["single_cpu_vs_floor"] else "-",
            ]
            for r in results
        ],
    )
    batched = markdown_table(
        [
            "records",
            f"batched puts/s ({BATCH:,} a transaction)",
            "sqlite3 batched inserts/s",
            "x floor",
        ],
        [
            [
                f"{r['records']:,}",
                _n(r["batched_puts_per_s"]),
                _n(r["plain_batched_inserts_per_s"]),
                _x(r["batched_puts_per_s"], r["plain_batched_inserts_per_s"]),
            ]
            for r in results
        ],
    )
    query_rows = []
    for r in results:
        for name, label in (("equality", "`due` = D"), ("range_sorted", "`due` >= D, by due")):
            mine, floor = r[f"query_{name}"], r[f"plain_{name}"]
            query_rows.append(
                [
                    f"{r['records']:,}",
                    label,
                    mine["p50_ms"],
                    mine["p99_ms"],
                    floor["p50_ms"],
                    floor["p99_ms"],
                    _x(mine["p50_ms"], floor["p50_ms"]),
                ]
            )
    queries = markdown_table(
        [
            "records",
            "query (50 a page)",
            "p50 ms",
            "p99 ms",
            "sqlite3 p50",
            "sqlite3 p99",
            "x floor (p50)",
        ],
        query_rows,
    )
    pages = markdown_table(
        [
            "records",
            "page size",
            "page 1 ms",
            "page 1,000 ms",
            "sqlite3 keyset page 1 / 1,000 ms",
            "sqlite3 OFFSET page 1,000 ms",
        ],
        [
            [
                f"{r['records']:,}",
                r["page_size"],
                r["page_1_ms"],
                r["page_1000_ms"],
                f"{r['plain_keyset_page_1_ms']} / {r['plain_keyset_page_1000_ms']}",
                r["plain_offset_page_1000_ms"],
            ]
            for r in results
        ],
    )
    sizes = " and ".join(f"{r['records']:,}" for r in results)
    plan = "; ".join(results[-1]["plan_equality"])
    return f"""## Store: puts, indexed queries, deep pages

`benchmarks/bench_store.py`{" (`--quick`)" if quick else ""}: `reminder` records through
prixfixe's store interface (validation, JSON body, generation counter, signed cursors) at
{sizes} records, beside plain `sqlite3` on the same rows in the same run (a table with real
columns, an index on `(due, id)`, the same pragmas: WAL, synchronous FULL) as the floor. Due
dates spread over {DAYS:,} days. Latencies are per call in this process (no MCP transport).

Single puts, one transaction each (so each waits for its own fsync), alternate with the floor's
single inserts in blocks of {SINGLE_BLOCK}, {results[0]["single_rounds"]} rounds, the two sides
taking turns to go first. Each figure is the median over the blocks with the range in brackets;
"x floor" is the median of the per-round ratios. The machine has {os.cpu_count()} cores and one
disk shared with whatever else runs, so the wall-clock rates follow the disk's fsync latency
and move a lot from run to run: read the interleaved ratios, and the CPU time per put (this
process's user + system time over the block), which is prixfixe's own cost and steadier.

{singles}

Batched puts, the bulk load itself, alternate with the floor batch by batch; totals:

{batched}

Query latency on the indexed field `due` (plan at {results[-1]["records"]:,}: {plan}):

{queries}

Pages of everything sorted on `due`, following cursors (page 1,000 is reached by walking 999
pages, then fetched again; medians of 20). OFFSET is shown for contrast: it reads and discards
every earlier row.

{pages}
"""


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="10k records only, fewer samples")
    parser.add_argument(
        "--sizes", type=int, nargs="*", default=None, help="store sizes (default 10k and 1M)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([10_000] if args.quick else [10_000, 1_000_000])
    singles = 300 if args.quick else 2000
    samples = 100 if args.quick else 400
    workdir = Path(tempfile.mkdtemp(prefix="prixfixe-bench-store-"))
    results: list[dict[str, Any]] = []
    try:
        for size in sizes:
            t0 = time.perf_counter()
            results.append(bench_size(workdir, size, singles=singles, samples=samples))
            print(f"{size:,} records done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    data = {"quick": args.quick, "batch": BATCH, "days": DAYS, "sizes": results}
    markdown = report(results, args.quick)
    print(markdown)
    if not args.no_write:
        write_json("store", data)
        write_section("store", markdown)
    return data


if __name__ == "__main__":
    main()
