"""A mounted server's resources and templates through prixfixe: listed under
`prixfixe://servers/NAME/<its URI>`, read and completed through it, kept on disk for a lazy
server, subscribed to upstream, re-listed on its `list_changed`, hidden when denied."""

from __future__ import annotations

import base64
from collections.abc import Callable

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.subscriptions import ResourceUpdated, Subscription
from mcp.shared.exceptions import MCPError

from prixfixe.app import App
from prixfixe.mcp.server import build_server
from tests.resources.conftest import Inbox
from tests.servers.conftest import fixture_table, ready, text_of

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

Mounted = Callable[..., App]
NS = "prixfixe://servers/fix/"
ALPHA = NS + "fix://notes/alpha"
BETA = NS + "fix://notes/beta"
PIXEL = NS + "fix://pixel"


async def test_resources_and_templates_are_listed_under_the_servers_namespace(
    mounted: Mounted, revision: str
) -> None:
    app = mounted()
    async with Client(build_server(app), mode=revision) as client:
        await ready(app)
        listed = {r.uri: r for r in (await client.list_resources()).resources}
        templates = (await client.list_resource_templates()).resource_templates
    assert listed[ALPHA] == types.Resource(
        uri=ALPHA,
        name="alpha",
        title="Alpha note",
        description="The first note.",
        mime_type="text/markdown",
    )
    assert listed[PIXEL].mime_type == "image/png"
    assert {NS + "fix://broken", ALPHA, PIXEL} <= set(listed)
    (note,) = [t for t in templates if t.uri_template.startswith(NS)]
    assert note.uri_template == NS + "fix://notes/{name}"
    assert note.description == "A note by its name."


async def test_a_read_returns_the_servers_contents_with_only_the_uri_changed(
    mounted: Mounted, revision: str
) -> None:
    app = mounted()
    async with Client(build_server(app), mode=revision) as client:
        text = await client.read_resource(ALPHA)
        blob = await client.read_resource(PIXEL)
        expanded = await client.read_resource(BETA)  # the template's expansion, unlisted
    assert text.contents == [
        types.TextResourceContents(
            uri=ALPHA, mime_type="text/markdown", text="# Alpha\n\nthe first note"
        )
    ]
    (image,) = blob.contents
    assert isinstance(image, types.BlobResourceContents)
    assert (image.uri, image.mime_type) == (PIXEL, "image/png")
    assert base64.b64decode(image.blob) == bytes([137, 80, 78, 71, 0, 255])
    assert expanded.contents[0].uri == BETA
    assert expanded.contents[0].text == "the second note"  # type: ignore[union-attr]


async def test_a_resource_the_server_does_not_have_is_resource_not_found(
    mounted: Mounted, revision: str
) -> None:
    missing = NS + "fix://notes/nope"
    async with Client(build_server(mounted()), mode=revision) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(missing)
    error = raised.value.error
    assert error.code == (-32002 if revision == "legacy" else -32602)
    assert error.data == {"uri": missing}
    assert "mounted server 'fix' has no such resource" in error.message


async def test_a_failing_read_is_an_error_naming_the_server(mounted: Mounted) -> None:
    async with Client(build_server(mounted()), mode="2026-07-28") as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(NS + "fix://broken")
    error = raised.value.error
    assert error.code == -32603
    assert error.message.startswith("server 'fix': reading 'fix://broken' failed")
    assert error.data == {"server": "fix", "uri": NS + "fix://broken"}
    assert "Traceback" not in error.message


async def test_completing_a_template_variable_asks_the_server(
    mounted: Mounted, revision: str
) -> None:
    app = mounted()
    async with Client(build_server(app), mode=revision) as client:
        await ready(app)
        ref = types.ResourceTemplateReference(uri=NS + "fix://notes/{name}")
        done = await client.complete(ref, {"name": "name", "value": "al"})
    assert done.completion.values == ["alpha"]


async def test_a_lazy_server_lists_its_resources_unstarted_and_starts_on_a_read(
    mounted: Mounted, spawns: list[tuple[str, ...]]
) -> None:
    first = mounted()
    async with Client(build_server(first), mode="legacy"):
        await ready(first)
    spawns.clear()
    app = mounted()
    async with Client(build_server(app), mode="legacy") as client:
        listed = {r.uri for r in (await client.list_resources()).resources}
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert ALPHA in listed
        assert "fix.greet" in prompts
        assert spawns == []
        read = await client.read_resource(ALPHA)
    assert read.contents[0].uri == ALPHA
    assert len(spawns) == 1


async def test_resources_updated_reaches_exactly_the_subscribed_session(
    mounted: Mounted,
) -> None:
    app = mounted()
    server = build_server(app)
    told, other = Inbox(), Inbox()
    async with (
        Client(server, mode="legacy", message_handler=told) as first,
        Client(server, mode="legacy", message_handler=other) as second,
    ):
        await first.subscribe_resource(BETA)
        await second.subscribe_resource(ALPHA)
        upstream = await first.call_tool("tool_invoke", {"name": "fix.subscriptions"})
        assert "fix://notes/beta" in text_of(upstream)  # subscribed upstream, once
        edited = await second.call_tool(
            "tool_invoke", {"name": "fix.edit_note", "arguments": {"name": "beta", "text": "b2"}}
        )
        assert text_of(edited) == "edited, told"
        await told.wait_for(("updated", BETA))
        await second.call_tool(
            "tool_invoke", {"name": "fix.edit_note", "arguments": {"name": "alpha", "text": "a2"}}
        )
        await other.wait_for(("updated", ALPHA))
        read = await first.read_resource(BETA)
        await first.unsubscribe_resource(BETA)
    assert read.contents[0].text == "b2"  # type: ignore[union-attr]
    assert told.items == [("updated", BETA)]
    assert other.items == [("updated", ALPHA)]


async def test_a_listen_stream_hears_the_servers_updates(mounted: Mounted) -> None:
    app = mounted()
    async with Client(build_server(app), mode="2026-07-28") as client:
        async with client.listen(resource_subscriptions=[BETA]) as sub:
            edited = await client.call_tool(
                "tool_invoke", {"name": "fix.edit_note", "arguments": {"name": "beta", "text": "x"}}
            )
            assert text_of(edited) == "edited, told"
            assert await next_event(sub) == ResourceUpdated(BETA)
        # The stream closed: the last subscriber is gone, so is the upstream subscription.
        with anyio.fail_after(10):
            while True:
                left = await client.call_tool("tool_invoke", {"name": "fix.subscriptions"})
                if "fix://notes/beta" not in text_of(left):
                    break


async def next_event(sub: Subscription) -> object:
    with anyio.fail_after(10):
        return await sub.__anext__()


async def test_the_servers_list_changed_updates_the_listing_and_is_announced(
    mounted: Mounted,
) -> None:
    app = mounted()
    inbox = Inbox()
    async with Client(build_server(app), mode="legacy", message_handler=inbox) as client:
        await ready(app)
        before = {r.uri for r in (await client.list_resources()).resources}
        assert NS + "fix://notes/gamma" not in before
        await client.call_tool(
            "tool_invoke", {"name": "fix.new_note", "arguments": {"name": "gamma", "text": "g"}}
        )
        await inbox.wait_for(("resources_list_changed", None))
        after = {r.uri for r in (await client.list_resources()).resources}
    assert NS + "fix://notes/gamma" in after


async def test_a_denied_server_lists_nothing_refuses_reads_and_never_starts(
    mounted: Mounted, spawns: list[tuple[str, ...]], revision: str
) -> None:
    kept = mounted()
    async with Client(build_server(kept), mode="legacy"):
        await ready(kept)  # its lists are kept on disk: denying must hide them too
    spawns.clear()
    app = mounted(fixture_table() + '[mcp]\ndeny = ["fix"]\n')
    async with Client(build_server(app), mode=revision) as client:
        listed = [r.uri for r in (await client.list_resources()).resources]
        listing = await client.list_resource_templates()
        templates = [t.uri_template for t in listing.resource_templates]
        with pytest.raises(MCPError) as read:
            await client.read_resource(ALPHA)
        if revision == "legacy":
            with pytest.raises(MCPError) as subscribed:
                await client.subscribe_resource(ALPHA)
            assert "denied" in subscribed.value.error.message
        else:
            async with client.listen(resource_subscriptions=[ALPHA]):
                pass
    assert not [u for u in listed + templates if u.startswith(NS)]
    assert read.value.error.data == {"uri": ALPHA}
    assert "'fix' is denied" in read.value.error.message
    assert spawns == []
