"""What a plugin declares to publish data as MCP resources: `Resource` (one URI),
`ResourceTemplate` (an RFC 6570 URI template, optionally with a lister of its instances, each
a `ListedResource`), the reader's context and what a reader returns.

Like `tool.py`, this module sits low on purpose: a plugin imports it (through `prixfixe`) and
little else. The resource service (`prixfixe.resources`) reads these declarations.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from prixfixe.declarations.declaration_type import DeclarationType
from prixfixe.errors import RegistryError

if TYPE_CHECKING:
    from mcp import UriTemplate
    from mcp.server.context import ServerRequestContext

    from prixfixe.declarations.host import Host

#: The scheme of prixfixe's own resources (`prixfixe://system/health`, ...).
SCHEME = "prixfixe"
#: Where mounted servers' resources live (`prixfixe://servers/NAME/<the server's own URI>`);
#: only a mount, whose owner is `server:NAME`, may declare a URI under it.
SERVERS_NAMESPACE = "prixfixe://servers/"
MOUNT_OWNER_PREFIX = "server:"
#: An absolute URI: a scheme (RFC 3986 section 3.1), a colon, then anything without spaces.
URI_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$")

Audience: TypeAlias = Literal["user", "assistant"]


@dataclass(frozen=True)
class ResourceContext:
    """What a reader or completer may reach: the running app, the URI being read, the
    plugin that declared the resource, and when called over MCP the request."""

    app: Host
    uri: str = ""
    owner: str = ""
    request: ServerRequestContext[Any] | None = None
    #: How many entries a paged read (a listing a reader serves) returns at a time:
    #: `[resources] page_size`, as in `resources/list`.
    page_size: int = 100


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
class ListedResource:
    """One instance of a template that `resources/list` shows (see `ResourceTemplate.lister`):
    the wire fields of a listed resource. `mime_type` and `audience` default to the
    template's."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    audience: tuple[Audience, ...] = ()
    priority: float | None = None
    last_modified: str | None = None


#: A lister takes the context, the URI the listing continues after (None: from the start) and
#: how many entries to return at most; it returns the template's instances whose URIs sort
#: after that one, sorted by URI (sync or async).
ResourceLister: TypeAlias = Callable[
    [ResourceContext, "str | None", int],
    "Awaitable[Sequence[ListedResource]] | Sequence[ListedResource]",
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
    `completion/complete` calls.

    `lister`, when given, lists the template's instances in `resources/list`, computed at list
    time from the plugin's own data (rows in its store tables) rather than one `Resource`
    declared per row: the service asks it for one page at a time, after the cursor's URI."""

    uri_template: str
    name: str
    reader: ResourceReader
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    audience: tuple[Audience, ...] = ()
    priority: float | None = None
    completions: Mapping[str, Completer] = field(default_factory=dict)
    lister: ResourceLister | None = None
    owner: str = field(default="", compare=False)


# -- registration ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RegisteredTemplate:
    """A resource template plus its parsed RFC 6570 form (for expanding and matching)."""

    template: ResourceTemplate
    parsed: UriTemplate

    @property
    def prefix(self) -> str:
        """The literal text before the first expression: a cheap filter before matching."""
        return self.template.uri_template.split("{", 1)[0]


def _admit_resource(resource: Resource, owner: str) -> Resource:
    where = f"plugin {owner!r} resource {resource.uri!r}"
    if not isinstance(resource.uri, str) or not URI_PATTERN.match(resource.uri):
        raise RegistryError(f"{where}: the URI must be absolute (scheme:...) without spaces")
    if "{" in resource.uri:
        raise RegistryError(f"{where}: a URI with '{{' is a template; declare a ResourceTemplate")
    _check_namespace(resource.uri, owner, where)
    _check_common(resource.name, resource.reader, resource.priority, resource.audience, where)
    if resource.size is not None and (isinstance(resource.size, bool) or resource.size < 0):
        raise RegistryError(f"{where}: size must be a number of bytes >= 0")
    return replace(resource, owner=owner)


def uri_templates() -> ModuleType:
    """The SDK's RFC 6570 module (`UriTemplate`, `InvalidUriTemplate`), without the SDK.

    `from mcp import UriTemplate` runs the package's `__init__`, which imports the whole SDK,
    client and server (over a second of CPU): a command that builds the app only to query the
    store would pay it for parsing a few templates. The module itself needs the standard
    library alone, so it is loaded from its file in the installed SDK, once, under a private
    name (the SDK's own copy, if it is imported later, is untouched). Should a future SDK move
    it, the package import is the fallback."""
    global _URI_TEMPLATES
    if _URI_TEMPLATES is not None:
        return _URI_TEMPLATES
    import importlib.util
    import sys

    sdk = importlib.util.find_spec("mcp")  # finds the package; runs none of it
    places = (sdk.submodule_search_locations or []) if sdk is not None else []
    found = [p for w in places if (p := Path(w, "shared", "uri_template.py")).is_file()]
    spec = importlib.util.spec_from_file_location(_PRIVATE_NAME, found[0]) if found else None
    if spec is None or spec.loader is None:
        import mcp.shared.uri_template as module

        _URI_TEMPLATES = module
        return module
    module = importlib.util.module_from_spec(spec)
    sys.modules[_PRIVATE_NAME] = module  # dataclasses look their module up while defined
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[_PRIVATE_NAME]
        raise
    _URI_TEMPLATES = module
    return module


_PRIVATE_NAME = "prixfixe._sdk_uri_template"
_URI_TEMPLATES: ModuleType | None = None


def _admit_template(template: ResourceTemplate, owner: str) -> RegisteredTemplate:
    sdk = uri_templates()
    UriTemplate, InvalidUriTemplate = sdk.UriTemplate, sdk.InvalidUriTemplate

    where = f"plugin {owner!r} resource template {template.uri_template!r}"
    try:
        parsed = UriTemplate.parse(template.uri_template)
    except InvalidUriTemplate as exc:
        raise RegistryError(f"{where}: not an RFC 6570 template: {exc}") from None
    if not URI_PATTERN.match(template.uri_template.replace("{", "x").replace("}", "x")):
        raise RegistryError(f"{where}: the template must expand to an absolute URI")
    if not parsed.variables:
        raise RegistryError(f"{where}: a template needs at least one variable; use a Resource")
    _check_namespace(template.uri_template, owner, where)
    _check_common(template.name, template.reader, template.priority, template.audience, where)
    names = set(parsed.variable_names)
    for name, completer in template.completions.items():
        if name not in names:
            raise RegistryError(
                f"{where}: completion for {name!r}, which is not a variable "
                f"(variables: {', '.join(parsed.variable_names)})"
            )
        if not callable(completer):
            raise RegistryError(f"{where}: the completer for {name!r} is not callable")
    if template.lister is not None and not callable(template.lister):
        raise RegistryError(f"{where}: lister must be callable")
    return RegisteredTemplate(replace(template, owner=owner), parsed)


def _check_namespace(uri: str, owner: str, where: str) -> None:
    if uri.startswith(SERVERS_NAMESPACE) and not owner.startswith(MOUNT_OWNER_PREFIX):
        raise RegistryError(
            f"{where}: {SERVERS_NAMESPACE} is reserved for mounted servers' resources"
        )


def _check_common(
    name: str, reader: object, priority: float | None, audience: tuple[str, ...], where: str
) -> None:
    if not isinstance(name, str) or not name.strip():
        raise RegistryError(f"{where}: name must be a non-empty string")
    if not callable(reader):
        raise RegistryError(f"{where}: reader must be callable")
    if priority is not None and not 0 <= priority <= 1:
        raise RegistryError(f"{where}: priority must be between 0 and 1, got {priority!r}")
    for who in audience:
        if who not in ("user", "assistant"):
            raise RegistryError(f"{where}: audience holds 'user' or 'assistant', got {who!r}")


#: Resources and templates share the `register_resources` hook; each object goes to its type.
RESOURCES: DeclarationType[Resource, Resource] = DeclarationType(
    declared=Resource,
    hook="register_resources",
    field="resources",
    what="resource",
    key=lambda resource: resource.uri,
    admit=_admit_resource,
    listing="resources",
)
RESOURCE_TEMPLATES: DeclarationType[ResourceTemplate, RegisteredTemplate] = DeclarationType(
    declared=ResourceTemplate,
    hook="register_resources",
    field="templates",
    what="resource template",
    key=lambda template: template.uri_template,
    admit=_admit_template,
    clash=lambda owner, name, first: (
        f"plugin {owner!r} resource template {name!r} is already registered by plugin {first!r}"
    ),
    listing="resources",
    refreshes_index=True,
)
