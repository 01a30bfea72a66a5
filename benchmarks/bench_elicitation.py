"""What a call with a missing or invalid argument costs an agent to recover from.

Scripted tasks in which the agent's first call is wrong the way models' calls are wrong: it
leaves out a required argument, or gives a value outside an enum. Each runs in a fresh
session through a real in-memory `mcp.Client`, on both protocol revisions, four ways:

- **ask**: the client declares elicitation; prixfixe asks the person for exactly the fields
  (a form during the call on 2025-11-25, an `input_required` round on 2026-07-28), the person
  answers, and the call completes. The model makes one call and reads its result.
- **fallback**: the client cannot ask. The error's structured data (`structuredContent`, or
  `_meta["prixfixe/error"]` for a tool with an output schema) names each field and the call to
  retry with; the agent puts its intended values at the named paths and retries once.
- **plain + describe** (the baseline): the error as it was before elicitation — the
  exception's message alone, served exactly as the old code served it (`error_result(message)`;
  the problem messages are unchanged, and the test suite pins them). With no call to copy, the
  agent `tool_describe`s the tool, then retries.
- **plain, guessed**: the same plain error, but the agent retries at once from its wording,
  without describing (what a model that guesses right does): the floor for the plain error.

The agent's client drives 2026-07-28 `input_required` rounds itself (as the SDK's client does),
so every `tools/call` on the wire is counted and, with `--transcripts FILE`, recorded with its
result; on 2025-11-25 the form arrives during the call and is recorded by the person's callback.
The model reads each result's text as a client passes it on (cl100k tokens); "written" counts
the model's own call arguments. The person's form is not read by the model: its fields are
counted instead. The agent's intended values (`fixes`) are the same in every mode.

Run from the repository root: `python benchmarks/bench_elicitation.py` (a few seconds).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

if __package__ in (None, ""):
    # Run as a file: make `benchmarks` and `prixfixe` importable from the checkout.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

import anyio
import mcp_types as types
from mcp import Client
from pydantic import BaseModel, ConfigDict, Field

from benchmarks._common import DOC, markdown_table, write_json, write_section
from prixfixe import Tool, ToolContext, hookimpl
from prixfixe.app import App
from prixfixe.mcp.server import build_server
from prixfixe.tokens import count_tokens
from prixfixe.tools import elicitation
from prixfixe.tools.elicitation import META_KEY
from prixfixe.tools.results import error_result

NAME = "elicitation"
REVISIONS = ("legacy", "2026-07-28")
Mode = Literal["ask", "fallback", "plain+describe", "plain-guessed"]
MODES: tuple[Mode, ...] = ("ask", "fallback", "plain+describe", "plain-guessed")
BASELINE: Mode = "plain+describe"


# -- a tool beside prixfixe's own: unlisted, with an enum and a date -----------------------


class BookInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    room: str = Field(description="Room name.")
    size: Literal["small", "medium", "large"] = Field(description="How many people it seats.")
    day: dt.date = Field(description="The day to book.")


def book_room(ctx: ToolContext, args: BookInput) -> str:
    return f"Booked {args.room} ({args.size}) on {args.day.isoformat()}."


class BenchPlugin:
    __name__ = "bench_elicitation"

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="rooms.book",
                title="Book a room",
                description="Book a meeting room for a day.",
                input_model=BookInput,
                handler=book_room,
                mutates=True,
                facet="rooms",
            )
        )


# -- the tasks ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    name: str
    what: str
    tool: str
    #: The agent's first, wrong, arguments.
    first: dict[str, Any]
    #: What the agent (or the person) means for each field the call got wrong.
    fixes: dict[str, Any]


TASKS = (
    Task(
        name="reminder-missing-kind",
        what="`tool_invoke(store_put)` without `kind`",
        tool="store_put",
        first={"record": {"text": "water the plants", "due": "2026-05-01"}},
        fixes={"kind": "reminder"},
    ),
    Task(
        name="room-enum-and-missing-day",
        what="`tool_invoke(rooms.book)`: `size` outside its enum, `day` missing",
        tool="rooms.book",
        first={"room": "Lovelace", "size": "huge"},
        fixes={"size": "large", "day": "2026-05-01"},
    ),
)


# -- one run --------------------------------------------------------------------------------


@dataclass
class Run:
    task: str
    mode: Mode
    revision: str
    calls: list[str] = field(default_factory=list)
    read: int = 0
    written: int = 0
    forms: int = 0
    form_fields: int = 0
    #: `tools/call` requests on the wire (a 2026-07-28 input_required round is one more).
    wire_calls: int = 0
    done: bool = False
    transcript: list[dict[str, Any]] = field(default_factory=list)


def result_text(result: types.CallToolResult) -> str:
    """What a client passes the model: the text of the result's content blocks."""
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def structured_error(result: types.CallToolResult) -> dict[str, Any] | None:
    if isinstance(result.structured_content, dict):
        return result.structured_content
    found = (result.meta or {}).get(META_KEY)
    return found if isinstance(found, dict) else None


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


@contextmanager
def plain_errors() -> Iterator[None]:
    """Invalid arguments answered as before elicitation: the exception's message alone."""
    saved = elicitation.fallback_result

    def plain(
        host: Any, entry: Any, arguments: Any, failed: Any, request: Any
    ) -> types.CallToolResult:
        return error_result(failed.message)

    elicitation.fallback_result = plain
    try:
        yield
    finally:
        elicitation.fallback_result = saved


class Agent:
    def __init__(self, client: Client, run: Run, task: Task, person: Person | None) -> None:
        self.client = client
        self.run = run
        self.task = task
        self.person = person

    async def call(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """One call the model makes. Its input_required rounds (2026-07-28) are driven here,
        as the SDK's client drives them, so each `tools/call` on the wire is recorded."""
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        result = await self.send(params)
        while isinstance(result, types.InputRequiredResult):
            responses = {
                key: await self.answer(request)
                for key, request in (result.input_requests or {}).items()
            }
            params = {
                "name": tool,
                "arguments": arguments,
                "inputResponses": {k: dump(v) for k, v in responses.items()},
                "requestState": result.request_state,
            }
            result = await self.send(params)
        self.run.calls.append(tool)
        self.run.read += count_tokens(result_text(result))
        self.run.written += count_tokens(compact({"name": tool, "arguments": arguments}))
        return result

    async def send(
        self, params: dict[str, Any]
    ) -> types.CallToolResult | types.InputRequiredResult:
        result = await self.client.session.call_tool(
            params["name"],
            params["arguments"],
            input_responses=params.get("inputResponses"),
            request_state=params.get("requestState"),
            allow_input_required=True,
        )
        self.run.wire_calls += 1
        self.run.transcript.append({"tools/call": params, "result": dump(result)})
        return result

    async def answer(self, request: types.InputRequest) -> types.ElicitResult:
        if not isinstance(request, types.ElicitRequest) or self.person is None:
            raise RuntimeError(f"the agent cannot answer {request.method}")
        return await self.person(None, request.params)

    async def invoke(self, arguments: dict[str, Any]) -> types.CallToolResult:
        return await self.call("tool_invoke", {"name": self.task.tool, "arguments": arguments})

    async def solve(self) -> None:
        mode = self.run.mode
        result = await self.invoke(self.task.first)
        if not result.is_error or mode == "ask":
            self.run.done = not result.is_error
            return
        fixed = {**self.task.first, **self.task.fixes}
        if mode == "fallback":
            data = structured_error(result)
            if data is None:
                return
            retry = data["retry"]
            inner = retry["arguments"]["arguments"]
            for problem in data["problems"]:  # the error names the paths; the agent fills them
                if problem["path"] in self.task.fixes:
                    inner[problem["path"]] = self.task.fixes[problem["path"]]
            result = await self.call(retry["name"], retry["arguments"])
        else:
            if mode == "plain+describe":
                await self.call("tool_describe", {"name": self.task.tool})
            result = await self.invoke(fixed)
        self.run.done = not result.is_error


class Person:
    """Answers each form with the task's fixes for the fields it asks."""

    def __init__(self, run: Run, task: Task) -> None:
        self.run = run
        self.task = task

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        asked = list(params.requested_schema.get("properties", {}))
        self.run.forms += 1
        self.run.form_fields += len(asked)
        answer = types.ElicitResult(
            action="accept", content={k: self.task.fixes[k] for k in asked if k in self.task.fixes}
        )
        self.run.transcript.append({"form": dump(params), "answer": dump(answer)})
        return answer


async def measure(task: Task, mode: Mode, revision: str, home: Path) -> Run:
    run = Run(task=task.name, mode=mode, revision=revision)
    app = App.build(
        env={"PRIXFIXE_HOME": str(home), "PRIXFIXE_LOAD_PLUGINS": ""},
        cwd=home,
        extra_plugins=[BenchPlugin()],
    )
    person = Person(run, task) if mode == "ask" else None
    with plain_errors() if mode.startswith("plain") else _nothing():
        async with Client(build_server(app), mode=revision, elicitation_callback=person) as c:
            await Agent(c, run, task, person).solve()
    app.close_store()
    return run


@contextmanager
def _nothing() -> Iterator[None]:
    yield


async def measure_all(work: Path) -> list[Run]:
    runs: list[Run] = []
    for task in TASKS:
        for revision in REVISIONS:
            for mode in MODES:
                home = work / f"{task.name}-{revision}-{mode}"
                home.mkdir(parents=True)
                runs.append(await measure(task, mode, revision, home))
    return runs


# -- reporting ------------------------------------------------------------------------------


def render(runs: Sequence[Run]) -> tuple[str, list[str]]:
    base = {(r.task, r.revision): r for r in runs if r.mode == BASELINE}
    headers = [
        "task",
        "revision",
        "mode",
        "model calls",
        "tools/call on the wire",
        "form fields",
        "tokens read",
        "vs plain + describe",
        "tokens written",
        "done",
    ]
    rows: list[list[Any]] = []
    for r in runs:
        b = base[(r.task, r.revision)]
        rows.append(
            [
                r.task,
                r.revision,
                r.mode,
                len(r.calls),
                r.wire_calls,
                r.form_fields,
                r.read,
                f"{r.read / b.read:.2f}x" if b.read else "-",
                r.written,
                "yes" if r.done else "NO",
            ]
        )
    verdicts: list[str] = []
    for mode in ("ask", "fallback"):
        mine = [r for r in runs if r.mode == mode]
        read = sum(r.read for r in mine)
        baseline = sum(base[(r.task, r.revision)].read for r in mine)
        calls = sum(len(r.calls) for r in mine)
        base_calls = sum(len(base[(r.task, r.revision)].calls) for r in mine)
        verdicts.append(
            f"{mode}: {calls} model calls against {base_calls}, "
            f"{read:,} tokens read against {baseline:,} ({read / baseline:.2f}x)"
        )
    return markdown_table(headers, rows), verdicts


def render_doc(table: str, verdicts: Sequence[str]) -> str:
    tasks = "; ".join(f"{t.what}" for t in TASKS)
    return f"""## Missing or invalid arguments: asked for, explained, or plain

A scripted agent's first call is wrong ({tasks}), in a fresh session through a real in-memory
`mcp.Client`, on both revisions. **ask**: the client declares elicitation and the person
answers prixfixe's form (during the call on 2025-11-25, an `input_required` round on
2026-07-28); the model makes one call. **fallback**: the client cannot ask; the agent puts
its intended values at the paths the structured error names and retries once. **plain +
describe** (the baseline): the error as before elicitation (the exception's message alone,
served as the old code served it); with no call to copy, the agent `tool_describe`s, then
retries. **plain, guessed**: the same plain error, retried at once (a model that guesses
right): the floor for the plain error. Tokens are cl100k of what the model reads (each
result's text); "tokens written" are its own call arguments; the form is read by the person,
not the model.

{table}

Result: {"; ".join(verdicts)}.

How to read it: with elicitation the model reads one successful result and writes one call;
the person answers a form of exactly the fields that were wrong. Without it, the structured
error costs more tokens than the plain one (it names each field's type, description, allowed
values and an example, and spells out the retry call) but spares the `tool_describe` a model
needs when the error does not say how to call; "plain, guessed" shows what the plain error
costs when the model needs nothing more."""


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    parser.add_argument(
        "--doc",
        type=Path,
        default=DOC,
        help="the markdown file whose section this rewrites (default docs/benchmarks.md)",
    )
    parser.add_argument(
        "--transcripts", type=Path, help="also write every run's messages (JSON) here"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        runs = anyio.run(measure_all, Path(tmp))
    table, verdicts = render(runs)
    print(table)
    print("; ".join(verdicts))
    results: dict[str, Any] = {
        "runs": [
            {
                "task": r.task,
                "mode": r.mode,
                "revision": r.revision,
                "calls": r.calls,
                "wire_calls": r.wire_calls,
                "forms": r.forms,
                "form_fields": r.form_fields,
                "read": r.read,
                "written": r.written,
                "done": r.done,
            }
            for r in runs
        ],
        "verdicts": verdicts,
    }
    if args.transcripts is not None:
        args.transcripts.write_text(
            json.dumps(
                [
                    {
                        "task": r.task,
                        "mode": r.mode,
                        "revision": r.revision,
                        "messages": r.transcript,
                    }
                    for r in runs
                ],
                indent=2,
                ensure_ascii=False,
            )
            + "\n",
            encoding="utf-8",
        )
    if not args.no_write:
        write_json(NAME, results)
        write_section(NAME, render_doc(table, verdicts), doc=args.doc)
    return results


if __name__ == "__main__":
    main()
