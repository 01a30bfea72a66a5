"""What a plugin declares to publish data as MCP resources: `Resource` (one URI),
`ResourceTemplate` (an RFC 6570 URI template), the reader's context and what a reader returns.

Like `tool.py`, this module sits low on purpose: a plugin imports it (through `prixfixe`) and
little else. The resource service (`prixfixe.resources`) reads these declarations.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from prixfixe.app import App

#: The scheme of prixfixe's own resources (`prixfixe://system/health`, ...).
SCHEME = "prixfixe"
#: An absolute URI: a scheme (RFC 3986 section 3.1), a colon, then anything without spaces.
URI_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$")

Audience: TypeAlias = Literal["user", "assistant"]


@dataclass(frozen=True)
class ResourceContext:
    """What a reader or completer may reach: the running app, the URI being read, the
    plugin that declared the resource, and when called over MCP the request."""

    app: App
    uri: str = ""
    owner: str = ""
    request: ServerRequestContext[Any] | None = None


@dataclass(frozen=True)
class ResourceBody:
    """One content item of a read: `text` or `blob` (raw bytes; sent base64-encoded).

    `mime_type` defaults to the declaration's; `uri` defaults to the URI that was read (set
    it only for a sub-resource)."""

    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None
    uri: str | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise TypeError("a ResourceBody holds exactly one of text or blob")


ReadOutput: TypeAlias = "str | bytes | ResourceBody | Sequence[ResourceBody]"
#: A reader takes the context and the URI's template variables ({} for a static resource);
#: it may be sync or async. Raise `prixfixe.errors.ResourceNotFoundError` for an instance
#: that does not exist (a template matched, but there is no such record).
ResourceReader: TypeAlias = Callable[
    [ResourceContext, Mapping[str, str]], "Awaitable[ReadOutput] | ReadOutput"
]
#: A completer takes the context, the partial value typed so far and the other arguments
#: already chosen, and returns candidate values (sync or async).
Completer: TypeAlias = Callable[
    [ResourceContext, str, Mapping[str, str]], "Awaitable[Sequence[str]] | Sequence[str]"
]


@dataclass(frozen=True, kw_only=True)
class Resource:
    """One resource at a fixed URI, declared in full.

    `size` is the content's size in bytes when it is known without reading; a read is refused
    before the reader runs when a declared size is over the configured bound. `listed=False`
    keeps it out of `resources/list` (still readable by its URI)."""

    uri: str
    name: str
    reader: ResourceReader
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    audience: tuple[Audience, ...] = ()
    priority: float | None = None
    last_modified: str | None = None
    listed: bool = True
    owner: str = field(default="", compare=False)


@dataclass(frozen=True, kw_only=True)
class ResourceTemplate:
    """A family of resources named by an RFC 6570 URI template, e.g.
    `prixfixe://store/{kind}/{id}`. A read whose URI matches the template calls `reader` with
    the template's variables. `completions` maps a variable name to a completer, which
    `completion/complete` calls."""

    uri_template: str
    name: str
    reader: ResourceReader
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    audience: tuple[Audience, ...] = ()
    priority: float | None = None
    completions: Mapping[str, Completer] = field(default_factory=dict)
    owner: str = field(default="", compare=False)
