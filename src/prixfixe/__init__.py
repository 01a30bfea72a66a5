"""prixfixe: an MCP server whose cost to an agent's context stays flat however much it can do.

A plugin needs only what is exported here: `hookimpl`, `Tool`, `ToolContext`, `ToolResult`;
for the store `StoreKind` and `StoreMigration`; for resources `Resource`, `ResourceTemplate`,
`ResourceContext` and `ResourceBody`; for routines `StepType`, `StepContext`, `StepOutput`,
`StepFailure` and `Secret`; for prompts `Prompt`, `PromptArgument`, `PromptMessage` and
`PromptContext`; and the content types `Text`, `Image`, `Audio`, `Embedded` and
`ResourceLink` (prompt messages and tool results).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("prixfixe")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

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
