"""Multi-step tasks: calls one by one through discovery, one `program_run`, or fastmcp CodeMode.

Twelve tasks a person gives an agent, each needing several calls whose intermediate results
only feed the next call ("for every text file in my project, count its lines"), over the six
real servers `scripts/test-servers.sh` installs (mounted in prixfixe as `bench_servers.py`
mounts them) and prixfixe's own store. Each task is written once, as the program an agent
would write (`await call_tool(NAME, ARGUMENTS)`, a `return` at the end), and done three ways
by a scripted agent in a fresh session each (instructions and `tools/list` read first):

(a) **discovery alone**: for each tool the task needs, `tool_search` with a person's words and
    `tool_describe`; then every call through `tool_invoke`, the model reading each whole
    result and deciding the next call itself. The benchmark plays the model's part by running
    the same program in this process, each `call_tool` a real `tool_invoke` over MCP whose
    whole result text counts as read and whose arguments count as written.
(b) **prixfixe's program path**: the same searches and describes (a result's shape is read
    before writing the program), `tool_describe` of `program_run` once, then one `program_run`
    with the program: only its result is read.
(c) **fastmcp CodeMode** over the same servers (`fastmcp_codemode_server.py`, on fastmcp's own
    interpreter): its `search` for each tool with the same words, one `get_schema` of every
    tool the task needs, then one `execute` with the same program (tool names in fastmcp's
    spelling, `server_tool`). The store tasks have no fastmcp side: it has no store.

Counted per side: cl100k tokens read (instructions, listing, every result text) and written
(every call's arguments; a program's text), MCP calls the model makes (round trips), and
whether the task's answer holds what it must. Every side works on its own copy of the servers'
folders and store, so each sees the same state. Goal (the issue's): (b) at most 0.3x the
tokens of (a), and below (c).

Run from the repository root as `python benchmarks/bench_programs.py` (`--fastmcp-python PATH`;
without fastmcp and pydantic-monty in that environment the CodeMode column is left out and
the report says so).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

from benchmarks._common import ROOT, markdown_table, publish
from benchmarks.bench_agent_tokens import compact, listing_json, result_text, tokens
from benchmarks.bench_discovery_real import fastmcp_params
from benchmarks.bench_servers import Setup

NAME = "programs"
CODEMODE_SERVER = Path(__file__).resolve().parent / "fastmcp_codemode_server.py"
FASTMCP_PYTHON = ROOT / ".cache-fastmcp" / "bin" / "python"
GOAL = 0.3


@dataclass(frozen=True)
class Job:
    name: str
    prompt: str
    #: Each tool the program calls, with the words a person would search for it by.
    tools: tuple[tuple[str, str], ...]
    #: The program (`{files}`, `{repo}`, `{url}` filled in), calling tools by prixfixe's names.
    program: str
    #: What the answer must hold (each as it appears in the answer's text).
    expect: tuple[str, ...]
    #: Calls prixfixe's own tools: no fastmcp side.
    store: bool = False


JOBS = [
    Job(
        "three-clocks",
        "What time is it now in Tokyo, London and New York?",
        (("time.get_current_time", "current time in a time zone"),),
        """
        out = {}
        for zone in ["Asia/Tokyo", "Europe/London", "America/New_York"]:
            now = await call_tool("time.get_current_time", {"timezone": zone})
            out[zone] = now["datetime"][11:16] if isinstance(now, dict) else now
        return out
        """,
        ("Asia/Tokyo", "Europe/London", "America/New_York"),
    ),
    Job(
        "meeting-times",
        "A call at 09:00 in New York: what time is that in Berlin, Tokyo and Sydney?",
        (("time.convert_time", "convert a time between time zones"),),
        """
        out = {}
        for zone in ["Europe/Berlin", "Asia/Tokyo", "Australia/Sydney"]:
            r = await call_tool("time.convert_time", {"source_timezone": "America/New_York",
                                "time": "09:00", "target_timezone": zone})
            out[zone] = r["target"]["datetime"][11:16] if isinstance(r, dict) else r
        return out
        """,
        ("Europe/Berlin", "Australia/Sydney"),
    ),
    Job(
        "text-file-sizes",
        "How big is each text file in my project folder?",
        (
            ("filesystem.list_directory", "list the files in a folder"),
            ("filesystem.get_file_info", "size and dates of a file"),
        ),
        """
        listing = await call_tool("filesystem.list_directory", {"path": "{files}"})
        text = listing if isinstance(listing, str) else listing.get("content", "")
        names = [line.split("] ", 1)[1] for line in text.splitlines()
                 if line.startswith("[FILE] ") and line.endswith(".txt")]
        sizes = {}
        for name in names:
            info = await call_tool("filesystem.get_file_info", {"path": "{files}/" + name})
            info = info if isinstance(info, str) else info.get("content", "")
            sizes[name] = [l for l in info.splitlines() if l.startswith("size:")][0][6:]
        return sizes
        """,
        ("hello.txt", "plan.txt"),
    ),
    Job(
        "line-counts",
        "Count the lines of every text file anywhere in my project.",
        (
            ("filesystem.search_files", "find files by a name pattern"),
            ("filesystem.read_text_file", "read a text file"),
        ),
        """
        found = await call_tool("filesystem.search_files",
                                {"path": "{files}", "pattern": "**/*.txt"})
        found = found if isinstance(found, str) else found.get("content", "")
        counts = {}
        for path in found.splitlines():
            body = await call_tool("filesystem.read_text_file", {"path": path})
            body = body if isinstance(body, str) else body.get("content", "")
            counts[path.rsplit("/", 1)[-1]] = len(body.splitlines())
        return counts
        """,
        ("todo.txt", "plan.txt"),
    ),
    Job(
        "last-subjects",
        "List the subjects of every commit in my repo.",
        (("git.git_log", "history of commits in my repository"),),
        """
        log = await call_tool("git.git_log", {"repo_path": "{repo}", "max_count": 30})
        log = log if isinstance(log, str) else json.dumps(log)
        return [l.split(":", 1)[1].strip() for l in log.splitlines()
                if l.strip().startswith("Message:")]
        """,
        ("Add the notes", "Plan the release", "Work on part 22"),
    ),
    Job(
        "changed-files",
        "Which files have I changed in my repo, and how many lines changed in each?",
        (
            ("git.git_status", "working tree status of my repository"),
            ("git.git_diff_unstaged", "changes not yet staged"),
        ),
        """
        status = await call_tool("git.git_status", {"repo_path": "{repo}"})
        diff = await call_tool("git.git_diff_unstaged", {"repo_path": "{repo}"})
        changed = {}
        current = None
        for line in str(diff).splitlines():
            if line.startswith("+++ b/"):
                current = line[6:]
                changed[current] = 0
            elif current and line[:1] in "+-" and not line.startswith(("+++", "---")):
                changed[current] += 1
        return {"clean": "nothing to commit" in str(status), "changed": changed}
        """,
        ("notes.txt", "part1.txt"),
    ),
    Job(
        "people-at-acme",
        "Remember that Alice and Bob work at Acme, then tell me who you know at Acme.",
        (
            ("memory.create_entities", "remember people and things"),
            ("memory.create_relations", "link two people or things"),
            ("memory.search_nodes", "what do you remember about something"),
        ),
        """
        await call_tool("memory.create_entities", {"entities": [
            {"name": n, "entityType": t, "observations": []}
            for n, t in [("Alice", "person"), ("Bob", "person"), ("Acme", "company")]]})
        await call_tool("memory.create_relations", {"relations": [
            {"from": n, "to": "Acme", "relationType": "works at"} for n in ["Alice", "Bob"]]})
        found = await call_tool("memory.search_nodes", {"query": "Acme"})
        found = found if isinstance(found, dict) else json.loads(found)
        return sorted(r["from"] for r in found.get("relations", []) if r["to"] == "Acme")
        """,
        ("Alice", "Bob"),
    ),
    Job(
        "page-heading",
        "Fetch this page and tell me its heading and how long it is.",
        (("fetch.fetch", "download a web page"),),
        """
        page = await call_tool("fetch.fetch", {"url": "{url}/page.html"})
        page = page if isinstance(page, str) else json.dumps(page)
        heading = [l.lstrip("# ") for l in page.splitlines() if l.startswith("#")]
        return {"heading": heading[0] if heading else None, "characters": len(page)}
        """,
        ("Mounted servers",),
    ),
    Job(
        "folder-summary",
        "Make a reports folder and write into it a summary listing my project's files.",
        (
            ("filesystem.list_directory", "list the files in a folder"),
            ("filesystem.create_directory", "make a folder"),
            ("filesystem.write_file", "write a file"),
        ),
        """
        listing = await call_tool("filesystem.list_directory", {"path": "{files}"})
        listing = listing if isinstance(listing, str) else listing.get("content", "")
        names = [l.split("] ", 1)[1] for l in listing.splitlines() if l.startswith("[FILE] ")]
        await call_tool("filesystem.create_directory", {"path": "{files}/reports"})
        await call_tool("filesystem.write_file", {"path": "{files}/reports/summary.md",
                        "content": "# Files\\n" + "\\n".join("- " + n for n in names)})
        return "wrote reports/summary.md listing " + str(len(names)) + " files"
        """,
        ("wrote reports/summary.md",),
    ),
    Job(
        "sum-of-sums",
        "Add 17 and 25, then add 100 to the result.",
        (("everything.get-sum", "add two numbers"),),
        """
        first = await call_tool("everything.get-sum", {"a": 17, "b": 25})
        first = first if isinstance(first, str) else json.dumps(first)
        total = int("".join(c for c in first.split("is")[-1] if c.isdigit()))
        second = await call_tool("everything.get-sum", {"a": total, "b": 100})
        return second if isinstance(second, str) else json.dumps(second)
        """,
        ("142",),
    ),
    Job(
        "week-deadlines",
        "Make a deadline for every reminder due this week.",
        (
            ("store_query", "which reminders are due this week"),
            ("store_put", "add a deadline"),
        ),
        """
        due = await call_tool("store_query", {"kind": "reminder",
                              "where": {"due": {"<=": "{week}"}}, "order_by": "due"})
        made = []
        for r in due["records"]:
            await call_tool("store_put", {"kind": "deadline",
                            "record": {"label": r["record"]["text"], "date": r["record"]["due"]}})
            made.append(r["record"]["text"])
        return made
        """,
        ("Dentist", "Buy milk"),
        store=True,
    ),
    Job(
        "groceries-done",
        "Tick off every reminder about groceries.",
        (
            ("store_query", "find my reminders by text"),
            ("store_close", "mark a reminder done"),
        ),
        """
        found = await call_tool("store_query", {"kind": "reminder",
                                "where": {"text": {"contains": "rocer"}}})
        for r in found["records"]:
            await call_tool("store_close", {"kind": "reminder", "id": r["id"], "reason": "done"})
        return [r["record"]["text"] for r in found["records"]]
        """,
        ("Order groceries", "Groceries: pick up"),
        store=True,
    ),
]


def program_of(job: Job, setup: Setup, names: dict[str, str] | None = None) -> str:
    """The job's program with its places filled in (and tool names in `names`' spelling)."""
    code = textwrap.dedent(job.program).strip()
    servers = setup.root / "servers"
    code = code.replace("{files}", str(servers / "files")).replace("{repo}", str(servers / "repo"))
    code = code.replace("{url}", setup.url).replace("{week}", _days_ahead(7))
    for ours, theirs in (names or {}).items():
        code = code.replace(f'"{ours}"', f'"{theirs}"')
    return code


def _days_ahead(days: int) -> str:
    import datetime as dt

    return (dt.date.today() + dt.timedelta(days=days)).isoformat()


#: How much there is to work on: what a person's project, history and store hold, so that
#: intermediate results are the size they are in use (a file of a few dozen lines, a log of
#: weeks of commits), not one line each.
FILE_LINES = 60
COMMITS = 24
REMINDERS = 30


def _lines(topic: str, n: int) -> str:
    return "".join(
        f"{topic} {i}: a line of notes about {topic}, item {i} of {n}\n" for i in range(n)
    )


def prepare(setup: Setup) -> None:
    """More to work on than `real_servers.six` makes: text files in folders, a history of
    commits and a change to diff (the store is seeded by `seed_store`)."""
    servers = setup.root / "servers"
    files = servers / "files"
    (files / "hello.txt").write_text(_lines("hello", FILE_LINES), encoding="utf-8")
    (files / "plan.txt").write_text(_lines("plan", FILE_LINES + 7), encoding="utf-8")
    (files / "notes").mkdir(exist_ok=True)
    (files / "notes" / "todo.txt").write_text(_lines("todo", FILE_LINES - 9), encoding="utf-8")
    (files / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    repo = servers / "repo"
    env = {"GIT_AUTHOR_NAME": "Ana", "GIT_AUTHOR_EMAIL": "ana@example.invalid",
           "GIT_COMMITTER_NAME": "Ana", "GIT_COMMITTER_EMAIL": "ana@example.invalid",
           "HOME": str(repo), "PATH": "/usr/local/bin:/usr/bin:/bin"}  # fmt: skip
    subjects = ["Plan the release", *(f"Work on part {n}" for n in range(1, COMMITS - 1))]
    for n, subject in enumerate(subjects, start=1):
        (repo / f"part{n}.txt").write_text(_lines(f"part {n}", 10), encoding="utf-8")
        subprocess.run(["git", "add", "."], cwd=repo, env=env, check=True)
        subprocess.run(["git", "commit", "-q", "-m", subject], cwd=repo, env=env, check=True)
    (repo / "notes.txt").write_text(_lines("notes", FILE_LINES), encoding="utf-8")
    (repo / "part1.txt").write_text(_lines("part one, rewritten", 12), encoding="utf-8")


def seed_store(app: Any) -> None:
    for text, days in (("Dentist", 3), ("Buy milk", 1), ("Order groceries", 0),
                       ("Groceries: pick up the delivery", 12), ("Call mum", 20)):  # fmt: skip
        app.store.put("reminder", {"text": text, "due": _days_ahead(days)})
    for n in range(REMINDERS - 5):
        app.store.put("reminder", {"text": f"Chore {n}: tidy shelf {n}", "due": _days_ahead(9 + n)})


# --- the sides --------------------------------------------------------------------------------


@dataclass
class Run:
    job: str
    side: str
    read: int = 0
    written: int = 0
    calls: int = 0
    answer: str = ""
    ok: bool = False
    error: str = ""
    tool_calls: int = 0

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Session:
    """One fresh session of the scripted agent: counts what the model reads and writes."""

    def __init__(self, client: Client, run: Run) -> None:
        self.client = client
        self.run = run

    async def start(self) -> None:
        self.run.read += tokens(self.client.instructions or "")
        self.run.read += tokens(listing_json((await self.client.list_tools()).tools))

    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        self.run.calls += 1
        self.run.written += tokens(compact({"name": name, "arguments": arguments}))
        result = await self.client.call_tool(name, arguments)
        self.run.read += tokens(result_text(result))
        return result


def _value(result: types.CallToolResult) -> Any:
    """What a program gets of a result: its structured content, else its text."""
    if result.structured_content is not None:
        return result.structured_content
    return result_text(result)


async def run_locally(code: str, call_tool: Callable[[str, dict[str, Any]], Awaitable[Any]]) -> Any:
    """Run a job's program here, as the model would follow it step by step (trusted: ours)."""
    source = "async def __job(call_tool, json):\n" + textwrap.indent(code, "    ")
    scope: dict[str, Any] = {}
    exec(compile(source, "<job>", "exec"), scope)
    return await scope["__job"](call_tool, json)


async def discovery_side(client: Client, job: Job, setup: Setup) -> Run:
    run = Run(job.name, "discovery")
    session = Session(client, run)
    await session.start()
    for tool, words in job.tools:
        await session.call("tool_search", {"query": words})
        await session.call("tool_describe", {"name": tool})

    async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
        run.tool_calls += 1
        result = await session.call("tool_invoke", {"name": name, "arguments": arguments})
        if result.is_error:
            raise RuntimeError(f"{name}: {result_text(result)}")
        return _value(result)

    answer = await run_locally(program_of(job, setup), call_tool)
    run.answer = answer if isinstance(answer, str) else compact(answer)
    return run


async def program_side(client: Client, job: Job, setup: Setup) -> Run:
    run = Run(job.name, "program")
    session = Session(client, run)
    await session.start()
    for tool, words in job.tools:
        await session.call("tool_search", {"query": words})
        await session.call("tool_describe", {"name": tool})
    await session.call("tool_describe", {"name": "program_run"})
    code = program_of(job, setup)
    before = run.calls
    result = await session.call("tool_invoke", {"name": "program_run", "arguments": {"code": code}})
    # A program's text is what the model wrote: count it as written, not its JSON envelope.
    run.written -= tokens(compact({"name": "program_run", "arguments": {"code": code}}))
    run.written += tokens(code)
    run.tool_calls = len((result.structured_content or {}).get("calls", [])) or run.calls - before
    run.answer = result_text(result)
    if result.is_error:
        run.error = run.answer
    return run


async def codemode_side(client: Client, job: Job, setup: Setup, names: dict[str, str]) -> Run:
    run = Run(job.name, "fastmcp CodeMode")
    session = Session(client, run)
    await session.start()
    for _, words in job.tools:
        await session.call("search", {"query": words})
    await session.call("get_schema", {"tools": [names[t] for t, _ in job.tools]})
    code = program_of(job, setup, names)
    result = await session.call("execute", {"code": code})
    run.written -= tokens(compact({"name": "execute", "arguments": {"code": code}}))
    run.written += tokens(code)
    run.answer = result_text(result)
    if result.is_error:
        run.error = run.answer
    return run


def checked(run: Run, job: Job) -> Run:
    run.ok = not run.error and all(e in run.answer for e in job.expect)
    return run


# --- one run ------------------------------------------------------------------------------------


def fresh_setup(root: Path, url: str, name: str) -> Setup:
    setup = Setup(root / name, url)
    prepare(setup)
    return setup


def codemode_params(setup: Setup, python: Path) -> StdioServerParameters:
    return fastmcp_params(setup, python, CODEMODE_SERVER)


async def measure(root: Path, url: str, fastmcp: Path | None) -> dict[str, Any]:
    from prixfixe.mcp.server import build_server

    runs: list[Run] = []
    for job in JOBS:
        for side in ("discovery", "program"):
            setup = fresh_setup(root, url, f"{job.name}-{side}")
            app = setup.app()
            seed_store(app)
            async with Client(build_server(app), mode="legacy") as client:
                make = discovery_side if side == "discovery" else program_side
                try:
                    run = await make(client, job, setup)
                except Exception as exc:  # noqa: BLE001  (a failed task is a figure, not the end)
                    run = Run(job.name, side, error=f"{type(exc).__name__}: {exc}")
                runs.append(checked(run, job))
        if fastmcp is not None and not job.store:
            setup = fresh_setup(root, url, f"{job.name}-codemode")
            # fastmcp's proxy names `server.tool` as `server_tool`.
            names = {tool: tool.replace(".", "_", 1) for tool, _ in job.tools}
            async with Client(codemode_params(setup, fastmcp), mode="legacy") as client:
                try:
                    run = await codemode_side(client, job, setup, names)
                except Exception as exc:  # noqa: BLE001
                    run = Run(job.name, "fastmcp CodeMode", error=f"{type(exc).__name__}: {exc}")
                runs.append(checked(run, job))
        print(f"{job.name}: done", file=sys.stderr)
    return {"runs": [r.as_json() for r in runs], "jobs": len(JOBS)}


# --- report ---------------------------------------------------------------------------------------


@dataclass
class Totals:
    read: int = 0
    written: int = 0
    calls: int = 0
    failed: list[str] = field(default_factory=list)


def totals(runs: Sequence[dict[str, Any]], side: str, jobs: set[str]) -> Totals:
    t = Totals()
    for r in runs:
        if r["side"] == side and r["job"] in jobs:
            t.read += r["read"]
            t.written += r["written"]
            t.calls += r["calls"]
            if not r["ok"]:
                t.failed.append(r["job"])
    return t


def render(results: dict[str, Any]) -> str:
    runs = results["runs"]
    sides = list(dict.fromkeys(r["side"] for r in runs))
    rows = []
    for r in runs:
        rows.append([
            r["job"], r["side"], f"{r['read']:,}", f"{r['written']:,}", r["calls"],
            "yes" if r["ok"] else "**no**: " + " ".join((r["error"] or r["answer"]).split())[:80],
        ])  # fmt: skip
    everything = {j.name for j in JOBS}
    mounted = {j.name for j in JOBS if not j.store}
    summary = []
    for label, jobs in (("all tasks", everything), ("mounted servers only", mounted)):
        base = totals(runs, "discovery", jobs)
        for side in sides:
            t = totals(runs, side, jobs)
            if side == "fastmcp CodeMode" and jobs != mounted:
                continue
            whole = t.read + t.written
            ratio = whole / (base.read + base.written) if base.read + base.written else 0
            summary.append([
                label, side, f"{t.read:,}", f"{t.written:,}", f"{whole:,}", f"{ratio:.2f}x",
                t.calls, ", ".join(t.failed) or "none",
            ])  # fmt: skip
    prog = totals(runs, "program", everything)
    disc = totals(runs, "discovery", everything)
    ratio = (prog.read + prog.written) / max(1, disc.read + disc.written)
    met = "met" if ratio <= GOAL else "not met"
    verdict = [f"(b) / (a), all tasks: {ratio:.2f}x (goal ≤ {GOAL}x): {met}."]
    per_job = {
        j.name: (totals(runs, "program", {j.name}), totals(runs, "discovery", {j.name}))
        for j in JOBS
    }
    ratios = {
        name: (p.read + p.written) / max(1, d.read + d.written) for name, (p, d) in per_job.items()
    }
    cheaper = sorted((r, name) for name, r in ratios.items() if r < 1)
    if cheaper:
        verdict.append(
            f"The program path costs less on {len(cheaper)} of {len(ratios)} tasks, "
            f"{cheaper[0][0]:.2f}x ({cheaper[0][1]}) to {cheaper[-1][0]:.2f}x "
            f"({cheaper[-1][1]}): those whose intermediate results are long; on the others each "
            "intermediate result is a line or two, and describing `program_run` costs more "
            "than reading them."
        )
    if "fastmcp CodeMode" in sides:
        p = totals(runs, "program", mounted)
        c = totals(runs, "fastmcp CodeMode", mounted)
        below = p.read + p.written < c.read + c.written
        verdict.append(
            f"(b) vs (c) on the mounted servers' tasks: {p.read + p.written:,} vs "
            f"{c.read + c.written:,} tokens: {'below' if below else 'not below'} CodeMode."
        )
    else:
        verdict.append("fastmcp CodeMode was not measured (no fastmcp environment).")
    return "\n".join([
        "## Composing calls: one program against calls one by one (`bench_programs.py`)",
        "",
        f"{results['jobs']} multi-step tasks over the six real servers and the store, each a "
        "fresh session (instructions and `tools/list` read), done (a) through discovery, every "
        "call a `tool_invoke` whose whole result the model reads, (b) as one `program_run` "
        "after the same searches and describes, (c) as one fastmcp CodeMode `execute` after "
        "its `search` and one `get_schema` (mounted servers only). Tokens are cl100k: read = "
        "instructions, listing and every result; written = every call's arguments, a program's "
        "text. Calls = MCP calls the model makes. The data is the size it is in use: three "
        f"text files of {FILE_LINES - 9} to {FILE_LINES + 7} lines, a repository of "
        f"{COMMITS + 1} commits with a change to diff, {REMINDERS} reminders in the store.",
        "",
        markdown_table(
            ["tasks", "side", "read", "written", "read + written", "vs (a)", "calls", "failed"],
            summary,
        ),
        "",
        " ".join(verdict),
        "",
        "Per task:",
        "",
        markdown_table(
            ["task", "side", "read", "written", "calls", "answer holds what it must"], rows
        ),
    ])  # fmt: skip


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--fastmcp-python", type=Path, default=FASTMCP_PYTHON)
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)
    fastmcp: Path | None = args.fastmcp_python
    if fastmcp is not None and (
        not fastmcp.exists()
        or subprocess.run(
            [str(fastmcp), "-c", "import fastmcp, pydantic_monty"], capture_output=True
        ).returncode
    ):
        print(f"bench_programs: no fastmcp with pydantic-monty at {fastmcp}", file=sys.stderr)
        fastmcp = None
    from tests.servers.real_servers import loopback_pages

    with tempfile.TemporaryDirectory() as tmp, loopback_pages() as pages:
        results = anyio.run(measure, Path(tmp), pages.url, fastmcp)
    publish(NAME, results, render(results), write=not args.no_write)
    return results


if __name__ == "__main__":
    main()
