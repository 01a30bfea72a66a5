"""`prixfixe doctor` checks the store's integrity quickly (a bounded `PRAGMA quick_check`),
says how to recover a damaged file, and reads it without creating anything beside it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

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
