"""Third-party plugins found through real entry points (a dist-info on PYTHONPATH), run in
real subprocesses, and the all-or-nothing registration rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from prixfixe import StepType, Tool, hookimpl
from prixfixe.core.registry import Registry
from prixfixe.errors import RegistryError
from tests.conftest import CORE_TOOLS, AppFactory
from tests.plugin_fixtures import NoteInput, add_note, many_tools_plugin
from tests.search_text import searched
from tests.step_fixtures import EchoData, EchoParams

GOOD_PLUGIN = """
from pydantic import BaseModel, ConfigDict, Field
from prixfixe import Tool, hookimpl


class GreetInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    who: str = Field(description="Whom to greet.")


async def greet(ctx, args):
    return f"hello, {args.who}"


@hookimpl
def register_tools(register):
    register(Tool(name="greet", title="Greet", description="Say hello to someone by name.",
                  input_model=GreetInput, handler=greet, mutates=False, facet="greetings"))
"""

DUPLICATE_PLUGIN = """
from prixfixe import Tool, hookimpl
from pydantic import BaseModel


class In(BaseModel):
    pass


@hookimpl
def register_tools(register):
    register(Tool(name="dup_ok", title="t", description="d", input_model=In,
                  handler=lambda c, a: "x", mutates=False, facet="dupes"))
    register(Tool(name="tool_search", title="t", description="d", input_model=In,
                  handler=lambda c, a: "x", mutates=False, facet="dupes"))
"""


def _install(site: Path, dist: str, entry_name: str, module: str, source: str) -> None:
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[prixfixe]\n{entry_name} = {module}\n")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three plugins installed once per module (files only: cheap; what costs is the
    `prixfixe` process each test starts, ~2 s of CPU apiece under coverage)."""
    site = tmp_path_factory.mktemp("site")
    _install(site, "prixfixe_greet", "greet", "pf_greet", GOOD_PLUGIN)
    _install(site, "prixfixe_broken", "broken", "pf_broken", "raise ImportError('no numpy here')")
    _install(site, "prixfixe_dupes", "dupes", "pf_dupes", DUPLICATE_PLUGIN)
    return site


def _env(tmp_path: Path, site: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    env["PRIXFIXE_HOME"] = str(tmp_path / "home")
    env["PYTHONPATH"] = str(site)
    env.update(extra)
    return env


def _doctor(tmp_path: Path, site: Path, **extra: str) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "prixfixe", "doctor", "--json"],
        capture_output=True,
        text=True,
        env=_env(tmp_path, site, **extra),
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert "Traceback" not in proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _status(report: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["status"] for p in report["plugins"]}


@pytest.mark.slow
def test_entry_point_plugins_load_and_broken_ones_are_reported_not_fatal(
    tmp_path: Path, site: Path
) -> None:
    code, report = _doctor(tmp_path, site)
    status = _status(report)
    assert status["greet"] == "loaded"
    assert status["broken"] == "failed: ImportError: no numpy here"
    assert status["dupes"].startswith("failed: plugin 'dupes' registered tool 'tool_search'")
    assert code == 1, "doctor exits non-zero when a plugin failed"
    facets = {f["name"]: f for f in report["facets"]}
    assert facets["greetings"]["tools"] == 1
    assert "dupes" not in facets, "a plugin that fails registration adds none of its tools"
    assert report["tools_list"]["tools"] == len(CORE_TOOLS)


@pytest.mark.slow
def test_load_plugins_allowlist_set_but_empty_loads_no_third_party_plugin(
    tmp_path: Path, site: Path
) -> None:
    code, report = _doctor(tmp_path, site, PRIXFIXE_LOAD_PLUGINS="")
    status = _status(report)
    assert code == 0
    assert status["greet"] == "skipped: not in PRIXFIXE_LOAD_PLUGINS"
    assert status["broken"] == "skipped: not in PRIXFIXE_LOAD_PLUGINS"
    assert status["prixfixe.default_plugins.discovery"] == "loaded"


@pytest.mark.slow
def test_load_plugins_allowlist_loads_only_named_and_flags_missing_names(
    tmp_path: Path, site: Path
) -> None:
    code, report = _doctor(tmp_path, site, PRIXFIXE_LOAD_PLUGINS="greet, ghost")
    status = _status(report)
    assert status["greet"] == "loaded"
    assert status["dupes"] == "skipped: not in PRIXFIXE_LOAD_PLUGINS"
    assert status["ghost"] == "failed: named in PRIXFIXE_LOAD_PLUGINS but not installed"
    assert code == 1


@pytest.mark.slow
@pytest.mark.anyio
async def test_entry_point_plugin_tool_is_invoked_through_the_trio_over_stdio(
    tmp_path: Path, site: Path
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "prixfixe", "serve"],
        env=_env(tmp_path, site, PRIXFIXE_LOAD_PLUGINS="greet"),
        cwd=tmp_path,
    )
    with anyio.fail_after(30):
        async with Client(params, mode="legacy") as client:
            found = await client.call_tool("tool_search", {"query": "say hello to someone"})
            assert searched(found).names[0] == "greet"
            result = await client.call_tool(
                "tool_invoke", {"name": "greet", "arguments": {"who": "Ada"}}
            )
    assert result.content[0].text == "hello, Ada"  # type: ignore[union-attr]


def test_tools_registered_by_a_plugin_record_their_owner(make_app: AppFactory) -> None:
    app = make_app()
    assert app.registry.get("weather.forecast").tool.owner == "weather_fixture"
    assert app.registry.get("tool_search").tool.owner == "prixfixe.default_plugins.discovery"


def test_registry_rejects_bad_names_bad_facets_and_duplicates() -> None:
    registry = Registry()

    def tool(name: str, facet: str = "misc") -> Tool:
        return Tool(
            name=name,
            title="t",
            description="d",
            input_model=NoteInput,
            handler=add_note,
            mutates=False,
            facet=facet,
        )

    with pytest.raises(RegistryError, match="names are 1-128 characters"):
        registry.add_tool(tool("has space"), owner="p")
    with pytest.raises(RegistryError, match="facet names are lowercase"):
        registry.add_tool(tool("ok", facet="Bad Facet"), owner="p")
    with pytest.raises(RegistryError, match="already registered by plugin 'p'"):
        registry.add_tools([tool("a"), tool("a")], owner="p")
    assert len(registry) == 0, "a rejected batch adds nothing"
    registry.add_tools([tool("a"), tool("b")], owner="p")
    with pytest.raises(RegistryError, match="already registered by plugin 'p'"):
        registry.add_tool(tool("a"), owner="q")
    assert [e.name for e in registry] == ["a", "b"]


def test_a_plugin_with_many_tools_registers_them_in_order(make_app: AppFactory) -> None:
    app = make_app(plugins=[many_tools_plugin(50)])
    names = [e.name for e in app.registry if e.tool.facet == "bulk"]
    assert names == [f"bulk_tool_{i:04d}" for i in range(50)]


def test_a_plugin_with_an_invalid_step_type_adds_nothing_and_is_reported(
    make_app: AppFactory,
) -> None:
    from pydantic import BaseModel

    class Loose(BaseModel):  # no extra="forbid": typos would be silently ignored
        text: str

    class HalfBroken:
        __name__ = "half_broken_steps"

        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            register(
                Tool(
                    name="half_tool",
                    title="t",
                    description="d.",
                    input_model=NoteInput,
                    handler=add_note,
                    mutates=False,
                    facet="half",
                )
            )

        @hookimpl
        def register_step_types(self, register: Callable[[StepType], None]) -> None:
            async def handler(ctx: object, params: object) -> None:
                return None

            register(
                StepType(
                    name="good-one",
                    description="d.",
                    params_model=EchoParams,
                    data_model=EchoData,
                    version="1.0",
                    handler=handler,
                )
            )
            register(
                StepType(
                    name="loose",
                    description="d.",
                    params_model=Loose,
                    data_model=EchoData,
                    version="1",
                    handler=handler,
                )
            )

    app = make_app(plugins=[HalfBroken()])
    assert "good-one" not in app.registry.step_types
    assert "half_tool" not in app.registry
    (info,) = [p for p in app.plugins if p.name == "half_broken_steps"]
    assert info.status.startswith("failed: plugin 'half_broken_steps' step type 'loose'")
    assert "version must be 'MAJOR.MINOR'" in info.status


def test_a_params_model_must_forbid_unknown_keys() -> None:
    from pydantic import BaseModel

    class Loose(BaseModel):
        text: str

    step = StepType(
        name="loose",
        description="d.",
        params_model=Loose,
        data_model=EchoData,
        version="1.0",
        handler=lambda ctx, params: None,
    )
    with pytest.raises(RegistryError, match=r"params_model must set model_config = ConfigDict"):
        Registry().add_plugin("p", step_types=[step])
    registry = Registry()
    registry.add_plugin("p", step_types=[replace(step, params_model=EchoParams)])
    with pytest.raises(RegistryError, match="already registered by plugin 'p'"):
        registry.add_plugin("q", step_types=[replace(step, params_model=EchoParams)])
