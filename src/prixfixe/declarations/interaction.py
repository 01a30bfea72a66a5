"""Asking the client for something in the middle of a tool call: a person's answer
(elicitation), a model's completion (sampling) or the client's roots — in both revisions.

A handler calls `await ctx.ask({"key": Elicit(...), ...})` and gets the answers back as JSON
objects, keyed the same way. How they are obtained depends on the connection:

- 2025-11-25: each request is sent to the client as a server→client request, in order, on
  the call's own stream, and the call waits for the answers.
- 2026-07-28 (stateless, SEP-2322): the call ends with an `input_required` result listing the
  requests still unanswered (and `state`, the handler's own progress marker); the client
  answers them and calls again with `inputResponses` and the echoed `requestState`, and this
  time `ask` returns the answers. The SDK seals `requestState` so a client cannot forge it.

A handler that needs several rounds reads `ctx.request_state` to know where it is.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

from prixfixe.errors import MissingClientCapabilityError, PrixfixeError

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

LogLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]


@dataclass(frozen=True)
class Elicit:
    """Ask the person a question; `schema` is the flat JSON Schema object of the answer."""

    message: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class Sample:
    """Ask the client's model to complete `prompt`."""

    prompt: str
    max_tokens: int = 100
    system_prompt: str | None = None


@dataclass(frozen=True)
class ListRoots:
    """Ask the client for its roots (the directories it lets servers know about)."""


InputRequest: TypeAlias = Elicit | Sample | ListRoots


@dataclass
class InputRequired(Exception):
    """Raised by `ToolContext.ask` on 2026-07-28 when answers are missing: the call ends with
    an `input_required` result and the client calls again with the answers."""

    requests: dict[str, InputRequest]
    state: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def wire_request(request: InputRequest) -> dict[str, Any]:
    """The JSON-RPC request (method and params) a client answers."""
    if isinstance(request, Elicit):
        form = {"mode": "form", "message": request.message, "requestedSchema": request.schema}
        return {"method": "elicitation/create", "params": form}
    if isinstance(request, Sample):
        params: dict[str, Any] = {
            "messages": [{"role": "user", "content": {"type": "text", "text": request.prompt}}],
            "maxTokens": request.max_tokens,
        }
        if request.system_prompt is not None:
            params["systemPrompt"] = request.system_prompt
        return {"method": "sampling/createMessage", "params": params}
    if isinstance(request, ListRoots):
        return {"method": "roots/list", "params": {}}
    raise TypeError(f"{request!r} is not an input request (Elicit, Sample, ListRoots)")


#: The client capability each kind of input request needs.
CAPABILITY: dict[type[InputRequest], str] = {
    Elicit: "elicitation",
    Sample: "sampling",
    ListRoots: "roots",
}


def _modern(request: ServerRequestContext[Any]) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return request.protocol_version in MODERN_PROTOCOL_VERSIONS


class LogLevels(Protocol):
    """Who knows each connection's log level (`logging/setLevel`): all `Interactive` needs of
    the server, so it can leave out what a client did not ask to hear."""

    def log_level_allows(self, request: ServerRequestContext[Any], level: str) -> bool: ...


class Interactive:
    """Talking to the client during a request: asking it for input, logging to it and
    reporting progress. Mixed into `ToolContext` and `PromptContext`; each method is a no-op
    (or a clear error, for `ask`) outside MCP."""

    app: LogLevels
    request: ServerRequestContext[Any] | None
    #: False when the call runs inside a program (`program_run`): nothing may be asked of
    #: the person then (`supports` is false and `ask` an error), as for a client without
    #: the capability.
    interactive: bool = True

    @property
    def request_state(self) -> str | None:
        """On 2026-07-28, the `state` given to the last `ask` that ended a round, as the
        client echoed it back (verified by the SDK); None on the first round."""
        params = self.request.params if self.request is not None else None
        state = params.get("requestState") if params else None
        return state if isinstance(state, str) else None

    @property
    def input_responses(self) -> dict[str, Any]:
        """On 2026-07-28, the answers the client sent to the last round's requests."""
        params = self.request.params if self.request is not None else None
        answers = params.get("inputResponses") if params else None
        return dict(answers) if isinstance(answers, dict) else {}

    def supports(self, request: InputRequest) -> bool:
        """Whether the client declared the capability `request` needs."""
        import mcp_types as types

        if self.request is None or not self.interactive:
            return False
        name = CAPABILITY[type(request)]
        wanted = types.ClientCapabilities.model_validate({name: {}})
        return self.request.session.check_client_capability(wanted)

    async def ask(
        self, requests: Mapping[str, InputRequest], *, state: str | None = None
    ) -> dict[str, Any]:
        """Ask the client (see the module's docstring); the answers as JSON objects by key.

        On 2026-07-28 unanswered requests end this round with an `input_required` result
        (carrying `state`) and the client calls again; on 2025-11-25 they go to the client
        now. A request whose capability the client did not declare is an error."""
        if self.request is None:
            raise PrixfixeError("this needs an MCP client to answer questions")
        if not self.interactive:
            raise PrixfixeError(
                "this call runs inside a program, which cannot ask the person anything: "
                "call the tool directly to be asked"
            )
        lacking = sorted({CAPABILITY[type(r)] for r in requests.values() if not self.supports(r)})
        if _modern(self.request):
            answers = self.input_responses
            missing = {k: r for k, r in requests.items() if k not in answers}
            if missing and lacking:
                raise MissingClientCapabilityError(lacking)
            if missing:
                raise InputRequired(dict(missing), state)
            return {k: answers[k] for k in requests}
        if lacking:
            raise PrixfixeError(
                f"the client did not declare the {', '.join(lacking)} capability, so it "
                "cannot be asked"
            )
        return {k: await self._ask_now(r) for k, r in requests.items()}

    async def _ask_now(self, request: InputRequest) -> dict[str, Any]:
        import mcp_types as types
        from mcp.shared.exceptions import MCPDeprecationWarning

        assert self.request is not None
        session = self.request.session
        related = self.request.request_id
        result: types.Result
        # This path runs on 2025-11-25 only, where sampling and roots are current: the SDK's
        # note that 2026-07-28 deprecates them does not apply.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
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
        if self.request is None or not self.app.log_level_allows(self.request, level):
            return
        from prixfixe.leash.redact import redact, redact_data

        shown = redact(message) if isinstance(message, str) else redact_data(message)
        await self.request.session.send_log_message(
            level, shown, logger, related_request_id=self.request.request_id
        )

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress on this request (sent only if the client asked for progress)."""
        if self.request is not None:
            from prixfixe.leash.redact import redact

            shown = redact(message) if message is not None else None
            await self.request.session.report_progress(progress, total, shown)


def input_required_result(needed: InputRequired) -> Any:
    """The wire `input_required` result for an `InputRequired` raised by `ask`."""
    import mcp_types as types

    return types.InputRequiredResult.model_validate(
        {
            "resultType": "input_required",
            "inputRequests": {k: wire_request(r) for k, r in needed.requests.items()} or None,
            "requestState": needed.state,
        }
    )
