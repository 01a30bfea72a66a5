"""The filter language, keyset pagination with signed cursors, and real index use. On both
backends (SQLite, PostgreSQL), but the query plans, which are SQLite's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from prixfixe.declarations.kinds import StoreKind
from prixfixe.errors import InvalidCursorError, InvalidFilterError
from prixfixe.store.api import Store
from prixfixe.store.sqlite import SQLiteStore
from tests.store.conftest import AnyStoreFactory, StoreFactory


@pytest.fixture
def store(any_store: Store) -> Store:
    """This module's store: one of each backend."""
    return any_store


def _reminders(store: Store, n: int = 30) -> list[int]:
    records = [
        {
            "text": f"{'Dentist' if i % 5 == 0 else 'call'} #{i}",
            "due": f"2026-{1 + i % 3:02d}-{1 + i % 4:02d}",
            "recurrence": ["daily", "weekly", None][i % 3],
        }
        for i in range(n)
    ]
    return list(store.put_many("reminder", records).ids)


def _ids(store: Store, **query: Any) -> list[int]:
    return [r.id for r in store.query("reminder", limit=500, **query).records]


def _all_pages(store: Store, limit: int, **query: Any) -> list[int]:
    seen: list[int] = []
    cursor = None
    while True:
        page = store.query("reminder", limit=limit, cursor=cursor, **query)
        seen += [r.id for r in page.records]
        cursor = page.next_cursor
        if cursor is None:
            return seen


def test_equality_comparisons_in_contains_and_implicit_and(store: Store) -> None:
    ids = _reminders(store)
    everything = {r.id: r.record for r in store.query("reminder", limit=500).records}
    assert list(everything) == ids

    def matching(test: Any) -> list[int]:
        return [i for i, rec in everything.items() if test(rec)]

    assert _ids(store, where={"due": "2026-02-02"}) == matching(lambda r: r["due"] == "2026-02-02")
    assert _ids(store, where={"due": {">=": "2026-02-01", "<": "2026-03-01"}}) == matching(
        lambda r: "2026-02-01" <= r["due"] < "2026-03-01"
    )
    assert _ids(store, where={"recurrence": {"in": ["daily", "weekly"]}}) == matching(
        lambda r: r["recurrence"] in ("daily", "weekly")
    )
    assert _ids(store, where={"recurrence": None}) == matching(lambda r: r["recurrence"] is None)
    assert _ids(store, where={"text": {"contains": "dentist"}}) == matching(
        lambda r: "dentist" in r["text"].lower()
    )
    both = {"text": {"contains": "DENT"}, "due": {"<=": "2026-01-04"}}
    assert _ids(store, where=both) == matching(
        lambda r: "dent" in r["text"].lower() and r["due"] <= "2026-01-04"
    )


def test_contains_treats_percent_and_underscore_literally(store: Store) -> None:
    store.put("reminder", {"text": "100% done", "due": "2026-01-01"})
    store.put("reminder", {"text": "1000 done", "due": "2026-01-01"})
    store.put("reminder", {"text": "a_b", "due": "2026-01-01"})
    store.put("reminder", {"text": "axb", "due": "2026-01-01"})
    assert len(_ids(store, where={"text": {"contains": "0%"}})) == 1
    assert len(_ids(store, where={"text": {"contains": "a_b"}})) == 1


def test_order_by_a_field_ascending_and_descending_with_id_breaking_ties(
    store: Store,
) -> None:
    _reminders(store)
    records = store.query("reminder", limit=500).records
    asc = sorted(records, key=lambda r: (r.record["due"], r.id))
    assert _ids(store, order_by="due") == [r.id for r in asc]
    desc = sorted(records, key=lambda r: (r.record["due"], r.id), reverse=True)
    assert _ids(store, order_by="-due") == [r.id for r in desc]
    assert _ids(store, order_by="-id") == sorted(_ids(store), reverse=True)


@pytest.mark.parametrize("order_by", ["due", "-due", "recurrence", "-recurrence", "id", "-id"])
def test_paging_with_cursors_returns_every_record_once_in_order(
    store: Store, order_by: str
) -> None:
    _reminders(store, 47)
    # recurrence holds nulls: they sort first ascending and last descending, across pages.
    assert _all_pages(store, 4, order_by=order_by) == _ids(store, order_by=order_by)
    where = {"due": {"<=": "2026-02-03"}}
    assert _all_pages(store, 3, order_by=order_by, where=where) == _ids(
        store, order_by=order_by, where=where
    )


def test_a_cursor_stays_valid_while_records_are_added(store: Store) -> None:
    _reminders(store, 20)
    first = store.query("reminder", order_by="due", limit=5)
    assert first.next_cursor is not None
    last = first.records[-1]
    # New records sort both before and after the page boundary.
    store.put_many(
        "reminder",
        [{"text": "early", "due": "2025-01-01"}, {"text": "late", "due": "2030-01-01"}],
    )
    second = store.query("reminder", order_by="due", limit=500, cursor=first.next_cursor)
    keys = [(r.record["due"], r.id) for r in second.records]
    assert keys == sorted(keys)
    assert all(k > (last.record["due"], last.id) for k in keys)
    assert "late" in {r.record["text"] for r in second.records}
    assert {r.id for r in first.records}.isdisjoint({r.id for r in second.records})


def test_closed_records_are_left_out_unless_asked_for(store: Store) -> None:
    ids = _reminders(store, 6)
    store.close_record("reminder", ids[0], "done")
    assert ids[0] not in _ids(store)
    with_closed = store.query("reminder", include_closed=True, limit=500).records
    assert [r.id for r in with_closed] == ids
    assert with_closed[0].closed
    assert with_closed[0].close_reason == "done"


def test_the_last_page_has_no_cursor_and_a_page_reports_the_generation(
    store: Store,
) -> None:
    _reminders(store, 4)
    page = store.query("reminder", limit=4)
    assert page.next_cursor is None
    assert page.generation == store.generation()


@pytest.mark.parametrize(
    ("where", "order_by", "expected"),
    [
        (
            {"colour": "red"},
            None,
            "where: unknown field 'colour' (fields: text, due, recurrence, id, gen)",
        ),
        ({"dew": "2026-01-01"}, None, "unknown field 'dew'; did you mean 'due'?"),
        ({"due": {"=<": "2026-01-01"}}, None, "where.due: unknown operator '=<'"),
        ({"due": {"<": "tomorrow"}}, None, "where.due.<: input should be a valid date"),
        ({"due": {"contains": "2026"}}, None, "where.due.contains: contains works on text"),
        ({"recurrence": {"in": "daily"}}, None, "where.recurrence.in: expected a list"),
        ({"recurrence": {"in": ["hourly"]}}, None, "where.recurrence.in[0]: input should be"),
        ({"due": {"<": None}}, None, "where.due.<: null cannot be compared"),
        ({"due": {}}, None, "where.due: empty"),
        (None, "-colour", "order_by: unknown field 'colour'"),
        (["due"], None, "where must be a JSON object"),
    ],
)
def test_a_bad_filter_or_sort_is_an_error_naming_the_field(
    store: Store, where: Any, order_by: str | None, expected: str
) -> None:
    with pytest.raises(InvalidFilterError) as caught:
        store.query("reminder", where=where, order_by=order_by)
    assert expected in caught.value.message
    assert "invalid query on kind 'reminder'" in caught.value.message


def test_filters_on_lists_are_refused_by_name(store: Store) -> None:
    with pytest.raises(
        InvalidFilterError, match=r"where\.work_days: field 'work_days' holds a list"
    ):
        store.query("countdown", where={"work_days": "mon"})


def _cursor(store: Store, **query: Any) -> str:
    page = store.query("reminder", limit=2, **query)
    assert page.next_cursor is not None
    return page.next_cursor


@pytest.mark.parametrize("garbage", ["abc", "a.b.c", "not base64!.x", "x" * 5000])
def test_a_malformed_cursor_is_refused(store: Store, garbage: str) -> None:
    _reminders(store, 5)
    with pytest.raises(InvalidCursorError, match="malformed cursor"):
        store.query("reminder", cursor=garbage)


def test_a_well_formed_but_unsigned_cursor_is_refused(store: Store) -> None:
    _reminders(store, 5)
    with pytest.raises(InvalidCursorError, match="not issued by this store"):
        store.query("reminder", cursor="eyJ4IjoxfQ.AAAA")


def test_an_edited_cursor_is_refused(store: Store) -> None:
    _reminders(store, 5)
    body, mac = _cursor(store).split(".")
    forged = body[:-2] + ("AA" if body[-2:] != "AA" else "BB") + "." + mac
    with pytest.raises(InvalidCursorError, match="not issued by this store"):
        store.query("reminder", cursor=forged)


def test_a_cursor_from_another_store_file_is_refused(store: Store, tmp_path: Path) -> None:
    from tests.store.conftest import KINDS

    _reminders(store, 5)
    other = SQLiteStore.open(tmp_path / "other" / "store.sqlite3", KINDS, {})
    try:
        _reminders(other, 5)
        foreign = _cursor(other)
    finally:
        other.close()
    with pytest.raises(InvalidCursorError, match="not issued by this store"):
        store.query("reminder", cursor=foreign)


def test_a_cursor_for_another_kind_or_another_query_is_refused(store: Store) -> None:
    _reminders(store, 5)
    store.put_many("deadline", [{"label": f"d{i}", "date": "2026-01-01"} for i in range(5)])
    deadline_page = store.query("deadline", limit=2)
    assert deadline_page.next_cursor is not None
    with pytest.raises(InvalidCursorError, match="the cursor is for kind 'deadline'"):
        store.query("reminder", cursor=deadline_page.next_cursor)
    cursor = _cursor(store, order_by="due")
    for changed in (
        {"order_by": "-due"},
        {"order_by": "due", "where": {"recurrence": "daily"}},
        {"order_by": "due", "include_closed": True},
    ):
        with pytest.raises(InvalidCursorError, match="belongs to a different query"):
            store.query("reminder", cursor=cursor, **changed)
    # The same query with a different page size continues fine.
    assert store.query("reminder", cursor=cursor, order_by="due", limit=1).records


def test_queries_on_an_indexed_field_use_its_index_at_every_page(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    store.put_many(
        "reminder", [{"text": f"r{i}", "due": f"2026-01-{1 + i % 28:02d}"} for i in range(400)]
    )
    index = "kind:reminder.due"
    plans = {
        "equality": store.explain("reminder", where={"due": "2026-01-05"}),
        "range sorted": store.explain(
            "reminder", where={"due": {">=": "2026-01-05"}}, order_by="due"
        ),
        "sorted, page 2": store.explain(
            "reminder", order_by="due", cursor=_cursor(store, order_by="due")
        ),
        "descending, page 2": store.explain(
            "reminder", order_by="-due", cursor=_cursor(store, order_by="-due")
        ),
    }
    for name, plan in plans.items():
        searches = [line for line in plan if line.startswith(("SEARCH", "SCAN"))]
        assert searches, f"{name}: {plan}"
        assert all(f"USING INDEX {index}" in line for line in searches if "records" in line), (
            f"{name}: {plan}"
        )
        # Index seeks, and no sort over every matching row inside a segment.
        assert any(line.startswith("SEARCH records") for line in plan) or name == "sorted", plan
    by_id_page_2 = store.explain("reminder", cursor=_cursor(store))
    assert any("records_kind_id (kind=? AND id>?)" in line for line in by_id_page_2), by_id_page_2


def test_id_and_gen_are_testable_so_changes_since_a_generation_can_be_listed(
    store: Store,
) -> None:
    ids = _reminders(store, 6)
    mark = store.generation()
    store.put("reminder", {"text": "changed"}, id=ids[2])
    store.close_record("reminder", ids[4])
    new = store.put("reminder", {"text": "new", "due": "2026-05-05"})
    changed = store.query("reminder", where={"gen": {">": mark}}, include_closed=True)
    assert [r.id for r in changed.records] == [ids[2], ids[4], new.id]
    assert _ids(store, where={"id": {"in": [ids[0], ids[5]]}}) == [ids[0], ids[5]]
    assert _ids(store, order_by="-gen")[:2] == [new.id, ids[2]]
    assert _all_pages(store, 2, order_by="gen") == _ids(store, order_by="gen")


class Score(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    points: float | None = None
    passed: bool = False


SCORE = StoreKind(name="score", description="A score.", model=Score, version=1, indexed=("points",))
POINTS = [None, 2, -1, 0.5, 10, 1.5, None, 2.0, 100, 0, 1e3, 2.25, -0.75, 10]


@pytest.mark.parametrize("order_by", ["points", "-points", "passed", "-passed"])
def test_numbers_and_booleans_compare_and_sort_as_numbers_and_booleans(
    open_any_store: AnyStoreFactory, order_by: str
) -> None:
    store = open_any_store({"score": SCORE})
    records = [{"label": f"s{i}", "points": p, "passed": i % 3 == 0} for i, p in enumerate(POINTS)]
    ids = list(store.put_many("score", records).ids)
    by_id = dict(zip(ids, records, strict=True))

    def ids_where(where: dict[str, Any]) -> list[int]:
        return [r.id for r in store.query("score", where=where, limit=500).records]

    def matching(test: Any) -> list[int]:
        return [i for i, r in by_id.items() if test(r)]

    assert ids_where({"points": 2}) == matching(lambda r: r["points"] == 2)
    assert ids_where({"points": {">": 1.5, "<=": 100}}) == matching(
        lambda r: r["points"] is not None and 1.5 < r["points"] <= 100
    )
    assert ids_where({"points": {"in": [10, 0.5, None]}}) == matching(
        lambda r: r["points"] in (10, 0.5, None)
    )
    assert ids_where({"passed": True}) == matching(lambda r: r["passed"])
    field = order_by.removeprefix("-")
    expected = sorted(
        ids,
        key=lambda i: (by_id[i][field] is not None, by_id[i][field] or 0, i),
        reverse=order_by.startswith("-"),
    )
    pages: list[int] = []
    cursor = None
    while True:
        page = store.query("score", order_by=order_by, limit=3, cursor=cursor)
        pages += [r.id for r in page.records]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == expected
    assert store.get("score", ids[3]).record == {"label": "s3", "points": 0.5, "passed": True}


def test_text_sorts_by_its_bytes_and_contains_folds_ascii_case_only(
    open_any_store: AnyStoreFactory,
) -> None:
    store = open_any_store({"score": SCORE})
    labels = ["b", "B", "a", "é", "z", "Z", "ä", "É", "ab", "A"]
    ids = store.put_many("score", [{"label": label} for label in labels]).ids
    label_of = dict(zip(ids, labels, strict=True))
    page = store.query("score", order_by="label", limit=500)
    assert [r.record["label"] for r in page.records] == sorted(labels, key=str.encode)

    def containing(text: str) -> set[str]:
        found = store.query("score", where={"label": {"contains": text}}, limit=500).records
        return {label_of[r.id] for r in found}

    assert containing("a") == {"a", "A", "ab"}
    assert containing("é") == {"é"}
