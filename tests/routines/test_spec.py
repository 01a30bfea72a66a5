"""Routines from config: every mistake names the file, the routine, the step and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from prixfixe.errors import ConfigError
from tests.conftest import AppFactory
from tests.step_fixtures import StepsPlugin


def _error(make_app: AppFactory, config: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        make_app(config=config, plugins=[StepsPlugin()])
    return caught.value


def test_a_typo_in_a_step_key_names_routine_step_key_and_suggests(
    make_app: AppFactory, tmp_path: Path
) -> None:
    error = _error(
        make_app,
        '[routines.morning]\n[[routines.morning.steps]]\ntype = "echo"\ntext = "a"\n'
        '[[routines.morning.steps]]\ntype = "git-status"\nname = "repos"\nrepso = ["."]\n',
    )
    assert error.message == (
        f"invalid configuration (file {tmp_path / 'prixfixe.toml'}, key "
        "'routines.morning.steps[1].repso'): routine 'morning', step 'repos' (git-status): "
        "unknown key 'repso'; did you mean 'repos'? (accepted: fetch, repos); "
        "missing required key 'repos': Repository paths or glob patterns (~/code/*)."
    )
    assert error.data == {
        "file": str(tmp_path / "prixfixe.toml"),
        "key": "routines.morning.steps[1].repso",
    }


def test_a_typo_in_an_engine_key_is_an_unknown_param_of_the_type(make_app: AppFactory) -> None:
    error = _error(
        make_app,
        '[routines.r]\n[[routines.r.steps]]\ntype = "echo"\ntext = "a"\nparalel = true\n',
    )
    assert "key 'routines.r.steps[0].paralel'" in error.message
    assert "step 'echo' (echo): unknown key 'paralel'" in error.message


def test_an_unknown_step_type_lists_the_types_and_suggests(make_app: AppFactory) -> None:
    error = _error(make_app, '[routines.r]\n[[routines.r.steps]]\ntype = "git-stat"\n')
    assert "key 'routines.r.steps[0].type'" in error.message
    assert "unknown step type 'git-stat'; did you mean 'git-status'?" in error.message
    assert "board-scan" in error.message


def test_a_wrong_value_type_names_the_key_and_what_was_given(make_app: AppFactory) -> None:
    error = _error(
        make_app, '[routines.r]\n[[routines.r.steps]]\ntype = "echo"\ntext = "a"\ntimes = "x"\n'
    )
    assert "routine 'r', step 'echo' (echo): key 'times': input should be a valid integer" in (
        error.message
    )
    assert "(got 'x')" in error.message


def test_engine_keys_are_checked_with_the_step_index(make_app: AppFactory) -> None:
    error = _error(
        make_app, '[routines.r]\n[[routines.r.steps]]\ntype = "echo"\ntext = "a"\ntimeout = -1\n'
    )
    assert "key 'routines.r.steps[0].timeout'" in error.message
    assert "greater than 0" in error.message
    missing = _error(make_app, "[routines.r]\n[[routines.r.steps]]\nname = 'x'\n")
    assert "routines.r.steps[0].type: field required" in missing.message


def test_two_steps_with_one_name_are_refused(make_app: AppFactory) -> None:
    error = _error(
        make_app,
        '[routines.r]\n[[routines.r.steps]]\ntype = "echo"\ntext = "a"\n'
        '[[routines.r.steps]]\ntype = "echo"\ntext = "b"\n',
    )
    assert "step name 'echo' is used by steps [0] and [1]" in error.message
    assert "key 'routines.r.steps[1].name'" in error.message


def test_a_routine_needs_steps_and_a_lowercase_name(make_app: AppFactory) -> None:
    assert "routines.r.steps" in _error(make_app, "[routines.r]\nsteps = []\n").message
    error = _error(make_app, '[routines.Morning]\n[[routines.Morning.steps]]\ntype = "echo"\n')
    assert "routine name 'Morning'" in error.message


def test_unknown_routine_keys_and_leash_keys_are_config_errors(make_app: AppFactory) -> None:
    error = _error(make_app, '[routines.r]\ndescripton = "x"\n[[routines.r.steps]]\ntype="echo"\n')
    assert "routines.r.descripton: unknown key" in error.message
    assert "leash.exe: unknown key" in _error(make_app, "[leash]\nexe = []\n").message


def test_without_config_morning_is_built_in_and_includes_git_only_in_a_repository(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = make_app(plugins=[])
    morning = app.routines.get("morning")
    assert morning.source == "built-in"
    assert [s.type.name for s in morning.steps] == ["reminders", "deadline-calc", "countdown-calc"]
    assert "run `prixfixe init`" in morning.note
    (tmp_path / ".git").mkdir()
    app = make_app(plugins=[])
    assert next(s.type.name for s in app.routines.get("morning").steps) == "git-status"
    # git-status reads the repository through libgit2: the morning needs no program.
    assert app.routines.gate.grant.programs == frozenset()


def test_a_configured_morning_replaces_the_built_in_one(make_app: AppFactory) -> None:
    app = make_app(
        config='[routines.morning]\n[[routines.morning.steps]]\ntype = "echo"\ntext = "hi"\n',
        plugins=[StepsPlugin()],
    )
    assert [s.name for s in app.routines.get("morning").steps] == ["echo"]
    assert app.routines.get("morning").note == ""


def test_parallel_steps_form_batches_only_when_adjacent(make_app: AppFactory) -> None:
    config = "[routines.r]\n" + "".join(
        f'[[routines.r.steps]]\ntype = "echo"\nname = "s{i}"\ntext = "x"\nparallel = {p}\n'
        for i, p in enumerate(["true", "true", "false", "true", "false", "true", "true"])
    )
    app = make_app(config=config, plugins=[StepsPlugin()])
    batches = [[s.name for s in b] for b in app.routines.get("r").batches()]
    assert batches == [["s0", "s1"], ["s2"], ["s3"], ["s4"], ["s5", "s6"]]


def test_paths_in_config_steps_resolve_against_the_config_directory(
    make_app: AppFactory, tmp_path: Path
) -> None:
    config_dir = tmp_path / "conf"
    config_dir.mkdir()
    (config_dir / "p.toml").write_text(
        '[routines.r]\n[[routines.r.steps]]\ntype = "script"\ncommand = ["./tool.sh", "-v"]\n'
    )
    app = make_app(env={"PRIXFIXE_CONFIG": str(config_dir / "p.toml")}, plugins=[])
    step = app.routines.get("r").steps[0]
    assert step.base_dir == config_dir
    assert step.programs == (str(config_dir / "tool.sh"),)
