"""The one exception tree, and the one place it becomes a JSON-RPC error.

Every message names what was wrong (the tool, the field, the file and key) so that a person
or a model can fix the input without reading a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    # Importing `mcp` loads the whole SDK (client and server); the CLI commands that never
    # speak MCP should not pay for it, so the error type is imported where one is made.
    from mcp.shared.exceptions import MCPError

# JSON-RPC error codes, as `mcp_types` defines them (tests/cli/test_lazy.py checks they agree):
# importing `mcp_types` builds every wire model, which costs a command that never speaks MCP
# most of its start-up.
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021


class PrixfixeError(Exception):
    """Base of every error prixfixe raises on purpose.

    `message` is what a client (and its model) reads, naming tools and protocol methods;
    `cli`, when given, is the same message for a person at the `prixfixe` command, naming
    commands instead (`prixfixe store kinds` rather than `store_kinds`)."""

    code: int = INTERNAL_ERROR

    def __init__(self, message: str, *, cli: str | None = None, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.cli_message = cli
        self.data = data

    @property
    def for_people(self) -> str:
        """The message in the CLI's own terms."""
        return self.cli_message or self.message


class ConfigError(PrixfixeError):
    """The configuration file or environment holds something invalid."""

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None) -> None:
        where = ", ".join(p for p in (file and f"file {file}", key and f"key {key!r}") if p)
        super().__init__(f"invalid configuration ({where}): {message}" if where else message)
        self.data = {k: v for k, v in (("file", file), ("key", key)) if v is not None}


class RegistryError(PrixfixeError):
    """A plugin declared something the registry cannot accept (duplicate name, bad facet)."""


class UnknownToolError(PrixfixeError):
    """A tool name that no loaded plugin registered (or one this connection may not call)."""

    code = INVALID_PARAMS

    def __init__(self, name: str, suggestions: list[str] | None = None) -> None:
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(
            f"unknown tool {name!r}{hint} (find tools with tool_search)",
            cli=f"unknown tool {name!r}{hint} (find tools with: prixfixe tools search WORDS)",
            name=name,
            suggestions=suggestions or [],
        )


class ToolDeniedError(PrixfixeError):
    """The tool's facet is denied by configuration (`[mcp] deny`)."""

    code = INVALID_PARAMS

    def __init__(self, name: str, facet: str, source: str) -> None:
        super().__init__(
            f"tool {name!r} is in facet {facet!r}, which is denied by {source}",
            name=name,
            facet=facet,
        )


#: What is wrong with one argument: left out, a value outside its enum, the wrong JSON type,
#: not accepted at all, or anything else (a constraint, a format, a model's own check).
ArgumentProblemKind: TypeAlias = Literal["missing", "enum", "type", "extra", "other"]


@dataclass(frozen=True)
class ArgumentProblem:
    """One problem with a call's arguments: where (`path`, a dot path such as `record.title`
    or `items[0].name`; empty for the arguments as a whole), what kind, and the message."""

    path: str
    kind: ArgumentProblemKind
    message: str

    def as_data(self) -> dict[str, str]:
        return {"path": self.path, "kind": self.kind, "message": self.message}


class InvalidArgumentsError(PrixfixeError):
    """Arguments that do not match a tool's input schema. `problems` is each problem's message
    (naming its field); `issues` the same problems, structured."""

    code = INVALID_PARAMS

    def __init__(self, tool: str, problems: Sequence[ArgumentProblem | str]) -> None:
        issues = tuple(
            p if isinstance(p, ArgumentProblem) else ArgumentProblem("", "other", p)
            for p in problems
        )
        messages = [p.message for p in issues]
        listed = "; ".join(messages)
        super().__init__(f"invalid arguments for {tool!r}: {listed}", tool=tool, problems=messages)
        self.tool = tool
        self.problems = messages
        self.issues = issues


class ToolRefusedError(PrixfixeError):
    """A request the tool understands but will not carry out (e.g. tool_invoke on the trio)."""

    code = INVALID_PARAMS


class StoreError(PrixfixeError):
    """The store refused a request or could not be used; the message names kind, field or id."""

    code = INVALID_PARAMS


class UnknownKindError(StoreError):
    """A kind no loaded plugin registered."""

    def __init__(self, kind: str, known: list[str], suggestions: list[str] | None = None) -> None:
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        listed = f"unknown kind {kind!r}{hint} (kinds: {', '.join(known) or 'none'}; "
        super().__init__(
            f"{listed}each kind's fields: store_kinds)",
            cli=f"{listed}each kind's fields: prixfixe store kinds KIND)",
            kind=kind,
            known=known,
        )


class InvalidRecordError(StoreError):
    """A record that does not match its kind's schema; `problems` names each field."""

    def __init__(self, kind: str, problems: list[str]) -> None:
        said = f"invalid {kind} record: {'; '.join(problems)} (nothing was written; the schema: "
        super().__init__(
            f"{said}store_kinds(kind={kind!r}))",
            cli=f"{said}prixfixe store kinds {kind})",
            kind=kind,
            problems=problems,
        )
        self.problems = problems


class UnknownRecordError(StoreError):
    """No record of that kind has that id."""

    def __init__(self, kind: str, record_id: int) -> None:
        super().__init__(f"no {kind} record with id {record_id}", kind=kind, id=record_id)


class ClosedRecordError(StoreError):
    """A change to a record that is already closed."""

    def __init__(self, kind: str, record_id: int) -> None:
        super().__init__(
            f"{kind} record {record_id} is closed; a closed record is kept as it is "
            "(put a new record instead)",
            kind=kind,
            id=record_id,
        )


class InvalidFilterError(StoreError):
    """A `where` or `order_by` the kind cannot answer (unknown field, bad operator or value)."""

    def __init__(self, kind: str, problems: list[str]) -> None:
        super().__init__(
            f"invalid query on kind {kind!r}: {'; '.join(problems)}", kind=kind, problems=problems
        )
        self.problems = problems


class InvalidCursorError(StoreError):
    """A cursor that is malformed, from another store, or from a different query."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(
            f"invalid cursor for kind {kind!r}: {reason} (start again without a cursor)",
            kind=kind,
        )


class StoreAccessError(StoreError):
    """An owner's slice touched a table it does not own, or a statement slices may not run."""

    def __init__(self, owner: str, what: str) -> None:
        super().__init__(f"store slice of {owner!r} refused: {what}", owner=owner)


class StoreVersionError(StoreError):
    """The store file was written by a newer prixfixe (or plugin) than this one."""

    code = INTERNAL_ERROR


class MigrationError(StoreError):
    """A migration failed, or an owner's recorded migrations differ from its declared ones."""

    code = INTERNAL_ERROR


class StoreBusyError(StoreError):
    """The write lock stayed with another process past the bounded wait."""

    code = INTERNAL_ERROR


class StoreFaultError(StoreError):
    """The store's file could not be used as asked (not the request's fault)."""

    code = INTERNAL_ERROR


class StoreFullError(StoreFaultError):
    """The disk holding the store (or the store's size limit) is full."""


class StoreReadOnlyError(StoreFaultError):
    """The store's file (or its directory, or filesystem) cannot be written by this process."""


class StoreCorruptError(StoreFaultError):
    """The store's file is damaged (or is not an SQLite database)."""


class StoreIOError(StoreFaultError):
    """The operating system failed a read or write of the store (or cannot open it)."""


class ResourceError(PrixfixeError):
    """A resource request that cannot be answered; the message names the URI."""


#: "Resource not found" before 2026-07-28 (spec 2025-11-25, server/resources, error handling).
#: From 2026-07-28 on (SEP-2164) it is -32602, Invalid params.
LEGACY_RESOURCE_NOT_FOUND = -32002
RESOURCE_NOT_FOUND_IS_INVALID_PARAMS_FROM = "2026-07-28"


class ResourceNotFoundError(ResourceError):
    """No resource has this URI (or a template matched, but the instance does not exist)."""

    code = INVALID_PARAMS

    def __init__(self, uri: str, detail: str = "") -> None:
        hint = f": {detail}" if detail else " (see resources/list and resources/templates/list)"
        cli = f": {detail}" if detail else " (see prixfixe resources list, and --templates)"
        super().__init__(
            f"resource not found: {uri}{hint}", cli=f"resource not found: {uri}{cli}", uri=uri
        )


class ResourceReadError(ResourceError):
    """A reader failed: an internal error, never a success-shaped text."""

    def __init__(self, uri: str, reason: str) -> None:
        super().__init__(f"reading {uri} failed: {reason}", uri=uri)


class ResourceTooLargeError(ResourceError):
    """A read over the configured bound (`[resources] max_read_bytes`)."""

    def __init__(self, uri: str, size: int, limit: int) -> None:
        super().__init__(
            f"resource {uri} is {size:,} bytes; reads are bounded at {limit:,} bytes "
            "([resources] max_read_bytes)",
            uri=uri,
            size=size,
            limit=limit,
        )


class InvalidListCursorError(ResourceError):
    """A `resources/list` or `resources/templates/list` cursor this server did not issue."""

    code = INVALID_PARAMS

    def __init__(self, listing: str, reason: str) -> None:
        super().__init__(
            f"invalid cursor for {listing}: {reason} (start again without a cursor)",
            listing=listing,
        )


class UnknownTemplateError(ResourceError):
    """A completion for a resource template that is not registered, or for a variable it
    does not have."""

    code = INVALID_PARAMS


class RoutineError(PrixfixeError):
    """A routine cannot run at all: unknown routine or step type, an invalid inline step, a
    consumer's schema pin that the data no longer meets, a report that does not exist."""

    code = INVALID_PARAMS


class KnowledgeError(PrixfixeError):
    """A knowledge-base request that cannot be done: an invalid collection name, an unknown
    collection, a search query with no words. The message names the value."""

    code = INVALID_PARAMS


class PromptError(PrixfixeError):
    """A prompt request that cannot be answered; the message names the prompt."""

    code = INVALID_PARAMS


class StepFailure(PrixfixeError):
    """A step failed; the routine goes on and the failure becomes data in its report.

    `kind` is a short machine-readable word (`timeout`, `refused`, `program-missing`,
    `credential`, `invalid-output`, `exit-status`, `error`); the message names the step and
    what went wrong. Step handlers raise it (or a subclass) for failures they understand.
    """

    def __init__(self, message: str, *, kind: str = "error", **data: Any) -> None:
        super().__init__(message, kind=kind, **data)
        self.kind = kind


class ExecRefusedError(StepFailure):
    """The exec gate refused a program: it is not in the grant."""

    def __init__(self, message: str, *, program: str, grant: list[str]) -> None:
        super().__init__(message, kind="refused", program=program, grant=grant)
        self.program = program
        self.grant = grant


class FsRefusedError(StepFailure):
    """The file gate refused a path: it is outside every granted root, escapes one through a
    symlink, or is a special file (a device, a FIFO, `/proc`)."""

    def __init__(self, message: str, *, path: str, grant: str) -> None:
        super().__init__(message, kind="refused", path=path, grant=grant)
        self.path = path
        self.grant = grant


class NetRefusedError(StepFailure):
    """The network gate refused a connection: its host is not granted."""

    def __init__(self, message: str, *, host: str, grant: list[str]) -> None:
        super().__init__(message, kind="refused", host=host, grant=grant)
        self.host = host
        self.grant = grant


class LeashLimitError(PrixfixeError):
    """A caveat of the leash ran out: `max_calls` for this session, or `valid_for_generation`."""


class CredentialError(StepFailure):
    """A credential reference could not be resolved (unset variable, missing file, ...)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="credential")


class UnknownPromptError(PromptError):
    """No registered prompt has this name."""

    def __init__(self, name: str, suggestions: list[str] | None = None) -> None:
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(
            f"unknown prompt {name!r}{hint} (prompts/list shows them)",
            name=name,
            suggestions=suggestions or [],
        )


class InvalidPromptArgumentsError(PromptError):
    """Arguments a prompt does not take, or required ones missing; `problems` names each."""

    def __init__(self, name: str, problems: list[str]) -> None:
        super().__init__(
            f"invalid arguments for prompt {name!r}: {'; '.join(problems)}",
            name=name,
            problems=problems,
        )
        self.problems = problems


class PromptRenderError(PromptError):
    """A prompt's renderer failed: an internal error naming the prompt."""

    code = INTERNAL_ERROR


class UpstreamError(PrixfixeError):
    """A mounted MCP server could not answer: it would not start, crashed, timed out, sent
    something malformed, or is waiting out its restart backoff. The message names the server
    and what happened; prixfixe itself goes on serving."""

    def __init__(self, server: str, message: str, **data: Any) -> None:
        super().__init__(f"server {server!r}: {message}", server=server, **data)
        self.server = server


class ServerNotStartedError(UpstreamError):
    """A tool name in a mounted server's namespace (`SERVER.tool`) while that server's tool
    list is not known: it is still starting, or it did not start. Says which and why, rather
    than "unknown tool" (the name may well be right); invalid params, as an unknown tool is."""

    code = INVALID_PARAMS

    def __init__(self, server: str, tool: str, state: str, message: str) -> None:
        super().__init__(server, message, name=tool, state=state)


class MissingClientCapabilityError(PrixfixeError):
    """A request needs a client capability (elicitation, sampling, roots) that the client did
    not declare on this request (2026-07-28, SEP-2575): -32021, HTTP 400."""

    code = MISSING_REQUIRED_CLIENT_CAPABILITY

    def __init__(self, capabilities: list[str]) -> None:
        names = ", ".join(capabilities)
        super().__init__(
            f"this request needs the client capabilities {names}, which the client did not "
            "declare in _meta io.modelcontextprotocol/clientCapabilities",
            requiredCapabilities={name: {} for name in capabilities},
        )


def to_mcp_error(error: PrixfixeError, *, protocol_version: str | None = None) -> MCPError:
    """Map a prixfixe error to the JSON-RPC error the SDK sends on the wire.

    `protocol_version` is the negotiated revision, for the one code that differs between
    revisions: resource not found (-32002 before 2026-07-28, -32602 from it on)."""
    from mcp_types.version import is_version_at_least

    code = error.code
    if (
        isinstance(error, ResourceNotFoundError)
        and protocol_version is not None
        and not is_version_at_least(protocol_version, RESOURCE_NOT_FOUND_IS_INVALID_PARAMS_FROM)
    ):
        code = LEGACY_RESOURCE_NOT_FOUND
    from mcp.shared.exceptions import MCPError

    return MCPError(code=code, message=error.message, data=error.data or None)
