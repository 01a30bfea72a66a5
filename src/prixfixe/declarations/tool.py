"""What a plugin declares to add a tool: the `Tool` record, its context and its result.

This module sits low on purpose: a plugin imports it (through `prixfixe`) and little else.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeAlias

import mcp_types as types
from pydantic import BaseModel

from prixfixe.declarations.content import Content
from prixfixe.declarations.declaration_type import DeclarationType
from prixfixe.declarations.interaction import Interactive
from prixfixe.errors import RegistryError
from prixfixe.schema import model_schema

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from mcp.server.context import ServerRequestContext

    from prixfixe.declarations.host import Host
    from prixfixe.store.api import OwnerSlice

#: MCP tool names (spec 2025-11-25): 1-128 of ASCII letters, digits, `_`, `-`, `.`.
TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
#: Facet names are short lowercase identifiers so they read well in env vars and TOML lists.
FACET_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
#: Arguments larger than this (as compact JSON) are refused before any parsing work: no tool
#: here needs more, and a runaway payload should cost one clear error, not memory. A tool
#: that takes text states the limit its text is under (it sits here, low, for that).
MAX_ARGUMENT_BYTES = 1_000_000


@dataclass(frozen=True)
class ToolContext(Interactive):
    """What a handler may reach: the running app, when called over MCP the request, and the
    plugin that owns the tool (whose store slice `slice()` returns). Through `Interactive` it
    can ask the client for input (`ask`), log to it (`log`) and report progress."""

    app: Host
    request: ServerRequestContext[Any] | None = None
    owner: str = ""

    def slice(self) -> OwnerSlice:
        """The calling plugin's own store tables (blocking: use from a worker thread)."""
        return self.app.store.slice(self.owner)


@dataclass(frozen=True)
class ToolResult:
    """A handler result with both a text for people and structured data for agents."""

    text: str
    data: BaseModel | dict[str, Any] | None = None
    is_error: bool = False


#: A content item (an `Image`, ...) or a list of them is the result's content as it is.
ToolOutput: TypeAlias = "str | BaseModel | ToolResult | Content | Sequence[Content]"
#: A handler takes the context and the validated input model; it may be sync or async.
ToolHandler: TypeAlias = Callable[[ToolContext, Any], "Awaitable[ToolOutput] | ToolOutput"]


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A tool, declared in full: nothing about it is inferred from the handler.

    `mutates` drives the MCP annotations: a read-only tool is `readOnlyHint`, idempotent and
    not destructive; a mutating tool is destructive unless `destructive=False` and idempotent
    only when `idempotent=True`.

    A tool whose schemas are not pydantic models (a mounted server's) gives them as raw JSON
    Schema dicts: `input_schema` (arguments are then checked against it and the handler gets
    them as a dict; `input_model` only names the arguments for search), `output_schema`, and
    `annotations` to advertise instead of the ones `mutates` implies. All three are passed
    through unchanged.

    `ask=False` keeps a tool from asking the person for missing arguments (see the field).
    """

    name: str
    title: str
    description: str
    input_model: type[BaseModel]
    handler: ToolHandler
    mutates: bool
    facet: str
    output_model: type[BaseModel] | None = None
    keywords: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    usage: str = ""
    destructive: bool | None = None
    idempotent: bool | None = None
    #: Clients that defer tools until searched (`_meta["anthropic/alwaysLoad"]`) keep it loaded.
    always_load: bool = False
    #: More words `tool_search` ranks it by, read from the registry whenever it changes: a tool
    #: that runs step types is found by what those step types do.
    search_words: Callable[[Any], Sequence[str]] | None = field(default=None, compare=False)
    #: What the tool's provider says of itself (a mounted server's description and
    #: instructions): `tool_search` ranks by it too, at a low weight.
    about: str = ""
    owner: str = field(default="", compare=False)
    input_schema: Mapping[str, Any] | None = field(default=None, compare=False)
    output_schema: Mapping[str, Any] | None = field(default=None, compare=False)
    annotations: types.ToolAnnotations | None = None
    #: Whether a call missing a required argument, or giving a value outside an enum, may ask
    #: the person for it (an elicitation form) when the client can. False: such a call always
    #: ends with the structured error a model fixes its call from (as for any client without
    #: elicitation). `[mcp] never_ask` sets it off by configuration.
    ask: bool = True

    @property
    def summary(self) -> str:
        """The description's first sentence: what search results show instead of a schema."""
        first = self.description.strip().split("\n", 1)[0].strip()
        sentence = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0]
        return sentence if len(sentence) <= 160 else sentence[:157].rstrip() + "..."


# -- registration ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RegisteredTool:
    """A tool plus what the registry derives from it once: its schemas and wire form."""

    tool: Tool

    @property
    def name(self) -> str:
        return self.tool.name

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        if self.tool.input_schema is not None:
            return dict(self.tool.input_schema)
        return model_schema(self.tool.input_model)

    @cached_property
    def output_schema(self) -> dict[str, Any] | None:
        if self.tool.output_schema is not None:
            return dict(self.tool.output_schema)
        model = self.tool.output_model
        return None if model is None else model_schema(model, mode="serialization")

    @cached_property
    def validator(self) -> Draft202012Validator:
        """A validator for the advertised input schema, compiled once (used to explain errors).

        A raw schema is read in the dialect its `$schema` names (2020-12 when it names none,
        as MCP says)."""
        from jsonschema import Draft202012Validator
        from jsonschema.validators import validator_for

        if self.tool.input_schema is None:
            return Draft202012Validator(self.input_schema)
        cls = validator_for(self.input_schema, default=Draft202012Validator)
        return cls(self.input_schema)  # type: ignore[return-value]

    @cached_property
    def schema_is_valid(self) -> bool:
        """Whether the input schema is itself valid JSON Schema, checked once (a raw schema
        may not be; one generated from a model always is)."""
        if self.tool.input_schema is None:
            return True
        from jsonschema.exceptions import SchemaError

        try:
            self.validator.check_schema(self.input_schema)
        except SchemaError:
            return False
        return True

    @cached_property
    def annotations(self) -> types.ToolAnnotations:
        # Only hints that say something: the spec reads destructive and idempotent only when a
        # tool is not read-only, and their defaults (destructive, not idempotent) go unsaid.
        # No annotation title: the tool's own `title` says it once, and bytes cost tokens.
        tool = self.tool
        if tool.annotations is not None:
            return tool.annotations
        if not tool.mutates:
            return types.ToolAnnotations(read_only_hint=True)
        return types.ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False if tool.destructive is False else None,
            idempotent_hint=True if tool.idempotent else None,
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
            _meta={"anthropic/alwaysLoad": True} if self.tool.always_load else None,
        )


def _check_tool(tool: Tool, owner: str) -> None:
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


def _admit_tool(tool: Tool, owner: str) -> RegisteredTool:
    _check_tool(tool, owner)
    return RegisteredTool(replace(tool, owner=owner))


TOOLS: DeclarationType[Tool, RegisteredTool] = DeclarationType(
    declared=Tool,
    label="prixfixe Tool",
    hook="register_tools",
    field="tools",
    what="tool",
    key=lambda tool: tool.name,
    admit=_admit_tool,
    listing="tools",
    refreshes_index=True,
)
