"""A quick, bounded integrity check of a store file, for `prixfixe doctor`.

SQLite's `PRAGMA quick_check` reads every page and checks the b-trees' structure (not that
each index matches its table, which `integrity_check` adds at several times the cost). It is
bounded twice: it stops after `max_problems` findings, and a progress handler interrupts it
past `time_limit` seconds, reported as "unfinished", never as healthy.

The file is only read: with no WAL beside it, the main file is the whole database and is read
`immutable` (nothing is created beside it); with one, it is read as SQLite reads it, main file
plus WAL (`mode=ro`).
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from prixfixe.store.faults import primary_code, recovery_advice

#: How long doctor's check may read the file: seconds of a few hundred MB on a laptop disk.
DEFAULT_TIME_LIMIT_S = 10.0
DEFAULT_MAX_PROBLEMS = 10


@dataclass(frozen=True)
class Integrity:
    """`status`: "ok", "damaged", "unfinished" (the time limit ran out), "unreadable" (cannot
    be opened or is not an SQLite file) or "absent" (no file yet)."""

    status: str
    problems: list[str] = field(default_factory=list)
    advice: str = ""
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "problems": list(self.problems),
            "advice": self.advice,
            "seconds": round(self.seconds, 3),
        }


def check_integrity(
    path: Path,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT_S,
    max_problems: int = DEFAULT_MAX_PROBLEMS,
) -> Integrity:
    """Run a bounded `PRAGMA quick_check` on the store at `path`, writing nothing."""
    if not path.is_file() or path.stat().st_size == 0:
        return Integrity("absent")
    started = time.monotonic()
    wal = path.with_name(path.name + "-wal")
    live = wal.exists() and wal.stat().st_size > 0
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
        return Integrity("ok", seconds=time.monotonic() - started)
    return _damaged(path, problems, started)


def _damaged(path: Path, problems: list[str], started: float) -> Integrity:
    return Integrity("damaged", problems, recovery_advice(path) + ".", time.monotonic() - started)


def _unreadable(path: Path, exc: sqlite3.Error, started: float) -> Integrity:
    return Integrity(
        "unreadable",
        [str(exc)],
        f"Check that {path} is readable by this user and is a prixfixe store; "
        + recovery_advice(path)
        + ".",
        time.monotonic() - started,
    )
