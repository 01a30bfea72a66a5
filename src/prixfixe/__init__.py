"""prixfixe: an MCP server whose cost to an agent's context stays flat however much it can do.

A plugin needs only what is exported here: `hookimpl`, `Tool`, `ToolContext`, `ToolResult`;
for the store `StoreKind` and `StoreMigration`; for resources `Resource`, `ResourceTemplate`,
`ResourceContext` and `ResourceBody`; for routines `StepType`, `StepContext`, `StepOutput`,
`StepFailure` and `Secret`.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("prixfixe")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

from prixfixe.errors import StepFailure
from prixfixe.hookspecs import hookimpl
from prixfixe.kinds import StoreKind, StoreMigration
from prixfixe.resource import Resource, ResourceBody, ResourceContext, ResourceTemplate
from prixfixe.secrets import Secret
from prixfixe.steps import StepContext, StepOutput, StepType
from prixfixe.tool import Tool, ToolContext, ToolResult

__all__ = [
    "Resource",
    "ResourceBody",
    "ResourceContext",
    "ResourceTemplate",
    "Secret",
    "StepContext",
    "StepFailure",
    "StepOutput",
    "StepType",
    "StoreKind",
    "StoreMigration",
    "Tool",
    "ToolContext",
    "ToolResult",
    "__version__",
    "hookimpl",
]
