"""The activity log's table on both backends (the SQLite file, the shared PostgreSQL
database): written at no generation, pruned by count and age, read back newest first."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from prixfixe.config import ActivityConfig
from prixfixe.store.api import Store
from prixfixe.system.activity import (
    ACTIVITY_OWNER,
    DAY,
    MAX_PENDING,
    MIGRATIONS,
    ActivityLog,
    Pending,
    read_calls,
)
from tests.store.conftest import KINDS, AnyStoreFactory


def pending(tool: str, at: float, **extra: Any) -> Pending:
    return Pending(at, tool, None, "core", None, "ok", 2.5, "client-x", **extra)


@pytest.mark.usefixtures("backend")
def test_calls_are_written_at_no_generation_pruned_and_read_back(
    open_any_store: AnyStoreFactory,
) -> None:
    store = open_any_store(KINDS, {ACTIVITY_OWNER: MIGRATIONS})
    settings = ActivityConfig(max_entries=3, max_age_days=1, keep_arguments=True)
    log = ActivityLog(settings, lambda: store)
    before = store.generation()
    log.record(pending("stale", time.time() - 2 * DAY))
    log.flush()
    for n in range(5):
        log.record(
            pending(f"tool_{n}", time.time(), arguments={"n": n}, texts=["four words of text"])
        )
    log.record(
        pending(
            "tool_search",
            time.time(),
            search={"query": "send a fax", "good_match": False},
        )
    )
    log.close()
    calls = read_calls(store.slice(ACTIVITY_OWNER))
    assert [c.tool for c in calls] == ["tool_search", "tool_4", "tool_3"]
    assert (calls[0].query, calls[0].good_match) == ("send a fax", False)
    assert calls[1].arguments == {"n": 4}
    assert calls[1].data()["arguments"] == {"n": 4}
    assert calls[0].data()["query"] == "send a fax"
    assert "arguments" not in calls[0].data()
    assert calls[1].tokens == 4
    assert (calls[1].client, calls[1].facet, calls[1].duration_ms) == ("client-x", "core", 2.5)
    assert store.generation() == before
    assert [c.tool for c in read_calls(store.slice(ACTIVITY_OWNER), failed=True)] == []
    searches = read_calls(store.slice(ACTIVITY_OWNER), searches=True, limit=5)
    assert [c.tool for c in searches] == ["tool_search"]


def _workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "prixfixe-activity"]


def test_past_max_pending_the_oldest_waiting_calls_are_dropped_and_an_idle_worker_ends(
    open_any_store: AnyStoreFactory,
) -> None:
    store = open_any_store(KINDS, {ACTIVITY_OWNER: MIGRATIONS})
    opened = threading.Event()
    go_on = threading.Event()

    def slow_store() -> Store:
        opened.set()
        go_on.wait(30)
        return store

    log = ActivityLog(ActivityConfig(max_entries=0, max_age_days=0), slow_store)
    log.record(pending("first", time.time()))
    assert opened.wait(30)  # the worker holds "first" and waits for the store
    for n in range(MAX_PENDING + 5):
        log.record(pending(f"t{n}", time.time()))
    assert log.dropped == 5
    go_on.set()
    log.flush()
    calls = read_calls(store.slice(ACTIVITY_OWNER))
    assert len(calls) == 1 + MAX_PENDING
    assert calls[-1].tool == "first"
    assert calls[-2].tool == "t5"  # t0 to t4 were dropped
    end = time.monotonic() + 30
    while _workers() and time.monotonic() < end:
        time.sleep(0.05)
    assert _workers() == []  # idle: it ended by itself
    log.record(pending("later", time.time()))  # and a later call starts one again
    log.close()
    assert read_calls(store.slice(ACTIVITY_OWNER), limit=1)[0].tool == "later"
    assert _workers() == []
