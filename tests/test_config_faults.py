"""Configuration under bad input: a wrong type is named, never guessed at; a hostile file is
refused with one clear error; a step with an impossible working directory fails cleanly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import Client

from prixfixe.config import MAX_CONFIG_BYTES, load_config
from prixfixe.errors import ConfigError
from prixfixe.leash.exec import observe_spawns, unobserve_spawns
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory


def _trusting(tmp_path: Path) -> dict[str, str]:
    """An environment in which tmp_path's own prixfixe.toml loads (it is the test's)."""
    return {"PRIXFIXE_HOME": str(tmp_path / "home"), "PRIXFIXE_TRUSTED_PATHS": str(tmp_path)}


def _load(tmp_path: Path, text: str) -> None:
    (tmp_path / "prixfixe.toml").write_text(text, encoding="utf-8")
    load_config(env=dict(os.environ), cwd=tmp_path)


@pytest.mark.parametrize(
    ("text", "key", "named"),
    [
        ('[http]\nport = "8765"\n', "http.port", "got str '8765'"),
        ('[http]\nstateless = "yes"\n', "http.stateless", "got str 'yes'"),
        ("[reports]\nkeep = 2.5\n", "reports.keep", "got float 2.5"),
    ],
)
def test_a_value_of_the_wrong_type_is_named_not_coerced(
    tmp_path: Path, text: str, key: str, named: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text)
    assert caught.value.data["key"] == key
    assert named in caught.value.message


def test_values_nested_too_deeply_for_the_parser_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, "a = " + "[" * 5000 + "]" * 5000 + "\n")
    assert "nest too deeply" in caught.value.message
    assert caught.value.data["file"] == str(tmp_path / "prixfixe.toml")


def test_a_config_file_larger_than_the_bound_is_refused_unread(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, "# " + "x" * MAX_CONFIG_BYTES + "\n")
    assert f"larger than {MAX_CONFIG_BYTES} bytes" in caught.value.message


def test_a_number_where_a_step_wants_a_date_is_refused_not_read_as_a_unix_time(
    tmp_path: Path,
) -> None:
    from prixfixe.app import App

    config = (
        "[routines.due]\nsteps = [{type = 'deadline-calc', store = false, "
        "deadlines = [{label = 'tax', date = 20261201}]}]\n"
    )
    (tmp_path / "prixfixe.toml").write_text(config, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        App.build(env=_trusting(tmp_path), cwd=tmp_path).routines.get("due")
    assert "deadlines" in caught.value.message
    assert "date" in caught.value.message


def test_a_toml_date_in_step_params_is_still_a_date(tmp_path: Path) -> None:
    from prixfixe.app import App

    config = (
        "[routines.due]\nsteps = [{type = 'deadline-calc', store = false, "
        "deadlines = [{label = 'tax', date = 2026-12-01}]}]\n"
    )
    (tmp_path / "prixfixe.toml").write_text(config, encoding="utf-8")
    routine = App.build(env=_trusting(tmp_path), cwd=tmp_path).routines.get("due")
    assert [s.type.name for s in routine.steps] == ["deadline-calc"]


@pytest.mark.anyio
@pytest.mark.parametrize("cwd", ["/dev/null", "/tmp/a\u0000b"])
async def test_a_step_whose_working_directory_cannot_be_one_fails_cleanly_and_spawns_nothing(
    make_app: AppFactory, cwd: str
) -> None:
    escaped = cwd.replace("\u0000", "\\u0000")
    config = (
        '[commands]\nhello = ["echo", "hi"]\n'
        f'[routines.r]\nsteps = [{{type = "script", run = "hello", cwd = "{escaped}"}}]\n'
    )
    app = make_app(config=config)
    spawned: list[object] = []
    observe_spawns(spawned.append)
    try:
        async with Client(build_server(app), mode="legacy") as client:
            result = await client.call_tool("routine_run", {"name": "r", "format": "data"})
    finally:
        unobserve_spawns(spawned.append)
    assert spawned == []
    (step,) = result.structured_content["steps"]  # type: ignore[index]
    assert step["status"] == "failed"
    assert step["error"]["kind"] != "crash"
    assert "crashed" not in step["error"]["message"]
    assert "working directory" in step["error"]["message"]


@pytest.mark.slow
@pytest.mark.parametrize("command", [["run", "morning"], ["store", "query", "reminder"]])
def test_a_home_under_a_regular_file_is_one_clear_line_not_a_traceback(
    tmp_path: Path, command: list[str]
) -> None:
    import os
    import subprocess
    import sys

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    env |= {"PRIXFIXE_HOME": str(blocker / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    done = subprocess.run(
        [sys.executable, "-m", "prixfixe", *command],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert str(blocker / "home") in done.stderr
    assert "PRIXFIXE_HOME" in done.stderr
    assert blocker.read_text() == "not a directory\n"
