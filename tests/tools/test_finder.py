"""The tools' `Finder`: ranks the registry's tools with `prixfixe.search` and, when one plugin
changes, re-analyses that plugin only, ranking exactly as a finder built afresh."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from prixfixe.core.facets import Exposure
from prixfixe.core.registry import Registry
from prixfixe.declarations.tool import Tool, ToolContext
from prixfixe.tools.finder import Finder

EXPOSURE = Exposure(("core",), "default", (), "default")
QUERIES = [
    "remind me to renew my passport on friday",
    "convert a pdf file to text",
    "what is the weather in lisbon tomorrow",
    "delete an old photo",
    "unpushed commits in my repository",
]


class Args(BaseModel):
    path: str = Field(description="File or folder to work on")
    when: str | None = Field(default=None, description="ISO date and time")


def _handler(ctx: ToolContext, args: BaseModel) -> str:  # never called
    return ""


def tool(name: str, description: str, **extra: tuple[str, ...]) -> Tool:
    return Tool(
        name=name,
        title=name,
        description=description,
        input_model=Args,
        handler=_handler,
        mutates=False,
        facet="core",
        **extra,
    )


PLUGINS = {
    "files": [
        tool("file_convert", "Convert a document between formats: PDF, text, HTML."),
        tool("file_delete", "Delete a file or a folder.", keywords=("remove", "erase")),
    ],
    "weather": [tool("forecast", "Weather forecast for a city, days ahead.")],
    "git": [tool("git_unpushed", "List commits not yet pushed to the remote.")],
}
REMINDERS = [
    tool(
        "reminder_add",
        "Add a reminder that fires at a given time.",
        examples=("remind me to call the bank on friday",),
    ),
    tool("photo_delete", "Delete a photo from the library."),
]


def registry_of(plugins: dict[str, list[Tool]]) -> Registry:
    registry = Registry()
    for owner, tools in plugins.items():
        registry.add_tools(tools, owner=owner)
    return registry


def rankings(finder: Finder) -> list[tuple[bool, float, list[tuple[str, float, bool]]]]:
    out = []
    for query in QUERIES:
        found = finder.find(query, limit=10)
        hits = [(f.entry.name, f.score, f.weak) for f in found.found]
        out.append((found.good_match, found.confidence, hits))
    return out


def test_after_a_plugin_is_added_the_finder_ranks_exactly_like_a_new_one() -> None:
    registry = registry_of(PLUGINS)
    finder = Finder(registry, EXPOSURE)
    before = rankings(finder)
    registry.add_tools(REMINDERS, owner="reminders")
    after = rankings(finder)
    assert after != before
    assert after == rankings(Finder(registry_of({**PLUGINS, "reminders": REMINDERS}), EXPOSURE))
    assert after[0][2][0][0] == "reminder_add"


def test_a_registry_change_reanalyses_only_the_plugin_that_changed() -> None:
    registry = registry_of(PLUGINS)
    finder = Finder(registry, EXPOSURE)
    finder.find("convert a file")
    kept = {owner: analysed.docs for owner, analysed in finder._analysed.items()}
    registry.add_tools(REMINDERS, owner="reminders")
    finder.find("convert a file")
    assert set(finder._analysed) == {*PLUGINS, "reminders"}
    for owner, docs in kept.items():
        assert finder._analysed[owner].docs is docs


def test_a_lexical_finder_keeps_no_copy_of_each_tools_text() -> None:
    finder = Finder(registry_of(PLUGINS), EXPOSURE)
    finder.find("convert a file")
    docs = [doc for analysed in finder._analysed.values() for doc in analysed.docs]
    assert docs
    assert all(doc.source is None for doc in docs)


def test_a_tool_with_a_raw_schema_is_found_by_its_arguments_names_and_descriptions() -> None:
    # A mounted server's tool: its arguments live in its own JSON Schema, not in a model.
    raw = Tool(
        name="gis.lookup",
        title="lookup",
        description="Look something up.",
        input_model=Args,  # not read: the raw schema is the tool's
        handler=_handler,
        mutates=False,
        facet="gis",
        input_schema={
            "type": "object",
            "properties": {
                "latitude": {"type": "number", "description": "Degrees north of the equator"},
                "odd": {"type": "string", "description": 7},
            },
        },
    )
    finder = Finder(registry_of({**PLUGINS, "gis": [raw]}), EXPOSURE)
    for query in ("latitude", "degrees north of the equator"):
        assert finder.find(query, limit=3).found[0].entry.name == "gis.lookup"
    assert not any(f.entry.name == "gis.lookup" for f in finder.find("iso date and time").found)


def test_the_garbage_collector_runs_again_after_a_build_even_a_failed_one() -> None:
    import gc

    finder = Finder(registry_of(PLUGINS), EXPOSURE)
    paused: list[bool] = []
    build = finder._build

    def watched(facet: str | None, version: int) -> object:
        paused.append(gc.isenabled())
        return build(facet, version)

    finder._build = watched  # type: ignore[method-assign]
    finder.find("convert a file")
    assert paused == [False]  # the build ran with the cyclic collector paused
    assert gc.isenabled()

    def broken(facet: str | None, version: int) -> object:
        raise RuntimeError("the build failed")

    finder._build = broken  # type: ignore[method-assign]
    finder._registry.add_tools(REMINDERS, owner="reminders")
    with pytest.raises(RuntimeError, match="the build failed"):
        finder.find("convert a file")
    assert gc.isenabled()
