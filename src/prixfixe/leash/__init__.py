"""The leash: the one gate every subprocess, file open and outbound connection passes.

The person who wrote the configuration is trusted; MCP clients, repository content, files,
documents, plugin output and mounted servers are not. Each part of the leash checks one kind
of authority against a grant that trusted party made (or that configured steps and plugins
declare): `exec` (command lines), `fs` (file roots), `net` (hosts); `env` builds a child's
minimal environment and `redact` masks every resolved secret wherever text leaves.
See docs/security.md.
"""

from prixfixe.leash.exec import (
    MAX_OUTPUT_BYTES,
    Completed,
    ExecGate,
    Grant,
    make_grant,
    program_key,
)

__all__ = ["MAX_OUTPUT_BYTES", "Completed", "ExecGate", "Grant", "make_grant", "program_key"]
