"""A mounted server's resources and resource templates as prixfixe declarations, under URIs
namespaced by the server: `prixfixe://servers/NAME/` followed by the server's own URI,
verbatim (`prixfixe://servers/docs/file:///notes/a.md`).

Why a verbatim suffix rather than a percent-encoded one: it is the one mapping under which a
template stays a template. `prixfixe://servers/docs/` + `file:///{+path}` is still an RFC 6570
template with the very expressions the server declared (the prefix is a literal), its
expansion is the prefix plus the server's own expansion, and so mapping any URI back is
removing the prefix, byte for byte, whatever the template's operators. Percent-encoding the
server's URI would turn its template's literals into escapes but leave its expressions'
expansions unescaped, so no string operation could undo it. The result is a valid URI: the
server's URI lands in the path (where `:` and `//` are allowed), its query and fragment stay
its query and fragment. `prixfixe://servers/` is prixfixe's own namespace and a server name
holds no `/`, so two servers, or a server and prixfixe, never share a URI.

Every URI under a server's prefix is forwarded to it, listed or not (a tool's answer may link
a resource its server does not list); listed ones carry the server's name, title, MIME type,
size and annotations. A read returns the server's contents unchanged but for each URI, which
is namespaced again. A resource or template prixfixe cannot admit (a URI with a space, a
template without a variable) is left out and logged, never the server's whole list.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import mcp_types as types

from prixfixe.declarations.resource import (
    RESOURCE_TEMPLATES,
    RESOURCES,
    SERVERS_NAMESPACE,
    Resource,
    ResourceContext,
    ResourceTemplate,
)
from prixfixe.errors import RegistryError
from prixfixe.servers.completion import UpstreamComplete, forwarding_completer

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

log = logging.getLogger("prixfixe.servers")

D = TypeVar("D")
A = TypeVar("A")

#: Where every mounted server's URIs live.
NAMESPACE = SERVERS_NAMESPACE

#: Reads upstream URI `uri` of the server for a request (None outside MCP); the answer as the
#: server gave it.
UpstreamRead: TypeAlias = Callable[
    [str, "ServerRequestContext[Any] | None"], Awaitable[types.ReadResourceResult]
]


def prefix_of(server: str) -> str:
    return f"{NAMESPACE}{server}/"


def mounted_uri(server: str, uri: str) -> str:
    """The URI (or template) prixfixe serves upstream `uri` of `server` under."""
    return prefix_of(server) + uri


def split_uri(uri: str) -> tuple[str, str] | None:
    """(server, upstream URI) for a mounted URI; None for any other."""
    if not uri.startswith(NAMESPACE):
        return None
    server, sep, rest = uri[len(NAMESPACE) :].partition("/")
    return (server, rest) if sep and server else None


def remap(server: str, result: types.ReadResourceResult) -> types.ReadResourceResult:
    """The server's answer with each content's URI namespaced; nothing else changes."""
    contents = [c.model_copy(update={"uri": mounted_uri(server, c.uri)}) for c in result.contents]
    return result.model_copy(update={"contents": contents})


def forwarding_reader(server: str, owner: str, read: UpstreamRead) -> Resource:
    """The reader of every URI under the server's prefix (see `ResourceService.add_namespace`)."""

    async def reader(ctx: ResourceContext, variables: Mapping[str, str]) -> Any:
        found = split_uri(ctx.uri)
        assert found is not None  # only its prefix reaches it
        return remap(server, await read(found[1], ctx.request))

    return Resource(
        uri=prefix_of(server),
        name=f"{server} resources",
        reader=reader,
        owner=owner,
    )


def mounted_resources(
    server: str,
    owner: str,
    resources: list[types.Resource],
    templates: list[types.ResourceTemplate],
    read: UpstreamRead,
    complete: UpstreamComplete,
) -> tuple[list[Resource], list[ResourceTemplate]]:
    """The server's resources and templates as declarations, each admitted on its own (one
    prixfixe cannot take is logged and left out)."""
    reader = forwarding_reader(server, owner, read).reader
    statics: dict[str, Resource] = {}
    for r in resources:
        hints = r.annotations
        declared = Resource(
            uri=mounted_uri(server, r.uri),
            name=r.name,
            title=r.title,
            description=r.description,
            mime_type=r.mime_type,
            size=r.size,
            audience=tuple(hints.audience or ()) if hints else (),
            priority=hints.priority if hints else None,
            last_modified=hints.last_modified if hints else None,
            reader=reader,
        )
        if _admitted(server, declared, RESOURCES.admit, owner, r.uri) is not None:
            statics.setdefault(declared.uri, declared)
    families: dict[str, ResourceTemplate] = {}
    for t in templates:
        hints = t.annotations
        family = ResourceTemplate(
            uri_template=mounted_uri(server, t.uri_template),
            name=t.name,
            title=t.title,
            description=t.description,
            mime_type=t.mime_type,
            audience=tuple(hints.audience or ()) if hints else (),
            priority=hints.priority if hints else None,
            reader=reader,
        )
        admitted = _admitted(server, family, RESOURCE_TEMPLATES.admit, owner, t.uri_template)
        if admitted is None:
            continue
        completers: dict[str, Any] = {
            v: forwarding_completer(complete, t.uri_template, v)
            for v in admitted.parsed.variable_names
        }
        families.setdefault(family.uri_template, replace(family, completions=completers))
    return list(statics.values()), list(families.values())


def _admitted(
    server: str, declared: D, admit: Callable[[D, str], A], owner: str, uri: str
) -> A | None:
    """What the registry's admission makes of `declared`; None (logged) if it refuses it."""
    try:
        return admit(declared, owner)
    except RegistryError as exc:
        log.warning("[%s] left out resource %r: %s", server, uri, exc.message)
        return None
