"""The hooks a prixfixe plugin implements. Every hook takes a `register` callback.

A plugin is a module (or object) with functions marked `@hookimpl`, published under the
entry-point group `prixfixe`:

    [project.entry-points.prixfixe]
    weather = "prixfixe_weather.plugin"
"""

from __future__ import annotations

from collections.abc import Callable

import pluggy

from prixfixe.declarations.kinds import StoreKind, StoreMigration
from prixfixe.declarations.prompt import Prompt
from prixfixe.declarations.resource import Resource, ResourceTemplate
from prixfixe.declarations.steps import StepType
from prixfixe.declarations.tool import Tool

PROJECT_NAME = "prixfixe"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def register_tools(register: Callable[[Tool], None]) -> None:
    """Declare tools: call `register(Tool(...))` once per tool."""


@hookspec
def register_store_kinds(register: Callable[[StoreKind], None]) -> None:
    """Declare store record kinds: call `register(StoreKind(...))` once per kind."""


@hookspec
def register_store_migrations(register: Callable[[StoreMigration], None]) -> None:
    """Declare the plugin's own store tables: `register(StoreMigration(...))`, oldest first."""


@hookspec
def register_resources(register: Callable[[Resource | ResourceTemplate], None]) -> None:
    """Declare MCP resources: `register(Resource(...))` for a fixed URI,
    `register(ResourceTemplate(...))` for an RFC 6570 URI template."""


@hookspec
def register_step_types(register: Callable[[StepType], None]) -> None:
    """Declare step types for routines: call `register(StepType(...))` once per type."""


@hookspec
def register_prompts(register: Callable[[Prompt], None]) -> None:
    """Declare MCP prompts: call `register(Prompt(...))` once per prompt."""
