"""board-scan over a real folder of markdown task files."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import anyio

from tests.conftest import AppFactory
from tests.default_plugins.test_calendar_steps import TODAY, run_step


def board(root: Path) -> Path:
    path = root / "board"
    for lane in ("todo", "doing", "done"):
        (path / lane).mkdir(parents=True)
    (path / "todo" / "fix-login.md").write_text("---\ndue: 2026-03-01\n---\n# Fix the login\n")
    (path / "todo" / "write-docs.md").write_text("# Write the docs\n\nbody\n")
    (path / "todo" / "no-title.md").write_text("just text\n")
    (path / "doing" / "release.md").write_text("---\ndue: 2026-04-01\n---\n# Release 1.0\n")
    (path / "done" / "old.md").write_text("# Old thing\n")
    (path / "loose.md").write_text("---\nlane: doing\n---\n# Loose task\n")
    (path / "inboxed.md").write_text("# Sort me\n")
    (path / "notes.txt").write_text("not a task\n")
    return path


def test_board_scan_reads_lanes_titles_and_due_dates(make_app: AppFactory, tmp_path: Path) -> None:
    path = board(tmp_path)
    data, markdown = run_step(make_app(plugins=[]), "board-scan", path=str(path))
    lanes = {lane["name"]: lane for lane in data["lanes"]}
    assert list(lanes) == ["doing", "done", "inbox", "todo"]
    assert [t["title"] for t in lanes["todo"]["tasks"]] == [
        "Fix the login",
        "no-title",
        "Write the docs",
    ]
    assert lanes["todo"]["tasks"][0] == {
        "title": "Fix the login",
        "file": "todo/fix-login.md",
        "due": "2026-03-01",
        "overdue": True,
    }
    assert sorted(t["title"] for t in lanes["doing"]["tasks"]) == ["Loose task", "Release 1.0"]
    assert lanes["done"]["done"] is True
    assert data["open"] == 6
    assert data["overdue"] == 1
    assert markdown.startswith("6 open tasks, **1 overdue**.")
    assert "**overdue, 2026-03-01**" in markdown
    assert "Old thing" not in markdown  # done lanes are counted, not listed
    assert dt.date(2026, 4, 1) > TODAY


def test_board_scan_keeps_the_chosen_lanes_in_order(make_app: AppFactory, tmp_path: Path) -> None:
    path = board(tmp_path)
    data, _ = run_step(
        make_app(plugins=[]), "board-scan", path=str(path), lanes=["todo", "doing", "blocked"]
    )
    assert [(lane["name"], lane["count"]) for lane in data["lanes"]] == [
        ("todo", 3),
        ("doing", 2),
        ("blocked", 0),
    ]


def test_a_missing_board_folder_is_a_soft_failure_naming_it(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = make_app(plugins=[])
    routine = app.routines.single("board-scan", {"path": "nowhere"})
    try:
        stored = anyio.run(lambda: app.routines.run(routine, lambda: app.store))
    finally:
        app.close_store()
    error = stored.report.steps[0].error
    assert error is not None
    assert error.kind == "not-found"
    assert f"board folder {str(tmp_path / 'nowhere')!r} does not exist" in error.message
