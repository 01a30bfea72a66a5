"""Moving a single-machine store into a shared one: the records of an SQLite store file copied
into a PostgreSQL store, as they are.

Every record keeps its id, kind, body, schema version, generations, closed state and reason,
and its history; the kinds they belong to come along; the database's generation counter ends
at least at the file's, so later writes keep increasing. The file is only read (opened
read-only; without a WAL beside it, as `immutable`, which creates nothing beside it).

The copy is one transaction, idempotent: a record (or history entry) already in the database
exactly as in the file is skipped, so a second run writes nothing; one that differs at the
same id is refused, naming the first such, and nothing is written. So is a database holding
records of another store (created before the file's generation, at ids the file lacks). The
result is verified by counts inside the transaction (records per kind, history entries, each
as in the file) before it commits.

A record the file holds but that cannot be read (its body not UTF-8 or not a JSON object, its
close reason not UTF-8: damage) is left out, with its history (the database's history needs
its record), and so is a version in a record's history whose body or reason cannot be read;
everything else is copied and verified, and the report names each left out (`left_out`), so a
caller can say the copy was not whole. A left-out record's id stays reserved in the database.

Plugins' own tables (kept reports, the knowledge base) are not copied, by design: reports
start afresh in the database and the knowledge base fills again when its folders are ingested.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from prixfixe.errors import StoreError, StoreFaultError
from prixfixe.store import migrations as mig
from prixfixe.store.api import CORE_OWNER, AppliedMigration
from prixfixe.store.integrity import row_problem
from prixfixe.store.postgres import CONNECT_TIMEOUT_S, PostgresStore, redacted

_RECORD = (
    "id",
    "kind",
    "schema_version",
    "body",
    "created_gen",
    "gen",
    "closed_gen",
    "close_reason",
)
_HISTORY = ("record", "gen", "op", "body", "schema_version", "prev_gen", "reason")


@dataclass(frozen=True)
class KindCount:
    """One kind's records: how many the file holds, how many the database now holds exactly
    as in the file, and how many were left out as damaged (target + left_out = source once
    verified)."""

    kind: str
    source: int
    target: int
    left_out: int = 0


@dataclass(frozen=True)
class LeftOut:
    """A record the file holds but that cannot be read (`gen` None), with `history` entries
    of it left out with it; or one version in a record's history (`gen`) that cannot be."""

    kind: str
    id: int
    gen: int | None
    problem: str
    history: int = 0

    def text(self) -> str:
        where = (
            "" if self.gen is None else f" (its version of generation {self.gen}, in its history)"
        )
        entries = "entry" if self.history == 1 else "entries"
        with_it = f"; its {self.history} history {entries} with it" if self.history else ""
        return f"{self.kind} {self.id}{where}: {self.problem}{with_it}"


@dataclass(frozen=True)
class CopyReport:
    """What one copy did and what it verified."""

    source: str
    target: str
    source_generation: int
    target_generation: int
    records_written: int
    history_written: int
    kinds_written: int
    kinds: tuple[KindCount, ...]
    history_source: int
    history_target: int
    #: Owners with tables of their own in the file, which stay there.
    not_copied: tuple[str, ...]
    #: Migrations opening the database applied (it is created on first use).
    applied: tuple[AppliedMigration, ...] = field(default=())
    #: What the file holds but could not be read, so was not copied (records, then versions).
    left_out: tuple[LeftOut, ...] = ()
    #: History entries not copied: damaged versions and the history of left-out records.
    history_left_out: int = 0

    @property
    def written(self) -> int:
        return self.records_written + self.history_written + self.kinds_written


@dataclass(frozen=True)
class _Source:
    generation: int
    kinds: list[tuple[Any, ...]]
    #: The records and history entries that read, as the database takes them.
    records: list[tuple[Any, ...]]
    history: list[tuple[Any, ...]]
    owners: tuple[str, ...]
    #: How many records of each kind, and history entries, the file holds (read or not).
    counts: Counter[str] = field(default_factory=Counter)
    history_count: int = 0
    left_out: tuple[LeftOut, ...] = ()
    #: The highest id the file holds (new records in the database take ids after it).
    max_id: int = 0


def copy_store(source: Path, url: str, password: str | None = None) -> CopyReport:
    """Copy the records of the SQLite store `source` (a file, or a directory holding
    `store.sqlite3`) into the PostgreSQL store at `url`; see the module's docstring."""
    path = _store_file(source)
    data = read_source(path)
    # Opening creates (or migrates) the database's tables, with the clear errors of any open.
    target = PostgresStore.open(url, {}, password=password)
    try:
        applied = tuple(target.applied)
        location = target.location
    finally:
        target.close()
    conninfo = url if password is None else make_conninfo(url, password=password)
    try:
        with (
            psycopg.connect(conninfo, connect_timeout=CONNECT_TIMEOUT_S) as conn,
            conn.transaction(),
        ):
            report = _copy(conn, data, str(path), location)
    except psycopg.OperationalError as exc:
        _fault(url, exc, "cannot use the PostgreSQL store at {server} ({location}): {detail}")
    except psycopg.Error as exc:
        _fault(url, exc, "the PostgreSQL store at {server} ({location}) refused: {detail}")
    return replace(report, applied=applied)


def _store_file(source: Path) -> Path:
    from prixfixe.store import STORE_FILENAME

    path = source / STORE_FILENAME if source.is_dir() else source
    if not path.is_file():
        raise StoreError(f"no store file at {path}: give the path of a store.sqlite3")
    return path


def read_source(path: Path) -> _Source:
    """Everything the copy takes from the file, read in one snapshot without writing to it."""
    wal = path.with_name(path.name + "-wal")
    immutable = not (wal.exists() and wal.stat().st_size > 0)
    uri = f"{path.resolve().as_uri()}?mode=ro{'&immutable=1' if immutable else ''}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=5.0)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the store {path} for reading: {exc}") from None
    try:
        conn.execute("BEGIN")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "migrations" not in tables:
            raise StoreError(f"{path} is an SQLite file but not a prixfixe store")
        recorded = mig.recorded(conn, CORE_OWNER)
        if mig.pending(CORE_OWNER, recorded, mig.CORE_MIGRATIONS, str(path)):
            raise StoreError(
                f"the store {path} was written by an older prixfixe and needs migrating, which "
                f"a copy does not do (it only reads the file): run `PRIXFIXE_HOME={path.parent} "
                "prixfixe store migrate` (with no store URL in force) first"
            )
        # Bodies and reasons as their bytes, decoded one row at a time: a damaged one is left
        # out by name rather than failing the whole read.
        records = conn.execute(
            f"SELECT {', '.join(_blob(c) for c in _RECORD)} FROM records ORDER BY id"
        ).fetchall()
        history = conn.execute(
            f"SELECT {', '.join(_blob(c) for c in _HISTORY)} FROM history ORDER BY record, gen"
        ).fetchall()
        data = _readable(
            _Source(
                generation=int(conn.execute("SELECT value FROM generation").fetchone()[0]),
                kinds=conn.execute(
                    "SELECT name, owner, schema_version FROM kinds"
                    " WHERE name IN (SELECT kind FROM records) ORDER BY name"
                ).fetchall(),
                records=records,
                history=history,
                owners=tuple(
                    str(r[0])
                    for r in conn.execute(
                        "SELECT owner FROM meta WHERE key = 'prefix' ORDER BY owner"
                    ).fetchall()
                ),
            )
        )
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise StoreError(f"{path} is not a readable prixfixe store: {exc}") from None
    finally:
        conn.close()
    return data


def _blob(column: str) -> str:
    return f"CAST({column} AS BLOB)" if column in _TEXTS else column


#: The columns whose stored text is decoded here (the rest are numbers and names).
_TEXTS = frozenset({"body", "close_reason", "reason"})


def _readable(raw: _Source) -> _Source:
    """`raw` (bodies and reasons as bytes) with them decoded, and each record or history
    version that cannot be decoded left out and named."""
    kinds = {int(r[0]): str(r[1]) for r in raw.records}
    records: list[tuple[Any, ...]] = []
    damaged: dict[int, str] = {}
    for r in raw.records:
        problem = row_problem(
            r[_RECORD.index("body")], r[_RECORD.index("close_reason")], "close reason"
        )
        if problem:
            damaged[int(r[0])] = problem
        else:
            records.append(_decoded(r, _RECORD))
    history: list[tuple[Any, ...]] = []
    versions: list[LeftOut] = []
    with_record: Counter[int] = Counter()
    for h in raw.history:
        record = int(h[0])
        if record in damaged:
            with_record[record] += 1
            continue
        problem = row_problem(h[_HISTORY.index("body")], h[_HISTORY.index("reason")], "reason")
        if problem:
            versions.append(LeftOut(kinds[record], record, int(h[1]), problem))
        else:
            history.append(_decoded(h, _HISTORY))
    left_out = [
        LeftOut(kinds[id_], id_, None, problem, with_record[id_])
        for id_, problem in damaged.items()
    ]
    return replace(
        raw,
        records=records,
        history=history,
        counts=Counter(kinds.values()),
        history_count=len(raw.history),
        left_out=tuple(sorted(left_out + versions, key=lambda d: (d.id, d.gen or 0))),
        max_id=max(kinds, default=0),
    )


def _decoded(row: tuple[Any, ...], columns: Sequence[str]) -> tuple[Any, ...]:
    """A row whose texts are known to decode, with them as text."""
    return tuple(
        v.decode("utf-8") if c in _TEXTS and isinstance(v, bytes) else v
        for c, v in zip(columns, row, strict=True)
    )


def _copy(conn: psycopg.Connection[Any], data: _Source, source: str, target: str) -> CopyReport:
    # The counter's row lock first, as every write takes it: this copy is ordered with them.
    row = conn.execute("SELECT value FROM generation FOR UPDATE").fetchone()
    assert row is not None
    conn.execute(
        "CREATE TEMP TABLE copy_kinds (name TEXT, owner TEXT, schema_version INTEGER)"
        " ON COMMIT DROP"
    )
    conn.execute(
        "CREATE TEMP TABLE copy_records (id BIGINT PRIMARY KEY, kind TEXT, schema_version"
        " INTEGER, body JSONB, created_gen BIGINT, gen BIGINT, closed_gen BIGINT,"
        " close_reason TEXT) ON COMMIT DROP"
    )
    conn.execute(
        "CREATE TEMP TABLE copy_history (record BIGINT, gen BIGINT, op TEXT, body JSONB,"
        " schema_version INTEGER, prev_gen BIGINT, reason TEXT, PRIMARY KEY (record, gen))"
        " ON COMMIT DROP"
    )
    _load(conn, "copy_kinds", ("name", "owner", "schema_version"), data.kinds)
    _load(conn, "copy_records", _RECORD, data.records)
    _load(conn, "copy_history", _HISTORY, data.history)
    _check(conn, data, source, target)

    kinds_written = _count(
        conn,
        "INSERT INTO kinds SELECT name, owner, schema_version FROM copy_kinds s"
        " WHERE NOT EXISTS (SELECT 1 FROM kinds k WHERE k.name = s.name)",
    ) + _count(
        conn,
        "UPDATE kinds k SET schema_version = s.schema_version FROM copy_kinds s"
        " WHERE k.name = s.name AND k.schema_version < s.schema_version",
    )
    records_written = _count(
        conn,
        f"INSERT INTO records ({', '.join(_RECORD)}) SELECT {', '.join(_RECORD)}"
        " FROM copy_records s WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.id = s.id)",
    )
    history_written = _count(
        conn,
        f"INSERT INTO history ({', '.join(_HISTORY)}) SELECT {', '.join(_HISTORY)}"
        " FROM copy_history s WHERE NOT EXISTS"
        " (SELECT 1 FROM history h WHERE h.record = s.record AND h.gen = s.gen)",
    )
    # Later writes keep increasing: the generation, and the ids new records take.
    conn.execute(
        "UPDATE generation SET value = %s WHERE value < %s", (data.generation, data.generation)
    )
    # Counting the file's left-out records too: their ids stay theirs, for a repaired copy.
    conn.execute(
        "SELECT setval(pg_get_serial_sequence('records', 'id'), m)"
        " FROM (SELECT greatest(max(id), %s) AS m FROM records) t WHERE m > coalesce("
        "pg_sequence_last_value(pg_get_serial_sequence('records', 'id')::regclass), 0)",
        (data.max_id,),
    )
    kinds, history = _verify(conn, data, source, target)
    row = conn.execute("SELECT value FROM generation").fetchone()
    assert row is not None
    return CopyReport(
        source=source,
        target=target,
        source_generation=data.generation,
        target_generation=int(row[0]),
        records_written=records_written,
        history_written=history_written,
        kinds_written=kinds_written,
        kinds=kinds,
        history_source=data.history_count,
        history_target=history,
        not_copied=data.owners,
        left_out=data.left_out,
        history_left_out=data.history_count - len(data.history),
    )


def _load(
    conn: psycopg.Connection[Any], table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]
) -> None:
    with conn.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as cp:
        for r in rows:
            cp.write_row(r)


def _count(conn: psycopg.Connection[Any], statement: str) -> int:
    with conn.cursor() as cur:
        cur.execute(statement)
        return max(cur.rowcount, 0)


def _check(conn: psycopg.Connection[Any], data: _Source, source: str, target: str) -> None:
    """Refuse (before anything is written) a database whose records are not this file's."""
    clash = conn.execute(
        "SELECT s.name, s.owner, k.owner FROM copy_kinds s JOIN kinds k USING (name)"
        " WHERE k.owner <> s.owner ORDER BY s.name LIMIT 1"
    ).fetchone()
    if clash is not None:
        _conflict(
            target, f"kind {clash[0]!r} belongs to {clash[2]!r} there, to {clash[1]!r} in {source}"
        )
    record_cols = ", ".join(f"r.{c}" for c in _RECORD[1:])
    copy_cols = ", ".join(f"s.{c}" for c in _RECORD[1:])
    which = ", ".join(f"r.{c} IS DISTINCT FROM s.{c}" for c in _RECORD[1:])
    differs = conn.execute(
        f"SELECT s.id, s.kind, r.kind, {which}"
        " FROM copy_records s JOIN records r USING (id)"
        f" WHERE ({record_cols}) IS DISTINCT FROM ({copy_cols}) ORDER BY s.id LIMIT 1"
    ).fetchone()
    if differs is not None:
        what = [c for c, d in zip(_RECORD[1:], differs[3:], strict=True) if d]
        _conflict(
            target,
            f"it holds a different record {differs[0]} ({differs[2]} there, {differs[1]} in "
            f"{source}; differs in {', '.join(what)})",
        )
    history_cols = _HISTORY[2:]
    differs = conn.execute(
        "SELECT s.record, s.gen FROM copy_history s JOIN history h USING (record, gen)"
        f" WHERE ({', '.join(f'h.{c}' for c in history_cols)}) IS DISTINCT FROM"
        f" ({', '.join(f's.{c}' for c in history_cols)}) ORDER BY s.record, s.gen LIMIT 1"
    ).fetchone()
    if differs is not None:
        _conflict(
            target,
            f"record {differs[0]}'s history at generation {differs[1]} differs from {source}'s",
        )
    other = conn.execute(
        "SELECT r.kind, r.id FROM records r WHERE r.created_gen <= %s"
        " AND NOT EXISTS (SELECT 1 FROM copy_records s WHERE s.id = r.id)"
        " AND NOT r.id = ANY(%s) ORDER BY r.id LIMIT 1",  # the file's, left out as damaged
        (data.generation, [d.id for d in data.left_out if d.gen is None]),
    ).fetchone()
    if other is not None:
        _conflict(
            target,
            f"it holds {other[0]} record {other[1]}, which {source} does not have: records of "
            "another store",
        )


def _verify(
    conn: psycopg.Connection[Any], data: _Source, source: str, target: str
) -> tuple[tuple[KindCount, ...], int]:
    """Count, per kind, the database's records exactly as in the file, and the history entries
    likewise; anything short of the file's counts rolls the copy back."""
    same = " AND ".join(f"r.{c} IS NOT DISTINCT FROM s.{c}" for c in _RECORD)
    there = dict(
        conn.execute(
            f"SELECT s.kind, count(*) FROM copy_records s JOIN records r ON {same} GROUP BY s.kind"
        ).fetchall()
    )
    left = Counter(d.kind for d in data.left_out if d.gen is None)
    kinds = tuple(
        KindCount(k, n, int(there.get(k, 0)), left[k]) for k, n in sorted(data.counts.items())
    )
    same = " AND ".join(f"h.{c} IS NOT DISTINCT FROM s.{c}" for c in _HISTORY)
    row = conn.execute(f"SELECT count(*) FROM copy_history s JOIN history h ON {same}").fetchone()
    history = int(row[0]) if row is not None else 0
    short = [k for k in kinds if k.target + k.left_out != k.source]
    if short or history != len(data.history):
        what = ", ".join(f"{k.kind}: {k.target} of {k.source - k.left_out}" for k in short) or (
            f"history: {history} of {len(data.history)}"
        )
        raise StoreError(
            f"the copy from {source} into {target} did not verify ({what}); nothing was written"
        )
    return kinds, history


def _conflict(target: str, why: str) -> NoReturn:
    raise StoreError(
        f"refusing to copy into {target}: {why}. Nothing was written; copy into a database "
        "of its own (or one an earlier copy of this same file filled)"
    )


def _fault(url: str, exc: psycopg.Error, message: str) -> NoReturn:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    try:
        parts = conninfo_to_dict(url)
        server = f"{parts.get('host') or 'localhost'}:{parts.get('port') or 5432}"
    except psycopg.Error:
        server = "?"
    location = redacted(url)
    raise StoreFaultError(
        message.format(server=server, location=location, detail=detail), location=location
    ) from None


__all__ = ["CopyReport", "KindCount", "LeftOut", "copy_store", "read_source"]
