"""The doctor report as data (`prixfixe.system.doctor`), read from a real App."""

from __future__ import annotations

from pathlib import Path

from prixfixe.app import DEFAULT_TOOL_BUDGET
from prixfixe.system.doctor import doctor_report
from prixfixe.tokens import count_tokens
from tests.conftest import CORE_TOOLS, AppFactory


def test_the_report_counts_the_tools_and_tokens_of_the_real_default_listing(
    make_app: AppFactory,
) -> None:
    app = make_app()
    report = doctor_report(app, tool_budget=DEFAULT_TOOL_BUDGET, token_budget=1200)
    listing = app.list_tools_json()
    assert report["tools_list"] == {
        "tools": len(CORE_TOOLS),
        "budget": DEFAULT_TOOL_BUDGET,
        "token_budget": 1200,
        "bytes": len(listing.encode()),
        "tokens": {
            "cl100k_base": count_tokens(listing, "cl100k_base"),
            "o200k_base": count_tokens(listing, "o200k_base"),
        },
    }
    assert report["registered_tools"] == len(app.registry) > len(CORE_TOOLS)
    summary = app.capability_index.text("summary")
    assert report["resources"]["capability_index_summary_tokens"]["cl100k_base"] == count_tokens(
        summary
    )


def test_the_report_states_the_budget_it_is_given_beside_the_count(make_app: AppFactory) -> None:
    report = doctor_report(make_app(), tool_budget=3)
    assert report["tools_list"]["budget"] == 3
    assert report["tools_list"]["tools"] > 3


def test_the_report_names_every_plugin_with_its_origin_and_status(make_app: AppFactory) -> None:
    report = doctor_report(make_app(), tool_budget=DEFAULT_TOOL_BUDGET)
    plugins = {p["name"]: (p["origin"], p["status"]) for p in report["plugins"]}
    assert plugins["prixfixe.default_plugins.discovery"] == ("built-in", "loaded")
    assert plugins["prixfixe.default_plugins.store"] == ("built-in", "loaded")
    assert plugins["weather_fixture"][1] == "loaded"


def test_the_report_carries_the_effective_leash_with_where_each_part_came_from(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = make_app(config="[leash]\nnet = ['example.org']\nmax_calls = 5\n")
    leash = doctor_report(app, tool_budget=DEFAULT_TOOL_BUDGET)["leash"]
    config = tmp_path / "prixfixe.toml"
    assert leash["net"] == {"hosts": ["example.org"], "source": f"[leash] net in {config}"}
    assert leash["max_calls"] == {"value": 5, "source": f"[leash] max_calls in {config}"}
    assert set(leash) == {
        "exec",
        "fs_read",
        "fs_write",
        "net",
        "max_calls",
        "valid_for_generation",
    }
    assert leash == app.routines.leash.summary()


def test_the_report_shows_the_config_in_use_and_the_facet_policy(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = make_app(config='[mcp]\nexpose = ["core", "weather"]\n')
    report = doctor_report(app, tool_budget=DEFAULT_TOOL_BUDGET)
    config = tmp_path / "prixfixe.toml"
    assert report["config"]["file"] == str(config)
    assert {"path": str(config), "exists": True} in report["config"]["searched"]
    assert report["exposure"]["expose"] == ["core", "weather"]
    assert report["exposure"]["expose_source"] == f"{config} [mcp] expose"
    facets = {f["name"]: f for f in report["facets"]}
    assert facets["weather"]["listed"] is True
    assert facets["core"]["tools"] >= len(CORE_TOOLS)


def test_the_report_locates_the_store_without_creating_it(
    make_app: AppFactory, tmp_path: Path
) -> None:
    report = doctor_report(make_app(), tool_budget=DEFAULT_TOOL_BUDGET)
    store = tmp_path / "home" / "store.sqlite3"
    assert report["store"] == {
        "backend": "sqlite",
        "path": str(store),
        "exists": False,
        "kinds": ["reminder", "deadline", "countdown"],
        "postgresql": None,
    }
    assert not store.exists()
    assert report["routines"]["names"] == ["morning"]
    assert "git-status" in report["routines"]["step_types"]
