"""prixfixe: an MCP server whose cost to an agent's context stays flat however much it can do.

A plugin needs only what is exported here: `hookimpl`, `Tool`, `ToolContext`, `ToolResult`;
for the store `StoreKind` and `StoreMigration`; for resources `Resource`, `ResourceTemplate`,
`ResourceContext` and `ResourceBody`; for routines `StepType`, `StepContext`, `StepOutput`,
`StepFailure` and `Secret`; for prompts `Prompt`, `PromptArgument`, `PromptMessage` and
`PromptContext`; and the content types `Text`, `Image`, `Audio`, `Embedded` and
`ResourceLink` (prompt messages and tool results).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prixfixe.declarations.content import Audio, Embedded, Image, ResourceLink, Text
    from prixfixe.declarations.curation import CurationRule, PropertyInfo
    from prixfixe.declarations.hookspecs import hookimpl
    from prixfixe.declarations.kinds import StoreKind, StoreMigration
    from prixfixe.declarations.prompt import Prompt, PromptArgument, PromptContext, PromptMessage
    from prixfixe.declarations.resource import (
        ListedResource,
        Resource,
        ResourceBody,
        ResourceContext,
        ResourceTemplate,
    )
    from prixfixe.declarations.steps import StepContext, StepOutput, StepType
    from prixfixe.declarations.tool import Tool, ToolContext, ToolResult
    from prixfixe.errors import StepFailure
    from prixfixe.secrets import Secret

    __version__: str

# Each name is imported when first read, so that `prixfixe --help` (or any module of the
# package) does not pay for the declarations' pydantic models and the MCP wire types.
_EXPORTS = {
    "Audio": "prixfixe.declarations.content",
    "Embedded": "prixfixe.declarations.content",
    "Image": "prixfixe.declarations.content",
    "ResourceLink": "prixfixe.declarations.content",
    "Text": "prixfixe.declarations.content",
    "CurationRule": "prixfixe.declarations.curation",
    "PropertyInfo": "prixfixe.declarations.curation",
    "hookimpl": "prixfixe.declarations.hookspecs",
    "StoreKind": "prixfixe.declarations.kinds",
    "StoreMigration": "prixfixe.declarations.kinds",
    "Prompt": "prixfixe.declarations.prompt",
    "PromptArgument": "prixfixe.declarations.prompt",
    "PromptContext": "prixfixe.declarations.prompt",
    "PromptMessage": "prixfixe.declarations.prompt",
    "ListedResource": "prixfixe.declarations.resource",
    "Resource": "prixfixe.declarations.resource",
    "ResourceBody": "prixfixe.declarations.resource",
    "ResourceContext": "prixfixe.declarations.resource",
    "ResourceTemplate": "prixfixe.declarations.resource",
    "StepContext": "prixfixe.declarations.steps",
    "StepOutput": "prixfixe.declarations.steps",
    "StepType": "prixfixe.declarations.steps",
    "Tool": "prixfixe.declarations.tool",
    "ToolContext": "prixfixe.declarations.tool",
    "ToolResult": "prixfixe.declarations.tool",
    "StepFailure": "prixfixe.errors",
    "Secret": "prixfixe.secrets",
}


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("prixfixe")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0+unknown"


if not TYPE_CHECKING:  # a type checker reads the imports above, and flags any other name

    def __getattr__(name: str) -> Any:
        if name == "__version__":
            value: Any = _installed_version()
        elif name in _EXPORTS:
            value = getattr(import_module(_EXPORTS[name]), name)
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value  # read once: later reads are plain attribute lookups
        return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS, "__version__"])


__all__ = [
    "Audio",
    "CurationRule",
    "Embedded",
    "Image",
    "ListedResource",
    "Prompt",
    "PromptArgument",
    "PromptContext",
    "PromptMessage",
    "PropertyInfo",
    "Resource",
    "ResourceBody",
    "ResourceContext",
    "ResourceLink",
    "ResourceTemplate",
    "Secret",
    "StepContext",
    "StepFailure",
    "StepOutput",
    "StepType",
    "StoreKind",
    "StoreMigration",
    "Text",
    "Tool",
    "ToolContext",
    "ToolResult",
    "__version__",
    "hookimpl",
]
