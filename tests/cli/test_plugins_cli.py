"""`prixfixe plugins`, doctor's plugin authority, recovery from broken plugins through real
entry points (a dist-info on sys.path), and `prixfixe plugin new`."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from prixfixe import __version__
from prixfixe import hookimpl as hookimpl_marker
from prixfixe.app import App
from prixfixe.cli import cli
from prixfixe.mcp.server import build_server
from prixfixe.system.doctor import plugin_costs
from tests.conftest import CORE_TOOLS

GOOD = """
from pydantic import BaseModel, ConfigDict, Field
from prixfixe import StepOutput, StepType, Tool, hookimpl
from prixfixe.leash.exec import CommandLine


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Data(BaseModel):
    ok: bool


class WaveInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    who: str = Field(description="Whom to wave at.")


@hookimpl
def register_tools(register):
    register(Tool(name="kit_wave", title="Wave", description="Wave at someone by name.",
                  input_model=WaveInput, handler=lambda ctx, args: f"*waves at {args.who}*",
                  mutates=False, facet="kitwave"))


@hookimpl
def register_step_types(register):
    register(StepType(name="kit-uptime", description="How long the machine is up.",
                      params_model=Params, data_model=Data, version="1.0",
                      handler=lambda ctx, params: StepOutput(markdown="up", data=Data(ok=True)),
                      commands=(CommandLine("uptime", ("-p",)),),
                      hosts=("status.example.org",)))
"""

BAD_HOOK = """
from prixfixe import Tool, hookimpl
from pydantic import BaseModel


class In(BaseModel):
    pass


@hookimpl
def register_prompts(register):
    pass


@hookimpl
def register_tools(registr):  # misspelt: pluggy refuses the hook implementation
    pass
"""


def _install(site: Path, dist: str, entry: str, module: str, source: str) -> None:
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    # Hyphens escaped, as in a wheel: importlib reads the name up to the first "-".
    info = site / f"{dist.replace('-', '_')}-2.5.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 2.5\n")
    (info / "entry_points.txt").write_text(f"[prixfixe]\n{entry} = {module}\n")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("plugins-site")
    _install(site, "prixfixe-kit-good", "kit-good", "pf_kit_good", GOOD)
    _install(site, "prixfixe-kit-broken", "kit-broken", "pf_kit_broken", "import no_such_module\n")
    _install(site, "prixfixe-kit-exits", "kit-exits", "pf_kit_exits", "raise SystemExit(3)\n")
    _install(site, "prixfixe-kit-badhook", "kit-badhook", "pf_kit_badhook", BAD_HOOK)
    return site


@pytest.fixture
def installed(site: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The four plugins installed (their dist-info on sys.path) for this test only, and every
    installed plugin loading (`PRIXFIXE_LOAD_PLUGINS` unset)."""
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delenv("PRIXFIXE_LOAD_PLUGINS", raising=False)
    return site


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env or {}, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def by_name(plugins: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in plugins}


# -- prixfixe plugins -----------------------------------------------------------------------


def test_plugins_json_lists_built_ins_with_version_authority_and_token_cost() -> None:
    code, out, _ = run("plugins", "--json")
    assert code == 0
    plugins = by_name(json.loads(out))
    discovery = plugins["prixfixe.default_plugins.discovery"]
    assert discovery["version"] == __version__
    assert discovery["distribution"] == "prixfixe"
    assert discovery["status"] == "loaded"
    app = App.build()
    assert (
        discovery["tokens"]
        == plugin_costs(app, ["prixfixe.default_plugins.discovery"])[
            "prixfixe.default_plugins.discovery"
        ]
    )
    assert discovery["tokens"]["listed"] == discovery["tokens"]["tools_list"] > 0
    git = plugins["prixfixe.default_plugins.git_steps"]["authority"]
    assert git["programs"] == ["git"]
    assert git["env"] == ["SSH_AUTH_SOCK"]
    assert git["step_types"] == ["git-status", "git-unpushed", "git-tend"]


def test_third_party_plugins_show_their_distribution_authority_and_why_others_failed(
    installed: Path,
) -> None:
    code, out, _ = run("plugins", "--json")
    assert code == 0
    plugins = by_name(json.loads(out))
    good = plugins["kit-good"]
    assert good["status"] == "loaded"
    assert (good["distribution"], good["version"], good["module"]) == (
        "prixfixe-kit-good",
        "2.5",
        "pf_kit_good",
    )
    assert good["authority"]["programs"] == ["uptime"]
    assert good["authority"]["command_lines"] == ["uptime -p"]
    assert good["authority"]["hosts"] == ["status.example.org"]
    assert good["tokens"]["tools"] == 1
    assert good["tokens"]["listed"] == 0 < good["tokens"]["tools_list"]
    assert plugins["kit-broken"]["status"] == (
        "failed: ModuleNotFoundError: No module named 'no_such_module'"
    )
    assert plugins["kit-exits"]["status"] == "failed: SystemExit: 3"
    assert plugins["kit-badhook"]["status"].startswith(
        "failed: PluginValidationError: Plugin 'kit-badhook' for hook 'register_tools'"
    )
    for name in ("kit-broken", "kit-exits", "kit-badhook"):
        assert plugins[name]["authority"] is None
        assert plugins[name]["tokens"] is None


def test_plugins_prints_a_table_for_people(installed: Path) -> None:
    code, out, _ = run("plugins")
    assert code == 0
    assert "tokens if listed" in out
    assert "prixfixe-kit-good 2.5" in out
    assert "runs uptime; reaches status.example.org" in out
    assert "failed: SystemExit: 3" in out
    assert "PRIXFIXE_LOAD_PLUGINS" in out


# -- recovery -------------------------------------------------------------------------------


def test_broken_plugins_never_stop_the_server_and_add_nothing(installed: Path) -> None:
    app = App.build()
    assert "kit_wave" in app.registry
    status = {p.name: p.status for p in app.plugins}
    assert status["kit-good"] == "loaded"
    assert all(status[n].startswith("failed") for n in ("kit-broken", "kit-exits", "kit-badhook"))
    owners = {e.tool.owner for e in app.registry} | {p.owner for p in app.registry.prompts.values()}
    assert "kit-badhook" not in owners, "a half-registered plugin leaves nothing behind"

    async def listing() -> list[str]:
        async with Client(build_server(app), mode="legacy") as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert anyio.run(listing) == CORE_TOOLS


def test_a_second_plugin_of_one_name_is_skipped_saying_so(
    installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    impostor = tmp_path / "impostor"
    impostor.mkdir()
    _install(impostor, "prixfixe-kit-impostor", "kit-good", "pf_kit_impostor", "raise ImportError")
    monkeypatch.setattr(sys, "path", [*sys.path, str(impostor)])  # after the real one
    importlib.invalidate_caches()
    good = [p for p in App.build().plugins if p.name == "kit-good"]
    assert [(p.distribution, p.status) for p in good] == [
        ("prixfixe-kit-good", "loaded"),
        ("prixfixe-kit-impostor", "skipped: a plugin of this name is loaded"),
    ]


def test_registration_that_fails_half_way_leaves_nothing_registered() -> None:
    """As with pluggy releases that added hook implementations before checking them all."""
    import pluggy

    from prixfixe.core.plugins import _register
    from prixfixe.declarations import hookspecs

    class HalfWay(pluggy.PluginManager):
        def register(self, plugin: object, name: str | None = None) -> str | None:
            super().register(plugin, name)
            raise ValueError("failed after registering")

    class Plugin:
        @hookimpl_marker
        def register_tools(self, register: Any) -> None:
            pass

    pm = HalfWay(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    with pytest.raises(ValueError, match="failed after registering"):
        _register(pm, Plugin(), "half")
    assert not pm.has_plugin("half")
    assert pm.hook.register_tools.get_hookimpls() == []


@pytest.mark.parametrize("value", ["", " , "])
def test_load_plugins_set_but_empty_loads_no_third_party_plugin(
    installed: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("PRIXFIXE_LOAD_PLUGINS", value)
    app = App.build()
    third_party = [p for p in app.plugins if p.origin != "built-in"]
    assert {p.name for p in third_party} >= {"kit-good", "kit-broken", "kit-exits"}
    assert {p.status for p in third_party} == {"skipped: not in PRIXFIXE_LOAD_PLUGINS"}
    assert all(e.tool.owner.startswith("prixfixe.default_plugins.") for e in app.registry)


def test_load_plugins_names_the_ones_to_load(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIXFIXE_LOAD_PLUGINS", "kit-good")
    status = {p.name: p.status for p in App.build().plugins}
    assert status["kit-good"] == "loaded"
    assert status["kit-exits"] == "skipped: not in PRIXFIXE_LOAD_PLUGINS"


def test_doctor_reports_each_plugins_authority_and_the_failures_with_their_reasons(
    installed: Path,
) -> None:
    code, out, _ = run("doctor", "--json")
    assert code == 1, "a failed plugin makes doctor exit 1"
    plugins = by_name(json.loads(out)["plugins"])
    assert plugins["kit-good"]["authority"]["hosts"] == ["status.example.org"]
    assert plugins["kit-exits"]["status"] == "failed: SystemExit: 3"
    assert "tokens" not in plugins["kit-good"], "doctor does not count every plugin's tokens"
    code, out, _ = run("doctor")
    assert code == 1
    assert "runs uptime; reaches status.example.org" in out
    assert "failed: ModuleNotFoundError: No module named 'no_such_module'" in out


def test_doctor_shows_the_paths_configured_steps_of_a_plugin_read(tmp_path: Path) -> None:
    (tmp_path / "board").mkdir()
    (tmp_path / "prixfixe.toml").write_text(
        '[routines.morning]\nsteps = [{ type = "board-scan", path = "board" }]\n'
    )
    code, out, _ = run("doctor", "--json")
    board = by_name(json.loads(out)["plugins"])["prixfixe.default_plugins.board_steps"]
    assert board["authority"]["reads"] == [str((tmp_path / "board").resolve())]
    assert board["authority"]["params_add_paths"] == ["board-scan"]
    assert code == 0


# -- prixfixe plugin new --------------------------------------------------------------------


def test_plugin_new_creates_the_package_and_says_what_to_do_next(tmp_path: Path) -> None:
    code, out, _ = run("plugin", "new", "prixfixe-tea-timer", "--dir", str(tmp_path / "code"))
    assert code == 0
    package = tmp_path / "code" / "prixfixe-tea-timer"
    assert out.startswith(f"Created prixfixe-tea-timer in {package}:\n")
    for path in (
        "pyproject.toml",
        "README.md",
        "src/prixfixe_tea_timer/__init__.py",
        "src/prixfixe_tea_timer/plugin.py",
        "tests/conftest.py",
        "tests/test_plugin.py",
        "tests/golden/tea-timer-notes.json",
    ):
        assert (package / path).is_file(), path
        assert f"  {path}\n" in out
    assert "prixfixe plugins install -e '.[test]'" in out
    assert f"{sys.executable} -m pytest" in out
    pyproject = (package / "pyproject.toml").read_text()
    assert '[project.entry-points.prixfixe]\ntea-timer = "prixfixe_tea_timer.plugin"' in pyproject
    assert [p.name for p in (tmp_path / "code").iterdir()] == ["prixfixe-tea-timer"]


def test_plugin_new_ships_no_bytecode_even_where_python_writes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Generating the golden file imports the new plugin; that import must not leave a
    `__pycache__` in the package (PYTHONDONTWRITEBYTECODE is off on a person's machine)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    code, _, _ = run("plugin", "new", "kettle", "--dir", str(tmp_path))
    assert code == 0
    package = tmp_path / "prixfixe-kettle"
    assert (package / "tests" / "golden" / "kettle-notes.json").is_file()
    left = [p.relative_to(package) for p in package.rglob("*") if p.suffix == ".pyc"]
    assert left == []
    assert [p for p in package.rglob("__pycache__")] == []


def test_the_new_plugin_loads_and_keeps_its_contract_in_process(tmp_path: Path) -> None:
    import importlib.util

    from prixfixe.testing import make_harness

    run("plugin", "new", "kettle", "--dir", str(tmp_path))
    plugin = tmp_path / "prixfixe-kettle" / "src" / "prixfixe_kettle" / "plugin.py"
    spec = importlib.util.spec_from_file_location("kettle_plugin_under_test", plugin)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        harness = make_harness(
            module,
            tmp_path / "harness",
            golden=tmp_path / "prixfixe-kettle" / "tests" / "golden",
            steps=[{"type": "kettle-notes"}],
            calls=[("kettle_note_add", {"text": "descale"})],
        )
        harness.check_all(tools_list=400)
        (report,) = harness.reports
        assert report["steps"][0]["data"] == {"count": 1, "latest": [{"id": 1, "text": "descale"}]}
        harness.close()
    finally:
        del sys.modules[spec.name]


@pytest.mark.parametrize("name", ["Tea", "tea timer", "9lives", "tea--timer", "tea-", "", "x" * 41])
def test_plugin_new_refuses_an_invalid_name_naming_it(tmp_path: Path, name: str) -> None:
    code, _, err = run("plugin", "new", name, "--dir", str(tmp_path))
    assert code == 1
    assert f"prixfixe: error: plugin name {name!r} is not valid" in err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_plugin_new_refuses_reserved_names(tmp_path: Path) -> None:
    code, _, err = run("plugin", "new", "core", "--dir", str(tmp_path))
    assert code == 1
    assert "plugin name 'core' is reserved" in err


def test_plugin_new_never_overwrites_an_existing_folder(tmp_path: Path) -> None:
    existing = tmp_path / "prixfixe-kettle"
    existing.mkdir()
    (existing / "mine.txt").write_text("keep me")
    code, _, err = run("plugin", "new", "kettle", "--dir", str(tmp_path))
    assert code == 1
    assert f"{existing} already exists" in err
    assert [p.name for p in existing.iterdir()] == ["mine.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prixfixe-kettle"], "no leftovers"


def test_plugin_new_says_when_it_cannot_create_the_folder(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    code, _, err = run("plugin", "new", "kettle", "--dir", str(tmp_path / "a-file" / "sub"))
    assert code == 1
    assert f"cannot create the package in {tmp_path / 'a-file' / 'sub'}: Not a directory" in err
