"""Subscriptions and change notifications through a real client: `resources/subscribe` on
2025-11-25, `subscriptions/listen` on 2026-07-28.

No sleeps: to show that something did *not* arrive, the test then changes a sentinel
resource the client is subscribed to and waits for that; notifications are delivered in the
order the changes happened, so anything sent before the sentinel has arrived by then."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated, Subscription
from mcp.shared.exceptions import MCPError

from prixfixe import Resource
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.plugin_fixtures import ResourcesPlugin
from tests.resources.conftest import Inbox

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

COUNTER = "fixture://counter"
SENTINEL = "prixfixe://store/reminder/1"
REMINDER = {"kind": "reminder", "record": {"text": "dentist", "due": "2026-12-01"}}


async def bump(client: Client) -> None:
    result = await client.call_tool("tool_invoke", {"name": "counter_bump"})
    assert result.is_error is False


async def touch_sentinel(client: Client) -> None:
    result = await client.call_tool("store_put", {**REMINDER, "id": 1})
    assert result.is_error is False


async def next_event(sub: Subscription) -> Any:
    with anyio.fail_after(10):
        return await sub.__anext__()


async def test_legacy_subscribe_change_unsubscribe(make_app: AppFactory) -> None:
    inbox = Inbox()
    app = make_app(plugins=[ResourcesPlugin()])
    async with Client(build_server(app), mode="legacy", message_handler=inbox) as client:
        await client.call_tool("store_put", REMINDER)
        await client.subscribe_resource(COUNTER)
        await client.subscribe_resource(SENTINEL)

        await bump(client)
        await inbox.wait_for(("updated", COUNTER))
        read = await client.read_resource(COUNTER)
        assert read.contents[0].text == "counter=1\n"  # type: ignore[union-attr]
        await touch_sentinel(client)
        await inbox.wait_for(("updated", SENTINEL))
        assert inbox.updated(COUNTER) == 1, "one change, exactly one notification"

        await client.unsubscribe_resource(COUNTER)
        await bump(client)
        await touch_sentinel(client)
        await inbox.wait_for(("updated", SENTINEL), count=2)
    assert inbox.updated(COUNTER) == 1, "after unsubscribing, no notification"
    assert inbox.items == [
        ("updated", COUNTER),
        ("updated", SENTINEL),
        ("updated", SENTINEL),
    ]


async def test_listen_subscribe_change_and_close(make_app: AppFactory) -> None:
    app = make_app(plugins=[ResourcesPlugin()])
    async with Client(build_server(app), mode="2026-07-28") as client:
        await client.call_tool("store_put", REMINDER)
        async with client.listen(resource_subscriptions=[COUNTER, SENTINEL]) as sub:
            await bump(client)
            assert await next_event(sub) == ResourceUpdated(COUNTER)
            await touch_sentinel(client)
            assert await next_event(sub) == ResourceUpdated(SENTINEL), "exactly one for one change"
        # Closing the stream is the unsubscribe of this revision.
        async with client.listen(resource_subscriptions=[SENTINEL]) as sub:
            await bump(client)
            await touch_sentinel(client)
            assert await next_event(sub) == ResourceUpdated(SENTINEL)
    assert app.notifier.delivered == 0, "nothing went through handshake-era connections"


async def test_only_the_subscribed_session_is_told(make_app: AppFactory) -> None:
    app = make_app(plugins=[ResourcesPlugin()])
    server = build_server(app)
    told, other = Inbox(), Inbox()
    async with (
        Client(server, mode="legacy", message_handler=told) as first,
        Client(server, mode="legacy", message_handler=other) as second,
    ):
        await first.call_tool("store_put", REMINDER)
        await first.subscribe_resource(COUNTER)
        await second.subscribe_resource(SENTINEL)
        await bump(second)
        await touch_sentinel(second)
        await told.wait_for(("updated", COUNTER))
        await other.wait_for(("updated", SENTINEL))
    assert told.items == [("updated", COUNTER)]
    assert other.items == [("updated", SENTINEL)]


async def test_only_the_listening_stream_for_that_uri_is_told(make_app: AppFactory) -> None:
    app = make_app(plugins=[ResourcesPlugin()])
    server = build_server(app)
    async with (
        Client(server, mode="2026-07-28") as first,
        Client(server, mode="2026-07-28") as second,
    ):
        await first.call_tool("store_put", REMINDER)
        async with (
            first.listen(resource_subscriptions=[COUNTER]) as counter_sub,
            second.listen(resource_subscriptions=[SENTINEL]) as sentinel_sub,
        ):
            await bump(second)
            await touch_sentinel(second)
            assert await next_event(counter_sub) == ResourceUpdated(COUNTER)
            assert await next_event(sentinel_sub) == ResourceUpdated(SENTINEL)


async def test_store_writes_notify_subscribers_of_the_record(
    make_app: AppFactory, revision: str
) -> None:
    inbox = Inbox()
    app = make_app()
    async with Client(build_server(app), mode=revision, message_handler=inbox) as client:
        await client.call_tool("store_put", REMINDER)
        await client.call_tool("store_put", REMINDER)
        first, second = "prixfixe://store/reminder/1", "prixfixe://store/reminder/2"
        if revision == "legacy":
            await client.subscribe_resource(first)
            await client.call_tool("store_close", {"kind": "reminder", "id": 1})
            await inbox.wait_for(("updated", first))
        else:
            async with client.listen(resource_subscriptions=[first, second]) as sub:
                await client.call_tool("store_close", {"kind": "reminder", "id": 2})
                assert await next_event(sub) == ResourceUpdated(second)
                # A write outside any tool (the CLI's code path, a plugin) notifies too.
                await anyio.to_thread.run_sync(
                    lambda: app.store.put("reminder", {"text": "moved"}, 1)
                )
                assert await next_event(sub) == ResourceUpdated(first)


async def test_registering_a_resource_sends_list_changed(
    make_app: AppFactory, revision: str
) -> None:
    inbox = Inbox()
    app = make_app(plugins=[ResourcesPlugin()])
    late = Resource(uri="late://one", name="late", reader=lambda ctx, v: "late\n")
    async with Client(build_server(app), mode=revision, message_handler=inbox) as client:
        if revision == "legacy":
            await client.list_resources()
            app.registry.add_plugin("late_plugin", resources=[late])
            await inbox.wait_for(("resources_list_changed", None))
        else:
            async with client.listen(resources_list_changed=True) as sub:
                app.registry.add_plugin("late_plugin", resources=[late])
                assert await next_event(sub) == ResourcesListChanged()
        listed = [r.uri for r in (await client.list_resources()).resources]
    assert "late://one" in listed


async def test_subscribing_to_an_unknown_uri_is_not_found(make_app: AppFactory) -> None:
    async with Client(build_server(make_app()), mode="legacy") as client:
        with pytest.raises(MCPError) as caught:
            await client.subscribe_resource("fixture://nowhere")
    assert caught.value.code == -32002
    assert caught.value.data == {"uri": "fixture://nowhere"}


async def test_a_closed_connection_leaves_no_subscriptions_behind(make_app: AppFactory) -> None:
    app = make_app(plugins=[ResourcesPlugin()])
    server = build_server(app)
    async with Client(server, mode="legacy") as client:
        await client.subscribe_resource(COUNTER)
        assert app.notifier.subscribers(COUNTER) == 1
    assert app.notifier.subscribers(COUNTER) == 0


async def test_capabilities_advertise_subscribe_and_list_changed(
    make_app: AppFactory,
) -> None:
    server = build_server(make_app())
    async with Client(server, mode="legacy") as client:
        caps = client.server_capabilities
    assert caps.resources is not None
    assert (caps.resources.subscribe, caps.resources.list_changed) == (True, True)
    assert caps.tools is not None
    assert caps.tools.list_changed is True
    assert caps.completions is not None
    modern = server.get_capabilities(protocol_version="2026-07-28")
    assert modern.resources is not None
    assert (modern.resources.subscribe, modern.resources.list_changed) == (True, True)


async def test_a_write_from_a_thread_the_event_loop_waits_for_is_announced_without_deadlock(
    make_app: AppFactory,
) -> None:
    import threading

    app = make_app()
    async with Client(build_server(app), mode="2026-07-28") as client:
        await client.call_tool("store_put", REMINDER)
        async with client.listen(resource_subscriptions=[SENTINEL]) as sub:
            writer = threading.Thread(
                target=lambda: app.store.put("reminder", {"text": "from a thread"}, 1)
            )
            writer.start()
            writer.join(timeout=10)  # blocks the event loop on purpose, as a sync handler might
            assert not writer.is_alive(), "the writer must not wait for the event loop"
            assert await next_event(sub) == ResourceUpdated(SENTINEL)
