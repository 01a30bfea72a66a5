"""What can go wrong with the store's file itself — a full disk, a read-only file, a damaged
file, a failing disk — as errors a person can act on: each names the file and says what to do.

SQLite reports these as `sqlite3.OperationalError` / `DatabaseError` with an extended error
code; `fault` maps the code to one of the errors below (or to nothing, for errors that are
bugs and keep their traceback). The store raises them from its one write path and its one
read path, so no raw `OperationalError` reaches a tool result or a terminal.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from prixfixe.errors import (
    StoreCorruptError,
    StoreFaultError,
    StoreFullError,
    StoreIOError,
    StoreReadOnlyError,
)

#: The largest id and generation SQLite stores (a signed 64-bit integer): a bound for every
#: integer that comes from outside and ends up a bound parameter.
MAX_SQLITE_INT = 2**63 - 1
MIN_SQLITE_INT = -(2**63)

# Primary result codes (sqlite3.h); the low byte of an extended code.
_IOERR, _CORRUPT, _CANTOPEN, _FULL, _READONLY, _NOTADB = 10, 11, 14, 13, 8, 26
_BUSY, _LOCKED = 5, 6


def primary_code(exc: sqlite3.Error) -> int:
    return int(getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF


def busy(exc: sqlite3.Error) -> bool:
    return primary_code(exc) in (_BUSY, _LOCKED)


def recovery_advice(path: Path | str) -> str:
    return (
        f"Stop prixfixe and keep a copy of {path} (with any -wal file beside it), then either "
        f"restore a backup or recover what is readable: `sqlite3 {path} .recover | sqlite3 "
        f"{path}.recovered`, check it with `prixfixe doctor` after moving it into place"
    )


def read_only_message(path: Path | str, *, writing: bool = True) -> str:
    head = "nothing was written. " if writing else ""
    return (
        f"the store {path} is read-only for this process (the file's or its directory's "
        f"permissions, or a read-only filesystem); {head}Reading still works. To write, make "
        f"the file and its directory writable by this user (see `ls -l {path}`) or point "
        "PRIXFIXE_HOME at a writable directory"
    )


def empty_message(path: Path | str) -> str:
    """An empty store file: prixfixe never leaves one (a new store appears whole), so it is a
    truncation or a failed copy, not a new store to start in."""
    return (
        f"the store {path} is empty (0 bytes, no -wal beside it), which a store prixfixe made "
        "never is: it was truncated or replaced (a failed copy or sync, a disk that filled). "
        "Nothing was written and it was not taken for a new store. If it held records, restore "
        "a backup of it; to start a new, empty store, delete the file"
    )


def os_fault(exc: OSError, path: Path | str) -> StoreFaultError:
    """The error for a system call on the store's files that failed (making a new store)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return StoreFullError(
            f"the store {path} cannot be created: the disk holding it has no space left "
            f"({exc.strerror}); nothing was written. Free space on that disk and try again",
            file=str(path),
        )
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return StoreReadOnlyError(read_only_message(path), file=str(path))
    return StoreIOError(
        f"cannot create the store {path} ({exc.strerror or exc}); nothing was written. Check "
        "the disk and that this user may write the directory, then try again",
        file=str(path),
    )


def fault(exc: sqlite3.Error, path: Path | str, *, writing: bool) -> StoreFaultError | None:
    """The error a person should see for `exc`, raised on `path`; None when `exc` is not a
    fault of the file (a busy database, a bug), so the caller re-raises it as it is."""
    code = primary_code(exc)
    nothing = "nothing was written. " if writing else ""
    if code == _FULL:
        return StoreFullError(
            f"the store {path} is full: the disk holding it has no space left (or the "
            f"store reached its size limit); {nothing}Free space on that disk and try again. "
            "Records already kept are intact and can still be read",
            file=str(path),
        )
    if code == _READONLY:
        return StoreReadOnlyError(read_only_message(path, writing=writing), file=str(path))
    if code in (_CORRUPT, _NOTADB):
        return StoreCorruptError(
            f"the store {path} is damaged ({exc}); {nothing}{recovery_advice(path)}",
            file=str(path),
        )
    if code == _IOERR:
        return StoreIOError(
            f"the store {path} could not be {'written' if writing else 'read'} ({exc}: is the "
            f"disk full, failing or gone?); {nothing}Check the disk and free space, then try "
            "again",
            file=str(path),
        )
    if code == _CANTOPEN:
        return StoreIOError(
            f"cannot open the store {path} ({exc}): check that its directory exists and that "
            "this user may read it (and write it, to create the store)",
            file=str(path),
        )
    return None
