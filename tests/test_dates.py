"""Dates as people write them: the grammar on fixed days, dates found in JSON by schema, the
clock's zone, and the store, step params and instructions through a real `mcp.Client`."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from mcp import Client
from pydantic import BaseModel, ConfigDict

from prixfixe import dates
from prixfixe.dates import FORMS, configured_clock, local_clock, relative_date, resolve
from prixfixe.errors import ConfigError
from prixfixe.mcp.server import build_server
from prixfixe.schema import model_schema
from tests.conftest import AppFactory

FRIDAY = dt.date(2026, 11, 27)
MONDAY = dt.date(2026, 11, 23)
SUNDAY = dt.date(2026, 11, 29)


def day(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


# -- the grammar ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "today", "expected"),
    [
        ("today", FRIDAY, "2026-11-27"),
        ("tomorrow", FRIDAY, "2026-11-28"),
        ("yesterday", FRIDAY, "2026-11-26"),
        # A bare weekday is the first from today on: today when today is that day.
        ("friday", FRIDAY, "2026-11-27"),
        ("this friday", FRIDAY, "2026-11-27"),
        ("fri", FRIDAY, "2026-11-27"),
        ("saturday", FRIDAY, "2026-11-28"),
        ("thursday", FRIDAY, "2026-12-03"),
        ("friday", MONDAY, "2026-11-27"),
        ("friday", SUNDAY, "2026-12-04"),
        ("this monday", SUNDAY, "2026-11-30"),
        ("tues", FRIDAY, "2026-12-01"),
        ("thurs", FRIDAY, "2026-12-03"),
        # next: that day in next week, weeks starting on Monday.
        ("next friday", FRIDAY, "2026-12-04"),
        ("next friday", MONDAY, "2026-12-04"),
        ("next friday", SUNDAY, "2026-12-04"),
        ("next monday", FRIDAY, "2026-11-30"),
        ("next monday", SUNDAY, "2026-11-30"),
        ("next monday", MONDAY, "2026-11-30"),
        ("next sunday", MONDAY, "2026-12-06"),
        ("next sun", SUNDAY, "2026-12-06"),
        ("in 3 days", FRIDAY, "2026-11-30"),
        ("in 1 day", FRIDAY, "2026-11-28"),
        ("in 0 days", FRIDAY, "2026-11-27"),
        ("in a day", FRIDAY, "2026-11-28"),
        ("in 2 weeks", FRIDAY, "2026-12-11"),
        ("in a week", FRIDAY, "2026-12-04"),
        ("in 1 weeks", FRIDAY, "2026-12-04"),
        ("3 days ago", FRIDAY, "2026-11-24"),
        ("2 weeks ago", FRIDAY, "2026-11-13"),
        ("a week ago", FRIDAY, "2026-11-20"),
        # Case and spaces around and between the words do not matter.
        ("  FRIDAY ", MONDAY, "2026-11-27"),
        ("Next\tMonday", FRIDAY, "2026-11-30"),
        ("in  3   DAYS", FRIDAY, "2026-11-30"),
        # Month, year and February ends.
        ("tomorrow", day("2026-12-31"), "2027-01-01"),
        ("yesterday", day("2027-01-01"), "2026-12-31"),
        ("friday", day("2026-12-31"), "2027-01-01"),
        ("next monday", day("2026-12-31"), "2027-01-04"),
        ("in 1 day", day("2028-02-28"), "2028-02-29"),
        ("tomorrow", day("2027-02-28"), "2027-03-01"),
        ("in 1 week", day("2028-02-25"), "2028-03-03"),
        ("1 day ago", day("2028-03-01"), "2028-02-29"),
        ("in 1 week", day("2024-02-29"), "2024-03-07"),
        ("in 52 weeks", day("2024-02-29"), "2025-02-27"),
        ("in 9999 days", day("2000-01-01"), "2027-05-18"),
    ],
)
def test_each_relative_form_names_one_day(said: str, today: dt.date, expected: str) -> None:
    assert relative_date(said, today) == day(expected)
    assert resolve(said, today) == day(expected)


@pytest.mark.parametrize(
    "said",
    [
        "fryday",
        "last friday",
        "friday next",
        "next",
        "this",
        "12/01",
        "27.11.2026",
        "vendredi",
        "in three days",
        "in -3 days",
        "in 3 months",
        "3 days",
        "in 12345 days",
        "in \u0663 days",  # an Arabic-Indic 3: digits are ASCII
        "now",
        "",
        "   ",
    ],
)
def test_anything_else_is_refused_with_every_accepted_form(said: str) -> None:
    assert relative_date(said, FRIDAY) is None
    with pytest.raises(ValueError, match="is not a date") as refused:
        resolve(said, FRIDAY)
    assert FORMS in str(refused.value)


def test_a_near_miss_is_named_in_the_refusal() -> None:
    with pytest.raises(ValueError, match=r"'fryday' is not a date \(did you mean 'friday'\?\)"):
        resolve("fryday", FRIDAY)
    with pytest.raises(ValueError, match=r"did you mean 'tomorrow'\?"):
        resolve("tommorow", FRIDAY)


def test_iso_dates_are_exact_and_an_impossible_one_says_why() -> None:
    assert resolve("2028-02-29", FRIDAY) == dt.date(2028, 2, 29)
    assert resolve(" 2026-11-27 ", MONDAY) == FRIDAY
    with pytest.raises(ValueError, match=r"'2027-02-29' is not a valid date: day is out of range"):
        resolve("2027-02-29", FRIDAY)


def test_a_day_past_the_calendar_is_refused_not_crashed() -> None:
    with pytest.raises(ValueError, match=r"past the calendar's range"):
        relative_date("in 9999 weeks", dt.date(9999, 12, 1))
    with pytest.raises(ValueError, match=r"past the calendar's range"):
        relative_date("2 days ago", dt.date(1, 1, 1))


# -- dates inside a JSON value, by its schema -----------------------------------------------


class _Leg(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    on: dt.date
    back: dt.date | None = None


class _Trip(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str
    start: dt.date
    legs: list[_Leg] = []
    holidays: list[dt.date] = []
    by_name: dict[str, dt.date] = {}
    either: str | dt.date | None = None
    stamp: dt.datetime | None = None


def test_relative_forms_are_resolved_only_where_the_schema_says_date() -> None:
    given: dict[str, Any] = {
        "title": "friday",  # text that reads like a date stays text
        "start": "Tomorrow",
        "legs": [
            {"label": "out", "on": "friday", "back": "next monday"},
            {"label": "x", "on": "2026-12-01"},
        ],
        "holidays": ["in 2 weeks", " 2026-12-25 "],
        "by_name": {"party": "in 3 days"},
        "either": "friday",  # a str | date union is not only a date: left as it is
        "stamp": "today",  # a datetime is not a date
        "unknown": "friday",
    }
    before = json.loads(json.dumps(given))
    resolution = dates.resolve_dates(model_schema(_Trip), given, FRIDAY)
    assert given == before, "the value given is not changed"
    assert resolution.problems == ()
    assert resolution.value == {
        **given,
        "start": "2026-11-28",
        "legs": [
            {"label": "out", "on": "2026-11-27", "back": "2026-11-30"},
            {"label": "x", "on": "2026-12-01"},
        ],
        "holidays": ["2026-12-11", "2026-12-25"],
        "by_name": {"party": "2026-11-30"},
    }
    assert [d.text() for d in resolution.resolved] == [
        'start 2026-11-28 (from "Tomorrow")',
        'legs[0].on 2026-11-27 (from "friday")',
        'legs[0].back 2026-11-30 (from "next monday")',
        'holidays[0] 2026-12-11 (from "in 2 weeks")',
        'by_name.party 2026-11-30 (from "in 3 days")',
    ]
    valid = {k: v for k, v in resolution.value.items() if k not in ("stamp", "unknown")}
    assert _Trip.model_validate(valid).legs[0].back == dt.date(2026, 11, 30)


def test_a_string_in_a_date_field_that_is_no_form_is_a_problem_naming_its_path() -> None:
    given = {"title": "t", "start": "someday", "legs": [{"label": "a", "on": "fridday"}]}
    resolution = dates.resolve_dates(model_schema(_Trip), given, FRIDAY)
    assert [path for path, _ in resolution.problems] == ["start", "legs[0].on"]
    assert "'someday' is not a date; write YYYY-MM-DD" in resolution.problems[0][1]
    # ISO-looking text is the validator's to judge (its message says what is wrong).
    iso = dates.resolve_dates(model_schema(_Trip), {"start": "2026-13-01"}, FRIDAY)
    assert iso.problems == ()
    assert iso.value == {"start": "2026-13-01"}


def test_a_schema_without_dates_is_known_as_such() -> None:
    class Plain(BaseModel):
        name: str
        when: dt.datetime

    assert dates.has_dates(model_schema(Plain)) is False
    assert dates.has_dates(model_schema(_Trip)) is True


# -- the clock --------------------------------------------------------------------------------


@pytest.fixture
def now(monkeypatch: pytest.MonkeyPatch) -> list[dt.datetime]:
    """The instant every clock reads, fixed: `now[0] = ...` moves it."""
    instant = [dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.UTC)]
    monkeypatch.setattr(dates, "utc_now", lambda: instant[0])
    return instant


@pytest.mark.parametrize(
    ("zone", "expected"),
    [
        ("UTC", "2026-11-27"),
        ("Europe/Lisbon", "2026-11-27"),
        ("Asia/Tokyo", "2026-11-28"),
        ("Pacific/Kiritimati", "2026-11-28"),
        ("America/Los_Angeles", "2026-11-27"),
        ("Pacific/Pago_Pago", "2026-11-27"),
    ],
)
def test_the_zone_decides_which_day_today_is(
    now: list[dt.datetime], zone: str, expected: str
) -> None:
    now[0] = dt.datetime(2026, 11, 27, 15, 30, tzinfo=dt.UTC)
    clock = configured_clock(zone, {}, file="prixfixe.toml")
    assert clock.today() == day(expected)
    assert clock.describe() == f"{zone} (from prixfixe.toml [time] zone)"


def test_the_environment_beats_the_file_and_an_unknown_zone_is_named(
    now: list[dt.datetime],
) -> None:
    clock = configured_clock("Europe/Lisbon", {"PRIXFIXE_TZ": "Asia/Tokyo"}, file="f.toml")
    assert (clock.name, clock.source) == ("Asia/Tokyo", "env PRIXFIXE_TZ")
    with pytest.raises(
        ConfigError,
        match=r"PRIXFIXE_TZ: unknown time zone 'Asia/Tokio'; did you mean 'Asia/Tokyo'\?",
    ):
        configured_clock(None, {"PRIXFIXE_TZ": "Asia/Tokio"}, file="f.toml")
    with pytest.raises(ConfigError, match=r"did you mean 'UTC'\?"):
        configured_clock(None, {"PRIXFIXE_TZ": "utc"}, file="f.toml")


def test_without_a_zone_the_machine_s_own_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", ":Asia/Tokyo")
    clock = configured_clock(None, {}, file="built-in defaults")
    assert (clock.name, clock.source) == ("Asia/Tokyo", "this machine's zone")
    # A POSIX TZ string names no IANA zone: the C library's local time is used as it is.
    monkeypatch.setenv("TZ", "UTC0")
    assert local_clock().zone is None


def test_an_unknown_zone_in_the_file_stops_prixfixe_naming_the_key(make_app: AppFactory) -> None:
    with pytest.raises(
        ConfigError,
        match=r"key 'time.zone'.*unknown time zone 'Europe/Lisbn'; did you mean 'Europe/Lisbon'\?",
    ):
        make_app(config='[time]\nzone = "Europe/Lisbn"\n')
    with pytest.raises(ConfigError, match=r"time.zone: input should be a valid string"):
        make_app(config="[time]\nzone = 1\n")
    with pytest.raises(ConfigError, match=r"PRIXFIXE_TZ: unknown time zone 'Mars/Olympus'"):
        make_app(config="", env={"PRIXFIXE_TZ": "Mars/Olympus"})


# -- through the protocol ---------------------------------------------------------------------


async def _instructions(client: Client, revision: str) -> str:
    """What the server said when the session started: `initialize`, or (stateless)
    `server/discover`."""
    if revision == "legacy":
        return client.instructions or ""
    # A version-pinned client adopts a synthesized discover result: ask the server itself.
    raw = await client.session.send_discover(revision)
    return str(raw.get("instructions") or "")


def _text(result: Any) -> str:
    return "\n".join(str(block.text) for block in result.content)


@pytest.mark.anyio
async def test_store_put_stores_a_relative_date_as_iso_and_echoes_it(
    make_app: AppFactory, revision: str, now: list[dt.datetime]
) -> None:
    async with Client(
        build_server(make_app(env={"PRIXFIXE_TZ": "Europe/Lisbon"})), mode=revision
    ) as client:
        put = await client.call_tool(
            "store_put", {"kind": "reminder", "record": {"text": "rent", "due": "friday"}}
        )
        assert put.is_error is False
        assert (
            _text(put) == 'Created reminder 1 (store generation 1); due 2026-11-27 (from "friday").'
        )
        assert put.structured_content == {"id": 1, "generation": 1}

        changed = await client.call_tool(
            "store_put", {"kind": "reminder", "id": 1, "record": {"due": " Next Monday "}}
        )
        assert _text(changed) == (
            'Updated reminder 1 (store generation 2); due 2026-11-30 (from "Next Monday").'
        )
        plain = await client.call_tool(
            "store_put", {"kind": "deadline", "record": {"label": "tax", "date": "2026-12-31"}}
        )
        assert _text(plain) == "Created deadline 2 (store generation 3)."

        query = await client.call_tool(
            "store_query", {"kind": "reminder", "where": {"due": {"<=": "in 7 days"}}}
        )
        assert query.structured_content is not None
        assert [r["record"]["due"] for r in query.structured_content["records"]] == ["2026-11-30"]
        assert 'Dates: where.due.<= 2026-12-04 (from "in 7 days").' in _text(query)
        none_yet = await client.call_tool(
            "store_query", {"kind": "reminder", "where": {"due": {"in": ["today", "tomorrow"]}}}
        )
        assert none_yet.structured_content is not None
        assert none_yet.structured_content["records"] == []


@pytest.mark.anyio
async def test_a_date_in_no_accepted_form_is_refused_naming_the_forms_and_nothing_is_written(
    make_app: AppFactory, revision: str, now: list[dt.datetime]
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        refused = await client.call_tool(
            "store_put",
            {"kind": "countdown", "record": {"label": "x", "start": "someday", "end": "fryday"}},
        )
        assert refused.is_error is True
        text = _text(refused)
        assert text.startswith(
            "invalid countdown record: field 'start': 'someday' is not a date; write "
        )
        assert "field 'end': 'fryday' is not a date (did you mean 'friday'?)" in text
        assert FORMS in text
        bad_filter = await client.call_tool(
            "store_query", {"kind": "reminder", "where": {"due": "whenever"}}
        )
        assert bad_filter.is_error is True
        assert "where.due: 'whenever' is not a date; write YYYY-MM-DD" in _text(bad_filter)
        after = await client.call_tool("store_query", {"kind": "countdown"})
        assert after.structured_content is not None
        assert after.structured_content["records"] == []


@pytest.mark.anyio
async def test_a_step_param_tomorrow_is_resolved_and_shown_in_the_report(
    make_app: AppFactory, revision: str, now: list[dt.datetime]
) -> None:
    params = {"store": False, "deadlines": [{"label": "demo", "date": "tomorrow"}]}
    async with Client(build_server(make_app()), mode=revision) as client:
        ran = await client.call_tool(
            "tool_invoke",
            {
                "name": "step_run",
                "arguments": {"type": "deadline-calc", "params": params, "format": "both"},
            },
        )
        assert ran.is_error is False
        assert ran.structured_content is not None
        (step,) = ran.structured_content["steps"]
        assert step["data"]["today"] == "2026-11-27"
        assert step["data"]["deadlines"][0]["date"] == "2026-11-28"
        assert step["data"]["deadlines"][0]["days_left"] == 1
        assert '_Dates: deadlines[0].date 2026-11-28 (from "tomorrow")._' in _text(ran)

        refused = await client.call_tool(
            "tool_invoke",
            {
                "name": "routine_eval",
                "arguments": {
                    "steps": [{"type": "countdown-calc", "store": False, "holidays": ["xmas"]}]
                },
            },
        )
        assert refused.is_error is True
        assert "key 'holidays[0]': 'xmas' is not a date; write YYYY-MM-DD" in _text(refused)


def test_a_configured_relative_param_is_resolved_again_on_each_run(
    make_app: AppFactory, now: list[dt.datetime]
) -> None:
    import anyio

    app = make_app(
        plugins=[],
        config='[time]\nzone = "UTC"\n\n[routines.soon]\n[[routines.soon.steps]]\n'
        'type = "deadline-calc"\nstore = false\ndeadlines = [{label = "x", date = "tomorrow"}]\n',
    )
    routine = app.routines.get("soon")
    assert routine.steps[0].summary()["dates"] == [
        {"key": "deadlines[0].date", "given": "tomorrow", "date": "2026-11-28"}
    ]

    async def run() -> Any:
        stored = await app.routines.run(routine, lambda: app.store)
        return stored.report.steps[0].data

    try:
        first = anyio.run(run)
        now[0] += dt.timedelta(days=3)
        later = anyio.run(run)
    finally:
        app.close_store()
    assert (first["today"], first["deadlines"][0]["date"]) == ("2026-11-27", "2026-11-28")
    assert (later["today"], later["deadlines"][0]["date"]) == ("2026-11-30", "2026-12-01")


def test_a_day_that_makes_configured_params_invalid_fails_that_step_only(
    make_app: AppFactory, now: list[dt.datetime]
) -> None:
    import anyio

    app = make_app(
        plugins=[],
        config='[routines.c]\n[[routines.c.steps]]\ntype = "countdown-calc"\nstore = false\n'
        'countdowns = [{label = "x", start = "today", end = 2026-12-01}]\n',
    )

    async def run() -> Any:
        return (await app.routines.run(app.routines.get("c"), lambda: app.store)).report

    try:
        now[0] += dt.timedelta(days=10)
        report = anyio.run(run)
    finally:
        app.close_store()
    (step,) = report.steps
    assert step.status == "failed"
    assert step.error is not None
    assert "params on 2026-12-07: key 'countdowns[0]'" in step.error.message
    assert "end 2026-12-01 is before start 2026-12-07" in step.error.message


@pytest.mark.anyio
async def test_the_instructions_carry_the_day_and_zone_at_each_connection(
    make_app: AppFactory, revision: str, now: list[dt.datetime]
) -> None:
    server = build_server(make_app(config='[time]\nzone = "Asia/Tokyo"\n'))
    now[0] = dt.datetime(2026, 11, 27, 14, 59, tzinfo=dt.UTC)  # 23:59 in Tokyo
    async with Client(server, mode=revision) as client:
        first = await _instructions(client, revision)
    now[0] += dt.timedelta(minutes=2)  # past midnight in Tokyo: a new session, a new day
    async with Client(server, mode=revision) as client:
        second = await _instructions(client, revision)
    # The day closes the first line; the table of contents follows it.
    assert first.splitlines()[0].endswith("Today (at connection): Friday 2026-11-27, Asia/Tokyo.")
    assert second.splitlines()[0].endswith(
        "Today (at connection): Saturday 2026-11-28, Asia/Tokyo."
    )
    assert "tool_search" in second


@pytest.mark.anyio
async def test_the_configured_zone_decides_what_today_means(
    make_app: AppFactory, now: list[dt.datetime]
) -> None:
    now[0] = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.UTC)
    east = make_app(config='[time]\nzone = "Pacific/Kiritimati"\n')  # UTC+14: already the 28th
    west = make_app(
        config='[time]\nzone = "Pacific/Kiritimati"\n', env={"PRIXFIXE_TZ": "Pacific/Pago_Pago"}
    )  # UTC-11: still the 27th; the environment beats the file
    for app, expected in ((east, "2026-11-28"), (west, "2026-11-27")):
        async with Client(build_server(app), mode="legacy") as client:
            put = await client.call_tool(
                "store_put", {"kind": "deadline", "record": {"label": "x", "date": "today"}}
            )
            assert f'date {expected} (from "today")' in _text(put)
            ran = await client.call_tool(
                "tool_invoke", {"name": "step_run", "arguments": {"type": "deadline-calc"}}
            )
            assert ran.structured_content is not None
            assert ran.structured_content["steps"][0]["data"]["today"] == expected


@pytest.mark.anyio
async def test_kinds_and_step_types_with_dates_say_the_forms_and_the_zone(
    make_app: AppFactory, now: list[dt.datetime]
) -> None:
    async with Client(
        build_server(make_app(env={"PRIXFIXE_TZ": "Europe/Lisbon"})), mode="legacy"
    ) as client:
        kinds = await client.call_tool(
            "tool_invoke", {"name": "store_kinds", "arguments": {"kind": "deadline"}}
        )
        steps = await client.call_tool(
            "tool_invoke", {"name": "steps_list", "arguments": {"type": "countdown-calc"}}
        )
        undated = await client.call_tool(
            "tool_invoke", {"name": "steps_list", "arguments": {"type": "reminders"}}
        )
    assert (
        f"Dates: {dates.FORMS_SHORT} (resolved in Europe/Lisbon, stored as YYYY-MM-DD)."
        in _text(kinds)
    )
    assert f"Date params: {dates.FORMS_SHORT} (resolved in Europe/Lisbon on each run)." in _text(
        steps
    )
    assert "Date params" not in _text(undated)
