"""Configured knowledge folders through a real server: ingested when serving starts, watched
while it serves (an edit tells the document's subscribers exactly once, a new or deleted file
changes the resource list), refused when the leash does not grant them.

No sleeps: every wait is bounded with `anyio.fail_after`; to show that something did *not*
arrive, a sentinel resource the client is subscribed to is changed afterwards, and waited for
(notifications arrive in the order the changes happened)."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated, Subscription

from prixfixe.app import App
from prixfixe.knowledge import KNOWLEDGE_OWNER, catalog
from prixfixe.leash.fs import observe_opens, unobserve_opens
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.resources.conftest import Inbox

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

SENTINEL = "prixfixe://store/reminder/1"
REMINDER = {"kind": "reminder", "record": {"text": "dentist", "due": "2026-12-01"}}
LIST_CHANGED = ("resources_list_changed", None)
WATCHED = '[knowledge]\ndebounce_ms = 20\n\n[knowledge.folders.notes]\npath = "notes"\n'


def _notes(make_app: AppFactory, config: str = WATCHED) -> App:
    return make_app(plugins=[], config=config)


async def _settle(app: App) -> None:
    with anyio.fail_after(20):
        await app.knowledge_folders.settled()


async def _documents(client: Client, collection: str = "notes") -> dict[str, int]:
    read = await client.read_resource(catalog.documents_uri(collection))
    body = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    return {d["path"]: d["id"] for d in body["documents"]}


async def _touch_sentinel(client: Client) -> None:
    result = await client.call_tool("store_put", {**REMINDER, "id": 1})
    assert result.is_error is False


async def _quiet(client: Client, inbox: Inbox, *subscribe: str) -> int:
    """Make the sentinel, list resources (so list changes are sent to this
    connection), subscribe to `subscribe` and the sentinel, let every notification already on
    its way arrive, and return how many list changes came so far."""
    await client.call_tool("store_put", REMINDER)
    await client.list_resources()
    for uri in (*subscribe, SENTINEL):
        await client.subscribe_resource(uri)
    touched = inbox.updated(SENTINEL)
    await _touch_sentinel(client)
    await inbox.wait_for(("updated", SENTINEL), count=touched + 1)
    return inbox.items.count(LIST_CHANGED)


async def _next(sub: Subscription) -> Any:
    with anyio.fail_after(20):
        return await sub.__anext__()


async def test_a_watched_folder_tells_subscribers_of_an_edit_once_and_of_a_new_file(
    make_app: AppFactory, folder: Path, revision: str
) -> None:
    app = _notes(make_app)
    inbox = Inbox()
    async with Client(build_server(app), mode=revision, message_handler=inbox) as client:
        await _settle(app)
        ids = await _documents(client)
        assert sorted(ids) == ["deep/bees.md", "guide.md", "notes.txt"]
        guide = catalog.document_uri("notes", ids["guide.md"])
        if revision == "legacy":
            listed = await _quiet(client, inbox, guide)
            (folder / "guide.md").write_text("# Garden guide\n\nMulch in autumn.\n")
            await inbox.wait_for(("updated", guide))
            await _touch_sentinel(client)
            await inbox.wait_for(("updated", SENTINEL), count=2)
            assert inbox.updated(guide) == 1, "one edit, exactly one notification"
            assert inbox.items.count(LIST_CHANGED) == listed, "an edit changes no list"
            (folder / "worms.md").write_text("# Worms\n\nThey eat peel.\n")
            await inbox.wait_for(LIST_CHANGED, count=listed + 1)
        else:
            await client.call_tool("store_put", REMINDER)
            async with client.listen(
                resource_subscriptions=[guide, SENTINEL], resources_list_changed=True
            ) as sub:
                await _touch_sentinel(client)  # whatever was on its way before arrives first
                while await _next(sub) != ResourceUpdated(SENTINEL):
                    pass
                (folder / "guide.md").write_text("# Garden guide\n\nMulch in autumn.\n")
                assert await _next(sub) == ResourceUpdated(guide)
                await _touch_sentinel(client)
                assert await _next(sub) == ResourceUpdated(SENTINEL), "exactly one for one edit"
                (folder / "worms.md").write_text("# Worms\n\nThey eat peel.\n")
                assert await _next(sub) == ResourcesListChanged()
        read = await client.read_resource(guide)
        assert read.contents[0].text == "# Garden guide\n\nMulch in autumn.\n"  # type: ignore[union-attr]
        assert "worms.md" in await _documents(client)


async def test_a_deleted_file_removes_its_document_and_hidden_or_other_files_are_ignored(
    make_app: AppFactory, folder: Path
) -> None:
    app = _notes(make_app)
    inbox = Inbox()
    async with Client(build_server(app), mode="legacy", message_handler=inbox) as client:
        await _settle(app)
        ids = await _documents(client)
        bees = catalog.document_uri("notes", ids["deep/bees.md"])
        listed = await _quiet(client, inbox, bees)
        (folder / ".draft.md").write_text("# Hidden\n")
        (folder / ".obsidian").mkdir()
        (folder / ".obsidian" / "workspace.md").write_text("# Hidden too\n")
        (folder / "photo.png").write_bytes(b"\x89PNG")
        shutil.rmtree(folder / "deep")
        await inbox.wait_for(("updated", bees))
        await inbox.wait_for(LIST_CHANGED, count=listed + 1)
        assert sorted(await _documents(client)) == ["guide.md", "notes.txt"]
        await _touch_sentinel(client)
        await inbox.wait_for(("updated", SENTINEL), count=2)
    assert inbox.items.count(LIST_CHANGED) == listed + 1
    assert inbox.updated(bees) == 1


async def test_an_unwatched_folder_is_ingested_at_start_only(
    make_app: AppFactory, folder: Path
) -> None:
    app = _notes(make_app, WATCHED + "watch = false\n")
    inbox = Inbox()
    async with Client(build_server(app), mode="legacy", message_handler=inbox) as client:
        await _settle(app)
        ids = await _documents(client)
        guide = catalog.document_uri("notes", ids["guide.md"])
        await _quiet(client, inbox, guide)
        (folder / "guide.md").write_text("# Changed\n")
        (folder / "new.md").write_text("# New\n")
        await _touch_sentinel(client)
        await inbox.wait_for(("updated", SENTINEL), count=2)
        assert sorted(await _documents(client)) == ["deep/bees.md", "guide.md", "notes.txt"]
    assert inbox.updated(guide) == 0


async def test_include_globs_narrow_a_folder_to_the_documents_they_match(
    make_app: AppFactory, folder: Path
) -> None:
    app = _notes(make_app, WATCHED + 'include = ["deep/*", "*.txt"]\n')
    async with Client(build_server(app), mode="legacy") as client:
        await _settle(app)
        assert sorted(await _documents(client)) == ["deep/bees.md", "notes.txt"]


async def test_a_folder_outside_an_explicit_fs_read_is_refused_with_nothing_opened_or_watched(
    make_app: AppFactory,
    folder: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    app = _notes(make_app, f'[leash]\nfs_read = ["{elsewhere}"]\n\n' + WATCHED)
    watched: list[object] = []
    monkeypatch.setattr("watchfiles.awatch", lambda *paths, **options: watched.append(paths))
    opened: list[Path] = []
    observe_opens(opened.append)
    try:
        async with Client(build_server(app), mode="legacy") as client:
            await _settle(app)
            collections = await client.read_resource(catalog.COLLECTIONS_URI)
    finally:
        unobserve_opens(opened.append)
    assert not [p for p in opened if p.is_relative_to(folder)]
    assert watched == []
    assert json.loads(collections.contents[0].text) == {"collections": []}  # type: ignore[union-attr]
    (refusal,) = [
        r.getMessage() for r in caplog.records if "refused by the leash" in r.getMessage()
    ]
    assert "knowledge folder 'notes'" in refusal
    assert "fs_read" in refusal


def test_a_configured_folder_is_a_declared_read_when_fs_read_is_not_set(
    make_app: AppFactory, folder: Path
) -> None:
    leash = _notes(make_app).routines.leash
    assert folder in leash.fs.read
    assert leash.sources["fs_read"] == "declared by configured steps and plugins"


async def test_a_folder_deleted_while_watched_is_logged_and_ingested_again_when_back(
    make_app: AppFactory, folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="prixfixe.knowledge.watch")
    app = _notes(make_app)
    app.knowledge_folders.retry_seconds = 0.05
    inbox = Inbox()
    async with Client(build_server(app), mode="legacy", message_handler=inbox) as client:
        await _settle(app)
        listed = await _quiet(client, inbox)
        shutil.rmtree(folder)
        await inbox.wait_for(LIST_CHANGED, count=listed + 1)
        assert await _documents(client) == {}
        folder.mkdir()
        (folder / "back.md").write_text("# Back\n")
        await inbox.wait_for(LIST_CHANGED, count=listed + 2)
        back = await _documents(client)
        assert list(back) == ["back.md"]
        uri = catalog.document_uri("notes", back["back.md"])
        await client.subscribe_resource(uri)
        (folder / "back.md").write_text("# Back again\n")  # and it is watched again
        await inbox.wait_for(("updated", uri))
    assert any("is gone" in r.getMessage() for r in caplog.records)


async def test_the_watcher_stops_when_serving_ends_and_starts_again_with_the_next_server(
    make_app: AppFactory, folder: Path
) -> None:
    app = _notes(make_app)
    for round_ in range(2):
        inbox = Inbox()
        with anyio.fail_after(20):
            async with Client(build_server(app), mode="legacy", message_handler=inbox) as client:
                await _settle(app)
                listed = await _quiet(client, inbox)
                (folder / f"round{round_}.md").write_text(f"# Round {round_}\n")
                await inbox.wait_for(LIST_CHANGED, count=listed + 1)
                assert f"round{round_}.md" in await _documents(client)
        assert app.knowledge_folders._serving is False
    (folder / "after.md").write_text("# After\n")
    kb = app.store.slice(KNOWLEDGE_OWNER)
    assert "after.md" not in {d.path for d in catalog.documents(kb, "notes")}


async def test_a_folder_missing_at_start_is_logged_and_ingested_once_it_appears(
    make_app: AppFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="prixfixe.knowledge.watch")
    app = _notes(make_app, WATCHED.replace('"notes"', '"later"'))
    app.knowledge_folders.retry_seconds = 0.05
    inbox = Inbox()
    async with Client(build_server(app), mode="legacy", message_handler=inbox) as client:
        await _settle(app)
        listed = await _quiet(client, inbox)
        assert any("does not exist" in r.getMessage() for r in caplog.records)
        (tmp_path / "later").mkdir()
        (tmp_path / "later" / "first.md").write_text("# First\n")
        await inbox.wait_for(LIST_CHANGED, count=listed + 1)
        assert list(await _documents(client)) == ["first.md"]
    assert any("is back" in r.getMessage() for r in caplog.records)


async def test_a_folder_that_cannot_be_ingested_is_logged_and_the_server_keeps_serving(
    make_app: AppFactory, folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = _notes(make_app)
    app.routines.fs.max_entries = 2  # the notes folder holds more
    async with Client(build_server(app), mode="legacy") as client:
        await _settle(app)
        listed = await client.read_resource(catalog.COLLECTIONS_URI)
    assert json.loads(listed.contents[0].text) == {"collections": []}  # type: ignore[union-attr]
    assert any("holds more than 2" in r.getMessage() for r in caplog.records)


async def test_two_connections_share_one_watcher_and_both_hear_of_an_edit(
    make_app: AppFactory, folder: Path
) -> None:
    app = _notes(make_app)
    server = build_server(app)
    first, second = Inbox(), Inbox()
    async with (
        Client(server, mode="legacy", message_handler=first) as one,
        Client(server, mode="legacy", message_handler=second) as two,
    ):
        await _settle(app)
        guide = catalog.document_uri("notes", (await _documents(one))["guide.md"])
        await _quiet(one, first, guide)
        await _quiet(two, second, guide)
        (folder / "guide.md").write_text("# Edited once\n")
        await first.wait_for(("updated", guide))
        await second.wait_for(("updated", guide))
        await _touch_sentinel(one)
        await first.wait_for(("updated", SENTINEL), count=3)
        await second.wait_for(("updated", SENTINEL), count=2)
    assert (first.updated(guide), second.updated(guide)) == (1, 1)


async def test_a_folder_the_system_cannot_watch_is_still_ingested_and_logged_once(
    make_app: AppFactory,
    folder: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[object] = []

    async def exhausted(*paths: object, **options: object) -> AsyncIterator[set[Any]]:
        calls.append(paths)
        raise OSError(28, "OS file watch limit reached")
        yield set()  # an async generator, like watchfiles.awatch

    monkeypatch.setattr("watchfiles.awatch", exhausted)
    app = _notes(make_app)
    async with Client(build_server(app), mode="legacy") as client:
        await _settle(app)
        assert sorted(await _documents(client)) == ["deep/bees.md", "guide.md", "notes.txt"]
    assert len(calls) == 1, "not retried in a loop"
    (message,) = [r.getMessage() for r in caplog.records if "cannot be watched" in r.getMessage()]
    assert "OS file watch limit reached" in message
