"""The capability index: generated from the registry, cached, measured, and announced."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable

import anyio
import pytest
from mcp import Client
from mcp.client.subscriptions import ResourceUpdated

from prixfixe import Tool, hookimpl
from prixfixe.mcp.server import build_server
from prixfixe.system.capability_index import INDEX_URIS
from tests.conftest import AppFactory
from tests.plugin_fixtures import NoteInput, WeatherPlugin, add_note, many_tools_plugin
from tests.resources.conftest import Inbox

pytestmark = pytest.mark.anyio

SUMMARY, FULL, STATS = INDEX_URIS["summary"], INDEX_URIS["full"], INDEX_URIS["stats"]


async def read_text(client: Client, uri: str) -> str:
    result = await client.read_resource(uri)
    return result.contents[0].text  # type: ignore[union-attr]


def late_tool(name: str = "telescope_point") -> Tool:
    return Tool(
        name=name,
        title="Point the telescope",
        description="Point the observatory telescope at a star.",
        input_model=NoteInput,
        handler=add_note,
        mutates=True,
        facet="astronomy",
        keywords=("observe", "star"),
    )


async def test_the_index_changes_and_subscribers_are_told_when_a_plugin_registers_a_tool(
    make_app: AppFactory, revision: str
) -> None:
    inbox = Inbox()
    app = make_app()
    async with Client(build_server(app), mode=revision, message_handler=inbox) as client:
        before_full = json.loads(await read_text(client, FULL))
        before_summary = await read_text(client, SUMMARY)
        if revision == "legacy":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.subscribe_resource(SUMMARY)
            app.registry.add_plugin("astronomy_plugin", tools=[late_tool()])
            await inbox.wait_for(("updated", SUMMARY))
        else:
            async with client.listen(resource_subscriptions=[SUMMARY, FULL]) as sub:
                app.registry.add_plugin("astronomy_plugin", tools=[late_tool()])
                with anyio.fail_after(10):
                    events = {await sub.__anext__(), await sub.__anext__()}
            assert events == {ResourceUpdated(SUMMARY), ResourceUpdated(FULL)}
        after_full = json.loads(await read_text(client, FULL))
        after_summary = await read_text(client, SUMMARY)
    names = [t["name"] for t in after_full["tools"]]
    assert "telescope_point" in names
    assert "telescope_point" not in [t["name"] for t in before_full["tools"]]
    assert after_summary != before_summary
    # The summary is capped (its terms are not every tool's), but the new facet is always there.
    assert "astronomy (1)" in after_summary


async def test_stats_token_counts_equal_a_direct_count_of_the_variants_text(
    make_app: AppFactory, revision: str
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        stats = json.loads(await read_text(client, STATS))
        texts = {"summary": await read_text(client, SUMMARY), "full": await read_text(client, FULL)}
    direct: dict[str, dict[str, int]] = {}
    with warnings.catch_warnings():
        # bpe-openai 0.1.x reads its tables with a deprecated importlib.resources call.
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        for name in ("cl100k_base", "o200k_base"):
            encoding = bpe_openai.get_encoding(name)
            direct[name] = {v: len(encoding.encode_ordinary(t)) for v, t in texts.items()}
    for variant, text in texts.items():
        measured = stats["variants"][variant]
        assert measured["uri"] == INDEX_URIS[variant]  # type: ignore[index]
        assert measured["bytes"] == len(text.encode("utf-8"))
        assert measured["words"] == len(text.split())
        assert measured["lines"] == len(text.splitlines())
        for name, counts in direct.items():
            assert measured["tokens"][name] == counts[variant], name
    assert stats["variants"]["summary"]["tokens"]["cl100k_base"] > 50


async def test_the_index_is_built_once_and_again_only_when_the_registry_changes(
    make_app: AppFactory,
) -> None:
    app = make_app()
    async with Client(build_server(app), mode="legacy") as client:
        for uri in (SUMMARY, FULL, STATS, SUMMARY, FULL):
            await read_text(client, uri)
        assert app.capability_index.builds == 1
        app.registry.add_plugin("astronomy_plugin", tools=[late_tool()])
        assert app.capability_index.builds == 1, "rebuilt on the next read, not eagerly"
        await read_text(client, SUMMARY)
        await read_text(client, STATS)
        assert app.capability_index.builds == 2


async def test_listed_variants_follow_the_config_and_every_variant_stays_readable(
    make_app: AppFactory, revision: str
) -> None:
    default = make_app()
    async with Client(build_server(default), mode=revision) as client:
        uris = {r.uri for r in (await client.list_resources()).resources}
    assert {SUMMARY, STATS} <= uris
    assert FULL not in uris

    only_full = make_app(config='[resources.capability_index]\nadvertise = ["full"]\n')
    async with Client(build_server(only_full), mode=revision) as client:
        uris = {r.uri for r in (await client.list_resources()).resources}
        summary = await read_text(client, SUMMARY)
    assert FULL in uris
    assert not {SUMMARY, STATS} & uris
    assert summary.startswith("# prixfixe capabilities (summary)")


async def test_the_full_index_describes_every_kind_of_capability(make_app: AppFactory) -> None:
    app = make_app(config='[mcp]\ndeny = ["archive"]\n')
    async with Client(build_server(app), mode="legacy") as client:
        full = json.loads(await read_text(client, FULL))
    assert set(full) >= {"tools", "step_types", "store_kinds", "resource_templates", "prompts"}
    tools = {t["name"]: t for t in full["tools"]}
    assert tools["weather.forecast"]["input_schema"]["required"] == ["city"]
    assert tools["weather.forecast"]["listed"] is False
    assert tools["store_put"]["listed"] is True
    assert not any(name.startswith("archive_") for name in tools), "denied facets are left out"
    kinds = {k["name"]: k for k in full["store_kinds"]}
    assert kinds["reminder"]["served_by"] == [
        "store_put",
        "store_query",
        "store_close",
        "store_kinds",
    ]
    assert kinds["reminder"]["schema"]["properties"]["due"]["format"] == "date"
    assert [t["uri_template"] for t in full["resource_templates"]] == [
        "prixfixe://store/{kind}/{id}",
        "prixfixe://knowledge/{collection}/documents{?cursor}",
        "prixfixe://knowledge/{collection}/document/{id}",
        "prixfixe://knowledge/{collection}/document/{id}/outline",
        "prixfixe://knowledge/{collection}/document/{id}/section/{seq}",
        "prixfixe://knowledge/{collection}/document/{id}/chunks/{span}",
        "prixfixe://knowledge/{collection}/stats",
        "prixfixe://knowledge/search{?q,collection,path,format,limit}",
    ]
    steps = {s["name"]: s for s in full["step_types"]}
    assert steps["git-status"]["programs"] == []  # read through libgit2
    assert steps["git-tend"]["programs"] == ["git"]
    assert "step_run" in steps["git-status"]["run_by"]
    assert steps["capability-index"]["data_schema"]["properties"]["variant"]["enum"] == [
        "summary",
        "full",
        "stats",
    ]
    assert full["prompts"] == []


def _bulk(count: int) -> object:
    class Described:
        __name__ = f"described_{count}"

        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            for i in range(count):
                register(
                    Tool(
                        name=f"svc{i}_sync",
                        title=f"Sync service {i}",
                        description=f"Synchronise the records of service {i} with its upstream.",
                        input_model=NoteInput,
                        handler=add_note,
                        mutates=True,
                        facet=f"svc{i % 20}",
                        keywords=("sync", f"service{i}"),
                    )
                )

    return Described()


async def test_the_summary_grows_far_slower_than_the_full_index(make_app: AppFactory) -> None:
    sizes: dict[int, tuple[int, int]] = {}
    for count in (0, 10, 1000):
        extra = [_bulk(count), many_tools_plugin(count)] if count else []
        app = make_app(plugins=[WeatherPlugin(), *extra])
        summary = app.capability_index.text("summary")
        full = app.capability_index.text("full")
        sizes[count] = (len(summary), len(full))
    (_, base_full), (small_summary, small_full), (big_summary, big_full) = sizes.values()
    # The full index grows with the tools added (net of the base, which already holds every
    # built-in tool and step type, so a new built-in does not move this), the summary stays
    # about the same: 100 times the tools, well over 50 times the growth.
    assert big_full - base_full > 50 * (small_full - base_full), sizes
    assert big_summary < 2 * small_summary, sizes


async def test_the_capability_index_step_gives_clients_without_resources_the_same_text(
    make_app: AppFactory, revision: str
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        for variant in ("summary", "stats"):
            via_resource = await read_text(client, INDEX_URIS[variant])  # type: ignore[index]
            result = await client.call_tool(
                "step_run",
                {"type": "capability-index", "params": {"variant": variant}, "format": "data"},
            )
            assert result.is_error is False
            assert result.structured_content is not None
            (step,) = result.structured_content["steps"]
            assert step["status"] == "ok"
            assert step["data"]["text"] == via_resource
            if variant == "stats":
                assert step["data"]["document"] == json.loads(via_resource)
        listed = [t.name for t in (await client.list_tools()).tools]
    assert "capability-index" not in listed, "a step type costs tools/list nothing"
