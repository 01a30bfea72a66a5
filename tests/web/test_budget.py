"""The token budget as data: the listing's cost against every tool listed, per facet and
per source, counted on the wire JSON `tools/list` carries."""

from __future__ import annotations

import sys
from pathlib import Path

import mcp_types as types

from prixfixe.app import DEFAULT_TOKEN_BUDGET, App
from prixfixe.config import home_dir, load_config
from prixfixe.core.plugins import DEFAULT_PLUGINS
from prixfixe.declarations.tool import Tool
from prixfixe.servers import catalogue
from prixfixe.servers.status import listing_json
from prixfixe.system.doctor import plugin_costs
from prixfixe.tokens import count_tokens
from prixfixe.web.budget import Budget, BudgetRow, token_budget
from tests.conftest import AppFactory
from tests.plugin_fixtures import NoteInput, WeatherPlugin, add_note, many_tools_plugin


def _source(budget: Budget, name: str) -> BudgetRow:
    (row,) = [r for r in budget.sources if r.name == name]
    return row


def _facet(budget: Budget, name: str) -> BudgetRow:
    (row,) = [r for r in budget.facets if r.name == name]
    return row


def test_the_listed_cost_is_what_the_listing_costs_a_model(make_app: AppFactory) -> None:
    app = make_app()
    budget = token_budget(app)
    assert budget.listed_tokens == count_tokens(app.list_tools_json())
    every = listing_json(e.wire for e in app.registry)
    assert budget.all_listed_tokens == count_tokens(every)
    assert budget.all_listed_tokens > budget.listed_tokens
    assert (budget.token_budget, budget.encoding) == (DEFAULT_TOKEN_BUDGET, "cl100k_base")


def test_facet_rows_hold_every_registered_tool_once(make_app: AppFactory) -> None:
    app = make_app()
    budget = token_budget(app)
    assert [r.name for r in budget.facets] == list(app.registry.facets())
    assert {r.kind for r in budget.facets} == {"facet"}
    assert sum(r.tools for r in budget.facets) == len(app.registry)
    assert sum(r.listed_tools for r in budget.facets) == len(app.listed_tools())
    assert all(r.all_tokens >= r.listed_tokens for r in budget.facets)
    # The default listing is the core facet, whole: nothing else is listed.
    core = _facet(budget, "core")
    assert core.listed_tools == core.tools
    assert core.listed_tokens == core.all_tokens == budget.listed_tokens
    weather = _facet(budget, "weather")
    assert (weather.tools, weather.listed_tools, weather.listed_tokens) == (1, 0, 0)
    assert weather.all_tokens == count_tokens(
        listing_json([app.registry.get("weather.forecast").wire])
    )


def test_a_plugin_with_twelve_tools_is_a_plugin_row_of_twelve(make_app: AppFactory) -> None:
    app = make_app(plugins=[many_tools_plugin(12, "bulk")])
    budget = token_budget(app)
    row = _source(budget, "bulk_bulk_12")
    assert (row.kind, row.tools, row.listed_tools, row.listed_tokens) == ("plugin", 12, 0, 0)
    assert row.all_tokens == _facet(budget, "bulk").all_tokens > 0
    assert row.direct_tokens is None


def test_built_in_plugins_are_core_sources_and_every_tool_has_one_source(
    make_app: AppFactory,
) -> None:
    app = make_app(plugins=[WeatherPlugin(), many_tools_plugin(3, "bulk")])
    budget = token_budget(app)
    kinds = {r.name: r.kind for r in budget.sources}
    assert {name for name, kind in kinds.items() if kind == "core"} <= set(DEFAULT_PLUGINS)
    assert kinds["prixfixe.default_plugins.discovery"] == "core"
    assert (kinds["weather_fixture"], kinds["bulk_bulk_3"]) == ("plugin", "plugin")
    assert sum(r.tools for r in budget.sources) == len(app.registry)
    assert sum(r.listed_tools for r in budget.sources) == len(app.listed_tools())
    # Only plugins that registered tools have a row: they are what a listing can cost.
    assert all(r.tools > 0 for r in budget.sources)


def test_a_plugin_row_says_what_prixfixe_plugins_says_it_costs(make_app: AppFactory) -> None:
    app = make_app(env={"PRIXFIXE_EXPOSE": "core,weather"})
    budget = token_budget(app)
    for name in ("weather_fixture", "prixfixe.default_plugins.store"):
        costs = plugin_costs(app, [name])[name]
        row = _source(budget, name)
        assert (row.tools, row.all_tokens, row.listed_tokens) == (
            costs["tools"],
            costs["tools_list"],
            costs["listed"],
        )


def test_exposing_a_facet_moves_its_whole_cost_into_the_listing(make_app: AppFactory) -> None:
    default = token_budget(make_app())
    exposed = token_budget(make_app(env={"PRIXFIXE_EXPOSE": "core,weather"}))
    weather = _facet(exposed, "weather")
    assert (weather.listed_tools, weather.listed_tokens) == (1, weather.all_tokens)
    assert exposed.listed_tokens > default.listed_tokens
    assert exposed.all_listed_tokens == default.all_listed_tokens


def test_rows_add_up_to_the_whole_listing_within_a_few_tokens_per_row(
    make_app: AppFactory,
) -> None:
    # Each row is counted as a listing of its own: its brackets, and the seams between its
    # tools, are where the sums and the whole part ways.
    app = make_app(plugins=[WeatherPlugin(), many_tools_plugin(40, "bulk")])
    budget = token_budget(app)
    for rows in (budget.facets, budget.sources):
        gap = abs(sum(r.all_tokens for r in rows) - budget.all_listed_tokens)
        assert gap <= 3 * len(rows), (gap, len(rows))


def test_a_mounted_servers_kept_tools_are_a_server_row_with_their_direct_cost(
    make_app: AppFactory, tmp_path: Path
) -> None:
    # A server that is never started: its kept tool list is all the budget reads.
    config = f'[servers.srv]\ncommand = "{sys.executable}"\nargs = ["-c", "pass"]\n'
    (tmp_path / "prixfixe.toml").write_text(config, encoding="utf-8")
    env = {"PRIXFIXE_HOME": str(tmp_path / "home"), "PRIXFIXE_TRUSTED_PATHS": str(tmp_path)}
    server = load_config(env, tmp_path).model.servers["srv"]
    kept = [
        types.Tool(
            name=f"action_{i}",
            description=f"Does thing {i} to the widget.",
            input_schema={"type": "object", "properties": {"x": {"type": "string"}}},
        )
        for i in range(4)
    ]
    catalogue.save(catalogue.catalogue_path(home_dir(env), "srv", server), kept)
    app = make_app(config=config)
    budget = token_budget(app)
    row = _source(budget, "srv")
    mounted = [e for e in app.registry if e.tool.facet == "srv"]
    assert (row.kind, row.tools, row.listed_tools, row.listed_tokens) == ("server", 4, 0, 0)
    assert row.all_tokens == count_tokens(listing_json(e.wire for e in mounted))
    assert row.direct_tokens == count_tokens(listing_json(kept))
    assert _facet(budget, "srv").tools == 4


def _late_tool() -> Tool:
    return Tool(
        name="late_note",
        title="A late note",
        description="Save a note, registered after the app was built.",
        input_model=NoteInput,
        handler=add_note,
        mutates=True,
        idempotent=False,
        facet="late",
    )


def test_the_budget_is_counted_once_per_registry_version(make_app: AppFactory) -> None:
    app: App = make_app()
    first = token_budget(app)
    assert token_budget(app) is first
    app.registry.add_tool(_late_tool(), owner="late_plugin")
    after = token_budget(app)
    assert _source(after, "late_plugin").tools == 1
    assert _facet(after, "late").tools == 1
    assert after.all_listed_tokens > first.all_listed_tokens
    assert after.listed_tokens == first.listed_tokens


def test_the_budget_page_gives_the_doctors_direct_figure_beside_prixfixes_copies() -> None:
    """Issue 30: the doctor said 8,106 tokens for the mounted servers' tools, the page 8,462
    (prixfixe's `SERVER.tool` copies). The page now says both, each named, in the same numbers
    as the doctor (`test_doctor_and_index` checks that the figures agree)."""
    server = BudgetRow("srv", "server", 4, 0, 0, 8_462, direct_tokens=8_106)
    core = BudgetRow("prixfixe.default_plugins.store", "core", 3, 3, 300, 300)
    budget = Budget(690, 9_000, DEFAULT_TOKEN_BUDGET, "cl100k_base", (), (core, server))
    assert (budget.direct_tokens, budget.mounted_tokens) == (8_106, 8_462)
    page = _page(budget)
    said = " ".join(page.split())
    assert "listed directly their tools would cost 8,106 tokens" in said
    assert "would cost 8,462 were they listed" in said
    assert '<td class="num" data-label="Tokens listed directly">8,106</td>' in page
    assert '<td class="num" data-label="Tokens listed directly">—</td>' in page  # not a server
    alone = Budget(690, 9_000, DEFAULT_TOKEN_BUDGET, "cl100k_base", (), (core,))
    page = _page(alone)
    assert "Tokens listed directly" not in page
    assert "Mounted servers" not in page


def _page(budget: Budget) -> str:
    from prixfixe.web.app import templates

    context = {"nav": (), "path": "/budget", "csrf": "", "logged_in": False}
    return templates().get_template("budget.html").render(budget=budget, svgs=None, **context)
