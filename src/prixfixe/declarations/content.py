"""Content a tool result or a prompt message carries besides plain text: images, audio,
embedded resources and links to resources. Declared with prixfixe's types, so a plugin does
not build the SDK's wire models; `to_wire` turns them into MCP content blocks.

Like `tool.py`, this module sits low: a plugin imports it (through `prixfixe`) and little else.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import mcp_types as types


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Image:
    """An image; `data` is the raw bytes (sent base64-encoded)."""

    data: bytes
    mime_type: str = "image/png"


@dataclass(frozen=True)
class Audio:
    """Audio; `data` is the raw bytes (sent base64-encoded)."""

    data: bytes
    mime_type: str = "audio/wav"


@dataclass(frozen=True)
class Embedded:
    """A resource's contents, embedded: exactly one of `text` or `blob` (raw bytes)."""

    uri: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise TypeError("an Embedded resource holds exactly one of text or blob")


@dataclass(frozen=True)
class ResourceLink:
    """A link to a resource the client can read (not its contents)."""

    uri: str
    name: str
    mime_type: str | None = None
    description: str | None = None


Content: TypeAlias = Text | Image | Audio | Embedded | ResourceLink
CONTENT_TYPES = (Text, Image, Audio, Embedded, ResourceLink)


def to_wire(item: Content) -> types.ContentBlock:
    """The MCP content block for one content item."""
    import mcp_types as types

    if isinstance(item, Text):
        return types.TextContent(type="text", text=item.text)
    if isinstance(item, Image):
        return types.ImageContent(type="image", data=_b64(item.data), mime_type=item.mime_type)
    if isinstance(item, Audio):
        return types.AudioContent(type="audio", data=_b64(item.data), mime_type=item.mime_type)
    if isinstance(item, Embedded):
        contents: types.TextResourceContents | types.BlobResourceContents
        if item.blob is not None:
            contents = types.BlobResourceContents(
                uri=item.uri,
                mime_type=item.mime_type or "application/octet-stream",
                blob=_b64(item.blob),
            )
        else:
            contents = types.TextResourceContents(
                uri=item.uri, mime_type=item.mime_type or "text/plain", text=item.text or ""
            )
        return types.EmbeddedResource(type="resource", resource=contents)
    if isinstance(item, ResourceLink):
        return types.ResourceLink(
            type="resource_link",
            uri=item.uri,
            name=item.name,
            mime_type=item.mime_type,
            description=item.description,
        )
    kinds = "Text, Image, Audio, Embedded, ResourceLink"
    raise TypeError(f"{item!r} is not prixfixe content ({kinds})")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
