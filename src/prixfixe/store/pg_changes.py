"""Store changes across prixfixe instances that share one PostgreSQL database: LISTEN/NOTIFY.

Every write sends its `StoreChange` with `pg_notify` inside its own transaction, so a write
that rolls back sends nothing and a committed one is delivered after its commit, in commit
order (which is generation order: the generation row lock orders writers). The payload is
self-contained JSON, the ids as runs (`[[first, last], ...]`: a batch's ids are consecutive,
so any batch is one run), split into parts under the 8000-byte NOTIFY limit when the runs do
not fit in one. Parts of one transaction arrive together, in order, and are put back
together before anyone is told: a listener never reads the tables to learn what changed, so
a later write to the same records cannot hide ids from it.

A `ChangeListener` holds one dedicated connection that LISTENs, in a daemon thread (the store's
API is synchronous; observers are called from whatever thread wrote, and the app's observer
hands off to its event loop without blocking). It announces changes sent by other instances
only — an instance's own writes are announced by the writer — and skips any generation at or
below the last one it has seen, so each change reaches each instance's observers once. A lost
connection is reconnected with backoff; on reconnect the listener reads what it missed (records
created, and history rows written, after the last generation it saw, in one snapshot) and
announces it, leaving out the generations this instance wrote itself.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from prixfixe.store.api import StoreChange

log = logging.getLogger(__name__)

#: The channel every instance on one database notifies and listens on.
CHANNEL = "prixfixe_changes"
#: What the payload's `v` says; a payload of another format is ignored (and logged).
FORMAT = 1
#: Bytes of ids one payload may carry: PostgreSQL refuses payloads of 8000 bytes or more, and
#: the rest of the payload (instance, kind, generation) stays far under the difference.
IDS_BUDGET = 7000
#: Seconds the listener waits for a notification before looking whether it should stop.
POLL_S = 1.0
#: The first pause before reconnecting, doubled after each failure up to the last.
BACKOFF_S = (0.1, 10.0)
#: The listener's connection as `pg_stat_activity` shows it (its instance id follows).
APPLICATION_NAME = "prixfixe listen"

# What changed after one generation up to another: records created (`created_gen` never
# changes) and history rows (an update or a close) — each generation is one write, of one kind.
_MISSED = """
SELECT c.gen, c.op, r.kind, array_agg(c.id ORDER BY c.id)
FROM (
    SELECT id, created_gen AS gen, 'put' AS op FROM records
    WHERE created_gen > %(after)s AND created_gen <= %(upto)s
    UNION ALL
    SELECT record, gen, CASE WHEN op = 'close' THEN 'close' ELSE 'put' END FROM history
    WHERE gen > %(after)s AND gen <= %(upto)s
) AS c
JOIN records AS r ON r.id = c.id
GROUP BY c.gen, c.op, r.kind
ORDER BY c.gen
"""


def id_runs(ids: Iterable[int]) -> list[list[int]]:
    """`ids` as runs of consecutive numbers, in their order: [1, 2, 3, 7] -> [[1, 3], [7, 7]]."""
    runs: list[list[int]] = []
    for i in ids:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return runs


def payloads(instance: str, change: StoreChange) -> list[str]:
    """The NOTIFY payloads of one change: one, or parts that each stay under the limit."""
    parts: list[list[list[int]]] = [[]]
    size = 0
    for run in id_runs(change.ids):
        cost = len(json.dumps(run, separators=(",", ":"))) + 1
        if parts[-1] and size + cost > IDS_BUDGET:
            parts.append([])
            size = 0
        parts[-1].append(run)
        size += cost
    head = {
        "v": FORMAT,
        "instance": instance,
        "generation": change.generation,
        "op": change.op,
        "kind": change.kind,
        "owner": change.owner,
    }
    return [
        json.dumps({**head, "part": n, "parts": len(parts), "ids": runs}, separators=(",", ":"))
        for n, runs in enumerate(parts, 1)
    ]


@dataclass(frozen=True)
class Message:
    """One payload as received: the change (this part's ids only), from which instance."""

    instance: str
    change: StoreChange
    part: int
    parts: int


def decode(payload: str) -> Message | None:
    """A payload read back, or None (logged) if it is not one this format sends."""
    try:
        data = json.loads(payload)
        if data.get("v") != FORMAT or data["op"] not in ("put", "close", "slice"):
            raise ValueError(f"format {data.get('v')!r}, op {data.get('op')!r}")
        ids = tuple(i for first, last in data["ids"] for i in range(int(first), int(last) + 1))
        change = StoreChange(int(data["generation"]), data["op"], data["kind"], ids, data["owner"])
        return Message(str(data["instance"]), change, int(data["part"]), int(data["parts"]))
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        log.warning("ignored a notification on %s that prixfixe did not send: %s", CHANNEL, exc)
        return None


class ChangeListener:
    """Other instances' changes to one database, announced here (see the module's notes)."""

    def __init__(
        self,
        conninfo: str,
        instance: str,
        announce: Callable[[StoreChange], None],
        location: str,
        connect_timeout: int = 10,
    ) -> None:
        self.instance = instance
        self._conninfo = conninfo
        self._announce = announce
        self._location = location
        self._connect_timeout = connect_timeout
        self._stop = threading.Event()
        self._lock = threading.Lock()  # guards _own and _fd, which writers and close() touch
        self._own: set[int] = set()
        self._fd: int | None = None
        self._last: int | None = None  # the last generation seen (listener thread only)
        self._partial: dict[tuple[str, int], list[Message]] = {}
        self._thread: threading.Thread | None = None
        self.reconnects = 0  # connections made after a loss (tests read it)

    # -- the writers' side (any thread) -----------------------------------------------------

    def writing(self, generation: int) -> None:
        """This instance is writing `generation` (before its commit): never announce it."""
        with self._lock:
            self._own.add(generation)

    def abandoned(self, generation: int) -> None:
        """That write did not commit (or may not have): its generation is free again, and if
        it did commit after all, the writer announced nothing, so catching up may."""
        with self._lock:
            self._own.discard(generation)

    # -- starting and stopping --------------------------------------------------------------

    def start(self) -> None:
        """Listen before returning (so a write after this is heard), then keep listening in a
        daemon thread; a first connection that fails is retried there."""
        conn: psycopg.Connection[Any] | None = None
        try:
            conn = self._connect()
        except psycopg.Error as exc:
            log.warning(
                "cannot listen for other instances' changes on %s yet (%s); retrying",
                self._location,
                _first_line(exc),
            )
        self._thread = threading.Thread(
            target=self._run, args=(conn,), name=f"{APPLICATION_NAME} {self.instance}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop listening now: the thread's wait on the socket is cut short."""
        self._stop.set()
        try:
            # Shut the socket down under the driver, so its wait returns. Duplicated under the
            # lock, before the thread can close it (and the number be reused by another).
            with self._lock:
                fd = os.dup(self._fd) if self._fd is not None else None
            if fd is not None:
                with socket.socket(fileno=fd) as sock:
                    sock.shutdown(socket.SHUT_RDWR)
        except OSError as exc:  # already gone: the thread is leaving anyway
            log.debug("listener socket: %s", exc)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=POLL_S + 1)

    @property
    def running(self) -> bool:
        """Whether the listener's thread is still there (it ends on `stop`)."""
        return self._thread is not None and self._thread.is_alive()

    # -- the listener thread ----------------------------------------------------------------

    def _connect(self) -> psycopg.Connection[Any]:
        conn = psycopg.connect(
            self._conninfo,
            autocommit=True,
            connect_timeout=self._connect_timeout,
            application_name=f"{APPLICATION_NAME} {self.instance}",
        )
        try:
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
            missed = self._catch_up(conn)
        except BaseException:
            conn.close()
            raise
        with self._lock:
            self._fd = conn.fileno()
        for change in missed:
            self._announce(change)
        return conn

    def _catch_up(self, conn: psycopg.Connection[Any]) -> list[StoreChange]:
        """What other instances wrote after the last generation seen, read in one snapshot
        taken after LISTEN (so nothing falls between the two; what both carry is skipped by
        its generation). The first time, just the generation to start from."""
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            row = conn.execute("SELECT value FROM generation").fetchone()
            upto = int(row[0]) if row is not None else 0
            after = self._last
            rows: Sequence[tuple[Any, ...]] = []
            if after is not None and upto > after:
                rows = conn.execute(_MISSED, {"after": after, "upto": upto}).fetchall()
        with self._lock:
            own = set(self._own)
        missed = [
            StoreChange(int(gen), op, str(kind), tuple(int(i) for i in ids))
            for gen, op, kind, ids in rows
            if int(gen) not in own
        ]
        if after is not None and upto > after:
            log.info(
                "listening again on %s; telling of %d change(s) other instances made while "
                "it was not (generations %d to %d)",
                self._location,
                len(missed),
                after + 1,
                upto,
            )
        self._advance(upto)
        return missed

    def _advance(self, generation: int) -> None:
        self._last = generation
        with self._lock:
            self._own = {g for g in self._own if g > generation}

    def _run(self, conn: psycopg.Connection[Any] | None) -> None:
        delay = BACKOFF_S[0]
        try:
            while not self._stop.is_set():
                if conn is None:
                    if self._stop.wait(delay):
                        break
                    try:
                        conn = self._connect()
                    except psycopg.Error as exc:
                        log.warning(
                            "still cannot listen on %s (%s); next try in %.1f s",
                            self._location,
                            _first_line(exc),
                            min(delay * 2, BACKOFF_S[1]),
                        )
                        delay = min(delay * 2, BACKOFF_S[1])
                        continue
                    self.reconnects += 1
                    delay = BACKOFF_S[0]
                try:
                    # Collected first: the driver holds the connection while its generator runs.
                    received = list(conn.notifies(timeout=POLL_S, stop_after=1))
                except psycopg.Error as exc:
                    if self._stop.is_set():
                        break
                    log.warning(
                        "lost the connection listening for other instances' changes on %s "
                        "(%s); reconnecting",
                        self._location,
                        _first_line(exc),
                    )
                    self._drop(conn)
                    conn = None
                    continue
                for note in received:
                    self._received(note.payload)
        finally:
            if conn is not None:
                self._drop(conn)

    def _drop(self, conn: psycopg.Connection[Any]) -> None:
        with self._lock:
            self._fd = None
        # Parts of a change cut off by the loss never complete: catching up tells of it.
        self._partial.clear()
        conn.close()

    def _received(self, payload: str) -> None:
        message = decode(payload)
        if message is None:
            return
        change = message.change
        if message.parts > 1:
            key = (message.instance, change.generation)
            held = self._partial.setdefault(key, [])
            held.append(message)
            if len(held) < message.parts:
                return
            del self._partial[key]
            ids = tuple(i for m in sorted(held, key=lambda m: m.part) for i in m.change.ids)
            change = StoreChange(change.generation, change.op, change.kind, ids, change.owner)
        if self._last is not None and change.generation <= self._last:
            return  # caught up already (or older than this listener)
        self._advance(change.generation)
        if message.instance != self.instance:
            self._announce(change)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


__all__ = ["CHANNEL", "ChangeListener", "decode", "id_runs", "payloads"]
