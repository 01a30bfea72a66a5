"""What a plugin declares to add a tool: the `Tool` record, its context and its result.

This module sits low on purpose: a plugin imports it (through `prixfixe`) and little else.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from pydantic import BaseModel

from prixfixe.declarations.content import Content
from prixfixe.declarations.interaction import Interactive

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from prixfixe.app import App
    from prixfixe.store.api import OwnerSlice

#: MCP tool names (spec 2025-11-25): 1-128 of ASCII letters, digits, `_`, `-`, `.`.
TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
#: Facet names are short lowercase identifiers so they read well in env vars and TOML lists.
FACET_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class ToolContext(Interactive):
    """What a handler may reach: the running app, when called over MCP the request, and the
    plugin that owns the tool (whose store slice `slice()` returns). Through `Interactive` it
    can ask the client for input (`ask`), log to it (`log`) and report progress."""

    app: App
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
    owner: str = field(default="", compare=False)

    @property
    def summary(self) -> str:
        """The description's first sentence: what search results show instead of a schema."""
        first = self.description.strip().split("\n", 1)[0].strip()
        sentence = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0]
        return sentence if len(sentence) <= 160 else sentence[:157].rstrip() + "..."
