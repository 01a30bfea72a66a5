"""`prixfixe trust`: a folder's prixfixe.toml loads only once that exact file is trusted, the
record kept owner-only in the user state folder, and any change untrusts it. The attacks
through real processes are in tests/security/test_config_trust.py."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from prixfixe.cli import cli
from prixfixe.config import MAX_CONFIG_BYTES, load_config, trust_file

EXPOSE_WEATHER = '[mcp]\nexpose = ["weather"]\n'
EXPOSE_NOTES = '[mcp]\nexpose = ["notes"]\n'


@pytest.fixture(autouse=True)
def untrusting(monkeypatch: pytest.MonkeyPatch) -> None:
    """No folder trusted by the environment: only records count."""
    monkeypatch.delenv("PRIXFIXE_TRUSTED_PATHS")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["trust", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def user_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "xdg-config" / "prixfixe" / "prixfixe.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_an_untrusted_folder_file_is_left_unread_said_once_and_the_users_own_is_used(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    mine = user_config(tmp_path, EXPOSE_NOTES)
    (tmp_path / "prixfixe.toml").write_text(EXPOSE_WEATHER)
    with caplog.at_level(logging.WARNING, logger="prixfixe.config"):
        loaded = load_config({}, tmp_path)
        load_config({}, tmp_path)
    assert (loaded.path, loaded.origin, loaded.model.mcp.expose) == (mine, "user", ["notes"])
    assert loaded.ignored is not None
    assert loaded.ignored.reason == "not trusted"
    said = [r.getMessage() for r in caplog.records if "prixfixe.toml" in r.getMessage()]
    assert said == [
        f"{tmp_path / 'prixfixe.toml'} is not trusted, so it was not loaded (a folder's "
        f"configuration can start programs); using {mine}. To trust it: prixfixe trust "
        f"{tmp_path / 'prixfixe.toml'}"
    ]


def test_trusting_loads_that_file_and_any_change_untrusts_it(tmp_path: Path) -> None:
    config = tmp_path / "prixfixe.toml"
    config.write_text(EXPOSE_WEATHER)
    assert load_config({}, tmp_path).path is None
    code, out, _ = run()
    assert code == 0
    assert f"Trusted {config}" in out
    loaded = load_config({}, tmp_path)
    assert (loaded.path, loaded.origin, loaded.ignored) == (config, "folder", None)
    assert loaded.model.mcp.expose == ["weather"]
    config.write_text(EXPOSE_WEATHER + "\n")  # one byte more
    loaded = load_config({}, tmp_path)
    assert (loaded.path, loaded.model.mcp.expose) == (None, None)
    assert loaded.ignored is not None
    assert loaded.ignored.reason == "changed since it was trusted"
    assert "has changed since it was trusted" in loaded.ignored.line("built-in defaults")


def test_the_record_is_owner_only_written_whole_and_names_the_resolved_file(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "prixfixe.toml").write_text(EXPOSE_WEATHER)
    code, _, _ = run(str(folder))  # a folder: its prixfixe.toml
    assert code == 0
    record = trust_file()
    assert record.parent == tmp_path / "xdg-state" / "prixfixe"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert stat.S_IMODE(record.parent.stat().st_mode) == 0o700
    assert [p.name for p in record.parent.iterdir()] == [record.name]  # no temporary file left
    data = json.loads(record.read_text())
    assert data["version"] == 1
    assert [r["path"] for r in data["trusted"]] == [str(folder / "prixfixe.toml")]


def test_a_link_to_a_trusted_file_loads_it_where_it_is_and_a_copy_is_not_trusted(
    tmp_path: Path,
) -> None:
    trusted = tmp_path / "mine" / "prixfixe.toml"
    trusted.parent.mkdir()
    trusted.write_text(EXPOSE_WEATHER)
    assert run(str(trusted))[0] == 0
    linked = tmp_path / "checkout"
    linked.mkdir()
    (linked / "prixfixe.toml").symlink_to(trusted)
    loaded = load_config({}, linked)
    # The trusted file, in its own folder: relative paths in it resolve there, not here.
    assert (loaded.path, loaded.origin) == (trusted, "folder")
    copied = tmp_path / "copy"
    copied.mkdir()
    (copied / "prixfixe.toml").write_bytes(trusted.read_bytes())
    assert load_config({}, copied).path is None  # same bytes, another folder: not trusted


def test_the_users_own_folder_and_prixfixe_config_need_no_trust(tmp_path: Path) -> None:
    mine = user_config(tmp_path, EXPOSE_NOTES)
    loaded = load_config({}, mine.parent)  # started in the user config folder itself
    assert (loaded.path, loaded.origin, loaded.ignored) == (mine, "user", None)
    (tmp_path / "prixfixe.toml").write_text(EXPOSE_WEATHER)
    loaded = load_config({"PRIXFIXE_CONFIG": "prixfixe.toml"}, tmp_path)
    assert (loaded.origin, loaded.model.mcp.expose) == ("env", ["weather"])


def test_trusted_paths_trust_the_folders_they_name_and_nothing_relative(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(EXPOSE_WEATHER)
    relative = os.pathsep.join(["", ".", "relative/dir"])
    assert load_config({"PRIXFIXE_TRUSTED_PATHS": relative}, tmp_path).path is None
    named = os.pathsep.join([str(tmp_path / "other"), str(tmp_path)])
    assert load_config({"PRIXFIXE_TRUSTED_PATHS": named}, tmp_path).origin == "folder"


def test_revoke_forgets_a_record_even_for_a_file_gone_and_says_when_there_was_none(
    tmp_path: Path,
) -> None:
    config = tmp_path / "prixfixe.toml"
    config.write_text(EXPOSE_WEATHER)
    run()
    code, out, _ = run("--revoke")
    assert (code, out.strip()) == (
        0,
        f"No longer trusted: {config} (it is not loaded from now on).",
    )
    assert load_config({}, tmp_path).path is None
    code, out, _ = run("--revoke")
    assert (code, out.strip()) == (0, f"{config} was not trusted; nothing changed.")
    run()
    config.unlink()
    code, out, _ = run("--revoke", str(config))
    assert "No longer trusted" in out


def test_list_says_which_records_still_match_their_file(tmp_path: Path) -> None:
    names = ("same", "changed", "gone", "huge")
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "prixfixe.toml").write_text(EXPOSE_WEATHER)
        assert run(str(tmp_path / name))[0] == 0
    (tmp_path / "changed" / "prixfixe.toml").write_text(EXPOSE_NOTES)
    (tmp_path / "gone" / "prixfixe.toml").unlink()
    (tmp_path / "huge" / "prixfixe.toml").write_bytes(b"#" * (MAX_CONFIG_BYTES + 1))
    code, out, _ = run("--list", "--json")
    assert code == 0
    states = {Path(r["path"]).parent.name: r["state"] for r in json.loads(out)["trusted"]}
    assert states == {
        "same": "trusted",
        "changed": "changed",
        "gone": "missing",
        "huge": "unreadable",
    }
    code, out, _ = run("--list")
    for shown in ("changed since", "trusted", "missing"):
        assert shown in out


def test_list_with_no_records_says_so() -> None:
    code, out, _ = run("--list")
    assert (code, "No folder's configuration is trusted" in out) == (0, True)


def test_trusting_names_what_the_file_may_start(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(
        '[servers.web]\ncommand = "npx"\nargs = ["-y", "some-server"]\n'
        '[servers.off]\ncommand = "never"\nenabled = false\n'
        '[commands]\nreport = ["python3", "report.py"]\ntests = "make check"\n'
        '[routines.r]\n[[routines.r.steps]]\ntype = "script"\ncommand = ["./build.sh", "-q"]\n'
        '[[routines.r.steps]]\ntype = "script"\nname = "s"\ncommand = "make all"\n'
        '[[routines.r.steps]]\ntype = "reminders"\n'
    )
    code, out, _ = run()
    assert code == 0
    assert "server web (lazy) runs: npx -y some-server" in out
    assert "never" not in out  # a disabled server starts nothing
    assert "command report runs: python3 report.py" in out
    assert "command tests runs: make check" in out
    assert "routine r, step script runs: ./build.sh -q" in out
    assert "routine r, step s runs: make all" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--list", "x"), "--list shows every record: leave out PATH and --revoke"),
        (("--list", "--revoke"), "--list shows every record"),
        (("--json",), "--json applies with --list"),
        (("nowhere.toml",), "there is no file there"),
    ],
)
def test_every_mistake_is_one_clear_line(args: tuple[str, ...], message: str) -> None:
    code, _, err = run(*args)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_an_invalid_file_is_not_trusted_and_the_problem_is_named(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text("[mcp]\nexpse = []\n")
    code, _, err = run()
    assert code == 2
    assert "mcp.expse: unknown key" in err
    assert not trust_file().exists()


def test_records_another_user_could_write_trust_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "prixfixe.toml").write_text(EXPOSE_WEATHER)
    run()
    trust_file().chmod(0o666)
    with caplog.at_level(logging.WARNING, logger="prixfixe.config"):
        assert load_config({}, tmp_path).path is None
    assert "writable by, or belongs to, another user" in caplog.text
    # Changing records that cannot be used would lose them: refused, the file left as it was.
    before = trust_file().read_bytes()
    code, _, err = run()
    assert code == 2
    assert "cannot use the trust records" in err
    assert trust_file().read_bytes() == before


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"version": 2, "trusted": []}',
        '{"version": 1, "trusted": ["x"]}',
        '{"version": 1, "trusted": [{"path": "/x"}]}',
    ],
)
def test_malformed_records_trust_nothing(tmp_path: Path, text: str) -> None:
    (tmp_path / "prixfixe.toml").write_text(EXPOSE_WEATHER)
    trust_file().parent.mkdir(parents=True)
    trust_file().write_text(text)
    trust_file().chmod(0o600)
    assert load_config({}, tmp_path).path is None
    assert run("--list")[1].startswith("No folder's configuration is trusted")


def test_doctor_shows_the_file_in_force_and_the_folders_file_it_left_unread(
    tmp_path: Path,
) -> None:
    mine = user_config(tmp_path, "")
    (tmp_path / "prixfixe.toml").write_text("# a folder's\n")
    result = CliRunner().invoke(cli, ["doctor", "--json"], catch_exceptions=False)
    config = json.loads(result.stdout)["config"]
    assert (config["file"], config["origin"], config["trusted"]) == (str(mine), "user", True)
    assert config["ignored"] == {
        "path": str(tmp_path / "prixfixe.toml"),
        "reason": "not trusted",
        "trust": f"prixfixe trust {tmp_path / 'prixfixe.toml'}",
    }
    result = CliRunner().invoke(cli, ["doctor"], catch_exceptions=False)
    shown = " ".join(result.stdout.split())
    assert f"Config: {mine} (your config folder)" in shown
    assert f"not loaded: {tmp_path / 'prixfixe.toml'} (not trusted;" in shown
    run()
    result = CliRunner().invoke(cli, ["doctor"], catch_exceptions=False)
    assert f"Config: {tmp_path / 'prixfixe.toml'} (this folder's, trusted)" in result.stdout


def test_servers_import_keeps_a_trusted_file_trusted(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text("# mine\n")
    run()
    source = tmp_path / "claude.json"
    source.write_text(json.dumps({"mcpServers": {"docs": {"command": "docs-server"}}}))
    result = CliRunner().invoke(
        cli, ["servers", "import", str(source), "--write"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    assert "stays trusted with this change" in result.stderr
    loaded = load_config({}, tmp_path)
    assert (loaded.origin, list(loaded.model.servers)) == ("folder", ["docs"])
