"""chores-check over a real board folder: the handler with a fixed day and a file grant of the
test's folder (as board-scan's tests do), then once through `routine_run`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from prixfixe import StepContext, StepFailure
from prixfixe.errors import FsRefusedError
from prixfixe.leash.fs import FsGate, FsGrant
from prixfixe.secrets import Secret

from conftest import AppFactory, run_routine, step_of
from prixfixe_forge.chores import ChoresParams, chores_check, next_due

TODAY = dt.date(2026, 3, 11)  # a Wednesday
CHORES = """
[[chore]]
name = "Water the plants"
every = "3d"
last_done = 2026-03-06

[[chore]]
name = "Pay the rent"
every = "monthly"
last_done = 2026-02-11

[[chore]]
name = "Put the bins out"
every = "1w"
last_done = 2026-03-06

[[chore]]
name = "Renew the passport"
every = "yearly"
last_done = 2025-06-01

[[chore]]
name = "Descale the kettle"
every = "2w"
"""


async def no_programs(
    argv: Sequence[str],
    *,
    cwd: Path | None,
    env: Mapping[str, str | Secret] | None,
    input: bytes | None,
) -> Any:
    raise AssertionError("chores-check runs no programs")


def no_store() -> Any:
    raise AssertionError("chores-check uses no store")


def board(root: Path, chores: str = CHORES, name: str = "chores.toml") -> Path:
    path = root / "board"
    (path / "todo").mkdir(parents=True)
    (path / name).write_text(chores, encoding="utf-8")
    return path


def context(base_dir: Path, *roots: Path) -> StepContext:
    grant = FsGrant(tuple(roots) or (base_dir,), (), "the paths configured steps name")
    return StepContext(
        step="chores",
        type="chores-check",
        base_dir=base_dir,
        today=TODAY,
        runner=no_programs,
        store_opener=no_store,
        fs=FsGate(grant),
    )


def run(ctx: StepContext, **params: Any) -> tuple[dict[str, Any], str]:
    output = chores_check(ctx, ChoresParams(**params))
    assert not isinstance(output.data, dict)
    return output.data.model_dump(mode="json"), output.markdown


def test_chores_are_due_every_interval_after_last_done_soonest_first(tmp_path: Path) -> None:
    board(tmp_path)
    data, markdown = run(context(tmp_path), path="board")
    assert [(c["name"], c["due"], c["days"], c["status"]) for c in data["chores"]] == [
        ("Water the plants", "2026-03-09", -2, "overdue"),
        ("Descale the kettle", "2026-03-11", 0, "due"),
        ("Pay the rent", "2026-03-11", 0, "due"),
        ("Put the bins out", "2026-03-13", 2, "soon"),
        ("Renew the passport", "2026-06-01", 82, "later"),
    ]
    assert (data["overdue"], data["due"], data["soon"]) == (1, 2, 1)
    assert data["file"] == str(tmp_path / "board" / "chores.toml")
    assert markdown.splitlines() == [
        "Chores: **1 overdue**, 2 due today, 1 due soon (of 5).",
        "",
        "- Water the plants — **overdue 2 days** (every 3d, last done 2026-03-06)",
        "- Descale the kettle — due today (every 2w, never done)",
        "- Pay the rent — due today (every monthly, last done 2026-02-11)",
        "- Put the bins out — due 2026-03-13 (in 2 days) (every 1w, last done 2026-03-06)",
    ]


def test_nothing_pressing_says_what_comes_next(tmp_path: Path) -> None:
    board(tmp_path, '[[chore]]\nname = "Oil the hinges"\nevery = "6m"\nlast_done = 2026-03-01\n')
    _data, markdown = run(context(tmp_path), path="board", soon_days=0)
    assert markdown == "Nothing due among 1 chore. Next: Oil the hinges on 2026-09-01."


def test_months_keep_the_day_or_end_on_the_months_last() -> None:
    assert next_due("monthly", dt.date(2026, 1, 31), TODAY) == dt.date(2026, 2, 28)
    assert next_due("3m", dt.date(2025, 11, 30), TODAY) == dt.date(2026, 2, 28)
    assert next_due("yearly", dt.date(2024, 2, 29), TODAY) == dt.date(2025, 2, 28)
    assert next_due("daily", dt.date(2026, 3, 10), TODAY) == dt.date(2026, 3, 11)
    assert next_due("weekly", None, TODAY) == TODAY


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[[chore]\nname = 1", "not valid TOML (Expected ']]' at the end of an array declaration"),
        (
            '[[chore]]\nname = "A"\nevery = "3d"\n[[chore]]\nname = "B"\nevery = "often"\n',
            "chore 2, key 'every': Value error, write Nd, Nw or Nm",
        ),
        (
            '[[chore]]\nname = "A"\nevery = "1d"\nlast = 2026-01-01\n',
            "chore 1, key 'last': Extra inputs are not permitted",
        ),
        ('[[chores]]\nname = "A"\n', "unknown key 'chores'; each chore is a [[chore]] table"),
        ('chore = "A"\n', "'chore' must be [[chore]] tables"),
    ],
)
def test_a_bad_chores_file_fails_naming_the_file_and_the_entry(
    tmp_path: Path, text: str, problem: str
) -> None:
    board(tmp_path, text)
    with pytest.raises(StepFailure) as failed:
        run(context(tmp_path), path="board")
    assert failed.value.kind == "invalid-input"
    where = str(tmp_path / "board" / "chores.toml")
    assert failed.value.message.startswith(f"step 'chores': chores file {where!r}: {problem}")


def test_a_missing_file_or_board_is_not_found(tmp_path: Path) -> None:
    board(tmp_path, name="other.toml")
    with pytest.raises(StepFailure) as missing_file:
        run(context(tmp_path), path="board")
    assert missing_file.value.kind == "not-found"
    with pytest.raises(StepFailure) as missing_board:
        run(context(tmp_path), path="nowhere")
    assert missing_board.value.kind == "not-found"


def test_the_file_is_read_through_the_file_gate(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "chores.toml").write_text(CHORES, encoding="utf-8")
    path = tmp_path / "granted" / "board"
    path.mkdir(parents=True)
    (path / "chores.toml").symlink_to(outside / "chores.toml")
    with pytest.raises(FsRefusedError) as refused:
        run(context(tmp_path, tmp_path / "granted"), path=str(path))
    assert "outside the file grant" in refused.value.message


@pytest.mark.anyio
async def test_a_configured_step_reads_the_board_it_names(
    make_app: AppFactory, tmp_path: Path
) -> None:
    today = dt.date.today()
    done = (today - dt.timedelta(days=4)).isoformat()
    board(tmp_path, f'[[chore]]\nname = "Sweep"\nevery = "3d"\nlast_done = {done}\n')
    config = (
        '[routines.morning]\n[[routines.morning.steps]]\ntype = "chores-check"\nname = "chores"\n'
        'path = "board"\n'
    )
    report = await run_routine(make_app(config), "morning")
    step = step_of(report, "chores")
    assert step["status"] == "ok", step
    assert step["data"]["overdue"] == 1
    assert "- Sweep — **overdue 1 day** (every 3d" in report["markdown"]
