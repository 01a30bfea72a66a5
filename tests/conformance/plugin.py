"""The fixture the official MCP conformance suite runs against, written with prixfixe's own
plugin API: tools, resources and prompts under the names the suite expects
(`@modelcontextprotocol/conformance` 0.2.0-alpha.12, server scenarios).

`scripts/conformance.sh` serves it with `prixfixe serve --http --plugin
tests.conformance.plugin`; `tests/conformance/test_fixture.py` checks its answers itself,
since some scenarios pass against a server that lacks the tool they name.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field

from prixfixe import (
    Audio,
    Embedded,
    Image,
    Prompt,
    PromptArgument,
    PromptContext,
    PromptMessage,
    Resource,
    ResourceContext,
    ResourceTemplate,
    Text,
    Tool,
    ToolContext,
    hookimpl,
)
from prixfixe.declarations.interaction import Elicit, ListRoots, Sample
from prixfixe.errors import PrixfixeError

FACET = "conformance"
#: 1x1 PNG and a tiny WAV, as the suite's reference server sends them.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")
SIMPLE_TEXT = "This is a simple text response for testing."
ERROR_TEXT = "This tool intentionally returns an error for testing"
WATCHED = "test://watched-resource"


class NoArguments(BaseModel):
    model_config = ConfigDict(extra="ignore")


class PromptInput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    prompt: str = Field(description="What to ask the client's model.")


class MessageInput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    message: str = Field(description="What to ask the person.")


# -- content ------------------------------------------------------------------------------


def simple_text(ctx: ToolContext, args: NoArguments) -> str:
    return SIMPLE_TEXT


def image_content(ctx: ToolContext, args: NoArguments) -> Image:
    return Image(PNG, "image/png")


def audio_content(ctx: ToolContext, args: NoArguments) -> Audio:
    return Audio(WAV, "audio/wav")


def embedded_resource(ctx: ToolContext, args: NoArguments) -> Embedded:
    return Embedded(
        uri="test://embedded-resource",
        text="This is an embedded resource content.",
        mime_type="text/plain",
    )


def multiple_content_types(ctx: ToolContext, args: NoArguments) -> list[Text | Image | Embedded]:
    return [
        Text("Multiple content types test:"),
        Image(PNG, "image/png"),
        Embedded(
            uri="test://mixed-content-resource",
            text=json.dumps({"test": "data", "value": 123}),
            mime_type="application/json",
        ),
    ]


def error_handling(ctx: ToolContext, args: NoArguments) -> str:
    raise PrixfixeError(ERROR_TEXT)


# -- talking to the client during a call ---------------------------------------------------


async def with_logging(ctx: ToolContext, args: NoArguments) -> str:
    for step in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.log("info", step)
        await anyio.sleep(0.05)
    return "Tool with logging executed successfully"


async def with_progress(ctx: ToolContext, args: NoArguments) -> str:
    for done in (0, 50, 100):
        await ctx.progress(done, 100, f"Completed step {done} of 100")
        await anyio.sleep(0.05)
    meta = ctx.request.meta if ctx.request is not None else None
    token = meta.progress_token if meta is not None else None
    return str(token if token is not None else 0)


async def sampling(ctx: ToolContext, args: PromptInput) -> str:
    answer = (await ctx.ask({"reply": Sample(args.prompt, max_tokens=100)}))["reply"]
    content = answer.get("content")
    text = content.get("text") if isinstance(content, dict) else None
    return f"LLM response: {text if text is not None else 'No response'}"


def _elicitation_text(prefix: str, answer: Mapping[str, Any]) -> str:
    action = answer.get("action")
    content = answer.get("content") if action == "accept" else {}
    return f"{prefix}: action={action}, content={json.dumps(content or {})}"


USER_RESPONSE = {
    "type": "object",
    "properties": {"response": {"type": "string", "description": "User's response"}},
    "required": ["response"],
}


async def elicitation(ctx: ToolContext, args: MessageInput) -> str:
    answer = (await ctx.ask({"answer": Elicit(args.message, USER_RESPONSE)}))["answer"]
    return _elicitation_text("User response", answer)


SEP1034_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
}


async def elicitation_defaults(ctx: ToolContext, args: NoArguments) -> str:
    request = Elicit("Please provide user information", SEP1034_SCHEMA)
    answer = (await ctx.ask({"answer": request}))["answer"]
    return _elicitation_text("Elicitation result", answer)


SEP1330_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Simple enum without titles",
            "enum": ["active", "inactive", "pending"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Enum with titled options (oneOf)",
            "oneOf": [
                {"const": "low", "title": "Low Priority"},
                {"const": "medium", "title": "Medium Priority"},
                {"const": "high", "title": "High Priority"},
            ],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Multi-select without titles",
            "items": {"type": "string", "enum": ["read", "write", "execute"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Multi-select with titled options",
            "items": {
                "anyOf": [
                    {"const": "feature", "title": "New Feature"},
                    {"const": "bug", "title": "Bug Fix"},
                    {"const": "docs", "title": "Documentation"},
                ]
            },
        },
        "legacyEnum": {
            "type": "string",
            "description": "Legacy enum with enumNames",
            "enum": ["small", "medium", "large"],
            "enumNames": ["Small Size", "Medium Size", "Large Size"],
        },
    },
    "required": ["untitledSingle", "titledSingle", "untitledMulti", "titledMulti", "legacyEnum"],
}


async def elicitation_enums(ctx: ToolContext, args: NoArguments) -> str:
    request = Elicit("Please select values using different enum schema types", SEP1330_SCHEMA)
    answer = (await ctx.ask({"answer": request}))["answer"]
    return _elicitation_text("Elicitation completed", answer)


# -- input_required (2026-07-28, SEP-2322) ----------------------------------------------------


def _schema(name: str, kind: str = "string") -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": kind}}, "required": [name]}


def _content_of(answer: Mapping[str, Any]) -> dict[str, Any]:
    content = answer.get("content")
    return content if isinstance(content, dict) else {}


async def ir_elicitation(ctx: ToolContext, args: NoArguments) -> str:
    answers = await ctx.ask({"user_name": Elicit("What is your name?", _schema("name"))})
    return f"Hello, {_content_of(answers['user_name']).get('name', 'stranger')}!"


async def ir_sampling(ctx: ToolContext, args: NoArguments) -> str:
    answers = await ctx.ask({"capital_question": Sample("What is the capital of France?")})
    reply = _content_of(answers["capital_question"]).get("text", "")
    return f"The model answered: {reply}"


async def ir_list_roots(ctx: ToolContext, args: NoArguments) -> str:
    answers = await ctx.ask({"client_roots": ListRoots()})
    roots = answers["client_roots"].get("roots", [])
    return "Roots: " + ", ".join(str(r.get("uri")) for r in roots if isinstance(r, dict))


async def ir_request_state(ctx: ToolContext, args: NoArguments) -> str:
    state = "awaiting-confirmation"
    answers = await ctx.ask(
        {"confirm": Elicit("Please confirm", _schema("ok", "boolean"))}, state=state
    )
    if ctx.request_state != state:
        raise PrixfixeError("the request state did not come back as it was sent")
    return f"state-ok: confirmed={_content_of(answers['confirm']).get('ok')}"


async def ir_multiple_inputs(ctx: ToolContext, args: NoArguments) -> str:
    answers = await ctx.ask(
        {
            "user_name": Elicit("What is your name?", _schema("name")),
            "greeting": Sample("Generate a greeting", max_tokens=50),
            "client_roots": ListRoots(),
        },
        state="multiple-inputs",
    )
    name = _content_of(answers["user_name"]).get("name")
    greeting = _content_of(answers["greeting"]).get("text")
    return f"{greeting} {name}; {len(answers['client_roots'].get('roots', []))} roots"


async def ir_multi_round(ctx: ToolContext, args: NoArguments) -> str:
    if ctx.request_state is None or not ctx.request_state.startswith("round-2:"):
        answers = await ctx.ask(
            {"step1": Elicit("Step 1: What is your name?", _schema("name"))}, state="round-1"
        )
        name = _content_of(answers["step1"]).get("name", "")
        # Round one is answered: ask the second question, remembering the first answer.
        await ctx.ask(
            {"step2": Elicit("Step 2: What is your favorite color?", _schema("color"))},
            state=f"round-2:{name}",
        )
    name = ctx.request_state.split(":", 1)[1]
    color = _content_of(ctx.input_responses.get("step2", {})).get("color", "")
    return f"{name} likes {color}"


async def ir_tampered_state(ctx: ToolContext, args: NoArguments) -> str:
    # The SDK seals the state; a client that alters it gets -32602 before this runs again.
    await ctx.ask({"confirm": Elicit("Please confirm", _schema("ok", "boolean"))}, state="sealed")
    return "state-ok"


async def ir_capabilities(ctx: ToolContext, args: NoArguments) -> str:
    wanted = {
        "user_name": Elicit("What is your name?", _schema("name")),
        "greeting": Sample("Generate a greeting", max_tokens=50),
        "client_roots": ListRoots(),
    }
    # Ask only for what this client said it can answer.
    answers = await ctx.ask({k: r for k, r in wanted.items() if ctx.supports(r)})
    return f"answered: {', '.join(sorted(answers)) or 'nothing'}"


async def missing_capability(ctx: ToolContext, args: NoArguments) -> str:
    # Needs sampling: a client that did not declare it gets -32021 (SEP-2575).
    answers = await ctx.ask({"reply": Sample("Say something")})
    return str(_content_of(answers["reply"]).get("text", ""))


async def streaming_elicitation(ctx: ToolContext, args: NoArguments) -> str:
    await ctx.progress(0, 1, "asking")
    answers = await ctx.ask({"user_name": Elicit("What is your name?", _schema("name"))})
    return f"Hello, {_content_of(answers['user_name']).get('name', 'stranger')}!"


async def logging_tool(ctx: ToolContext, args: NoArguments) -> str:
    await ctx.log("info", "the logging tool ran")
    await ctx.log("debug", "details")
    return "logged"


#: The suite's `json-schema-2020-12` scenario (SEP-1613, SEP-2106): a tool whose input schema
#: keeps `$schema`, `$defs` with `$anchor`, `additionalProperties`, `allOf`/`anyOf` and
#: `if`/`then`/`else` exactly as declared in the listing.
JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


async def json_schema_tool(ctx: ToolContext, args: dict[str, Any]) -> str:
    return f"contact {args.get('name', 'unnamed')} by {args.get('contactMethod', 'email')}"


# -- declarations -----------------------------------------------------------------------------


def _tool(name: str, description: str, handler: Any, model: type[BaseModel] = NoArguments) -> Tool:
    return Tool(
        name=name,
        title=name.replace("_", " "),
        description=description,
        input_model=model,
        handler=handler,
        mutates=False,
        facet=FACET,
    )


TOOLS: tuple[Tool, ...] = (
    _tool("test_simple_text", "Tests simple text content response.", simple_text),
    _tool("test_image_content", "Tests image content response.", image_content),
    _tool("test_audio_content", "Tests audio content response.", audio_content),
    _tool("test_embedded_resource", "Tests embedded resource content.", embedded_resource),
    _tool(
        "test_multiple_content_types",
        "Tests a response with text, image and resource content.",
        multiple_content_types,
    ),
    _tool("test_error_handling", "Tests error response handling.", error_handling),
    _tool("test_tool_with_logging", "Tests log messages during execution.", with_logging),
    _tool("test_tool_with_progress", "Tests progress notifications.", with_progress),
    _tool("test_sampling", "Tests server-initiated sampling.", sampling, PromptInput),
    _tool("test_elicitation", "Tests server-initiated elicitation.", elicitation, MessageInput),
    _tool(
        "test_elicitation_sep1034_defaults",
        "Tests elicitation with defaults (SEP-1034).",
        elicitation_defaults,
    ),
    _tool(
        "test_elicitation_sep1330_enums",
        "Tests elicitation with enum schemas (SEP-1330).",
        elicitation_enums,
    ),
    _tool(
        "test_input_required_result_elicitation",
        "Asks for a name through an input_required result.",
        ir_elicitation,
    ),
    _tool(
        "test_input_required_result_sampling",
        "Asks the client's model through an input_required result.",
        ir_sampling,
    ),
    _tool(
        "test_input_required_result_list_roots",
        "Asks for the client's roots through an input_required result.",
        ir_list_roots,
    ),
    _tool(
        "test_input_required_result_request_state",
        "Round-trips request state through an input_required result.",
        ir_request_state,
    ),
    _tool(
        "test_input_required_result_multiple_inputs",
        "Asks three things at once through an input_required result.",
        ir_multiple_inputs,
    ),
    _tool(
        "test_input_required_result_multi_round",
        "Asks two questions in two rounds of input_required results.",
        ir_multi_round,
    ),
    _tool(
        "test_input_required_result_tampered_state",
        "Round-trips sealed request state (tampering is refused).",
        ir_tampered_state,
    ),
    _tool(
        "test_input_required_result_capabilities",
        "Asks only for what the client declared it can answer.",
        ir_capabilities,
    ),
    _tool("test_missing_capability", "Needs the sampling capability.", missing_capability),
    _tool(
        "test_streaming_elicitation",
        "Asks for a name; the stream carries only the result.",
        streaming_elicitation,
    ),
    _tool("test_logging_tool", "Logs at info and debug.", logging_tool),
    Tool(
        name="json_schema_2020_12_tool",
        title="JSON Schema 2020-12",
        description="Takes a contact whose input schema uses 2020-12 keywords.",
        input_model=NoArguments,  # not read: the raw schema is the tool's
        handler=json_schema_tool,
        mutates=False,
        facet=FACET,
        input_schema=JSON_SCHEMA_2020_12,
    ),
)


def _template_data(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
    item = variables["id"]
    return json.dumps({"id": item, "templateTest": True, "data": f"Data for ID: {item}"})


RESOURCES: tuple[Resource | ResourceTemplate, ...] = (
    Resource(
        uri="test://static-text",
        name="static-text",
        description="A static text resource for testing.",
        mime_type="text/plain",
        reader=lambda ctx, v: "This is the content of the static text resource.",
    ),
    Resource(
        uri="test://static-binary",
        name="static-binary",
        description="A static binary resource (image) for testing.",
        mime_type="image/png",
        reader=lambda ctx, v: PNG,
    ),
    Resource(
        uri=WATCHED,
        name="watched-resource",
        description="A resource that can be subscribed to for updates.",
        mime_type="text/plain",
        reader=lambda ctx, v: "Watched resource content",
    ),
    ResourceTemplate(
        uri_template="test://template/{id}/data",
        name="template",
        description="A resource template with parameter substitution.",
        mime_type="application/json",
        reader=_template_data,
        completions={"id": lambda ctx, value, chosen: ["123", "456"]},
    ),
)


def _with_arguments(ctx: PromptContext, arguments: Mapping[str, str]) -> str:
    return f"Prompt with arguments: arg1='{arguments['arg1']}', arg2='{arguments['arg2']}'"


def _with_embedded_resource(
    ctx: PromptContext, arguments: Mapping[str, str]
) -> list[PromptMessage]:
    return [
        PromptMessage(
            role="user",
            content=Embedded(
                uri=arguments["resourceUri"],
                text="Embedded resource content for testing.",
                mime_type="text/plain",
            ),
        ),
        PromptMessage(role="user", content="Please process the embedded resource above."),
    ]


def _with_image(ctx: PromptContext, arguments: Mapping[str, str]) -> list[PromptMessage]:
    return [
        PromptMessage(role="user", content=Image(PNG, "image/png")),
        PromptMessage(role="user", content="Please analyze the image above."),
    ]


async def _with_input(ctx: PromptContext, arguments: Mapping[str, str]) -> str:
    request = Elicit("What context should the prompt use?", _schema("context"))
    answers = await ctx.ask({"user_context": request})
    return f"Use this context: {_content_of(answers['user_context']).get('context', '')}"


PROMPTS: tuple[Prompt, ...] = (
    Prompt(
        name="test_simple_prompt",
        description="A simple prompt without arguments.",
        render=lambda ctx, a: "This is a simple prompt for testing.",
    ),
    Prompt(
        name="test_prompt_with_arguments",
        description="A prompt with required arguments.",
        arguments=(
            PromptArgument(
                name="arg1",
                description="First test argument",
                required=True,
                completer=lambda ctx, value, chosen: ["paris", "park", "lisbon"],
            ),
            PromptArgument(name="arg2", description="Second test argument", required=True),
        ),
        render=_with_arguments,
    ),
    Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt that includes an embedded resource.",
        arguments=(
            PromptArgument(name="resourceUri", description="URI of the resource", required=True),
        ),
        render=_with_embedded_resource,
    ),
    Prompt(
        name="test_prompt_with_image",
        description="A prompt that includes image content.",
        render=_with_image,
    ),
    Prompt(
        name="test_input_required_result_prompt",
        description="A prompt that asks the person for context first.",
        render=_with_input,
    ),
)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    for tool in TOOLS:
        register(tool)


@hookimpl
def register_resources(register: Callable[[Resource | ResourceTemplate], None]) -> None:
    for item in RESOURCES:
        register(item)


@hookimpl
def register_prompts(register: Callable[[Prompt], None]) -> None:
    for prompt in PROMPTS:
        register(prompt)
