"""reminders, deadline-calc and countdown-calc over the store's records, on a fixed day."""

from __future__ import annotations

import datetime as dt
from typing import Any

import anyio

from prixfixe.app import App
from prixfixe.routines.builtin.calendar import count_work_days, next_occurrence
from tests.conftest import AppFactory

TODAY = dt.date(2026, 3, 11)  # a Wednesday


def day(offset: int) -> str:
    return (TODAY + dt.timedelta(days=offset)).isoformat()


def run_step(app: App, type_: str, **params: Any) -> tuple[dict[str, Any], str]:
    routine = app.routines.single(type_, params)

    async def go() -> Any:
        return await app.routines.run(routine, lambda: app.store, today=TODAY)

    try:
        stored = anyio.run(go)
    finally:
        app.close_store()
    (only,) = stored.report.steps
    assert only.status == "ok", only.error
    assert only.data is not None
    return only.data, stored.sections[0]


def test_reminders_lists_overdue_then_due_within_the_horizon(make_app: AppFactory) -> None:
    app = make_app(plugins=[])
    store = app.store
    store.put("reminder", {"text": "late", "due": day(-3)})
    store.put("reminder", {"text": "today", "due": day(0)})
    store.put("reminder", {"text": "soon", "due": day(5)})
    store.put("reminder", {"text": "later", "due": day(30)})
    store.put("reminder", {"text": "standup", "due": day(-40), "recurrence": "weekdays"})
    done = store.put("reminder", {"text": "done", "due": day(-1)})
    store.close_record("reminder", done.id, "done")
    data, markdown = run_step(app, "reminders", days=7)
    assert [(r["text"], r["days"]) for r in data["overdue"]] == [("late", -3)]
    assert [(r["text"], r["days"]) for r in data["due"]] == [
        ("today", 0),
        ("standup", 0),
        ("soon", 5),
    ]
    assert data["horizon"] == day(7)
    assert "**overdue 3 days**: late" in markdown
    assert "- today (today" in markdown


def test_recurring_reminders_roll_forward_to_their_next_occurrence() -> None:
    wed = TODAY
    assert next_occurrence(dt.date(2026, 3, 1), "weekly", wed) == dt.date(2026, 3, 15)
    assert next_occurrence(dt.date(2026, 1, 31), "monthly", wed) == dt.date(2026, 3, 31)
    assert next_occurrence(dt.date(2025, 3, 11), "yearly", wed) == wed
    assert next_occurrence(dt.date(2026, 3, 1), "daily", wed) == wed
    assert next_occurrence(dt.date(2026, 3, 1), None, wed) == dt.date(2026, 3, 1)
    saturday = dt.date(2026, 3, 14)
    assert next_occurrence(dt.date(2026, 3, 1), "weekdays", saturday) == dt.date(2026, 3, 16)


def test_deadline_calc_gives_days_left_and_flags_overdue(make_app: AppFactory) -> None:
    app = make_app(plugins=[])
    app.store.put("deadline", {"label": "taxes", "date": day(-2), "notes": "late!"})
    app.store.put("deadline", {"label": "launch", "date": day(10)})
    data, markdown = run_step(
        app, "deadline-calc", deadlines=[{"label": "demo", "date": day(0)}], within=30
    )
    rows = [(d["label"], d["days_left"], d["overdue"], d["id"]) for d in data["deadlines"]]
    assert rows == [("taxes", -2, True, 1), ("demo", 0, False, None), ("launch", 10, False, 2)]
    assert data["overdue"] == 1
    assert "**taxes: overdue by 2 days**" in markdown
    assert "**demo: due today**" in markdown
    assert "launch: 10 days left" in markdown
    near, _ = run_step(app, "deadline-calc", within=5, store=True)
    assert [d["label"] for d in near["deadlines"]] == ["taxes"]


def test_countdown_calc_counts_work_days_n_of_total(make_app: AppFactory) -> None:
    app = make_app(plugins=[])
    # Mon 2026-03-02 .. Fri 2026-03-27: four work weeks, 20 work days; today is day 8.
    app.store.put("countdown", {"label": "sprint", "start": "2026-03-02", "end": "2026-03-27"})
    data, markdown = run_step(
        app,
        "countdown-calc",
        countdowns=[
            {"label": "next", "start": day(5), "end": day(20)},
            {"label": "old", "start": day(-20), "end": day(-1)},
        ],
        holidays=["2026-03-04"],
    )
    sprint = next(c for c in data["countdowns"] if c["label"] == "sprint")
    assert sprint["status"] == "running"
    assert (sprint["work_day"], sprint["work_days_total"], sprint["work_days_left"]) == (7, 19, 12)
    assert sprint["days_left"] == 16
    assert [c["label"] for c in data["countdowns"]] == ["sprint", "next"]  # ended left out
    assert next(c for c in data["countdowns"] if c["label"] == "next")["status"] == "not-started"
    assert "**sprint: work day 7 of 19** (12 left" in markdown


def test_work_days_respect_the_chosen_weekdays_and_holidays() -> None:
    mon, sun = dt.date(2026, 3, 2), dt.date(2026, 3, 8)
    assert count_work_days(mon, sun, ["mon", "tue", "wed", "thu", "fri"], set()) == 5
    assert count_work_days(mon, sun, ["sat", "sun"], set()) == 2
    assert count_work_days(mon, sun, ["mon"], {mon}) == 0
    assert count_work_days(sun, mon, ["mon"], set()) == 0


def test_empty_store_steps_say_how_to_add_records(make_app: AppFactory) -> None:
    app = make_app(plugins=[])
    for type_, hint in (
        ("reminders", "prixfixe store put reminder"),
        ("deadline-calc", "prixfixe store put deadline"),
        ("countdown-calc", "prixfixe store put countdown"),
    ):
        _, markdown = run_step(app, type_)
        assert hint in markdown
