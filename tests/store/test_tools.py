"""The store tools through a real in-memory `mcp.Client`: the three core tools, kinds
disclosed on demand, errors a model can act on, and plugins' kinds and slices. Each app runs
on both backends (SQLite; records on PostgreSQL, plugins' tables in the local file)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest
from mcp import Client
from pydantic import BaseModel, ConfigDict, Field

from prixfixe import StoreKind, StoreMigration, Tool, ToolContext, hookimpl
from prixfixe.app import App
from prixfixe.config import STORE_URL_ENV
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.search_text import searched

pytestmark = pytest.mark.anyio


@pytest.fixture
def make_app(make_app: AppFactory, backend: str, request: pytest.FixtureRequest) -> AppFactory:
    """Apps on each backend: records on PostgreSQL through PRIXFIXE_STORE_URL."""
    if backend == "sqlite":
        return make_app
    url = request.getfixturevalue("postgres_url")

    def factory(*, env: dict[str, str] | None = None, **options: Any) -> App:
        return make_app(env={STORE_URL_ENV: url, **(env or {})}, **options)

    return factory


def _text(result: Any) -> str:
    return str(result.content[0].text)


async def test_the_listing_holds_the_store_trio_but_no_kind_schema(
    make_app: AppFactory, revision: str
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"store_put", "store_query", "store_close"} <= set(tools)
    assert "store_kinds" not in tools
    listing = json.dumps([t.model_dump(mode="json", by_alias=True) for t in tools.values()])
    # The built-in kinds' field names are listed, one line, so a first put can be right;
    # their full schemas (enums, limits, descriptions) are not.
    for field_of_a_kind in ("recurrence", "work_days", "label"):
        assert field_of_a_kind in listing
    for detail_of_a_kind in ("yearly", "weekdays", "What to be reminded of"):
        assert detail_of_a_kind not in listing
    put = tools["store_put"]
    assert put.input_schema["properties"]["record"]["type"] == "object"
    assert put.annotations is not None
    # MCP's default (a tool may write) goes unsaid in the listing; not destructive is said.
    assert put.annotations.read_only_hint is None
    assert put.annotations.destructive_hint is False
    assert tools["store_query"].annotations.read_only_hint is True  # type: ignore[union-attr]


async def test_put_query_and_close_round_trip_with_generations(
    make_app: AppFactory, revision: str
) -> None:
    async with Client(build_server(make_app()), mode=revision) as client:
        put = await client.call_tool(
            "store_put",
            {"kind": "reminder", "record": {"text": "dentist", "due": "2026-12-01"}},
        )
        assert put.is_error is False
        assert put.structured_content == {"id": 1, "generation": 1}
        assert _text(put) == "Created reminder 1 (store generation 1)."
        update = await client.call_tool(
            "store_put", {"kind": "reminder", "id": 1, "record": {"recurrence": "yearly"}}
        )
        assert update.structured_content == {"id": 1, "generation": 2}
        found = await client.call_tool(
            "store_query",
            {"kind": "reminder", "where": {"due": {"<=": "2026-12-31"}}, "order_by": "due"},
        )
        assert found.structured_content == {
            "kind": "reminder",
            "generation": 2,
            "records": [
                {
                    "id": 1,
                    "gen": 2,
                    "record": {"text": "dentist", "due": "2026-12-01", "recurrence": "yearly"},
                    "closed": False,
                    "reason": None,
                }
            ],
            "next_cursor": None,
            "damaged": [],
        }
        closed = await client.call_tool(
            "store_close", {"kind": "reminder", "id": 1, "reason": "booked"}
        )
        assert closed.structured_content == {"id": 1, "generation": 3}
        hidden = await client.call_tool("store_query", {"kind": "reminder"})
        shown = await client.call_tool("store_query", {"kind": "reminder", "include_closed": True})
    assert hidden.structured_content["records"] == []  # type: ignore[index]
    (record,) = shown.structured_content["records"]  # type: ignore[index]
    assert record["closed"] is True
    assert record["reason"] == "booked"


async def test_structured_results_validate_against_the_advertised_output_schemas(
    make_app: AppFactory,
) -> None:
    from jsonschema import Draft202012Validator

    app = make_app()
    async with Client(build_server(app), mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        results = {
            "store_put": await client.call_tool(
                "store_put", {"kind": "deadline", "record": {"label": "tax", "date": "2026-04-30"}}
            ),
            "store_query": await client.call_tool("store_query", {"kind": "deadline", "limit": 1}),
            "store_close": await client.call_tool("store_close", {"kind": "deadline", "id": 1}),
        }
    for name, result in results.items():
        assert tools[name].output_schema is None  # listed without it; tool_describe gives it
        schema = app.registry.get(name).output_schema
        assert schema is not None
        Draft202012Validator(schema).validate(result.structured_content)
        # One text block for the model; the JSON is not repeated in a second one.
        assert len(result.content) == 1
    assert _text(results["store_put"]) == "Created deadline 1 (store generation 1)."
    assert _text(results["store_query"]) == (
        '1 deadline (generation 1):\n- id 1: {"label":"tax","date":"2026-04-30","notes":null}'
    )


async def test_pages_follow_next_cursor_through_the_tool(make_app: AppFactory) -> None:
    async with Client(build_server(make_app()), mode="legacy") as client:
        for i in range(7):
            await client.call_tool(
                "store_put",
                {"kind": "deadline", "record": {"label": f"d{i}", "date": f"2026-0{1 + i % 3}-01"}},
            )
        seen: list[int] = []
        cursor = None
        while True:
            args: dict[str, Any] = {"kind": "deadline", "order_by": "-date", "limit": 3}
            if cursor:
                args["cursor"] = cursor
            page = await client.call_tool("store_query", args)
            assert page.structured_content is not None
            seen += [r["id"] for r in page.structured_content["records"]]
            cursor = page.structured_content["next_cursor"]
            if cursor is None:
                break
            assert f"More: cursor={cursor!r}" in _text(page)
    assert sorted(seen) == list(range(1, 8))
    assert len(seen) == 7


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("store_put", {"kind": "remindr", "record": {}}, "unknown kind 'remindr'; did you mean"),
        (
            "store_put",
            {"kind": "reminder", "record": {"text": "x", "due": "2026-02-30"}},
            "invalid reminder record: field 'due': input should be a valid date",
        ),
        (
            "store_put",
            {"kind": "reminder", "record": {"text": "x", "due": "2026-01-01"}, "id": 42},
            "no reminder record with id 42",
        ),
        ("store_close", {"kind": "deadline", "id": 7}, "no deadline record with id 7"),
        (
            "store_query",
            {"kind": "countdown", "where": {"ends": {"<": "2026-01-01"}}},
            "unknown field 'ends'; did you mean 'end'?",
        ),
        (
            "store_query",
            {"kind": "reminder", "cursor": "bm90LWEtY3Vyc29y.AAAA"},
            "invalid cursor for kind 'reminder'",
        ),
        ("store_put", {"kind": "reminder", "record": "text=x"}, "'record': expected object"),
    ],
)
async def test_bad_input_is_an_error_result_naming_the_problem_and_writes_nothing(
    make_app: AppFactory, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    async with Client(build_server(make_app()), mode="legacy") as client:
        result = await client.call_tool(tool, arguments)
        after = await client.call_tool("store_query", {"kind": "reminder"})
    assert result.is_error is True
    assert expected in _text(result)
    assert after.structured_content is not None
    assert after.structured_content["generation"] == 0


async def test_kinds_are_disclosed_on_demand_through_search_describe_and_invoke(
    make_app: AppFactory,
) -> None:
    async with Client(build_server(make_app()), mode="legacy") as client:
        described = await client.call_tool("tool_describe", {"name": "store_put"})
        assert "Usage: Each kind's fields: tool_invoke('store_kinds'" in _text(described)
        found = await client.call_tool("tool_search", {"query": "what fields does a deadline have"})
        assert searched(found).names[0] == "store_kinds"
        one = await client.call_tool(
            "tool_invoke", {"name": "store_kinds", "arguments": {"kind": "countdown"}}
        )
        every = await client.call_tool("tool_invoke", {"name": "store_kinds"})
        unknown = await client.call_tool(
            "tool_invoke", {"name": "store_kinds", "arguments": {"kind": "birthday"}}
        )
    assert one.structured_content is not None
    (countdown,) = one.structured_content["kinds"]
    assert countdown["version"] == 1
    assert countdown["owner"] == "prixfixe.default_plugins.store"
    assert countdown["indexed"] == ["end"]
    assert countdown["schema"]["required"] == ["label", "start", "end"]
    assert countdown["schema"]["properties"]["work_days"]["type"] == "array"
    assert every.structured_content is not None
    assert [k["name"] for k in every.structured_content["kinds"]] == [
        "reminder",
        "deadline",
        "countdown",
    ]
    assert unknown.is_error is True
    assert "unknown kind 'birthday'" in _text(unknown)


async def test_the_store_opens_on_first_use_and_closes_when_the_server_stops(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = make_app()
    store_file = tmp_path / "home" / "store.sqlite3"
    async with Client(build_server(app), mode="legacy") as client:
        await client.list_tools()
        await client.call_tool("tool_invoke", {"name": "store_kinds"})
        assert app._store is None, "listing tools or kinds does not open the store"
        assert not store_file.exists()
        await client.call_tool("store_query", {"kind": "reminder"})
        assert app._store is not None
        # On PostgreSQL every built-in owner's tables are in the database: no local file.
        assert store_file.exists() is (STORE_URL_ENV not in app.env)
    assert app._store is None, "the server's shutdown closed the store"


class NoteRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(description="Title.")
    stars: int = Field(default=0, ge=0, le=5)


class Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NotesPlugin:
    """A third-party-style plugin: a kind, its own table, and tools that use its slice."""

    __name__ = "notes_plugin"

    @hookimpl
    def register_store_kinds(self, register: Callable[[StoreKind], None]) -> None:
        register(
            StoreKind(
                name="note",
                description="A rated note.",
                model=NoteRecord,
                version=2,
                indexed=("stars",),
            )
        )

    @hookimpl
    def register_store_migrations(self, register: Callable[[StoreMigration], None]) -> None:
        register(
            StoreMigration(
                name="0001_tally",
                statements=("CREATE TABLE {prefix}tally (n INTEGER NOT NULL)",),
            )
        )

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        async def count(ctx: ToolContext, args: Empty) -> str:
            def work() -> str:
                own = ctx.slice()
                own.execute("INSERT INTO {prefix}tally (n) VALUES (1)")
                return f"tally {own.query('SELECT count(*) FROM {prefix}tally')[0][0]}"

            return await anyio.to_thread.run_sync(work)

        async def snoop(ctx: ToolContext, args: Empty) -> str:
            rows = await anyio.to_thread.run_sync(
                lambda: ctx.slice().query("SELECT body FROM records")
            )
            return str(rows)

        for name, handler in (("notes_count", count), ("notes_snoop", snoop)):
            register(
                Tool(
                    name=name,
                    title=name,
                    description=f"{name} tool.",
                    input_model=Empty,
                    handler=handler,
                    mutates=True,
                    facet="notes",
                )
            )


async def test_a_plugins_kind_is_stored_under_its_owner_and_its_tools_reach_only_its_tables(
    make_app: AppFactory,
) -> None:
    app = make_app(plugins=[NotesPlugin()])
    async with Client(build_server(app), mode="legacy") as client:
        put = await client.call_tool(
            "store_put", {"kind": "note", "record": {"title": "good read", "stars": 4}}
        )
        assert put.is_error is False
        starred = await client.call_tool(
            "store_query", {"kind": "note", "where": {"stars": {">=": 3}}}
        )
        kinds = await client.call_tool("tool_invoke", {"name": "store_kinds"})
        first = await client.call_tool("tool_invoke", {"name": "notes_count"})
        second = await client.call_tool("tool_invoke", {"name": "notes_count"})
        snoop = await client.call_tool("tool_invoke", {"name": "notes_snoop"})
    assert [r["record"]["title"] for r in starred.structured_content["records"]] == ["good read"]  # type: ignore[index]
    note = next(k for k in kinds.structured_content["kinds"] if k["name"] == "note")  # type: ignore[index]
    assert note["owner"] == "notes_plugin"
    assert note["version"] == 2
    assert (_text(first), _text(second)) == ("tally 1", "tally 2")
    assert snoop.is_error is True
    assert "store slice of 'notes_plugin' refused: table 'records'" in _text(snoop)


class BadKindPlugin:
    __name__ = "bad_kind_plugin"

    @hookimpl
    def register_store_kinds(self, register: Callable[[StoreKind], None]) -> None:
        register(
            StoreKind(
                name="note", description="d", model=NoteRecord, version=1, indexed=("rating",)
            )
        )

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="bad_tool",
                title="t",
                description="d",
                input_model=Empty,
                handler=lambda c, a: "x",
                mutates=False,
                facet="bad",
            )
        )


class ClashingKindPlugin:
    __name__ = "clashing_kind_plugin"

    @hookimpl
    def register_store_kinds(self, register: Callable[[StoreKind], None]) -> None:
        register(StoreKind(name="reminder", description="d", model=NoteRecord, version=1))


def test_a_plugin_with_an_invalid_or_clashing_kind_registers_nothing(
    make_app: AppFactory,
) -> None:
    app = make_app(plugins=[BadKindPlugin(), ClashingKindPlugin()])
    status = {p.name: p.status for p in app.plugins}
    assert status["bad_kind_plugin"] == (
        "failed: plugin 'bad_kind_plugin' store kind 'note': indexed field 'rating' is not a "
        "field (fields: title, stars)"
    )
    assert "bad_tool" not in app.registry, "all or nothing: its valid tool is not added"
    assert status["clashing_kind_plugin"] == (
        "failed: plugin 'clashing_kind_plugin' registered store kind 'reminder', already "
        "registered by plugin 'prixfixe.default_plugins.store'"
    )
    assert app.registry.kinds["reminder"].owner == "prixfixe.default_plugins.store"


def test_a_kind_may_not_use_the_store_s_own_field_names() -> None:
    from prixfixe.core.registry import Registry
    from prixfixe.errors import RegistryError

    class WithId(BaseModel):
        id: int

    with pytest.raises(RegistryError, match="field name 'id' is reserved"):
        Registry().add_plugin(
            "p", kinds=[StoreKind(name="thing", description="d", model=WithId, version=1)]
        )
