"""The hooks a prixfixe plugin implements, and the table of declaration types they feed.

Every hook takes a `register` callback. A plugin is a module (or object) with functions marked
`@hookimpl`, published under the entry-point group `prixfixe`:

    [project.entry-points.prixfixe]
    weather = "prixfixe_weather.plugin"

The hookspecs are written out, not generated from `DECLARATION_TYPES`: this module is the
plugin contract people read, and each spec states in code what its `register` accepts.
Everything else (collecting, checking, storing, announcing) loops over the table, so a new
type of declaration is its module (class, validator, `DeclarationType`) plus, here, its
hookspec and its entry in the table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

from prixfixe.declarations.curation import (
    CURATION_RULES,
    PROPERTY_INFOS,
    CurationRule,
    PropertyInfo,
)
from prixfixe.declarations.declaration_type import DeclarationType
from prixfixe.declarations.kinds import STORE_KINDS, STORE_MIGRATIONS, StoreKind, StoreMigration
from prixfixe.declarations.prompt import PROMPTS, Prompt
from prixfixe.declarations.resource import (
    RESOURCE_TEMPLATES,
    RESOURCES,
    Resource,
    ResourceTemplate,
)
from prixfixe.declarations.steps import STEP_TYPES, StepType
from prixfixe.declarations.tool import TOOLS, Tool

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


@hookspec
def register_curation(register: Callable[[PropertyInfo | CurationRule], None]) -> None:
    """Explain properties and name noise for curated output (`tool_describe`, `inspect`,
    curated step data): `register(PropertyInfo(...))` says what a property means,
    `register(CurationRule(...))` leaves matching properties out."""


#: Every type of declaration, in the order one plugin's declarations are checked (and so in the
#: order its hooks are called).
DECLARATION_TYPES: tuple[DeclarationType[Any, Any], ...] = (
    TOOLS,
    STORE_KINDS,
    STORE_MIGRATIONS,
    RESOURCES,
    RESOURCE_TEMPLATES,
    STEP_TYPES,
    PROMPTS,
    PROPERTY_INFOS,
    CURATION_RULES,
)
