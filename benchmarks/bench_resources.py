"""Resources: the capability index's token cost, `resources/list` paging at 100k resources, and
the index rebuild time.

1. **Index size.** For 10, 100 and 1,000 registered synthetic tools (the seeded catalogue of
   `bench_tools_list.py`, spread over 20 facets), the summary and full capability index are read
   through a real in-memory `mcp.Client` and measured in cl100k_base and o200k_base tokens and
   bytes. Baseline in the same run: the naive `tools/list` of the same tools (every tool's wire
   entry as compact JSON), i.e. what listing everything costs an agent's context.
2. **Paging.** 100,000 static resources are registered; `resources/list` is called through the
   client for the first page and for the last page (cursor from walking every page once), 100
   entries a page. Baseline in the same run: a bare SDK low-level `Server` with the usual
   hand-written handler, which builds the full `Resource` list on every request and slices it
   at an integer offset cursor, fetched the same way.
3. **Rebuild.** With 1,000 tools registered, the time to rebuild the summary and full index
   after a registry change (a plugin registers one more tool), the time to measure the stats
   (tokenizing both), and a cached read. Baseline: serializing the naive `tools/list` of the
   same tools once.

Run from the repository root as `python benchmarks/bench_resources.py` or
`python -m benchmarks.bench_resources` (`--quick`: 10 and 100 tools, 20k resources, fewer
samples; `--no-write` prints only).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a file: make `benchmarks` and `prixfixe` importable from the checkout.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

import anyio
import mcp_types as types
from mcp import Client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from benchmarks._common import markdown_table, write_json, write_section
from benchmarks.bench_tools_list import catalogue_plugin, synthetic_catalogue
from prixfixe import Resource, ResourceContext, ResourceTemplate, Tool, hookimpl
from prixfixe.app import App
from prixfixe.mcp.server import build_server
from prixfixe.system.capability_index import INDEX_URIS
from prixfixe.tokens import token_counts

NAME = "resources"
DEFAULT_TOOLS = (10, 100, 1000)
QUICK_TOOLS = (10, 100)
PAGE_SIZE = 100


def _app(plugins: Sequence[object], home: Path, config: str = "") -> App:
    cwd = Path(tempfile.mkdtemp(prefix="prixfixe-bench-res-"))
    env = {"PRIXFIXE_HOME": str(home)}
    if config:
        (cwd / "prixfixe.toml").write_text(config, encoding="utf-8")
        env["PRIXFIXE_CONFIG"] = str(cwd / "prixfixe.toml")  # a folder's loads once trusted
    return App.build(env=env, cwd=cwd, extra_plugins=plugins)


def _naive_listing(app: App, owner: str) -> str:
    """The naive `tools/list` of `owner`'s tools: every wire entry, compact JSON."""
    tools = [
        e.wire.model_dump(mode="json", by_alias=True, exclude_none=True)
        for e in app.registry
        if e.tool.owner == owner
    ]
    return json.dumps(tools, separators=(",", ":"), ensure_ascii=False)


def _ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


async def _timed(call: Callable[[], Awaitable[Any]], rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - t0)
    return samples


# -- 1. index size ---------------------------------------------------------------------------


async def index_sizes(count: int, home: Path) -> dict[str, Any]:
    plugin = catalogue_plugin(synthetic_catalogue(count))
    app = _app([plugin], home)
    async with Client(build_server(app), mode="legacy") as client:
        texts = {}
        for variant in ("summary", "full"):
            result = await client.read_resource(INDEX_URIS[variant])
            texts[variant] = result.contents[0].text  # type: ignore[union-attr]
    naive = _naive_listing(app, getattr(plugin, "__name__", ""))
    row: dict[str, Any] = {"tools": count}
    for label, text in (("summary", texts["summary"]), ("full", texts["full"]), ("naive", naive)):
        row[label] = {"bytes": len(text.encode()), **token_counts(text)}
    return row


# -- 2. paging -------------------------------------------------------------------------------


def _static_plugin(count: int) -> object:
    def read(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
        return ctx.uri

    resources = [
        Resource(
            uri=f"bench://docs/{i:06d}",
            name=f"doc-{i}",
            title=f"Document {i}",
            mime_type="text/plain",
            size=20,
            reader=read,
        )
        for i in range(count)
    ]

    class Statics:
        __name__ = f"bench_statics_{count}"

        @hookimpl
        def register_resources(
            self, register: Callable[[Resource | ResourceTemplate], None]
        ) -> None:
            for r in resources:
                register(r)

    return Statics()


def naive_server(declared: Sequence[Resource]) -> Server[Any]:
    """The common hand-written handler: build every entry, slice at an offset cursor."""

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        everything = [
            types.Resource(
                uri=r.uri, name=r.name, title=r.title, mime_type=r.mime_type, size=r.size
            )
            for r in declared
        ]
        start = int(params.cursor) if params and params.cursor else 0
        stop = start + PAGE_SIZE
        more = stop < len(everything)
        return types.ListResourcesResult(
            resources=everything[start:stop], next_cursor=str(stop) if more else None
        )

    return Server("naive", on_list_resources=list_resources)


async def _walk(client: Client) -> tuple[str | None, int, float]:
    """Follow every cursor once: the cursor of the last full page, the page count, the time."""
    cursor: str | None = None
    last_full: str | None = None
    pages = 0
    t0 = time.perf_counter()
    while True:
        page = await client.list_resources(cursor=cursor)
        pages += 1
        if len(page.resources) == PAGE_SIZE:
            last_full = cursor
        if page.next_cursor is None:
            return last_full, pages, time.perf_counter() - t0
        cursor = page.next_cursor


async def _first_and_last(client: Client, last_cursor: str | None, rounds: int) -> dict[str, Any]:
    first: list[float] = []
    last: list[float] = []
    # Interleaved, so drift on a shared machine hits both alike.
    for _ in range(rounds):
        gc.collect()
        first += await _timed(lambda: client.list_resources(), 1)
        gc.collect()
        last += await _timed(lambda: client.list_resources(cursor=last_cursor), 1)
    return {"first_page_ms": _ms(first), "last_page_ms": _ms(last)}


async def paging(count: int, rounds: int, home: Path) -> dict[str, Any]:
    plugin = _static_plugin(count)
    app = _app([plugin], home, config=f"[resources]\npage_size = {PAGE_SIZE}\n")
    async with Client(build_server(app), mode="legacy") as client:
        last_cursor, pages, walk = await _walk(client)
        ours = await _first_and_last(client, last_cursor, rounds)
    ours.update(pages=pages, walk_s=round(walk, 3))
    declared = [r for r in app.registry.resources.values() if r.uri.startswith("bench://")]
    # The naive server rebuilds everything per call, so walking it costs pages x a full build:
    # its last-page cursor is the offset it would hand out, and it gets fewer rounds.
    naive_last = str((len(declared) - 1) // PAGE_SIZE * PAGE_SIZE)
    naive_rounds = max(5, rounds // 10)
    async with Client(naive_server(declared), mode="legacy") as client:
        naive = await _first_and_last(client, naive_last, naive_rounds)
    naive["rounds"] = naive_rounds
    naive["walk_s"] = round(naive["first_page_ms"] * len(declared) / PAGE_SIZE / 1000, 1)
    return {"resources": count, "page_size": PAGE_SIZE, "prixfixe": ours, "naive": naive}


# -- 3. rebuild ------------------------------------------------------------------------------


def _extra_tool(i: int) -> Tool:
    from benchmarks.bench_tools_list import _unused_handler, input_model

    spec = synthetic_catalogue(1, seed=i + 1)[0]
    return Tool(
        name=f"extra_{i}_{spec.name}",
        title=spec.title,
        description=spec.description,
        input_model=input_model(spec),
        handler=_unused_handler,
        mutates=spec.mutates,
        facet=spec.facet,
    )


def rebuild(count: int, rounds: int, home: Path) -> dict[str, Any]:
    plugin = catalogue_plugin(synthetic_catalogue(count))
    app = _app([plugin], home)
    index = app.capability_index
    index.text("full")  # warm: schemas are derived once per tool, as in a running server
    builds, stats, cached, naive = [], [], [], []
    for i in range(rounds):
        app.registry.add_plugin(f"bench_extra_{i}", tools=[_extra_tool(i)])
        t0 = time.perf_counter()
        index.text("summary")
        index.text("full")
        t1 = time.perf_counter()
        index.text("stats")
        t2 = time.perf_counter()
        index.text("summary")
        index.text("full")
        t3 = time.perf_counter()
        _naive_listing(app, getattr(plugin, "__name__", ""))
        t4 = time.perf_counter()
        builds.append(t1 - t0)
        stats.append(t2 - t1)
        cached.append(t3 - t2)
        naive.append(t4 - t3)
    return {
        "tools": count,
        "rounds": rounds,
        "rebuild_summary_full_ms": _ms(builds),
        "stats_ms": _ms(stats),
        "cached_read_ms": round(statistics.median(cached) * 1000, 4),
        "naive_listing_serialize_ms": _ms(naive),
        "builds": index.builds,
    }


# -- report ----------------------------------------------------------------------------------


def report(data: dict[str, Any]) -> str:
    sizes = markdown_table(
        [
            "tools",
            "summary cl100k / o200k",
            "full cl100k / o200k",
            "naive tools/list cl100k / o200k",
            "summary bytes",
            "full bytes",
            "summary / naive (cl100k)",
        ],
        [
            [
                f"{r['tools']:,}",
                f"{r['summary']['cl100k_base']:,} / {r['summary']['o200k_base']:,}",
                f"{r['full']['cl100k_base']:,} / {r['full']['o200k_base']:,}",
                f"{r['naive']['cl100k_base']:,} / {r['naive']['o200k_base']:,}",
                f"{r['summary']['bytes']:,}",
                f"{r['full']['bytes']:,}",
                f"{r['summary']['cl100k_base'] / r['naive']['cl100k_base']:.3f}",
            ]
            for r in data["index"]
        ],
    )
    p = data["paging"]
    ours, naive = p["prixfixe"], p["naive"]
    pages = markdown_table(
        ["server", "first page ms", "last page ms", "last / first", "all pages s"],
        [
            [
                "prixfixe (keyset cursor, sorted URIs)",
                ours["first_page_ms"],
                ours["last_page_ms"],
                f"{ours['last_page_ms'] / ours['first_page_ms']:.2f}",
                ours["walk_s"],
            ],
            [
                "naive (build all, slice at offset)",
                naive["first_page_ms"],
                naive["last_page_ms"],
                f"{naive['last_page_ms'] / naive['first_page_ms']:.2f}",
                naive["walk_s"],
            ],
        ],
    )
    r = data["rebuild"]
    rebuild_table = markdown_table(
        [
            "tools",
            "rebuild summary + full ms",
            "stats (tokenize both) ms",
            "cached read ms",
            "naive tools/list serialize ms",
        ],
        [
            [
                f"{r['tools']:,}",
                r["rebuild_summary_full_ms"],
                r["stats_ms"],
                r["cached_read_ms"],
                r["naive_listing_serialize_ms"],
            ]
        ],
    )
    quick = " (`--quick`)" if data["quick"] else ""
    return f"""## Resources: capability index size, paging, rebuild

`benchmarks/bench_resources.py`{quick}. Token cost of the capability index read through a real
in-memory `mcp.Client` (2025-11-25), with the seeded synthetic catalogue of
`bench_tools_list.py` registered; baseline: the naive `tools/list` of the same tools (compact
wire JSON). The summary is capped (40 verbs, 40 topics, 4 names each, 30 facets), so it grows
far slower than the full index, which carries every schema.

{sizes}

`resources/list` at {p["resources"]:,} registered resources, {p["page_size"]} a page, through
the client (medians of {data["rounds"]} calls, {naive["rounds"]} for the naive server); the last
page's cursor comes from walking every page once (the last page holding a full
{p["page_size"]}). Baseline: a bare SDK server whose handler builds every entry and slices at an
offset (its "all pages" is pages x its first-page time, since walking it takes that long).

{pages}

Index rebuild with {r["tools"]:,} tools after a plugin registers one more (medians of
{r["rounds"]}); the index is never rebuilt on a timer, only on the first read after the
registry or the facet policy changed. Stats (real tokenizers) are measured on first read of
`stats` only.

{rebuild_table}
"""


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer samples")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    tool_counts = QUICK_TOOLS if args.quick else DEFAULT_TOOLS
    resources = 20_000 if args.quick else 100_000
    rounds = 20 if args.quick else 100
    rebuild_tools = 100 if args.quick else 1000
    rebuild_rounds = 3 if args.quick else 10
    home = Path(tempfile.mkdtemp(prefix="prixfixe-bench-res-home-"))

    async def run() -> dict[str, Any]:
        index = [await index_sizes(n, home) for n in tool_counts]
        print(f"index sizes done for {', '.join(map(str, tool_counts))} tools", file=sys.stderr)
        pages = await paging(resources, rounds, home)
        print(f"paging done at {resources:,} resources", file=sys.stderr)
        return {"index": index, "paging": pages}

    data: dict[str, Any] = {"quick": args.quick, "rounds": rounds, **anyio.run(run)}
    data["rebuild"] = rebuild(rebuild_tools, rebuild_rounds, home)
    markdown = report(data)
    print(markdown)
    if not args.no_write:
        write_json(NAME, data)
        write_section(NAME, markdown)
    return data


if __name__ == "__main__":
    main()
