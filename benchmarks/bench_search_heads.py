"""How far each head of a `tool_search` result can be trusted: on MetaTool's queries, how often
the first hit is right under `Matches` (sure), `Possible matches` (good, not sure) and `No good
match`, for the lexical ranker and the default (fused with wordllama), on the development half
(where `Tuning.sure_match` and `dense_sure_match` were chosen) and the held-out half.

Run: `python benchmarks/bench_search_heads.py` (`--sample N` queries a half, default 2,000;
`--no-write` prints only).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a file: make `benchmarks` and `prixfixe` importable from the checkout.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

from benchmarks._common import SHARED_DATA, markdown_table, write_json, write_section
from benchmarks.bench_search_quality import HALVES, _embedder, load_metatool, split
from prixfixe.search import SearchIndex
from prixfixe.search.index import DEFAULT_TUNING
from prixfixe.search.types import SearchResult

NAME = "search-heads"
HEADS = ("Matches (sure)", "Possible matches", "No good match")
COLUMNS = [
    "ranker",
    "head",
    "share of queries (dev / held-out)",
    "first hit right (dev / held-out)",
]


def head_of(result: SearchResult) -> str:
    """The head `tool_search` gives this result (see `tools/discovery.search_text`)."""
    if result.sure and result.good_match:
        return HEADS[0]
    return HEADS[1] if result.good_match else HEADS[2]


def heads(index: SearchIndex, pairs: Sequence[tuple[str, str]]) -> dict[str, dict[str, float]]:
    """For each head: the share of queries given it and how often their first hit is right."""
    seen = {h: 0 for h in HEADS}
    right = {h: 0 for h in HEADS}
    for query, tool in pairs:
        result = index.search(query, limit=5)
        head = head_of(result)
        seen[head] += 1
        right[head] += bool(result.hits) and result.hits[0].name == tool
    return {
        h: {"share": seen[h] / len(pairs), "right": right[h] / seen[h] if seen[h] else 0.0}
        for h in HEADS
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sample", type=int, default=2000, help="queries a half (seeded)")
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)

    folder = SHARED_DATA / "toolsearch" / "metatool"
    docs, pairs = load_metatool(folder / "plugin_des.json", folder / "queries_dev.csv")
    halves = dict(zip(HALVES, split(pairs, 0), strict=True))
    rng = random.Random(1)
    samples = {h: rng.sample(q, min(args.sample, len(q))) for h, q in halves.items()}
    rankers = {"lexical": None, "default (fused with wordllama)": _embedder()}
    results: dict[str, Any] = {"sample": args.sample, "rankers": {}}
    rows: list[list[Any]] = []
    for label, embedder in rankers.items():
        index = SearchIndex(docs, tuning=DEFAULT_TUNING, embedder=embedder)
        measured = {half: heads(index, samples[half]) for half in HALVES}
        results["rankers"][label] = measured
        for head in HEADS:
            dev, held = measured["dev"][head], measured["held"][head]
            rows.append(
                [
                    label,
                    head,
                    f"{dev['share']:.2f} / {held['share']:.2f}",
                    f"{dev['right']:.2f} / {held['right']:.2f}",
                ]
            )
    markdown = "\n\n".join(
        [
            "## What each `tool_search` head is worth (`bench_search_heads.py`)",
            f"MetaTool, {args.sample:,} sampled queries of each half (seed 1 over the halves "
            "of `bench_search_quality`). `sure_match` (0.7) and `dense_sure_match` (1.6) were "
            "chosen on the development half as the lowest confidence at which 0.8 of first hits "
            "are right; the held-out half was not looked at to choose them.",
            markdown_table(COLUMNS, rows),
        ]
    )
    print(markdown)
    if not args.no_write:
        write_json(NAME, results)
        write_section(NAME, markdown)
    return results


if __name__ == "__main__":
    main()
