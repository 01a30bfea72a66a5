"""`prixfixe servers list|test|import` as people use them (click's runner, real files in
tmp_path)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import mcp_types as types
import pytest
from click.testing import CliRunner

from prixfixe.cli import cli
from prixfixe.config import home_dir, load_config
from prixfixe.servers import catalogue
from prixfixe.servers.status import listing_json
from prixfixe.tokens import count_tokens
from tests.servers.conftest import (  # noqa: F401 - a fixture
    FIXTURE_SERVER,
    fixture_table,
    script_table,
    spawns,
)
from tests.servers.test_import import (
    ALL_FIXTURES,
    CLAUDE_CODE,
    CURSOR,
    DESKTOP,
    SECRETS,
    VSCODE,
)


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env or {}, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


CONFIGURED = """\
# servers I use
[servers.git]
command = "uvx"
args = ["mcp-server-git", "--repository", "/home/ana/my repo"]
start = "eager"

[servers.docs]
url = "https://mcp.example.org/mcp"
headers = { Authorization = { file = "~/.config/docs-token" } }
enabled = false
timeout = 15

[servers.github.env]
GITHUB_PERSONAL_ACCESS_TOKEN = { env = "GH_TOKEN" }

[servers.github]
command = "npx"
"""


# -- import -----------------------------------------------------------------------------------


def test_import_prints_toml_that_prixfixe_loads_and_notes_on_stderr(tmp_path: Path) -> None:
    code, out, err = run("servers", "import", str(DESKTOP))
    assert code == 0
    (tmp_path / "prixfixe.toml").write_text(out)
    model = load_config(dict(os.environ), tmp_path).model
    assert len(model.servers) == 7
    assert model.servers["github"].env["GITHUB_PERSONAL_ACCESS_TOKEN"].env == (
        "GITHUB_PERSONAL_ACCESS_TOKEN"
    )
    assert "7 servers imported, 0 skipped" in err
    assert "github: named github (was 'GitHub'" in err
    assert "prixfixe's environment must hold: MEMORY_FILE_PATH, GITHUB_PERSONAL_ACCESS_TOKEN" in err


@pytest.mark.parametrize("fixture", ALL_FIXTURES, ids=lambda p: p.name)
def test_no_credential_reaches_stdout_stderr_or_the_written_file(
    fixture: Path, tmp_path: Path
) -> None:
    printed = run("servers", "import", str(fixture))
    as_json = run("servers", "import", str(fixture), "--json")
    target = tmp_path / "written.toml"
    written = run("servers", "import", str(fixture), "--write", "--config", str(target))
    assert [printed[0], as_json[0], written[0]] == [0, 0, 0]
    everything = "".join(printed[1:] + as_json[1:] + written[1:]) + target.read_text()
    for secret in SECRETS:
        assert secret not in everything
    load_config({"PRIXFIXE_CONFIG": str(target)}, tmp_path)


def test_import_reports_skipped_entries_one_line_each() -> None:
    code, out, err = run("servers", "import", str(CLAUDE_CODE))
    assert code == 0
    assert "[servers.sentry]" in out
    (line,) = [ln for ln in err.splitlines() if "skipped" in ln and "linear" in ln]
    assert line.startswith("  skipped 'linear' (/home/ana/code/prixfixe): type \"sse\"")
    assert "Traceback" not in err


def test_write_merges_into_the_config_in_force_keeping_its_comments(tmp_path: Path) -> None:
    config = tmp_path / "prixfixe.toml"
    config.write_text('# mine\n[mcp]\nexpose = ["core"]  # listed\n')
    code, out, err = run("servers", "import", str(CURSOR), "--write")
    assert code == 0, err
    assert out == f"Added 2 servers to {config}: userjot, brave-search\n"
    text = config.read_text()
    assert text.startswith('# mine\n[mcp]\nexpose = ["core"]  # listed\n')
    assert list(load_config(dict(os.environ), tmp_path).model.servers) == [
        "userjot",
        "brave-search",
    ]


def test_write_without_a_config_file_creates_one_in_the_user_config_dir(tmp_path: Path) -> None:
    code, out, _ = run("servers", "import", str(VSCODE), "--write")
    created = tmp_path / "xdg-config" / "prixfixe" / "prixfixe.toml"
    assert code == 0
    assert out == f"Added 3 servers to {created}: perplexity, docs-site, github\n"
    assert list(load_config(dict(os.environ), tmp_path).model.servers) == [
        "perplexity",
        "docs-site",
        "github",
    ]


def test_write_refuses_to_overwrite_a_server_unless_replace(tmp_path: Path) -> None:
    config = tmp_path / "prixfixe.toml"
    config.write_text(CONFIGURED)
    code, out, err = run("servers", "import", str(DESKTOP), "--write")
    assert code == 1
    assert "already has servers git, github; nothing was written" in err
    assert config.read_text() == CONFIGURED
    code, out, err = run("servers", "import", str(DESKTOP), "--write", "--replace")
    assert code == 0, err
    assert f"Replaced in {config}: git, github" in out
    model = load_config(dict(os.environ), tmp_path).model
    assert model.servers["git"].args == [
        "mcp-server-git",
        "--repository",
        "/home/ana/code/prixfixe",
    ]
    assert "docs" in model.servers


def test_a_name_prefix_avoids_the_clash(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(CONFIGURED)
    code, out, _ = run("servers", "import", str(DESKTOP), "--write", "--name-prefix", "cd-")
    assert code == 0
    assert "cd-git" in out
    assert len(load_config(dict(os.environ), tmp_path).model.servers) == 10


def test_import_of_a_claude_code_project_only(tmp_path: Path) -> None:
    code, out, _ = run("servers", "import", str(CLAUDE_CODE), "--project", "/home/ana/code/site")
    assert code == 0
    assert "[servers.memory-2]" in out
    assert "sentry" not in out


def test_import_json_describes_servers_notes_and_skips() -> None:
    code, out, _ = run("servers", "import", str(CLAUDE_CODE), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["written"] is None
    assert [s["name"] for s in data["servers"]] == ["memory", "sentry", "memory-2"]
    sentry = data["servers"][1]
    assert sentry["config"]["headers"]["X-Org"] == {"env": "SENTRY_ORG"}
    assert sentry["scope"] == "/home/ana/code/prixfixe"
    assert data["skipped"][0]["source"] == "linear"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON (comments and trailing commas are allowed)"),
        ("[1, 2]", "holds a JSON array; expected an object with mcpServers"),
        ('{"theme": "dark"}', "has no MCP servers where a client keeps them"),
    ],
)
def test_a_malformed_source_is_one_clear_line_without_traceback(
    tmp_path: Path, content: str, message: str
) -> None:
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(content)
    code, out, err = run("servers", "import", str(source))
    assert code == 1
    assert out == ""
    assert err.startswith("prixfixe: error: ")
    assert message in err
    assert str(source) in err.replace("\n", "")
    assert "Traceback" not in err


def test_a_missing_source_is_one_clear_line(tmp_path: Path) -> None:
    code, _, err = run("servers", "import", str(tmp_path / "absent.json"))
    assert code == 1
    assert "cannot read" in err
    assert "Traceback" not in err


def test_config_and_replace_need_write(tmp_path: Path) -> None:
    code, _, err = run("servers", "import", str(DESKTOP), "--config", str(tmp_path / "x.toml"))
    assert code == 2
    assert "--config and --replace apply with --write" in err
    assert not (tmp_path / "x.toml").exists()


def test_a_file_with_nothing_to_import_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / ".claude.json"
    source.write_text('{"projects": {}}')
    code, out, _ = run("servers", "import", str(source), "--write")
    assert code == 0
    assert out == f"Nothing to import from {source}; nothing was written.\n"
    assert not (tmp_path / "xdg-config" / "prixfixe" / "prixfixe.toml").exists()


# -- list -------------------------------------------------------------------------------------


def test_list_shows_each_server_and_where_its_credentials_come_from(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(CONFIGURED)
    code, out, _ = run("servers", "list")
    assert code == 0
    assert f"Servers in {tmp_path / 'prixfixe.toml'}" in out
    assert "uvx mcp-server-git --repository '/home/ana/my repo'" in out
    assert "https://mcp.example.org/mcp" in out
    assert "GITHUB_PERSONAL_ACCESS_TOKEN ← env GH_TOKEN" in out
    assert "Authorization ← file ~/.config/docs-token" in out
    assert "eager" in out
    assert "15s" in out
    assert "not read yet" in out  # no tool list kept: nothing was started to read one
    assert "disabled" in out


_UNREAD = {
    "state": "not read yet",
    "tools": None,
    "read": None,
    "listed_tokens": None,
    "denied": False,
}


def test_list_json_describes_references_never_values(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(CONFIGURED)
    code, out, _ = run("servers", "list", "--json", env={"GH_TOKEN": "ghp_ListSecret42"})
    assert code == 0
    assert "ghp_ListSecret42" not in out
    data = json.loads(out)
    assert data["config"] == str(tmp_path / "prixfixe.toml")
    assert data["servers"] == [
        {
            "name": "git",
            "transport": "stdio",
            "command": "uvx",
            "args": ["mcp-server-git", "--repository", "/home/ana/my repo"],
            "cwd": None,
            "url": None,
            "enabled": True,
            "start": "eager",
            "timeout": 60,
            "env": {},
            "headers": {},
            **_UNREAD,
        },
        {
            "name": "docs",
            "transport": "http",
            "command": None,
            "args": [],
            "cwd": None,
            "url": "https://mcp.example.org/mcp",
            "enabled": False,
            "start": "lazy",
            "timeout": 15,
            "env": {},
            "headers": {"Authorization": "file ~/.config/docs-token"},
            **_UNREAD,
            "state": "disabled",
        },
        {
            "name": "github",
            "transport": "stdio",
            "command": "npx",
            "args": [],
            "cwd": None,
            "url": None,
            "enabled": True,
            "start": "lazy",
            "timeout": 60,
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "env GH_TOKEN"},
            "headers": {},
            **_UNREAD,
        },
    ]


def test_list_without_servers_says_how_to_add_them() -> None:
    code, out, _ = run("servers", "list")
    assert code == 0
    assert "No servers configured (built-in defaults)" in out
    assert "prixfixe servers import PATH" in out


def test_list_shows_a_kept_tool_list_and_a_denied_server_without_starting_anything(
    tmp_path: Path,
    spawns: list[tuple[str, ...]],  # noqa: F811 - the fixture
) -> None:
    (tmp_path / "prixfixe.toml").write_text('[mcp]\ndeny = ["github"]\n' + CONFIGURED)
    loaded = load_config(dict(os.environ), tmp_path)
    home = home_dir(dict(os.environ))
    tools = [types.Tool(name=f"tool{i}", input_schema={"type": "object"}) for i in range(12)]
    catalogue.save(catalogue.catalogue_path(home, "git", loaded.model.servers["git"]), tools)
    code, out, _ = run("servers", "list")
    assert code == 0
    assert "tools kept" in out
    assert "denied" in out
    code, out, _ = run("servers", "list", "--json")
    git, docs, github = json.loads(out)["servers"]
    assert (git["state"], git["tools"]) == ("tools kept", 12)
    assert git["read"].endswith("Z")
    assert git["listed_tokens"] == count_tokens(listing_json(tools))
    assert (docs["state"], github["state"], github["denied"]) == ("disabled", "denied", True)
    assert spawns == []


# -- test -------------------------------------------------------------------------------------


def test_test_starts_the_server_lists_its_tools_with_their_cost_and_keeps_the_list(
    tmp_path: Path,
    spawns: list[tuple[str, ...]],  # noqa: F811 - the fixture
) -> None:
    (tmp_path / "prixfixe.toml").write_text(fixture_table())
    code, out, err = run("servers", "test", "fix")
    assert code == 0, err
    first = " ".join(out.splitlines()[0].split())
    assert first.startswith("fix (fixture")
    assert ": stdio, started in " in first
    assert "tokens listed directly (cl100k_base)" in first
    assert "fix.echo" in out
    assert "fix.add" in out
    assert len(spawns) == 1  # started once, through the exec gate
    # Stopped, and its list kept: `list` (and search) see it without starting it again.
    code, out, _ = run("servers", "list", "--json")
    (row,) = json.loads(out)["servers"]
    assert row["state"] == "tools kept"
    assert row["tools"] >= 10
    assert len(spawns) == 1


def test_test_json_gives_the_same_as_data(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(fixture_table())
    code, out, _ = run("servers", "test", "fix", "--json")
    assert code == 0
    data = json.loads(out)
    assert (data["name"], data["transport"], data["state"], data["ok"]) == (
        "fix",
        "stdio",
        "started",
        True,
    )
    assert data["tool_count"] == len(data["tools"]) >= 10
    assert data["listed_tokens"] > 100
    assert data["start_seconds"] > 0
    assert Path(data["catalogue"]).is_file()


@pytest.mark.parametrize(
    ("table", "said"),
    [
        (
            '[servers.gone]\ncommand = "no-such-program-4242"\n',
            "server 'gone': could not start: program 'no-such-program-4242' was not found on "
            "PATH (is it installed?)",
        ),
        (
            '[servers.gone]\ncommand = "sh"\nargs = ["-c", "echo no token given >&2; exit 3"]\n',
            "server 'gone': could not start: ",
        ),
        (
            '[mcp]\ndeny = ["gone"]\n[servers.gone]\ncommand = "sh"\n',
            "server 'gone': is denied (from ",
        ),
        (
            '[servers.gone]\ncommand = "sh"\nenabled = false\n',
            "server 'gone': is disabled (enabled = false); enable it to test it",
        ),
        ('[servers.other]\ncommand = "sh"\n', "server 'gone': is not configured (servers: other)"),
    ],
    ids=["program-missing", "exits", "denied", "disabled", "unknown"],
)
def test_a_server_that_cannot_be_tested_is_one_clear_line_and_status_1(
    tmp_path: Path, table: str, said: str
) -> None:
    (tmp_path / "prixfixe.toml").write_text(table)
    code, out, err = run("servers", "test", "gone", env={"PATH": os.environ["PATH"]})
    err = " ".join(err.split())  # rich wraps long lines
    assert code == 1
    assert out == ""
    assert said in err
    assert "Traceback" not in err
    assert len(err.split("prixfixe: error:")) == 2  # one message


def test_a_server_that_exits_at_once_is_named_with_its_last_error_output(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(
        '[servers.gone]\ncommand = "sh"\nargs = ["-c", "echo no token given >&2; exit 3"]\n'
    )
    code, out, _ = run("servers", "test", "gone", "--json", env={"PATH": os.environ["PATH"]})
    data = json.loads(out)
    assert code == 1
    assert data["ok"] is False
    assert data["state"] == "failed"
    # Said as an exit whichever pipe noticed first (its stdout closing, or its stdin).
    assert "exited with status 3 (its last error output: 'no token given')" in data["error"]


def test_list_with_a_literal_credential_in_the_config_is_an_error_that_hides_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "prixfixe.toml").write_text(
        '[servers.gh]\ncommand = "npx"\nenv = { GITHUB_TOKEN = "ghp_LiteralInConfig99" }\n'
    )
    code, out, err = run("servers", "list")
    err = " ".join(err.split())  # rich wraps long lines
    assert code == 2
    assert out == ""
    assert "key 'servers.gh.env.GITHUB_TOKEN'" in err
    assert "credentials are references" in err
    assert "ghp_LiteralInConfig99" not in err


def test_test_says_on_stderr_what_it_is_doing_and_keeps_stdout_as_it_was(
    tmp_path: Path,
) -> None:
    (tmp_path / "prixfixe.toml").write_text(fixture_table())
    code, out, err = run("servers", "test", "fix")
    assert code == 0, err
    lines = err.splitlines()
    assert lines[0].startswith("starting fix (")
    assert FIXTURE_SERVER.name in lines[0]
    assert lines[0].endswith(")…")
    assert any(
        line.startswith("fix answered after ") and "listing tools…" in line for line in lines
    )
    assert any(line.startswith("listed ") and " tools in " in line for line in lines)
    assert lines[-1].startswith("done in ")
    assert "starting" not in out  # progress never reaches stdout
    assert out.splitlines()[0].startswith("fix (fixture")
    code, out, err = run("servers", "test", "fix", "--json")
    assert code == 0
    assert json.loads(out)["ok"] is True  # stdout is the JSON alone
    assert err.splitlines()[0].startswith("starting fix (")


def test_a_slow_start_is_shown_ticking_and_a_failure_says_when(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prixfixe.servers import probe

    monkeypatch.setattr(probe, "TICK_SECONDS", 0.05)
    table = script_table("slow", tmp_path / "slow.py", "import time\ntime.sleep(1)\n")
    (tmp_path / "prixfixe.toml").write_text(table)
    code, out, err = run("servers", "test", "slow", env={"PATH": os.environ["PATH"]})
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith("starting slow (")
    assert any(re.fullmatch(r"still starting slow: \d+\.\d s…", line) for line in lines), err
    assert any(line.startswith("slow failed after ") for line in lines), err
    assert "prixfixe: error: server 'slow': could not start" in " ".join(err.split())
