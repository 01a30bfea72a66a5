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
from prixfixe.words import shorten

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
    #: False inside a program (`program_run`): the handler may not ask the person anything.
    interactive: bool = True

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
        return shorten(sentence, 160)


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
        as MCP says). Refs resolve within the schema only, and a raw schema's patterns are
        its server's to check (`json_schema.py`): nothing is fetched, no regex is run."""
        from prixfixe.declarations.json_schema import local_validator

        raw = self.tool.input_schema is not None
        return local_validator(self.input_schema, raw=raw)  # type: ignore[return-value]

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
    def inline_nodes(self) -> int | None:
        """For a valid raw input schema whose checking is linear and which holds at most
        `INLINE_SCHEMA_NODES` nodes (`json_schema.linear_nodes`): its size in nodes, which
        `tools/validation.py` weighs to check small arguments on the event loop. Else None
        (a model's arguments are always checked there; other raw schemas in a thread)."""
        if self.tool.input_schema is None or not self.schema_is_valid:
            return None
        from prixfixe.declarations.json_schema import INLINE_SCHEMA_NODES, linear_nodes

        return linear_nodes(self.input_schema, INLINE_SCHEMA_NODES)

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
        """The `tools/list` entry, built once so listings stay byte-identical.

        prixfixe's own tools (not a mounted server's, passed on as that server lists them)
        carry no `title` and no `outputSchema`: MCP allows `structuredContent` without one (a client
        validates structured results only against a declared schema), and every listed
        schema is read by the model at the start of every session. The output schema stays
        the tool's contract: results still carry `structuredContent` that conforms to it,
        and `tool_describe` and the capability index give it (`RegisteredTool.output_schema`).
        """
        own = self.tool.input_schema is None  # a mounted server's tool is passed on as it is
        listed_schema = _listed(self.input_schema) if own else self.input_schema
        hints: types.ToolAnnotations | None = self.annotations
        if own and hints is not None and hints.read_only_hint is False:
            # MCP's default: a tool may write. Said once in `tool_describe`, not in every listing.
            hints = hints.model_copy(update={"read_only_hint": None})
            if hints == types.ToolAnnotations():
                hints = None
        return types.Tool(
            name=self.tool.name,
            # A title is for display (MCP); a client shows the name without one.
            title=None if own else self.tool.title,
            description=self.tool.description,
            input_schema=listed_schema,
            output_schema=None if own else self.output_schema,
            annotations=hints,
            _meta={"anthropic/alwaysLoad": True} if self.tool.always_load else None,
        )


#: A `maximum` at or past this says nothing a model needs (the store's 64-bit ids).
_HUGE = 2**53


def _listed(schema: dict[str, Any]) -> dict[str, Any]:
    """A model-generated input schema as `tools/list` shows it: an optional argument is just
    its type (leaving it out is how a model says "none"; `null` is still accepted), and a
    `maximum` no real value reaches is left out. The exact schema arguments are checked by
    is `tool_describe`'s `input_schema`. `additionalProperties: false` is left out too: an
    argument the tool does not take is still refused, by name, when the tool is called."""
    required = set(schema.get("required", ()))
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    shown: dict[str, Any] = {}
    for name, spec in properties.items():
        if isinstance(spec, dict):
            spec = _without_huge_maximum(spec)
            if name not in required and spec.get("default", None) is None:
                spec = _not_null(spec)
        shown[name] = spec
    listed = {k: v for k, v in schema.items() if (k, v) != ("additionalProperties", False)}
    return {**listed, "properties": shown}


def _not_null(spec: dict[str, Any]) -> dict[str, Any]:
    kind = spec.get("type")
    if isinstance(kind, list) and "null" in kind and len(kind) > 1:
        rest = [k for k in kind if k != "null"]
        return {**spec, "type": rest[0] if len(rest) == 1 else rest}
    options = spec.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options and len(options) == 2:
        (other,) = [o for o in options if o != {"type": "null"}]
        if isinstance(other, dict):
            merged = {k: v for k, v in spec.items() if k != "anyOf"}
            return {**_without_huge_maximum(other), **merged}
    return spec


def _without_huge_maximum(spec: dict[str, Any]) -> dict[str, Any]:
    top = spec.get("maximum")
    if isinstance(top, int) and top >= _HUGE:
        spec = {k: v for k, v in spec.items() if k != "maximum"}
    if spec.get("minLength") == 1 and spec.get("type") == "string":
        spec = {k: v for k, v in spec.items() if k != "minLength"}  # a name is never ''
    return spec


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
