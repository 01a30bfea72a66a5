"""board-scan over a real folder of markdown task files, through the file gate.

The step runs with a context whose file grant is the test's folder (what a configured step
naming the board would get), so these tests do not depend on how the app builds the grant.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from prixfixe import StepContext, StepFailure, StepType
from prixfixe.errors import FsRefusedError
from prixfixe.leash.fs import FsGate, FsGrant, observe_opens, unobserve_opens
from prixfixe.routines.builtin.board import BoardParams, board_scan, register_step_types
from prixfixe.secrets import Secret

TODAY = dt.date(2026, 3, 11)  # a Wednesday, as in the calendar tests


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


async def no_programs(
    argv: Sequence[str],
    *,
    cwd: Path | None,
    env: Mapping[str, str | Secret] | None,
    input: bytes | None,
) -> Any:
    raise AssertionError("board-scan runs no programs")


def no_store() -> Any:
    raise AssertionError("board-scan uses no store")


def context(base_dir: Path, *roots: Path) -> StepContext:
    grant = FsGrant(tuple(roots) or (base_dir,), (), "the paths configured steps name")
    return StepContext(
        step="board",
        type="board-scan",
        base_dir=base_dir,
        today=TODAY,
        runner=no_programs,
        store_opener=no_store,
        fs=FsGate(grant),
    )


def run_board(ctx: StepContext, **params: Any) -> tuple[dict[str, Any], str]:
    output = board_scan(ctx, BoardParams(**params))
    data = output.data
    assert not isinstance(data, dict)
    return data.model_dump(mode="json"), output.markdown


@contextlib.contextmanager
def opened() -> Any:
    """Every real path the file gate opens while the block runs."""
    seen: list[Path] = []
    observe_opens(seen.append)
    try:
        yield seen
    finally:
        unobserve_opens(seen.append)


def test_board_scan_reads_lanes_titles_and_due_dates(tmp_path: Path) -> None:
    path = board(tmp_path)
    data, markdown = run_board(context(tmp_path), path=str(path))
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
    assert data["path"] == str(path)
    assert data["open"] == 6
    assert data["overdue"] == 1
    assert markdown.startswith("6 open tasks, **1 overdue**.")
    assert "**overdue, 2026-03-01**" in markdown
    assert "Old thing" not in markdown  # done lanes are counted, not listed
    assert dt.date(2026, 4, 1) > TODAY


def test_board_scan_keeps_the_chosen_lanes_in_order(tmp_path: Path) -> None:
    path = board(tmp_path)
    data, _ = run_board(context(tmp_path), path=str(path), lanes=["todo", "doing", "blocked"])
    assert [(lane["name"], lane["count"]) for lane in data["lanes"]] == [
        ("todo", 3),
        ("doing", 2),
        ("blocked", 0),
    ]


def test_board_scan_lists_an_empty_lane_folder_with_no_tasks(tmp_path: Path) -> None:
    path = board(tmp_path)
    (path / "blocked").mkdir()
    (path / ".git").mkdir()  # hidden folders are not lanes
    data, _ = run_board(context(tmp_path), path=str(path))
    assert [lane["name"] for lane in data["lanes"]] == ["blocked", "doing", "done", "inbox", "todo"]


def test_a_missing_board_folder_is_a_soft_failure_naming_it(tmp_path: Path) -> None:
    with pytest.raises(StepFailure) as info:
        run_board(context(tmp_path), path="nowhere")
    assert info.value.kind == "not-found"
    assert f"board folder {str(tmp_path / 'nowhere')!r} does not exist" in str(info.value)


def test_a_board_path_outside_the_file_grant_is_refused_before_anything_is_opened(
    tmp_path: Path,
) -> None:
    board(tmp_path)
    granted = tmp_path / "granted"
    granted.mkdir()
    ctx = context(granted)  # the grant is `granted/` only; the board is its sibling
    with opened() as seen:
        for path in ("../board", str(tmp_path / "board"), "/etc", "/proc/self"):
            with pytest.raises(FsRefusedError) as info:
                run_board(ctx, path=path)
            assert info.value.kind == "refused"
            assert str(info.value).startswith("step 'board': path ")
            assert str(granted) in str(info.value)  # the grant is named
    assert seen == []


def test_a_task_symlinked_from_outside_the_grant_is_skipped_and_never_opened(
    tmp_path: Path,
) -> None:
    path = board(tmp_path / "granted")
    secret = tmp_path / "private" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("# Private thing\n")
    (path / "todo" / "leak.md").symlink_to(secret)
    (path / "stolen").symlink_to(secret.parent, target_is_directory=True)
    (path / "loose-leak.md").symlink_to(secret)
    with opened() as seen:
        data, markdown = run_board(context(tmp_path / "granted"), path=str(path))
    assert "Private thing" not in markdown
    assert [lane["name"] for lane in data["lanes"]] == ["doing", "done", "inbox", "todo"]
    assert seen
    assert all(p == path or path in p.parents for p in seen)
    assert not [p for p in seen if secret.parent in (p, *p.parents)]


def test_a_fifo_on_the_board_is_skipped_without_blocking(tmp_path: Path) -> None:
    path = board(tmp_path)
    fifo = path / "todo" / "stuck.md"
    os.mkfifo(fifo)
    os.mkfifo(path / "top.md")

    async def go() -> tuple[dict[str, Any], str]:
        with anyio.fail_after(10):
            return await anyio.to_thread.run_sync(
                lambda: run_board(context(tmp_path), path=str(path)), abandon_on_cancel=True
            )

    try:
        data, _ = anyio.run(go)
    finally:
        for name in (fifo, path / "top.md"):  # wake a reader if one were ever stuck
            with contextlib.suppress(OSError):
                os.close(os.open(name, os.O_WRONLY | os.O_NONBLOCK))
    assert data["open"] == 6


def test_board_scan_names_its_board_for_the_default_file_grant() -> None:
    found: list[StepType] = []
    register: Callable[[StepType], None] = found.append
    register_step_types(register=register)
    (step_type,) = found
    reads, writes = step_type.declared_paths(BoardParams(path="~/notes/board"))
    assert (list(reads), list(writes)) == (["~/notes/board"], [])
