"""`servers import`: other clients' configurations become `[servers.NAME]` tables prixfixe loads,
with every credential a reference and no credential's value anywhere."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from prixfixe.config import ConfigModel, ServerConfig, load_config, validate_config
from prixfixe.errors import ConfigError, PrixfixeError
from prixfixe.servers.client_files import parse_jsonc
from prixfixe.servers.importer import ImportResult, import_servers, normalise_name, unique_name
from prixfixe.servers.toml_writer import merge_into, render_toml, server_data

FIXTURES = Path(__file__).parent / "fixtures"
DESKTOP = FIXTURES / "claude_desktop_config.json"
VSCODE = FIXTURES / "vscode-workspace" / ".vscode" / "mcp.json"
CLAUDE_CODE = FIXTURES / "claude.json"
CURSOR = FIXTURES / "cursor-mcp.json"
ALL_FIXTURES = [DESKTOP, VSCODE, CLAUDE_CODE, CURSOR]
#: The fake credentials the fixtures hold; none may ever leave them.
SECRETS = [
    "ghp_DesktopFixtureSecret0123456789abcd",
    "sk-ClaudeCodeFixtureSecret-9f8e7d",
    "CursorFixturePassw0rd",
    "envfile-SECRET-value-42",
    "/home/ana/.local/share/memory.jsonl",  # a literal env value: not a secret, still not copied
]


def _loads_with_prixfixe(toml_text: str, tmp_path: Path) -> ConfigModel:
    """The TOML as prixfixe's own loader reads it from its config file."""
    path = tmp_path / "prixfixe.toml"
    path.write_text(toml_text)
    return load_config({"PRIXFIXE_CONFIG": str(path)}, tmp_path).model


def _servers(result: ImportResult) -> dict[str, dict[str, Any]]:
    return {s.name: server_data(s.config) for s in result.servers}


def _notes(result: ImportResult, name: str) -> str:
    return "\n".join(next(s for s in result.servers if s.name == name).notes)


def test_a_claude_desktop_file_with_the_six_servers_and_github_converts_whole(
    tmp_path: Path,
) -> None:
    result = import_servers(DESKTOP)
    assert result.skipped == ()
    assert _servers(result) == {
        "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=Europe/Lisbon"]},
        "git": {
            "command": "uvx",
            "args": ["mcp-server-git", "--repository", "/home/ana/code/prixfixe"],
        },
        "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
        "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
        "filesystem": {
            "command": "npx",
            "args": [
                "-y",
                "@modelcontextprotocol/server-filesystem",
                "/home/ana/Desktop",
                "/home/ana/Downloads",
            ],
        },
        "memory": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-memory"],
            "env": {"MEMORY_FILE_PATH": {"env": "MEMORY_FILE_PATH"}},
        },
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": {"env": "GITHUB_PERSONAL_ACCESS_TOKEN"}},
        },
    }
    assert "named github (was 'GitHub'" in _notes(result, "github")
    assert "export GITHUB_PERSONAL_ACCESS_TOKEN" in _notes(result, "github")
    model = _loads_with_prixfixe(render_toml(result), tmp_path)
    assert list(model.servers) == [
        "time",
        "git",
        "fetch",
        "everything",
        "filesystem",
        "memory",
        "github",
    ]
    assert model.servers["github"].env["GITHUB_PERSONAL_ACCESS_TOKEN"].describe() == (
        "env GITHUB_PERSONAL_ACCESS_TOKEN"
    )


def test_a_vscode_file_with_comments_inputs_and_an_env_file_converts(tmp_path: Path) -> None:
    result = import_servers(VSCODE)
    workspace = VSCODE.parent.parent.absolute()
    assert _servers(result) == {
        "perplexity": {
            "command": "npx",
            "args": ["-y", "server-perplexity-ask"],
            "env": {
                "PERPLEXITY_API_KEY": {"env": "PERPLEXITY_API_KEY"},
                "LOG_LEVEL": {"env": "LOG_LEVEL"},
            },
        },
        "docs-site": {
            "command": "node",
            "args": [f"{workspace}/tools/docs-server.js", "--url", "https://example.org/a//b"],
            "env": {"DOCS_TOKEN": {"env": "DOCS_TOKEN"}, "DOCS_SPACE": {"env": "DOCS_SPACE"}},
        },
        "github": {
            "url": "https://api.githubcopilot.com/mcp/",
            "headers": {"Authorization": {"env": "PRIXFIXE_GITHUB_AUTHORIZATION"}},
        },
    }
    assert (
        "VS Code input 'perplexity-key' (Perplexity API Key): export PERPLEXITY_API_KEY"
        in _notes(result, "perplexity")
    )
    assert 'export PRIXFIXE_GITHUB_AUTHORIZATION="Bearer <the input\'s value>"' in _notes(
        result, "github"
    )
    assert "DOCS_TOKEN, DOCS_SPACE now come from prixfixe's environment" in _notes(
        result, "docs-site"
    )
    ((skipped),) = result.skipped
    assert skipped.source == "legacy-events"
    assert 'type "sse"' in skipped.reason
    assert "streamable HTTP" in skipped.reason
    _loads_with_prixfixe(render_toml(result), tmp_path)


def test_vscode_settings_json_keeps_servers_under_mcp(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(
        '{"editor.fontSize": 13, // mine\n'
        ' "mcp": {"servers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}}'
    )
    result = import_servers(settings)
    assert "settings" in result.layout
    assert _servers(result) == {"time": {"command": "uvx", "args": ["mcp-server-time"]}}


def test_claude_code_user_and_project_servers_convert_once_each(tmp_path: Path) -> None:
    result = import_servers(CLAUDE_CODE)
    assert _servers(result) == {
        "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
        "sentry": {
            "url": "https://mcp.sentry.dev/mcp",
            "headers": {
                "Authorization": {"env": "PRIXFIXE_SENTRY_AUTHORIZATION"},
                "X-Org": {"env": "SENTRY_ORG"},
                "X-Api-Key": {"env": "PRIXFIXE_SENTRY_X_API_KEY"},
            },
        },
        "memory-2": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-memory"],
            "env": {"MEMORY_FILE_PATH": {"env": "MEMORY_FILE_PATH"}},
        },
    }
    by_name = {s.name: s for s in result.servers}
    assert by_name["sentry"].scope == "/home/ana/code/prixfixe"
    assert by_name["memory"].scope is None
    assert by_name["memory-2"].scope == "/home/ana/code/site"
    notes = _notes(result, "sentry")
    assert 'export PRIXFIXE_SENTRY_AUTHORIZATION="Bearer $SENTRY_TOKEN"' in notes
    assert "header X-Api-Key was written out in the source file (not copied)" in notes
    assert "memory is taken by another server" in _notes(result, "memory-2")
    assert any("the same as memory: imported once" in n for n in result.notes)
    assert [(s.source, s.scope) for s in result.skipped] == [("linear", "/home/ana/code/prixfixe")]
    assert set(by_name["sentry"].needs) == {
        "PRIXFIXE_SENTRY_AUTHORIZATION",
        "SENTRY_ORG",
        "PRIXFIXE_SENTRY_X_API_KEY",
    }
    _loads_with_prixfixe(render_toml(result), tmp_path)


def test_a_claude_code_project_picks_the_user_servers_and_that_projects_only() -> None:
    result = import_servers(CLAUDE_CODE, project="/home/ana/code/site")
    assert list(_servers(result)) == ["memory", "memory-2"]
    with pytest.raises(PrixfixeError, match="has no project /elsewhere; its projects are: "):
        import_servers(CLAUDE_CODE, project="/elsewhere")
    with pytest.raises(PrixfixeError, match=r"--project applies to Claude Code's ~/\.claude\.json"):
        import_servers(DESKTOP, project="/home/ana/code/site")


def test_a_cursor_file_reads_env_placeholders_urls_and_disabled_servers(tmp_path: Path) -> None:
    result = import_servers(CURSOR)
    assert _servers(result) == {
        "userjot": {
            "url": "https://api.userjot.com/v1/mcp",
            "headers": {"Authorization": {"env": "PRIXFIXE_USERJOT_AUTHORIZATION"}},
        },
        "brave-search": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-brave-search"],
            "env": {"BRAVE_API_KEY": {"env": "BRAVE_API_KEY"}},
            "enabled": False,
        },
    }
    ((skipped),) = result.skipped
    assert skipped.source == "postgres"
    assert skipped.reason.startswith("args[2] looks like a credential")
    _loads_with_prixfixe(render_toml(result), tmp_path)


@pytest.mark.parametrize("fixture", ALL_FIXTURES, ids=lambda p: p.name)
def test_no_credential_value_survives_conversion(fixture: Path) -> None:
    result = import_servers(fixture)
    shown = render_toml(result) + json.dumps(
        [[s.name, s.source, s.scope, list(s.notes), list(s.needs)] for s in result.servers]
        + [[s.source, s.scope, s.reason] for s in result.skipped]
        + list(result.notes)
    )
    for secret in SECRETS:
        assert secret not in shown


# -- the credential rule, value by value ------------------------------------------------------


def _one_server(tmp_path: Path, entry: dict[str, Any], name: str = "api") -> ImportResult:
    source = tmp_path / "mcp.json"
    source.write_text(json.dumps({"mcpServers": {name: entry}}))
    return import_servers(source)


@pytest.mark.parametrize(
    ("value", "reference", "note"),
    [
        ("${API_TOKEN}", "API_TOKEN", None),
        ("${env:API_TOKEN}", "API_TOKEN", None),
        ("${API_TOKEN:-fallback-value}", "API_TOKEN", "its default is not imported"),
        ("literal-value-123", "TOKEN", "export TOKEN with that value"),
        ("${input:token-id}", "TOKEN", "VS Code input 'token-id': export TOKEN"),
        ("pre-${A}-post-value", "TOKEN", "built from a template: export TOKEN"),
        (12345, "TOKEN", "export TOKEN with that value"),
    ],
)
def test_every_env_value_becomes_a_reference(
    tmp_path: Path, value: object, reference: str, note: str | None
) -> None:
    result = _one_server(tmp_path, {"command": "srv", "env": {"TOKEN": value}})
    (server,) = result.servers
    assert server_data(server.config)["env"] == {"TOKEN": {"env": reference}}
    notes = "\n".join(server.notes)
    if note is None:
        assert notes == ""
    else:
        assert note in notes
    for part in ("fallback-value", "literal-value-123", "post-value", "12345"):
        assert part not in notes
    assert reference in server.needs


@pytest.mark.parametrize(
    ("value", "reference", "note"),
    [
        ("${API_TOKEN}", "API_TOKEN", None),
        ("Bearer ${API_TOKEN}", "PRIXFIXE_API_X_API_KEY", '"Bearer $API_TOKEN"'),
        ("Token abc-literal-99", "PRIXFIXE_API_X_API_KEY", "written out in the source file"),
        ("Basic ${A}:${B}", "PRIXFIXE_API_X_API_KEY", "built from a template"),
    ],
)
def test_every_header_value_becomes_a_reference_to_its_whole_value(
    tmp_path: Path, value: str, reference: str, note: str | None
) -> None:
    result = _one_server(
        tmp_path, {"type": "http", "url": "https://x.test/mcp", "headers": {"X-Api-Key": value}}
    )
    (server,) = result.servers
    assert server_data(server.config)["headers"] == {"X-Api-Key": {"env": reference}}
    notes = "\n".join(server.notes)
    assert (note in notes) if note else notes == ""
    assert "abc-literal-99" not in notes


def test_a_null_env_value_is_left_out_with_a_note(tmp_path: Path) -> None:
    result = _one_server(tmp_path, {"command": "srv", "env": {"UNSET_ME": None}})
    (server,) = result.servers
    assert server.config.env == {}
    assert "env UNSET_ME was null (unset) in the source: left out" in server.notes


def test_placeholders_prixfixe_cannot_expand_are_kept_with_a_note(tmp_path: Path) -> None:
    result = _one_server(
        tmp_path, {"command": "srv", "args": ["--root", "${PROJECT_ROOT}/data", "${userHome}/x"]}
    )
    (server,) = result.servers
    assert server.config.args[:2] == ["--root", "${PROJECT_ROOT}/data"]
    assert server.config.args[2] == f"{Path.home()}/x"
    assert "args[1] holds ${PROJECT_ROOT}, which prixfixe passes as written" in server.notes[0]


def test_keys_without_a_prixfixe_equivalent_are_named_as_ignored(tmp_path: Path) -> None:
    result = _one_server(tmp_path, {"command": "srv", "autoApprove": ["x"], "timeout": 30})
    assert result.servers[0].notes == ("ignored autoApprove, timeout (no prixfixe equivalent)",)


# -- entries that are skipped, one clear line each --------------------------------------------


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"args": ["x"]}, "it has neither command (stdio) nor url (HTTP)"),
        ({"command": "x", "url": "https://x.test"}, "it has both command and url"),
        ({"type": "sse", "url": "https://x.test/sse"}, 'type "sse" (HTTP+SSE, deprecated'),
        ({"type": "ws", "url": "wss://x.test"}, "type 'ws' is not one prixfixe mounts"),
        ({"type": "http", "command": "x"}, "it is type 'http' but has no url"),
        ({"type": 3, "command": "x"}, "its type is a JSON number, not a string"),
        (["npx", "srv"], "its entry is a JSON array, not an object"),
        ({"command": "x", "args": "--flag"}, "its args is a JSON string, not an array"),
        ({"command": "x", "env": ["A=b"]}, "its env is a JSON array, not an object"),
        ({"command": ["npx"]}, "its command is a JSON array, not a string"),
        ({"url": "https://x.test/mcp", "headers": "h"}, "its headers is a JSON string"),
        ({"command": "x", "args": ["--api-key", "sk-arg-secret"]}, "args[1] looks like a"),
        ({"command": "x", "args": ["--github-token=sk-arg-secret"]}, "args[0] looks like a"),
        ({"command": "x", "args": ["postgres://u:sk-arg-secret@db/x"]}, "args[0] looks like a"),
        ({"url": "https://x.test/mcp?api_key=sk-arg-secret"}, "its url carries a credential"),
        ({"url": "https://u:sk-arg-secret@x.test/mcp"}, "its url carries a credential"),
        ({"command": "x", "env": {"A": {"nested": 1}}}, "its env A is a JSON object, not a string"),
    ],
)
def test_an_entry_prixfixe_cannot_mount_is_skipped_with_its_reason(
    tmp_path: Path, entry: Any, reason: str
) -> None:
    result = _one_server(tmp_path, entry)
    assert result.servers == ()
    ((skipped),) = result.skipped
    assert skipped.source == "api"
    assert reason in skipped.reason
    assert "sk-arg-secret" not in skipped.reason


def test_prixfixe_itself_is_never_imported_in_any_form_its_client_entries_take(
    tmp_path: Path,
) -> None:
    """`prixfixe client claude-desktop --write` then `prixfixe servers import` must not mount
    prixfixe inside itself: each form `find_launch` writes is skipped, saying why."""
    from prixfixe.clients.entry import find_launch

    on_path = lambda name: f"/usr/local/bin/{name}"  # noqa: E731
    launches = [
        find_launch(uvx=False, argv0="python", which=on_path),  # prixfixe on PATH
        find_launch(uvx=True, argv0="python", which=on_path),  # uvx prixfixe serve
        find_launch(uvx=False, argv0="python", which=lambda name: None, python="/usr/bin/python3"),
    ]
    assert [launch.how for launch in launches] == ["prixfixe on PATH", "uvx", "this Python"]
    entries = {
        f"p{i}": {"command": launch.command, "args": list(launch.args)}
        for i, launch in enumerate(launches)
    }
    entries["uvfrom"] = {"command": "uvx", "args": ["--from", "/src/prixfixe", "prixfixe", "serve"]}
    entries["time"] = {"command": "uvx", "args": ["mcp-server-time"]}
    entries["notes"] = {"command": "prixfixe-notes", "args": ["serve"]}  # another program
    path = tmp_path / "claude.json"
    path.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    result = import_servers(path)
    assert sorted(s.source for s in result.servers) == ["notes", "time"]
    assert sorted(s.source for s in result.skipped) == ["p0", "p1", "p2", "uvfrom"]
    assert all("starts prixfixe itself" in s.reason for s in result.skipped)


def test_arguments_that_only_look_like_credential_flags_are_kept(tmp_path: Path) -> None:
    args = ["--token-file", "/run/token", "--api-key", "${API_KEY}", "--auth-mode", "none"]
    result = _one_server(tmp_path, {"command": "x", "args": args})
    assert result.servers[0].config.args == args


# -- files that cannot be read as a client configuration, one clear error each ---------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"mcpServers": {"a": {"command": "x"}', "is not valid JSON"),
        ("{'mcpServers': {}}", "is not valid JSON"),
        ("", "is not valid JSON"),
        ("/* unterminated", "is not valid JSON"),
        ('["not", "an", "object"]', "holds a JSON array; expected an object with mcpServers"),
        ('"text"', "holds a JSON string; expected an object"),
        ('{"theme": "dark", "numStartups": 3}', "has no MCP servers where a client keeps them"),
        ('{"mcpServers": ["a"]}', "mcpServers should be an object of servers by name"),
        ('{"servers": "a"}', "servers should be an object of servers by name, not a string"),
        ('{"servers": {}, "inputs": {}}', "inputs should be an array, not a object"),
        ('{"projects": {"/p": {"mcpServers": []}}}', "projects['/p'].mcpServers should be"),
    ],
)
def test_a_file_that_is_not_a_client_configuration_is_one_clear_error(
    tmp_path: Path, content: str, message: str
) -> None:
    source = tmp_path / "mcp.json"
    source.write_text(content)
    with pytest.raises(PrixfixeError) as caught:
        import_servers(source)
    assert message in caught.value.message
    assert str(source) in caught.value.message


def test_a_json_error_names_the_line_and_column_but_not_the_text(tmp_path: Path) -> None:
    source = tmp_path / "mcp.json"
    source.write_text(
        '{\n  // note\n  "mcpServers": {"a": {"env": {"K": "sk-json-secret" oops}}}\n}'
    )
    with pytest.raises(PrixfixeError) as caught:
        import_servers(source)
    assert "at line 3, column" in caught.value.message
    assert "sk-json-secret" not in caught.value.message


def test_a_missing_or_binary_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PrixfixeError, match=r"cannot read .*absent\.json"):
        import_servers(tmp_path / "absent.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00{")
    with pytest.raises(PrixfixeError, match="is not UTF-8 text"):
        import_servers(binary)


def test_an_empty_claude_code_file_imports_nothing(tmp_path: Path) -> None:
    source = tmp_path / ".claude.json"
    source.write_text('{"projects": {"/p": {"allowedTools": []}}}')
    result = import_servers(source)
    assert (result.servers, result.skipped) == ((), ())


# -- JSONC ------------------------------------------------------------------------------------


def test_jsonc_drops_comments_and_trailing_commas_but_not_text_inside_strings() -> None:
    text = """// lead
    {
      "url": "https://x.test/a//b", /* block, with a comma, */
      "glob": "/*.js",
      "list": [1, 2, /* c */ ],
      "quote": "a \\" // not a comment",
      "nested": {"k": "v",  // trailing
      },
    }"""
    assert parse_jsonc(text) == {
        "url": "https://x.test/a//b",
        "glob": "/*.js",
        "list": [1, 2],
        "quote": 'a " // not a comment',
        "nested": {"k": "v"},
    }


def test_jsonc_keeps_line_numbers_across_block_comments() -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        parse_jsonc('{\n/* one\n two\n*/\n"a": }')
    assert caught.value.lineno == 5


@pytest.mark.parametrize(
    ("hostile", "problem"),
    [
        (",/*" * 40_000, "Unterminated comment"),
        ('"\\' * 60_000, "Unterminated string"),
        ("[" + ", /* c */" * 15_000, "Expecting value"),
        ("[" + "," * 120_000, "Expecting value"),
        ("//\n" * 40_000 + "{", "Expecting property name"),
    ],
)
@pytest.mark.timeout(20)  # a hang guard: the quadratic stripper took minutes on these
def test_jsonc_strips_hostile_files_in_one_pass(hostile: str, problem: str) -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        parse_jsonc(hostile)
    assert caught.value.msg.startswith(problem)


def test_jsonc_trailing_comma_after_comments_keeps_its_place() -> None:
    assert parse_jsonc('[1, /* a */ // b\n 2 , // c\n /* d */ ]') == [1, 2]
    assert parse_jsonc('{"a": 1 /* x */ , "b": "," , }') == {"a": 1, "b": ","}
    with pytest.raises(json.JSONDecodeError):
        parse_jsonc("[1, 2] / ")


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("GitHub", "github"),
        ("brave search", "brave-search"),
        ("my.server", "my-server"),
        ("Äpfel & Birnen", "pfel-birnen"),
        ("1password", "mcp-1password"),
        ("__x__", "x"),
        ("***", "mcp"),
        ("a" * 80, "a" * 64),
        ("snake_case-ok", "snake_case-ok"),
    ],
)
def test_names_are_normalised_to_the_server_name_rule(raw: str, name: str) -> None:
    assert normalise_name(raw) == name
    ServerConfig(command="x")  # the rule's own model
    validate_config({"servers": {name: {"command": "x"}}}, file="test")


def test_colliding_names_get_a_number() -> None:
    assert unique_name("git", []) == "git"
    assert unique_name("git", ["git"]) == "git-2"
    assert unique_name("git", ["git", "git-2"]) == "git-3"
    assert unique_name("a" * 64, ["a" * 64]) == "a" * 62 + "-2"


def test_a_name_prefix_goes_before_every_name(tmp_path: Path) -> None:
    result = import_servers(DESKTOP, name_prefix="cd-")
    assert [s.name for s in result.servers][:2] == ["cd-time", "cd-git"]


def test_two_servers_sharing_an_invented_variable_are_pointed_out(tmp_path: Path) -> None:
    source = tmp_path / "mcp.json"
    source.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "a": {"command": "x", "env": {"API_KEY": "one"}},
                    "b": {"command": "y", "env": {"API_KEY": "two"}},
                }
            }
        )
    )
    (note,) = import_servers(source).notes
    assert note.startswith("API_KEY is referred to by a, b")


# -- merging into a prixfixe.toml -------------------------------------------------------------

EXISTING = """\
# my prixfixe: keep this comment
[mcp]
expose = ["core"]  # and this one

[servers.time]
command = "uvx"
args = ["mcp-server-time"]

[reports]
keep = 50
"""


def test_merge_keeps_the_files_content_and_comments_and_loads(tmp_path: Path) -> None:
    config = tmp_path / "prixfixe.toml"
    config.write_text(EXISTING.replace("[servers.time]", "[servers.clock]"))
    outcome = merge_into(config, import_servers(CURSOR))
    assert outcome.added == ("userjot", "brave-search")
    assert outcome.replaced == ()
    text = config.read_text()
    assert text.startswith(
        EXISTING.replace("[servers.time]", "[servers.clock]").split("[reports]")[0]
    )
    assert "# my prixfixe: keep this comment" in text
    assert 'expose = ["core"]  # and this one' in text
    assert "[reports]\nkeep = 50" in text
    model = load_config({"PRIXFIXE_CONFIG": str(config)}, tmp_path).model
    assert list(model.servers) == ["clock", "userjot", "brave-search"]
    assert model.reports.keep == 50


def test_merge_refuses_a_server_that_exists_and_writes_nothing(tmp_path: Path) -> None:
    config = tmp_path / "prixfixe.toml"
    config.write_text(EXISTING)
    with pytest.raises(PrixfixeError) as caught:
        merge_into(config, import_servers(DESKTOP))
    assert "already has servers time; nothing was written" in caught.value.message
    assert "--replace" in caught.value.message
    assert config.read_text() == EXISTING


def test_merge_with_replace_overwrites_in_place(tmp_path: Path) -> None:
    config = tmp_path / "prixfixe.toml"
    config.write_text(EXISTING)
    outcome = merge_into(config, import_servers(DESKTOP), replace=True)
    assert outcome.replaced == ("time",)
    model = load_config({"PRIXFIXE_CONFIG": str(config)}, tmp_path).model
    assert model.servers["time"].args == ["mcp-server-time", "--local-timezone=Europe/Lisbon"]
    assert next(iter(model.servers)) == "time"
    assert len(model.servers) == 7


def test_merge_creates_a_missing_file(tmp_path: Path) -> None:
    config = tmp_path / "new" / "prixfixe.toml"
    merge_into(config, import_servers(CLAUDE_CODE))
    assert tomllib.loads(config.read_text())["servers"]["sentry"]["url"] == (
        "https://mcp.sentry.dev/mcp"
    )


@pytest.mark.parametrize(
    ("existing", "message"),
    [
        ("[mcp\n", "not valid TOML"),
        ("[mcp]\nexpose = 3\n", "mcp.expose"),
        ('servers = {time = {command = "x"}}\n', "as [servers.NAME] tables"),
    ],
)
def test_merge_refuses_a_file_it_cannot_keep_valid(
    tmp_path: Path, existing: str, message: str
) -> None:
    config = tmp_path / "prixfixe.toml"
    config.write_text(existing)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        merge_into(config, import_servers(CURSOR))
    assert config.read_text() == existing


# -- the config itself never echoes a credential ---------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        {"servers": {"gh": {"command": "x", "env": {"T": "sk-config-secret"}}}},
        {"servers": {"gh": {"url": "https://x.test", "headers": {"A": "sk-config-secret"}}}},
        {"servers": {"gh": {"url": "https://x.test", "env": {"T": {"env": "sk-config-secret"}}}}},
        {"http": {"token": "sk-config-secret"}},
    ],
)
def test_a_config_error_never_repeats_what_was_written_for_a_credential(
    raw: dict[str, Any],
) -> None:
    with pytest.raises(ConfigError) as caught:
        validate_config(raw, file="prixfixe.toml")
    assert "sk-config-secret" not in caught.value.message


def test_an_invalid_server_name_is_explained() -> None:
    with pytest.raises(ConfigError) as caught:
        validate_config({"servers": {"GitHub": {"command": "x"}}}, file="prixfixe.toml")
    assert "servers.GitHub: a server's name is 1-64 lowercase letters" in caught.value.message


# -- the guide's examples ---------------------------------------------------------------------

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "servers.md"


def _guide_blocks(lang: str) -> list[str]:
    import re

    return re.findall(rf"```{lang}\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)


def test_the_guides_import_example_prints_what_the_guide_shows(tmp_path: Path) -> None:
    (source,) = _guide_blocks("json")
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(source)
    result = import_servers(path)
    printed = render_toml(result).split("\n", 2)[2]  # past the comment naming tmp_path
    assert printed == _guide_blocks("toml")[0]
    assert "ghp_xxxxxxxxxxxxxxxxxxxx" not in printed
    stderr_example = _guide_blocks("text")[0]
    for server in result.servers:
        for note in server.notes:
            assert f"  {server.name}: {note}\n" in stderr_example


def test_the_guides_config_examples_are_valid() -> None:
    blocks = _guide_blocks("toml")
    assert len(blocks) >= 3  # import example, hand-written tables, worked example
    for block in blocks:
        validate_config(tomllib.loads(block), file="docs/servers.md")


def test_an_env_file_that_cannot_be_read_is_a_note_not_an_error(tmp_path: Path) -> None:
    result = _one_server(tmp_path, {"command": "x", "envFile": "missing.env"})
    (server,) = result.servers
    assert server.config.env == {}
    assert f"envFile {tmp_path / 'missing.env'} could not be read" in server.notes[0]
