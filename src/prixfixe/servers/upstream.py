"""One mounted server's connection: started on first use (or at serve start when eager),
one client session reused by every call, stopped when prixfixe stops.

Whatever goes wrong with the server is an `UpstreamError` naming it, never a crash of
prixfixe: it would not start (refused by the exec gate, missing program, credential, failed
handshake), it exited or crashed mid-call, it did not answer within `timeout` (it is then
stopped: a hung server may be wedged), it sent a malformed result or an oversized message.
After a fault the server is started again on its next use, with backoff (`backoff.py`). A
JSON-RPC error the server answers with is its answer to that call, not a fault.

Each connection runs as a task in the task group `Servers.running()` owns, so its client
session outlives the request that started it.

Besides calls, the connection reads the server's lists (tools, and resources, resource
templates and prompts when it advertises them) at start and again when it says one changed,
reads resources, renders prompts, forwards completions, and keeps the server subscribed to
the resources someone watches (again after a restart); what the server says unasked
(`list_changed`, `resources/updated`) goes to the listeners it was built with.

Every message the server sends is masked before the session parses it (`masking.py`): no
credential value it echoes reaches a list, a result, the disk or a client.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import anyio.abc
import mcp_types as types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
from pydantic import BaseModel, ValidationError

from prixfixe import __version__
from prixfixe.config import ServerConfig
from prixfixe.errors import PrixfixeError, UpstreamError
from prixfixe.leash.exec import ExecGate
from prixfixe.leash.net import NetGate
from prixfixe.secrets import Secret
from prixfixe.servers.backoff import Backoff
from prixfixe.servers.masking import masked
from prixfixe.servers.stdio import Ending, process_transport
from prixfixe.tools.validation import check_output

log = logging.getLogger("prixfixe.servers")

State = Literal["stopped", "starting", "running", "failed"]
#: The lists a server has: what a `list_changed` names.
ListKind = Literal["tools", "resources", "prompts"]
#: The most pages of one listing read from one server (a paginator that never ends).
MAX_LIST_PAGES = 100
R = TypeVar("R", bound=BaseModel)


@dataclass(frozen=True)
class Read:
    """The lists just read from a server; None for a list not read this time (or whose
    reading failed: what was known of it stays)."""

    tools: list[types.Tool] | None = None
    resources: list[types.Resource] | None = None
    templates: list[types.ResourceTemplate] | None = None
    prompts: list[types.Prompt] | None = None
    #: What the server says of itself at initialize (`about_server`); None: not read now.
    about: str | None = None


def about_server(initialized: types.InitializeResult) -> str:
    """What a server says of itself when it starts: its title and description (serverInfo)
    and its instructions, joined; '' when it says nothing."""
    info = initialized.server_info
    parts = (info.title, info.description, initialized.instructions)
    return "\n".join(p.strip() for p in parts if p and p.strip())


#: Called with what was read of a server's lists (at start, and on each `list_changed`).
ListsListener = Callable[["Upstream", Read], None]
#: Called with the upstream URI of each `notifications/resources/updated` it sends.
UpdatedListener = Callable[["Upstream", str], None]


class UpstreamRefusal(UpstreamError):
    """The server answered a request with a JSON-RPC error (its answer, not a fault);
    `error` is that error as it sent it."""

    def __init__(self, server: str, message: str, error: types.ErrorData) -> None:
        super().__init__(server, message)
        self.error = error


class _Session(ClientSession):
    """The SDK's client session, but for how a tool's structured result is checked against
    its output schema: as its arguments are (`tools/validation.py`), with refs resolved
    within the schema only, no patterns run, off the event loop and bounded in time; the
    SDK's own check runs the schema's patterns on the loop. `outputs` is each tool's output
    schema as last listed; a tool not listed is not checked."""

    outputs: dict[str, dict[str, Any] | None]

    async def validate_tool_result(self, name: str, result: types.CallToolResult) -> None:
        schema = getattr(self, "outputs", {}).get(name)
        if schema is None:
            return
        if (
            result.structured_content is None
            and "structured_content" not in result.model_fields_set
        ):
            raise RuntimeError(f"{name!r} has an output schema but returned no structured content")
        problem = await check_output(name, schema, result.structured_content)
        if problem is not None:
            raise RuntimeError(problem)


CLIENT_INFO = types.Implementation(name="prixfixe", version=__version__)
#: Starting (the process, the handshake, the first tool list) may take at least this long
#: whatever the per-request `timeout`: a first `npx`/`uvx` start downloads the server.
MIN_START_SECONDS = 30.0


@dataclass(frozen=True)
class Launch:
    """What starting any server needs from the app: its gates and environment."""

    gate: ExecGate
    net: NetGate
    env: Mapping[str, str]
    base_dir: Path


#: Told a server's log message: (level, data, logger), the logger named after the server.
LogListener = Callable[[Any, Any, str], Awaitable[None]]


class Upstream:
    """One configured server and, while it runs, its client session."""

    def __init__(
        self,
        name: str,
        config: ServerConfig,
        launch: Launch,
        on_lists: ListsListener,
        on_updated: UpdatedListener | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self._launch = launch
        self._on_lists = on_lists
        self._on_updated = on_updated
        #: Told each time a start's initialize is answered, before its lists are read (the
        #: progress `prixfixe servers test` shows).
        self.on_initialized: Callable[[types.InitializeResult], None] | None = None
        #: Upstream URIs someone is subscribed to through prixfixe; `_subscribed` those the
        #: running session has subscribed to upstream.
        self._watched: set[str] = set()
        self._subscribed: set[str] = set()
        self.backoff = Backoff()
        self.state: State = "stopped"
        self.last_error: str | None = None
        self.server_info: types.Implementation | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._lock: anyio.Lock | None = None
        self._session: ClientSession | None = None
        self._ending: Ending | None = None
        self._relists: anyio.abc.TaskGroup | None = None
        #: The callers of the calls in flight, told the server's log messages (a server's log
        #: notification names no request, so each caller waiting on it hears it).
        self._listeners: set[LogListener] = set()

    # -- lifecycle ------------------------------------------------------------------------

    def attach(self, tg: anyio.abc.TaskGroup) -> None:
        """Run connections in `tg` from now on (the serving task group)."""
        self._tg, self._lock = tg, anyio.Lock()

    def detach(self) -> None:
        self._tg = self._lock = None

    @property
    def start_timeout(self) -> float:
        return max(self.config.timeout, MIN_START_SECONDS)

    @property
    def running(self) -> bool:
        return self._session is not None and not self._ending_now()

    def _ending_now(self) -> bool:
        return self._ending is None or self._ending.ended.is_set()

    async def session(self) -> ClientSession:
        """The running session, started now if there is none (a clear error if it cannot)."""
        if self._tg is None or self._lock is None:
            raise UpstreamError(self.name, "mounted servers run only while prixfixe serves")
        async with self._lock:
            if self._session is not None and not self._ending_now():
                return self._session
            wait = self.backoff.wait_left()
            if wait > 0:
                raise UpstreamError(
                    self.name,
                    f"{self.last_error}; it is started again on a use in {wait:.1f}s or later",
                    retry_after=round(wait, 1),
                )
            self.state = "starting"
            try:
                session: ClientSession = await self._tg.start(self._run)
            except UpstreamError as exc:
                self._fault(exc.message.removeprefix(f"server {self.name!r}: "))
                raise
            return session

    def stop(self, reason: str = "was stopped") -> None:
        """End the running connection, if any (its task stops the process)."""
        if self._ending is not None:
            self._ending.end(reason)

    def _fault(self, reason: str) -> None:
        self.last_error = reason
        self.state = "failed"
        self.backoff.failed()
        self.stop(reason)

    async def _run(self, *, task_status: anyio.abc.TaskStatus[ClientSession]) -> None:
        ending = Ending(self.name)
        session: ClientSession | None = None
        started = False
        try:
            async with AsyncExitStack() as stack:
                read, write = await self._connect(stack, ending)
                # Everything the server says is masked before the session parses it.
                read = masked(read)
                session = await stack.enter_async_context(
                    _Session(
                        read,
                        write,
                        # Each request is bounded where it is made: the start by
                        # `start_timeout`, a call by `timeout`.
                        read_timeout_seconds=None,
                        message_handler=self._on_message,
                        logging_callback=self._on_log,
                        client_info=CLIENT_INFO,
                    )
                )
                with anyio.fail_after(self.start_timeout):
                    initialized = await session.initialize()
                    if self.on_initialized is not None:
                        self.on_initialized(initialized)
                    tools = await _list_tools(session)
                    lists = await self._read_lists(session, ("resources", "prompts"))
                self.server_info = initialized.server_info
                async with anyio.create_task_group() as relists:
                    self._session, self._ending, self._relists = session, ending, relists
                    self._subscribed = set()
                    self.state = "running"
                    about = about_server(initialized)
                    self._on_lists(self, Read(tools=tools, about=about, **lists))
                    if self._watched:  # subscriptions a previous session had
                        relists.start_soon(self._resubscribe, session)
                    task_status.started(session)
                    started = True
                    await ending.ended.wait()
                    relists.cancel_scope.cancel()
        except Exception as exc:  # noqa: BLE001 - the top-level handler of a connection task
            if not started:  # the caller of `start` gets it; after that, nobody would
                raise UpstreamError(
                    self.name, _start_failure(exc, ending, self.start_timeout)
                ) from None
            log.warning("[%s] connection ended: %s", self.name, _reason(exc, ending))
        finally:
            if started and self._session is session:
                self._session = self._relists = None
                if self.state == "running":
                    self.state = "stopped"

    async def _connect(
        self, stack: AsyncExitStack, ending: Ending
    ) -> tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]:
        config, launch = self.config, self._launch
        if config.command is not None:
            env = await self._resolve(config.env)
            base = launch.base_dir
            cwd = None if config.cwd is None else base / Path(config.cwd).expanduser()
            process = await launch.gate.open_server(
                [config.command, *config.args], base_dir=base, cwd=cwd, env=env
            )
            return await stack.enter_async_context(process_transport(process, ending))
        assert config.url is not None
        launch.net.check(config.url)
        headers = {k: v.reveal() for k, v in (await self._resolve(config.headers)).items()}
        client = await stack.enter_async_context(launch.net.client(headers=headers))
        read, write = await stack.enter_async_context(
            streamable_http_client(config.url, http_client=client)
        )
        return read, write

    async def _resolve(self, refs: Mapping[str, Any]) -> dict[str, Secret]:
        from prixfixe.routines.credentials import resolve

        launch = self._launch
        return {
            key: await resolve(
                key,
                ref,
                step=self.name,
                env=launch.env,
                gate=launch.gate,
                base_dir=launch.base_dir,
            )
            for key, ref in refs.items()
        }

    # -- what the server says unasked -----------------------------------------------------

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._relist_soon("tools")
        elif isinstance(message, types.ResourceListChangedNotification):
            self._relist_soon("resources")
        elif isinstance(message, types.PromptListChangedNotification):
            self._relist_soon("prompts")
        elif isinstance(message, types.ResourceUpdatedNotification):
            if self._on_updated is not None:
                self._on_updated(self, message.params.uri)
        elif isinstance(message, Exception):
            log.warning("[%s] %s", self.name, message)

    def _relist_soon(self, kind: ListKind) -> None:
        session, relists = self._session, self._relists
        if session is not None and relists is not None:
            relists.start_soon(self._relist, session, kind)

    async def _relist(self, session: ClientSession, kind: ListKind) -> None:
        if kind == "tools":
            try:
                with anyio.fail_after(self.config.timeout):
                    tools = await _list_tools(session)
            except (MCPError, ValidationError, TimeoutError) as exc:
                log.warning("[%s] could not re-read its tools: %s", self.name, exc)
                return
            self._on_lists(self, Read(tools=tools))
            return
        with anyio.move_on_after(self.config.timeout):
            lists = await self._read_lists(session, (kind,))
            if any(v is not None for v in lists.values()):
                self._on_lists(self, Read(**lists))

    async def _read_lists(
        self, session: ClientSession, kinds: tuple[ListKind, ...]
    ) -> dict[str, Any]:
        """The resource and prompt lists of `kinds` the server advertises (empty for one it
        does not); a list that cannot be read is None (logged), and does not fail a start."""
        caps = session.server_capabilities or types.ServerCapabilities()
        out: dict[str, Any] = {}
        readers: dict[str, Callable[[], Awaitable[Any]]] = {}
        if "resources" in kinds:
            readers["resources"] = lambda: _list_all(
                session, types.ListResourcesRequest, types.ListResourcesResult, "resources"
            )
            readers["templates"] = lambda: _list_all(
                session,
                types.ListResourceTemplatesRequest,
                types.ListResourceTemplatesResult,
                "resource_templates",
            )
        if "prompts" in kinds:
            readers["prompts"] = lambda: _list_all(
                session, types.ListPromptsRequest, types.ListPromptsResult, "prompts"
            )
        for key, read in readers.items():
            advertised = caps.prompts if key == "prompts" else caps.resources
            if advertised is None:
                out[key] = []
                continue
            try:
                out[key] = await read()
            except (MCPError, ValidationError) as exc:
                log.warning("[%s] could not read its %s: %s", self.name, key, _plain(exc))
                out[key] = None
        return out

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        log.info("[%s] %s: %s", self.name, params.level, params.data)
        logger = self.name if params.logger is None else f"{self.name}/{params.logger}"
        for listener in list(self._listeners):
            await listener(params.level, params.data, logger)

    # -- calling ----------------------------------------------------------------------------

    @contextmanager
    def _faults(self, what: str) -> Iterator[None]:
        """Every fault of one request as an `UpstreamError` naming the server (the server
        stopped where it may be wedged); its JSON-RPC error answer as `UpstreamRefusal`."""
        ending = self._ending
        timeout = self.config.timeout
        try:
            yield
        except MCPError as exc:
            code = exc.error.code
            if code == CONNECTION_CLOSED:
                reason = ending.describe() if ending is not None else "closed the connection"
                self._fault(reason)
                raise UpstreamError(
                    self.name, f"{reason} during {what}; it is started again on its next use"
                ) from None
            if code == REQUEST_TIMEOUT:
                reason = f"did not answer {what} within {timeout:g}s"
                self._fault(reason)
                raise UpstreamError(
                    self.name, f"{reason}; it was stopped and is started again on its next use"
                ) from None
            raise UpstreamRefusal(
                self.name, f"{what} failed: {exc.error.message} (JSON-RPC error {code})", exc.error
            ) from None
        except ValidationError as exc:
            reason = f"answered {what} with a malformed result: {_first_error(exc)}"
            self._fault(reason)
            raise UpstreamError(
                self.name, f"{reason}; it is started again on its next use"
            ) from None
        except RuntimeError as exc:
            # The SDK checks structuredContent against the tool's output schema, and refuses
            # an input-required answer prixfixe did not ask to handle.
            raise UpstreamError(self.name, f"{what}: {exc}") from None

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        progress: ProgressFnT | None = None,
        log_to: LogListener | None = None,
    ) -> types.CallToolResult:
        """Call `tool` and return its result unchanged; an `UpstreamError` for every fault.
        The server's progress goes to `progress`, its log messages meanwhile to `log_to`."""
        session = await self.session()
        if log_to is not None:
            self._listeners.add(log_to)
        try:
            with self._faults(repr(tool)):
                result = await session.call_tool(
                    tool,
                    arguments,
                    read_timeout_seconds=self.config.timeout,
                    progress_callback=progress,
                )
        finally:
            self._listeners.discard(log_to)
        if not isinstance(result, types.CallToolResult):
            raise UpstreamError(self.name, f"{tool!r} answered with a result of another kind")
        self.backoff.succeeded()
        return result

    async def request(
        self,
        what: str,
        request: types.ClientRequest | types.Request[Any, Any],
        result_type: type[R],
    ) -> R:
        """Send `request` (started first if need be) within `timeout`; its result as the
        server sent it. `what` names the request in errors ("reading 'x://y'")."""
        session = await self.session()
        with self._faults(what):
            result = await session.send_request(
                request, result_type, request_read_timeout_seconds=self.config.timeout
            )
        self.backoff.succeeded()
        return result

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        request = types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri))
        return await self.request(f"reading {uri!r}", request, types.ReadResourceResult)

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> types.GetPromptResult:
        params = types.GetPromptRequestParams(name=name, arguments=arguments or None)
        request = types.GetPromptRequest(params=params)
        return await self.request(f"prompt {name!r}", request, types.GetPromptResult)

    async def complete(
        self,
        ref: types.ResourceTemplateReference | types.PromptReference,
        argument: str,
        value: str,
        chosen: Mapping[str, str] | None,
    ) -> types.Completion | None:
        """The server's completion, as it sent it; None when it does not complete."""
        session = await self.session()
        caps = session.server_capabilities
        if caps is None or caps.completions is None:
            return None
        params = types.CompleteRequestParams(
            ref=ref,
            argument=types.CompletionArgument(name=argument, value=value),
            context=types.CompletionContext(arguments=dict(chosen)) if chosen else None,
        )
        what = f"completing {argument!r}"
        request = types.CompleteRequest(params=params)
        result = await self.request(what, request, types.CompleteResult)
        return result.completion

    # -- subscriptions ------------------------------------------------------------------------

    async def watch(self, uri: str) -> None:
        """Keep the server subscribed to `uri` (started now if need be, and subscribed again
        after a restart), if it advertises subscriptions."""
        self._watched.add(uri)
        try:
            session = await self.session()
        except UpstreamError:
            self._watched.discard(uri)
            raise
        await self._subscribe(session, uri)

    def unwatch(self, uri: str) -> None:
        """Nobody watches `uri` any more: unsubscribe upstream (in the background)."""
        self._watched.discard(uri)
        session, relists = self._session, self._relists
        if uri in self._subscribed and session is not None and relists is not None:
            self._subscribed.discard(uri)
            relists.start_soon(self._unsubscribe, session, uri)

    def subscribes(self) -> bool:
        caps = self._session.server_capabilities if self._session is not None else None
        return bool(caps and caps.resources and caps.resources.subscribe)

    async def _subscribe(self, session: ClientSession, uri: str) -> None:
        if uri in self._subscribed or session is not self._session or not self.subscribes():
            return
        self._subscribed.add(uri)
        request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
        try:
            with self._faults(f"subscribing to {uri!r}"):
                await session.send_request(
                    request, types.EmptyResult, request_read_timeout_seconds=self.config.timeout
                )
        except UpstreamError:
            self._subscribed.discard(uri)
            raise

    async def _unsubscribe(self, session: ClientSession, uri: str) -> None:
        request = types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri))
        try:
            with anyio.fail_after(self.config.timeout):
                await session.send_request(request, types.EmptyResult)
        except (MCPError, ValidationError, TimeoutError) as exc:
            log.info("[%s] could not unsubscribe from %s: %s", self.name, uri, _plain(exc))

    async def _resubscribe(self, session: ClientSession) -> None:
        for uri in list(self._watched):
            try:
                await self._subscribe(session, uri)
            except UpstreamError as exc:
                log.warning("%s", exc.message)
                return


async def _list_all(
    session: ClientSession, request_type: Any, result_type: type[Any], field: str
) -> list[Any]:
    """Every page of one listing (at most `MAX_LIST_PAGES`)."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.send_request(request_type(params=params), result_type)
        items += getattr(page, field)
        cursor = page.next_cursor
        if not cursor:
            break
    return items


def _plain(exc: BaseException) -> str:
    if isinstance(exc, MCPError):
        return f"{exc.error.message} (JSON-RPC error {exc.error.code})"
    if isinstance(exc, ValidationError):
        return f"malformed answer: {_first_error(exc)}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


async def _list_tools(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            break
    if isinstance(session, _Session):
        session.outputs = {t.name: t.output_schema for t in tools}
    return tools


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _reason(exc: BaseException, ending: Ending) -> str:
    exc = _leaf(exc)
    if isinstance(exc, PrixfixeError):
        return exc.message
    if isinstance(exc, MCPError):
        if exc.error.code == CONNECTION_CLOSED:
            return ending.describe()
        return f"{exc.error.message} (JSON-RPC error {exc.error.code})"
    if isinstance(exc, ValidationError):
        return f"sent a malformed answer: {_first_error(exc)}"
    return f"{type(exc).__name__}: {exc}"


def _start_failure(exc: BaseException, ending: Ending, timeout: float) -> str:
    leaf = _leaf(exc)
    if isinstance(leaf, TimeoutError):
        detail = f"; it {ending.describe()}" if ending.reason else ""
        return f"did not finish starting within {timeout:g}s{detail}"
    return f"could not start: {_reason(leaf, ending)}"
