"""`prixfixe plugins install` / `uninstall` and `serve --plugin-path`, for real: a fresh
virtual environment with prixfixe installed from this checkout (not editable, as pipx or uv
would), its own console script run with no PYTHONPATH, a plugin made by `prixfixe plugin new`
installed into that environment and its tests run with that environment's Python. Offline:
prixfixe's dependencies, pip and hatchling come from the test's own environment through a
`.pth` line, as pipx's environments reach its shared pip; nothing is fetched.

Where the environment's shape decides (pipx, a uv tool environment without pip, uvx's
cache), the installer's command line is checked against an `Environment` of that shape: what
runs is the tool those shapes name, and pipx and uv are not here to run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters

from prixfixe.cli import cli
from prixfixe.errors import PrixfixeError
from prixfixe.system.environment import Environment, detect
from prixfixe.system.installer import (
    Registered,
    installer,
    persistence_note,
    resolve_uninstall_names,
)

ROOT = Path(__file__).resolve().parents[2]
BIN = "Scripts" if os.name == "nt" else "bin"

PLUGIN = """
from pydantic import BaseModel, ConfigDict
from prixfixe import Tool, hookimpl


class In(BaseModel):
    model_config = ConfigDict(extra="forbid")


@hookimpl
def register_tools(register):
    register(Tool(name="folder_wave", title="Wave", description="Wave from a folder plugin.",
                  input_model=In, handler=lambda ctx, args: "*waves*", mutates=False,
                  facet="core", always_load=True))
"""


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new environment holding prixfixe built from this checkout, and nothing else."""
    where = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120
    )
    python = where / BIN / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    Path(purelib, "_outer.pth").write_text(sysconfig.get_path("purelib") + "\n")
    done = _run(
        [
            *(str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"),
            *("--no-build-isolation", str(ROOT)),
        ],
        ROOT,
        clean_env(where),
    )
    assert done.returncode == 0, done.stderr
    return where


def clean_env(home: Path) -> dict[str, str]:
    """No PYTHONPATH (the environment's prixfixe is the one that runs), no other plugin."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRIXFIXE_", "PYTEST_"))}
    env.pop("PYTHONPATH", None)
    env["PRIXFIXE_HOME"] = str(home / "prixfixe-home")
    return env


@pytest.mark.slow
def test_a_new_plugin_installed_with_prixfixe_plugins_install_is_registered_and_tested(
    venv: Path, tmp_path: Path
) -> None:
    """The documented workflow, in prixfixe's own environment: `plugin new`, `plugins install
    -e`, the plugin's tests with that Python, `plugins` listing it loaded, `uninstall`."""
    prixfixe, python = str(venv / BIN / "prixfixe"), str(venv / BIN / "python")
    env = clean_env(tmp_path)
    made = _run([prixfixe, "plugin", "new", "kettle"], tmp_path, env)
    assert made.returncode == 0, made.stderr
    assert f"{python} -m pytest" in made.stdout
    package = tmp_path / "prixfixe-kettle"
    assert list(package.rglob("__pycache__")) == []

    offline = ["--no-deps", "--no-build-isolation", "--no-index"]
    added = _run(
        [prixfixe, "plugins", "install", *offline, "-e", "./prixfixe-kettle"], tmp_path, env
    )
    assert added.returncode == 0, added.stdout + added.stderr
    assert f"prixfixe runs from a virtual environment ({venv})." in added.stdout
    assert f"Running: {python} -P -m pip install {' '.join(offline)} --editable {package}\n" in (
        added.stdout
    )
    assert "Registered now: kettle." in added.stdout
    assert "  kettle = prixfixe_kettle.plugin (prixfixe-kettle 0.1.0)\n" in added.stdout
    assert f"run with this Python: {python} -m pytest" in added.stdout

    listed = _run([prixfixe, "plugins", "--json"], tmp_path, env)
    kettle = [p for p in json.loads(listed.stdout) if p["name"] == "kettle"]
    assert [(p["status"], p["distribution"]) for p in kettle] == [("loaded", "prixfixe-kettle")]

    tested = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], package, env)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "5 passed" in tested.stdout

    removed = _run([prixfixe, "plugins", "uninstall", "kettle"], tmp_path, env)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert f"Running: {python} -P -m pip uninstall --yes prixfixe-kettle\n" in removed.stdout
    assert "No longer registered: kettle." in removed.stdout
    listed = _run([prixfixe, "plugins", "--json"], tmp_path, env)
    assert "kettle" not in {p["name"] for p in json.loads(listed.stdout)}


@pytest.mark.slow
def test_a_failed_install_is_one_error_and_registers_nothing(venv: Path, tmp_path: Path) -> None:
    prixfixe = str(venv / BIN / "prixfixe")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "pyproject.toml").write_text("[project\n")
    done = _run(
        [prixfixe, "plugins", "install", "--no-index", "--no-build-isolation", "./broken"],
        tmp_path,
        clean_env(tmp_path),
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert re.fullmatch(
        r"prixfixe: error: install failed: the installer exited with \d+ \(its output is above\)",
        last,
    ), last
    assert "Registered now" not in done.stdout


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_plugin_in_a_folder_loads_only_when_its_folder_is_named(
    venv: Path, tmp_path: Path
) -> None:
    """`prixfixe serve --plugin MODULE` in a folder holding MODULE: the installed script (no
    PYTHONPATH, as under pipx) imports nothing from the folder it was started in; with
    `--plugin-path .` it serves the folder's plugin. ATTACK: a checkout whose module is named
    like the plugin runs no code merely because prixfixe was started there."""
    folder = tmp_path / "checkout"
    folder.mkdir()
    marker = tmp_path / "imported"
    (folder / "folderplug.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n" + textwrap.dedent(PLUGIN)
    )
    prixfixe = str(venv / BIN / "prixfixe")
    env = clean_env(tmp_path)
    refused = _run([prixfixe, "serve", "--plugin", "folderplug"], folder, env)
    assert refused.returncode == 2  # a ConfigError: the usage is wrong
    assert (
        "prixfixe: error: --plugin folderplug: cannot import it: ModuleNotFoundError: No module "
        "named 'folderplug' (a module in a folder needs --plugin-path DIR)"
    ) in refused.stderr
    assert not marker.exists()

    params = StdioServerParameters(
        command=prixfixe,
        args=["serve", "--plugin-path", ".", "--plugin", "folderplug"],
        env=env,
        cwd=str(folder),
    )
    with anyio.fail_after(120):
        async with Client(params, mode="legacy") as session:
            tools = await session.list_tools()
            assert "folder_wave" in [t.name for t in tools.tools]
            waved = await session.call_tool("folder_wave", {})
    assert waved.content[0].text == "*waves*"  # type: ignore[union-attr]
    assert marker.exists()


def test_plugin_path_applies_with_a_plugin_and_must_be_a_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["serve", "--plugin-path", str(tmp_path)])
    assert result.exit_code == 2
    assert "--plugin-path applies with --plugin MODULE" in result.stderr
    result = CliRunner().invoke(
        cli, ["serve", "--plugin-path", str(tmp_path / "none"), "--plugin", "x"]
    )
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


# -- the installer each environment gets ---------------------------------------------------


def shaped(tmp_path: Path, kind: str) -> Environment:
    prefix = tmp_path / kind
    (prefix / BIN).mkdir(parents=True)
    if kind == "pipx":
        (prefix / "pipx_metadata.json").write_text("{}")
    if kind == "uv-tool":
        (prefix / "uv-receipt.toml").write_text("[tool]\n")
    if kind == "uvx":
        prefix = tmp_path / "cache" / "archive-v0" / "Ab1"
        prefix.mkdir(parents=True)
        (prefix / "pyvenv.cfg").write_text("home = /usr/bin\nuv = 0.13.9\n")
    env = detect(prefix, tmp_path if kind != "system" else prefix, str(prefix / BIN / "python"))
    assert env.kind == kind
    return env


def test_an_environment_with_pip_installs_with_its_own_pip(tmp_path: Path) -> None:
    """pipx's environments reach its shared pip: that pip, by this Python, not uv's."""
    (tmp_path / "w.whl").write_text("")
    for kind in ("venv", "pipx", "system"):
        env = shaped(tmp_path, kind)
        tool = installer(env, has_pip=True, which=lambda _: "/usr/bin/uv")
        argv = tool.install(env, ["prixfixe-weather", "./w.whl"], [], cwd=tmp_path)
        assert argv == [
            *(env.python, "-P", "-m", "pip", "install"),
            *("prixfixe-weather", str(tmp_path / "w.whl")),
        ]


def test_a_uv_tool_environment_without_pip_installs_with_uv_aimed_at_its_python(
    tmp_path: Path,
) -> None:
    env = shaped(tmp_path, "uv-tool")
    (tmp_path / "plug").mkdir()
    tool = installer(env, has_pip=False, which=lambda name: f"/opt/{name}")
    argv = tool.install(env, ["prixfixe-weather==1.2"], ["plug[test]"], cwd=tmp_path, upgrade=True)
    assert argv == [
        *("/opt/uv", "pip", "install", "--python", env.python, "--upgrade"),
        *("prixfixe-weather==1.2", "--editable", f"{tmp_path / 'plug'}[test]"),
    ]
    assert tool.uninstall(env, ["prixfixe-weather"]) == [
        *("/opt/uv", "pip", "uninstall", "--python", env.python, "prixfixe-weather"),
    ]
    note = persistence_note(env, ["prixfixe-weather==1.2"], [str(tmp_path / "plug")])
    assert note is not None
    told = f"uv tool install prixfixe --with prixfixe-weather==1.2 --with-editable {tmp_path}/plug"
    assert f"'{told}' records them" in note
    with pytest.raises(PrixfixeError, match="whose Python has no pip, and uv is not on PATH"):
        installer(env, has_pip=False, which=lambda _: None)


def test_pipx_is_told_how_to_keep_the_plugin_and_a_venv_needs_no_note(tmp_path: Path) -> None:
    note = persistence_note(shaped(tmp_path, "pipx"), ["prixfixe-weather"], ["/src/plug"])
    assert note is not None
    assert (
        "'pipx inject prixfixe prixfixe-weather' and 'pipx inject --editable prixfixe /src/plug'"
        in note
    )
    assert persistence_note(shaped(tmp_path, "venv"), ["x"], []) is None


def test_uvxs_cache_is_refused_naming_what_keeps_a_plugin(tmp_path: Path) -> None:
    env = shaped(tmp_path, "uvx")
    with pytest.raises(PrixfixeError, match="uv tool install prixfixe --with SPEC"):
        installer(env, has_pip=True)


@pytest.mark.parametrize(
    ("specs", "editable", "message"),
    [
        ((), (), "give a plugin to install"),
        (("--index-url=http://127.0.0.1:1/",), (), "is not a plugin"),
        (("./missing",), (), "./missing: there is no folder or file there"),
        (("gone.whl",), (), "gone.whl: there is no folder or file there"),
        ((), ("nowhere",), "--editable nowhere: there is no folder there"),
        ((), ("-x",), "'-x' is not a plugin"),
    ],
)
def test_each_bad_spec_is_an_error_naming_it_and_nothing_runs(
    tmp_path: Path, specs: tuple[str, ...], editable: tuple[str, ...], message: str
) -> None:
    env = shaped(tmp_path, "venv")
    with pytest.raises(PrixfixeError, match=message.replace("(", r"\(")):
        installer(env, has_pip=True).install(env, specs, editable, cwd=tmp_path)


def test_a_spec_that_names_a_path_is_made_absolute_and_a_name_is_kept(tmp_path: Path) -> None:
    env = shaped(tmp_path, "venv")
    (tmp_path / "plug").mkdir()
    (tmp_path / "w-1.0-py3-none-any.whl").write_text("")
    tool = installer(env, has_pip=True)
    argv = tool.install(
        env,
        ["./plug[test]", "w-1.0-py3-none-any.whl", "plug", "prixfixe-x>=1"],
        [],
        cwd=tmp_path,
        no_deps=True,
        no_build_isolation=True,
        no_index=True,
    )
    assert argv[5:] == [
        *("--no-deps", "--no-build-isolation", "--no-index"),
        f"{tmp_path / 'plug'}[test]",
        str(tmp_path / "w-1.0-py3-none-any.whl"),
        "plug",  # a bare word is a package name, as pip reads it
        "prixfixe-x>=1",
    ]


def test_uninstall_takes_a_plugins_name_and_never_prixfixe_itself(tmp_path: Path) -> None:
    plugins = [Registered("health", "prixfixe_health.plugin", "prixfixe-health", "0.1.0")]
    assert resolve_uninstall_names(["health", "other-dist"], plugins) == [
        "prixfixe-health",
        "other-dist",
    ]
    env = shaped(tmp_path, "venv")
    tool = installer(env, has_pip=True)
    for name in ("prixfixe", "Prixfixe"):
        with pytest.raises(PrixfixeError, match="is prixfixe itself, not a plugin"):
            tool.uninstall(env, [name])
    with pytest.raises(PrixfixeError, match="give a plugin to uninstall"):
        tool.uninstall(env, [])


def test_plugins_json_does_not_apply_to_a_subcommand() -> None:
    result = CliRunner().invoke(cli, ["plugins", "--json", "uninstall", "x"])
    assert result.exit_code == 2
    assert "--json applies to the list, not to a subcommand" in result.stderr
