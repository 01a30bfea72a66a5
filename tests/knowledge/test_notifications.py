"""What a knowledge write tells subscribers, through a real client on both revisions: a
writer (in a worker thread, as a real one runs) ends with `changes.announce`; a subscriber to
a document hears exactly one `resources/updated` for its change, an added document or a new
collection is `list_changed`, and a write that changed nothing says nothing.

No sleeps: to show that something did *not* arrive, a test then changes a sentinel document
the client is subscribed to and waits for that; notifications are delivered in the order the
changes happened, so anything sent before the sentinel has arrived by then."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated, Subscription

from prixfixe.app import App
from prixfixe.knowledge import catalog, changes
from prixfixe.knowledge.ingest import IngestResult, create_collection, put_text
from prixfixe.mcp.server import build_server
from prixfixe.store.api import OwnerSlice
from tests.resources.conftest import Inbox

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


async def write(app: App, work: Callable[[], IngestResult]) -> IngestResult:
    """Run a knowledge write and announce it, both in a worker thread, as a real writer does."""

    def run() -> IngestResult:
        result = work()
        changes.announce(app.notifier, result)
        return result

    return await anyio.to_thread.run_sync(run)


def uri_of(kb: OwnerSlice, collection: str, path: str) -> str:
    found = next(d for d in catalog.documents(kb, collection) if d.path == path)
    return catalog.document_uri(collection, found.id)


async def next_event(sub: Subscription) -> Any:
    with anyio.fail_after(10):
        return await sub.__anext__()


@pytest.fixture
def docs(kb: OwnerSlice) -> tuple[str, str]:
    """Two documents: the one a test watches and the sentinel."""
    put_text(kb, "notes", "watched.md", "# Watched\n\nfirst version\n")
    put_text(kb, "notes", "sentinel.md", "# Sentinel\n\nfirst version\n")
    return uri_of(kb, "notes", "watched.md"), uri_of(kb, "notes", "sentinel.md")


async def test_a_changed_document_notifies_its_subscriber_exactly_once(
    app: App, kb: OwnerSlice, docs: tuple[str, str], revision: str
) -> None:
    watched, sentinel = docs
    update = partial(put_text, kb, "notes", "watched.md", "# Watched\n\nsecond version\n")
    touch = partial(put_text, kb, "notes", "sentinel.md", "# Sentinel\n\nsecond\n")
    if revision == "legacy":
        inbox = Inbox()
        async with Client(build_server(app), mode="legacy", message_handler=inbox) as client:
            await client.subscribe_resource(watched)
            await client.subscribe_resource(sentinel)
            assert (await write(app, update)).updated == ["watched.md"]
            await write(app, touch)
            await inbox.wait_for(("updated", sentinel))
            text = (await client.read_resource(watched)).contents[0].text  # type: ignore[union-attr]
        assert inbox.items == [("updated", watched), ("updated", sentinel)]
    else:
        async with (
            Client(build_server(app), mode=revision) as client,
            client.listen(resource_subscriptions=[watched, sentinel]) as sub,
        ):
            await write(app, update)
            assert await next_event(sub) == ResourceUpdated(watched)
            await write(app, touch)
            assert await next_event(sub) == ResourceUpdated(sentinel), "one change, one event"
            text = (await client.read_resource(watched)).contents[0].text  # type: ignore[union-attr]
    assert text == "# Watched\n\nsecond version\n"


async def test_an_unchanged_write_announces_nothing(
    app: App, kb: OwnerSlice, docs: tuple[str, str], revision: str
) -> None:
    watched, sentinel = docs
    same = partial(put_text, kb, "notes", "watched.md", "# Watched\n\nfirst version\n")
    touch = partial(put_text, kb, "notes", "sentinel.md", "# Sentinel\n\nsecond\n")
    if revision == "legacy":
        inbox = Inbox()
        async with Client(build_server(app), mode="legacy", message_handler=inbox) as client:
            await client.list_resources()  # a listing connection would hear list_changed
            await client.subscribe_resource(watched)
            await client.subscribe_resource(sentinel)
            assert (await write(app, same)).unchanged == ["watched.md"]
            await write(app, touch)
            await inbox.wait_for(("updated", sentinel))
        assert inbox.items == [("updated", sentinel)]
    else:
        async with (
            Client(build_server(app), mode=revision) as client,
            client.listen(
                resource_subscriptions=[watched, sentinel], resources_list_changed=True
            ) as sub,
        ):
            assert (await write(app, same)).unchanged == ["watched.md"]
            await write(app, touch)
            assert await next_event(sub) == ResourceUpdated(sentinel)


async def test_adding_a_document_or_creating_a_collection_sends_list_changed(
    app: App, kb: OwnerSlice, docs: tuple[str, str], revision: str
) -> None:
    add = partial(put_text, kb, "notes", "new.md", "# New\n")
    create = partial(create_collection, kb, "empty")
    if revision == "legacy":
        inbox = Inbox()
        async with Client(build_server(app), mode="legacy", message_handler=inbox) as client:
            await client.list_resources()
            await write(app, add)
            await inbox.wait_for(("resources_list_changed", None))
            listed = {r.name for r in (await client.list_resources()).resources}
            await write(app, create)
            await inbox.wait_for(("resources_list_changed", None), count=2)
        assert inbox.items == [("resources_list_changed", None)] * 2
    else:
        async with (
            Client(build_server(app), mode=revision) as client,
            client.listen(resources_list_changed=True) as sub,
        ):
            await write(app, add)
            assert await next_event(sub) == ResourcesListChanged()
            listed = {r.name for r in (await client.list_resources()).resources}
            await write(app, create)
            assert await next_event(sub) == ResourcesListChanged()
    assert "new.md" in listed, "the new document is in resources/list"
