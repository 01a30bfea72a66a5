"""A mounted server's prompts as prixfixe `Prompt` declarations named `SERVER.prompt` (the
same names as its tools get, `naming.py`), their arguments as the server declared them.

Getting one forwards to the server under its real name and returns its messages unchanged;
completing an argument forwards too. The server's refusal of the arguments is the client's
to fix (-32602, naming the server); any other fault is a render error naming it (-32603).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import mcp_types as types

from prixfixe.declarations.prompt import Prompt, PromptArgument, PromptContext
from prixfixe.servers.completion import UpstreamComplete, forwarding_completer
from prixfixe.servers.naming import mounted_names

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

#: Gets upstream prompt `name` with `arguments` for a request (None outside MCP); the answer
#: as the server gave it.
UpstreamGet: TypeAlias = Callable[
    [str, dict[str, str], "ServerRequestContext[Any] | None"], Awaitable[types.GetPromptResult]
]


def mounted_prompt(
    server: str, name: str, prompt: types.Prompt, get: UpstreamGet, complete: UpstreamComplete
) -> Prompt:
    real = prompt.name

    # The renderer and completers answer with the server's whole `GetPromptResult` and
    # `Completion`, which `prompts/service.py` and `core/completion.py` pass on as they are.
    async def render(ctx: PromptContext, arguments: Mapping[str, str]) -> Any:
        return await get(real, dict(arguments), ctx.request)

    return Prompt(
        name=name,
        title=prompt.title,
        description=prompt.description,
        arguments=tuple(
            PromptArgument(
                name=a.name,
                description=a.description,
                required=bool(a.required),
                completer=forwarding_completer(complete, real, a.name),
            )
            for a in prompt.arguments or ()
            if a.name.strip()
        ),
        render=render,
    )


def mounted_prompts(
    server: str, prompts: list[types.Prompt], get: UpstreamGet, complete: UpstreamComplete
) -> list[Prompt]:
    """Every prompt of `server` as a declaration named `server.prompt`."""
    by_real = {p.name: p for p in prompts}
    names = mounted_names(server, by_real)
    return [mounted_prompt(server, n, by_real[r], get, complete) for n, r in names.items()]
