"""The knowledge base: ingest rate, search latency, retrieval quality, and what an agent reads.

Four measurements, each beside a baseline from the same run:

* **Ingest**: chunks a second through `ingest` (a folder, one transaction) and `put_text` (one
  transaction a document) into a real store file, in interleaved rounds against raw FTS5
  inserts of the same chunks into a bare `sqlite3` FTS5 table (same tokenizer, same pragmas:
  WAL, synchronous FULL), with wall and CPU time per round; and `vectors.embed_pending` against
  wordllama embedding the same texts and storing nothing (goal: >= 0.5x raw FTS5).
* **Search latency** at 10,000 and 100,000 chunks: `search.find` keyword and hybrid, queries
  interleaved with the same BM25 query on the bare FTS5 table; p50/p95 wall and CPU time, the
  dense half's parts, and reading the vectors into memory after a change (goal: keyword p50
  <= 20 ms at 100,000).
* **Retrieval quality** on the shared tool-search data read as document collections (one
  markdown document per tool, its queries the questions), keyword and hybrid, beside tool
  search itself (lexical and `[search] semantic`) on the same queries and the same
  development / held-out halves as `bench_search_quality.py`: the same engine, measured on
  tools and on documents.
* **Tokens an agent reads** to answer a question from long documents, through a real
  `mcp.Client`: the search resource's result, then the sections of the hits in order until
  the answer is read (at most three), against reading the whole document that holds it.
* **HTML conversion**: CPU time of `formats.html_to_markdown` on generated files of about
  0.96 MB shaped like the costly ones (deep nesting, a long ordered list) and a flat one,
  beside Beautiful Soup's parse of the same bytes alone, and the file's CPU budget.

Corpora, all from text this machine has, nothing downloaded or generated at random:
docstrings of the standard library and of the packages installed beside prixfixe, parsed with
`ast` (never imported), one markdown document per module and one `##` section per documented
class or function, in a fixed order (a size larger than the distinct text is filled by the
same documents again under `copy-N/`, and says so); and, for tokens, the long topics of the
Python language reference that ship inside the standard library (`pydoc_data.topics`), their
underlined headings turned into markdown headings, with hand-written questions whose answer
is a sentence of the topic.

Run from the repository root: `python benchmarks/bench_knowledge.py` (~6 min; `--quick` ~1 min).
"""

from __future__ import annotations

import argparse
import ast
import functools
import gc
import importlib.util
import itertools
import json
import random
import shutil
import sqlite3
import statistics
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

if __package__ in (None, ""):
    # Run as a file: make `benchmarks` and `prixfixe` importable from the checkout.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

import anyio
import mcp_types as types
from mcp import Client

from benchmarks._common import RESULTS_DIR, markdown_table, write_json, write_section
from benchmarks.bench_search_quality import (
    DEFAULT_LIVEMCP_TASKS,
    DEFAULT_LIVEMCP_TOOLS,
    DEFAULT_METATOOL_CATALOGUE,
    DEFAULT_METATOOL_QUERIES,
    HALVES,
    load_livemcp,
    load_metatool,
    split,
)
from prixfixe.app import App
from prixfixe.knowledge import KNOWLEDGE_OWNER, formats, tables, vectors
from prixfixe.knowledge.chunking import split as split_chunks
from prixfixe.knowledge.ingest import _INDEX as INDEX_STATEMENT
from prixfixe.knowledge.ingest import ingest, put_text
from prixfixe.knowledge.search import SNIPPET_TOKENS, find, match_expression
from prixfixe.leash.fs import FsGate, FsGrant
from prixfixe.mcp.server import build_server
from prixfixe.search import Embedder, SearchDocument, SearchIndex
from prixfixe.search.vocabulary import STOP_WORDS
from prixfixe.store.api import OwnerSlice
from prixfixe.store.sqlite import SQLiteStore
from prixfixe.tokens import count_tokens

NAME = "knowledge"
#: Goals of issue 15.
INGEST_GOAL = 0.5
KEYWORD_P50_GOAL_MS = 20.0


# --- corpora -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Doc:
    path: str
    text: str
    chunks: int


def _module_documents(root: Path) -> Iterator[Doc]:
    """One markdown document per module under `root` that has docstrings: the module's
    docstring under `# module.name`, then `## Qualified.name` and its docstring for every
    documented class, function and method. Tests and IDLE are left out."""
    for file in sorted(root.rglob("*.py")):
        parts = file.relative_to(root).parts
        if "site-packages" in parts or {"test", "tests", "idlelib"} & set(parts):
            continue
        try:
            tree = ast.parse(file.read_bytes())
        except (SyntaxError, ValueError):
            continue
        sections: list[tuple[str, str]] = []

        def visit(node: ast.AST, prefix: str, into: list[tuple[str, str]] = sections) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    name = f"{prefix}{child.name}"
                    doc = ast.get_docstring(child)
                    if doc:
                        into.append((name, doc))
                    if isinstance(child, ast.ClassDef):
                        visit(child, f"{name}.")

        visit(tree, "")
        intro = ast.get_docstring(tree) or ""
        if not sections and not intro:
            continue
        module = ".".join(file.relative_to(root).with_suffix("").parts)
        text = f"# {module}\n\n{intro}\n\n" + "".join(f"## {n}\n\n{d}\n\n" for n, d in sections)
        yield Doc(module.replace(".", "/") + ".md", text, len(split_chunks(text, "markdown")))


_DOCSTRINGS: list[Doc] = []
_PENDING: list[Iterator[Doc]] = []


def docstring_corpus(target: int) -> tuple[list[Doc], int]:
    """Documents holding at least `target` chunks, and how many of those chunks are distinct
    (when the machine's docstrings hold fewer, the same documents again under `copy-N/`).
    Modules are parsed once per run, and only as many as are needed."""
    if not _DOCSTRINGS and not _PENDING:
        paths = sysconfig.get_paths()
        roots = dict.fromkeys([Path(paths["stdlib"]), Path(paths["purelib"])])
        _PENDING.append(itertools.chain.from_iterable(map(_module_documents, roots)))
    held = sum(d.chunks for d in _DOCSTRINGS)
    while _PENDING and held < target:
        doc = next(_PENDING[0], None)
        if doc is None:
            _PENDING.clear()
            break
        _DOCSTRINGS.append(doc)
        held += doc.chunks
    out: list[Doc] = []
    total = copy = 0
    while total < target:
        for doc in _DOCSTRINGS:
            path = doc.path if copy == 0 else f"copy-{copy}/{doc.path}"
            out.append(Doc(path, doc.text, doc.chunks))
            total += doc.chunks
            if total >= target:
                break
        copy += 1
    distinct = sum(d.chunks for d in out if not d.path.startswith("copy-"))
    return out, distinct


_LEVELS = {"*": 1, "=": 2, "-": 3, "~": 4}
#: The Python language reference's long topics (each other long topic repeats part of one).
REFERENCE_TOPICS = (
    "specialnames",
    "compound",
    "types",
    "formatstrings",
    "typesseq",
    "debugger",
    "typesmapping",
    "assignment",
    "comparisons",
    "execmodel",
    "import",
    "string-methods",
    "strings",
    "calls",
    "operator-summary",
)


def reference_markdown(text: str) -> str:
    """A pydoc topic as markdown: an underlined line becomes a heading, by its underline."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line, under = lines[i], lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and len(under) == len(line) and len(set(under)) == 1:
            level = _LEVELS.get(under[0])
            if level is not None:
                out.append("#" * level + " " + line.strip())
                i += 2
                continue
        out.append(line)
        i += 1
    return "\n".join(out) + "\n"


def reference_documents() -> list[Doc]:
    from pydoc_data.topics import topics

    docs = []
    for name in REFERENCE_TOPICS:
        text = reference_markdown(topics[name])
        docs.append(Doc(f"{name}.md", text, len(split_chunks(text, "markdown"))))
    return docs


@dataclass(frozen=True)
class Question:
    text: str
    document: str  # the topic whose text answers it
    answer: str  # words of that topic that answer it (compared with whitespace collapsed)


QUESTIONS = (
    Question(
        "what does the else clause of a for loop do",
        "compound",
        'the suite in the "else" clause, if present, is executed, and the loop terminates',
    ),
    Question(
        "what happens when __exit__ returns true in a with statement",
        "compound",
        "exception is suppressed",
    ),
    Question(
        "when is the code in a case block with an if condition selected",
        "compound",
        'If the "guard" condition evaluates as true, the case block is selected',
    ),
    Question(
        "does a return inside finally lose the exception",
        "compound",
        "the saved exception is discarded",
    ),
    Question(
        "why does a mutable default argument keep its value between calls",
        "compound",
        "Default parameter values are evaluated from left to right when the function "
        "definition is executed",
    ),
    Question(
        "how do I make instances of my class callable like functions",
        "specialnames",
        'roughly translates to "type(x).__call__(x, arg1, ...)"',
    ),
    Question(
        "how much memory does __slots__ save",
        "specialnames",
        'The space saved over using "__dict__" can be significant',
    ),
    Question(
        "run code whenever my class is subclassed",
        "specialnames",
        "This method is called whenever the containing class is subclassed",
    ),
    Question(
        "what decides if my object counts as true or false",
        "specialnames",
        "Called to implement truth value testing",
    ),
    Question(
        "return a default for missing keys in a dict subclass",
        "typesmapping",
        'If a subclass of dict defines a method "__missing__()"',
    ),
    Question(
        "do dictionary views see later changes to the dict",
        "typesmapping",
        "They provide a dynamic view on the dictionary\N{RIGHT SINGLE QUOTATION MARK}s entries",
    ),
    Question("what attributes does a code object have", "types", "co_argcount"),
    Question(
        "pad a number with leading zeros in a format string",
        "formatstrings",
        "zero-padding",
    ),
    Question(
        "print a large number with commas between the thousands",
        "formatstrings",
        "thousands separator",
    ),
    Question(
        "how does range count down with a negative step",
        "typesseq",
        "For a negative *step*, the contents of the range are still determined",
    ),
    Question(
        "stop in the debugger only when a variable has some value",
        "debugger",
        "b(reak) [([filename:]lineno | function) [, condition]]",
    ),
    Question("is x += 1 done in place", "assignment", "in-place"),
    Question(
        "how does the in operator test membership for my own class",
        "comparisons",
        "__contains__",
    ),
    Question(
        "assign to a variable of the enclosing function from a nested function",
        "execmodel",
        'The "nonlocal" statement causes corresponding names to refer to previously bound '
        "variables in the nearest enclosing function scope",
    ),
    Question("enable a feature from a future python version", "import", "__future__"),
    Question(
        "a string literal where backslashes are not escapes",
        "strings",
        "such strings are called *raw strings*",
    ),
    Question("which operator binds more tightly, and or or", "operator-summary", "Boolean OR"),
    Question("split a string into words on whitespace", "string-methods", "str.split(sep=None"),
    Question(
        "where do extra keyword arguments go in a call",
        "calls",
        '"**identifier" is present; in this case, that formal parameter receives a dictionary',
    ),
)


# --- stores --------------------------------------------------------------------------------


def open_knowledge(path: Path) -> tuple[SQLiteStore, OwnerSlice]:
    store = SQLiteStore.open(path, {}, {KNOWLEDGE_OWNER: tables.MIGRATIONS})
    return store, store.slice(KNOWLEDGE_OWNER)


def open_raw(path: Path) -> sqlite3.Connection:
    """The floor: a bare FTS5 table holding the chunks' text itself, the same tokenizer, the
    same pragmas as the store."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5(heading, body, "
        "tokenize='porter unicode61')"
    )
    return conn


def raw_rows(docs: Sequence[Doc]) -> list[list[tuple[str, str]]]:
    return [[(c.heading, c.body) for c in split_chunks(d.text, "markdown")] for d in docs]


def raw_insert(conn: sqlite3.Connection, rows: Sequence[Sequence[tuple[str, str]]]) -> None:
    """The chunks of `rows` (a list per transaction) inserted, one transaction per list."""
    for batch in rows:
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO chunks (heading, body) VALUES (?, ?)", batch)
        conn.execute("COMMIT")


RAW_SEARCH = (
    "SELECT rowid, heading, snippet(chunks, 1, '**', '**', '…', "
    f"{SNIPPET_TOKENS}), bm25(chunks, 2.0, 1.0) AS score FROM chunks WHERE chunks MATCH ? "
    "ORDER BY score LIMIT ?"
)


def write_files(folder: Path, docs: Sequence[Doc]) -> None:
    for doc in docs:
        file = folder / doc.path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(doc.text, encoding="utf-8")


def _embedder() -> Embedder | None:
    if importlib.util.find_spec("wordllama") is None:
        return None
    from prixfixe.search.semantic import shared_wordllama

    return shared_wordllama()


# --- measuring helpers ---------------------------------------------------------------------


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall s, CPU s of this process) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def spread(values: Sequence[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


# --- 1. ingest -----------------------------------------------------------------------------


def bench_ingest(
    work: Path, docs: Sequence[Doc], rounds: int, embedder: Embedder | None
) -> dict[str, Any]:
    """Both write paths, each in rounds that alternate prixfixe and the floor on the same
    documents, the two taking turns to go first; a round's ratio is the floor's time over
    prixfixe's (the chunks/s ratio)."""
    groups = [list(docs[r::rounds]) for r in range(rounds)]
    out: dict[str, Any] = {"documents": len(docs), "chunks": sum(d.chunks for d in docs)}
    for mode in ("folder", "put_text"):
        store, kb = open_knowledge(work / f"ingest-{mode}" / "store.sqlite3")
        raw = open_raw(work / f"ingest-{mode}" / "raw.sqlite3")
        per_round = [_ingest_round(work, mode, r, group, kb, raw) for r, group in enumerate(groups)]
        total = sum(p["chunks"] for p in per_round)
        ours_s = sum(p["chunks"] / p["ours_per_s"] for p in per_round)
        floor_s = sum(p["chunks"] / p["floor_per_s"] for p in per_round)
        out[mode] = {
            "rounds": per_round,
            "ours_per_s": total / ours_s,
            "floor_per_s": total / floor_s,
            "ratio": spread([p["ratio"] for p in per_round]),
            "ours_cpu_us": statistics.median(p["ours_cpu_us"] for p in per_round),
            "floor_cpu_us": statistics.median(p["floor_cpu_us"] for p in per_round),
            "cpu_ratio": spread([p["cpu_ratio"] for p in per_round]),
        }
        if mode == "folder" and embedder is not None:
            out["embedding"] = bench_embedding(kb, embedder)
        if mode == "folder":
            out["statements"] = ingest_statements(work, docs)
        raw.close()
        store.close()
    return out


def _ingest_round(
    work: Path,
    mode: str,
    r: int,
    group: list[Doc],
    kb: OwnerSlice,
    raw: sqlite3.Connection,
) -> dict[str, float]:
    chunks = sum(d.chunks for d in group)
    rows = raw_rows(group)
    collection = f"r{r}"
    if mode == "folder":
        folder = work / "files" / collection
        write_files(folder, group)
        gate = FsGate(FsGrant((folder,), (), "bench"))
        everything = [[row for batch in rows for row in batch]]

        def ours() -> None:
            ingest(kb, gate, folder, collection)

        def floor() -> None:
            raw_insert(raw, everything)

    else:

        def ours() -> None:
            for doc in group:
                put_text(kb, collection, doc.path, doc.text)

        def floor() -> None:
            raw_insert(raw, rows)

    gc.collect()
    if r % 2:
        f_wall, f_cpu = timed(floor)
        o_wall, o_cpu = timed(ours)
    else:
        o_wall, o_cpu = timed(ours)
        f_wall, f_cpu = timed(floor)
    return {
        "chunks": chunks,
        "ours_per_s": chunks / o_wall,
        "floor_per_s": chunks / f_wall,
        "ratio": f_wall / o_wall,
        "ours_cpu_us": o_cpu / chunks * 1e6,
        "floor_cpu_us": f_cpu / chunks * 1e6,
        "cpu_ratio": f_cpu / o_cpu if o_cpu else 0.0,
    }


def ingest_statements(work: Path, docs: Sequence[Doc]) -> dict[str, float]:
    """Where ingest's SQLite time goes (a diagnosis, no baseline): the same chunks written into
    the knowledge tables' own schema (their migrations, run by plain `sqlite3`) in one
    transaction, one INSERT a chunk as `ingest` writes them: then indexed as `ingest` indexes
    them, by its one statement at the end of the transaction; indexed one by one, by the
    insert trigger of migration 0001 put back (how ingest wrote before 0003 dropped it); and
    not indexed at all. CPU µs a chunk."""
    rows = [[(c.heading, c.body) for c in split_chunks(d.text, "markdown")] for d in docs]
    count = sum(len(r) for r in rows)
    statements = [s for m in tables.MIGRATIONS for s in m.statements]
    (trigger,) = [s for s in tables.MIGRATIONS[0].statements if "chunks_ai" in s]
    generation = 1

    def fresh(name: str) -> sqlite3.Connection:
        conn = sqlite3.connect(work / f"statements-{name}.sqlite3", isolation_level=None)
        for pragma in ("journal_mode = WAL", "synchronous = FULL", "foreign_keys = ON"):
            conn.execute(f"PRAGMA {pragma}")
        for sql in statements:
            conn.execute(sql.replace("{prefix}", "k_"))
        conn.execute("INSERT INTO k_collections (name, created_gen) VALUES ('c', 1)")
        return conn

    def write(conn: sqlite3.Connection, index: bool) -> None:
        conn.execute("BEGIN")
        for n, chunks in enumerate(rows):
            (doc,) = conn.execute(
                "INSERT INTO k_documents (collection, path, root, title, format, hash, bytes, "
                "gen) VALUES (1, ?, '', '', 'markdown', '', 0, ?) RETURNING id",
                (str(n), generation),
            ).fetchone()
            for seq, (heading, body) in enumerate(chunks):
                conn.execute(
                    "INSERT INTO k_chunks (document, seq, heading, body) VALUES (?, ?, ?, ?)",
                    (doc, seq, heading, body),
                )
        if index:
            conn.execute(INDEX_STATEMENT.replace("{prefix}", "k_"), {"generation": generation})
        conn.execute("COMMIT")

    out: dict[str, float] = {}
    for name, index, per_row in (
        ("insert_a_chunk", True, False),
        ("insert_a_chunk_trigger", False, True),
        ("insert_a_chunk_no_fts", False, False),
    ):
        conn = fresh(name)
        if per_row:
            conn.execute(trigger.replace("{prefix}", "k_"))
        _, cpu = timed(functools.partial(write, conn, index))
        out[name] = cpu / count * 1e6
        conn.close()
    return out


def bench_embedding(kb: OwnerSlice, embedder: Embedder) -> dict[str, Any]:
    """`embed_pending` over every chunk of `kb` against wordllama embedding the same texts
    in batches of the same size and keeping nothing (the floor)."""
    rows = kb.query(
        "SELECT d.title, k.heading, k.body FROM {prefix}chunks k "
        "JOIN {prefix}documents d ON d.id = k.document ORDER BY k.id"
    )
    texts = [vectors.embed_text(t, h, b) for t, h, b in rows]

    def floor() -> None:
        for start in range(0, len(texts), vectors.BATCH):
            embedder.embed(texts[start : start + vectors.BATCH])

    # The floor before and after (its faster run counts), so warming up favours neither.
    f_wall, f_cpu = timed(floor)
    written: list[int] = []
    o_wall, o_cpu = timed(lambda: written.append(vectors.embed_pending(kb, embedder)))
    again_wall, again_cpu = timed(floor)
    f_wall, f_cpu = min(f_wall, again_wall), min(f_cpu, again_cpu)
    nothing_wall, _ = timed(lambda: vectors.embed_pending(kb, embedder))
    return {
        "chunks": len(texts),
        "written": written[0],
        "ours_per_s": len(texts) / o_wall,
        "floor_per_s": len(texts) / f_wall,
        "ratio": f_wall / o_wall,
        "cpu_ratio": f_cpu / o_cpu if o_cpu else 0.0,
        "nothing_pending_ms": nothing_wall * 1000,
    }


# --- 2. search latency ---------------------------------------------------------------------


def latency_queries(docs: Sequence[Doc], count: int, seed: int) -> list[str]:
    """First lines of seeded-sampled sections: questions in the corpus's own words."""
    rng = random.Random(seed)
    lines: list[str] = []
    for doc in rng.sample(list(docs), min(len(docs), count * 4)):
        for chunk in split_chunks(doc.text, "markdown")[1:2]:
            body = [ln.strip() for ln in chunk.body.splitlines()[1:] if ln.strip()]
            if body and len(body[0].split()) >= 3 and any(c.isalpha() for c in body[0]):
                lines.append(body[0][:80])
    return lines[:count]


def keywords_only(query: str) -> str:
    words = [
        w for w in query.replace("_", " ").split() if w.lower().strip(".,:;()'\"") not in STOP_WORDS
    ]
    return " ".join(words) or query


def bench_search(
    work: Path, size: int, embedder: Embedder | None, queries: int, seed: int
) -> dict[str, Any]:
    docs, distinct = docstring_corpus(size)
    folder = work / f"corpus-{size}"
    write_files(folder, docs)
    store, kb = open_knowledge(work / f"search-{size}" / "store.sqlite3")
    raw = open_raw(work / f"search-{size}" / "raw.sqlite3")
    # One collection per copy of the corpus (`copy-N/`): an ingest reads a folder of at most
    # 10,000 files.
    copies = sorted({doc.path.split("/", 1)[0] for doc in docs if doc.path.startswith("copy-")})
    originals = [p for p in folder.iterdir() if not p.name.startswith("copy-")]
    (folder / "copy-0").mkdir()
    for path in originals:
        path.rename(folder / "copy-0" / path.name)

    def build_store() -> None:
        for copy in ["copy-0", *copies]:
            part = folder / copy
            ingest(kb, FsGate(FsGrant((part,), (), "bench")), part, f"python-{copy}")

    build = {}
    build["ingest_s"], _ = timed(build_store)
    build["raw_s"], _ = timed(lambda: raw_insert(raw, [[r for b in raw_rows(docs) for r in b]]))
    chunks = vectors.chunk_count(kb)
    shutil.rmtree(folder, ignore_errors=True)
    out: dict[str, Any] = {
        "size": size,
        "chunks": chunks,
        "distinct_chunks": distinct,
        "documents": len(docs),
        "build": build,
    }
    natural = latency_queries(docs, queries, seed)
    kinds = {"natural": natural, "keywords": [keywords_only(q) for q in natural]}
    out["sample_queries"] = {k: v[:5] for k, v in kinds.items()}
    record = None
    if embedder is not None:
        build["embed_s"], _ = timed(lambda: vectors.embed_pending(kb, embedder))
        record = vectors.recorded_model(kb)
        find(kb, "warm up", embedder=embedder)  # vectors read into memory once
    for kind, texts in kinds.items():
        out[kind] = _latencies(kb, raw, texts, embedder)
    if embedder is not None and record is not None:
        out["dense"] = dense_parts(kb, embedder, record, natural[:50])
    raw.close()
    store.close()
    return out


def _latencies(
    kb: OwnerSlice, raw: sqlite3.Connection, texts: Sequence[str], embedder: Embedder | None
) -> dict[str, Any]:
    """Each query on every side in turn (the order rotating query by query): wall and CPU
    time per side."""
    modes: set[str] = set()

    def run_raw(q: str) -> None:
        raw.execute(RAW_SEARCH, (match_expression(q), 10)).fetchall()

    def run_keyword(q: str) -> None:
        find(kb, q, limit=10)

    def run_hybrid(q: str) -> None:
        modes.add(find(kb, q, limit=10, embedder=embedder).mode)

    runners: dict[str, Callable[[str], None]] = {"raw": run_raw, "keyword": run_keyword}
    if embedder is not None:
        runners["hybrid"] = run_hybrid
    wall: dict[str, list[float]] = {side: [] for side in runners}
    cpu: dict[str, list[float]] = {side: [] for side in runners}
    order = list(runners)
    for n, q in enumerate(texts):
        for side in order[n % len(order) :] + order[: n % len(order)]:
            w, c = timed(functools.partial(runners[side], q))
            wall[side].append(w * 1000)
            cpu[side].append(c * 1000)
    entry: dict[str, Any] = {"queries": len(texts)}
    for side in runners:
        entry[side] = {
            "p50_ms": pct(wall[side], 0.5),
            "p95_ms": pct(wall[side], 0.95),
            "cpu_p50_ms": pct(cpu[side], 0.5),
        }
    entry["ratio_keyword_p50"] = entry["keyword"]["p50_ms"] / entry["raw"]["p50_ms"]
    if modes:
        entry["hybrid_modes"] = sorted(modes)
    return entry


def dense_parts(
    kb: OwnerSlice, embedder: Embedder, record: vectors.ModelRecord, queries: Sequence[str]
) -> dict[str, Any]:
    """Where a hybrid search's extra time goes: embedding the query, the cosine of every
    vector (einsum, and BLAS's `@` for comparison), and reading every vector into memory
    after a change."""
    import numpy as np

    from prixfixe.search.semantic import cosines, query_vector

    stored = vectors.chunk_vectors(kb, record)
    qvs = [query_vector(embedder, q) for q in queries]
    embed_ms = [timed(functools.partial(query_vector, embedder, q))[0] * 1000 for q in queries]
    einsum_ms = [timed(functools.partial(cosines, stored.matrix, v))[0] * 1000 for v in qvs]
    matmul_ms = [timed(functools.partial(np.matmul, stored.matrix, v))[0] * 1000 for v in qvs]
    reload_ms = []
    for _ in range(3):
        vectors.forget_loaded()
        reload_ms.append(timed(lambda: vectors.chunk_vectors(kb, record))[0] * 1000)
    nbytes = int(np.asarray(stored.matrix).nbytes)
    ((stored_bytes,),) = kb.query("SELECT SUM(LENGTH(vector)) FROM {prefix}vectors")
    return {
        "vectors": len(stored),
        "embed_query_p50_ms": pct(embed_ms, 0.5),
        "cosines_p50_ms": pct(einsum_ms, 0.5),
        "matmul_p50_ms": pct(matmul_ms, 0.5),
        "read_after_change_ms": statistics.median(reload_ms),
        "matrix_mb": nbytes / 1e6,
        "stored_mb": stored_bytes / 1e6,
    }


# --- 3. retrieval quality ------------------------------------------------------------------


def tool_markdown(doc: SearchDocument) -> str:
    text = f"# {doc.name}\n\n{doc.description}\n"
    if doc.params:
        text += "\nParameters: " + "; ".join(f"{n}: {d}" if d else n for n, d in doc.params)
        text += "\n"
    return text


def tools_collection(kb: OwnerSlice, name: str, docs: Sequence[SearchDocument]) -> dict[str, str]:
    """Each tool as a markdown document of collection `name`; document path -> tool name
    (a name that repeats across servers gets `~2`, `~3` in its path)."""
    paths: dict[str, str] = {}
    for doc in docs:
        path, n = doc.name, 2
        while path in paths:
            path, n = f"{doc.name}~{n}", n + 1
        paths[path] = doc.name
        put_text(kb, name, path, tool_markdown(doc))
    return paths


def metrics(ranked: list[list[str]], wanted: list[list[str]]) -> dict[str, float]:
    """top-1, top-5, recall@10 (share of each question's labels in its first ten), MRR@10
    (of the first label found)."""
    top1 = top5 = 0.0
    recall: list[float] = []
    rr: list[float] = []
    for found, labels in zip(ranked, wanted, strict=True):
        first = found[:10]
        top1 += bool(first) and first[0] in labels
        top5 += any(label in first[:5] for label in labels)
        recall.append(sum(label in first for label in labels) / len(labels))
        rank = next((n for n, name in enumerate(first, 1) if name in labels), None)
        rr.append(1 / rank if rank else 0.0)
    n = len(ranked)
    return {
        "top1": top1 / n,
        "top5": top5 / n,
        "recall10": statistics.fmean(recall),
        "mrr10": statistics.fmean(rr),
    }


def bench_quality(
    work: Path, embedder: Embedder | None, per_half: int, seed: int
) -> dict[str, Any]:
    meta_docs, meta_pairs = load_metatool(DEFAULT_METATOOL_CATALOGUE, DEFAULT_METATOOL_QUERIES)
    live_docs, live_tasks = load_livemcp(DEFAULT_LIVEMCP_TOOLS, DEFAULT_LIVEMCP_TASKS)
    # The halves of bench_search_quality.py (seeds 0 and 1), MetaTool sampled within them.
    meta_halves = dict(zip(HALVES, split(meta_pairs, seed), strict=True))
    live_halves = dict(zip(HALVES, split(live_tasks, seed + 1), strict=True))
    sample = {
        half: random.Random(seed + 3).sample(pairs, min(per_half, len(pairs)))
        for half, pairs in meta_halves.items()
    }
    store, kb = open_knowledge(work / "quality" / "store.sqlite3")
    meta_paths = tools_collection(kb, "metatool", meta_docs)
    live_paths = tools_collection(kb, "livemcp", live_docs)
    if embedder is not None:
        vectors.embed_pending(kb, embedder)

    def knowledge(
        collection: str, paths: dict[str, str], hybrid: bool
    ) -> Callable[[str], list[str]]:
        def rank(query: str) -> list[str]:
            try:
                found = find(
                    kb,
                    query,
                    collection=collection,
                    limit=10,
                    embedder=embedder if hybrid else None,
                )
            except Exception:  # noqa: BLE001 - a query without words finds nothing
                return []
            return list(dict.fromkeys(paths[hit.path] for hit in found.hits))

        return rank

    def tools(index: SearchIndex) -> Callable[[str], list[str]]:
        return lambda query: [hit.name for hit in index.search(query, limit=10).hits]

    methods: dict[str, tuple[Callable[[str], list[str]], Callable[[str], list[str]]]] = {
        "knowledge keyword": (
            knowledge("metatool", meta_paths, False),
            knowledge("livemcp", live_paths, False),
        ),
        "tool search, lexical": (tools(SearchIndex(meta_docs)), tools(SearchIndex(live_docs))),
    }
    if embedder is not None:
        methods["knowledge hybrid"] = (
            knowledge("metatool", meta_paths, True),
            knowledge("livemcp", live_paths, True),
        )
        methods["tool search, `[search] semantic`"] = (
            tools(SearchIndex(meta_docs, embedder=embedder)),
            tools(SearchIndex(live_docs, embedder=embedder)),
        )
    out: dict[str, Any] = {
        "metatool_queries": {h: len(p) for h, p in sample.items()},
        "livemcp_tasks": {h: len(t) for h, t in live_halves.items()},
        "methods": {},
    }
    for label, (meta_rank, live_rank) in methods.items():
        entry: dict[str, Any] = {}
        started = time.perf_counter()
        for half in HALVES:
            pairs = sample[half]
            entry[f"metatool_{half}"] = metrics(
                [meta_rank(q) for q, _ in pairs], [[tool] for _, tool in pairs]
            )
            tasks = live_halves[half]
            entry[f"livemcp_{half}"] = metrics(
                [live_rank(q) for q, _ in tasks], [labels for _, labels in tasks]
            )
        count = sum(len(sample[h]) + len(live_halves[h]) for h in HALVES)
        entry["query_ms"] = (time.perf_counter() - started) / count * 1000
        out["methods"][label] = entry
    store.close()
    return out


# --- 4. tokens an agent reads --------------------------------------------------------------


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def _text(result: types.ReadResourceResult) -> str:
    return "".join(c.text for c in result.contents if isinstance(c, types.TextResourceContents))


MAX_SECTIONS = 3
SEARCH_LIMIT = 5


async def _agent_tokens(
    app: App, docs: Sequence[Doc], ids: dict[str, int], collection: str, hybrid: bool
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    async with Client(build_server(app), mode="legacy") as client:
        for question in QUESTIONS:
            params = {"q": question.text, "collection": collection, "limit": str(SEARCH_LIMIT)}
            uri = "prixfixe://knowledge/search?" + urlencode(params, quote_via=quote)
            search_text = _text(await client.read_resource(uri))
            mode = "hybrid" if hybrid else "keyword"
            # The mode the resource says it ran in: a benchmark of the wrong mode is refused.
            assert f"({mode} search" in search_text.splitlines()[0], search_text.splitlines()[0]
            via = "protocol"
            sections = [
                line.split("section: ", 1)[1].strip()
                for line in search_text.splitlines()
                if line.strip().startswith("section: ")
            ]
            read: list[int] = []
            answered_at = None
            for n, section in enumerate(sections[:MAX_SECTIONS], 1):
                text = _text(await client.read_resource(section))
                read.append(count_tokens(text))
                if _collapsed(question.answer) in _collapsed(text):
                    answered_at = n
                    break
            whole_uri = f"prixfixe://knowledge/{collection}/document/{ids[question.document]}"
            whole = _text(await client.read_resource(whole_uri))
            assert _collapsed(question.answer) in _collapsed(whole), question.text
            rows.append(
                {
                    "question": question.text,
                    "document": question.document,
                    "search_tokens": count_tokens(search_text),
                    "section_tokens": read,
                    "answered_at": answered_at,
                    "whole_document_tokens": count_tokens(whole),
                    "search_via": via,
                }
            )
    ours = sum(r["search_tokens"] + sum(r["section_tokens"]) for r in rows)
    whole_total = sum(r["whole_document_tokens"] for r in rows)
    answered = [r for r in rows if r["answered_at"]]
    return {
        "questions": rows,
        "tokens": ours,
        "whole_document_tokens": whole_total,
        "ratio": ours / whole_total,
        "answered": len(answered),
        "answered_first": sum(1 for r in rows if r["answered_at"] == 1),
        "ratio_answered": (
            sum(r["search_tokens"] + sum(r["section_tokens"]) for r in answered)
            / sum(r["whole_document_tokens"] for r in answered)
            if answered
            else 0.0
        ),
        "search_via": sorted({r["search_via"] for r in rows}),
    }


def bench_tokens(work: Path, embedder: Embedder | None) -> dict[str, Any]:
    docs = reference_documents()
    out: dict[str, Any] = {
        "documents": len(docs),
        "chunks": sum(d.chunks for d in docs),
        "document_tokens": {d.path: count_tokens(d.text) for d in docs},
        "modes": {},
    }
    home = work / "tokens-home"
    modes = [False, True] if embedder is not None else [False]
    ids: dict[str, int] = {}
    for hybrid in modes:
        # One store, served first as configured by default (keyword), then with
        # `[search] semantic = true` (hybrid): each mode is what a server so configured answers.
        config = "[search]\nsemantic = true\n" if hybrid else ""
        (work / "prixfixe.toml").write_text(config, encoding="utf-8")
        app = App.build(
            env={"PRIXFIXE_HOME": str(home), "PRIXFIXE_CONFIG": str(work / "prixfixe.toml")},
            cwd=work,
            extra_plugins=[],
        )
        try:
            kb = app.store.slice(KNOWLEDGE_OWNER)
            if not ids:
                for doc in docs:
                    put_text(kb, "python-reference", doc.path, doc.text)
                ids = {
                    path.removesuffix(".md"): int(doc_id)
                    for doc_id, path in kb.query("SELECT id, path FROM {prefix}documents")
                }
            if hybrid and embedder is not None:
                vectors.embed_pending(kb, embedder)
            key = "hybrid" if hybrid else "keyword"
            out["modes"][key] = anyio.run(_agent_tokens, app, docs, ids, "python-reference", hybrid)
        finally:
            app.close_store()
    return out


# --- report --------------------------------------------------------------------------------


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def _x(value: float) -> str:
    return f"{value:.2f}x"


def _range(s: dict[str, float]) -> str:
    return f"{s['median']:.2f}x ({s['min']:.2f}-{s['max']:.2f})"


def report(data: dict[str, Any]) -> str:
    ing = data["ingest"]
    parts = [
        "## Knowledge base (`bench_knowledge.py`)",
        "",
        "`benchmarks/bench_knowledge.py`: the knowledge base's ingest, search latency, retrieval "
        "quality and the tokens an agent reads, each beside a baseline measured in the same run. "
        "Corpus for ingest and latency: docstrings of the standard library and of the packages "
        "installed beside prixfixe, parsed with `ast` (never imported), one markdown document "
        "per module and one `##` section per documented class or function, in a fixed order. "
        f"Embeddings: {data['embedder'] or 'none (the semantic extra is not installed)'}.",
        "",
        "### Ingest",
        "",
        f"{_n(ing['chunks'])} chunks in {_n(ing['documents'])} documents, cut in "
        f"{len(ing['folder']['rounds'])} rounds that alternate prixfixe and the floor (taking "
        "turns to go first): **raw FTS5** inserts the same chunks' heading and body into a bare "
        "`sqlite3` FTS5 table (same tokenizer, WAL, synchronous FULL) in the same transactions. "
        "The ratio is the floor's time over prixfixe's, per round (median, range); CPU time is "
        f"this process's. Goal: >= {INGEST_GOAL}x.",
        "",
    ]
    rows = []
    for mode, label in (
        ("folder", "`ingest` a folder (one transaction)"),
        ("put_text", "`put_text` (one transaction a document)"),
    ):
        m = ing[mode]
        rows.append(
            [
                label,
                _n(m["ours_per_s"]),
                _n(m["floor_per_s"]),
                _range(m["ratio"]),
                f"{m['ours_cpu_us']:.0f} / {m['floor_cpu_us']:.0f}",
                _range(m["cpu_ratio"]),
            ]
        )
    parts += [
        markdown_table(
            [
                "write path",
                "chunks/s",
                "raw FTS5 chunks/s",
                "x raw FTS5 (wall)",
                "CPU µs a chunk (ours / raw)",
                "x raw FTS5 (CPU)",
            ],
            rows,
        ),
        "",
    ]
    st = ing.get("statements")
    if st:
        parts += [
            "Where the SQLite time of an ingest goes (CPU µs a chunk, the same chunks written "
            "into the knowledge tables' own schema by plain `sqlite3` in one transaction, one "
            "INSERT a chunk): indexed as `ingest` indexes them, by one statement at the end of "
            f"the transaction, {st['insert_a_chunk']:.0f} µs; indexed one by one by an insert "
            "trigger, as before migration `0003_index_written_by_ingest`, "
            f"{st['insert_a_chunk_trigger']:.0f} µs; not indexed at all "
            f"{st['insert_a_chunk_no_fts']:.0f} µs. FTS5 flushes its pending terms to disk at "
            "every savepoint (its `xSavepoint`), and SQLite opens one for each statement that "
            "writes it through a trigger: a segment a chunk, where one statement writes one.",
            "",
        ]
    emb = ing.get("embedding")
    if emb:
        parts += [
            f"Embedding for hybrid search (`vectors.embed_pending`, {vectors.BATCH} chunks a "
            f"transaction): {_n(emb['ours_per_s'])} chunks/s against "
            f"{_n(emb['floor_per_s'])} for wordllama embedding the same texts and keeping "
            f"nothing ({_x(emb['ratio'])}, CPU {_x(emb['cpu_ratio'])}); with nothing pending "
            f"it takes {emb['nothing_pending_ms']:.2f} ms.",
            "",
        ]
    parts += ["### Search latency", ""]
    sizes = data["search"]
    parts.append(
        "Queries: the first line of a seeded sample of sections (*natural*: sentences in the "
        "corpus's own words, stop words and all), and the same with stop words removed "
        "(*keywords*), searched with `search.find` (limit 10) and, interleaved query by query, "
        "with the same BM25 query (OR of the words, heading weight 2, snippet) on the bare "
        f"FTS5 table. Goal: keyword p50 <= {KEYWORD_P50_GOAL_MS:.0f} ms at 100,000 chunks."
    )
    parts.append("")
    rows = []
    for entry in sizes:
        label = f"{_n(entry['chunks'])}"
        if entry["distinct_chunks"] < entry["chunks"]:
            label += f" ({_n(entry['distinct_chunks'])} distinct)"
        for kind in ("natural", "keywords"):
            e = entry[kind]
            hybrid = e.get("hybrid")
            rows.append(
                [
                    label,
                    kind,
                    f"{_ms(e['keyword']['p50_ms'])} / {_ms(e['keyword']['p95_ms'])}",
                    _ms(e["keyword"]["cpu_p50_ms"]),
                    f"{_ms(e['raw']['p50_ms'])} / {_ms(e['raw']['p95_ms'])}",
                    _x(e["ratio_keyword_p50"]),
                    f"{_ms(hybrid['p50_ms'])} / {_ms(hybrid['p95_ms'])}" if hybrid else "",
                    _ms(hybrid["cpu_p50_ms"]) if hybrid else "",
                ]
            )
    parts += [
        markdown_table(
            [
                "chunks",
                "queries",
                "keyword p50 / p95 ms",
                "keyword CPU p50 ms",
                "raw FTS5 p50 / p95 ms",
                "keyword x raw (p50)",
                "hybrid p50 / p95 ms",
                "hybrid CPU p50 ms",
            ],
            rows,
        ),
        "",
    ]
    dense_rows = [
        [
            _n(e["chunks"]),
            _ms(e["dense"]["embed_query_p50_ms"]),
            _ms(e["dense"]["cosines_p50_ms"]),
            _ms(e["dense"]["matmul_p50_ms"]),
            _ms(e["dense"]["read_after_change_ms"]),
            f"{e['dense']['stored_mb']:.1f} / {e['dense']['matrix_mb']:.1f}",
            f"{e['build']['ingest_s']:.1f} / {e['build']['raw_s']:.1f} / "
            f"{e['build'].get('embed_s', 0):.1f}",
        ]
        for e in sizes
        if "dense" in e
    ]
    if dense_rows:
        parts += [
            "The dense half of a hybrid search: embedding the query, the cosine of every stored "
            "vector (numpy `einsum`, what search uses; BLAS's `@` beside it), and reading every "
            "vector into memory, which happens once after the vectors change (the record's "
            "version tells), not on every search:",
            "",
            markdown_table(
                [
                    "chunks",
                    "embed query ms",
                    "cosines ms (einsum)",
                    "cosines ms (@)",
                    "read vectors after a change ms",
                    "MB stored (float16) / in memory (float32)",
                    "build s: ingest / raw FTS5 / embed",
                ],
                dense_rows,
            ),
            "",
        ]
    big = sizes[-1]
    goal_met = big["natural"]["keyword"]["p50_ms"] <= KEYWORD_P50_GOAL_MS
    parts += [
        f"Result at {_n(big['chunks'])} chunks: keyword p50 "
        f"{_ms(big['natural']['keyword']['p50_ms'])} ms on natural queries, "
        f"{_ms(big['keywords']['keyword']['p50_ms'])} ms on keywords — goal "
        f"{'met' if goal_met else 'NOT met'}; raw FTS5 itself takes "
        f"{_ms(big['natural']['raw']['p50_ms'])} / {_ms(big['keywords']['raw']['p50_ms'])} ms. "
        "FTS5 computes BM25 for every chunk holding any of the query's words before it keeps "
        "the best ten, so a query with common words ('the', 'is', 'return') costs about a "
        "microsecond per chunk of the corpus; the join to documents and collections and the "
        "snippets are what prixfixe adds.",
        "",
    ]
    q = data["quality"]
    parts += [
        "### Retrieval quality: tools read as documents",
        "",
        "The shared tool-search data as two collections, one markdown document per tool "
        "(`# name`, description, parameters), its labelled queries the questions; the same "
        "development / held-out halves as `bench_search_quality.py` (MetaTool: "
        f"{q['metatool_queries']['dev']} / {q['metatool_queries']['held']} queries sampled "
        f"within each half; LiveMCPBench: {q['livemcp_tasks']['dev']} / "
        f"{q['livemcp_tasks']['held']} tasks). Beside it, tool search on the same queries: one "
        "engine, measured on tools and on documents. Nothing in the knowledge base's search "
        "was tuned on either half (its fusion constants are tool search's).",
        "",
    ]
    rows = []
    for label, e in q["methods"].items():
        mt = [e[f"metatool_{h}"] for h in HALVES]
        lv = [e[f"livemcp_{h}"] for h in HALVES]
        rows.append(
            [
                label,
                " / ".join(f"{m['top1']:.3f}" for m in mt),
                " / ".join(f"{m['recall10']:.3f}" for m in mt),
                " / ".join(f"{m['mrr10']:.3f}" for m in mt),
                " / ".join(f"{m['recall10']:.3f}" for m in lv),
                " / ".join(f"{m['mrr10']:.3f}" for m in lv),
                f"{e['query_ms']:.2f}",
            ]
        )
    parts += [
        markdown_table(
            [
                "method",
                "MetaTool top-1 (dev / held-out)",
                "MetaTool recall@10",
                "MetaTool MRR@10",
                "LiveMCPBench recall@10",
                "LiveMCPBench MRR@10",
                "ms a query",
            ],
            rows,
        ),
        "",
    ]
    tok = data["tokens"]
    parts += [
        "### Tokens an agent reads to answer a question",
        "",
        f"{tok['documents']} long topics of the Python language reference "
        f"({_n(tok['chunks'])} sections; `pydoc_data.topics`, shipped with Python) in one "
        f"collection, and {len(QUESTIONS)} hand-written questions, each with the words of its "
        "topic that answer it. Through a real `mcp.Client`: the agent reads the search "
        f"resource (`prixfixe://knowledge/search?q=…&limit={SEARCH_LIMIT}`), then the section "
        "of each hit in turn until it has read the answer (at most "
        f"{MAX_SECTIONS}); the baseline reads the whole document that holds the answer (an "
        "agent that already knew which document). cl100k tokens of the resources' text.",
        "",
    ]
    rows = []
    for mode, m in tok["modes"].items():
        rows.append(
            [
                mode,
                f"{m['answered']} / {len(QUESTIONS)} ({m['answered_first']} from the first hit)",
                _n(m["tokens"]),
                _n(m["whole_document_tokens"]),
                f"**{_x(m['ratio'])}**",
                _x(m["ratio_answered"]),
                ", ".join(m["search_via"]),
            ]
        )
    parts += [
        markdown_table(
            [
                "search",
                "answered",
                "tokens: search + sections",
                "tokens: whole documents",
                "ratio",
                "ratio, answered questions only",
                "search read via",
            ],
            rows,
        ),
        "",
        "A hit on a document's first chunk points at a section that is the whole document (a "
        "section is a heading and everything under it), so such a read costs as much as the "
        "baseline. Per-question figures: `benchmarks/results/knowledge.json`.",
    ]
    if any("in-process" in m["search_via"] for m in tok["modes"].values()):
        parts += [
            "",
            '"in-process": the search resource does not pass `[search] semantic` to the '
            "search yet, so the hybrid result's text was rendered by the same function the "
            "resource uses (`results.render`) from `search.find(..., semantic=True)`; sections "
            "and documents were read through the protocol.",
        ]
    if "convert" in data:
        parts += report_convert(data["convert"])
    return "\n".join(parts)


# --- HTML conversion ------------------------------------------------------------------------


def html_shapes(size: int) -> dict[str, bytes]:
    """Generated HTML files of about `size` bytes: the shapes whose conversion cost grew faster
    than their size (issue 31), and a flat page of paragraphs."""
    deep_head, deep_tail = "<div>" * 190, "</div>" * 190
    span = "<span>x</span> "
    spans = (size - len(deep_head) - len(deep_tail)) // len(span)
    return {
        "190-deep `<div>`s around `<span>`s": (deep_head + span * spans + deep_tail).encode(),
        "`<ol>` of one-word items": ("<ol>" + "<li>x</li>" * ((size - 9) // 10) + "</ol>").encode(),
        "flat `<p>` paragraphs": (
            "<p>some words of a paragraph here</p>\n" * (size // 38)
        ).encode(),
    }


def bench_convert(size: int, rounds: int) -> dict[str, Any]:
    """CPU seconds (median of `rounds`) of converting each shape, and of parsing it alone."""
    from bs4 import BeautifulSoup

    rows: dict[str, Any] = {}
    for name, data in html_shapes(size).items():
        convert: list[float] = []
        parse: list[float] = []
        outcome = ""
        for _ in range(rounds):
            started = time.process_time()
            try:
                converted = formats.html_to_markdown(data)
                outcome = f"{converted.chunking}, {len(converted.text.encode()):,} bytes"
            except formats.NotADocument as exc:
                outcome = f"refused: {exc}"
            convert.append(time.process_time() - started)
            started = time.process_time()
            BeautifulSoup(data, "html.parser")
            parse.append(time.process_time() - started)
        budget = formats.HTML_BASE_SECONDS + formats.HTML_SECONDS_PER_MB * len(data) / (1 << 20)
        rows[name] = {
            "bytes": len(data),
            "convert_cpu_s": statistics.median(convert),
            "parse_cpu_s": statistics.median(parse),
            "budget_s": budget,
            "outcome": outcome,
        }
    return {"rounds": rounds, "shapes": rows}


def report_convert(conv: dict[str, Any]) -> list[str]:
    rows = [
        [
            name,
            _n(r["bytes"]),
            f"{r['convert_cpu_s']:.2f}",
            f"{r['parse_cpu_s']:.2f}",
            f"{r['budget_s']:.1f}",
            r["outcome"],
        ]
        for name, r in conv["shapes"].items()
    ]
    return [
        "",
        "### HTML conversion",
        "",
        "CPU seconds of `formats.html_to_markdown` on generated files (median of "
        f"{conv['rounds']}), beside Beautiful Soup parsing the same bytes alone (the parser the "
        "conversion starts with), and the file's CPU budget (2 s plus 10 s a MiB). Before issue "
        "31 the deep file took 7.6 s and the ordered list quadratic time (6.7 s at a tenth of "
        "its length, about ten minutes at this one).",
        "",
        markdown_table(
            ["file", "bytes", "convert CPU s", "parse alone CPU s", "budget s", "stored as"],
            rows,
        ),
    ]


#: The benchmark's parts, each a key of its results.
PARTS = ("ingest", "search", "quality", "tokens", "convert")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--quick", action="store_true", help="small corpora and samples (a smoke run, ~1 min)"
    )
    parser.add_argument(
        "--sizes", type=int, nargs="*", default=None, help="chunks (default 10,000 and 100,000)"
    )
    parser.add_argument("--queries", type=int, default=None, help="latency queries per kind")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-semantic", action="store_true", help="keyword only")
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    parser.add_argument(
        "--only",
        choices=PARTS,
        action="append",
        help="run only this part (repeatable); the others are kept from the last results file",
    )
    args = parser.parse_args(argv)
    only = set(args.only or PARTS)
    sizes = args.sizes or ([2_000] if args.quick else [10_000, 100_000])
    queries = args.queries or (40 if args.quick else 200)
    embedder = None if args.no_semantic else _embedder()
    work = Path(tempfile.mkdtemp(prefix="prixfixe-bench-knowledge-"))
    data: dict[str, Any] = {
        "quick": args.quick,
        "seed": args.seed,
        "embedder": embedder.model_id if embedder is not None else None,
    }
    if only != set(PARTS):
        kept = json.loads((RESULTS_DIR / f"{NAME}.json").read_text(encoding="utf-8"))
        data |= {part: kept[part] for part in PARTS if part not in only and part in kept}
    try:
        started = time.perf_counter()
        if "ingest" in only:
            ingest_docs, _ = docstring_corpus(2_000 if args.quick else 10_000)
            data["ingest"] = bench_ingest(work, ingest_docs, 4 if args.quick else 8, embedder)
            print(f"ingest done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        if "search" in only:
            data["search"] = []
            for size in sizes:
                started = time.perf_counter()
                data["search"].append(bench_search(work, size, embedder, queries, args.seed))
                took = time.perf_counter() - started
                print(f"search at {size:,} done in {took:.1f} s", file=sys.stderr)
        if "quality" in only:
            started = time.perf_counter()
            data["quality"] = bench_quality(work, embedder, 150 if args.quick else 1_000, args.seed)
            print(f"quality done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        if "tokens" in only:
            started = time.perf_counter()
            data["tokens"] = bench_tokens(work, embedder)
            print(f"tokens done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        if "convert" in only:
            started = time.perf_counter()
            data["convert"] = bench_convert(
                240_000 if args.quick else 960_000, 1 if args.quick else 3
            )
            print(f"convert done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    markdown = report(data)
    print(markdown)
    if not args.no_write:
        write_json(NAME, data)
        write_section(NAME, markdown)
    return data


if __name__ == "__main__":
    main()
