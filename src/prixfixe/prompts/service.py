"""The prompt service: what `prompts/list`, `prompts/get` and `completion/complete` (for a
prompt reference) answer, from the registry's declarations.

`prompts/list` is sorted by name and paged with the same opaque keyset cursors as resources.
`prompts/get` checks the arguments before the renderer runs: an unknown prompt, an argument
the prompt does not take, or a missing required one is -32602 naming it; a failing renderer
is -32603 naming the prompt, never a success-shaped message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import mcp_types as types

from prixfixe.core.calls import PluginCrash, call_plugin
from prixfixe.core.completion import EMPTY, run_completer
from prixfixe.core.paging import window
from prixfixe.declarations.content import CONTENT_TYPES, Text, to_wire
from prixfixe.declarations.interaction import InputRequired, input_required_result
from prixfixe.declarations.prompt import Prompt, PromptContext, PromptMessage
from prixfixe.errors import (
    InvalidPromptArgumentsError,
    MissingClientCapabilityError,
    PrixfixeError,
    PromptError,
    PromptRenderError,
    UnknownPromptError,
)

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from prixfixe.core.registry import Registry
    from prixfixe.declarations.host import Host

PROMPTS_LISTING = "prompts/list"
#: Prompts per `prompts/list` page.
PAGE_SIZE = 100


@dataclass(frozen=True)
class _Listing:
    version: int
    names: list[str]
    wire: dict[str, types.Prompt]


class PromptService:
    """Serves the registry's prompts to MCP requests (one per app); `host` is what renderers
    and completers see as `ctx.app`."""

    def __init__(self, registry: Registry, *, host: Host, page_size: int = PAGE_SIZE) -> None:
        self.registry = registry
        self.host = host
        self.page_size = page_size
        self._listing: _Listing | None = None

    def _current(self) -> _Listing:
        registry = self.registry
        if self._listing is None or self._listing.version != registry.version:
            prompts = registry.prompts
            self._listing = _Listing(
                registry.version,
                sorted(prompts),
                {name: wire_prompt(p) for name, p in prompts.items()},
            )
        return self._listing

    def list_prompts(self, cursor: str | None = None) -> types.ListPromptsResult:
        listing = self._current()
        page = window(PROMPTS_LISTING, listing.names, cursor, self.page_size)
        chosen = listing.names[page.start : page.stop]
        return types.ListPromptsResult(
            prompts=[listing.wire[n] for n in chosen], next_cursor=page.next_cursor
        )

    def find(self, name: str) -> Prompt:
        prompt = self.registry.prompt(name)
        if prompt is None:
            names = list(self.registry.prompts)
            raise UnknownPromptError(name, self.registry.suggest(name, names))
        return prompt

    def check_arguments(
        self, prompt: Prompt, arguments: Mapping[str, Any] | None
    ) -> dict[str, str]:
        """The arguments, if the prompt takes exactly these; else an error naming each problem."""
        given = dict(arguments or {})
        declared = [a.name for a in prompt.arguments]
        problems: list[str] = []
        for name in given:
            if name not in declared:
                accepted = ", ".join(declared) if declared else "none"
                problems.append(f"{name!r} is not an argument of it (arguments: {accepted})")
            elif not isinstance(given[name], str):
                problems.append(f"{name!r} must be a string")
        for argument in prompt.arguments:
            if argument.required and not given.get(argument.name):
                problems.append(f"{argument.name!r} is required")
        if problems:
            raise InvalidPromptArgumentsError(prompt.name, problems)
        return given

    async def get(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        request: ServerRequestContext[Any] | None = None,
    ) -> types.GetPromptResult | types.InputRequiredResult:
        prompt = self.find(name)
        values = self.check_arguments(prompt, arguments)
        context = PromptContext(app=self.host, name=name, owner=prompt.owner, request=request)
        try:
            rendered = await call_plugin(
                prompt.render,
                context,
                values,
                what=f"prompt {name!r}",
                convert=partial(_rendered, prompt.description),
            )
        except InputRequired as needed:
            result: types.InputRequiredResult = input_required_result(needed)
            return result
        except (PromptError, MissingClientCapabilityError):
            raise
        except PrixfixeError as exc:
            # A renderer refusing its arguments: the client's to fix, so -32602.
            raise PromptError(exc.message, name=name, **exc.data) from None
        except PluginCrash as crash:
            raise PromptRenderError(
                f"rendering prompt {name!r} failed: {crash.reason}", name=name
            ) from crash.error
        return rendered

    async def complete(
        self,
        name: str,
        argument: str,
        value: str,
        chosen: Mapping[str, str] | None = None,
        request: ServerRequestContext[Any] | None = None,
    ) -> types.Completion:
        """Candidate values for one argument of a prompt, filtered by prefix."""
        prompt = self.find(name)
        declared = prompt.argument(argument)
        if declared is None:
            accepted = ", ".join(a.name for a in prompt.arguments) or "none"
            raise InvalidPromptArgumentsError(
                name, [f"{argument!r} is not an argument of this prompt (arguments: {accepted})"]
            )
        if declared.completer is None:
            return EMPTY
        context = PromptContext(app=self.host, name=name, owner=prompt.owner, request=request)
        try:
            return await run_completer(
                declared.completer,
                context,
                value,
                chosen,
                what=f"completer of prompt {name} argument {argument}",
            )
        except PluginCrash as crash:
            raise PromptRenderError(
                f"completing {argument!r} of prompt {name!r} failed: {crash.reason}", name=name
            ) from crash.error


def wire_prompt(prompt: Prompt) -> types.Prompt:
    return types.Prompt(
        name=prompt.name,
        title=prompt.title,
        description=prompt.description,
        arguments=[
            types.PromptArgument(name=a.name, description=a.description, required=a.required)
            for a in prompt.arguments
        ]
        or None,
    )


def _rendered(description: str | None, output: object) -> types.GetPromptResult:
    """What a renderer returned, as the answer. A `GetPromptResult` (a renderer forwarding
    another server's answer: a mounted server's) is kept as it is."""
    if isinstance(output, types.GetPromptResult):
        return output
    return types.GetPromptResult(description=description, messages=_wire_messages(output))


def _wire_messages(output: object) -> list[types.PromptMessage]:
    """What a renderer returned, as wire messages (a wrong type is the renderer's error)."""
    return [_wire_message(m) for m in _messages(output)]


def _messages(output: object) -> Sequence[PromptMessage]:
    if isinstance(output, str):
        return [PromptMessage(role="user", content=output)]
    if isinstance(output, PromptMessage):
        return [output]
    if isinstance(output, list | tuple) and all(isinstance(m, PromptMessage) for m in output):
        return output
    raise TypeError(
        f"the renderer returned {type(output).__name__}; renderers return str, PromptMessage "
        "or a list of PromptMessage"
    )


def _wire_message(message: PromptMessage) -> types.PromptMessage:
    content = message.content
    item = Text(content) if isinstance(content, str) else content
    if not isinstance(item, CONTENT_TYPES):
        raise TypeError(f"a prompt message holds prixfixe content, not {type(content).__name__}")
    return types.PromptMessage(role=message.role, content=to_wire(item))
