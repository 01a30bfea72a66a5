"""The MCP layer: a thin low-level `Server` over the app. Both protocol revisions the SDK
serves (2025-11-25 with `initialize`, 2026-07-28 stateless) reach the same handlers: tools
through `App.call_tool`, resources through the resource service (`app.resources`), change
notifications through `app.notifier` (`resources/subscribe` on 2025-11-25,
`subscriptions/listen` on 2026-07-28)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged

from prixfixe import __version__
from prixfixe.app import App
from prixfixe.errors import ConfigError, PrixfixeError, to_mcp_error
from prixfixe.leash.redact import redact, redact_data
from prixfixe.tools.results import error_result

SERVER_NAME = "prixfixe"
#: What the server sends on 2025-11-25 connections, so its capabilities say so truthfully
#: (2026-07-28 derives the same from serving `subscriptions/listen`).
NOTIFICATIONS = NotificationOptions(
    prompts_changed=True, resources_changed=True, tools_changed=True
)
#: A stateless server's 2025-11-25 requests each end their own connection with their answer,
#: so nothing could be sent later: it promises no list-changed notifications there, and
#: serves no `resources/subscribe` (2026-07-28's `subscriptions/listen` is a stream and works).
STATELESS_NOTIFICATIONS = NotificationOptions(
    prompts_changed=False, resources_changed=False, tools_changed=False
)


class PrixfixeServer(Server[Any]):
    """The SDK's low-level server, advertising the list-changed notifications prixfixe sends.

    Every transport asks the server for its initialization options without arguments; this
    is the one place to say that `tools` and `resources` send `listChanged`. The instructions
    are written when a session asks for them (`initialize`, `server/discover`), not once when
    the server is built: they carry the day the session starts."""

    #: Writes the instructions each time they are sent; None: the fixed text given.
    instructions_source: Callable[[], str] | None = None
    #: The list-changed notifications promised on 2025-11-25 connections.
    notifications: NotificationOptions = NOTIFICATIONS

    @property
    def instructions(self) -> str | None:
        source = self.instructions_source
        return source() if source is not None else self._fixed_instructions

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        self._fixed_instructions = value

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or self.notifications, experimental_capabilities, extensions
        )


#: What the SDK's AES-GCM codec asks of a key.
MIN_STATE_KEY_BYTES = 32


def build_server(app: App, *, stateless: bool = False) -> Server[Any]:
    """The low-level server with prixfixe's handlers. `stateless` (`serve --http
    --stateless`): 2025-11-25 requests have no connection that outlives them, so
    `resources/subscribe` is not served there (a client sees `subscribe: false` and gets
    "method not found", rather than a subscription that would never fire)."""
    notifier = app.notifier
    resources = app.resources
    prompts = app.prompts

    @contextmanager
    def jsonrpc_errors(ctx: ServerRequestContext[Any]) -> Iterator[None]:
        """The one translation of prixfixe errors into the negotiated revision's JSON-RPC
        errors, for every handler."""
        try:
            yield
        except PrixfixeError as exc:
            # A message may quote what a step or a file said: mask credentials on the way out.
            exc.message, exc.data = redact(exc.message), redact_data(exc.data)
            raise to_mcp_error(exc, protocol_version=ctx.protocol_version) from None

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        notifier.listening(ctx, ToolsListChanged)
        return app.list_tools_result()

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        with jsonrpc_errors(ctx):
            spent = await app.count_call(ctx)
            if spent is not None:
                app.log_refused(params.name, params.arguments, ctx)
                return error_result(spent)
            return await app.call_tool(params.name, params.arguments, ctx)

    def input_schema(name: str) -> dict[str, Any] | None:
        return app.registry.get(name).input_schema if name in app.registry else None

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        notifier.listening(ctx, ResourcesListChanged)
        with jsonrpc_errors(ctx):
            return await resources.list_resources(params.cursor if params else None)

    async def list_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        notifier.listening(ctx, ResourcesListChanged)
        with jsonrpc_errors(ctx):
            return resources.list_templates(params.cursor if params else None)

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        with jsonrpc_errors(ctx):
            return await resources.read(params.uri, ctx)

    async def subscribe(
        ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        with jsonrpc_errors(ctx):
            resources.resolve(params.uri)
            await notifier.subscribe(ctx, params.uri)
        return types.EmptyResult()

    async def unsubscribe(
        ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        await notifier.unsubscribe(ctx, params.uri)
        return types.EmptyResult()

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        notifier.listening(ctx, PromptsListChanged)
        with jsonrpc_errors(ctx):
            return prompts.list_prompts(params.cursor if params else None)

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        with jsonrpc_errors(ctx):
            return await prompts.get(params.name, params.arguments, ctx)

    async def complete(
        ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        ref = params.ref
        context = params.context.arguments if params.context else None
        argument = params.argument
        with jsonrpc_errors(ctx):
            if isinstance(ref, types.PromptReference):
                completion = await prompts.complete(
                    ref.name, argument.name, argument.value, context, ctx
                )
            else:
                completion = await resources.complete(
                    ref.uri, argument.name, argument.value, context, ctx
                )
        return types.CompleteResult(completion=completion)

    @asynccontextmanager
    async def lifespan(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        try:
            async with notifier.running(), app.serving():
                yield {}
        finally:
            # The store opens on first use; whatever opened it, shutdown closes it.
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(app.close_store)

    async def set_log_level(
        ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        app.set_log_level(ctx, params.level)
        return types.EmptyResult()

    server = PrixfixeServer(
        SERVER_NAME,
        version=__version__,
        title="prixfixe",
        instructions=app.instructions(),
        lifespan=lifespan,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=None if stateless else subscribe,
        on_unsubscribe_resource=None if stateless else unsubscribe,
        on_subscriptions_listen=notifier.listen,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
    )
    server.instructions_source = app.instructions
    if stateless:
        server.notifications = STATELESS_NOTIFICATIONS
    # `logging/setLevel` is the 2025-11-25 way to choose which log messages a connection
    # hears (2026-07-28 asks per request, and the SDK honours that itself).
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_log_level)
    # A tool that asks the client for input on 2026-07-28 gets its `state` back on the next
    # round; the boundary seals it (AES-GCM) so a client cannot forge it.
    server.middleware.append(
        RequestStateBoundary(request_state_security(app), default_audience=SERVER_NAME)
    )
    return server


def request_state_security(app: App) -> RequestStateSecurity:
    """The keys that seal `requestState`: `[http] state_keys` when configured (shared by every
    instance behind one address, so a round trip begun on one completes on another), else a
    key made now for this process alone. A key that is missing or too short stops the start,
    naming which."""
    refs = app.config.model.http.state_keys
    if not refs:
        return RequestStateSecurity.ephemeral()
    keys: list[str] = []
    for index, ref in enumerate(refs):
        key = f"http.state_keys[{index}]"
        value = ref.resolve(app.env, key=key).reveal()
        if len(value.encode()) < MIN_STATE_KEY_BYTES:
            raise ConfigError(
                f"{key} ({ref.describe()}) is {len(value.encode())} bytes; a state key must be "
                f"at least {MIN_STATE_KEY_BYTES} bytes of secret randomness "
                '(python -c "import secrets; print(secrets.token_hex(32))")'
            )
        keys.append(value)
    try:
        return RequestStateSecurity(keys=keys)
    except ValueError as exc:  # e.g. the same key twice
        raise ConfigError(f"http.state_keys: {exc}") from None
