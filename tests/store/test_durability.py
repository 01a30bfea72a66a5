"""Faults: a writer killed mid-way, several processes writing at once, a lock held too long.
Real subprocesses, real files; waits are bounded with anyio.fail_after, never slept."""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.text import TextReceiveStream
from mcp import Client, StdioServerParameters

from prixfixe.errors import StoreBusyError
from prixfixe.store.sqlite import SQLiteStore
from tests.store.conftest import KINDS, StoreFactory

pytestmark = pytest.mark.anyio
WRITER = Path(__file__).with_name("writer.py")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    env["PRIXFIXE_HOME"] = str(home)
    return env


@pytest.mark.slow
async def test_a_writer_killed_mid_way_loses_no_committed_record(tmp_path: Path) -> None:
    home = tmp_path / "home"
    committed: dict[int, int] = {}
    async with await anyio.open_process(
        [sys.executable, str(WRITER), str(home), "1000"], env=_env(home)
    ) as proc:
        assert proc.stdout is not None
        buffer = ""
        with anyio.fail_after(60):
            async for chunk in TextReceiveStream(proc.stdout):
                buffer += chunk
                *lines, buffer = buffer.split("\n")
                for line in lines:
                    record_id, index = line.split()
                    committed[int(record_id)] = int(index)
                if len(committed) >= 300:
                    proc.send_signal(signal.SIGKILL)
                    break
            await proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert 300 <= len(committed) < 1000, "killed in the middle of the 1,000 puts"

    path = home / "store.sqlite3"
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store = SQLiteStore.open(path, KINDS)
    try:
        for record_id, index in committed.items():
            assert store.get("reminder", record_id).record["text"] == f"note {index}"
        stored = store.query("reminder", limit=500).records
        # Whatever else got in was also committed whole, in order, with no gaps.
        total = len(stored)
        page = store.query("reminder", limit=500)
        while page.next_cursor:
            page = store.query("reminder", limit=500, cursor=page.next_cursor)
            total += len(page.records)
        assert total >= len(committed)
        assert store.generation() == total
        assert store.read(lambda c: c.execute("PRAGMA integrity_check").fetchone()[0]) == "ok"
    finally:
        store.close()


@pytest.mark.slow
async def test_the_cli_and_a_running_server_write_at_the_same_time_and_both_succeed(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "prixfixe", "serve"], env=_env(home), cwd=tmp_path
    )
    cli_runs: list[tuple[int, bytes]] = []
    server_results: list[Any] = []
    cli_done = anyio.Event()

    async def cli_writers() -> None:
        async def one(i: int) -> None:
            proc = await anyio.run_process(
                [
                    sys.executable,
                    "-m",
                    "prixfixe",
                    "store",
                    "put",
                    "reminder",
                    "--field",
                    f"text=from cli {i}",
                    "--field",
                    "due=2026-12-01",
                ],
                env=_env(home),
                check=False,
            )
            cli_runs.append((proc.returncode, proc.stderr))

        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(one, i)
        cli_done.set()

    with anyio.fail_after(120):
        async with Client(params, mode="legacy") as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(cli_writers)
                # The server writes without pause until every CLI process has finished.
                i = 0
                while not cli_done.is_set() or i < 50:
                    result = await client.call_tool(
                        "store_put",
                        {
                            "kind": "reminder",
                            "record": {"text": f"from server {i}", "due": "2026-12-02"},
                        },
                    )
                    server_results.append(result)
                    i += 1
            final = await client.call_tool(
                "store_query", {"kind": "reminder", "where": {"text": {"contains": "from cli"}}}
            )
    for code, stderr in cli_runs:
        assert code == 0, stderr.decode()
        assert b"locked" not in stderr
    for result in server_results:
        assert result.is_error is False, result.content[0].text
    assert final.structured_content is not None
    assert len(final.structured_content["records"]) == 4
    generations = [r.structured_content["generation"] for r in server_results]
    assert generations == sorted(set(generations)), "each write saw a newer generation"


def _hold_write_lock(path: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_a_write_waits_for_a_write_lock_held_by_another_connection_then_succeeds(
    open_store: StoreFactory, db_path: Path
) -> None:
    waiting = threading.Event()
    store = open_store(on_busy=waiting.set)
    holder = _hold_write_lock(db_path)
    outcome: dict[str, Any] = {}

    def write() -> None:
        try:
            outcome["written"] = store.put("reminder", {"text": "patient", "due": "2026-01-01"})
        except Exception as exc:  # noqa: BLE001 - reported to the test thread below
            outcome["error"] = exc

    writer = threading.Thread(target=write)
    writer.start()
    assert waiting.wait(timeout=30), "the write never reported waiting for the lock"
    # Reads are not blocked by a writer (WAL).
    assert store.query("reminder").records == []
    holder.execute("COMMIT")
    holder.close()
    writer.join(timeout=30)
    assert "error" not in outcome, outcome
    assert outcome["written"].id == 1


def test_a_lock_held_past_the_bound_is_a_clear_error_not_database_is_locked(
    open_store: StoreFactory, db_path: Path
) -> None:
    store = open_store(busy_wait=0.3)
    holder = _hold_write_lock(db_path)
    try:
        with pytest.raises(StoreBusyError) as caught:
            store.put("reminder", {"text": "impatient", "due": "2026-01-01"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "stayed locked by another process for 0.3 s; nothing was written" in caught.value.message
    assert "database is locked" not in caught.value.message
    assert store.generation() == 0
