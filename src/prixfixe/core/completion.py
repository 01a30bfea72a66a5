"""Running a completer: the one place `completion/complete` answers are shaped, for resource
template variables and prompt arguments alike.

A completer returns candidate values; they are de-duplicated, filtered by the typed prefix and
capped at 100 per answer (the MCP limit) with `total` and `hasMore` saying how many matched.
A completer that returns a whole `Completion` (one forwarding another server's answer: a
mounted server's) has it passed on as it is, only capped.
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
    completer: Callable[[Any, str, Mapping[str, str]], Awaitable[Any] | Any],
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
        convert=lambda found: _answer(found, value),
    )


def _answer(found: Sequence[str] | types.Completion, value: str) -> types.Completion:
    if not isinstance(found, types.Completion):
        return shape(found, value)
    if len(found.values) <= MAX_COMPLETIONS:
        return found
    total = found.total if found.total is not None else len(found.values)
    return types.Completion(values=found.values[:MAX_COMPLETIONS], total=total, has_more=True)


def shape(candidates: Sequence[str], value: str) -> types.Completion:
    matches = [v for v in dict.fromkeys(candidates) if v.startswith(value)]
    return types.Completion(
        values=matches[:MAX_COMPLETIONS],
        total=len(matches),
        has_more=len(matches) > MAX_COMPLETIONS,
    )
