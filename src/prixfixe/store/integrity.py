"""A quick, bounded integrity check of a store file, for `prixfixe doctor`.

SQLite's `PRAGMA quick_check` reads every page and checks the b-trees' structure (not that
each index matches its table, which `integrity_check` adds at several times the cost). It is
bounded twice: it stops after `max_problems` findings, and a progress handler interrupts it
past `time_limit` seconds, reported as "unfinished", never as healthy.

After a sound `quick_check` it reads what the store serves: each record's body must decode
(UTF-8, then a JSON object), checked in id order up to `max_records` records or the time left,
saying how many were checked of how many; each damaged record is named by kind and id. It also
looks at the WAL beside the file: its size (a WAL far past SQLite's automatic checkpoint size
means checkpoints are not finishing), and whether this user may write the -wal, the -shm, the
file and its directory (a checkpoint, and any write, needs all four). An empty file (0 bytes,
no WAL) is reported as "empty": prixfixe never leaves one, and refuses to open it.

The file is only read: with no WAL beside it, the main file is the whole database and is read
`immutable` (nothing is created beside it); with one, it is read as SQLite reads it, main file
plus WAL (`mode=ro`).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prixfixe.store.faults import empty_message, primary_code, recovery_advice
from prixfixe.store.records import body_problem, text_problem

#: How long doctor's check may read the file: seconds of a few hundred MB on a laptop disk.
DEFAULT_TIME_LIMIT_S = 10.0
DEFAULT_MAX_PROBLEMS = 10
#: How many records' bodies doctor decodes at most (about a second on a laptop).
DEFAULT_MAX_RECORDS = 100_000
#: A WAL larger than this is reported: SQLite checkpoints at about 4 MB, so a WAL this big
#: means checkpoints are not finishing (a reader holding an old snapshot, an unwritable file).
WAL_WARN_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Integrity:
    """`status`: "ok", "damaged", "unfinished" (the time limit ran out), "unreadable" (cannot
    be opened or is not an SQLite file) or "absent" (no file yet)."""

    status: str
    problems: list[str] = field(default_factory=list)
    advice: str = ""
    seconds: float = 0.0
    #: The bodies checked: {"checked", "of", "complete", "damaged": [{"kind", "id", "problem"}]}.
    records: dict[str, Any] = field(default_factory=dict)
    #: The WAL beside the file: {"present", "bytes", "shm", "writable", "warnings"}.
    wal: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "problems": list(self.problems),
            "advice": self.advice,
            "seconds": round(self.seconds, 3),
            "records": dict(self.records),
            "wal": dict(self.wal),
        }


def check_integrity(
    path: Path,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT_S,
    max_problems: int = DEFAULT_MAX_PROBLEMS,
    max_records: int = DEFAULT_MAX_RECORDS,
) -> Integrity:
    """Run a bounded `PRAGMA quick_check` on the store at `path`, then decode its records'
    bodies (bounded too) and look at its WAL, writing nothing."""
    if not path.is_file():
        return Integrity("absent")
    started = time.monotonic()
    wal = path.with_name(path.name + "-wal")
    live = wal.exists() and wal.stat().st_size > 0
    health = wal_health(path)
    if path.stat().st_size == 0 and not live:
        return Integrity(
            "empty",
            [empty_message(path)],
            f"Restore a backup of {path}, or delete it to start a new store",
            wal=health,
        )
    uri = f"{path.resolve().as_uri()}?mode=ro{'' if live else '&immutable=1'}"
    deadline = started + time_limit
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=1.0)
    except sqlite3.Error as exc:
        return _unreadable(path, exc, started)
    try:
        # Non-zero from the handler interrupts the statement (SQLITE_INTERRUPT).
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        rows = conn.execute(f"PRAGMA quick_check({max(1, int(max_problems))})").fetchall()
        records = (
            _bodies(conn, deadline, max_records, max_problems)
            if [str(r[0]) for r in rows] == ["ok"]
            else {}
        )
    except sqlite3.Error as exc:
        if primary_code(exc) == 9:  # SQLITE_INTERRUPT: our time limit
            return Integrity(
                "unfinished",
                [f"the check did not finish within {time_limit:g} s"],
                f"Run `sqlite3 {path} 'PRAGMA quick_check'` to check the whole file",
                time.monotonic() - started,
            )
        if primary_code(exc) in (14, 26):  # SQLITE_CANTOPEN, SQLITE_NOTADB
            return _unreadable(path, exc, started)
        return _damaged(path, [str(exc)], started)
    finally:
        conn.close()
    problems = [str(r[0]) for r in rows]
    if problems == ["ok"]:
        bad = records.get("damaged", [])
        if bad:
            named = [damaged_name(d) for d in bad]
            return _damaged(path, named, started, records, health)
        return Integrity("ok", seconds=time.monotonic() - started, records=records, wal=health)
    return _damaged(path, problems, started, wal=health)


def _bodies(
    conn: sqlite3.Connection, deadline: float, max_records: int, max_damaged: int
) -> dict[str, Any]:
    """Decode records' bodies and close reasons in id order, then their history's bodies and
    reasons, up to `max_records` rows in all or the deadline; how many of each were checked,
    of how many, and the damaged ones (at most `max_damaged` named; a version in a record's
    history also by its generation, `gen`)."""
    names = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
    if "records" not in names:
        return {}
    sources = [
        (
            "records",
            "SELECT id, kind, NULL, CAST(body AS BLOB), CAST(close_reason AS BLOB)"
            " FROM records ORDER BY id",
            "close reason",
        )
    ]
    if "history" in names:
        sources.append(
            (
                "history",
                "SELECT h.record, r.kind, h.gen, CAST(h.body AS BLOB), CAST(h.reason AS BLOB)"
                " FROM history h JOIN records r ON r.id = h.record ORDER BY h.record, h.gen",
                "reason",
            )
        )
    totals = {
        t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t, _, _ in sources
    }
    checked = dict.fromkeys(totals, 0)
    damaged: list[dict[str, Any]] = []
    stopped = ""
    for table, sql, beside in sources:
        for id_, kind, gen, body, text in _rows(conn, sql):
            if sum(checked.values()) >= max_records:
                stopped = f"stopped at the limit of {max_records} records"
            elif time.monotonic() > deadline:
                stopped = "stopped at the time limit"
            if stopped:
                break
            checked[table] += 1
            problem = row_problem(body, text, beside)
            if problem and len(damaged) < max_damaged:
                where = {} if gen is None else {"gen": int(gen)}
                damaged.append({"kind": str(kind), "id": int(id_), **where, "problem": problem})
        if stopped:
            break
    return {
        "checked": checked["records"],
        "of": totals["records"],
        "history_checked": checked.get("history", 0),
        "history_of": totals.get("history", 0),
        "complete": checked == totals,
        "stopped": stopped,
        "damaged": damaged,
    }


def _rows(conn: sqlite3.Connection, sql: str) -> Iterator[tuple[Any, ...]]:
    cur = conn.execute(sql)
    while batch := cur.fetchmany(500):
        yield from batch


def row_problem(body: bytes | None, text: bytes | None, beside: str) -> str:
    """What is wrong with a stored body (None: a close's history entry has none) or the text
    beside it, named `beside` ("close reason"); "" when both read."""
    if body is not None:
        decoded, problem = body_problem(body)
        if decoded is None:
            return problem
    return text_problem(text, beside)[1]


def damaged_name(d: dict[str, Any]) -> str:
    """A damaged record (or a version in its history) as doctor names it."""
    where = f" (its version of generation {d['gen']}, in its history)" if "gen" in d else ""
    return f"{d['kind']} {d['id']}{where}: {d['problem']}"


def wal_health(path: Path) -> dict[str, Any]:
    """The WAL beside `path`: its size, its -shm, and whether this user may write what a
    checkpoint (or any write) needs: the -wal, the -shm, the file and its directory."""
    wal = path.with_name(path.name + "-wal")
    shm = path.with_name(path.name + "-shm")
    if not wal.exists():
        return {"present": False}
    size = wal.stat().st_size
    shm_state = (
        "absent"
        if not shm.exists()
        else "read-write"
        if os.access(shm, os.R_OK | os.W_OK)
        else "read-only"
        if os.access(shm, os.R_OK)
        else "unreadable"
    )
    unwritable = [
        str(p)
        for p in (path, wal, path.parent, *((shm,) if shm.exists() else ()))
        if not os.access(p, os.W_OK)
    ]
    warnings = []
    if size > WAL_WARN_BYTES:
        warnings.append(
            f"the WAL {wal} holds {size // (1024 * 1024)} MB: checkpoints are not finishing "
            "(a process holding an old read open, or files it cannot write); stop prixfixe and "
            "open the store once (`prixfixe store kinds`) to checkpoint it"
        )
    if unwritable:
        warnings.append(
            "no checkpoint (and no write) is possible: this user cannot write "
            + ", ".join(unwritable)
        )
    if shm_state in ("read-only", "unreadable"):
        warnings.append(f"the -shm {shm} is {shm_state} for this user")
    return {
        "present": True,
        "bytes": size,
        "shm": shm_state,
        "writable": not unwritable,
        "warnings": warnings,
    }


def _damaged(
    path: Path,
    problems: list[str],
    started: float,
    records: dict[str, Any] | None = None,
    wal: dict[str, Any] | None = None,
) -> Integrity:
    return Integrity(
        "damaged",
        problems,
        recovery_advice(path) + ".",
        time.monotonic() - started,
        records or {},
        wal or {},
    )


def _unreadable(path: Path, exc: sqlite3.Error, started: float) -> Integrity:
    return Integrity(
        "unreadable",
        [str(exc)],
        f"Check that {path} is readable by this user and is a prixfixe store; "
        + recovery_advice(path)
        + ".",
        time.monotonic() - started,
    )
