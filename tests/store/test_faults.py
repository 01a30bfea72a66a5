"""Faults of the store's file: a full disk, a read-only file, a disk full in the middle of a
checkpoint. Each is made real (SQLite's own size limit, a kernel file-size limit in a child
process, file permissions or the immutable attribute) and checked where it takes effect: what
was kept is intact and readable, a refused write wrote nothing, the error names the file and
says what to do. (A writer killed mid-write: tests/store/test_durability.py.)"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from prixfixe.errors import (
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreIOError,
    StoreReadOnlyError,
)
from prixfixe.store.sqlite import SQLiteStore
from tests.conftest import AppFactory
from tests.store.conftest import KINDS, StoreFactory

REPO = Path(__file__).resolve().parents[2]
#: The file-size limit (bytes) the child processes run under: a disk that fills up.
LIMIT = 200_000


def _digest(directory: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.iterdir())
        if p.is_file()
    }


def _put(store: SQLiteStore, n: int, size: int = 50) -> list[int]:
    return [
        store.put("reminder", {"text": f"{i}:" + "x" * size, "due": "2026-01-01"}).id
        for i in range(n)
    ]


# -- a full disk ------------------------------------------------------------------------------


def test_a_full_store_refuses_the_write_clearly_keeps_the_rest_and_recovers(
    store: SQLiteStore, db_path: Path
) -> None:
    kept = _put(store, 5)
    generation = store.generation()
    writer = store._conn()
    pages = writer.execute("PRAGMA page_count").fetchone()[0]
    # SQLite's own size limit: growing the file past it is SQLITE_FULL, as on a full disk.
    writer.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(StoreFullError) as caught:
        _put(store, 50, size=1500)
    message = caught.value.message
    assert str(db_path) in message
    assert "nothing was written" in message.lower()
    assert "Free space" in message
    # Every write acknowledged before is there; the refused one left no trace.
    full_at = store.generation()
    assert full_at >= generation
    assert [store.get("reminder", i).record["text"][:2] for i in kept] == [
        f"{n}:" for n in range(5)
    ]
    total = len(store.query("reminder", limit=500).records)
    assert total == full_at  # one record per acknowledged put, none half-written
    # Space again: the same open store writes on.
    writer.execute("PRAGMA max_page_count = 1073741823")
    written = store.put("reminder", {"text": "after", "due": "2026-01-01"})
    assert written.generation == full_at + 1
    assert store.read(lambda c: c.execute("PRAGMA integrity_check").fetchone()[0]) == "ok"


_FILL = textwrap.dedent(
    """
    import os, resource, signal, sys
    from dataclasses import replace
    from pathlib import Path
    from prixfixe.store.sqlite import SQLiteStore
    from prixfixe.store.tools import BUILTIN_KINDS
    kinds = {k.name: replace(k, owner="prixfixe.default_plugins.store") for k in BUILTIN_KINDS}
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, as on a full disk
    store = SQLiteStore.open(Path(sys.argv[1]), kinds)
    # Checkpoint often, so the file-size limit is met part-way through copying the WAL.
    store._conn().execute("PRAGMA wal_autocheckpoint = 20")
    limit = int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    n = 0
    try:
        while True:
            written = store.put("reminder", {"text": f"{n}:" + "x" * 1500, "due": "2026-01-01"})
            print(written.id, n, flush=True)
            n += 1
    except Exception as exc:
        print("refused", type(exc).__name__, flush=True)
        print(str(exc), file=sys.stderr, flush=True)
    os._exit(0)  # no clean close: the process ends as one on a full disk may
    """
)


def _whole_on_its_own(path: Path) -> bool:
    """Is the main file, read without its WAL (`immutable`), a sound database?"""
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)) as conn:
            return bool(conn.execute("PRAGMA quick_check").fetchone()[0] == "ok")
    except sqlite3.DatabaseError:
        return False


def _fill(path: Path, limit: int) -> tuple[dict[int, int], str, str]:
    proc = subprocess.run(
        [sys.executable, "-c", _FILL, str(path), str(limit)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        check=True,
    )
    *lines, last = proc.stdout.strip().splitlines()
    committed = {int(a): int(b) for a, b in (line.split() for line in lines)}
    return committed, last, proc.stderr


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, int], str, str]:
    """A store a child process filled until the kernel's file-size limit stopped it."""
    path = tmp_path_factory.mktemp("filled") / "store.sqlite3"
    committed, last, stderr = _fill(path, LIMIT)
    return path, committed, last, stderr


def _copy(filled: Path, db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    for part in filled.parent.iterdir():
        shutil.copy(part, db_path.parent / part.name.replace(filled.name, db_path.name))


def test_a_store_left_by_a_disk_full_mid_checkpoint_reopens_with_every_record(
    filled: tuple[Path, dict[int, int], str, str], db_path: Path
) -> None:
    _copy(filled[0], db_path)
    committed, last, stderr = filled[1:]
    stderr = stderr.replace(str(filled[0]), str(db_path))
    # The kernel refused to grow the files: the store said so in its own words.
    assert last.split()[1] in {StoreFullError.__name__, StoreIOError.__name__}, last
    assert str(db_path) in stderr
    assert "nothing was written" in stderr
    assert len(committed) > 50
    # The state the issue met: the main file alone is half-copied; only with its WAL is it
    # the database. An immutable read (the main file only) says it is malformed.
    assert db_path.with_name("store.sqlite3-wal").stat().st_size > 0
    assert not _whole_on_its_own(db_path)

    store = SQLiteStore.open(db_path, KINDS)
    try:
        for record_id, n in committed.items():
            assert store.get("reminder", record_id).record["text"].startswith(f"{n}:")
        assert store.generation() == len(committed)
        assert store.read(lambda c: c.execute("PRAGMA integrity_check").fetchone()[0]) == "ok"
        store.put("reminder", {"text": "after the disk emptied", "due": "2026-01-01"})
    finally:
        store.close()
    # The main file is whole again on its own, with every record.
    assert _whole_on_its_own(db_path)
    with closing(sqlite3.connect(f"{db_path.as_uri()}?mode=ro&immutable=1", uri=True)) as conn:
        assert conn.execute("SELECT count(*) FROM records").fetchone()[0] == len(committed) + 1


_STILL_FULL = textwrap.dedent(
    """
    import resource, signal, sys
    from dataclasses import replace
    from pathlib import Path
    from prixfixe.store.sqlite import SQLiteStore
    from prixfixe.store.tools import BUILTIN_KINDS
    kinds = {k.name: replace(k, owner="prixfixe.default_plugins.store") for k in BUILTIN_KINDS}
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    store = SQLiteStore.open(Path(sys.argv[1]), kinds)
    print(store.generation(), len(store.query("reminder", limit=500).records))
    try:
        store.put("reminder", {"text": "x" * 1500, "due": "2026-01-01"})
    except Exception as exc:
        print(type(exc).__name__)
        print(exc, file=sys.stderr)
    store.close()
    """
)


def test_a_store_on_a_disk_that_is_still_full_opens_for_reading(
    filled: tuple[Path, dict[int, int], str, str], db_path: Path
) -> None:
    _copy(filled[0], db_path)
    committed = filled[1]
    proc = subprocess.run(
        [sys.executable, "-c", _STILL_FULL, str(db_path), str(LIMIT)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        check=True,
    )
    counts, refused = proc.stdout.split("\n")[:2]
    assert counts.split() == [str(len(committed)), str(len(committed))]
    assert refused in {StoreFullError.__name__, StoreIOError.__name__}
    assert str(db_path) in proc.stderr
    assert "Traceback" not in proc.stderr


# -- a read-only store --------------------------------------------------------------------------


@contextmanager
def read_only(*paths: Path) -> Iterator[None]:
    """Make `paths` unwritable for this process. chmod does not stop root, so as root the
    immutable attribute (chattr +i), which does, is used; skip only if neither is available."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in paths}
        for p in paths:
            p.chmod(0o555 if p.is_dir() else 0o444)
        try:
            yield
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
        return
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("running as root, where chmod does not stop writes, and chattr is missing")
    done: list[Path] = []
    try:
        for p in paths:
            result = subprocess.run([chattr, "+i", str(p)], capture_output=True, check=False)
            if result.returncode != 0:
                pytest.skip(
                    "running as root, where chmod does not stop writes, and this filesystem "
                    f"has no immutable attribute: {result.stderr.decode().strip()}"
                )
            done.append(p)
        yield
    finally:
        for p in done:
            subprocess.run([chattr, "-i", str(p)], check=True)


@pytest.mark.parametrize("directory_too", [False, True], ids=["file", "file-and-directory"])
def test_a_read_only_store_reads_refuses_writes_by_name_and_writes_again_when_it_can(
    open_store: StoreFactory, db_path: Path, directory_too: bool
) -> None:
    first = open_store()
    kept = _put(first, 3)
    first.close()
    before = _digest(db_path.parent)
    paths = (db_path, db_path.parent) if directory_too else (db_path,)
    with read_only(*paths):
        store = open_store()
        # Reads work, through the kinds' indexes and cursors as always.
        page = store.query("reminder", where={"due": "2026-01-01"}, order_by="due", limit=2)
        assert [r.id for r in page.records] == kept[:2]
        rest = store.query(
            "reminder", where={"due": "2026-01-01"}, order_by="due", cursor=page.next_cursor
        )
        assert [r.id for r in rest.records] == kept[2:]
        assert store.get("reminder", kept[0]).record["text"].startswith("0:")
        with pytest.raises(StoreReadOnlyError) as caught:
            store.put("reminder", {"text": "refused", "due": "2026-01-01"})
        with pytest.raises(StoreReadOnlyError):
            store.close_record("reminder", kept[0])
        assert str(db_path) in caught.value.message
        assert "nothing was written" in caught.value.message
        assert "writable" in caught.value.message
        assert _digest(db_path.parent)[db_path.name] == before[db_path.name]
        assert store.generation() == 3
    # Writable again: the same open store takes up writing, and sees what it wrote.
    written = store.put("reminder", {"text": "now it can", "due": "2026-01-01"})
    assert written.generation == 4
    assert store.get("reminder", written.id).record["text"] == "now it can"
    assert len(store.query("reminder").records) == 4


_LEAVE_WAL = textwrap.dedent(
    """
    import os, sys
    from dataclasses import replace
    from pathlib import Path
    from prixfixe.store.sqlite import SQLiteStore
    from prixfixe.store.tools import BUILTIN_KINDS
    kinds = {k.name: replace(k, owner="prixfixe.default_plugins.store") for k in BUILTIN_KINDS}
    store = SQLiteStore.open(Path(sys.argv[1]), kinds)
    for i in range(3):
        store.put("reminder", {"text": f"kept {i}", "due": "2026-01-01"})
    os._exit(0)  # no close: the -wal (and -shm) stay, as a live or killed server leaves them
    """
)


def test_a_read_only_store_with_a_wal_writes_again_in_the_same_process(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    subprocess.run(
        [sys.executable, "-c", _LEAVE_WAL, str(db_path)], cwd=REPO, check=True, timeout=60
    )
    wal, shm = (db_path.with_name(db_path.name + s) for s in ("-wal", "-shm"))
    assert wal.stat().st_size > 0
    assert shm.exists()
    # The file and its -wal and -shm read-only (`chmod a-w store.sqlite3*`): SQLite's reader
    # can open the -shm only for reading, and keeps it that way while any connection is open.
    with read_only(db_path, wal, shm):
        store = SQLiteStore.open(db_path, KINDS)
        try:
            assert [r.record["text"] for r in store.query("reminder").records] == [
                f"kept {i}" for i in range(3)
            ]
            with pytest.raises(StoreReadOnlyError):
                store.put("reminder", {"text": "refused", "due": "2026-01-01"})
        except BaseException:
            store.close()
            raise
    try:
        # Writable again: the same open store takes up writing, and reads what it wrote.
        written = store.put("reminder", {"text": "now it can", "due": "2026-01-01"})
        assert written.generation == 4
        assert store.get("reminder", written.id).record["text"] == "now it can"
        assert len(store.query("reminder").records) == 4
    finally:
        store.close()
    with closing(sqlite3.connect(db_path)) as conn:
        assert conn.execute("SELECT count(*) FROM records").fetchone()[0] == 4


def test_a_read_only_store_that_needs_a_migration_is_one_clear_error(
    open_store: StoreFactory, db_path: Path
) -> None:
    from prixfixe.declarations.kinds import StoreMigration

    open_store().close()
    notes = StoreMigration(name="0001_notes", statements=("CREATE TABLE {prefix}notes (x)",))
    with read_only(db_path):
        store = open_store(KINDS, {"notes_plugin": [notes]})
        assert store.query("reminder").records == []
        with pytest.raises(StoreError, match="migration '0001_notes' needs a write"):
            store.slice("notes_plugin")
    # Writable again: the plugin's migration runs when its slice is next asked for.
    store.slice("notes_plugin").execute("INSERT INTO {prefix}notes VALUES (1)")
    assert store.slice("notes_plugin").query("SELECT x FROM {prefix}notes") == [(1,)]


@pytest.mark.anyio
async def test_the_morning_routine_reads_a_read_only_store_and_says_why_it_keeps_no_report(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = make_app()
    app.store.put("reminder", {"text": "dentist", "due": dt.date.today().isoformat()})
    app.close_store()
    path = tmp_path / "home" / "store.sqlite3"
    with read_only(path):
        app = make_app()
        results: list[Any] = []

        async def on_step(done: int, total: int, result: Any) -> None:
            results.append(result)

        with pytest.raises(StoreReadOnlyError) as caught:
            await app.routines.run(app.routines.get("morning"), lambda: app.store, on_step=on_step)
        app.close_store()
    assert [r.status for r in results] == ["ok"] * len(results)
    reminders = next(r for r in results if r.type == "reminders")
    assert "dentist" in json.dumps(reminders.data)
    assert str(path) in caught.value.message


def test_the_morning_routine_on_a_read_only_store_prints_no_traceback(tmp_path: Path) -> None:
    home = tmp_path / "ro-home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    env["PRIXFIXE_HOME"] = str(home)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "prixfixe",
            "store",
            "put",
            "reminder",
            "--field",
            "text=dentist",
            "--field",
            f"due={dt.date.today().isoformat()}",
        ],
        env=env,
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=60,
    )
    with read_only(home / "store.sqlite3"):
        proc = subprocess.run(
            [sys.executable, "-m", "prixfixe", "run", "morning"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd=tmp_path,
            check=False,
        )
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1
    assert str(home / "store.sqlite3") in proc.stderr
    assert "read-only" in proc.stderr


# -- a damaged file -----------------------------------------------------------------------------


def damage(path: Path, records: int = 400) -> None:
    """A store of `records` reminders whose table page holding record 200 is overwritten:
    the schema and most pages are sound, so it opens; reading that page fails."""
    store = SQLiteStore.open(path, KINDS)
    store.put_many(
        "reminder",
        [{"text": f"marker-{i:04d} " + "x" * 400, "due": "2026-01-01"} for i in range(records)],
    )
    store.close()
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    at = data.index(b"marker-0200")
    start = at - at % page_size
    data[start : start + 8] = b"\xff" * 8  # the page header: no valid b-tree page type
    path.write_bytes(bytes(data))


def test_a_damaged_page_met_by_a_query_is_a_clear_error_naming_the_file(db_path: Path) -> None:
    damage(db_path)
    store = SQLiteStore.open(db_path, KINDS)
    try:
        assert store.get("reminder", 1).record["text"].startswith("marker-0000")
        with pytest.raises(StoreCorruptError) as caught:
            store.query("reminder", limit=500)  # all 400: the damaged page among them
        assert str(db_path) in caught.value.message
        assert ".recover" in caught.value.message
        assert "prixfixe doctor" in caught.value.message
    finally:
        store.close()


# -- an empty file ------------------------------------------------------------------------------


def test_an_empty_store_file_is_refused_by_name_not_taken_for_a_new_store(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(b"")  # what a failed copy or sync, or a truncation, leaves
    with pytest.raises(StoreCorruptError) as caught:
        SQLiteStore.open(db_path, KINDS)
    message = caught.value.message
    assert str(db_path) in message
    assert "empty (0 bytes" in message
    assert "delete" in message
    assert "backup" in message
    assert "nothing was written" in message.lower()
    assert [p.name for p in db_path.parent.iterdir()] == [db_path.name]
    assert db_path.stat().st_size == 0


_CREATE_ON_A_FULL_DISK = textwrap.dedent(
    """
    import resource, signal, sys
    from dataclasses import replace
    from pathlib import Path
    from prixfixe.store.sqlite import SQLiteStore
    from prixfixe.store.tools import BUILTIN_KINDS
    kinds = {k.name: replace(k, owner="prixfixe.default_plugins.store") for k in BUILTIN_KINDS}
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))  # less than one page
    try:
        SQLiteStore.open(Path(sys.argv[1]), kinds)
    except Exception as exc:
        print(type(exc).__name__, exc)
    """
)


def test_a_store_whose_creation_fails_leaves_no_empty_file_behind(db_path: Path) -> None:
    """A store file appears whole or not at all, so an empty one is never prixfixe's own."""
    db_path.parent.mkdir(parents=True)
    proc = subprocess.run(
        [sys.executable, "-c", _CREATE_ON_A_FULL_DISK, str(db_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        check=True,
    )
    assert proc.stdout.split()[0] in ("StoreFullError", "StoreIOError"), proc.stdout + proc.stderr
    assert list(db_path.parent.iterdir()) == []
    store = SQLiteStore.open(db_path, KINDS)  # and, with space, it is made as usual
    try:
        assert store.put("reminder", {"text": "a", "due": "2026-01-01"}).generation == 1
    finally:
        store.close()


# -- integers SQLite cannot hold ----------------------------------------------------------------

TOO_BIG = 2**63


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments", "names"),
    [
        ("store_put", {"kind": "reminder", "record": {"text": "a"}, "id": TOO_BIG}, "'id'"),
        ("store_put", {"kind": "reminder", "record": {"text": "a"}, "id": 0}, "'id'"),
        ("store_close", {"kind": "reminder", "id": TOO_BIG}, "'id'"),
        ("store_close", {"kind": "reminder", "id": -1}, "'id'"),
        ("store_query", {"kind": "reminder", "where": {"id": {"<": TOO_BIG}}}, "where.id.<"),
        ("store_query", {"kind": "reminder", "where": {"gen": {">=": -TOO_BIG - 1}}}, "where.gen"),
        ("store_query", {"kind": "reminder", "where": {"gen": {"in": [1, TOO_BIG]}}}, "where.gen"),
        ("store_query", {"kind": "reminder", "where": {"id": {"<": True}}}, "where.id.<"),
        ("tool_invoke", {"name": "report_get", "arguments": {"generation": TOO_BIG}}, "generation"),
    ],
)
async def test_an_integer_sqlite_cannot_hold_is_refused_by_name_and_writes_nothing(
    make_app: AppFactory, tool: str, arguments: dict[str, Any], names: str
) -> None:
    from mcp import Client

    from prixfixe.mcp.server import build_server

    app = make_app()
    app.store.put("reminder", {"text": "kept", "due": "2026-01-01"})
    async with Client(build_server(app)) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error is True
    text = result.content[0].text
    assert names in text, text
    assert "Traceback" not in text
    assert "OverflowError" not in text
    assert app.store.generation() == 1
    assert app.store.get("reminder", 1).record["text"] == "kept"


def test_the_store_answers_an_id_it_cannot_hold_as_no_such_record(store: SQLiteStore) -> None:
    from prixfixe.errors import UnknownRecordError

    store.put("reminder", {"text": "kept", "due": "2026-01-01"})
    for bad in (TOO_BIG, 0, -TOO_BIG - 5):
        with pytest.raises(UnknownRecordError):
            store.get("reminder", bad)
        with pytest.raises(UnknownRecordError):
            store.put("reminder", {"text": "x"}, bad)
        with pytest.raises(UnknownRecordError):
            store.close_record("reminder", bad)
    assert store.generation() == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    "raw_id",
    ["9223372036854775808", "\uff11", "\u00b2", "9" * 5000, "0", "01", "-1", "1.0"],
    ids=[
        "2^63",
        "fullwidth-1",
        "superscript-2",
        "5000-digits",
        "zero",
        "leading-zero",
        "negative",
        "decimal",
    ],
)
async def test_a_record_uri_with_an_id_that_is_not_one_is_resource_not_found(
    make_app: AppFactory, raw_id: str
) -> None:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from prixfixe.mcp.server import build_server

    app = make_app()
    app.store.put("deadline", {"label": "taxes", "date": "2026-04-30"})
    uri = f"prixfixe://store/deadline/{raw_id}"
    async with Client(build_server(app)) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
        assert caught.value.error.code in (-32602, -32002)  # not found, by revision
        assert "resource not found" in caught.value.error.message
        assert "Traceback" not in caught.value.error.message
        # The real record is still there under its real URI.
        read = await client.read_resource("prixfixe://store/deadline/1")
    assert json.loads(read.contents[0].text)["record"]["label"] == "taxes"


@pytest.mark.parametrize(
    ("errno_", "error"),
    [
        (28, StoreFullError),  # ENOSPC
        (30, StoreReadOnlyError),  # EROFS
        (1, StoreReadOnlyError),  # EPERM (no hard links here, or not allowed)
        (5, StoreIOError),  # EIO
    ],
)
def test_a_failed_creation_is_the_store_error_that_says_what_to_do(
    db_path: Path, errno_: int, error: type[StoreError]
) -> None:
    from prixfixe.store.faults import os_fault

    mapped = os_fault(OSError(errno_, os.strerror(errno_)), db_path)
    assert type(mapped) is error
    assert str(db_path) in mapped.message
