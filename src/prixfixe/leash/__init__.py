"""The leash: the one gate every subprocess, file open and outbound connection passes.

The person who wrote the configuration is trusted; MCP clients, repository content, files,
documents, plugin output and mounted servers are not. Each part of the leash checks one kind
of authority against a grant that trusted party made (or that configured steps and plugins
declare): `exec` (command lines), `fs` (file roots), `net` (hosts); `env` builds a child's
minimal environment and `redact` masks every resolved secret wherever text leaves.
See docs/security.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prixfixe.leash.exec import (
        MAX_OUTPUT_BYTES,
        Completed,
        ExecGate,
        Grant,
        make_grant,
        program_key,
    )

_FROM_EXEC = frozenset(
    ("MAX_OUTPUT_BYTES", "Completed", "ExecGate", "Grant", "make_grant", "program_key")
)


if not TYPE_CHECKING:  # a type checker reads the imports above, and flags any other name

    def __getattr__(name: str) -> Any:
        # `exec` is imported on first use: the CLI imports `redact` (and so this package) for
        # every command, and `exec` brings anyio and pydantic along.
        if name not in _FROM_EXEC:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from prixfixe.leash import exec as gate

        value = getattr(gate, name)
        globals()[name] = value
        return value


__all__ = ["MAX_OUTPUT_BYTES", "Completed", "ExecGate", "Grant", "make_grant", "program_key"]
