"""`prixfixe init`: the starter configuration shipped in the package, written where prixfixe
finds it, never over a file without --force, and valid (every example in it too)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from prixfixe.cli import cli
from prixfixe.cli.init import starter_config
from prixfixe.config import load_config, user_config_dir, validate_config

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def user_file() -> Path:
    return user_config_dir() / "prixfixe.toml"


def test_init_writes_the_starter_configuration_where_prixfixe_finds_it_from_any_folder(
    tmp_path: Path,
) -> None:
    code, out, err = run("init")
    assert (code, err) == (0, "")
    assert user_file().read_text() == starter_config()
    assert out.startswith(f"Wrote {user_file()} with a starter configuration.\n")
    for command in ("prixfixe doctor", "prixfixe run morning", "prixfixe client claude-code"):
        assert command in out
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert load_config(env={}, cwd=elsewhere).path == user_file()


def test_init_never_replaces_an_existing_file_without_force() -> None:
    user_file().parent.mkdir(parents=True)
    user_file().write_text("# mine\n")
    code, out, err = run("init")
    assert code == 1
    assert out == ""
    assert err.startswith(f"prixfixe: error: {user_file()} already exists; nothing was written.")
    assert "--force" in err
    assert user_file().read_text() == "# mine\n"
    code, out, _ = run("init", "--force")
    assert code == 0
    assert out.startswith(f"Replaced {user_file()} with a starter configuration.")
    assert user_file().read_text() == starter_config()


def test_init_here_writes_prixfixe_toml_in_the_working_folder_and_trusts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PRIXFIXE_TRUSTED_PATHS")
    code, out, _ = run("init", "--here")
    assert code == 0
    assert (tmp_path / "prixfixe.toml").read_text() == starter_config()
    assert not user_file().exists()
    assert "Note:" not in out  # it is the file found first here
    assert "Trusted it (prixfixe trust)" in out  # the person's own doing
    assert load_config(env={}, cwd=tmp_path).origin == "folder"


def test_init_path_to_a_folder_writes_inside_it_and_says_how_prixfixe_finds_it(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "dotfiles"
    folder.mkdir()
    code, out, _ = run("init", "--path", str(folder))
    assert code == 0
    assert (folder / "prixfixe.toml").read_text() == starter_config()
    assert f"prixfixe reads it when PRIXFIXE_CONFIG={folder / 'prixfixe.toml'} is set." in out
    code, _, _ = run("init", "--path", str(tmp_path / "new" / "deep" / "px.toml"))
    assert code == 0
    assert (tmp_path / "new" / "deep" / "px.toml").is_file()


def test_init_says_when_another_file_is_found_first(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text("")
    code, out, _ = run("init")
    assert code == 0
    assert f"Note: here prixfixe reads {tmp_path / 'prixfixe.toml'} first" in out


def test_init_print_prints_the_template_and_writes_nothing(tmp_path: Path) -> None:
    code, out, _ = run("init", "--print")
    assert code == 0
    assert out == starter_config()
    assert not user_file().exists()
    assert not (tmp_path / "prixfixe.toml").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--path", "x.toml", "--here"), "give --path or --here, not both"),
        (("--print", "--force"), "--print writes nothing"),
    ],
)
def test_init_refuses_options_that_contradict_each_other(
    args: tuple[str, ...], message: str
) -> None:
    code, out, err = run("init", *args)
    assert code == 2
    assert out == ""
    assert message in err
    assert "Traceback" not in err


def test_init_into_a_place_it_cannot_write_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    code, out, err = run("init", "--path", str(tmp_path / "a-file" / "prixfixe.toml"))
    assert code == 1
    assert out == ""
    assert err.startswith(f"prixfixe: error: cannot write {tmp_path / 'a-file' / 'prixfixe.toml'}")
    assert len(err.strip().splitlines()) == 1


def test_the_starter_configuration_loads_and_defines_a_morning_routine(tmp_path: Path) -> None:
    from prixfixe.app import App

    path = tmp_path / "prixfixe.toml"
    path.write_text(starter_config())
    assert load_config(env={"PRIXFIXE_CONFIG": str(path)}, cwd=tmp_path).path == path
    app = App.build(env={"PRIXFIXE_CONFIG": str(path), "PRIXFIXE_LOAD_PLUGINS": ""}, cwd=tmp_path)
    morning = app.routines.get("morning")
    assert morning.source == str(path)
    assert [s.type.name for s in morning.steps] == ["reminders", "deadline-calc", "countdown-calc"]


def _turned_on(text: str) -> str:
    """The template with every example turned on: `#key = ...` and `#[table]` lines lose their
    `#` (prose comments, `# ...`, stay)."""
    return re.sub(r"^#(?=[\[a-z])", "", text, flags=re.MULTILINE)


def test_every_example_in_the_starter_configuration_is_valid_once_turned_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prixfixe.app import App

    monkeypatch.setenv("HOME", str(tmp_path))
    text = _turned_on(starter_config())
    assert text.count("\n#[") == 0
    raw = tomllib.loads(text)
    assert {"mcp", "commands", "routines", "leash", "http", "knowledge", "servers"} <= set(raw)
    validate_config(raw, file="starter")
    path = tmp_path / "prixfixe.toml"
    path.write_text(text)
    app = App.build(env={"PRIXFIXE_CONFIG": str(path), "PRIXFIXE_LOAD_PLUGINS": ""}, cwd=tmp_path)
    steps = [s.type.name for s in app.routines.get("morning").steps]
    assert steps == ["reminders", "deadline-calc", "countdown-calc", "git-status", "script"]


def _prixfixe() -> list[str]:
    script = Path(sys.executable).parent / "prixfixe"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "prixfixe"]


@pytest.mark.slow
def test_on_a_fresh_machine_init_then_doctor_and_run_morning_work(tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PRIXFIXE_LOAD_PLUGINS": "",
        "LANG": "C.UTF-8",
    }

    def prixfixe(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*_prixfixe(), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    written = prixfixe("init")
    assert written.returncode == 0, written.stderr
    config = home / ".config" / "prixfixe" / "prixfixe.toml"
    assert config.read_text() == starter_config()
    doctor = prixfixe("doctor")
    assert doctor.returncode == 0, doctor.stderr
    assert f"Config: {config}" in doctor.stdout
    morning = prixfixe("run", "morning")
    assert morning.returncode == 0, morning.stderr
    assert "Traceback" not in morning.stderr
    for section in ("## Reminders", "## Deadlines", "## Countdowns"):
        assert section in morning.stdout


@pytest.mark.slow
def test_the_starter_configuration_ships_in_the_wheel(tmp_path: Path) -> None:
    pytest.importorskip("hatchling", reason="building the wheel needs hatchling")
    built = subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("prixfixe-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("prixfixe/templates/prixfixe.toml").decode()
    assert shipped == starter_config()
