"""The small parts of mounting: names, backoff, the kept catalogue, the registry's
replacement of one owner's tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from pydantic import BaseModel

from prixfixe.config import ServerConfig
from prixfixe.core.registry import Registry, RegistryChange
from prixfixe.declarations.tool import TOOL_NAME_PATTERN, Tool
from prixfixe.servers import catalogue
from prixfixe.servers.backoff import Backoff
from prixfixe.servers.naming import mounted_name, mounted_names


def test_a_valid_upstream_name_is_kept_after_the_prefix() -> None:
    assert mounted_name("github", "create_issue") == "github.create_issue"


@pytest.mark.parametrize("upstream", ["read file", "a/b", "ünïcode", "x" * 200, "", "a.b-c"])
def test_every_upstream_name_becomes_a_valid_stable_tool_name(upstream: str) -> None:
    name = mounted_name("srv", upstream)
    assert TOOL_NAME_PATTERN.match(name)
    assert name.startswith("srv.")
    assert name == mounted_name("srv", upstream)


def test_names_that_clean_up_alike_stay_apart() -> None:
    names = mounted_names("srv", ["read file", "read_file", "read/file"])
    assert sorted(names.values()) == ["read file", "read/file", "read_file"]
    assert names["srv.read_file"] == "read_file"


def test_backoff_restarts_at_once_then_doubles_and_resets() -> None:
    now = [100.0]
    backoff = Backoff(clock=lambda: now[0])
    backoff.failed()
    assert backoff.wait_left() == 0
    backoff.failed()
    assert backoff.wait_left() == 0.5
    backoff.failed()
    assert backoff.wait_left() == 1.0
    for _ in range(20):
        backoff.failed()
    assert backoff.wait_left() == 30.0
    now[0] += 30
    assert backoff.wait_left() == 0
    backoff.succeeded()
    backoff.failed()
    assert backoff.wait_left() == 0


def test_the_catalogue_round_trips_and_is_keyed_by_configuration(tmp_path: Path) -> None:
    server = ServerConfig(command="srv", args=["--x"])
    path = catalogue.catalogue_path(tmp_path, "srv", server)
    tools = [types.Tool(name="t", input_schema={"type": "object"}, description="T.")]
    assert catalogue.load(path) is None
    catalogue.save(path, tools)
    assert catalogue.load(path) == tools
    other = catalogue.catalogue_path(tmp_path, "srv", ServerConfig(command="srv", args=["--y"]))
    assert other != path
    lazy = ServerConfig(command="srv", args=["--x"], start="eager")
    assert catalogue.catalogue_path(tmp_path, "srv", lazy) == path
    path.write_text("{not json", encoding="utf-8")
    assert catalogue.load(path) is None


class _Empty(BaseModel):
    pass


def _tool(name: str, facet: str = "srv") -> Tool:
    return Tool(
        name=name,
        title=name,
        description=f"{name}.",
        input_model=_Empty,
        handler=lambda ctx, args: "ok",
        mutates=False,
        facet=facet,
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
    )


def test_replacing_an_owners_tools_is_one_change_saying_what_went_and_came() -> None:
    registry = Registry()
    registry.add_tools([_tool("other.keep", "other")], owner="other")
    registry.replace_plugin("server:srv", tools=[_tool("srv.a"), _tool("srv.b")])
    changes: list[RegistryChange] = []
    registry.subscribe(changes.append)
    registry.replace_plugin("server:srv", tools=[_tool("srv.b"), _tool("srv.c")])
    assert [e.name for e in registry] == ["other.keep", "srv.b", "srv.c"]
    assert changes[0].tools == ("srv.b", "srv.c")
    assert changes[0].removed == {"tools": ("srv.a", "srv.b")}
    assert registry.get("srv.b").input_schema == {
        "type": "object",
        "properties": {"q": {"type": "string"}},
    }


def test_a_replacement_cannot_take_another_owners_name() -> None:
    from prixfixe.errors import RegistryError

    registry = Registry()
    registry.add_tools([_tool("srv.x")], owner="other")
    with pytest.raises(RegistryError):
        registry.replace_plugin("server:srv", tools=[_tool("srv.x")])
    assert registry.get("srv.x").tool.owner == "other"


def test_a_raw_schema_tool_validates_arguments_against_that_schema() -> None:
    from prixfixe.core.registry import RegisteredTool
    from prixfixe.errors import InvalidArgumentsError
    from prixfixe.tools.validation import validate_arguments

    entry = RegisteredTool(_tool("srv.q"))
    arguments: dict[str, Any] = {"q": "text", "more": 1}
    assert validate_arguments(entry, arguments) is arguments
    with pytest.raises(InvalidArgumentsError, match="argument 'q': expected string"):
        validate_arguments(entry, {"q": 5})
    broken = RegisteredTool(
        Tool(**{**_tool("srv.b").__dict__, "input_schema": {"type": "no-such-type"}})
    )
    assert validate_arguments(broken, {"q": 5}) == {"q": 5}  # its own server judges
