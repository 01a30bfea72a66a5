"""Running a completer: the one place `completion/complete` answers are shaped, for resource
template variables and prompt arguments alike.

A completer returns candidate values; they are de-duplicated, filtered by the typed prefix and
capped at 100 per answer (the MCP limit) with `total` and `hasMore` saying how many matched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import mcp_types as types

from prixfixe.core.calls import call_plugin

#: The most values one `completion/complete` answer may carry (MCP spec).
MAX_COMPLETIONS = 100

EMPTY = types.Completion(values=[], total=0, has_more=False)


async def run_completer(
    completer: Callable[[Any, str, Mapping[str, str]], Awaitable[Sequence[str]] | Sequence[str]],
    context: Any,
    value: str,
    chosen: Mapping[str, str] | None,
    *,
    what: str,
) -> types.Completion:
    """Call `completer` (sync or async; see `prixfixe.core.calls`) and shape its candidates
    into an answer. `what` names the completer in errors and logs."""
    return await call_plugin(
        completer,
        context,
        value,
        dict(chosen or {}),
        what=what,
        convert=lambda found: shape(found, value),
    )


def shape(candidates: Sequence[str], value: str) -> types.Completion:
    matches = [v for v in dict.fromkeys(candidates) if v.startswith(value)]
    return types.Completion(
        values=matches[:MAX_COMPLETIONS],
        total=len(matches),
        has_more=len(matches) > MAX_COMPLETIONS,
    )
