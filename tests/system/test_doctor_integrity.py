"""`prixfixe doctor` checks the store's integrity quickly (a bounded `PRAGMA quick_check`),
says how to recover a damaged file, and reads it without creating anything beside it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from prixfixe.app import DEFAULT_TOOL_BUDGET
from prixfixe.cli import cli
from prixfixe.store.integrity import check_integrity
from prixfixe.store.sqlite import SQLiteStore
from prixfixe.system.doctor import doctor_report
from tests.conftest import AppFactory
from tests.store.conftest import KINDS
from tests.store.test_faults import damage


def _run(*args: str, home: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        cli, list(args), env={"PRIXFIXE_HOME": str(home)}, catch_exceptions=False
    )
    return result.exit_code, result.stdout, result.stderr


def _listing(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_doctor_finds_a_damaged_store_says_how_to_recover_and_exits_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    damage(home / "store.sqlite3")
    before = _listing(home)
    code, out, err = _run("doctor", home=home)
    assert code == 1
    assert "integrity: damaged" in out
    assert ".recover" in out
    assert str(home / "store.sqlite3") in out
    assert "Traceback" not in out + err
    assert _listing(home) == before, "the check wrote nothing and created nothing"
    code, out, _ = _run("doctor", "--json", home=home)
    check = json.loads(out)["store_integrity"]
    assert check["status"] == "damaged"
    assert check["problems"]
    assert all(isinstance(p, str) for p in check["problems"])


def test_a_damaged_store_met_by_a_cli_command_is_one_clear_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    damage(home / "store.sqlite3")
    code, _, err = _run("store", "query", "reminder", "--limit", "500", home=home)
    assert code == 1
    assert "Traceback" not in err
    assert str(home / "store.sqlite3") in err
    assert "damaged" in err
    assert ".recover" in err


def test_doctor_says_a_sound_store_is_ok_and_an_absent_one_is_not_checked(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = make_app()
    report = doctor_report(app, tool_budget=DEFAULT_TOOL_BUDGET)
    assert report["store_integrity"]["status"] == "absent"
    app.store.put("reminder", {"text": "fine", "due": "2026-01-01"})
    app.close_store()
    report = doctor_report(app, tool_budget=DEFAULT_TOOL_BUDGET)
    assert report["store_integrity"]["status"] == "ok"
    assert report["store_integrity"]["problems"] == []


def test_the_check_is_bounded_in_time_and_reports_unfinished_not_ok(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    store = SQLiteStore.open(path, KINDS)
    store.put_many("reminder", [{"text": "x" * 300, "due": "2026-01-01"} for _ in range(2000)])
    store.close()
    check = check_integrity(path, time_limit=0.0)
    assert check.status == "unfinished"
    assert "did not finish within 0 s" in check.problems[0]
    assert check_integrity(path).status == "ok"


def test_a_file_that_is_not_a_database_is_unreadable_with_advice(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    path.write_text("not a database " * 500)
    check = check_integrity(path)
    assert check.status == "unreadable"
    assert str(path) in check.advice


# -- what the store can serve: record bodies, the WAL, an empty file ----------------------------


def test_doctor_names_a_record_whose_body_cannot_be_read_and_exits_1(tmp_path: Path) -> None:
    from tests.store.test_damaged_records import not_utf8

    home = tmp_path / "home"
    home.mkdir()
    not_utf8(home / "store.sqlite3")
    before = _listing(home)
    code, out, err = _run("doctor", home=home)
    assert code == 1
    assert "integrity: damaged" in out
    assert "reminder 2: its body is not UTF-8" in " ".join(out.split())
    assert "1 damaged record" in out
    assert "Traceback" not in out + err
    assert _listing(home) == before, "the check wrote nothing and created nothing"
    code, out, _ = _run("doctor", "--json", home=home)
    check = json.loads(out)["store_integrity"]
    assert check["status"] == "damaged"
    assert check["records"]["checked"] == check["records"]["of"] == 5
    assert [(d["kind"], d["id"]) for d in check["records"]["damaged"]] == [("reminder", 2)]


def test_the_body_check_is_bounded_and_says_how_much_it_checked(tmp_path: Path) -> None:
    from tests.store.test_damaged_records import not_json

    path = tmp_path / "store.sqlite3"
    not_json(path)
    whole = check_integrity(path)
    assert whole.status == "damaged"
    assert whole.records["complete"] is True
    part = check_integrity(path, max_records=1)  # record 2 is past the bound
    assert part.status == "ok"
    assert part.records == {
        "checked": 1,
        "of": 5,
        "history_checked": 0,
        "history_of": 0,
        "complete": False,
        "stopped": "stopped at the limit of 1 records",
        "damaged": [],
    }
    _code, out, _ = _run_check(tmp_path, max_records=1)
    assert "1 of 5" in out


def _run_check(tmp_path: Path, **options: Any) -> tuple[int, str, str]:
    """What doctor prints for the check with `options` (the CLI takes no bounds)."""
    from prixfixe.cli import doctor as doctor_cli

    check = check_integrity(tmp_path / "store.sqlite3", **options).as_dict()
    buffer = StringIO()
    doctor_cli._print_integrity(Console(file=buffer, width=200), check)
    return 0, buffer.getvalue(), ""


def test_doctor_says_an_empty_store_file_is_not_a_store_and_exits_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "store.sqlite3").write_bytes(b"")
    code, out, err = _run("doctor", home=home)
    assert code == 1
    assert "integrity: empty" in out
    assert "0 bytes" in out
    assert "Traceback" not in out + err
    assert _listing(home) == {"store.sqlite3": b""}


def test_doctor_reports_the_wal_and_whether_a_checkpoint_could_run(tmp_path: Path) -> None:
    from tests.store.test_faults import _LEAVE_WAL, REPO, read_only

    path = tmp_path / "store.sqlite3"
    subprocess.run([sys.executable, "-c", _LEAVE_WAL, str(path)], cwd=REPO, check=True)
    wal, shm = (path.with_name(path.name + s) for s in ("-wal", "-shm"))
    healthy = check_integrity(path)
    assert healthy.status == "ok"
    assert healthy.records["checked"] == 3
    assert healthy.wal == {
        "present": True,
        "bytes": wal.stat().st_size,
        "shm": "read-write",
        "writable": True,
        "warnings": [],
    }
    with read_only(path, wal, shm):
        stuck = check_integrity(path)
        _, out, _ = _run_check(tmp_path)
    assert stuck.status == "ok"  # readable: what is kept is sound
    assert stuck.wal["writable"] is False
    assert stuck.wal["shm"] == "read-only"
    assert any("no checkpoint" in w and str(path) in w for w in stuck.wal["warnings"])
    assert "not writable" in out
    assert "no checkpoint" in out


def test_a_wal_far_past_checkpoint_size_and_a_missing_shm_are_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prixfixe.store import integrity
    from tests.store.test_faults import _LEAVE_WAL, REPO

    path = tmp_path / "store.sqlite3"
    subprocess.run([sys.executable, "-c", _LEAVE_WAL, str(path)], cwd=REPO, check=True)
    path.with_name(path.name + "-shm").unlink()
    monkeypatch.setattr(integrity, "WAL_WARN_BYTES", 1024)  # the WAL holds a few pages
    wal = integrity.wal_health(path)
    assert wal["shm"] == "absent"
    assert any("checkpoints are not finishing" in w for w in wal["warnings"])


def test_a_body_that_is_json_but_not_an_object_is_named_as_such() -> None:
    from prixfixe.store.records import body_problem

    assert body_problem(b"[1, 2]") == (None, "its body is JSON but not an object (a list)")
    assert body_problem(b'{"a": 1}') == ({"a": 1}, "")


def test_the_body_check_reads_history_and_close_reasons_within_the_same_bound(
    tmp_path: Path,
) -> None:
    from tests.store.test_damaged_records import damage_history

    path = tmp_path / "store.sqlite3"
    gen, _why = damage_history(path, "body-not-utf8")  # 5 records; record 1: 3 history entries
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE records SET close_reason = CAST(? AS TEXT) WHERE id = 1", (b"\xff",))
    conn.close()
    whole = check_integrity(path)
    assert whole.status == "damaged"
    assert whole.records["checked"] == whole.records["of"] == 5
    assert whole.records["history_checked"] == whole.records["history_of"] == 3
    assert whole.records["complete"] is True
    assert [(d["kind"], d["id"], d.get("gen")) for d in whole.records["damaged"]] == [
        ("reminder", 1, None),
        ("reminder", 1, gen),
    ]
    problems = " ".join(whole.problems)
    assert "reminder 1: its close reason is not UTF-8" in problems
    assert (
        f"reminder 1 (its version of generation {gen}, in its history): its body is not UTF-8"
        in (problems)
    )
    # One bound for both: 5 records leave 1 history entry to read.
    part = check_integrity(path, max_records=6)
    assert part.records["checked"] == 5
    assert part.records["history_checked"] == 1
    assert part.records["complete"] is False
    assert part.records["stopped"] == "stopped at the limit of 6 records"
    _code, out, _ = _run_check(tmp_path)
    assert "2 damaged records" in out
    assert "all 5 records and 3 history entries checked" in out
    _code, out, _ = _run_check(tmp_path, max_records=6)
    assert "5 of 5 records and 1 of 3 history entries" in out
