"""A template's `lister`: instances computed at list time appear in `resources/list`, merged
with the static resources by URI and paged with the same keyset cursors, through a real
client on both revisions; a lister that fails or answers wrongly leaves only its own entries
out."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import mcp_types as types
import pytest
from mcp import Client

from prixfixe import Resource, ResourceContext, ResourceTemplate, hookimpl
from prixfixe.declarations.resource import ListedResource, ResourceLister
from prixfixe.errors import RegistryError
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.plugin_fixtures import ResourcesPlugin

pytestmark = pytest.mark.anyio

ROWS = [f"fixture://rows/{n:04d}" for n in range(250)]


def list_rows(ctx: ResourceContext, after: str | None, limit: int) -> Sequence[ListedResource]:
    """A lister over an in-memory table, as a plugin's store query would page it (sync: it
    runs in a worker thread)."""
    rows = [uri for uri in ROWS if after is None or uri > after][:limit]
    return [ListedResource(uri=uri, name=uri.rsplit("/", 1)[1], size=3) for uri in rows]


class RowsPlugin:
    """A template whose instances are listed by `lister`."""

    __name__ = "rows_fixture"

    def __init__(self, lister: ResourceLister = list_rows) -> None:
        self.lister = lister

    @hookimpl
    def register_resources(self, register: Callable[[Resource | ResourceTemplate], None]) -> None:
        register(
            ResourceTemplate(
                uri_template="fixture://rows/{n}",
                name="row",
                mime_type="text/csv",
                audience=("assistant",),
                reader=lambda ctx, variables: f"{variables['n']}\n",
                lister=self.lister,
            )
        )


async def every_page(client: Client) -> list[list[types.Resource]]:
    pages: list[list[types.Resource]] = []
    cursor: str | None = None
    while True:
        page = await client.list_resources(cursor=cursor)
        pages.append(page.resources)
        cursor = page.next_cursor
        if cursor is None:
            return pages


async def test_listed_instances_merge_with_static_resources_by_uri_each_exactly_once(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(
        plugins=[ResourcesPlugin(count=40), RowsPlugin()], config="[resources]\npage_size = 16\n"
    )
    async with Client(build_server(app), mode=revision) as client:
        pages = await every_page(client)
    seen = [r.uri for page in pages for r in page]
    assert [uri for uri in seen if uri.startswith("fixture://rows/")] == ROWS
    assert len([uri for uri in seen if uri.startswith("fixture://items/")]) == 40
    assert seen == sorted(set(seen)), "one listing, sorted by URI, nothing twice"
    assert all(len(page) == 16 for page in pages[:-1])
    row = next(r for page in pages for r in page if r.uri == ROWS[0])
    assert (row.name, row.size, row.mime_type) == ("0000", 3, "text/csv")
    assert row.annotations is not None
    assert row.annotations.audience == ["assistant"], "the template's, by default"


async def test_a_failing_lister_leaves_out_only_its_own_entries(
    make_app: AppFactory, revision: str, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(ctx: ResourceContext, after: str | None, limit: int) -> Sequence[ListedResource]:
        raise RuntimeError("the table is gone")

    def wrong(ctx: ResourceContext, after: str | None, limit: int) -> object:
        return "fixture://rows/1"

    for lister in (broken, wrong):
        app = make_app(plugins=[ResourcesPlugin(count=2), RowsPlugin(lister)])  # type: ignore[arg-type]
        with caplog.at_level(logging.ERROR):
            async with Client(build_server(app), mode=revision) as client:
                listed = [r.uri for r in (await client.list_resources()).resources]
        assert "fixture://items/00001" in listed
        assert "prixfixe://system/health" in listed
        assert not any(uri.startswith("fixture://rows/") for uri in listed)
        assert "lister of fixture://rows/{n} failed" in caplog.text


async def test_an_async_lister_is_awaited_and_its_entries_after_the_cursor_only_are_kept(
    make_app: AppFactory,
) -> None:
    async def sloppy(
        ctx: ResourceContext, after: str | None, limit: int
    ) -> Sequence[ListedResource]:
        # Ignores `after`: the service still never repeats what an earlier page held.
        return [ListedResource(uri=uri, name="r") for uri in ROWS[:limit]]

    app = make_app(plugins=[RowsPlugin(sloppy)], config="[resources]\npage_size = 5\n")
    async with Client(build_server(app), mode="legacy") as client:
        pages = await every_page(client)
    seen = [r.uri for page in pages for r in page]
    assert seen == sorted(set(seen))
    assert [uri for uri in seen if uri.startswith("fixture://rows/")] == ROWS[:6]


def test_a_lister_that_is_not_callable_is_refused_at_registration() -> None:
    from prixfixe.core.registry import Registry

    bad = ResourceTemplate(
        uri_template="fixture://rows/{n}",
        name="row",
        reader=lambda ctx, variables: "",
        lister="not callable",  # type: ignore[arg-type]
    )
    with pytest.raises(RegistryError, match="lister must be callable"):
        Registry().add_plugin("bad", templates=[bad])
