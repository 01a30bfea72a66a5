"""`prixfixe client NAME`: each client's entry printed or merged into its own file, every other
entry kept, no token ever written, and the entry a client gets starts a prixfixe that answers."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters

from prixfixe.cli import cli
from prixfixe.clients.entry import find_launch
from prixfixe.clients.targets import CLIENTS, config_file
from prixfixe.system.environment import Environment, detect, install_source, source_of
from tests.conftest import CORE_TOOLS

PRIXFIXE = Path(sys.executable).parent / "prixfixe"


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Every client file lands in tmp_path: a home, an APPDATA, and no PRIXFIXE_HOME to pin."""
    home = tmp_path / "home"
    home.mkdir()
    for name in ("HOME", "USERPROFILE"):
        monkeypatch.setenv(name, str(home))
    monkeypatch.setenv("APPDATA", str(home / "AppData" / "Roaming"))
    monkeypatch.delenv("PRIXFIXE_HOME")
    return home


def run(*args: str) -> tuple[int, str, str]:
    """Exit code, stdout, and stderr as one line (a long error wraps on a narrow console)."""
    result = CliRunner().invoke(cli, ["client", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def entry_in(path: Path, key: str = "mcpServers", name: str = "prixfixe") -> Any:
    return json.loads(path.read_text())[key][name]


def subprocess_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PRIXFIXE_LOAD_PLUGINS": "",
        "LANG": "C.UTF-8",
        # The prixfixe under test, where it is not the installed one.
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }


# --- where each client keeps its servers ---------------------------------------------------


@pytest.mark.parametrize(
    ("client", "scope", "place"),
    [
        ("claude-code", "user", "home/.claude.json"),
        ("claude-code", "project", ".mcp.json"),
        ("cursor", "user", "home/.cursor/mcp.json"),
        ("cursor", "project", ".cursor/mcp.json"),
        ("vscode", "user", "xdg-config/Code/User/mcp.json"),
        ("vscode", "project", ".vscode/mcp.json"),
        ("claude-desktop", None, "xdg-config/Claude/claude_desktop_config.json"),
    ],
)
def test_write_creates_the_clients_own_file_with_the_entry(
    tmp_path: Path, client: str, scope: str | None, place: str
) -> None:
    args = [client, "--write"] + (["--scope", scope] if scope else [])
    code, out, err = run(*args)
    assert code == 0, err
    path = tmp_path / place
    assert f"Added the 'prixfixe' entry to {path}." in out
    entry = entry_in(path, CLIENTS[client].key)
    assert entry["args"][-1] == "serve"
    assert Path(entry["command"]).is_absolute()
    assert f"It starts: {entry['command']} {' '.join(entry['args'])}\n" in out
    assert ("type" in entry) == (client in ("claude-code", "vscode"))


@pytest.mark.parametrize(
    ("platform", "client", "expected"),
    [
        (
            "darwin",
            "claude-desktop",
            "home/Library/Application Support/Claude/claude_desktop_config.json",
        ),
        ("win32", "claude-desktop", "appdata/Claude/claude_desktop_config.json"),
        ("linux", "claude-desktop", "home/.config/Claude/claude_desktop_config.json"),
        ("darwin", "vscode", "home/Library/Application Support/Code/User/mcp.json"),
        ("win32", "vscode", "appdata/Code/User/mcp.json"),
        ("win32", "cursor", "profile/.cursor/mcp.json"),
        ("win32", "claude-code", "profile/.claude.json"),
    ],
)
def test_each_platform_has_the_clients_documented_path(
    tmp_path: Path, platform: str, client: str, expected: str
) -> None:
    env = {
        "HOME": str(tmp_path / "home"),
        "USERPROFILE": str(tmp_path / "profile"),
        "APPDATA": str(tmp_path / "appdata"),
    }
    found = config_file(CLIENTS[client], "user", env, tmp_path / "project", platform)
    assert found == tmp_path / expected


def test_generic_has_no_file_of_its_own() -> None:
    assert config_file(CLIENTS["generic"], "user", {}, Path.cwd(), "linux") is None
    code, out, err = run("generic", "--write")
    assert (code, out) == (1, "")
    assert "generic has no file of its own: give the client's file with --file PATH" in err


def test_generic_write_goes_to_the_file_given(tmp_path: Path) -> None:
    code, _, err = run("generic", "--write", "--file", str(tmp_path / "some" / "client.json"))
    assert code == 0, err
    assert entry_in(tmp_path / "some" / "client.json")["args"][-1] == "serve"


# --- merging: keep everything else, same twice is a no-op, never clobber ----------------------


def test_write_keeps_every_other_entry_and_key_and_the_files_indentation(home: Path) -> None:
    path = home / ".claude.json"
    path.write_text(
        json.dumps(
            {
                "numStartups": 7,
                "mcpServers": {"github": {"command": "npx", "args": ["-y", "gh"]}},
                "projects": {"/x": {"mcpServers": {}}},
            },
            indent=4,
        )
    )
    code, _, err = run("claude-code", "--write")
    assert code == 0, err
    data = json.loads(path.read_text())
    assert list(data) == ["numStartups", "mcpServers", "projects"]
    assert data["numStartups"] == 7
    assert data["projects"] == {"/x": {"mcpServers": {}}}
    assert list(data["mcpServers"]) == ["github", "prixfixe"]
    assert data["mcpServers"]["github"] == {"command": "npx", "args": ["-y", "gh"]}
    assert path.read_text().startswith('{\n    "numStartups"')


def test_writing_the_same_entry_again_says_already_configured_and_changes_nothing(
    home: Path,
) -> None:
    assert run("cursor", "--write")[0] == 0
    path = home / ".cursor" / "mcp.json"
    before = path.read_bytes()
    code, out, _ = run("cursor", "--write")
    assert code == 0
    assert out == f"Cursor is already configured: {path} has this 'prixfixe' entry.\n"
    assert path.read_bytes() == before


def test_an_entry_claude_code_rewrote_with_empty_env_counts_as_the_same(home: Path) -> None:
    assert run("claude-code", "--write")[0] == 0
    path = home / ".claude.json"
    data = json.loads(path.read_text())
    data["mcpServers"]["prixfixe"]["env"] = {}
    path.write_text(json.dumps(data))
    code, out, _ = run("claude-code", "--write")
    assert code == 0
    assert "already configured" in out


def test_a_different_entry_is_replaced_only_with_force_and_says_what_differs(home: Path) -> None:
    assert run("cursor", "--write")[0] == 0
    path = home / ".cursor" / "mcp.json"
    old = json.loads(path.read_text())
    old["mcpServers"]["prixfixe"]["command"] = "/old/prixfixe"
    path.write_text(json.dumps(old))
    code, out, err = run("cursor", "--write")
    assert (code, out) == (1, "")
    assert f"{path} already has a different 'prixfixe' entry (it differs in command)" in err
    assert "nothing was written. Add --force to replace it" in err
    assert json.loads(path.read_text()) == old
    code, out, _ = run("cursor", "--write", "--force")
    assert code == 0
    assert f"Replaced the 'prixfixe' entry in {path} (it differed in command)." in out
    assert entry_in(path)["command"] != "/old/prixfixe"


def test_name_adds_a_second_entry_beside_the_first(home: Path) -> None:
    assert run("cursor", "--write")[0] == 0
    assert (
        run("cursor", "--write", "--name", "prixfixe-http", "--http", "http://127.0.0.1:8765/mcp")[
            0
        ]
        == 0
    )
    servers = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert list(servers) == ["prixfixe", "prixfixe-http"]


def test_a_malformed_file_is_refused_naming_file_and_line_and_left_as_it_was(home: Path) -> None:
    path = home / ".claude.json"
    text = '{\n  "mcpServers": {\n    "a": {command: "x"}\n  }\n}\n'
    path.write_text(text)
    code, out, err = run("claude-code", "--write")
    assert (code, out) == (1, "")
    assert f"prixfixe: error: {path} is not valid JSON" in err
    assert "at line 3, column 11" in err
    assert path.read_text() == text


def test_a_jsonc_file_with_comments_is_refused_rather_than_losing_them(tmp_path: Path) -> None:
    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir()
    text = '{\n  // my servers\n  "servers": {"a": {"command": "x", "url": "http://h//p"}},\n}\n'
    path.write_text(text)
    code, _, err = run("vscode", "--scope", "project", "--write")
    assert code == 1
    assert f"{path} has comments, which rewriting it would drop; nothing was written." in err
    assert path.read_text() == text


def test_a_jsonc_file_with_trailing_commas_and_no_comments_is_merged(tmp_path: Path) -> None:
    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{\n  "servers": {"a": {"url": "http://h//x"},},\n  "inputs": [],\n}\n')
    code, _, err = run("vscode", "--scope", "project", "--write")
    assert code == 0, err
    data = json.loads(path.read_text())
    assert list(data["servers"]) == ["a", "prixfixe"]
    assert data["inputs"] == []


def test_servers_that_are_not_an_object_are_refused(home: Path) -> None:
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": []}')
    code, _, err = run("cursor", "--write")
    assert code == 1
    assert f"{path}: 'mcpServers' is a JSON array, expected an object of servers" in err


def test_an_entry_or_inputs_of_the_wrong_json_type_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"servers": {"prixfixe": ["x"]}}')
    code, _, err = run("vscode", "--write", "--file", str(path), "--force")
    assert code == 0, err  # replaced: --force
    path.write_text('{"servers": {"prixfixe": ["x"]}}')
    code, _, err = run("vscode", "--write", "--file", str(path))
    assert code == 1
    assert "it differs in its type (a JSON array, not an object)" in err
    path.write_text('{"servers": {}, "inputs": {}}')
    args = ("--http", "http://127.0.0.1:1/mcp", "--token-env", "T", "--write", "--file", str(path))
    code, _, err = run("vscode", *args)
    assert code == 1
    assert f"{path}: 'inputs' is a JSON object, expected an array" in err


def test_an_unknown_client_name_is_an_error_naming_the_known_ones() -> None:
    from prixfixe.clients.targets import get_client
    from prixfixe.errors import PrixfixeError

    with pytest.raises(PrixfixeError, match="unknown client 'zed'; known: claude-code, "):
        get_client("zed")


def test_an_empty_file_is_written_as_a_new_one(home: Path) -> None:
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text("\n")
    assert run("cursor", "--write")[0] == 0
    assert list(json.loads(path.read_text())) == ["mcpServers"]


def test_a_folder_where_the_file_should_be_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    code, _, err = run("generic", "--write", "--file", str(tmp_path / "dir.json"))
    assert code == 1
    assert "is a folder; expected the client's JSON configuration file" in err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions and symlinks")
def test_write_keeps_the_files_permissions_follows_a_dotfile_link_and_leaves_no_temp_file(
    home: Path, tmp_path: Path
) -> None:
    real = tmp_path / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text('{"mcpServers": {}}')
    real.chmod(0o600)
    (home / ".claude.json").symlink_to(real)
    assert run("claude-code", "--write")[0] == 0
    assert (home / ".claude.json").is_symlink()
    assert "prixfixe" in json.loads(real.read_text())["mcpServers"]
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert sorted(p.name for p in real.parent.iterdir()) == ["claude.json"]


# --- the entry: HTTP with a token reference, never the token ----------------------------------


@pytest.mark.parametrize(
    ("client", "key", "header"),
    [
        ("claude-code", "mcpServers", "Bearer ${PX_TOKEN}"),
        ("cursor", "mcpServers", "Bearer ${env:PX_TOKEN}"),
        ("vscode", "servers", "Bearer ${input:prixfixe-token}"),
        ("generic", "mcpServers", "Bearer ${PX_TOKEN}"),
    ],
)
def test_http_entries_refer_to_the_token_in_the_clients_own_syntax_never_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, client: str, key: str, header: str
) -> None:
    monkeypatch.setenv("PX_TOKEN", "s3cret-value-never-written")
    url = "http://127.0.0.1:8765/mcp"
    file = tmp_path / "client.json"
    code, out, err = run(
        client, "--http", url, "--token-env", "PX_TOKEN", "--write", "--file", str(file)
    )
    assert code == 0, err
    entry = entry_in(file, key)
    assert entry["url"] == url
    assert f"It reaches: {url}\n" in out
    assert entry["headers"] == {"Authorization": header}
    assert "command" not in entry
    printed = run(client, "--http", url, "--token-env", "PX_TOKEN")[1]
    for text in (file.read_text(), out, printed):
        assert "s3cret-value-never-written" not in text


def test_vscode_http_adds_a_password_prompt_to_inputs_once(tmp_path: Path) -> None:
    args = ("vscode", "--scope", "project", "--http", "http://127.0.0.1:8765/mcp")
    assert run(*args, "--token-env", "PX_TOKEN", "--write")[0] == 0
    assert "already configured" in run(*args, "--token-env", "PX_TOKEN", "--write")[1]
    data = json.loads((tmp_path / ".vscode" / "mcp.json").read_text())
    (prompt,) = data["inputs"]
    assert prompt["id"] == "prixfixe-token"
    assert prompt["type"] == "promptString"
    assert prompt["password"] is True
    assert data["servers"]["prixfixe"]["type"] == "http"


def test_claude_code_prints_the_claude_mcp_add_line_with_the_placeholder_single_quoted() -> None:
    code, out, _ = run(
        "claude-code", "--http", "http://127.0.0.1:8765/mcp", "--token-env", "PX_TOKEN"
    )
    assert code == 0
    assert (
        "claude mcp add --scope user --transport http "
        "--header 'Authorization: Bearer ${PX_TOKEN}' prixfixe http://127.0.0.1:8765/mcp\n"
    ) in out
    document = json.loads(out[out.index("\n{") :])
    assert document["mcpServers"]["prixfixe"]["type"] == "http"


def test_claude_desktop_over_http_is_refused_with_what_to_do_instead() -> None:
    code, out, err = run("claude-desktop", "--http", "http://127.0.0.1:8765/mcp")
    assert (code, out) == (1, "")
    assert "Claude Desktop's configuration file starts local (stdio) servers only" in err
    assert "Leave out --http" in err


def test_a_url_off_loopback_without_a_token_gets_a_note() -> None:
    code, _, err = run("cursor", "--http", "https://mcp.example.org/mcp")
    assert code == 0
    assert "note: prixfixe answers off loopback only with a bearer token" in err


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("cursor", "--token-env", "X"), 2, "--token-env applies with --http URL"),
        (("claude-desktop", "--scope", "user"), 2, "--scope does not apply"),
        (("cursor", "--force"), 2, "--file and --force apply with --write"),
        (("cursor", "--http", "h", "--uvx"), 2, "--http reaches one"),
        (("cursor", "--http", "ftp://h/mcp"), 1, "give the MCP endpoint's URL"),
        (("cursor", "--http", "http://u:p@h/mcp"), 1, "the URL holds a user or password"),
        (
            ("cursor", "--http", "http://h/mcp", "--token-env", "1X"),
            1,
            "an environment variable's name",
        ),
        (
            ("cursor", "--config", "missing.toml"),
            1,
            "--config missing.toml: there is no file there",
        ),
        (("nosuch",), 2, "'nosuch' is not one of"),
        (("cursor", "--name", "my server"), 2, "--name 'my server': letters, digits"),
    ],
)
def test_every_mistake_is_one_clear_line(args: tuple[str, ...], code: int, message: str) -> None:
    got, out, err = run(*args)
    assert got == code
    assert out == ""
    assert message in err
    assert "Traceback" not in err


# --- how the client starts prixfixe -----------------------------------------------------------


def test_the_entry_names_the_running_executable_by_its_absolute_path(tmp_path: Path) -> None:
    exe = tmp_path / "venv" / "bin" / "prixfixe"
    exe.parent.mkdir(parents=True)
    exe.write_text("")
    launch = find_launch(uvx=False, argv0=str(exe), which=lambda _: None)
    assert (launch.command, launch.args) == (str(exe), ("serve",))


@pytest.mark.parametrize("bucket", ["archive-v0/abc", "environments-v1/409d/2351"])
def test_a_prixfixe_running_from_uvs_cache_is_started_with_uvx_from_its_exact_version(
    tmp_path: Path, bucket: str
) -> None:
    """`uvx prixfixe client ... --write` must not write a bare `uvx prixfixe serve`: that
    fetches whatever the index holds under the name later (a newer release, or another
    project's once the name is taken), and nothing while it holds none."""
    exe = tmp_path / "cache" / "uv" / bucket / "bin" / "prixfixe"
    exe.parent.mkdir(parents=True)
    exe.write_text("")
    launch = find_launch(
        uvx=False,
        argv0=str(exe),
        which=lambda _: "/usr/local/bin/uvx",
        source=lambda: "prixfixe==0.1.0",
    )
    assert (launch.command, launch.args) == (
        "/usr/local/bin/uvx",
        ("--from", "prixfixe==0.1.0", "prixfixe", "serve"),
    )
    assert "runs from uv's cache" in launch.notes[0]
    assert "uvx installs prixfixe==0.1.0 (this version exactly" in launch.notes[1]


def uv_environment(prefix: Path, *, tool: bool = False) -> Environment:
    """The files uv leaves in an environment it made (`uv tool install` adds its receipt)."""
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "prixfixe").write_text("")
    (prefix / "pyvenv.cfg").write_text("home = /usr/bin\nuv = 0.13.9\nversion_info = 3.12\n")
    if tool:
        (prefix / "uv-receipt.toml").write_text('[tool]\nrequirements = [{ name = "prixfixe" }]\n')
    return detect(prefix, Path("/usr"), str(prefix / "bin" / "python"))


def test_a_uvx_environment_in_a_moved_cache_is_found_by_what_uv_leaves_in_it(
    tmp_path: Path,
) -> None:
    """`UV_CACHE_DIR=/data/cache`: no folder named `uv` on the way, yet uv's own mark in the
    environment's pyvenv.cfg and the cache bucket say it is one `uvx` made."""
    env = uv_environment(tmp_path / "data" / "cache" / "archive-v0" / "Xk2")
    assert env.kind == "uvx"
    source = "prixfixe @ file:///src/prixfixe"
    launch = find_launch(
        uvx=False,
        argv0=str(env.prefix / "bin" / "prixfixe"),
        which=lambda _: None,
        environment=env,
        source=lambda: source,
    )
    assert (launch.command, launch.args) == ("uvx", ("--from", source, "prixfixe", "serve"))
    assert any(
        "where this one came from: prixfixe @ file:///src/prixfixe" in n for n in launch.notes
    )
    # The same shape outside a cache bucket is not a uvx environment: a `uv venv`.
    assert uv_environment(tmp_path / "project" / ".venv").kind == "venv"


def test_a_uv_tool_install_is_started_by_its_own_script_which_stays(tmp_path: Path) -> None:
    env = uv_environment(tmp_path / "share" / "uv" / "tools" / "prixfixe", tool=True)
    assert env.kind == "uv-tool"
    script = env.prefix / "bin" / "prixfixe"
    launch = find_launch(
        uvx=False, argv0=str(script), which=lambda _: "/usr/bin/uvx", environment=env
    )
    assert (launch.command, launch.args, launch.how) == (
        str(script),
        ("serve",),
        "the prixfixe running now",
    )


@pytest.mark.parametrize(
    ("direct_url", "expected"),
    [
        (None, "prixfixe==0.4.2"),  # from an index: that version exactly
        ('{"url": "file:///src/prixfixe", "dir_info": {}}', "prixfixe @ file:///src/prixfixe"),
        (
            '{"url": "file:///src/prixfixe", "dir_info": {"editable": true}}',
            "prixfixe @ file:///src/prixfixe",
        ),
        (
            '{"url": "https://example.org/prixfixe-0.4.2-py3-none-any.whl",'
            ' "archive_info": {"hash": "sha256=ab"}}',
            "prixfixe @ https://example.org/prixfixe-0.4.2-py3-none-any.whl",
        ),
        (
            '{"url": "https://github.com/ada/prixfixe", "vcs_info": {"vcs": "git",'
            ' "commit_id": "0123abc", "requested_revision": "main"}, "subdirectory": "py"}',
            "prixfixe @ git+https://github.com/ada/prixfixe@0123abc#subdirectory=py",
        ),
        ("not json", "prixfixe==0.4.2"),
        ('["a list"]', "prixfixe==0.4.2"),
        (
            '{"url": "https://github.com/ada/prixfixe", "vcs_info": {"vcs": "git"}}',
            "prixfixe==0.4.2",
        ),
    ],
)
def test_the_source_uvx_installs_is_where_this_prixfixe_came_from_pinned(
    direct_url: str | None, expected: str
) -> None:
    """A VCS install is pinned to the commit installed, not the branch asked for."""
    assert source_of("prixfixe", "0.4.2", direct_url) == expected


def test_the_running_prixfixes_source_is_read_from_its_distribution() -> None:
    from importlib.metadata import distribution

    dist = distribution("prixfixe")
    assert install_source() == source_of(
        "prixfixe", dist.version, dist.read_text("direct_url.json")
    )


def test_a_prixfixe_with_no_distribution_is_pinned_to_its_own_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A source tree on PYTHONPATH has no distribution to read: its version still pins."""
    from importlib.metadata import PackageNotFoundError

    from prixfixe import __version__

    def missing(name: str = "prixfixe") -> str:
        raise PackageNotFoundError(name)

    monkeypatch.setattr("prixfixe.clients.entry.install_source", missing)
    launch = find_launch(uvx=True, argv0="/x/pytest", which=lambda _: "/bin/uvx")
    assert launch.args == ("--from", f"prixfixe=={__version__}", "prixfixe", "serve")


def test_uvx_when_asked_and_python_m_when_no_executable_is_found() -> None:
    launch = find_launch(
        uvx=True, argv0="/x/pytest", which=lambda _: None, source=lambda: "prixfixe==0.1.0"
    )
    assert (launch.command, launch.args) == (
        "uvx",
        ("--from", "prixfixe==0.1.0", "prixfixe", "serve"),
    )
    assert "uvx is not on PATH here" in launch.notes[-1]
    launch = find_launch(uvx=False, argv0="/x/pytest", python="/py/python", which=lambda _: None)
    # -P: the client's folder is not put on sys.path (tests/security/test_config_trust.py).
    assert (launch.command, launch.args) == ("/py/python", ("-P", "-m", "prixfixe", "serve"))


def test_a_windows_launcher_named_without_its_suffix_and_prixfixe_on_path_are_found(
    tmp_path: Path,
) -> None:
    exe = tmp_path / "Scripts" / "prixfixe.exe"
    exe.parent.mkdir()
    exe.write_text("")
    launch = find_launch(
        uvx=False, argv0=str(tmp_path / "Scripts" / "prixfixe"), which=lambda _: None
    )
    assert launch.command == str(exe)
    gone = str(tmp_path / "gone" / "prixfixe")
    launch = find_launch(uvx=False, argv0=gone, which=lambda _: "/opt/bin/prixfixe")
    assert (launch.command, launch.args, launch.notes) == ("/opt/bin/prixfixe", ("serve",), ())


def test_the_users_config_is_pinned_and_a_folders_never_implicitly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run("cursor")  # no configuration anywhere: nothing to pin yet
    assert code == 0
    assert '"env"' not in out
    assert "there is no configuration file yet" in err
    user = tmp_path / "xdg-config" / "prixfixe" / "prixfixe.toml"
    user.parent.mkdir(parents=True)
    user.write_text("")
    code, _, err = run("cursor", "--write")
    assert code == 0
    entry = entry_in(tmp_path / "home" / ".cursor" / "mcp.json")
    assert entry["env"] == {"PRIXFIXE_CONFIG": str(user)}  # wherever the client starts it
    assert "the entry sets PRIXFIXE_CONFIG=" in err
    # A trusted folder's file is in force here, but a pin would load it however it changed:
    # the entry pins the person's own, and says how to pin the folder's on their word.
    (tmp_path / "prixfixe.toml").write_text("")
    code, out, err = run("cursor")
    assert f'"PRIXFIXE_CONFIG": "{user}"' in out
    assert f"{tmp_path / 'prixfixe.toml'} is this folder's configuration" in err
    assert "give --config with its path" in err
    # An untrusted one is named as not loaded.
    monkeypatch.delenv("PRIXFIXE_TRUSTED_PATHS")
    code, out, err = run("cursor")
    assert f'"PRIXFIXE_CONFIG": "{user}"' in out
    assert "is not trusted, so it was not loaded" in err
    user.unlink()
    code, out, err = run("cursor")
    assert '"env"' not in out


def test_a_config_the_shells_prixfixe_config_names_is_pinned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mine.toml").write_text("")
    monkeypatch.setenv("PRIXFIXE_CONFIG", "mine.toml")
    code, out, _ = run("cursor")
    assert code == 0
    assert f'"PRIXFIXE_CONFIG": "{tmp_path / "mine.toml"}"' in out


def test_prixfixe_home_and_an_explicit_config_are_pinned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIXFIXE_HOME", str(tmp_path / "data"))
    (tmp_path / "mine.toml").write_text("")
    code, out, _ = run("claude-code", "--config", "mine.toml")
    assert code == 0
    assert f"--env PRIXFIXE_CONFIG={tmp_path / 'mine.toml'}" in out
    assert f"--env PRIXFIXE_HOME={tmp_path / 'data'}" in out


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.skipif(not PRIXFIXE.is_file(), reason="needs the installed prixfixe script")
async def test_the_entry_written_for_a_desktop_client_starts_a_prixfixe_that_answers(
    tmp_path: Path, home: Path
) -> None:
    """As a desktop app would: from its own folder, without the shell's PATH."""
    env = subprocess_env(home)
    project = tmp_path / "project"
    project.mkdir()
    for args in (["init"], ["client", "claude-desktop", "--write"]):
        done = subprocess.run(
            [str(PRIXFIXE), *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    entry = entry_in(home / ".config" / "Claude" / "claude_desktop_config.json")
    written = home / ".config" / "prixfixe" / "prixfixe.toml"  # by init
    assert entry == {
        "command": str(PRIXFIXE),
        "args": ["serve"],
        "env": {"PRIXFIXE_CONFIG": str(written)},
    }
    bare = {**env, "PATH": "/usr/bin:/bin", **entry.get("env", {})}
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=bare, cwd="/")
    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as session:
            tools = await session.list_tools()
            assert [t.name for t in tools.tools] == CORE_TOOLS
            report = await session.call_tool("routine_run", {"name": "morning"})
    text = report.content[0].text  # type: ignore[union-attr]
    assert "## Reminders" in text
