"""The resource service: what `resources/list`, `resources/templates/list`, `resources/read`
and `completion/complete` answer, from the registry's declarations.

Listings are sorted by URI (templates by their template string) and paged with opaque keyset
cursors (`paging.py`). `resources/list` merges the static resources with the instances that
templates with a `lister` contribute (a plugin's rows, computed at list time): each source
gives its next page after the cursor's URI, and the first page-size of them all, by URI, is
the page. A read looks the URI up among static resources first, then among the
namespaces (a prefix one reader serves whole: a mounted server's URIs, listed or not), then
matches it against the templates in registration order. Not found, a failing reader and an oversized
answer are `ResourceError`s the MCP layer turns into JSON-RPC errors.
"""

from __future__ import annotations

import base64
import logging
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import mcp_types as types

from prixfixe.core.calls import PluginCrash, call_plugin
from prixfixe.core.completion import EMPTY, run_completer
from prixfixe.core.paging import decode_cursor, encode_cursor, window
from prixfixe.core.registry import RegisteredTemplate
from prixfixe.declarations.resource import (
    ListedResource,
    Resource,
    ResourceBody,
    ResourceContext,
    ResourceTemplate,
)
from prixfixe.errors import (
    PrixfixeError,
    ResourceNotFoundError,
    ResourceReadError,
    ResourceTooLargeError,
    UnknownTemplateError,
)
from prixfixe.leash.redact import REDACTOR

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from prixfixe.config import ResourcesConfig
    from prixfixe.core.registry import Registry
    from prixfixe.declarations.host import Host

log = logging.getLogger(__name__)

RESOURCES_LISTING = "resources/list"
TEMPLATES_LISTING = "resources/templates/list"


@dataclass(frozen=True)
class Resolved:
    """A URI found: the declaration that serves it and the template's variables."""

    uri: str
    reader_owner: str
    declaration: Resource | ResourceTemplate
    variables: dict[str, str]


@dataclass(frozen=True)
class _Listing:
    version: int
    uris: list[str]  # listed static resources, sorted
    templates: list[str]  # template strings, sorted


class ResourceService:
    """Serves the registry's resources to MCP requests (one per app).

    `settings` is `[resources]` (page size, read bound); `hidden` the URIs kept out of
    `resources/list` though readable; `host` is what readers and completers see as `ctx.app`.
    """

    def __init__(
        self,
        registry: Registry,
        settings: ResourcesConfig,
        *,
        host: Host,
        hidden: frozenset[str] = frozenset(),
    ) -> None:
        self.registry = registry
        self.host = host
        self.page_size = settings.page_size
        self.max_read_bytes = settings.max_read_bytes
        self._hidden = hidden
        self._listing: _Listing | None = None
        self._wire: dict[str, types.Resource] = {}
        self._namespaces: dict[str, Resource] = {}

    def add_namespace(self, prefix: str, reader: Resource) -> None:
        """Serve every URI that starts with `prefix` (and is no static resource) with
        `reader`, whether a listed resource or template names it or not: a mounted server's
        URIs are its to answer. `reader.owner` names who serves them."""
        self._namespaces[prefix] = reader

    # -- listing ----------------------------------------------------------------------------

    def _current(self) -> _Listing:
        registry = self.registry
        if self._listing is None or self._listing.version != registry.version:
            uris = sorted(
                uri for uri, r in registry.resources.items() if r.listed and uri not in self._hidden
            )
            self._listing = _Listing(registry.version, uris, sorted(registry.templates))
            self._wire = {}
        return self._listing

    def listed_uris(self) -> list[str]:
        """The fixed resources `resources/list` shows (templates' listed instances aside)."""
        return list(self._current().uris)

    async def list_resources(self, cursor: str | None = None) -> types.ListResourcesResult:
        listing = self._current()
        listers = [t for t in self.registry.templates.values() if t.template.lister is not None]
        if not listers:
            page = window(RESOURCES_LISTING, listing.uris, cursor, self.page_size)
            resources = [self._wire_resource(uri) for uri in listing.uris[page.start : page.stop]]
            return types.ListResourcesResult(resources=resources, next_cursor=page.next_cursor)
        after = decode_cursor(RESOURCES_LISTING, cursor) if cursor else None
        # Each source's next `size + 1` after the cursor: the first `size` of them all, by URI,
        # are the page, and more remain exactly when there are more than `size` candidates.
        size = self.page_size
        start = 0 if after is None else bisect_right(listing.uris, after)
        found = {uri: self._wire_resource(uri) for uri in listing.uris[start : start + size + 1]}
        for entry in listers:
            for listed in await self._instances(entry.template, after, size + 1):
                if (after is None or listed.uri > after) and listed.uri not in found:
                    found[listed.uri] = listed
        chosen = sorted(found)[:size]
        more = len(found) > size
        return types.ListResourcesResult(
            resources=[found[uri] for uri in chosen],
            next_cursor=encode_cursor(RESOURCES_LISTING, chosen[-1]) if more else None,
        )

    async def _instances(
        self, template: ResourceTemplate, after: str | None, limit: int
    ) -> list[types.Resource]:
        """A template's listed instances after `after`. A lister that fails leaves its
        instances out of this page, logged: the rest of the listing (the health resource that
        would say what is wrong among it) stays reachable."""
        assert template.lister is not None
        context = ResourceContext(
            app=self.host, uri=template.uri_template, owner=template.owner, page_size=limit
        )
        try:
            return await call_plugin(
                template.lister,
                context,
                after,
                limit,
                what=f"lister of {template.uri_template}",
                convert=partial(_wire_listed, template),
            )
        except PluginCrash:
            return []  # logged, with its traceback, by call_plugin
        except PrixfixeError as exc:
            log.warning("lister of %s failed: %s", template.uri_template, exc.message)
            return []

    def list_templates(self, cursor: str | None = None) -> types.ListResourceTemplatesResult:
        listing = self._current()
        page = window(TEMPLATES_LISTING, listing.templates, cursor, self.page_size)
        templates = self.registry.templates
        chosen = listing.templates[page.start : page.stop]
        return types.ListResourceTemplatesResult(
            resource_templates=[_wire_template(templates[t].template) for t in chosen],
            next_cursor=page.next_cursor,
        )

    def _wire_resource(self, uri: str) -> types.Resource:
        # Built on first listing and kept until the registry changes: pages stay byte-stable.
        wire = self._wire.get(uri)
        if wire is None:
            r = self.registry.resource(uri)
            assert r is not None  # the listing holds only registered URIs
            wire = types.Resource(
                uri=r.uri,
                name=r.name,
                title=r.title,
                description=r.description,
                mime_type=r.mime_type,
                size=r.size,
                annotations=_annotations(r.audience, r.priority, r.last_modified),
            )
            self._wire[uri] = wire
        return wire

    # -- resolving and reading --------------------------------------------------------------

    def resolve(self, uri: str) -> Resolved:
        """The declaration serving `uri`; `ResourceNotFoundError` when none does."""
        registry = self.registry
        static = registry.resource(uri)
        if static is not None:
            return Resolved(uri, static.owner, static, {})
        for prefix, reader in self._namespaces.items():
            if uri.startswith(prefix):
                return Resolved(uri, reader.owner, reader, {})
        for entry in registry.templates.values():
            variables = _match(entry, uri)
            if variables is not None:
                return Resolved(uri, entry.template.owner, entry.template, variables)
        raise ResourceNotFoundError(uri)

    def exists(self, uri: str) -> bool:
        try:
            self.resolve(uri)
        except ResourceNotFoundError:
            return False
        return True

    async def read(
        self, uri: str, request: ServerRequestContext[Any] | None = None
    ) -> types.ReadResourceResult:
        """Read `uri`: text and blob contents with their MIME types, bounded in size."""
        found = self.resolve(uri)
        declared = found.declaration
        if isinstance(declared, Resource) and (declared.size or 0) > self.max_read_bytes:
            raise ResourceTooLargeError(uri, declared.size or 0, self.max_read_bytes)
        context = ResourceContext(
            app=self.host,
            uri=uri,
            owner=found.reader_owner,
            request=request,
            page_size=self.page_size,
        )
        try:
            contents = await call_plugin(
                declared.reader,
                context,
                found.variables,
                what=f"reader of {uri}",
                convert=partial(_contents, uri, declared.mime_type),
            )
        except PluginCrash as crash:
            raise ResourceReadError(uri, crash.reason) from crash.error
        size = sum(_size(c) for c in contents)
        if size > self.max_read_bytes:
            raise ResourceTooLargeError(uri, size, self.max_read_bytes)
        return types.ReadResourceResult(contents=contents)

    # -- completion -------------------------------------------------------------------------

    async def complete(
        self,
        template: str,
        argument: str,
        value: str,
        chosen: Mapping[str, str] | None = None,
        request: ServerRequestContext[Any] | None = None,
    ) -> types.Completion:
        """Candidate values for one variable of a registered template, filtered by prefix."""
        entry = self.registry.templates.get(template)
        if entry is None:
            raise UnknownTemplateError(
                f"no resource template {template!r} (resources/templates/list shows them)",
                uri=template,
            )
        names = entry.parsed.variable_names
        if argument not in names:
            raise UnknownTemplateError(
                f"resource template {template!r} has no variable {argument!r} "
                f"(variables: {', '.join(names)})",
                uri=template,
                argument=argument,
            )
        completer = entry.template.completions.get(argument)
        if completer is None:
            return EMPTY
        context = ResourceContext(
            app=self.host, uri=template, owner=entry.template.owner, request=request
        )
        try:
            return await run_completer(
                completer, context, value, chosen, what=f"completer of {template} {{{argument}}}"
            )
        except PluginCrash as crash:
            raise ResourceReadError(
                template, f"completing {argument!r} failed: {crash.reason}"
            ) from crash.error


def _match(entry: RegisteredTemplate, uri: str) -> dict[str, str] | None:
    if not uri.startswith(entry.prefix):
        return None
    found = entry.parsed.match(uri)
    if found is None:
        return None
    # Exploded variables come back as lists; readers get text, so join them as the URI did.
    return {k: v if isinstance(v, str) else ",".join(v) for k, v in found.items()}


def _annotations(
    audience: tuple[str, ...], priority: float | None, last_modified: str | None
) -> types.Annotations | None:
    if not audience and priority is None and last_modified is None:
        return None
    return types.Annotations(
        audience=list(audience) or None,
        priority=priority,
        last_modified=last_modified,
    )


def _wire_listed(template: ResourceTemplate, output: object) -> list[types.Resource]:
    """A lister's answer as wire resources; anything but a sequence of `ListedResource` is
    the lister's error."""
    if not isinstance(output, Sequence) or not all(
        isinstance(item, ListedResource) for item in output
    ):
        raise TypeError(
            f"the lister returned {type(output).__name__}; listers return a list of ListedResource"
        )
    return [
        types.Resource(
            uri=item.uri,
            name=item.name,
            title=item.title,
            description=item.description,
            mime_type=item.mime_type or template.mime_type,
            size=item.size,
            annotations=_annotations(
                item.audience or template.audience, item.priority, item.last_modified
            ),
        )
        for item in output
    ]


def _wire_template(t: ResourceTemplate) -> types.ResourceTemplate:
    return types.ResourceTemplate(
        uri_template=t.uri_template,
        name=t.name,
        title=t.title,
        description=t.description,
        mime_type=t.mime_type,
        annotations=_annotations(t.audience, t.priority, None),
    )


WireContents = types.TextResourceContents | types.BlobResourceContents


def _contents(uri: str, default_mime: str | None, output: object) -> list[WireContents]:
    """What a reader returned, as wire contents. A `ReadResourceResult` (a reader forwarding
    another server's answer: a mounted server's) is kept as it is, its text redacted."""
    if isinstance(output, types.ReadResourceResult):
        return [_redacted(c) for c in output.contents]
    return [_wire_contents(uri, default_mime, b) for b in _bodies(uri, output)]


def _redacted(contents: WireContents) -> WireContents:
    if isinstance(contents, types.TextResourceContents):
        masked = REDACTOR.redact(contents.text)
        if masked != contents.text:
            return contents.model_copy(update={"text": masked})
    return contents


def _size(contents: WireContents) -> int:
    if isinstance(contents, types.BlobResourceContents):
        blob = contents.blob  # base64: 4 characters per 3 bytes, '=' padding the last
        return len(blob) * 3 // 4 - blob[-2:].count("=")
    return len(contents.text.encode())


def _bodies(uri: str, output: object) -> list[ResourceBody]:
    """What a reader returned, as content items; a reader's wrong type is its read error."""
    if isinstance(output, str):
        return [ResourceBody(text=output)]
    if isinstance(output, bytes | bytearray | memoryview):
        return [ResourceBody(blob=bytes(output))]
    if isinstance(output, ResourceBody):
        return [output]
    if isinstance(output, list | tuple) and all(isinstance(b, ResourceBody) for b in output):
        return list(output)
    raise ResourceReadError(
        uri,
        f"the reader returned {type(output).__name__}; readers return str, bytes, "
        "ResourceBody or a list of ResourceBody",
    )


def _wire_contents(
    uri: str, default_mime: str | None, body: ResourceBody
) -> types.TextResourceContents | types.BlobResourceContents:
    target = body.uri or uri
    if body.blob is not None:
        return types.BlobResourceContents(
            uri=target,
            mime_type=body.mime_type or default_mime or "application/octet-stream",
            blob=base64.b64encode(body.blob).decode("ascii"),
        )
    # Every text a read returns passes the redactor: a resource (a kept report, a file a
    # plugin serves) never shows a registered secret value.
    return types.TextResourceContents(
        uri=target,
        mime_type=body.mime_type or default_mime or "text/plain",
        text=REDACTOR.redact(body.text or ""),
    )
