"""What a plugin declares to add a tool: the `Tool` record, its context and its result.

This module sits low on purpose: a plugin imports it (through `prixfixe`) and little else.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from pydantic import BaseModel

from prixfixe.content import Content
from prixfixe.errors import PrixfixeError
from prixfixe.interaction import InputRequest, LogLevel

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from prixfixe.app import App
    from prixfixe.store.api import OwnerSlice

#: MCP tool names (spec 2025-11-25): 1-128 of ASCII letters, digits, `_`, `-`, `.`.
TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
#: Facet names are short lowercase identifiers so they read well in env vars and TOML lists.
FACET_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class ToolContext:
    """What a handler may reach: the running app, when called over MCP the request, and the
    plugin that owns the tool (whose store slice `slice()` returns)."""

    app: App
    request: ServerRequestContext[Any] | None = None
    owner: str = ""

    def slice(self) -> OwnerSlice:
        """The calling plugin's own store tables (blocking: use from a worker thread)."""
        return self.app.store.slice(self.owner)

    # -- talking to the client during a call (no-ops outside MCP) -----------------------------

    @property
    def request_state(self) -> str | None:
        """On 2026-07-28, the `state` this tool put in its last `input_required` result and
        the client echoed back (verified by the SDK); None on the first round."""
        params = self.request.params if self.request is not None else None
        state = params.get("requestState") if params else None
        return state if isinstance(state, str) else None

    @property
    def input_responses(self) -> dict[str, Any]:
        """On 2026-07-28, the answers the client sent to this tool's last input requests."""
        params = self.request.params if self.request is not None else None
        answers = params.get("inputResponses") if params else None
        return dict(answers) if isinstance(answers, dict) else {}

    async def ask(
        self, requests: Mapping[str, InputRequest], *, state: str | None = None
    ) -> dict[str, Any]:
        """Ask the client (see `prixfixe.interaction`); the answers as JSON objects by key.

        On 2026-07-28 an unanswered request ends the call with `input_required` (carrying
        `state`) and the client calls again; on 2025-11-25 the requests go to the client now."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        from prixfixe.interaction import InputRequired

        if self.request is None:
            raise PrixfixeError("this tool needs an MCP client to answer questions")
        if self.request.protocol_version in MODERN_PROTOCOL_VERSIONS:
            answers = self.input_responses
            missing = {k: r for k, r in requests.items() if k not in answers}
            if missing:
                raise InputRequired(dict(missing), state)
            return {k: answers[k] for k in requests}
        return {k: await self._ask_now(r) for k, r in requests.items()}

    async def _ask_now(self, request: InputRequest) -> dict[str, Any]:
        import mcp_types as types

        from prixfixe.interaction import Elicit, Sample

        assert self.request is not None
        session = self.request.session
        related = self.request.request_id
        result: types.Result
        if isinstance(request, Elicit):
            result = await session.elicit_form(request.message, request.schema, related)
        elif isinstance(request, Sample):
            message = types.SamplingMessage(
                role="user", content=types.TextContent(type="text", text=request.prompt)
            )
            result = await session.create_message(
                [message],
                max_tokens=request.max_tokens,
                system_prompt=request.system_prompt,
                related_request_id=related,
            )
        else:
            result = await session.list_roots()
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def log(self, level: LogLevel, message: Any, logger: str | None = None) -> None:
        """Send a log message to the client (on 2026-07-28 only at levels it opted into)."""
        if self.request is None:
            return
        if not self.app.log_level_allows(self.request, level):
            return
        await self.request.session.send_log_message(
            level, message, logger, related_request_id=self.request.request_id
        )

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress on this call (sent only if the client asked for progress)."""
        if self.request is not None:
            await self.request.session.report_progress(progress, total, message)


@dataclass(frozen=True)
class ToolResult:
    """A handler result with both a text for people and structured data for agents."""

    text: str
    data: BaseModel | dict[str, Any] | None = None
    is_error: bool = False


#: A content item (an `Image`, ...) or a list of them is the result's content as it is.
ToolOutput: TypeAlias = "str | BaseModel | ToolResult | Content | Sequence[Content]"
#: A handler takes the context and the validated input model; it may be sync or async.
ToolHandler: TypeAlias = Callable[[ToolContext, Any], "Awaitable[ToolOutput] | ToolOutput"]


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A tool, declared in full: nothing about it is inferred from the handler.

    `mutates` drives the MCP annotations: a read-only tool is `readOnlyHint`, idempotent and
    not destructive; a mutating tool is destructive unless `destructive=False` and idempotent
    only when `idempotent=True`.
    """

    name: str
    title: str
    description: str
    input_model: type[BaseModel]
    handler: ToolHandler
    mutates: bool
    facet: str
    output_model: type[BaseModel] | None = None
    keywords: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    usage: str = ""
    destructive: bool | None = None
    idempotent: bool | None = None
    owner: str = field(default="", compare=False)

    @property
    def summary(self) -> str:
        """The description's first sentence: what search results show instead of a schema."""
        first = self.description.strip().split("\n", 1)[0].strip()
        sentence = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0]
        return sentence if len(sentence) <= 160 else sentence[:157].rstrip() + "..."
