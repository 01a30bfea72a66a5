"""The table of declaration types drives collection, checking and change events: a type added
to the table (here a test-only `Widget`, with its hookspec) is collected through its hook by
the real plugin manager, checked all-or-nothing, owned, and announced, with no other code."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pytest
from mcp import Client

from prixfixe import StoreMigration, Tool, hookimpl
from prixfixe.core.registry import Registry, RegistryChange
from prixfixe.declarations import hookspecs
from prixfixe.declarations.declaration_type import DeclarationType
from prixfixe.errors import RegistryError
from prixfixe.mcp.server import build_server
from prixfixe.system.capability_index import INDEX_URIS
from tests.conftest import AppFactory
from tests.plugin_fixtures import NoteInput, add_note
from tests.resources.conftest import Inbox


@dataclass(frozen=True, kw_only=True)
class Widget:
    name: str
    size: int
    owner: str = field(default="", compare=False)


def _admit_widget(widget: Widget, owner: str) -> Widget:
    if widget.size < 1:
        raise RegistryError(f"plugin {owner!r} widget {widget.name!r}: size must be >= 1")
    return replace(widget, owner=owner)


WIDGETS: DeclarationType[Widget, Widget] = DeclarationType(
    declared=Widget,
    hook="register_widgets",
    field="widgets",
    what="widget",
    key=lambda widget: widget.name,
    admit=_admit_widget,
    listing="resources",
    refreshes_index=True,
)


@hookspecs.hookspec
def register_widgets(register: Callable[[Widget], None]) -> None:
    """Declare widgets: call `register(Widget(...))` once per widget."""


@pytest.fixture
def widgets_in_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """What adding a declaration type to `hookspecs.py` does: a hookspec and a table entry."""
    monkeypatch.setattr(hookspecs, "register_widgets", register_widgets, raising=False)
    monkeypatch.setattr(hookspecs, "DECLARATION_TYPES", (*hookspecs.DECLARATION_TYPES, WIDGETS))


def a_tool(name: str) -> Tool:
    return Tool(
        name=name,
        title="t",
        description="d.",
        input_model=NoteInput,
        handler=add_note,
        mutates=False,
        facet="widgets",
    )


class WidgetPlugin:
    def __init__(self, *widgets: object, name: str = "widget_plugin", tool: str = "") -> None:
        self.__name__ = name
        self.widgets = widgets
        self.tool = tool

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        if self.tool:
            register(a_tool(self.tool))

    @hookimpl
    def register_widgets(self, register: Callable[[object], None]) -> None:
        for widget in self.widgets:
            register(widget)


def status(app: object, plugin: str) -> str:
    (info,) = [p for p in app.plugins if p.name == plugin]  # type: ignore[attr-defined]
    return str(info.status)


@pytest.mark.usefixtures("widgets_in_table")
def test_a_type_added_to_the_table_is_collected_through_its_hook_and_owned(
    make_app: AppFactory,
) -> None:
    app = make_app(plugins=[WidgetPlugin(Widget(name="gear", size=2), Widget(name="cog", size=1))])
    assert app.registry.hooks[-1] == "register_widgets"
    widgets = app.registry.declared(WIDGETS)
    assert list(widgets) == ["gear", "cog"], "kept in registration order"
    assert widgets["gear"] == Widget(name="gear", size=2)
    assert {w.owner for w in widgets.values()} == {"widget_plugin"}
    assert status(app, "widget_plugin") == "loaded"


@pytest.mark.usefixtures("widgets_in_table")
def test_an_invalid_declaration_of_the_new_type_fails_its_plugin_which_adds_nothing(
    make_app: AppFactory,
) -> None:
    plugin = WidgetPlugin(
        Widget(name="gear", size=2), Widget(name="bent", size=0), tool="widget_polish"
    )
    app = make_app(plugins=[plugin])
    assert app.registry.declared(WIDGETS) == {}
    assert "widget_polish" not in app.registry, "all or nothing across declaration types"
    assert status(app, "widget_plugin") == (
        "failed: plugin 'widget_plugin' widget 'bent': size must be >= 1"
    )


@pytest.mark.usefixtures("widgets_in_table")
def test_a_name_of_the_new_type_taken_by_another_plugin_is_refused_naming_the_first_owner(
    make_app: AppFactory,
) -> None:
    app = make_app(
        plugins=[
            WidgetPlugin(Widget(name="gear", size=2), name="first"),
            WidgetPlugin(Widget(name="gear", size=3), name="second"),
        ]
    )
    assert app.registry.declared(WIDGETS)["gear"].owner == "first"
    assert status(app, "second") == (
        "failed: plugin 'second' registered widget 'gear', already registered by plugin 'first'"
    )


@pytest.mark.usefixtures("widgets_in_table")
def test_an_object_of_no_type_the_hook_feeds_is_refused_naming_the_type_it_wanted(
    make_app: AppFactory,
) -> None:
    app = make_app(plugins=[WidgetPlugin("gear")])
    assert status(app, "widget_plugin") == (
        "failed: plugin 'widget_plugin' registered 'gear', which is not a Widget"
    )


@pytest.mark.usefixtures("widgets_in_table")
def test_the_change_event_names_what_each_declaration_type_added(make_app: AppFactory) -> None:
    app = make_app()
    seen: list[RegistryChange] = []
    app.registry.subscribe(seen.append)
    version = app.registry.version
    app.registry.add_plugin(
        "late", tools=[a_tool("widget_count")], widgets=[Widget(name="cog", size=1)]
    )
    (change,) = seen
    assert change.owner == "late"
    assert change["widgets"] == ("cog",)
    assert change.tools == change["tools"] == ("widget_count",)
    assert change.kinds == change.prompts == change["migrations"] == ()
    assert set(change.added) == {t.field for t in app.registry.declaration_types}
    assert app.registry.version == version + 1


@pytest.mark.anyio
@pytest.mark.usefixtures("widgets_in_table")
async def test_a_late_registration_of_the_new_type_sends_the_notifications_its_entry_names(
    make_app: AppFactory,
) -> None:
    inbox = Inbox()
    app = make_app()
    summary = INDEX_URIS["summary"]
    async with Client(build_server(app), mode="legacy", message_handler=inbox) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.subscribe_resource(summary)
        await client.list_resources()  # list_changed goes to connections that have listed
        app.registry.add_plugin("late", widgets=[Widget(name="cog", size=1)])
        await inbox.wait_for(("resources_list_changed", None))
        await inbox.wait_for(("updated", summary))


def test_every_hookspec_feeds_a_declaration_type_and_every_type_has_a_hookspec() -> None:
    specs = [name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), "prixfixe_spec")]
    table = hookspecs.DECLARATION_TYPES
    assert sorted(specs) == sorted({t.hook for t in table})
    assert len({t.field for t in table}) == len(table), "a field names one type"
    assert Registry().hooks == (
        "register_tools",
        "register_store_kinds",
        "register_store_migrations",
        "register_resources",
        "register_step_types",
        "register_prompts",
        "register_curation",
    ), "the order plugins' declarations were always checked in"


def test_migration_names_are_unique_per_plugin_not_across_plugins(make_app: AppFactory) -> None:
    init = StoreMigration(name="0001_init", statements=("CREATE TABLE {prefix}t (x)",))

    class Tables:
        def __init__(self, name: str, *steps: StoreMigration) -> None:
            self.__name__ = name
            self.steps = steps

        @hookimpl
        def register_store_migrations(self, register: Callable[[StoreMigration], None]) -> None:
            for step in self.steps:
                register(step)

    app = make_app(plugins=[Tables("a", init), Tables("b", init), Tables("c", init, init)])
    assert app.registry.migrations["a"] == app.registry.migrations["b"] == (init,)
    assert "c" not in app.registry.migrations
    assert status(app, "c") == "failed: plugin 'c' registered migration '0001_init' twice"
