"""The knowledge base on PostgreSQL: one knowledge base for every instance on the database.

Every knowledge migration says how in PostgreSQL's dialect (`tables`), so on a PostgreSQL
store the knowledge owner's slice is a slice of the shared database
(`prixfixe.store.pg_slices`): the same statements (`?`, `:name`, `{prefix}`) run there, each
write in one transaction at the database's generation that also tells the other instances
(NOTIFY), and whoever opens the store (a server, `prixfixe kb`, a watched folder) reads and
writes the one knowledge base.

What PostgreSQL does otherwise is here, asked for through `backend.postgres(tables)`:

* Search: each chunk's `tsv` is a generated `tsvector` (`english`: stemming, stop words not
  indexed; its heading weighted A, its body B) with a GIN index. A query is words, never
  tsquery syntax: the words (`\\w+`) of the query, each given to `plainto_tsquery` as a bound
  parameter, OR-ed together (at most `MAX_WORDS`), so operators, quotes and backslashes are
  plain text and no query is a syntax error. Chunks are ranked with `ts_rank_cd` (a heading
  weighs twice a body), snippets are `ts_headline`'s, completed as FTS5's `snippet` shows them.
* The index check of health: every chunk's `tsvector` is a column of its own row; the check
  counts them and looks for the GIN index.
* Telling other instances' subscribers: every knowledge write also records what it changed
  in `changes` under its generation (`record`); an instance serving subscribers (`follow`)
  hears each change other instances made (the store's listener, on its own thread) and reads
  that row to announce it as its own writes are announced.
* Text holding NUL, which PostgreSQL's text cannot hold, is refused with that reason.

Dense vectors (hybrid search) stay on SQLite stores for now: here search is keyword-only and
says so when hybrid was asked for.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from prixfixe.errors import KnowledgeError, PrixfixeError
from prixfixe.knowledge import KNOWLEDGE_OWNER
from prixfixe.knowledge.tables import PG_CONFIG
from prixfixe.store.api import Store, StoreChange

if TYPE_CHECKING:
    from prixfixe.knowledge.backend import KnowledgeTables
    from prixfixe.knowledge.changes import ChangeListener

log = logging.getLogger(__name__)

#: `ts_rank_cd`'s weights for D, C, B (a body) and A (a heading): a heading weighs twice.
WEIGHTS = "{0.1, 0.2, 0.5, 1.0}"
#: At most this many distinct words of a query are looked for (a longer query is cut).
MAX_WORDS = 64
#: Change rows kept: far more than a listener lags behind.
KEEP_CHANGES = 1000
#: `ts_headline`'s options: at most `search.SNIPPET_TOKENS` words around the best match,
#: matches in markdown bold (as FTS5's `snippet` marks them).
HEADLINE = "StartSel=**, StopSel=**, MaxWords=16, MinWords=8, ShortWord=0"
#: Seconds a follower's worker waits for work before it ends (a new change starts it again).
IDLE_S = 5.0
_WORDISH = re.compile(r"\w")


def is_pg_slice(tables: object) -> bool:
    """Whether `tables` is a slice of a PostgreSQL database (without importing psycopg when
    no PostgreSQL store was ever opened)."""
    import sys

    module = sys.modules.get("prixfixe.store.pg_slices")
    return module is not None and isinstance(tables, module.PostgresSlice)


class PgTables:
    """The knowledge slice of a PostgreSQL store (`backend.KnowledgeTables`), with what only
    PostgreSQL does. Text holding NUL is refused before it reaches the database."""

    def __init__(self, slice_: KnowledgeTables) -> None:
        self.slice = slice_

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.slice.query(sql, _checked(params))

    def execute_batch(self, statements: Sequence[tuple[str, Mapping[str, Any]]]) -> int:
        for _, params in statements:
            _checked(params.values())
        return self.slice.execute_batch(statements)

    # -- search -----------------------------------------------------------------------------

    def lexical(
        self, words: Sequence[str], conditions: str, values: Sequence[Any], limit: int
    ) -> list[tuple[Any, ...]]:
        """The best `limit` chunks holding any of `words`, best first: rows of (collection,
        document id, path, title, seq, heading, snippet, score, chunk id); `score` is minus
        the rank, so lower is better as with BM25. `conditions` (` AND ...` on `c` and `d`,
        `?` parameters `values`) narrow them."""
        words = list(dict.fromkeys(w.lower() for w in words))[:MAX_WORDS]
        tsquery = " || ".join([f"plainto_tsquery('{PG_CONFIG}', ?)"] * len(words))
        sql = (
            f"WITH q AS (SELECT {tsquery} AS q), best AS ("
            f"SELECT k.id, ts_rank_cd('{WEIGHTS}', k.tsv, q.q) AS rank "
            "FROM q, {prefix}chunks k JOIN {prefix}documents d ON d.id = k.document "
            "JOIN {prefix}collections c ON c.id = d.collection "
            f"WHERE k.tsv @@ q.q{conditions} ORDER BY rank DESC, k.id LIMIT ?) "
            "SELECT c.name, d.id, d.path, d.title, k.seq, k.heading, h.h, -best.rank, k.id, "
            # What the body holds before the snippet (its first characters) and how long it
            # is: the snippet is completed as FTS5's `snippet` would show it (`_completed`).
            "CASE WHEN p.at BETWEEN 2 AND 17 THEN left(k.body, p.at - 1) ELSE '' END, "
            "p.at, length(rtrim(k.body, chr(32) || chr(9) || chr(10) || chr(13))) "
            "FROM best CROSS JOIN q JOIN {prefix}chunks k ON k.id = best.id "
            "JOIN {prefix}documents d ON d.id = k.document "
            "JOIN {prefix}collections c ON c.id = d.collection "
            f"CROSS JOIN LATERAL (SELECT ts_headline('{PG_CONFIG}', k.body, q.q, ?) AS h) h "
            "CROSS JOIN LATERAL (SELECT strpos(k.body, replace(h.h, '**', '')) AS at) p "
            "ORDER BY best.rank DESC, k.id"
        )
        rows = self.query(sql, [*words, *values, limit, HEADLINE])
        return [(*row[:6], _completed(*row[6:7], *row[9:12]), *row[7:9]) for row in rows]

    def index_state(self) -> dict[str, Any]:
        """The full-text index's state as health reports it: every chunk's `tsvector` is its
        own column, so none can be missing; the GIN index must be there."""
        ((chunks, indexed, gin),) = self.query(
            "SELECT COUNT(*), COUNT(tsv), to_regclass('{prefix}chunks_tsv') IS NOT NULL "
            "FROM {prefix}chunks"
        )
        missing = int(chunks) - int(indexed)
        return {
            "state": "ok" if gin and not missing else "out of step",
            "chunks": int(chunks),
            "indexed": int(indexed),
            "missing": missing,
            "orphans": 0,
        }

    # -- other instances' writes ------------------------------------------------------------

    def change(self, generation: int) -> tuple[str, list[int], bool] | None:
        """What the write at `generation` changed, or None (no knowledge write, or pruned)."""
        rows = self.query(
            "SELECT collection, documents, lists_changed FROM {prefix}changes WHERE gen = ?",
            (generation,),
        )
        if not rows:
            return None
        collection, documents, lists_changed = rows[0]
        return str(collection), [int(i) for i in documents], bool(lists_changed)


def record(
    collection: str, documents: Sequence[int], lists_changed: bool
) -> list[tuple[str, Mapping[str, Any]]]:
    """The statements a knowledge write adds on PostgreSQL: what it changed, under its
    generation, for the other instances (and the oldest rows pruned)."""
    return [
        (
            "INSERT INTO {prefix}changes (gen, collection, documents, lists_changed) "
            "VALUES (:generation, :collection, CAST(:documents AS BIGINT[]), :lists_changed)",
            {
                "collection": collection,
                "documents": list(documents),
                "lists_changed": lists_changed,
            },
        ),
        ("DELETE FROM {prefix}changes WHERE gen < :generation - :keep", {"keep": KEEP_CHANGES}),
    ]


#: Per store, the notifiers already following it (by id): `follow` is idempotent.
_FOLLOWED: weakref.WeakKeyDictionary[Any, set[int]] = weakref.WeakKeyDictionary()
_FOLLOWED_LOCK = threading.Lock()


def follow(store: Store, tables: PgTables, notifier: ChangeListener) -> None:
    """Announce to `notifier` the knowledge writes other instances make on `store`'s database,
    each once (this instance's own are announced by their writers)."""
    with _FOLLOWED_LOCK:
        followed = _FOLLOWED.setdefault(store, set())
        if id(notifier) in followed:
            return
        followed.add(id(notifier))
    from prixfixe.store.pg_changes import APPLICATION_NAME

    # The store's listener thread is named for it: a change announced on that thread is
    # another instance's (the listener skips this one's), one announced elsewhere is a write
    # of this instance, which its writer announces itself.
    store.observe(_Follower(tables, notifier, f"{APPLICATION_NAME} ").observe)


class _Follower:
    """Hears the store's changes (on the listener's thread, which must not wait) and reads
    and announces the knowledge ones in a worker thread of its own."""

    def __init__(self, tables: PgTables, notifier: ChangeListener, listener: str) -> None:
        self._listener = listener
        self._tables = tables
        self._notifier = notifier
        self._queue: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    def observe(self, change: StoreChange) -> None:
        if change.op != "slice" or change.owner != KNOWLEDGE_OWNER:
            return
        if not threading.current_thread().name.startswith(self._listener):
            return  # this instance's own write: its writer announces it
        self._queue.put(change.generation)
        with self._lock:
            if self._worker is None:
                self._worker = threading.Thread(
                    target=self._run, name="prixfixe knowledge changes", daemon=True
                )
                self._worker.start()

    def _run(self) -> None:
        from prixfixe.knowledge import changes
        from prixfixe.knowledge.ingest import IngestResult

        while True:
            try:
                generation = self._queue.get(timeout=IDLE_S)
            except queue.Empty:
                with self._lock:
                    if self._queue.empty():
                        self._worker = None
                        return
                continue
            try:
                found = self._tables.change(generation)
            except PrixfixeError as exc:  # the store closed, or the database went away
                log.warning("cannot read knowledge change %d: %s", generation, exc.message)
                continue
            if found is None:
                continue
            collection, documents, lists_changed = found
            result = IngestResult(
                collection,
                updated_ids=documents,
                generation=generation,
                collection_created=lists_changed,
            )
            changes.announce(self._notifier, result)


def _checked(values: Iterable[Any]) -> list[Any]:
    """`values`, refused with a clear message if a text holds NUL, which PostgreSQL's text
    cannot hold (SQLite's can): nothing stored can match it, and nothing can store it."""
    found = list(values)
    if any(isinstance(v, str) and "\x00" in v for v in found):
        raise KnowledgeError(
            "a text with a NUL character (\\x00) cannot be stored in or looked for in a "
            "PostgreSQL store's knowledge base"
        )
    return found


def _completed(snippet: str, head: str, at: int, body_length: int) -> str:
    """The snippet as FTS5's `snippet` shows one: `ts_headline` starts at a word, so markup
    before it (a heading's `## `, `head`) is put back; `…` marks words left out before or
    after it. `at` is where its text starts in the body (1-based; 0: not found as it is)."""
    if not at:
        return snippet
    plain = snippet.replace("**", "")
    after = "…" if at - 1 + len(plain.rstrip()) < body_length else ""
    if at > 1 and _WORDISH.search(head) is None and len(head) == at - 1:
        return head + snippet + after
    return ("…" if at > 1 else "") + snippet + after


def glob_regex(pattern: str) -> str | None:
    """A SQLite GLOB (`*`, `?`, `[...]` and `[^...]`, case-sensitive) as an anchored
    PostgreSQL regex that is always valid: every other character is literal, and a range
    written backwards matches nothing, as in SQLite. None when nothing can match (a class
    with nothing in it)."""
    out = ["^"]
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        negate = pattern.startswith("[^", i)
        first = i + (2 if negate else 1)  # a `]` there is a member, as in SQLite
        end = pattern.find("]", first + 1) if ch == "[" else -1
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif end != -1:
            members = _members(pattern[first:end])
            if not members:
                if not negate:
                    return None
                out.append(".")
            else:
                out.append("[" + ("^" if negate else "") + members + "]")
            i = end
        else:
            out.append(_literal(ch))
        i += 1
    out.append("$")
    return "".join(out)


def _members(body: str) -> str:
    """A GLOB class's members in a regex bracket expression: ranges kept when in order,
    every character escaped."""
    found: list[str] = []
    j = 0
    while j < len(body):
        if j + 2 < len(body) and body[j + 1] == "-":
            low, high = body[j], body[j + 2]
            if low <= high:
                found.append(f"{_literal(low)}-{_literal(high)}")
            j += 3
        else:
            found.append(_literal(body[j]))
            j += 1
    return "".join(found)


def _literal(ch: str) -> str:
    # In PostgreSQL's regexes (AREs) a backslash before any non-alphanumeric character is
    # that character, inside brackets too.
    return ch if ch.isalnum() else "\\" + ch
