"""Running one program: `run_program(host, code, request, limits) -> ProgramOutcome`.

A plain async function, so anything that has a host and a request (the `program_run` tool,
a routine's `program` step through `App.run_program`) runs a program the same way.

CONTRACT (the program's only door): the sandbox has no file system, network, environment,
subprocess or host imports (pydantic-monty's defaults: `open` and `os` calls raise
`PermissionError`, `os.environ` is unsupported, only its own small standard library
imports). The one host function it gets is `call_tool(name, arguments=None)`, and each call
goes through exactly what a direct `tools/call` goes through: `count_call` against
`[leash] max_calls`, then `Host.call_tool` with the outer call's request (facets, deny lists,
the leash, argument validation with the same errors, redaction of the result before the
program sees it), with `interactive=False` (a program cannot stop to ask the person: a
missing argument gets the fallback error a client without elicitation gets). The program
cannot call `program_run` (no nesting) nor the discovery trio; nor can it reach a `program`
step through a routine tool (`inside_program()` is true for everything its calls run).
"""

from __future__ import annotations

import json
import math
import re
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio
import mcp_types as types

from prixfixe.errors import PrixfixeError
from prixfixe.leash.redact import redact
from prixfixe.programs.sandbox import Limits, SandboxUnavailableError
from prixfixe.tokens import count_tokens
from prixfixe.tools.discovery import TRIO

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from prixfixe.declarations.host import Host

#: The tool that runs programs: a program cannot call it (no program inside a program).
PROGRAM_TOOL = "program_run"
#: What a program may not call: itself, and the discovery trio (a program names its tools;
#: finding and describing them is the model's step before it writes the program).
NOT_FROM_PROGRAMS = frozenset({PROGRAM_TOOL, *TRIO})
#: Fed before the program, in the same session, so its line numbers are its own: a failed
#: call raises an exception the program can catch as `ToolError`. (The sandbox has no
#: classes of its own that inherit, so `ToolError` is `Exception` itself.)
PRELUDE = "ToolError = Exception\n"
#: The most characters of `print` output a result keeps.
PRINT_CHARS = 4000
#: The most lines of a failed program's traceback shown.
TRACEBACK_LINES = 12

#: True while a program runs, for everything its tool calls run: a `program` step reached
#: from a program (through `routine_run`, `step_run`, ...) is refused, as `program_run` is.
_RUNNING: ContextVar[bool] = ContextVar("prixfixe_program_running", default=False)

FailureKind = Literal["syntax", "runtime", "timeout", "memory", "calls", "crashed", "unavailable"]


class ProgramToolError(Exception):
    """A tool call from a program failed: raised into the program (where it is `ToolError`,
    that is `Exception`), carrying the tool's error text."""


@dataclass
class CallRecord:
    """One tool call a program made, and how it ended."""

    name: str
    ok: bool = False
    error: str | None = None
    done: bool = False

    def as_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "ok": self.ok}
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True)
class ProgramFailure:
    kind: FailureKind
    message: str
    line: int | None = None
    traceback: str | None = None


@dataclass
class ProgramOutcome:
    """What a program came to: its value (cut to the size limit, with a note saying what was
    left out) or its failure, and the calls it made either way."""

    value: Any = None
    calls: list[CallRecord] = field(default_factory=list)
    truncated: bool = False
    note: str | None = None
    printed: str = ""
    failure: ProgramFailure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


class _Door:
    """The `call_tool` the program sees: counted, checked and dispatched like a direct call."""

    def __init__(
        self, host: Host, request: ServerRequestContext[Any] | None, limits: Limits
    ) -> None:
        self.host = host
        self.request = request
        self.limits = limits
        self.calls: list[CallRecord] = []

    async def __call__(self, name: Any = None, arguments: Any = None) -> Any:
        if not isinstance(name, str):
            raise ProgramToolError("call_tool(name, arguments): name is a tool's name (a string)")
        if name in NOT_FROM_PROGRAMS:
            raise ProgramToolError(
                f"{name} cannot be called from a program (program_run and the discovery "
                "tools are called directly)"
            )
        if len(self.calls) >= self.limits.max_calls:
            raise ProgramToolError(
                f"this program has made its {self.limits.max_calls} tool calls (max_calls); "
                f"{name} was not called"
            )
        record = CallRecord(name)
        self.calls.append(record)
        try:
            value = await self._dispatch(name, arguments)
        except ProgramToolError as exc:
            record.error = str(exc)
            raise
        finally:
            record.done = True
        record.ok = True
        return value

    async def _dispatch(self, name: str, arguments: Any) -> Any:
        try:
            if self.request is not None:
                spent = await self.host.count_call(self.request)
                if spent is not None:
                    raise ProgramToolError(f"{name}: {spent}")
            result = await self.host.call_tool(
                name, {} if arguments is None else arguments, self.request, interactive=False
            )
        except PrixfixeError as exc:  # unknown, denied: what a direct call is refused with
            raise ProgramToolError(f"{name}: {redact(exc.message)}") from None
        if isinstance(result, types.InputRequiredResult):
            raise ProgramToolError(
                f"{name}: the tool asks the person for input, which a program cannot give; "
                "call it directly"
            )
        text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
        if result.is_error:
            raise ProgramToolError(f"{name}: {text}")
        if result.structured_content is not None:
            return result.structured_content
        return text


class _Printed:
    """`print` inside the program, kept (never written to the server's stdout, which may be
    the MCP stream) up to `PRINT_CHARS`."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.cut = False

    def __call__(self, stream: str, text: str) -> None:
        room = PRINT_CHARS - self.size
        if room <= 0:
            self.cut = True
            return
        if len(text) > room:
            text, self.cut = text[:room], True
        self.parts.append(text)
        self.size += len(text)

    @property
    def text(self) -> str:
        joined = "".join(self.parts)
        return joined + (f"\n[print output cut at {PRINT_CHARS} characters]" if self.cut else "")


def inside_program() -> bool:
    """Whether this code runs inside a program (a tool call it made, or anything below)."""
    return _RUNNING.get()


async def run_program(
    host: Host,
    code: str,
    request: ServerRequestContext[Any] | None,
    limits: Limits,
) -> ProgramOutcome:
    """Run `code` under `limits`; every tool call it makes is dispatched with `request`. Never
    raises for anything the program does: the outcome says how it ended."""
    door = _Door(host, request, limits)
    printed = _Printed()
    outcome = ProgramOutcome(calls=door.calls)
    available = host.programs.availability()
    if not available.ok:  # the sandbox's module is not even imported then
        outcome.failure = ProgramFailure("unavailable", available.message)
        return outcome
    failure: ProgramFailure | None = None
    value: Any = None
    running = _RUNNING.set(True)
    try:
        with anyio.move_on_after(limits.timeout_seconds) as scope:
            failure, value = await _run(host, code, door, printed, limits)
    finally:
        _RUNNING.reset(running)
    outcome.printed = printed.text
    if scope.cancelled_caught:
        for record in door.calls:
            if not record.done:
                record.error = "stopped by the time limit"
        failure = ProgramFailure(
            "timeout",
            f"the program ran past its time limit of {limits.timeout_seconds:g} s "
            "(timeout_seconds), tool calls included",
        )
    if failure is not None:
        outcome.failure = failure
        return outcome
    plain = to_plain(value)
    outcome.value, outcome.truncated, outcome.note = fit(plain, limits.max_result_tokens)
    return outcome


async def _run(
    host: Host, code: str, door: _Door, printed: _Printed, limits: Limits
) -> tuple[ProgramFailure | None, Any]:
    from pydantic_monty import MontyCrashedError, MontyError, MontyRuntimeError, MontySyntaxError

    try:
        async with host.programs.session(limits) as session:
            await session.feed_run(PRELUDE)
            value = await session.feed_run(
                code, external_lookup={"call_tool": door}, print_callback=printed
            )
    except SandboxUnavailableError as exc:
        return ProgramFailure("unavailable", exc.message), None
    except MontySyntaxError as exc:
        return _failure("syntax", exc, exc.traceback(), exc.display("traceback")), None
    except MontyRuntimeError as exc:
        return _runtime_failure(exc, limits), None
    except MontyCrashedError as exc:
        return ProgramFailure(
            "crashed",
            f"the sandbox worker stopped while the program ran ({exc}); it was replaced, "
            "and the server keeps serving",
        ), None
    except MontyError as exc:
        return ProgramFailure("runtime", f"the sandbox refused the program: {exc}"), None
    return None, value


def _runtime_failure(exc: Any, limits: Limits) -> ProgramFailure:
    inner = exc.exception()
    frames = exc.traceback()
    shown = exc.display("traceback")
    if isinstance(inner, TimeoutError):
        failure = _failure("timeout", exc, frames, shown)
        message = (
            f"the program computed past its time limit of {limits.timeout_seconds:g} s "
            f"(timeout_seconds): {failure.message}"
        )
        return ProgramFailure("timeout", message, failure.line, failure.traceback)
    if isinstance(inner, MemoryError):
        failure = _failure("memory", exc, frames, shown)
        message = (
            f"the program needed more than its {limits.max_memory_mb} MiB of memory "
            f"(max_memory_mb): {failure.message}"
        )
        return ProgramFailure("memory", message, failure.line, failure.traceback)
    if "suspension limit" in str(exc):
        return _failure("calls", exc, frames, shown)
    return _failure("runtime", exc, frames, shown)


def _failure(kind: FailureKind, exc: Any, frames: list[Any], shown: str) -> ProgramFailure:
    line = frames[-1].line if frames else None
    text = re.sub(r'File "<python-input-\d+>"', 'File "program"', shown)
    lines = text.splitlines()
    if len(lines) > TRACEBACK_LINES:
        lines = [lines[0], "  ...", *lines[-(TRACEBACK_LINES - 2) :]]
    return ProgramFailure(kind, redact(str(exc)), line, redact("\n".join(lines)))


# -- the value --------------------------------------------------------------------------


def to_plain(value: Any, depth: int = 0) -> Any:
    """`value` as JSON data: tuples and sets become lists, keys strings, and what JSON cannot
    hold (NaN, a date, a class instance) its text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth > 100:
        return str(value)
    if isinstance(value, dict):
        return {str(k): to_plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_plain(v, depth + 1) for v in value]
    return str(value)


def value_text(value: Any) -> str:
    """The value as the model reads it: a string as it is, anything else compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def fit(value: Any, max_tokens: int) -> tuple[Any, bool, str | None]:
    """`value`, or as much of it as fits in `max_tokens` cl100k tokens (a list's first
    items, a mapping's first keys, a string's first characters, else its JSON text cut),
    with a note of what was left out."""
    if count_tokens(value_text(value)) <= max_tokens:
        return value, False, None
    limit = f"to stay within {max_tokens} tokens (max_result_tokens)"
    if isinstance(value, list):
        kept = _most(len(value), lambda n: value[:n], max_tokens)
        return value[:kept], True, f"kept {kept} of {len(value)} list items {limit}"
    if isinstance(value, dict):
        keys = list(value)
        kept = _most(len(keys), lambda n: {k: value[k] for k in keys[:n]}, max_tokens)
        note = f"kept {kept} of {len(keys)} keys {limit}"
        return {k: value[k] for k in keys[:kept]}, True, note
    text = value_text(value)
    kept = _most(len(text), lambda n: text[:n], max_tokens)
    what = "characters" if isinstance(value, str) else "characters of its JSON"
    return text[:kept], True, f"kept {kept} of {len(text)} {what} {limit}"


def _most(total: int, part: Any, max_tokens: int) -> int:
    """The largest n (0..total) whose `part(n)` fits in `max_tokens` (binary search)."""
    low, high = 0, total
    while low < high:
        middle = (low + high + 1) // 2
        if count_tokens(value_text(part(middle))) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return low
