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

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

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
