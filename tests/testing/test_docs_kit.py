"""docs/plugins.md's kit, scaffold and `prixfixe plugins` sections say what the code does:
the documented contract example passes on the package `prixfixe plugin new` makes, and every
documented attribute, test and JSON key exists."""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from pathlib import Path

from prixfixe.app import App
from prixfixe.scaffold import new_plugin
from prixfixe.system.doctor import plugins_section
from prixfixe.testing import PluginContract, PluginHarness, make_harness

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"


def _section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def _first_column(section: str) -> set[str]:
    names: set[str] = set()
    for cell in re.findall(r"^\| (`[^|]+) \|", section, flags=re.MULTILINE):
        names |= set(re.findall(r"`([a-z_]+)`", cell))
    return names


def test_the_documented_contract_example_passes_on_a_new_plugin(tmp_path: Path) -> None:
    section = _section("Testing a plugin")
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    example = types.ModuleType("docs_contract_example")
    exec(compile(code, "docs/plugins.md", "exec", dont_inherit=True), example.__dict__)
    contract = example.TestContract
    assert contract.plugin == "weather"

    package = new_plugin("weather", tmp_path)
    spec = importlib.util.spec_from_file_location(
        "docs_weather_plugin", package / "src" / "prixfixe_weather" / "plugin.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        # The module itself: the entry point is not installed in this environment.
        harness = make_harness(
            module,
            tmp_path / "harness",
            golden=package / "tests" / contract.golden,
            steps=contract.steps,
            calls=contract.calls,
        )
        try:
            harness.check_all(tools_list=contract.max_tools_list_tokens)
        finally:
            harness.close()
    finally:
        del sys.modules[spec.name]


def test_every_documented_contract_test_and_attribute_exists() -> None:
    section = _section("Testing a plugin")
    documented = _first_column(section)
    tests = {n for n in documented if n.startswith("test_")}
    assert tests == {n for n in dir(PluginContract) if n.startswith("test_")}
    for name in documented - tests:
        assert hasattr(PluginContract, name) or name == "plugin", name
    methods = re.findall(r"`(?:harness\.)?([a-z_]+)\(", section)
    assert {"client", "call", "run_routine", "watch", "check_all"} <= set(methods)
    for method in methods:
        assert hasattr(PluginHarness, method) or hasattr(PluginContract, method), method


def _row(section: str, key: str) -> set[str]:
    (row,) = re.findall(rf"^\| `{key}` \|(.*)$", section, flags=re.MULTILINE)
    return set(re.findall(r"`([a-z_]+)`", row))


def test_every_plugins_json_key_is_documented_and_every_documented_key_exists() -> None:
    section = _section("What is installed")
    (entry, *_) = plugins_section(App.build(env={"PRIXFIXE_LOAD_PLUGINS": ""}), costs=True)
    assert _first_column(section) == set(entry)
    assert _row(section, "authority") - {"null"} == set(entry["authority"])
    assert _row(section, "tokens") == set(entry["tokens"])
