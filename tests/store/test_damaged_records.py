"""One damaged record in a sound file: its body's bytes are not UTF-8, or not JSON (what a
flipped bit, a bad sector or a stray write leaves). The record is named as damaged wherever it
is read; every other record of its kind is still served, page by page; nothing prints a
traceback. The damage is made real in an SQLite file: bytes written into the body column with
sqlite3, or overwritten in the file itself (the index keeps the old value, as after bit rot)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from prixfixe.errors import StoreCorruptError
from prixfixe.store.sqlite import SQLiteStore
from tests.conftest import AppFactory
from tests.store.conftest import KINDS

#: Record 2's text, as bytes that are not UTF-8 (0xff never appears in UTF-8).
NOT_UTF8 = b'{"text":"caf\xff\xfe","due":"2026-01-02"}'
#: What `not_json` writes over record 2's body in the file, byte for byte as long as the text.
MARKER = b'{"text":"PATCHME'


def _fill(path: Path, n: int = 5) -> None:
    store = SQLiteStore.open(path, KINDS)
    for i in range(1, n + 1):
        text = "PATCHME" if i == 2 else f"r{i}"
        store.put("reminder", {"text": text, "due": f"2026-01-0{i}"})
    store.close()


def not_utf8(path: Path, n: int = 5) -> None:
    """Record 2's body becomes text SQLite holds (valid JSON to SQLite) but that is not UTF-8."""
    _fill(path, n)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE records SET body = CAST(? AS TEXT) WHERE id = 2", (NOT_UTF8,))
        conn.commit()


def not_json(path: Path, n: int = 5) -> None:
    """Record 2's body is overwritten in the file with bytes that are not JSON: the b-tree is
    sound (same length, same type) and its index entry keeps the old value, so the file opens
    and `quick_check` passes; reading the body fails."""
    _fill(path, n)
    data = bytearray(path.read_bytes())
    at = data.index(MARKER)
    data[at : at + len(MARKER)] = b"<" * len(MARKER)
    assert MARKER not in data
    path.write_bytes(bytes(data))


DAMAGES = {"not-utf8": not_utf8, "not-json": not_json}
WHY = {"not-utf8": "not UTF-8", "not-json": "not JSON"}


@pytest.fixture(params=sorted(DAMAGES))
def damaged(request: pytest.FixtureRequest, db_path: Path) -> str:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    DAMAGES[request.param](db_path)
    return str(request.param)


def test_get_names_the_damaged_record_and_what_is_wrong(db_path: Path, damaged: str) -> None:
    store = SQLiteStore.open(db_path, KINDS)
    try:
        with pytest.raises(StoreCorruptError) as caught:
            store.get("reminder", 2)
        message = caught.value.message
        assert "reminder 2" in message
        assert WHY[damaged] in message
        assert str(db_path) in message
        assert "prixfixe doctor" in message
        assert caught.value.data["kind"] == "reminder"
        assert caught.value.data["id"] == 2
        assert store.get("reminder", 3).record["text"] == "r3"
        # Changing it needs its fields: refused by name, nothing written; closing it works.
        with pytest.raises(StoreCorruptError, match="reminder 2"):
            store.put("reminder", {"text": "fixed"}, 2)
        assert store.generation() == 5
        assert store.close_record("reminder", 2, "damaged").generation == 6
    finally:
        store.close()


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"order_by": "due"},
        {"order_by": "-due"},
        {"where": {"text": {"contains": "r"}}},
        {"where": {"due": {">=": "2026-01-01"}}, "order_by": "due"},
    ],
    ids=["by-id", "by-due", "by-due-desc", "unindexed-filter", "indexed-range"],
)
def test_every_other_record_is_served_page_by_page(
    db_path: Path, damaged: str, query: dict[str, Any]
) -> None:
    store = SQLiteStore.open(db_path, KINDS)
    try:
        seen: list[int] = []
        skipped: list[int] = []
        cursor = None
        for _ in range(10):
            page = store.query("reminder", limit=2, cursor=cursor, **query)
            seen += [r.id for r in page.records]
            skipped += [d.id for d in page.damaged]
            for d in page.damaged:
                assert WHY[damaged] in d.problem
            cursor = page.next_cursor
            if cursor is None:
                break
        assert sorted(seen) == [1, 3, 4, 5]
        assert len(seen) == len(set(seen))
        if not query.get("where"):  # a filter may leave the damaged record out by itself
            assert skipped == [2]
    finally:
        store.close()


@pytest.mark.anyio
async def test_through_mcp_the_record_is_a_clear_error_and_its_kind_still_serves(
    make_app: AppFactory, damaged: str, capfd: pytest.CaptureFixture[str]
) -> None:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from prixfixe.mcp.server import build_server

    app = make_app()  # on the damaged file: `db_path` is the app's home's store
    try:
        async with Client(build_server(app)) as client:
            with pytest.raises(MCPError) as caught:
                await client.read_resource("prixfixe://store/reminder/2")
            message = caught.value.error.message
            assert "reminder 2" in message
            assert WHY[damaged] in message
            assert "OperationalError" not in message
            assert "Could not decode" not in message
            good = await client.read_resource("prixfixe://store/reminder/3")
            assert json.loads(good.contents[0].text)["record"]["text"] == "r3"
            for args in ({}, {"order_by": "due"}, {"where": {"text": {"contains": "r"}}}):
                result = await client.call_tool("store_query", {"kind": "reminder", **args})
                assert result.is_error is False, result.content[0].text
                text = result.content[0].text
                assert "4 reminder records" in text
                assert all(f"- id {i}:" in text for i in (1, 3, 4, 5))
                assert "- id 2:" not in text
                data = result.structured_content
                assert data is not None
                assert [r["id"] for r in data["records"]] == [1, 3, 4, 5]
                if not args:
                    assert "damaged" in text
                    assert "reminder 2" in text
                    assert [d["id"] for d in data["damaged"]] == [2]
    finally:
        app.close_store()
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "OperationalError" not in err


def test_the_cli_lists_the_rest_and_names_the_damaged_record_without_a_traceback(
    tmp_path: Path,
) -> None:
    home = tmp_path / "cli-home"
    home.mkdir()
    not_utf8(home / "store.sqlite3")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    env["PRIXFIXE_HOME"] = str(home)
    proc = subprocess.run(
        [sys.executable, "-m", "prixfixe", "store", "query", "reminder"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert "r3" in proc.stdout
    assert "reminder 2" in proc.stdout + proc.stderr


# -- a damaged version in a record's history, a damaged close reason ---------------------------

#: What each history damage writes over record 1's first kept version (an update's old body),
#: and the words that name it.
HISTORY_DAMAGES = {
    "body-not-utf8": ("body", NOT_UTF8, "its body is not UTF-8"),
    "body-not-json": ("body", b"<<<<", "its body is not JSON"),
    "reason-not-utf8": ("reason", b"do\xffne", "its reason is not UTF-8"),
}


def with_history(path: Path) -> list[int]:
    """Records 1-5; record 1 updated twice then closed ("done"): three history entries, at the
    generations returned (update, update, close)."""
    _fill(path)
    store = SQLiteStore.open(path, KINDS)
    try:
        gens = [
            store.put("reminder", {"text": "v2"}, 1).generation,
            store.put("reminder", {"text": "v3"}, 1).generation,
            store.close_record("reminder", 1, "done").generation,
        ]
    finally:
        store.close()
    return gens


def damage_history(path: Path, damage: str) -> tuple[int, str]:
    """Record 1's history with one entry damaged as `damage` says: that entry's generation and
    the words naming what is wrong."""
    gens = with_history(path)
    column, raw, why = HISTORY_DAMAGES[damage]
    gen = gens[2] if column == "reason" else gens[0]
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(
            f"UPDATE history SET {column} = CAST(? AS TEXT) WHERE record = 1 AND gen = ?",
            (raw, gen),
        )
        conn.commit()
    return gen, why


@pytest.mark.parametrize("damage", sorted(HISTORY_DAMAGES))
def test_history_serves_every_other_version_and_names_the_damaged_one(
    db_path: Path, damage: str
) -> None:
    gen, why = damage_history(db_path, damage)
    store = SQLiteStore.open(db_path, KINDS)
    try:
        entries = store.history("reminder", 1)
    finally:
        store.close()
    assert [e.op for e in entries] == ["update", "update", "close"]
    (bad,) = [e for e in entries if e.problem]
    assert bad.gen == gen
    assert why in bad.problem
    assert bad.body is None
    assert bad.reason is None
    good = {e.gen: e for e in entries if not e.problem}
    assert len(good) == 2
    bodies = [e.body["text"] for e in good.values() if e.body is not None]
    reasons = [e.reason for e in good.values() if e.op == "close"]
    if damage.startswith("body"):
        assert bodies == ["v2"]
        assert reasons == ["done"]
    else:
        assert bodies == ["r1", "v2"]
        assert reasons == []


def close_reason_not_utf8(path: Path) -> None:
    """Records 1-5, record 3 closed with a reason whose bytes are not UTF-8."""
    _fill(path)
    store = SQLiteStore.open(path, KINDS)
    try:
        store.close_record("reminder", 3, "done")
    finally:
        store.close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(
            "UPDATE records SET close_reason = CAST(? AS TEXT) WHERE id = 3", (b"do\xffne",)
        )
        conn.commit()


def test_a_damaged_close_reason_names_its_record_everywhere_it_is_read(db_path: Path) -> None:
    from prixfixe.errors import ClosedRecordError

    close_reason_not_utf8(db_path)
    store = SQLiteStore.open(db_path, KINDS)
    try:
        with pytest.raises(StoreCorruptError) as caught:
            store.get("reminder", 3)
        message = caught.value.message
        assert "reminder 3" in message
        assert "its close reason is not UTF-8 (byte 0xff at offset 2)" in message
        assert "it is closed" in message
        assert "store_close takes it out" not in message  # it is out already
        assert caught.value.data["id"] == 3
        page = store.query("reminder", include_closed=True)
        assert [r.id for r in page.records] == [1, 2, 4, 5]
        assert [(d.id, "close reason is not UTF-8" in d.problem) for d in page.damaged] == [
            (3, True)
        ]
        assert [r.id for r in store.query("reminder").records] == [1, 2, 4, 5]
        with pytest.raises(ClosedRecordError, match="reminder record 3 is closed"):
            store.close_record("reminder", 3, "again")
        (entry,) = store.history("reminder", 3)  # the history keeps the reason as written
        assert entry.reason == "done"
    finally:
        store.close()


@pytest.mark.anyio
async def test_through_mcp_a_damaged_close_reason_is_a_clear_error_not_a_raw_one(
    make_app: AppFactory, db_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from prixfixe.mcp.server import build_server

    db_path.parent.mkdir(parents=True, exist_ok=True)
    close_reason_not_utf8(db_path)
    app = make_app()
    try:
        async with Client(build_server(app)) as client:
            with pytest.raises(MCPError) as caught:
                await client.read_resource("prixfixe://store/reminder/3")
            message = caught.value.error.message
            assert "reminder 3" in message
            assert "close reason is not UTF-8" in message
            assert "Could not decode" not in message
            result = await client.call_tool(
                "store_query", {"kind": "reminder", "include_closed": True}
            )
            assert result.is_error is False, result.content[0].text
            text = result.content[0].text
            assert "Left out, damaged: reminder 3 (its close reason is not UTF-8" in text
            assert "Could not decode" not in text
            closed = await client.call_tool("store_close", {"kind": "reminder", "id": 3})
            assert closed.is_error is True
            assert "reminder record 3 is closed" in closed.content[0].text
    finally:
        app.close_store()
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "Could not decode" not in err


# -- a damaged record's sort value is not UTF-8 -------------------------------------------------

#: Record 2's body with its indexed `due` field's bytes not UTF-8 (the text is sound).
DUE_NOT_UTF8 = b'{"text":"r2","due":"2026-01-0\xff"}'
#: For each damaged field, the order_by values that sort by it (due is indexed, text is not).
SORTED_BY = {"text": ["text", "-text"], "due": ["due", "-due"]}


def sort_value_not_utf8(path: Path, field: str) -> None:
    """Records 1-5 (texts r1..r5, due 2026-01-01..05), record 2's `field` not UTF-8: sorting by
    it makes SQLite hand back that field's bytes as the page's sort value."""
    _fill(path)
    raw = NOT_UTF8 if field == "text" else DUE_NOT_UTF8
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE records SET body = CAST(? AS TEXT) WHERE id = 2", (raw,))
        conn.commit()


@pytest.mark.parametrize(
    ("field", "order_by"), [(f, o) for f, orders in SORTED_BY.items() for o in orders]
)
@pytest.mark.parametrize("limit", [1, 2, 3, 5])
def test_sorting_by_a_value_that_is_not_utf8_serves_every_other_record_page_by_page(
    db_path: Path, field: str, order_by: str, limit: int
) -> None:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    sort_value_not_utf8(db_path, field)
    store = SQLiteStore.open(db_path, KINDS)
    try:
        expected = [1, 3, 4, 5] if not order_by.startswith("-") else [5, 4, 3, 1]
        seen: list[int] = []
        skipped: list[int] = []
        cursor = None
        for _ in range(10):
            page = store.query("reminder", order_by=order_by, limit=limit, cursor=cursor)
            seen += [r.id for r in page.records]
            skipped += [d.id for d in page.damaged]
            assert all("its body is not UTF-8 (byte 0xff" in d.problem for d in page.damaged)
            cursor = page.next_cursor
            if cursor is None:
                break
        assert seen == expected  # in order, none skipped or repeated
        assert skipped == [2]
    finally:
        store.close()


def test_a_cursor_holding_a_sort_value_that_is_not_utf8_still_seeks_the_index(
    db_path: Path,
) -> None:
    """The page ending on the damaged record: its cursor carries the value's bytes; the next
    page's plan is the one a sound value gets (seeks on kind:reminder.due)."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    sort_value_not_utf8(db_path, "due")
    store = SQLiteStore.open(db_path, KINDS)
    try:
        first = store.query("reminder", order_by="-due", limit=1)
        assert [d.id for d in first.damaged] == [2]
        assert first.records == []
        assert first.next_cursor is not None
        damaged_plan = store.explain("reminder", order_by="-due", cursor=first.next_cursor)
        sound = store.query("reminder", order_by="-due", limit=2)  # ends on record 5, sound
        assert sound.next_cursor is not None
        sound_plan = store.explain("reminder", order_by="-due", cursor=sound.next_cursor)
        assert damaged_plan == sound_plan
        assert any("USING INDEX kind:reminder.due (<expr><?)" in line for line in damaged_plan)
        rest = store.query("reminder", order_by="-due", cursor=first.next_cursor)
        assert [r.id for r in rest.records] == [5, 4, 3, 1]
    finally:
        store.close()


@pytest.mark.anyio
async def test_through_mcp_sorting_by_a_value_that_is_not_utf8_serves_the_rest(
    make_app: AppFactory, db_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from mcp import Client

    from prixfixe.mcp.server import build_server

    db_path.parent.mkdir(parents=True, exist_ok=True)
    sort_value_not_utf8(db_path, "text")
    app = make_app()
    try:
        async with Client(build_server(app)) as client:
            seen: list[int] = []
            skipped: list[int] = []
            texts: list[str] = []
            args: dict[str, Any] = {"kind": "reminder", "order_by": "text", "limit": 1}
            for _ in range(10):
                result = await client.call_tool("store_query", args)
                assert result.is_error is False, result.content[0].text
                text = result.content[0].text
                texts.append(text)
                assert "Could not decode" not in text
                data = result.structured_content
                assert data is not None
                seen += [r["id"] for r in data["records"]]
                skipped += [d["id"] for d in data["damaged"]]
                if data["next_cursor"] is None:
                    break
                args = {**args, "cursor": data["next_cursor"]}
            assert seen == [1, 3, 4, 5]
            assert skipped == [2]
            assert any("Left out, damaged: reminder 2 (its body is not UTF-8" in t for t in texts)
            # The kind's records as resources: the damaged one is a clear error, the rest read.
            good = await client.read_resource("prixfixe://store/reminder/3")
            assert json.loads(good.contents[0].text)["record"]["text"] == "r3"
    finally:
        app.close_store()
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "Could not decode" not in err


def test_a_cursor_carries_a_sort_value_that_is_not_utf8_as_its_bytes() -> None:
    from prixfixe.errors import InvalidCursorError
    from prixfixe.store.cursor import _b64, _mac, decode_cursor, encode_cursor
    from prixfixe.store.query import parse_query

    secret = b"s" * 32
    spec = parse_query(KINDS["reminder"], None, "text", False)
    cursor = encode_cursor(secret, spec, b"caf\xff\xfe", 2)
    assert decode_cursor(secret, spec, cursor) == (b"caf\xff\xfe", 2)
    assert decode_cursor(secret, spec, encode_cursor(secret, spec, "caf", 2)) == ("caf", 2)
    # Signed but not hex (no cursor the store issues): refused by name, not a raw error.
    payload = json.dumps({"k": "reminder", "q": spec.fingerprint(), "v": None, "t": 7, "i": 2})
    forged = f"{_b64(payload.encode())}.{_b64(_mac(secret, payload.encode()))}"
    with pytest.raises(InvalidCursorError, match="malformed cursor"):
        decode_cursor(secret, spec, forged)
