"""A call's missing or invalid arguments: asked of the person, or explained to the model.

A call that leaves out a required argument, or gives a value outside an enum, does not fail
at once when the client can ask its user (it declared `elicitation`) and the tool may ask:

- 2025-11-25: an `elicitation/create` form listing exactly those fields goes to the client
  during the call; the answers are merged into the arguments, checked again, and the call runs.
- 2026-07-28: the call ends with an `input_required` result holding the same form under the
  key `prixfixe/arguments`; the client calls again with its `inputResponses` and the echoed
  `requestState`, and the call runs. The state carries the accepted answers, so a handler that
  then asks its own questions in a further round still has them; the handler sees only its
  own `requestState` (the wrapping is taken off before it runs and put back after).

An answer that still does not fit ends the call with the fallback below: the person is asked
once, never in a loop. Declining or cancelling ends it with an error saying so; nothing runs.

Everything else — a client without elicitation, a call from inside a program
(`program_run`: a program cannot stop to ask, see docs/programs.md), a tool that may not ask
(`Tool.ask=False`,
`[mcp] never_ask`, `[mcp] ask_for_arguments = false`, the discovery trio), a field a form
cannot hold (an object, an array, a nested field), a wrong type or an unexpected argument —
gets the fallback: an `isError` result whose text and structured data name each problem's
field with its type, description, allowed values and an example, and a call to retry with, so
any model fixes the call in one go. The structured data is the result's `structuredContent`,
or `_meta["prixfixe/error"]` when the tool called on the wire declares an output schema: some
clients check `structuredContent` against it even on an error, and would raise instead of
showing the error.

The SDK seals `requestState`, so a client cannot forge the carried answers; a retry that
brings answers without the state is asked again rather than trusted.

CONTRACT (a mounted server's tool never borrows prixfixe's voice): its missing arguments are
asked for only as far as `[servers.NAME] ask_for_arguments` allows (default: never; `true`:
any but a secret-looking one, `looks_secret`; a list: those names only), every field of the
form or none, and the form's message names the server ("[server NAME] asks: ..."). Whatever
is not allowed gets the fallback, and nothing reaches the server. (A mounted server's own
elicitation requests are never relayed: `servers/upstream.py` declares no elicitation.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

import mcp_types as types

from prixfixe.core.calls import plugin_errors
from prixfixe.curation import MISSING, CuratedField, curator_for, schema_fields
from prixfixe.curation.calls import call_text, example_arguments, example_value
from prixfixe.declarations.interaction import Elicit, InputRequired
from prixfixe.declarations.resource import MOUNT_OWNER_PREFIX
from prixfixe.declarations.tool import ToolContext
from prixfixe.errors import ArgumentProblem, ConfigError, InvalidArgumentsError
from prixfixe.tools.validation import check_arguments

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from pydantic import BaseModel

    from prixfixe.config import LoadedConfig, McpConfig, ServerConfig
    from prixfixe.core.registry import RegisteredTool, Registry
    from prixfixe.declarations.host import Host

#: The input-request key of the arguments form, and the key of its part of `requestState`:
#: a handler's own keys cannot collide with it.
KEY = "prixfixe/arguments"
#: Where the structured error goes when the called tool's output schema rules out
#: `structuredContent` on an error.
META_KEY = "prixfixe/error"
#: The discovery trio never asks for its own arguments: the model fixes its own call, and
#: `tool_invoke` passes the request on to the tool it calls, which asks for its own.
NEVER_ASKS = frozenset({"tool_search", "tool_describe", "tool_invoke"})
#: String formats an elicitation form may carry (MCP `StringSchema.format`).
FORM_FORMATS = frozenset({"date", "date-time", "email", "uri"})
#: An unchanged argument longer than this (as JSON) is shown as `…` in the retry call's text.
_SHOWN_VALUE_CHARS = 120


# -- which tools may ask --------------------------------------------------------------------


def may_ask(entry: RegisteredTool, settings: McpConfig) -> bool:
    """Whether a call of `entry` may ask the person for its arguments: `[mcp]
    ask_for_arguments`, `[mcp] never_ask` and the tool's own `Tool.ask` all allow it."""
    name = entry.name
    return (
        entry.tool.ask
        and settings.ask_for_arguments
        and name not in NEVER_ASKS
        and name not in settings.never_ask
    )


#: Words that make an argument's name look like a secret a person types (a password, a token, a
#: one-time code): prixfixe never asks for one on a mounted server's behalf unless the server's
#: `ask_for_arguments` lists it by name.
SECRET_WORDS = frozenset(
    {
        "password", "passwd", "passphrase", "pass", "pwd", "secret", "token", "otp", "totp",
        "mfa", "2fa", "code", "pin", "credential", "credentials", "apikey", "cookie", "session",
        "key", "auth", "authorization", "bearer", "cvv", "ssn",
    }
)  # fmt: skip


def looks_secret(name: str, node: Mapping[str, Any] | None = None) -> bool:
    """Whether argument `name` (its schema `node`, when known) looks like a secret: a word of
    its name (split at `_`, `-`, digits-to-letters and camelCase) is in `SECRET_WORDS`, or its
    schema says `format: password` or `writeOnly`."""
    words = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+[a-z]*", name)
    if any(w.lower() in SECRET_WORDS for w in words) or name.lower() in SECRET_WORDS:
        return True
    if node is None:
        return False
    return node.get("format") == "password" or node.get("writeOnly") is True


def mounted_server(entry: RegisteredTool) -> str | None:
    """The mounted server whose tool `entry` is; None for prixfixe's and plugins' own."""
    owner = entry.tool.owner
    return owner.removeprefix(MOUNT_OWNER_PREFIX) if owner.startswith(MOUNT_OWNER_PREFIX) else None


def server_allows(
    entry: RegisteredTool, fields: Sequence[str], servers: Mapping[str, ServerConfig]
) -> bool:
    """Whether the configuration lets prixfixe ask for all of `fields` of mounted tool
    `entry` (see the module's CONTRACT)."""
    server = mounted_server(entry)
    config = servers.get(server) if server is not None else None
    allowed = config.ask_for_arguments if config is not None else False
    if isinstance(allowed, list):
        return all(f in allowed for f in fields)
    properties = entry.input_schema.get("properties", {})
    return allowed and not any(
        looks_secret(f, properties.get(f) if isinstance(properties, Mapping) else None)
        for f in fields
    )


def check_never_ask(config: LoadedConfig, registry: Registry) -> None:
    """An unknown name in `[mcp] never_ask` is a typo (a tool then asks when it should not):
    a config error at load naming it. A mounted server's tool (`SERVER.tool`) is taken on
    trust when `SERVER` is configured, since its tools are known only once it runs."""
    servers = set(config.model.servers)
    for name in config.model.mcp.never_ask:
        if name in registry or name.split(".", 1)[0] in servers:
            continue
        suggestions = registry.suggest(name, [e.name for e in registry])
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        raise ConfigError(
            f"never_ask names unknown tool {name!r}{hint}",
            file=str(config.path) if config.path else None,
            key="mcp.never_ask",
        )


# -- settling a call's arguments --------------------------------------------------------------


@dataclass(slots=True)
class Settled:
    """A call's arguments, valid, and the request its handler sees (its own state only)."""

    arguments: BaseModel | dict[str, Any]
    request: ServerRequestContext[Any] | None
    #: Answers the person gave, carried through the handler's own input rounds (2026-07-28).
    answers: dict[str, Any] | None = None

    def carry(self, needed: InputRequired) -> InputRequired:
        """`needed` (the handler asking) with the accepted answers wrapped into its state."""
        if not self.answers:
            return needed
        state = _envelope({"answers": self.answers}, needed.state)
        return InputRequired(needed.requests, state, needed.extra)


async def settle_arguments(
    host: Host,
    entry: RegisteredTool,
    arguments: Any,
    request: ServerRequestContext[Any] | None,
    settings: McpConfig,
    servers: Mapping[str, ServerConfig] | None = None,
    *,
    interactive: bool = True,
) -> Settled | types.CallToolResult:
    """Valid arguments for `entry` (asking the person for what is missing when it may, and
    for a mounted tool what `servers` allows), or the `isError` result that ends the call.
    Raises `InputRequired` to end a 2026-07-28 round with the form. `interactive=False` (a
    call from inside a program) never asks: such a call gets the fallback, as from a client
    without elicitation."""
    server = mounted_server(entry)
    config = (servers or {}).get(server) if server is not None else None
    asking = (
        interactive
        and request is not None
        and may_ask(entry, settings)
        and (server is None or (config is not None and config.ask_for_arguments is not False))
    )
    if not asking or not _in_a_round(request):  # the common case, kept cheap
        try:
            with plugin_errors(f"tool {entry.name!r}"):  # input models are the plugin's code
                return Settled(await check_arguments(entry, arguments), request)
        except InvalidArgumentsError as exc:
            if not asking:
                return fallback_result(host, entry, arguments, exc, request)
    assert request is not None
    return await _Round(host, entry, arguments, request, servers or {}).settle()


def _in_a_round(request: ServerRequestContext[Any] | None) -> bool:
    """Whether a request answers an earlier round (2026-07-28): it carries state or answers."""
    params = request.params if request is not None else None
    if not params:
        return False
    return params.get("requestState") is not None or params.get("inputResponses") is not None


@dataclass
class _Round:
    host: Host
    entry: RegisteredTool
    arguments: Any
    request: ServerRequestContext[Any]
    servers: Mapping[str, ServerConfig]

    @property
    def modern(self) -> bool:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        return self.request.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def settle(self) -> Settled | types.CallToolResult:
        mine, handler_state = (
            _unwrap(self._params.get("requestState")) if self.modern else ({}, None)
        )
        answers = mine.get("answers")
        answers = dict(answers) if isinstance(answers, Mapping) else {}
        arguments = self._merged(answers)
        checked = await self._validate(arguments)
        if not isinstance(checked, InvalidArgumentsError):
            return Settled(checked, self._handler_request(handler_state), answers)
        failed = checked
        if answers:  # answered once already and still not valid: never ask again
            return self._fallback(arguments, failed)
        form = self._attributed(argument_form(self.entry, self._fields(), failed.issues, arguments))
        context = ToolContext(app=self.host, request=self.request, owner=self.entry.tool.owner)
        if form is None or not context.supports(form):
            return self._fallback(arguments, failed)
        if not self.modern:
            answer = await self._ask_now(context, form)
        elif "asked" in mine and KEY in self._responses:
            answer = self._responses[KEY]
        else:  # first round, or a retry that brought answers without the state: ask (again)
            raise InputRequired({KEY: form}, _envelope({"asked": _form_fields(form)}, None))
        if not isinstance(answer, Mapping):
            return self._fallback(arguments, failed)
        return await self._answered(answer, form, arguments)

    def _attributed(self, form: Elicit | None) -> Elicit | None:
        """For a mounted tool, the form in its server's name, if its server allows asking for
        every field of it; else None (the fallback). Any other tool's form as it is."""
        server = mounted_server(self.entry)
        if form is None or server is None:
            return form
        if not server_allows(self.entry, _form_fields(form), self.servers):
            return None
        return replace(form, message=f"[server {server}] asks: {form.message}")

    @property
    def _params(self) -> Mapping[str, Any]:
        return self.request.params or {}

    @property
    def _responses(self) -> Mapping[str, Any]:
        found = self._params.get("inputResponses")
        return found if isinstance(found, Mapping) else {}

    def _merged(self, answers: Mapping[str, Any]) -> Any:
        if not answers or not isinstance(self.arguments, Mapping):
            return self.arguments
        return {**self.arguments, **answers}

    async def _validate(self, arguments: Any) -> BaseModel | dict[str, Any] | InvalidArgumentsError:
        try:
            with plugin_errors(f"tool {self.entry.name!r}"):
                return await check_arguments(self.entry, arguments)
        except InvalidArgumentsError as exc:
            return exc

    def _fields(self) -> dict[str, CuratedField]:
        return curated_fields(self.host.registry, self.entry)

    async def _ask_now(self, context: ToolContext, form: Elicit) -> Any:
        from mcp.shared.exceptions import MCPError

        try:
            return (await context.ask({KEY: form}))[KEY]
        except MCPError:  # the client could not show the form: the model fixes the call
            return None

    async def _answered(
        self, answer: Mapping[str, Any], form: Elicit, arguments: Any
    ) -> Settled | types.CallToolResult:
        asked = _form_fields(form)
        action = answer.get("action")
        if action == "decline":
            return _ended(self.host, self.entry, self.request, "declined", asked)
        if action != "accept":
            return _ended(self.host, self.entry, self.request, "cancelled", asked)
        content = answer.get("content")
        given = _answer_values(form, content if isinstance(content, Mapping) else {})
        merged = {**arguments, **given} if isinstance(arguments, Mapping) else given
        checked = await self._validate(merged)
        if isinstance(checked, InvalidArgumentsError):
            return self._fallback(merged, checked)
        return Settled(checked, self._handler_request(None), given)

    def _handler_request(self, handler_state: str | None) -> ServerRequestContext[Any]:
        """The request as the handler sees it: its own `requestState` and input responses,
        without the arguments form's."""
        params = self._params
        if not self.modern or ("requestState" not in params and KEY not in self._responses):
            return self.request
        responses = {k: v for k, v in self._responses.items() if k != KEY}
        own = {k: v for k, v in params.items() if k not in ("requestState", "inputResponses")}
        if handler_state is not None:
            own["requestState"] = handler_state
        if responses:
            own["inputResponses"] = responses
        return replace(self.request, params=own)

    def _fallback(self, arguments: Any, failed: InvalidArgumentsError) -> types.CallToolResult:
        return fallback_result(self.host, self.entry, arguments, failed, self.request)


def _envelope(mine: dict[str, Any], handler_state: str | None) -> str:
    return json.dumps({KEY: mine, "handler": handler_state}, separators=(",", ":"))


def _unwrap(state: Any) -> tuple[dict[str, Any], str | None]:
    """Our part of a `requestState` and the handler's own state. A state that is not our
    envelope is the handler's, as it set it."""
    if not isinstance(state, str):
        return {}, None
    try:
        parsed = json.loads(state)
    except ValueError:
        return {}, state
    if not isinstance(parsed, dict) or not isinstance(parsed.get(KEY), dict):
        return {}, state
    handler = parsed.get("handler")
    return parsed[KEY], handler if isinstance(handler, str) else None


# -- the form -------------------------------------------------------------------------------


def curated_fields(registry: Registry, entry: RegisteredTool) -> dict[str, CuratedField]:
    """Each property of the tool's input schema by dot path, explained from the schema and
    the property dictionary plugins contribute (`tool:NAME` scope)."""
    curator = curator_for(registry)
    scope = f"tool:{entry.name}"
    return {f.path: curator.enrich(f, scope) for f in schema_fields(entry.input_schema)}


def argument_form(
    entry: RegisteredTool,
    fields: Mapping[str, CuratedField],
    problems: Sequence[ArgumentProblem],
    arguments: Any,
) -> Elicit | None:
    """The elicitation form asking for exactly the missing and out-of-enum arguments, or None
    when anything else is wrong or a field cannot be put in a form."""
    properties: dict[str, Any] = {}
    reasons: list[str] = []
    order = list(fields)  # the schema's order, as the tool's author wrote it
    for problem in sorted(problems, key=lambda p: order.index(p.path) if p.path in order else 0):
        found = fields.get(problem.path)
        if problem.kind not in ("missing", "enum") or found is None:
            return None
        prop = form_property(found)
        if prop is None:
            return None
        properties[problem.path] = prop
        if problem.kind == "missing":
            reasons.append(f"{problem.path} is missing")
        else:
            given = arguments.get(problem.path) if isinstance(arguments, Mapping) else None
            reasons.append(f"{problem.path} {_json(given)} is not one of the choices")
    if not properties:
        return None
    title = entry.tool.title or entry.name
    message = f"{title} ({entry.name}) cannot run yet: {'; '.join(reasons)}. Nothing was done."
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    return Elicit(message=message, schema=schema)


def form_property(f: CuratedField) -> dict[str, Any] | None:
    """`f` as an elicitation form property (a flat primitive), or None when a form cannot
    hold it: top-level fields only, of string (with the form's formats), number, integer,
    boolean or string-enum type, nullable ones included."""
    if "." in f.path or "[" in f.path:
        return None
    node = _non_null(f.node)
    kinds = node.get("type")
    kinds = [k for k in (kinds if isinstance(kinds, list) else [kinds]) if k != "null"]
    prop: dict[str, Any]
    enum = node.get("enum")
    if isinstance(enum, list):
        values = [v for v in enum if v is not None]
        if not values or not all(isinstance(v, str) for v in values):
            return None
        prop = {"type": "string", "enum": values}
    elif kinds == ["string"]:
        prop = {"type": "string"}
        if node.get("format") in FORM_FORMATS:
            prop["format"] = node["format"]
        elif "format" in node:
            return None  # a format the form cannot show (time, uuid) would be checked anyway
        prop |= {k: node[k] for k in ("minLength", "maxLength") if isinstance(node.get(k), int)}
    elif kinds in (["integer"], ["number"]):
        prop = {"type": kinds[0]}
        prop |= {k: node[k] for k in ("minimum", "maximum") if _is_number(node.get(k))}
    elif kinds == ["boolean"]:
        prop = {"type": "boolean"}
    else:
        return None
    prop["title"] = f.name.replace("_", " ").capitalize()
    words = [w for w in (f.description, f.hint and f"Format: {f.hint}.", f.unit) if w]
    if words:
        prop["description"] = " ".join(words)
    if f.default is not MISSING and f.default is not None and _fits(prop, f.default):
        prop["default"] = f.default
    return prop


def _non_null(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """`X | None` written as `anyOf` (an enum beside null): the `X` branch."""
    options = node.get("anyOf")
    if isinstance(options, list):
        rest = [o for o in options if isinstance(o, Mapping) and o.get("type") != "null"]
        if len(rest) == 1:
            return {**{k: v for k, v in node.items() if k != "anyOf"}, **rest[0]}
    return node


def _fits(prop: Mapping[str, Any], value: Any) -> bool:
    kind = prop["type"]
    if kind == "string":
        return isinstance(value, str) and ("enum" not in prop or value in prop["enum"])
    if kind == "boolean":
        return isinstance(value, bool)
    return _is_number(value) and (kind == "number" or isinstance(value, int))


def _form_fields(form: Elicit) -> list[str]:
    return list(form.schema.get("properties", {}))


def _answer_values(form: Elicit, content: Mapping[str, Any]) -> dict[str, Any]:
    """The answers to the form's own fields (nothing else it may have sent), an integer field's
    `3.0` read as `3`."""
    out: dict[str, Any] = {}
    for name, prop in form.schema.get("properties", {}).items():
        if name not in content:
            continue
        value = content[name]
        if prop.get("type") == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)
        out[name] = value
    return out


# -- the results that end a call -----------------------------------------------------------


def _ended(
    host: Host,
    entry: RegisteredTool,
    request: ServerRequestContext[Any],
    outcome: Literal["declined", "cancelled"],
    fields: list[str],
) -> types.CallToolResult:
    names = ", ".join(fields)
    if outcome == "declined":
        text = (
            f"The person declined to give {names} for {entry.name}; nothing was done. "
            "Ask them before trying again."
        )
    else:
        text = f"The request for {names} ({entry.name}) was cancelled; nothing was done."
    data = {"error": outcome, "tool": entry.name, "fields": fields}
    return _error(text, data, _wire_has_output_schema(entry, request, host.registry))


def fallback_result(
    host: Host,
    entry: RegisteredTool,
    arguments: Any,
    failed: InvalidArgumentsError,
    request: ServerRequestContext[Any] | None,
) -> types.CallToolResult:
    """The error a model fixes its call from in one retry: each problem with its field's
    type, description, allowed values and an example, and the call to make."""
    fields = curated_fields(host.registry, entry)
    whole = any(not p.path for p in failed.issues)  # not an object, or too large to read
    given = dict(arguments) if isinstance(arguments, Mapping) and not whole else {}
    retry = example_arguments(fields.values()) if whole else dict(given)
    problems: list[dict[str, Any]] = []
    lines: list[str] = []
    for problem in failed.issues:
        found = fields.get(_field_path(problem.path))
        info: dict[str, Any] = problem.as_data()
        line = f"- {problem.message}"
        if found is not None and problem.kind != "extra":
            example = _example(found, fields)
            info |= field_data(found) | {"example": example}
            line += _line_tail(problem, found, example)
            _set_path(retry, problem.path, example)
        elif problem.kind == "extra":
            _drop_path(retry, problem.path)
        problems.append(info)
        lines.append(line)
    via_invoke = _via_invoke(entry, request)
    call = (
        {"name": "tool_invoke", "arguments": {"name": entry.name, "arguments": retry}}
        if via_invoke
        else {"name": entry.name, "arguments": retry}
    )
    changed = {p.path.split(".", 1)[0].split("[", 1)[0] for p in failed.issues}
    shown = _retry_text(entry.name, retry, via_invoke=via_invoke, keep=changed)
    text = "\n".join(
        [f"invalid arguments for {entry.name!r} (nothing was done):", *lines, f"Retry: {shown}"]
    )
    data = {"error": "invalid_arguments", "tool": entry.name, "problems": problems, "retry": call}
    return _error(text, data, _wire_has_output_schema(entry, request, host.registry))


def field_data(f: CuratedField) -> dict[str, Any]:
    """What the structured error says of a field (empty parts left out)."""
    out: dict[str, Any] = {"type": f.type, "required": f.required}
    for key, value in (
        ("description", f.description),
        ("hint", f.hint),
        ("unit", f.unit),
        ("limits", f.limits),
    ):
        if value:
            out[key] = value
    if f.values:
        out["allowed" if f.closed else "common"] = list(f.values)
    return out


def _line_tail(problem: ArgumentProblem, f: CuratedField, example: Any) -> str:
    """What the text adds to a problem's message: what the message does not already say."""
    bits: list[str] = []
    if problem.kind == "missing" and not f.values and f.type not in _JSON_TYPES:
        bits.append(f"type {f.type}")  # `date`, `integer|null`: more than "a string" says
    if f.description and f.description not in problem.message:
        bits.append(f.description.rstrip("."))
    if problem.kind != "enum" and f.values:
        shown = ", ".join(_json(v) for v in f.values[:8])
        bits.append(f"{'allowed' if f.closed else 'common'}: {shown}")
    if f.limits and problem.kind == "missing":
        bits.append(f.limits)
    if f.hint:
        bits.append(f"format {f.hint}")
    if problem.kind != "enum" and _has_example(f):
        bits.append(f"e.g. {_json(example)}")
    return f" — {'; '.join(bits)}" if bits else ""


_JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "object", "array", "null"})


def _example(f: CuratedField, fields: Mapping[str, CuratedField]) -> Any:
    """The value the retry call shows for `f`: its example, default or first allowed value, an
    object built from its required fields, else a placeholder naming its type."""
    if f.is_object and f.example is MISSING:
        built: Any = example_arguments(fields.values(), only=[f.path])
        for part in f.path.split("."):
            built = built.get(part) if isinstance(built, dict) else None
        if isinstance(built, dict) and built:
            return built
    return example_value(f)


def _has_example(f: CuratedField) -> bool:
    """Whether `f` has a real example (not a placeholder) for the text to show."""
    return f.example is not MISSING or f.default not in (MISSING, None) or bool(f.values)


def _retry_text(
    name: str, arguments: Mapping[str, Any], *, via_invoke: bool, keep: set[str]
) -> str:
    """The retry call as a model writes it; a long argument it sent and need not change is
    shown as `"…"` (it has the value in its own call)."""
    shown = {
        k: "…" if k not in keep and len(_json(v)) > _SHOWN_VALUE_CHARS else v
        for k, v in arguments.items()
    }
    text = call_text(name, shown, listed=not via_invoke)
    return text + (' ("…": as you sent it)' if shown != dict(arguments) else "")


def _error(text: str, data: dict[str, Any], output_schema: bool) -> types.CallToolResult:
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
    if output_schema:
        return types.CallToolResult(content=content, is_error=True, _meta={META_KEY: data})
    return types.CallToolResult(content=content, structured_content=data, is_error=True)


def _via_invoke(entry: RegisteredTool, request: ServerRequestContext[Any] | None) -> bool:
    wire = (request.params or {}).get("name") if request is not None else None
    return wire == "tool_invoke" and entry.name != "tool_invoke"


def _wire_has_output_schema(
    entry: RegisteredTool,
    request: ServerRequestContext[Any] | None,
    registry: Registry | None,
) -> bool:
    """Whether the tool the client called (`tool_invoke`, or this one) has an output schema."""
    wire = (request.params or {}).get("name") if request is not None else entry.name
    if wire == entry.name or registry is None or not isinstance(wire, str):
        return entry.output_schema is not None
    return wire in registry and registry.get(wire).output_schema is not None


def _field_path(path: str) -> str:
    """A problem's path as a field's: `items[0].name` is the field `items[].name`."""
    out, depth = [], 0
    for ch in path:
        if ch == "[":
            depth += 1
            out.append("[]" if depth == 1 else "")
        elif ch == "]":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _parent(target: dict[str, Any], path: str) -> tuple[dict[str, Any], str] | None:
    """The object holding a dot path's last key, copied on the way down so the caller's
    arguments are not changed (plain keys only: a path through a list index is left alone)."""
    if not path or "[" in path:
        return None
    *parents, last = path.split(".")
    node = target
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            return None
        node[part] = child = dict(child)
        node = child
    return node, last


def _set_path(target: dict[str, Any], path: str, value: Any) -> None:
    found = _parent(target, path)
    if found is not None:
        node, last = found
        node[last] = value


def _drop_path(target: dict[str, Any], path: str) -> None:
    found = _parent(target, path)
    if found is not None:
        node, last = found
        node.pop(last, None)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
