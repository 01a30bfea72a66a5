"""The CLI imports a command's module only when that command runs: `--help` lists every command
from the table in `prixfixe.cli`, `--version` loads neither a command nor the MCP SDK."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

import prixfixe
import prixfixe.cli
from prixfixe.cli import COMMANDS, LazyCommands, LazyGroup, cli


def fresh_cli() -> LazyGroup:
    """The same group with nothing loaded yet, whatever other tests ran in this process."""
    group = LazyGroup(
        "prixfixe",
        commands=LazyCommands(COMMANDS),
        context_settings={"help_option_names": ["-h", "--help"]},
        help=cli.help,
    )
    group.params = list(cli.params)
    return group


def loaded_modules(*args: str) -> set[str]:
    """The modules a real `prixfixe ARGS` process has imported when it exits."""
    code = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
        "from prixfixe.cli import cli\n"
        f"cli.main({list(args)!r}, prog_name='prixfixe')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_in_the_table_imports_and_its_summary_is_its_help(name: str) -> None:
    command = LazyCommands(COMMANDS)[name]
    assert isinstance(command, click.Command)
    assert command.name == name
    stand_in = click.Command(name, help=COMMANDS[name].summary)
    for limit in (45, 60, 1000):
        assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit)


def test_every_top_level_command_a_cli_module_defines_is_in_the_table() -> None:
    defined: set[str] = set()
    for info in pkgutil.iter_modules(prixfixe.cli.__path__):
        module = importlib.import_module(f"prixfixe.cli.{info.name}")
        commands = [
            v
            for v in vars(module).values()
            if isinstance(v, click.Command)
            and getattr(v.callback, "__module__", "") == module.__name__
        ]
        nested = {
            id(sub)
            for group in commands
            if isinstance(group, click.Group)
            for sub in group.commands.values()
        }
        defined |= {f"{module.__name__}.{c.name}" for c in commands if id(c) not in nested}
    table = {f"{where.module}.{name}" for name, where in COMMANDS.items()}
    assert defined == table


def test_help_lists_every_command_as_click_would_with_them_all_loaded() -> None:
    lazy = CliRunner().invoke(fresh_cli(), ["--help"], prog_name="prixfixe")
    loaded = click.Group(
        "prixfixe",
        commands=[LazyCommands(COMMANDS)[name] for name in COMMANDS],
        context_settings={"help_option_names": ["-h", "--help"]},
        help=cli.help,
    )
    loaded.params = list(cli.params)
    eager = CliRunner().invoke(loaded, ["--help"], prog_name="prixfixe")
    assert lazy.exit_code == eager.exit_code == 0
    assert lazy.stdout == eager.stdout
    for name in COMMANDS:
        assert f"\n  {name} " in lazy.stdout


def test_a_mistyped_command_is_answered_with_the_one_meant_before_any_is_loaded() -> None:
    group = fresh_cli()
    result = CliRunner().invoke(group, ["doctr"], prog_name="prixfixe")
    assert result.exit_code == 2
    assert "No such command 'doctr'. Did you mean 'doctor'?" in result.stderr
    assert group.commands.loaded == {}


def test_help_imports_no_command_module_and_version_not_the_sdk() -> None:
    helped = loaded_modules("--help")
    assert not {m for m in helped if m.startswith("prixfixe.cli.")}
    versioned = loaded_modules("--version")
    heavy = {"mcp", "mcp_types", "pydantic", "rich", "anyio", "httpx2"}
    assert not heavy & (helped | versioned)


def test_a_command_runs_with_only_its_own_module_loaded() -> None:
    modules = loaded_modules("plugin", "--help")
    assert {m for m in modules if m.startswith("prixfixe.cli.")} == {
        "prixfixe.cli._common",
        "prixfixe.cli.plugins",
    }
    assert "mcp" not in modules


def test_the_version_option_prints_the_installed_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"prixfixe, version {prixfixe.__version__}\n"


def test_the_package_exports_resolve_when_read() -> None:
    for name in prixfixe.__all__:
        assert getattr(prixfixe, name) is not None
    assert set(prixfixe.__all__) <= set(dir(prixfixe))
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = prixfixe.no_such_name  # type: ignore[attr-defined]


def test_the_error_codes_prixfixe_defines_are_the_sdks() -> None:
    import mcp_types

    from prixfixe import errors

    assert errors.INVALID_PARAMS == mcp_types.INVALID_PARAMS
    assert errors.INTERNAL_ERROR == mcp_types.INTERNAL_ERROR
    assert errors.MISSING_REQUIRED_CLIENT_CAPABILITY == mcp_types.MISSING_REQUIRED_CLIENT_CAPABILITY


@pytest.mark.parametrize(
    "args",
    [("store", "query", "reminder"), ("kb", "search", "watering"), ("tools", "search", "date")],
    ids=["store-query", "kb-search", "tools-search"],
)
def test_short_commands_that_build_the_app_import_no_mcp_sdk(args: tuple[str, ...]) -> None:
    """Issue 30: these build the app (plugins, registry, store) but speak no MCP, so the SDK's
    client and server (over a second of CPU) stay unloaded; so does pygit2, which only the git
    steps' reads need."""
    modules = loaded_modules(*args)
    assert "prixfixe.app" in modules  # the app was built: the check below means something
    assert not {m for m in modules if m == "mcp" or m.startswith("mcp.")}
    assert "pygit2" not in modules
