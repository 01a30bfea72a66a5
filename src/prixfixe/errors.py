"""The one exception tree, and the one place it becomes a JSON-RPC error.

Every message names what was wrong (the tool, the field, the file and key) so that a person
or a model can fix the input without reading a traceback.
"""

from __future__ import annotations

from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS


class PrixfixeError(Exception):
    """Base of every error prixfixe raises on purpose."""

    code: int = INTERNAL_ERROR

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class ConfigError(PrixfixeError):
    """The configuration file or environment holds something invalid."""

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None) -> None:
        where = ", ".join(p for p in (file and f"file {file}", key and f"key {key!r}") if p)
        super().__init__(f"invalid configuration ({where}): {message}" if where else message)
        self.data = {k: v for k, v in (("file", file), ("key", key)) if v is not None}


class RegistryError(PrixfixeError):
    """A plugin declared something the registry cannot accept (duplicate name, bad facet)."""


class PluginError(PrixfixeError):
    """A plugin could not be loaded."""


class UnknownToolError(PrixfixeError):
    """A tool name that no loaded plugin registered (or one this connection may not call)."""

    code = INVALID_PARAMS

    def __init__(self, name: str, suggestions: list[str] | None = None) -> None:
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(
            f"unknown tool {name!r}{hint} (find tools with tool_search)",
            name=name,
            suggestions=suggestions or [],
        )


class ToolDeniedError(PrixfixeError):
    """The tool's facet is denied by configuration (`[mcp] deny`)."""

    code = INVALID_PARAMS

    def __init__(self, name: str, facet: str, source: str) -> None:
        super().__init__(
            f"tool {name!r} is in facet {facet!r}, which is denied by {source}",
            name=name,
            facet=facet,
        )


class InvalidArgumentsError(PrixfixeError):
    """Arguments that do not match a tool's input schema; `problems` names each field."""

    code = INVALID_PARAMS

    def __init__(self, tool: str, problems: list[str]) -> None:
        listed = "; ".join(problems)
        super().__init__(f"invalid arguments for {tool!r}: {listed}", tool=tool, problems=problems)
        self.problems = problems


class ToolRefusedError(PrixfixeError):
    """A request the tool understands but will not carry out (e.g. tool_invoke on the trio)."""

    code = INVALID_PARAMS


def to_mcp_error(error: PrixfixeError) -> MCPError:
    """Map a prixfixe error to the JSON-RPC error the SDK sends on the wire."""
    return MCPError(code=error.code, message=error.message, data=error.data or None)
