"""The docs are tested: documented commands, options and config keys exist; examples run."""

from __future__ import annotations

import json
import os
import re
import tomllib
import types
import typing
from pathlib import Path

import anyio
import click
import mcp_types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from prixfixe.app import App
from prixfixe.cli import cli
from prixfixe.config import ConfigModel, validate_config
from prixfixe.mcp.server import build_server
from prixfixe.secrets import CredentialRef, SecretRef
from tests.search_text import searched

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(path: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(), flags=re.DOTALL)


def _documented_commands() -> list[str]:
    spans: list[str] = []
    for doc in DOCS:
        spans += re.findall(r"`(prixfixe [^`]+)`", doc.read_text())
    return spans


def test_every_documented_command_and_option_exists() -> None:
    spans = _documented_commands()
    assert len(spans) >= 8
    for span in spans:
        words = span.split()[1:]
        command: click.Command = cli
        for word in words:
            if isinstance(command, click.Group) and word in command.commands:
                command = command.commands[word]
            else:
                break
        assert command is not cli, f"{span!r} names no prixfixe command"
        options = {opt for p in command.params for opt in getattr(p, "opts", [])}
        for flag in re.findall(r"(--[a-z-]+)", span):
            assert flag in options, f"{span!r}: {flag} is not an option of that command"


def _config_keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    """Every leaf key of the config: tables recurse, `dict[str, Table]` as NAME, arrays of
    tables as their element (`routines.NAME.steps.type`), `dict[str, value]` as `NAME`."""
    keys: set[str] = set()
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        annotation = info.annotation
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys |= _config_keys(annotation, f"{path}.")
        elif origin is dict and isinstance(args[1], type) and issubclass(args[1], BaseModel):
            keys |= _config_keys(args[1], f"{path}.NAME.")
        elif (
            origin is list
            and isinstance(args[0], type)
            and issubclass(args[0], BaseModel)
            and args[0] not in (SecretRef, CredentialRef)  # a list of references is a value
        ):
            keys |= _config_keys(args[0], f"{path}.")
        elif origin is dict:
            keys.add(f"{path}.NAME")  # a table of named values (`[commands]`)
        else:
            keys.add(path)
    return keys


def test_every_config_key_is_documented_and_every_documented_key_exists() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text()
    documented = set(
        re.findall(r"^\| `([a-z_]+(?:\.(?:[a-z_]+|NAME))+)` \|", text, flags=re.MULTILINE)
    )
    actual = _config_keys(ConfigModel)
    assert {"mcp.expose", "resources.capability_index.advertise", "leash.exec"} <= actual
    assert documented == actual


def test_config_examples_are_valid() -> None:
    blocks = _blocks(ROOT / "docs" / "configuration.md", "toml")
    assert len(blocks) >= 4, "the configuration examples were not found"
    for block in blocks:
        # validate_config raises ConfigError naming the key when an example is invalid.
        assert isinstance(
            validate_config(tomllib.loads(block), file="docs/configuration.md"), ConfigModel
        )


def test_documented_environment_variables_are_read_by_the_code() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text()
    source = "\n".join(p.read_text() for p in (ROOT / "src" / "prixfixe").rglob("*.py"))
    for name in set(re.findall(r"`(PRIXFIXE_[A-Z_]+)`", text)):
        assert f'"{name}"' in source, f"{name} is documented but never read"


def test_the_plugin_example_registers_and_runs() -> None:
    code = _blocks(ROOT / "docs" / "plugins.md", "python")[0]
    module = types.ModuleType("docs_example_plugin")
    exec(compile(code, "docs/plugins.md", "exec"), module.__dict__)
    app = App.build(env={}, extra_plugins=[module])

    async def scenario() -> dict[str, object] | None:
        async with Client(build_server(app), mode="legacy") as client:
            found = await client.call_tool("tool_search", {"query": "hot in Lisbon"})
            assert searched(found).names[0] == "weather.forecast"
            result = await client.call_tool(
                "tool_invoke", {"name": "weather.forecast", "arguments": {"city": "Lisbon"}}
            )
            return result.structured_content

    assert anyio.run(scenario) == {"city": "Lisbon", "highs": [21.0, 21.0, 21.0]}


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in ci
    readme = (ROOT / "README.md").read_text()
    assert "<!-- test-command -->\n```sh\n" in readme


def test_the_store_plugin_example_adds_a_kind_and_its_own_table(tmp_path: Path) -> None:
    code = _blocks(ROOT / "docs" / "plugins.md", "python")[1]
    module = types.ModuleType("docs_store_plugin")
    # dont_inherit: this file's `from __future__ import annotations` must not leak into the
    # example, whose annotations pydantic resolves at class creation.
    exec(compile(code, "docs/plugins.md", "exec", dont_inherit=True), module.__dict__)
    app = App.build(env={"PRIXFIXE_HOME": str(tmp_path / "home")}, extra_plugins=[module])

    async def scenario() -> dict[str, object] | None:
        async with Client(build_server(app), mode="legacy") as client:
            put = await client.call_tool(
                "store_put",
                {"kind": "reading", "record": {"city": "Lisbon", "day": "2026-07-01", "high": 31}},
            )
            assert put.is_error is False
            found = await client.call_tool(
                "store_query", {"kind": "reading", "where": {"day": {">=": "2026-07-01"}}}
            )
            return found.structured_content

    data = anyio.run(scenario)
    assert data is not None
    assert data["records"][0]["record"] == {"city": "Lisbon", "day": "2026-07-01", "high": 31.0}  # type: ignore[index]
    own = App.build(env={"PRIXFIXE_HOME": str(tmp_path / "home")}, extra_plugins=[module])
    try:
        rows = own.store.slice("docs_store_plugin").query("SELECT count(*) FROM {prefix}stations")
    finally:
        own.close_store()
    assert rows == [(0,)]


def test_store_doc_filter_example_is_valid_for_reminders(tmp_path: Path) -> None:
    (example,) = _blocks(ROOT / "docs" / "store.md", "json")
    app = App.build(env={"PRIXFIXE_HOME": str(tmp_path / "home")})
    try:
        page = app.store.query("reminder", where=json.loads(example))
    finally:
        app.close_store()
    assert page.records == []


def test_the_resources_plugin_example_lists_reads_and_completes(tmp_path: Path) -> None:
    (code,) = _blocks(ROOT / "docs" / "resources.md", "python")
    module = types.ModuleType("docs_resources_plugin")
    exec(compile(code, "docs/resources.md", "exec", dont_inherit=True), module.__dict__)
    app = App.build(env={"PRIXFIXE_HOME": str(tmp_path / "home")}, extra_plugins=[module])
    template = mcp_types.ResourceTemplateReference(
        type="ref/resource", uri="weather://stations/{name}"
    )

    async def scenario() -> None:
        async with Client(build_server(app), mode="legacy") as client:
            listed = [r.uri for r in (await client.list_resources()).resources]
            assert "weather://stations" in listed
            porto = await client.read_resource("weather://stations/porto")
            assert json.loads(porto.contents[0].text) == {"elevation_m": 93}  # type: ignore[union-attr]
            names = await client.complete(template, {"name": "name", "value": "p"})
            assert names.completion.values == ["porto"]
            with pytest.raises(MCPError) as caught:
                await client.read_resource("weather://stations/oslo")
            assert caught.value.code == -32002
            assert "no station 'oslo'" in caught.value.message

    anyio.run(scenario)


def test_routines_doc_config_examples_and_the_example_config_are_valid(tmp_path: Path) -> None:
    for block in _blocks(ROOT / "docs" / "routines.md", "toml"):
        validate_config(tomllib.loads(block), file="docs/routines.md")
    # The example's morning routine holds the review-queue steps of the forge plugin:
    # scripts/test-plugins.sh runs this test again with it installed.
    pytest.importorskip("prixfixe_forge", reason="the example needs the prixfixe-forge plugin")
    example = ROOT / "examples" / "prixfixe.toml"
    app = App.build(
        env={"PRIXFIXE_CONFIG": str(example), "PRIXFIXE_HOME": str(tmp_path)}, cwd=tmp_path
    )
    assert {"morning", "tidy"} <= set(app.routines.routines)
    assert app.routines.get("morning").source == str(example)


def test_every_built_in_step_type_and_param_is_documented() -> None:
    from prixfixe.core.plugins import DEFAULT_PLUGINS

    text = (ROOT / "docs" / "routines.md").read_text()
    headings = re.findall(r"^### (.+)$", text, flags=re.MULTILINE)
    registry = App.build(env={}).registry
    for step_type in registry.step_types.values():
        if step_type.owner not in DEFAULT_PLUGINS:
            continue
        assert any(f"`{step_type.name}`" in h for h in headings), step_type.name
        assert f"| `{step_type.name}` | {step_type.version} |" in text, step_type.name
        for param in step_type.params_model.model_fields:
            assert f"| `{param}` |" in text, f"{step_type.name}.{param} is not documented"


def test_the_step_type_example_registers_and_runs(tmp_path: Path) -> None:
    (code,) = _blocks(ROOT / "docs" / "routines.md", "python")
    module = types.ModuleType("docs_step_plugin")
    exec(compile(code, "docs/routines.md", "exec", dont_inherit=True), module.__dict__)
    (tmp_path / "prixfixe.toml").write_text(
        '[routines.up]\n[[routines.up.steps]]\ntype = "uptime"\nwarn_days = 1\n'
    )
    app = App.build(
        env={
            "PRIXFIXE_HOME": str(tmp_path / "home"),
            "PATH": os.environ["PATH"],
            "PRIXFIXE_CONFIG": str(tmp_path / "prixfixe.toml"),
        },
        cwd=tmp_path,
        extra_plugins=[module],
    )

    async def scenario() -> dict[str, object] | None:
        async with Client(build_server(app), mode="legacy") as client:
            result = await client.call_tool("routine_run", {"name": "up", "format": "data"})
            return result.structured_content

    data = anyio.run(scenario)
    assert data is not None
    (step,) = data["steps"]  # type: ignore[misc]
    assert step["status"] == "ok", step["error"]
    assert set(step["data"]) == {"days", "long"}


def test_the_prompts_plugin_example_lists_gets_and_completes(tmp_path: Path) -> None:
    code = _blocks(ROOT / "docs" / "plugins.md", "python")[2]
    module = types.ModuleType("docs_prompts_plugin")
    exec(compile(code, "docs/plugins.md", "exec", dont_inherit=True), module.__dict__)
    app = App.build(env={"PRIXFIXE_HOME": str(tmp_path / "home")}, extra_plugins=[module])
    ref = mcp_types.PromptReference(type="ref/prompt", name="plan_day")

    async def scenario() -> None:
        async with Client(build_server(app), mode="legacy") as client:
            assert [p.name for p in (await client.list_prompts()).prompts] == ["plan_day"]
            got = await client.get_prompt("plan_day", {"city": "Porto"})
            assert got.messages[0].content.text == "Plan a day outdoors in Porto."  # type: ignore[union-attr]
            assert got.messages[1].content.type == "resource"
            cities = await client.complete(ref, {"name": "city", "value": "L"})
            assert cities.completion.values == ["Lisbon", "London"]

    anyio.run(scenario)
