"""The `prixfixe` command as people use it (click's runner in-process, one real subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from prixfixe.cli import cli
from tests.conftest import CORE_TOOLS


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env or {}, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_doctor_reports_versions_config_paths_facets_plugins_and_token_cost(tmp_path: Path) -> None:
    code, out, _ = run("doctor")
    assert code == 0
    assert "prixfixe" in out
    assert "Python" in out
    assert "mcp 2." in out
    assert "none found, using built-in defaults" in out
    assert str(tmp_path / "prixfixe.toml") in out
    assert "listed core (from default)" in out
    assert "prixfixe.default_plugins.discovery" in out
    assert f"Default tools/list: {len(CORE_TOOLS)} tools (budget 7)" in out
    assert "tokens (cl100k_base; budget 700)" in out
    assert f"Store: {tmp_path / 'prixfixe-home' / 'store.sqlite3'} (not created yet" in out
    assert "kinds: reminder, deadline, countdown" in out
    assert "tokens (cl100k_base)" in out
    assert "Today: " in out
    assert "time zone " in out
    assert (
        "Resources: 5 resources listed (1 more served, not listed), 8 templates; "
        "capability index summary"
    ) in out


def test_doctor_json_counts_tokens_of_the_real_listing(tmp_path: Path) -> None:
    from prixfixe.app import App
    from prixfixe.tokens import count_tokens

    code, out, _ = run("doctor", "--json")
    assert code == 0
    report = json.loads(out)
    listing = App.build(env={"PRIXFIXE_LOAD_PLUGINS": ""}).list_tools_json()
    assert report["tools_list"]["tokens"]["cl100k_base"] == count_tokens(listing, "cl100k_base")
    assert report["tools_list"]["tokens"]["o200k_base"] == count_tokens(listing, "o200k_base")
    assert report["config"]["file"] is None
    assert report["exposure"]["expose_source"] == "default"
    summary = App.build(env={"PRIXFIXE_LOAD_PLUGINS": ""}).capability_index.text("summary")
    resources = report["resources"]
    assert resources["capability_index_summary_tokens"]["cl100k_base"] == count_tokens(summary)


def test_doctor_shows_the_config_file_in_use_and_env_provenance(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text('[mcp]\nexpose = ["core"]\n')
    code, out, _ = run("doctor", "--json", env={"PRIXFIXE_EXPOSE": "core"})
    report = json.loads(out)
    assert code == 0
    assert report["config"]["file"] == str(tmp_path / "prixfixe.toml")
    assert report["exposure"]["expose_source"] == "env PRIXFIXE_EXPOSE"


def test_invalid_config_is_one_clear_line_without_traceback(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text('[mcp]\nexpose = "core"\n')
    code, out, err = run("doctor")
    assert code == 2
    assert out == ""
    assert "prixfixe: error: invalid configuration" in err
    assert "key 'mcp.expose'" in err
    assert "Traceback" not in err


def test_tools_search_prints_a_ranked_table() -> None:
    code, out, _ = run("tools", "search", "show a tool's schema")
    assert code == 0
    assert "tool_describe" in out
    assert out.index("tool_describe") < out.index("tool_search")


def test_tools_search_json_is_the_structured_result() -> None:
    code, out, _ = run("tools", "search", "call a tool", "--json", "--limit", "2")
    data = json.loads(out)
    assert code == 0
    assert data["query"] == "call a tool"
    assert len(data["results"]) <= 2
    assert data["results"][0]["name"] == "tool_invoke"


def test_tools_describe_shows_schemas_and_unknown_names_fail_clearly() -> None:
    code, out, _ = run("tools", "describe", "tool_search")
    assert code == 0
    assert (
        "- query (string|array of string, required): The task in a few words, or a list of "
        "phrasings." in out
    )
    assert 'Call: tool_search({"query": "<string>"})' in out
    assert "Input schema" in out
    assert '"query"' in out
    code, out, err = run("tools", "describe", "tool_serch")
    assert code == 1
    assert "unknown tool 'tool_serch'; did you mean 'tool_search'" in err


def test_tools_describe_prints_the_exact_schemas_whole_in_a_pipe() -> None:
    """The exact schemas are never cut at a width: piped, each is plain JSON that parses back
    to the schema the tool is checked by (store_put's `record` description is a long line)."""
    code, out, _ = run("tools", "describe", "store_put")
    assert code == 0
    _, rest = out.split("Input schema\n", 1)
    input_text, output_text = rest.split("Output schema\n", 1)
    _, described, _ = run("tools", "describe", "store_put", "--json")
    exact = json.loads(described)
    assert max(len(line) for line in input_text.splitlines()) > 120  # a line a width would cut
    assert json.loads(input_text) == exact["input_schema"]
    assert json.loads(output_text) == exact["output_schema"]


def test_tools_list_shows_listed_tools_and_all_with_flag() -> None:
    code, out, _ = run("tools", "list", "--json")
    assert code == 0
    assert [r["name"] for r in json.loads(out)] == CORE_TOOLS


def test_serve_with_unknown_facet_fails_before_serving() -> None:
    code, _, err = run("serve", "--facet", "nope")
    assert code == 2
    assert "--facet names unknown facet 'nope'; known facets: core" in err


@pytest.mark.slow
def test_console_script_runs_as_a_real_process(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    proc = subprocess.run(
        [sys.executable, "-m", "prixfixe", "--version"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("prixfixe, version ")


def test_store_kinds_lists_each_kind_with_fields_and_json_has_schemas() -> None:
    code, out, _ = run("store", "kinds")
    assert code == 0
    for name in ("reminder", "deadline", "countdown"):
        assert name in out
    assert "recurrence?:" in out
    assert "daily|weekdays|weekly|monthly|yearly" in out
    code, out, _ = run("store", "kinds", "deadline", "--json")
    (kind,) = json.loads(out)["kinds"]
    assert kind["schema"]["required"] == ["label", "date"]


def test_store_put_query_and_close_from_the_command_line(tmp_path: Path) -> None:
    code, out, _ = run(
        "store", "put", "reminder", "--field", "text=123 go", "--field", "due=2026-12-01"
    )
    assert (code, out) == (0, "Created reminder 1 (store generation 1).\n")
    code, out, _ = run(
        "store",
        "put",
        "countdown",
        "--record",
        '{"label": "trip", "start": "2026-07-01", "end": "2026-07-20"}',
        "--field",
        'work_days=["mon", "fri"]',
    )
    assert code == 0
    code, out, _ = run(
        "store",
        "put",
        "deadline",
        "--json",
        '[{"label": "taxes", "date": "2026-04-30"}, {"label": "visa", "date": "2026-03-01"}]',
    )
    assert out == "Created 2 deadline records (ids 3..4, store generation 3).\n"
    code, out, _ = run("store", "put", "reminder", "--id", "1", "--field", "recurrence=yearly")
    assert out == "Updated reminder 1 (store generation 4).\n"
    code, out, _ = run("store", "close", "deadline", "3", "--reason", "filed")
    assert out == "Closed deadline 3 (store generation 5).\n"

    code, out, _ = run("store", "query", "deadline", "--order-by", "date", "--json")
    data = json.loads(out)
    assert [r["record"]["label"] for r in data["records"]] == ["visa"]
    code, out, _ = run(
        "store", "query", "deadline", "--include-closed", "--limit", "1", "--order-by", "-date"
    )
    assert "taxes" in out
    assert "yes: filed" in out
    assert "More: --cursor " in out
    cursor = out.split("More: --cursor ")[1].split()[0]
    code, out, _ = run(
        "store", "query", "deadline", "--include-closed", "--order-by", "-date", "--cursor", cursor
    )
    assert "visa" in out
    assert "taxes" not in out
    code, out, _ = run("store", "query", "reminder", "--where", '{"text": {"contains": "123"}}')
    assert "123 go" in out
    countdown = json.loads(run("store", "query", "countdown", "--json")[1])["records"][0]
    assert countdown["record"]["work_days"] == ["mon", "fri"]


def test_store_commands_fail_with_one_clear_line() -> None:
    cases = [
        (["store", "put", "remindr", "--field", "text=x"], "unknown kind 'remindr'"),
        (["store", "put", "reminder", "--field", "text=x"], "missing field 'due'"),
        (["store", "put", "reminder", "--record", "{oops"], "not valid JSON"),
        (["store", "put", "reminder", "--json", "{oops"], "Invalid value for --json"),
        (["store", "put", "reminder", "--record", "{}", "--json", "{}"], "give the record once"),
        (["store", "put", "reminder", "--record", "3"], "expected a JSON object or array"),
        (["store", "query", "reminder", "--where", '{"colour": 1}'], "unknown field 'colour'"),
        (["store", "query", "reminder", "--cursor", "nope"], "malformed cursor"),
        (["store", "close", "reminder", "99"], "no reminder record with id 99"),
        (
            ["store", "put", "deadline", "--record", '[{"label": "a", "date": "x"}]'],
            "record [0] field 'date'",
        ),
    ]
    for args, expected in cases:
        code, out, err = run(*args)
        assert code != 0, args
        assert expected in err, (args, err)
        assert "Traceback" not in err
    code, out, _ = run("store", "query", "reminder", "--json")
    assert json.loads(out)["generation"] == 0, "nothing was written by the failures"


def test_store_put_takes_the_record_as_record_and_the_old_json_spelling_with_a_note() -> None:
    """Issue 30: `--json` means "print JSON" on every other command; here the record is
    `--record`, and the old spelling (documented before) still works, saying so on stderr."""
    code, out, err = run(
        "store", "put", "deadline", "--record", '{"label": "a", "date": "2026-05-01"}'
    )
    assert (code, out, err) == (0, "Created deadline 1 (store generation 1).\n", "")
    code, out, err = run(
        "store", "put", "deadline", "--json", '{"label": "b", "date": "2026-05-02"}'
    )
    assert (code, out) == (0, "Created deadline 2 (store generation 2).\n")
    assert "`--json` for the record is deprecated; use `--record`" in err
    code, out, _ = run("store", "put", "--help")
    assert "--record JSON" in out
    assert "--json" not in out


def test_an_empty_store_query_says_there_is_nothing_instead_of_an_empty_table() -> None:
    code, out, _ = run("store", "query", "reminder")
    assert (code, out) == (0, "No open reminder records.\n")
    code, out, _ = run("store", "query", "reminder", "--include-closed")
    assert out == "No reminder records.\n"
    run("store", "put", "reminder", "--field", "text=x", "--field", "due=2026-12-01")
    code, out, _ = run("store", "query", "reminder", "--where", '{"text": "y"}')
    assert (code, out) == (0, "No open reminder records matching --where.\n")
    code, out, _ = run("store", "query", "reminder")
    assert "No open" not in out
    assert "2026-12-01" in out


def test_a_store_from_a_newer_version_is_refused_by_the_cli_without_traceback(
    tmp_path: Path,
) -> None:
    from prixfixe.declarations.kinds import StoreMigration
    from prixfixe.store.migrations import CORE_MIGRATIONS
    from prixfixe.store.sqlite import SQLiteStore

    home = tmp_path / "future-home"
    future = StoreMigration(name="0003_future", statements=("CREATE TABLE future (x)",))
    SQLiteStore.open(home / "store.sqlite3", {}, core_migrations=(*CORE_MIGRATIONS, future)).close()
    code, _, err = run("store", "query", "reminder", env={"PRIXFIXE_HOME": str(home)})
    assert code == 1
    assert "has schema version 3 for 'core'" in err
    assert "Traceback" not in err


def test_resources_list_shows_every_listed_resource_and_the_templates() -> None:
    code, out, _ = run("resources", "list", "--json")
    assert code == 0
    uris = [r["uri"] for r in json.loads(out)]
    assert uris == sorted(uris)
    assert "prixfixe://system/health" in uris
    code, out, _ = run("resources", "list", "--templates")
    assert code == 0
    assert "prixfixe://store/{kind}/{id}" in out


def test_resources_read_prints_a_resource_and_names_a_missing_one(tmp_path: Path) -> None:
    code, out, _ = run("resources", "read", "prixfixe://capability-index/summary")
    assert code == 0
    assert out.startswith("# prixfixe capabilities (summary)")
    code, _, err = run("resources", "read", "prixfixe://store/reminder/99")
    assert code == 1
    assert "resource not found: prixfixe://store/reminder/99" in err


def test_tools_call_runs_a_tool_through_the_dispatch_tool_invoke_takes() -> None:
    """Issue 30: `prixfixe tools call`, as `fastmcp call`: the text result, or --json."""
    code, out, err = run(
        "tools", "call", "store_put", "--arg", "kind=reminder",
        "--json-args", '{"record": {"text": "123", "due": "2026-12-01"}}',
    )  # fmt: skip
    assert (code, out, err) == (0, "Created reminder 1 (store generation 1).\n", "")
    # A string argument stays text (`123` is not read as a number), others are read as JSON.
    code, out, _ = run("tools", "call", "store_query", "--arg", "kind=reminder", "--json")
    data = json.loads(out)
    assert data["records"][0]["record"]["text"] == "123"
    code, out, _ = run("tools", "call", "store_query", "--arg", "kind=reminder", "--arg", "limit=1")
    assert (code, out.splitlines()[0]) == (0, "1 reminder (generation 1):")
    # A tool with no structured result: --json prints the whole result.
    code, out, _ = run("tools", "call", "tool_search", "--arg", "query=reminder", "--json")
    assert json.loads(out)["content"][0]["type"] == "text"


def test_tools_call_fails_with_one_clear_line() -> None:
    cases = [
        (
            ["tools", "call", "stor_query"],
            1,
            "unknown tool 'stor_query'; did you mean 'store_query'",
        ),
        (["tools", "call", "store_query", "--arg", "kind=remindr"], 1, "unknown kind 'remindr'"),
        (["tools", "call", "store_query", "--arg", "kind"], 2, "'kind' is not KEY=VALUE"),
        (["tools", "call", "store_query", "--json-args", "{x"], 2, "not valid JSON"),
        (["tools", "call", "store_query", "--json-args", "[1]"], 2, "expected a JSON object"),
    ]
    for args, status, expected in cases:
        code, out, err = run(*args)
        assert (code, out) == (status, ""), args
        assert expected in err, (args, err)
        assert "Traceback" not in err


@pytest.mark.parametrize("group", ["routines", "plugins"])
def test_routines_and_plugins_list_as_every_other_group_and_bare(group: str) -> None:
    """Issue 30: `steps list`, `kb list`, `tools list`... and `routines`, `plugins`: both
    spellings work and say the same."""
    code, bare, _ = run(group, "--json")
    assert code == 0
    code, listed, _ = run(group, "list", "--json")
    assert code == 0
    assert json.loads(listed) == json.loads(bare) != []
    code, table, _ = run(group, "list")
    assert (code, table) == (0, run(group)[1])
