"""Completion forwarded to a mounted server: of a resource template's variable or of a
prompt's argument, answered with the server's whole `Completion` (passed on as it is by
`core/completion.py`), or an empty one when the server offers none. The request it answers
(None outside MCP) goes along: the leash counts it (`Servers`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import mcp_types as types

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

#: Completes one variable or argument upstream: (template or prompt, name, value, chosen,
#: the request asking).
UpstreamComplete: TypeAlias = Callable[
    [str, str, str, Mapping[str, str], "ServerRequestContext[Any] | None"],
    Awaitable[types.Completion | None],
]


def forwarding_completer(complete: UpstreamComplete, ref: str, name: str) -> Any:
    """A completer of variable or argument `name` of upstream template or prompt `ref`. Typed
    `Any`: declarations promise a list of candidates, and this one answers with the server's
    whole `Completion`, which `core/completion.py` passes on as it is."""

    async def completer(ctx: Any, value: str, chosen: Mapping[str, str]) -> types.Completion:
        found = await complete(ref, name, value, chosen, getattr(ctx, "request", None))
        return found if found is not None else types.Completion(values=[], total=0)

    return completer
