"""The one registry that the core and every plugin declare their capabilities into."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import mcp_types as types

from prixfixe.errors import RegistryError, UnknownToolError
from prixfixe.schema import model_schema
from prixfixe.tool import FACET_NAME_PATTERN, TOOL_NAME_PATTERN, Tool


@dataclass(frozen=True)
class RegisteredTool:
    """A tool plus what the registry derives from it once: its schemas and wire form."""

    tool: Tool

    @property
    def name(self) -> str:
        return self.tool.name

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        return model_schema(self.tool.input_model)

    @cached_property
    def output_schema(self) -> dict[str, Any] | None:
        model = self.tool.output_model
        return None if model is None else model_schema(model, mode="serialization")

    @cached_property
    def annotations(self) -> types.ToolAnnotations:
        tool = self.tool
        if not tool.mutates:
            return types.ToolAnnotations(
                read_only_hint=True, destructive_hint=False, idempotent_hint=True
            )
        # No annotation title: the tool's own `title` says it once, and bytes cost tokens.
        return types.ToolAnnotations(
            read_only_hint=False,
            destructive_hint=True if tool.destructive is None else tool.destructive,
            idempotent_hint=bool(tool.idempotent),
        )

    @cached_property
    def wire(self) -> types.Tool:
        """The `tools/list` entry, built once so listings stay byte-identical."""
        return types.Tool(
            name=self.tool.name,
            title=self.tool.title,
            description=self.tool.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=self.annotations,
        )


class Registry:
    """Tools (and, as the project grows, step types, store kinds, resources) by name.

    Registration order is kept: it is the listing order, so a listing is stable across runs.
    `version` advances on every change so derived caches (search indexes, listings) know when
    to rebuild.
    """

    def __init__(self) -> None:
        self._tools: dict[str, RegisteredTool] = {}
        self.version = 0

    def add_tool(self, tool: Tool, *, owner: str) -> None:
        self.add_tools([tool], owner=owner)

    def add_tools(self, tools: Iterable[Tool], *, owner: str) -> None:
        """Add a plugin's tools, all or none: every tool is checked before any is added."""
        batch: dict[str, RegisteredTool] = {}
        for tool in tools:
            self._check(tool, owner)
            clash = self._tools.get(tool.name) or batch.get(tool.name)
            if clash is not None:
                raise RegistryError(
                    f"plugin {owner!r} registered tool {tool.name!r}, already registered by "
                    f"plugin {clash.tool.owner!r}"
                )
            batch[tool.name] = RegisteredTool(replace(tool, owner=owner))
        if batch:
            self._tools.update(batch)
            self.version += 1

    @staticmethod
    def _check(tool: Tool, owner: str) -> None:
        if not isinstance(tool, Tool):
            raise RegistryError(
                f"plugin {owner!r} registered {tool!r}, which is not a prixfixe Tool"
            )
        if not TOOL_NAME_PATTERN.match(tool.name):
            raise RegistryError(
                f"plugin {owner!r} registered tool name {tool.name!r}; names are 1-128 characters "
                "of letters, digits, '_', '-' and '.'"
            )
        if not FACET_NAME_PATTERN.match(tool.facet):
            raise RegistryError(
                f"plugin {owner!r} put tool {tool.name!r} in facet {tool.facet!r}; facet names are "
                "lowercase letters, digits, '_' and '-', starting with a letter"
            )

    def get(self, name: str) -> RegisteredTool:
        found = self._tools.get(name)
        if found is None:
            raise UnknownToolError(name, self.suggest(name))
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[RegisteredTool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def facets(self) -> dict[str, list[RegisteredTool]]:
        """Facet name to its tools, facets in first-registration order."""
        out: dict[str, list[RegisteredTool]] = {}
        for entry in self._tools.values():
            out.setdefault(entry.tool.facet, []).append(entry)
        return out

    def suggest(self, name: str, among: Iterable[str] | None = None) -> list[str]:
        """Up to three registered names close to `name` (for "did you mean")."""
        pool = list(among) if among is not None else list(self._tools)
        return difflib.get_close_matches(name, pool, n=3, cutoff=0.6)
