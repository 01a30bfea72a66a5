"""Change notifications across instances on one PostgreSQL database (LISTEN/NOTIFY): a write
through one instance reaches the observers and the subscribed clients of another once; a
write that does not commit reaches nobody; a listener whose connection dies comes back by
itself and tells what it missed.

No sleeps: every wait is for a condition, bounded. To show that something did *not* arrive,
a sentinel write follows it; changes arrive in commit order, so by the time the sentinel has
arrived anything sent before it has too."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import psycopg
import pytest
from mcp import Client
from mcp.client.subscriptions import ResourceUpdated

from prixfixe.app import App
from prixfixe.config import STORE_URL_ENV
from prixfixe.errors import StoreError
from prixfixe.mcp.server import build_server
from prixfixe.store import StoreChange
from prixfixe.store.pg_changes import CHANNEL, decode, payloads
from prixfixe.store.postgres import PostgresStore, probe
from tests.conftest import AppFactory
from tests.resources.conftest import Inbox
from tests.store.conftest import KINDS

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

DENTIST = {"text": "dentist", "due": "2026-12-01"}
WAIT_S = 10


class Heard:
    """The changes one store's observers were told of, with a bounded wait for more."""

    def __init__(self) -> None:
        self.changes: list[StoreChange] = []
        self._cond = threading.Condition()

    def __call__(self, change: StoreChange) -> None:
        with self._cond:
            self.changes.append(change)
            self._cond.notify_all()

    def wait_for(self, test: Callable[[list[StoreChange]], bool]) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: test(self.changes), timeout=WAIT_S), self.changes

    def wait_generation(self, generation: int) -> None:
        self.wait_for(lambda seen: any(c.generation == generation for c in seen))


@pytest.fixture
def two_stores(postgres_url: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    a = PostgresStore.open(postgres_url, KINDS)
    b = PostgresStore.open(postgres_url, KINDS)
    yield a, b
    a.close()
    b.close()


def _sql(url: str, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(statement, params)
        return cur.fetchall() if cur.description is not None else []


# -- the payload -------------------------------------------------------------------------------


def test_a_batch_of_consecutive_ids_is_one_payload_of_one_run() -> None:
    change = StoreChange(7, "put", "reminder", tuple(range(1000, 101_000)))
    (payload,) = payloads("abc", change)
    assert json.loads(payload)["ids"] == [[1000, 100_999]]
    message = decode(payload)
    assert message is not None
    assert (message.instance, message.change) == ("abc", change)


def test_ids_that_do_not_fit_one_payload_are_split_under_the_limit() -> None:
    change = StoreChange(7, "put", "reminder", tuple(range(1, 20_000, 2)))
    sent = payloads("abc", change)
    assert len(sent) > 1
    assert all(len(p.encode()) < 8000 for p in sent)
    parts = [decode(p) for p in sent]
    assert [(m.part, m.parts) for m in parts if m] == [
        (n, len(sent)) for n in range(1, 1 + len(sent))
    ]
    assert tuple(i for m in parts if m for i in m.change.ids) == change.ids


# -- two stores on one database ----------------------------------------------------------------


def test_a_write_through_one_store_reaches_the_others_observers_once(
    two_stores: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = two_stores
    heard_a, heard_b = Heard(), Heard()
    a.observe(heard_a)
    b.observe(heard_b)
    first = a.put("reminder", DENTIST)
    moved = a.put("reminder", {"text": "moved"}, first.id)
    closed = b.close_record("reminder", first.id, "done")
    heard_a.wait_generation(closed.generation)
    heard_b.wait_generation(moved.generation)
    expected = [
        StoreChange(first.generation, "put", "reminder", (first.id,)),
        StoreChange(moved.generation, "put", "reminder", (first.id,)),
        StoreChange(closed.generation, "close", "reminder", (first.id,)),
    ]
    # Each store's own writes are announced by the writer, the other's by its listener: each
    # change once. b's own close is announced as it commits, so a's earlier writes, heard
    # through b's listener, may come after it on a loaded machine (seen in CI): once each,
    # in any order.
    assert heard_a.changes == expected
    assert sorted(heard_b.changes, key=lambda c: c.generation) == expected


def test_a_batch_of_500_reaches_the_other_store_with_every_id(
    two_stores: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = two_stores
    heard = Heard()
    b.observe(heard)
    batch = a.put_many("reminder", [{**DENTIST, "text": f"r{n}"} for n in range(500)])
    heard.wait_generation(batch.generation)
    assert heard.changes == [StoreChange(batch.generation, "put", "reminder", batch.ids)]
    assert len(batch.ids) == 500


def test_a_change_sent_in_several_parts_is_announced_once_with_every_id(
    two_stores: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = two_stores
    heard = Heard()
    b.observe(heard)
    ids = tuple(range(1, 20_000, 2))  # no runs: about ten payloads

    def scattered(conn: psycopg.Connection[Any], gen: int) -> int:
        a.send_change(conn, StoreChange(gen, "put", "reminder", ids))
        return gen

    generation = a.write(scattered)
    heard.wait_generation(generation)
    assert heard.changes == [StoreChange(generation, "put", "reminder", ids)]


def test_a_write_that_does_not_commit_notifies_nobody(
    two_stores: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = two_stores
    heard = Heard()
    b.observe(heard)
    first = a.put("reminder", DENTIST)
    a.close_record("reminder", first.id)

    def rolled_back(conn: psycopg.Connection[Any], gen: int) -> None:
        a.send_change(conn, StoreChange(gen, "put", "reminder", (first.id,)))
        raise StoreError("changed my mind")

    with pytest.raises(StoreError):
        a.write(rolled_back)
    with pytest.raises(StoreError):  # refused: the record is closed
        a.put("reminder", {"text": "again"}, first.id)
    sentinel = a.put("reminder", DENTIST)
    heard.wait_generation(sentinel.generation)
    assert [c.generation for c in heard.changes] == [
        first.generation,
        first.generation + 1,
        sentinel.generation,
    ]
    # The generation a rolled-back write took is the sentinel's: nothing is skipped.
    assert sentinel.generation == first.generation + 2


def test_a_killed_listener_reconnects_and_tells_what_it_missed(
    two_stores: tuple[PostgresStore, PostgresStore], postgres_url: str
) -> None:
    a, b = two_stores
    heard = Heard()
    b.observe(heard)
    listener = b.listener
    assert listener is not None
    name = f"prixfixe listen {b.instance}"
    dbname = postgres_url.rsplit("/", 1)[1]
    admin = postgres_url.rsplit("/", 1)[0] + "/postgres"
    before = a.put("reminder", DENTIST)
    heard.wait_generation(before.generation)
    # No new connection is let in until the write below has committed: the listener cannot
    # hear it, so it must be told on reconnecting.
    _sql(admin, f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS false')
    try:
        killed = _sql(
            admin,
            "SELECT pg_terminate_backend(pid, %s) FROM pg_stat_activity"
            " WHERE application_name = %s",
            (WAIT_S * 1000, name),
        )
        assert killed == [(True,)]
        missed = a.put("reminder", {**DENTIST, "text": "while away"})
        # b's own write: b tells of it at once, and catching up leaves it out.
        own = b.put("reminder", {**DENTIST, "text": "b writes too"})
    finally:
        _sql(admin, f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS true')
    heard.wait_generation(missed.generation)
    after = a.put("reminder", {**DENTIST, "text": "back"})
    heard.wait_generation(after.generation)
    assert [c.generation for c in heard.changes] == [
        before.generation,
        own.generation,
        missed.generation,
        after.generation,
    ]
    assert heard.changes[2] == StoreChange(missed.generation, "put", "reminder", (missed.id,))
    assert listener.reconnects >= 1
    assert _sql(
        postgres_url, "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
    ) == [(1,)]


def test_closing_the_store_stops_its_listener(postgres_url: str) -> None:
    store = PostgresStore.open(postgres_url, KINDS)
    store.observe(Heard())
    listener = store.listener
    assert listener is not None
    assert listener.running
    store.close()
    assert store.listener is None
    assert listener.running is False, "stopped before close returned"


def test_the_last_observer_leaving_stops_the_listener(postgres_url: str) -> None:
    store = PostgresStore.open(postgres_url, KINDS)
    try:
        first, second = store.observe(Heard()), store.observe(Heard())
        listener = store.listener
        assert listener is not None
        first()
        first()  # unsubscribing twice counts once
        assert store.listener is listener
        assert listener.running
        second()
        assert store.listener is None
        assert listener.running is False
    finally:
        store.close()


def test_the_probe_names_the_channel_and_can_listen_on_it(postgres_url: str) -> None:
    assert probe(postgres_url)["notifications"] == {"channel": CHANNEL, "listen": True}


# -- two apps on one database, through the protocol -------------------------------------------


@pytest.fixture
def two_apps(make_app: AppFactory, postgres_url: str, tmp_path: Path) -> tuple[App, App]:
    def one(name: str) -> App:
        return make_app(env={STORE_URL_ENV: postgres_url, "PRIXFIXE_HOME": str(tmp_path / name)})

    return one("a"), one("b")


def _put(record: dict[str, Any], id: int | None = None) -> dict[str, Any]:
    return {"kind": "reminder", "record": record, **({} if id is None else {"id": id})}


@pytest.mark.anyio
async def test_a_subscriber_on_one_app_is_told_of_a_write_through_another_once(
    two_apps: tuple[App, App], revision: str
) -> None:
    a, b = two_apps
    heard = Heard()
    b.observe_store(heard)
    inbox = Inbox()
    first, sentinel = "prixfixe://store/reminder/1", "prixfixe://store/reminder/2"
    async with (
        Client(build_server(a), mode=revision) as on_a,
        Client(build_server(b), mode=revision, message_handler=inbox) as on_b,
    ):
        for _ in range(2):
            assert (await on_a.call_tool("store_put", _put(DENTIST))).is_error is False
        if revision == "legacy":
            await on_b.subscribe_resource(first)
            await on_b.subscribe_resource(sentinel)
            await on_a.call_tool("store_put", _put({"text": "moved"}, 1))
            await on_a.call_tool("store_put", _put({"text": "moved"}, 2))
            await inbox.wait_for(("updated", sentinel))
            assert inbox.items == [("updated", first), ("updated", sentinel)]
        else:
            async with on_b.listen(resource_subscriptions=[first, sentinel]) as sub:
                await on_a.call_tool("store_put", _put({"text": "moved"}, 1))
                await on_a.call_tool("store_put", _put({"text": "moved"}, 2))
                with anyio.fail_after(WAIT_S):
                    assert await sub.__anext__() == ResourceUpdated(first)
                    assert await sub.__anext__() == ResourceUpdated(sentinel)
    # Once per change at the store, too (a notifier could hide a repeat by coalescing it).
    assert [(c.op, c.ids) for c in heard.changes] == [("put", (1,)), ("put", (2,))]


@pytest.mark.anyio
async def test_a_write_through_an_app_is_announced_on_that_app_once(
    two_apps: tuple[App, App],
) -> None:
    a, b = two_apps
    heard = Heard()
    b.observe_store(heard)
    async with (
        Client(build_server(a), mode="2026-07-28") as on_a,
        Client(build_server(b), mode="2026-07-28") as on_b,
    ):
        await on_a.call_tool("store_put", _put(DENTIST))
        async with on_b.listen(resource_subscriptions=["prixfixe://store/reminder/1"]) as sub:
            await on_b.call_tool("store_put", _put({"text": "moved"}, 1))
            await on_a.call_tool("store_put", _put({**DENTIST, "text": "sentinel"}))
            with anyio.fail_after(WAIT_S):
                assert await sub.__anext__() == ResourceUpdated("prixfixe://store/reminder/1")
            await anyio.to_thread.run_sync(lambda: heard.wait_for(lambda seen: len(seen) >= 2))
    assert [(c.op, c.ids) for c in heard.changes] == [("put", (1,)), ("put", (2,))]
