"""What a plugin declares to offer MCP prompts: `Prompt`, its `PromptArgument`s, the messages
a prompt renders to, and the context its renderer and completers get.

A prompt is a named, parameterized message template a person picks in a client ("review this
diff", "summarize this record"). Arguments are strings (the protocol's rule); each may have a
completer that suggests values as the person types. Like `tool.py` and `resource.py`, this
module sits low on purpose: a plugin imports it (through `prixfixe`) and little else.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from prixfixe.declarations.content import Content
from prixfixe.declarations.declaration_type import DeclarationType
from prixfixe.declarations.interaction import Interactive
from prixfixe.declarations.tool import TOOL_NAME_PATTERN
from prixfixe.errors import RegistryError

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from prixfixe.declarations.host import Host

Role: TypeAlias = Literal["user", "assistant"]


@dataclass(frozen=True)
class PromptContext(Interactive):
    """What a renderer or completer may reach: the running app, the prompt's name, the
    plugin that declared it, and when called over MCP the request (through which, like a
    tool, a renderer may `ask` the client for input)."""

    app: Host
    name: str = ""
    owner: str = ""
    request: ServerRequestContext[Any] | None = None


@dataclass(frozen=True)
class PromptMessage:
    """One message of a rendered prompt: a role and one content item (`Text`, `Image`,
    `Audio`, `Embedded`, `ResourceLink`) or plain text."""

    role: Role
    content: Content | str


PromptOutput: TypeAlias = "str | PromptMessage | Sequence[PromptMessage]"
#: A renderer takes the context and the (validated) arguments; it may be sync or async. A
#: `str` is one user message. Raise `prixfixe.errors.PrixfixeError` for arguments it cannot
#: use (the client gets -32602 with the message).
PromptRenderer: TypeAlias = Callable[
    [PromptContext, Mapping[str, str]], "Awaitable[PromptOutput] | PromptOutput"
]
#: A completer takes the context, the partial value typed so far and the other arguments
#: already chosen, and returns candidate values (sync or async).
PromptCompleter: TypeAlias = Callable[
    [PromptContext, str, Mapping[str, str]], "Awaitable[Sequence[str]] | Sequence[str]"
]


@dataclass(frozen=True, kw_only=True)
class PromptArgument:
    name: str
    description: str | None = None
    required: bool = False
    completer: PromptCompleter | None = None


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """A prompt, declared in full. `render` turns the arguments into messages."""

    name: str
    render: PromptRenderer
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()
    owner: str = field(default="", compare=False)

    def argument(self, name: str) -> PromptArgument | None:
        return next((a for a in self.arguments if a.name == name), None)


# -- registration ---------------------------------------------------------------------------


def _admit_prompt(prompt: Prompt, owner: str) -> Prompt:
    where = f"plugin {owner!r} prompt {prompt.name!r}"
    if not isinstance(prompt.name, str) or not TOOL_NAME_PATTERN.match(prompt.name):
        raise RegistryError(
            f"{where}: prompt names are 1-128 characters of letters, digits, '_', '-' and '.'"
        )
    if not callable(prompt.render):
        raise RegistryError(f"{where}: render must be callable")
    seen: set[str] = set()
    for argument in prompt.arguments:
        if not isinstance(argument, PromptArgument):
            raise RegistryError(f"{where}: {argument!r} is not a PromptArgument")
        if not isinstance(argument.name, str) or not argument.name.strip():
            raise RegistryError(f"{where}: argument names must be non-empty strings")
        if argument.name in seen:
            raise RegistryError(f"{where}: argument {argument.name!r} is declared twice")
        if argument.completer is not None and not callable(argument.completer):
            raise RegistryError(f"{where}: the completer for {argument.name!r} is not callable")
        seen.add(argument.name)
    return replace(prompt, owner=owner)


PROMPTS: DeclarationType[Prompt, Prompt] = DeclarationType(
    declared=Prompt,
    hook="register_prompts",
    field="prompts",
    what="prompt",
    key=lambda prompt: prompt.name,
    admit=_admit_prompt,
    listing="prompts",
    refreshes_index=True,
)
