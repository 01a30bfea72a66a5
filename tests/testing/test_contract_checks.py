"""The contract kit's checks, each on a plugin that keeps that part of the contract and on
plugins that break it: the check fails, naming the problem."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from prixfixe.system.doctor import plugin_costs
from prixfixe.testing import ContractFailure, PluginHarness, TokenCost
from prixfixe.testing.harness import COSTS
from prixfixe.tokens import count_tokens
from tests.testing.kit_plugins import (
    PYTHON,
    ConnectsDirectly,
    ConnectsUndeclared,
    FailsToRegister,
    GoodPlugin,
    RunsUndeclared,
    SchemaChanged,
    SpawnsDirectly,
    Vague,
)

Factory = Callable[..., PluginHarness]
GOLDEN = Path(__file__).parent / "golden"
GREET = {"type": "kit-greet"}
FETCH = {"type": "kit-greet", "fetch": True}


def failure(check: Callable[[], object]) -> ContractFailure:
    with pytest.raises(ContractFailure) as caught:
        check()
    return caught.value


# -- golden schemas -------------------------------------------------------------------------


def test_golden_schemas_that_match_pass(prixfixe_plugin: Factory) -> None:
    prixfixe_plugin(GoodPlugin(), golden=GOLDEN).check_golden_schemas()


def test_a_data_schema_changed_without_a_version_bump_fails_naming_the_step_type(
    prixfixe_plugin: Factory,
) -> None:
    harness = prixfixe_plugin(SchemaChanged(), golden=GOLDEN)
    problem = failure(harness.check_golden_schemas)
    assert problem.part == "golden schemas"
    (line,) = problem.problems
    assert line.startswith("kit-greet: its data schema changed but its version is still 1.0")
    assert "PRIXFIXE_WRITE_GOLDEN=1" in str(problem)


def test_step_types_without_a_golden_folder_or_file_fail_and_stale_files_are_named(
    prixfixe_plugin: Factory, tmp_path: Path
) -> None:
    (none,) = failure(prixfixe_plugin(GoodPlugin()).check_golden_schemas).problems
    assert none.startswith("it has step types (kit-greet) but names no golden folder")
    golden = tmp_path / "golden"
    golden.mkdir()
    (golden / "kit-gone.json").write_text("{}")
    missing, stale = failure(
        prixfixe_plugin(GoodPlugin(), golden=golden).check_golden_schemas
    ).problems
    assert missing.startswith(f"kit-greet: no golden schema at {golden / 'kit-greet.json'}")
    assert stale.startswith(f"{golden / 'kit-gone.json'} is the golden file of step type")


def test_write_golden_writes_the_files_and_then_they_match(
    prixfixe_plugin: Factory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    golden = tmp_path / "golden"
    monkeypatch.setenv("PRIXFIXE_WRITE_GOLDEN", "1")
    prixfixe_plugin(SchemaChanged(), golden=golden).check_golden_schemas()
    written = json.loads((golden / "kit-greet.json").read_text())
    assert written["version"] == "1.0"
    assert "loud" in written["schema"]["properties"]
    monkeypatch.setenv("PRIXFIXE_WRITE_GOLDEN", "0")
    prixfixe_plugin(SchemaChanged(), golden=golden).check_golden_schemas()
    with pytest.raises(ContractFailure, match="its data schema changed"):
        prixfixe_plugin(GoodPlugin(), golden=golden).check_golden_schemas()


# -- authority ------------------------------------------------------------------------------


def test_declared_programs_and_hosts_used_through_the_gates_pass(
    prixfixe_plugin: Factory, page_port: int
) -> None:
    harness = prixfixe_plugin(GoodPlugin(page_port), steps=[FETCH])
    harness.check_authority()
    (report,) = harness.reports
    (step,) = report["steps"]
    assert step["data"] == {"text": "hello", "fetched": 200}
    assert [s.argv[1:] for s in harness.seen.spawns] == [("-c", "print('hello')")]
    assert all(s.gated for s in harness.seen.spawns)
    assert [(c.host, c.port, c.via) for c in harness.seen.connections] == [
        ("127.0.0.1", page_port, "gate")
    ]


def test_a_program_started_around_the_exec_gate_fails_naming_it(
    prixfixe_plugin: Factory,
) -> None:
    harness = prixfixe_plugin(SpawnsDirectly(), steps=[GREET])
    problem = failure(harness.check_authority)
    (line,) = problem.problems
    assert line.startswith(f"ran `{PYTHON} -c 'print('\"'\"'sneaky'\"'\"')'` outside the exec gate")
    assert "run programs with ctx.run(argv)" in line
    assert problem.part == "authority"


def test_an_undeclared_program_is_named_even_when_the_gate_refused_it(
    prixfixe_plugin: Factory,
) -> None:
    harness = prixfixe_plugin(RunsUndeclared(), steps=[GREET])
    (line,) = failure(harness.check_authority).problems
    assert line.startswith("step 'kit-greet' (kit-greet) was refused by the leash:")
    assert "print('not declared')" in line
    assert harness.seen.spawns == [], "the gate refused before anything started"


def test_a_connection_around_the_network_gate_to_an_undeclared_host_fails_naming_it(
    prixfixe_plugin: Factory, page_port: int
) -> None:
    harness = prixfixe_plugin(ConnectsDirectly(page_port), steps=[FETCH])
    (line,) = failure(harness.check_authority).problems
    assert line.startswith(f"connected to 127.0.0.1:{page_port} outside the network gate")
    assert line.endswith("and it is not a host it declares")


def test_a_host_the_config_grants_but_the_plugin_never_declares_fails(
    prixfixe_plugin: Factory, page_port: int
) -> None:
    harness = prixfixe_plugin(
        ConnectsUndeclared(page_port),
        config=f'[leash]\nnet = ["127.0.0.1:{page_port}"]\n',
        steps=[FETCH],
    )
    problem = failure(harness.check_authority)
    assert problem.problems == [
        f"connected to 127.0.0.1:{page_port}, which is not a host it declares"
    ]
    assert "it declares programs" in str(problem)
    harness.check_authority(allow_hosts=[f"127.0.0.1:{page_port}"], run=False)


def test_what_a_watched_tool_call_starts_is_checked_too(prixfixe_plugin: Factory) -> None:
    harness = prixfixe_plugin(GoodPlugin())
    with harness.watch():
        os.system("true")  # the test itself stands in for a misbehaving tool
    (line,) = failure(lambda: harness.check_authority(run=False)).problems
    assert line.startswith("ran `/bin/sh -c true` outside the exec gate")
    assert line.endswith("and sh is not a program it declares")


def test_sample_tool_calls_go_through_tool_invoke_while_watched(
    prixfixe_plugin: Factory,
) -> None:
    harness = prixfixe_plugin(GoodPlugin(), calls=[("kit_greeting_card_save", {"friend": "Ada"})])
    harness.check_authority()
    result = harness.call("kit_greeting_card_save", {"friend": "Grace"})
    assert result.content[0].text == "card saved for Grace"  # type: ignore[union-attr]


# -- discoverability ------------------------------------------------------------------------


def test_a_tool_found_by_its_own_description_passes(prixfixe_plugin: Factory) -> None:
    harness = prixfixe_plugin(GoodPlugin())
    harness.check_discoverable(top=1)
    assert harness.search_ranks(1) == {"kit_greeting_card_save": ["kit_greeting_card_save"]}


def test_a_tool_its_own_description_does_not_find_fails_naming_it(
    prixfixe_plugin: Factory,
) -> None:
    problem = failure(prixfixe_plugin(Vague()).check_discoverable)
    (line,) = problem.problems
    assert line.startswith(
        "tool 'kit_greeting_card_save' is not in tool_search's first 3 results for its own "
        "description (got: "
    )
    assert problem.part == "discoverability"


# -- token cost -----------------------------------------------------------------------------


def test_the_token_cost_counts_the_tools_wire_entries_and_the_index_growth(
    prixfixe_plugin: Factory,
) -> None:
    harness = prixfixe_plugin(GoodPlugin())
    cost = harness.token_cost()
    (entry,) = harness.tools
    wire = entry.wire.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert cost.tools_list == count_tokens(json.dumps([wire], separators=(",", ":")))
    assert cost.tools == 1
    assert cost.listed == 0, "its facet is not listed"
    full = harness.app.capability_index.text("full")
    without = prixfixe_plugin(object()).app.capability_index.text("full")
    assert cost.index_full == count_tokens(full) - count_tokens(without)
    assert COSTS["kit_good"] == cost
    listed = prixfixe_plugin(GoodPlugin(), env={"PRIXFIXE_EXPOSE": "core,kit"})
    assert listed.token_cost().listed == cost.tools_list


def test_a_token_budget_the_plugin_sets_fails_when_exceeded(prixfixe_plugin: Factory) -> None:
    harness = prixfixe_plugin(GoodPlugin())
    cost = harness.check_token_cost(tools_list=1000, index_full=1000)
    assert isinstance(cost, TokenCost)
    problem = failure(lambda: harness.check_token_cost(tools_list=10))
    assert problem.problems == [f"tools_list costs {cost.tools_list} tokens, over its budget of 10"]
    assert cost.show() in str(problem)


def test_costs_match_what_prixfixe_plugins_reports(prixfixe_plugin: Factory) -> None:
    harness = prixfixe_plugin(GoodPlugin())
    expected = plugin_costs(harness.app, ["kit_good"])["kit_good"]
    assert harness.token_cost().__dict__ == {"plugin": "kit_good", **expected}


# -- loading --------------------------------------------------------------------------------


def test_a_plugin_that_fails_to_register_fails_with_the_reason_doctor_shows(
    prixfixe_plugin: Factory,
) -> None:
    problem = failure(lambda: prixfixe_plugin(FailsToRegister()))
    assert problem.part == "loading"
    assert problem.problems == ["failed: RuntimeError: the kit fixture cannot register"]


def test_an_entry_point_that_is_not_installed_fails_with_a_hint(prixfixe_plugin: Factory) -> None:
    problem = failure(lambda: prixfixe_plugin("kit-not-installed"))
    assert problem.problems == ["failed: named in PRIXFIXE_LOAD_PLUGINS but not installed"]
    assert "pip install -e ." in str(problem)


def test_check_all_runs_every_check_and_returns_the_cost(
    prixfixe_plugin: Factory, page_port: int
) -> None:
    harness = prixfixe_plugin(GoodPlugin(page_port), golden=GOLDEN, steps=[FETCH])
    cost = harness.check_all(top=2, tools_list=500)
    assert cost.plugin == "kit_good"
    assert len(harness.reports) == 1
