"""Finding real servers' tools from a person's words, and what an agent reads doing real tasks.

The six real servers `scripts/test-servers.sh` installs (`mcp-server-time`, `-git`, `-fetch`
from PyPI; `@modelcontextprotocol/server-everything`, `-filesystem`, `-memory` from npm, 51
tools) are mounted in one prixfixe (`[servers.*]` tables, as `bench_servers.py` mounts them),
once with `[search] semantic = false` (lexical) and once with `semantic = true`, and put behind
the peer: fastmcp's proxy of the same servers with its `BM25SearchTransform`
(`fastmcp_search_server.py`, run on fastmcp's own interpreter as a stdio server).

(a) **Finding.** `benchmarks/data/real_paraphrases.json` holds one hand-written request per
    tool, in a person's words and sharing no word with the tool's name or description (checked
    here against prixfixe's analyser: an overlap stops the run), and 18 person-tasks in the
    issue's style with the tools that would do. Both were written before any search was run,
    with a fixed seeded split into a development half (tune on it) and a held-out half (quote
    it). Each request goes through `mcp.Client` as an agent's would: prixfixe's `tool_search`
    with its default limit, fastmcp's `search_tools` with its default five. Per request: is
    the first hit a right tool, is a right tool anywhere in the text the model reads, and
    (prixfixe) does the text call the hits matches (`Matches for ...`) while the first hit is
    wrong: misleading. fastmcp's result never says how sure it is, so it has no such rate.
(b) **Tokens.** 16 tasks, each one call on one server with real arguments, done by a scripted
    agent (`bench_agent_tokens.Agent`: search with the task's words, retry once with a second
    phrasing, describe once, invoke) in fresh sessions (each task reads the instructions and
    `tools/list` again) and in one long session (read once; a tool a search already showed is
    not searched again), on four sides: prixfixe lexical, prixfixe semantic, fastmcp BM25
    (search, then `call_tool`: its search result already holds each hit's schema), and every
    server connected directly (each server's instructions and `tools/list`, then the call). Each
    side runs on its own copy of the servers' scratch folders, so every side's calls see the
    same state. cl100k tokens (`prixfixe.tokens.count_tokens`) of the instructions, of the
    listing as compact wire JSON and of each result's text.

The fastmcp side needs fastmcp in a virtual environment of its own (never prixfixe's: it is a
peer, not a dependency): `python3 -m venv .cache-fastmcp && .cache-fastmcp/bin/pip install
fastmcp`, or `--fastmcp-python PATH`. Without it that column is left out and the report says so;
without wordllama the semantic one likewise.

Run from the repository root as `python benchmarks/bench_discovery_real.py` or
`python -m benchmarks.bench_discovery_real` (`--quick`: the dev half and 6 token tasks).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a file: make `benchmarks` (and the tests' server helpers) importable.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

from benchmarks._common import ROOT, markdown_table, write_json, write_section
from benchmarks.bench_agent_tokens import (
    Agent,
    Call,
    Task,
    TaskRun,
    listing_json,
    result_text,
    tokens,
)
from benchmarks.bench_servers import Setup

NAME = "discovery-real"
DATA = Path(__file__).resolve().parent / "data" / "real_paraphrases.json"
FASTMCP_SERVER = Path(__file__).resolve().parent / "fastmcp_search_server.py"
FASTMCP_PYTHON = ROOT / ".cache-fastmcp" / "bin" / "python"
GOAL_FIRST, GOAL_SHOWN = 0.45, 0.8
SPLITS = ("dev", "held-out")

# --- the requests ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """One request and the tools that would answer it (prixfixe's names: `server.tool`)."""

    kind: str  # "tool": a paraphrase of one tool; "task": a person's task
    query: str
    accept: tuple[str, ...]
    split: str


def load_queries(path: Path = DATA) -> list[Query]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out = [
        Query("tool", p["query"], (p["tool"], *p.get("also", ())), p["split"])
        for p in data["paraphrases"]
    ]
    out += [Query("task", t["query"], tuple(t["accept"]), t["split"]) for t in data["tasks"]]
    return out


def overlaps(queries: Sequence[Query], described: dict[str, str]) -> dict[str, list[str]]:
    """Each paraphrase's terms (prixfixe's analyser: stemmed, stop words out) that its tool's
    name, server or description also has: the data promises none."""
    from prixfixe.search.analysis import tokenize

    found: dict[str, list[str]] = {}
    for q in queries:
        if q.kind != "tool":
            continue
        server, tool = q.accept[0].split(".", 1)
        own = set(tokenize(f"{server} {tool} {described[q.accept[0]]}"))
        common = sorted(set(tokenize(q.query)) & own)
        if common:
            found[q.accept[0]] = common
    return found


@dataclass(frozen=True)
class Outcome:
    """What one search showed the model."""

    names: tuple[str, ...]
    #: True when the text calls its hits matches, False when it says nothing fits, None when
    #: the ranker never says (fastmcp).
    claims_match: bool | None
    tokens: int

    def first_ok(self, q: Query) -> bool:
        return bool(self.names) and self.names[0] in q.accept

    def shown(self, q: Query) -> bool:
        return any(n in q.accept for n in self.names)

    def misleading(self, q: Query) -> bool:
        return self.claims_match is True and not self.first_ok(q)


def prixfixe_outcome(result: types.CallToolResult) -> Outcome:
    """Read `tool_search`'s text as the model does: the head, then one `- name...` line a hit."""
    text = result_text(result)
    lines = text.splitlines()
    names = tuple(
        line[2:].split(":", 1)[0].split(" (", 1)[0] for line in lines if line.startswith("- ")
    )
    return Outcome(names, bool(lines) and lines[0].startswith("Matches for "), tokens(text))


def fastmcp_outcome(result: types.CallToolResult, to_ours: dict[str, str]) -> Outcome:
    """fastmcp's `search_tools` text is a JSON array of whole listing entries."""
    text = result_text(result)
    try:
        entries = json.loads(text)
    except json.JSONDecodeError:
        entries = []
    names = tuple(
        to_ours.get(str(e.get("name")), str(e.get("name"))) for e in entries if isinstance(e, dict)
    )
    return Outcome(names, None, tokens(text))


def rates(rows: Sequence[tuple[Query, Outcome]]) -> dict[str, Any]:
    n = len(rows)
    if not n:
        return {"n": 0}
    return {
        "n": n,
        "first": sum(o.first_ok(q) for q, o in rows) / n,
        "shown": sum(o.shown(q) for q, o in rows) / n,
        "misleading": (
            None
            if any(o.claims_match is None for _, o in rows)
            else sum(o.misleading(q) for q, o in rows) / n
        ),
        "tokens_per_search": sum(o.tokens for _, o in rows) / n,
    }


def summarize_ranking(queries: Sequence[Query], outcomes: Sequence[Outcome]) -> dict[str, Any]:
    pairs = list(zip(queries, outcomes, strict=True))
    out: dict[str, Any] = {}
    for kind in ("tool", "task"):
        for split in SPLITS:
            out[f"{kind}/{split}"] = rates(
                [(q, o) for q, o in pairs if (q.kind, q.split) == (kind, split)]
            )
    out["misses"] = [
        {
            "kind": q.kind,
            "split": q.split,
            "query": q.query,
            "want": list(q.accept),
            "got": list(o.names),
            "shown": o.shown(q),
            "claims_match": o.claims_match,
        }
        for q, o in pairs
        if not o.first_ok(q)
    ]
    return out


# --- the token tasks -------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One task: what the person says (the search), a second phrasing, and the call."""

    prompt: str
    retry: str
    tool: str  # `server.tool`
    arguments: dict[str, Any]


JOBS = [
    Job("What time is it in Tokyo right now?", "current clock in Japan",
        "time.get_current_time", {"timezone": "Asia/Tokyo"}),
    Job("When it's 9am in New York, what time is it in Berlin?",
        "turn a New York hour into German time", "time.convert_time",
        {"source_timezone": "America/New_York", "time": "09:00",
         "target_timezone": "Europe/Berlin"}),
    Job("Remember that Alice works at Acme", "link Alice to Acme as her employer",
        "memory.create_relations",
        {"relations": [{"from": "Alice", "to": "Acme", "relationType": "works at"}]}),
    Job("Search the knowledge base for Acme", "what do you remember about Acme",
        "memory.search_nodes", {"query": "Acme"}),
    Job("Fetch this page: {url}/page.html", "download a web page and read it",
        "fetch.fetch", {"url": "{url}/page.html"}),
    Job("List the files in my project folder", "what is in this folder",
        "filesystem.list_directory", {"path": "{tmp}/files"}),
    Job("What did I change in my repo since the last commit?",
        "edits not yet staged in git", "git.git_diff_unstaged", {"repo_path": "{tmp}/repo"}),
    Job("Show me the last five commits", "git history of my repository",
        "git.git_log", {"repo_path": "{tmp}/repo", "max_count": 5}),
    Job("Open hello.txt in my project folder and read it to me", "show a text file's contents",
        "filesystem.read_text_file", {"path": "{tmp}/files/hello.txt"}),
    Job("Find every text file in my project", "look for files by name pattern",
        "filesystem.search_files", {"path": "{tmp}/files", "pattern": "**/*.txt"}),
    Job("Add 17 and 25", "sum of two numbers", "everything.get-sum", {"a": 17, "b": 25}),
    Job("Is my working tree clean?", "git status of my repository",
        "git.git_status", {"repo_path": "{tmp}/repo"}),
    Job("Make a folder called reports in my project", "create a directory",
        "filesystem.create_directory", {"path": "{tmp}/files/reports"}),
    Job("Show me everything you remember", "read the whole knowledge graph",
        "memory.read_graph", {}),
    Job("How big is hello.txt and when was it last modified?", "file size and dates",
        "filesystem.get_file_info", {"path": "{tmp}/files/hello.txt"}),
    Job("Which branches does my repo have?", "list git branches",
        "git.git_branch", {"repo_path": "{tmp}/repo", "branch_type": "local"}),
]  # fmt: skip
QUICK_JOBS = 6


def fill(value: Any, tmp: Path, url: str) -> Any:
    if isinstance(value, str):
        return value.replace("{tmp}", str(tmp)).replace("{url}", url)
    if isinstance(value, dict):
        return {k: fill(v, tmp, url) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, tmp, url) for v in value]
    return value


def task_of(job: Job, setup: Setup, name: str | None = None) -> Task:
    """The job as bench_agent_tokens' agent runs it (prixfixe's tool names)."""
    tmp = setup.root / "servers"
    call = Call(
        job.tool, fill(job.arguments, tmp, setup.url), fill(job.prompt, tmp, setup.url), job.retry
    )
    return Task(name or job.tool, call.query, (call,))


def long_task(jobs: Sequence[Job], setup: Setup) -> Task:
    calls = tuple(c for job in jobs for c in task_of(job, setup).calls)
    return Task("long session", "", calls)


# --- the sides -------------------------------------------------------------------------------


class FastmcpAgent(Agent):
    """The same agent on fastmcp's search transform: `search_tools` shows each hit's whole
    listing entry, so a found tool is called (`call_tool`) without a describe step."""

    def __init__(self, client: Client, run: TaskRun, task: Task, to_ours: dict[str, str]) -> None:
        super().__init__(client, run, task)
        self.to_ours = to_ours
        self.to_theirs = {ours: theirs for theirs, ours in to_ours.items()}

    async def search(self, query: str, wanted: str) -> bool:
        result = await self.call("search_tools", {"query": query}, None)
        self.seen |= set(fastmcp_outcome(result, self.to_ours).names) & self.needs
        return wanted in self.seen

    async def do(self, call: Call) -> bool:
        if not await self.find(call):
            return False
        arguments = {"name": self.to_theirs[call.tool], "arguments": call.arguments}
        await self.call("call_tool", arguments, call.tool)
        return True


class DirectAgent(Agent):
    """Every server connected directly: their instructions and listings, then the call."""

    def __init__(self, clients: dict[str, Client], run: TaskRun, task: Task) -> None:
        super().__init__(next(iter(clients.values())), run, task)
        self.clients = clients

    async def start(self) -> None:
        for client in self.clients.values():
            self.run.instructions += tokens(client.instructions or "")
            listing = await client.list_tools()
            self.run.listing += tokens(listing_json(listing.tools))
            self.run.listed += [t.name for t in listing.tools]

    async def do(self, call: Call) -> bool:
        server, tool = call.tool.split(".", 1)
        self.client = self.clients[server]
        await self.call(tool, call.arguments, call.tool)
        return True


@dataclass
class Side:
    """One way of reaching the servers, on its own copy of their scratch folders."""

    name: str
    fresh: list[TaskRun] = field(default_factory=list)
    long: TaskRun | None = None


async def run_agent(agent: Agent, task: Task, keep_going: bool = False) -> None:
    """A task's calls in order; a tool not found ends a task, and in a long session (each call
    a task of its own: `keep_going`) the session goes on to the next."""
    await agent.start()
    for call in task.calls:
        if not await agent.do(call) and not keep_going:
            break


def prixfixe_setup(root: Path, url: str, semantic: bool) -> Setup:
    setup = Setup(root, url)
    config = setup.mounted / "prixfixe.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text + f"\n[search]\nsemantic = {str(semantic).lower()}\n", "utf-8")
    return setup


def fastmcp_params(
    setup: Setup, python: Path, server: Path = FASTMCP_SERVER
) -> StdioServerParameters:
    """fastmcp's proxy of `setup`'s servers (`server`: which of the peer's scripts serves it)
    on fastmcp's own interpreter, over stdio."""
    servers = {
        s.name: {"command": s.command, "args": list(s.args), "env": s.env} for s in setup.specs
    }
    config = setup.root / "fastmcp.json"
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return StdioServerParameters(
        command=str(python),
        args=[str(server), str(config)],
        env={"FASTMCP_LOG_LEVEL": "ERROR", "FASTMCP_SHOW_SERVER_BANNER": "false"},
    )


@asynccontextmanager
async def direct_clients(setup: Setup) -> AsyncIterator[dict[str, Client]]:
    async with AsyncExitStack() as stack:
        clients = {}
        for spec in setup.specs:
            params = StdioServerParameters(command=spec.command, args=list(spec.args), env=spec.env)
            clients[spec.name] = await stack.enter_async_context(Client(params, mode="legacy"))
        yield clients


async def direct_listing(setup: Setup) -> tuple[dict[str, str], dict[str, str]]:
    """Every tool's description (prixfixe's names), and fastmcp's name for each."""
    described: dict[str, str] = {}
    to_ours: dict[str, str] = {}
    async with direct_clients(setup) as clients:
        for server, client in clients.items():
            for tool in (await client.list_tools()).tools:
                described[f"{server}.{tool.name}"] = tool.description or ""
                to_ours[f"{server}_{tool.name}"] = f"{server}.{tool.name}"
    return described, to_ours


async def prixfixe_side(
    name: str, setups: tuple[Setup, Setup], queries: Sequence[Query], jobs: Sequence[Job]
) -> tuple[list[Outcome], Side]:
    """Rank every query, then the fresh sessions (one app), then the long one (another)."""
    from prixfixe.mcp.server import build_server

    side = Side(name)
    fresh_app = setups[0].app()
    outcomes: list[Outcome] = []
    async with Client(build_server(fresh_app), mode="legacy") as client:
        # The first search reads the mounted servers' tool lists; every session after it
        # sees them in the instructions' table of contents.
        for q in queries:
            outcomes.append(
                prixfixe_outcome(await client.call_tool("tool_search", {"query": q.query}))
            )
    for job in jobs:
        task = task_of(job, setups[0])
        run = TaskRun(task=task.name, side=name)
        async with Client(build_server(fresh_app), mode="legacy") as client:
            await run_agent(Agent(client, run, task), task)
        side.fresh.append(run)
    long_app = setups[1].app()
    async with Client(build_server(long_app), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": "warm up"})
    task = long_task(jobs, setups[1])
    side.long = TaskRun(task=task.name, side=name)
    async with Client(build_server(long_app), mode="legacy") as client:
        await run_agent(Agent(client, side.long, task), task, keep_going=True)
    return outcomes, side


async def fastmcp_side(
    python: Path,
    setups: tuple[Setup, Setup],
    queries: Sequence[Query],
    jobs: Sequence[Job],
    to_ours: dict[str, str],
) -> tuple[list[Outcome], Side]:
    """One fastmcp process a setup. A fresh session is the agent starting over (instructions and
    listing read again) on the same connection: fastmcp keeps no state a session would see, and
    a process per task would start the six servers again each time for the same tokens."""
    side = Side("fastmcp BM25")
    outcomes: list[Outcome] = []
    async with Client(fastmcp_params(setups[0], python), mode="legacy") as client:
        for q in queries:
            result = await client.call_tool("search_tools", {"query": q.query})
            outcomes.append(fastmcp_outcome(result, to_ours))
        for job in jobs:
            task = task_of(job, setups[0])
            run = TaskRun(task=task.name, side=side.name)
            await run_agent(FastmcpAgent(client, run, task, to_ours), task)
            side.fresh.append(run)
    async with Client(fastmcp_params(setups[1], python), mode="legacy") as client:
        task = long_task(jobs, setups[1])
        side.long = TaskRun(task=task.name, side=side.name)
        await run_agent(FastmcpAgent(client, side.long, task, to_ours), task, keep_going=True)
    return outcomes, side


async def direct_side(setups: tuple[Setup, Setup], jobs: Sequence[Job]) -> Side:
    """Every server connected directly; a fresh session reads every listing again."""
    side = Side("full listing")
    async with direct_clients(setups[0]) as clients:
        for job in jobs:
            task = task_of(job, setups[0])
            run = TaskRun(task=task.name, side=side.name)
            await run_agent(DirectAgent(clients, run, task), task)
            side.fresh.append(run)
    async with direct_clients(setups[1]) as clients:
        task = long_task(jobs, setups[1])
        side.long = TaskRun(task=task.name, side=side.name)
        await run_agent(DirectAgent(clients, side.long, task), task, keep_going=True)
    return side


def side_json(side: Side) -> dict[str, Any]:
    def one(run: TaskRun) -> dict[str, Any]:
        return {
            "task": run.task,
            "read": run.read,
            "instructions": run.instructions,
            "listing": run.listing,
            "lookups": run.lookups,
            "failed": run.failed,
            "calls": [
                {"tool": c.tool, "target": c.target, "read": c.read, "error": c.error}
                for c in run.calls
            ],
        }

    assert side.long is not None
    return {
        "fresh_read": sum(r.read for r in side.fresh),
        "long_read": side.long.read,
        "fresh_failed": [r.task for r in side.fresh if r.failed],
        "long_failed": [tool for tool, how in side.long.lookups if how == "missed"],
        "errors": [e for r in [*side.fresh, side.long] for e in r.errors],
        "fresh": [one(r) for r in side.fresh],
        "long": one(side.long),
    }


# --- the run ---------------------------------------------------------------------------------


def fastmcp_version(python: Path) -> str:
    out = subprocess.run(
        [str(python), "-c", "import fastmcp, mcp.types; import importlib.metadata as m; "
         "print(m.version('fastmcp'), m.version('mcp'))"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    fast, sdk = out.stdout.split()
    return f"fastmcp {fast} (mcp {sdk})"


async def measure(
    root: Path,
    url: str,
    queries: Sequence[Query],
    jobs: Sequence[Job],
    semantic: bool,
    fastmcp: Path | None,
) -> dict[str, Any]:
    def pair(name: str, semantic: bool = False) -> tuple[Setup, Setup]:
        return (
            prixfixe_setup(root / f"{name}-fresh", url, semantic),
            prixfixe_setup(root / f"{name}-long", url, semantic),
        )

    described, to_ours = await direct_listing(Setup(root / "listing", url))
    overlap = overlaps(queries, described)
    if overlap:
        raise SystemExit(f"bench_discovery_real: paraphrases reuse their tool's words: {overlap}")
    unknown = {n for q in queries for n in q.accept} - set(described) - {"kb_search", "store_put"}
    if unknown:
        raise SystemExit(f"bench_discovery_real: no such tools: {sorted(unknown)}")

    rankers: dict[str, Any] = {}
    sides: dict[str, Any] = {}
    for name, on in [("lexical", False), *([("semantic", True)] if semantic else [])]:
        outcomes, side = await prixfixe_side(f"prixfixe {name}", pair(name, on), queries, jobs)
        rankers[f"prixfixe {name}"] = summarize_ranking(queries, outcomes)
        sides[side.name] = side_json(side)
    if fastmcp is not None:
        outcomes, side = await fastmcp_side(fastmcp, pair("fastmcp"), queries, jobs, to_ours)
        rankers[side.name] = summarize_ranking(queries, outcomes)
        sides[side.name] = side_json(side)
    direct = await direct_side(pair("direct"), jobs)
    sides[direct.name] = side_json(direct)
    return {"tools": len(described), "rankers": rankers, "sides": sides}


# --- report ----------------------------------------------------------------------------------


def _rate(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


RANK_HEADERS = [
    "ranker", "requests (dev / held-out)", "first", "shown", "misleading",
    "tokens a search (held-out)",
]  # fmt: skip
TOKEN_HEADERS = [
    "side", "fresh sessions", "vs full", "one long session", "vs full", "failed (fresh)",
    "failed (long)",
]  # fmt: skip


def render(results: dict[str, Any]) -> str:
    rankers, sides = results["rankers"], results["sides"]
    rank_rows = []
    for name, r in rankers.items():
        for kind, label in (("tool", "paraphrase a tool"), ("task", "person-task")):
            dev, held = r[f"{kind}/dev"], r[f"{kind}/held-out"]
            rank_rows.append(
                [
                    name,
                    f"{label} ({dev['n']} / {held['n']})",
                    f"{_rate(dev.get('first'))} / **{_rate(held.get('first'))}**",
                    f"{_rate(dev.get('shown'))} / **{_rate(held.get('shown'))}**",
                    f"{_rate(dev.get('misleading'))} / {_rate(held.get('misleading'))}",
                    f"{held.get('tokens_per_search', 0):.0f}",
                ]
            )
    full = sides["full listing"]
    token_rows = [
        [
            name,
            f"{s['fresh_read']:,}",
            f"{s['fresh_read'] / full['fresh_read']:.2f}x",
            f"{s['long_read']:,}",
            f"{s['long_read'] / full['long_read']:.2f}x",
            ", ".join(s["fresh_failed"]) or "none",
            ", ".join(s["long_failed"]) or "none",
        ]
        for name, s in sides.items()
    ]
    lowest_fresh = min(sides, key=lambda n: sides[n]["fresh_read"])
    lowest_long = min(sides, key=lambda n: sides[n]["long_read"])
    missing = results.get("missing", [])
    missing_line = f"\n\nLeft out of this run: {'; '.join(missing)}." if missing else ""
    misses = []
    for name, r in rankers.items():
        for m in r["misses"]:
            if m["split"] == "held-out":
                got = ", ".join(m["got"][:3]) or "nothing"
                misses.append(
                    f"- {name}, {m['kind']} *{m['query']}* (want `{m['want'][0]}`): "
                    f"{'shown lower' if m['shown'] else 'not shown'}; first: {got}"
                )
    jobs = len(next(iter(sides.values()))["fresh"])
    peer = results.get("fastmcp", "not run")
    verdicts = " ".join(
        f"{name}, held-out paraphrases: first {r['tool/held-out']['first']:.2f} "
        f"({'meets' if r['tool/held-out']['first'] >= GOAL_FIRST else 'below'} {GOAL_FIRST}), "
        f"shown {r['tool/held-out']['shown']:.2f} "
        f"({'meets' if r['tool/held-out']['shown'] >= GOAL_SHOWN else 'below'} {GOAL_SHOWN})."
        for name, r in rankers.items()
        if r["tool/held-out"]["n"]
    )
    return f"""## Real servers: finding tools, tokens of real tasks (`bench_discovery_real.py`)

The six servers `scripts/test-servers.sh` installs ({results["tools"]} tools) mounted in one
prixfixe, lexical (`[search] semantic = false`) and semantic (`= true`), beside fastmcp's proxy
of the same servers with its `BM25SearchTransform` (its defaults; {peer}).
Versions: {results["versions"]}; {results.get("machine", "machine not recorded")}.{missing_line}

**Finding** (`benchmarks/data/real_paraphrases.json`, written before any search ran: one
request per tool in a person's words sharing no term with the tool's name or description, and
18 person-tasks; a fixed seeded split, dev / **held-out**, the held-out figure is the one to
quote). First = the first hit is a right tool; shown = a right tool is anywhere in the result
the model reads (prixfixe: its default limit, 5; fastmcp: its default 5); misleading = the
text calls its hits matches while the first is wrong (fastmcp never says how sure it is: —).
Goal: first ≥ {GOAL_FIRST}, shown ≥ {GOAL_SHOWN}.

{markdown_table(RANK_HEADERS, rank_rows)}

{verdicts}

Held-out misses (the first three hits):

{chr(10).join(misses) or "none"}

**Tokens an agent reads** over {jobs} tasks, each one call on one of the servers with real
arguments: search with the task's words, a second phrasing if the tool is not shown, describe
once (prixfixe), call. Fresh = each task a new session (instructions and listing read again);
long = one session for all. The full listing is every server connected directly: their
instructions and `tools/list`, then the call.

{markdown_table(TOKEN_HEADERS, token_rows)}

Lowest: fresh **{lowest_fresh}**, long **{lowest_long}**.
"""


def versions() -> str:
    import importlib.metadata as metadata

    names = ["prixfixe", "mcp"] + (["wordllama"] if importlib.util.find_spec("wordllama") else [])
    return ", ".join(f"{n} {metadata.version(n)}" for n in names)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="dev half only, 6 token tasks")
    parser.add_argument(
        "--fastmcp-python", type=Path, default=FASTMCP_PYTHON,
        help="the interpreter of fastmcp's own venv (default: .cache-fastmcp/bin/python)",
    )  # fmt: skip
    parser.add_argument("--no-semantic", action="store_true", help="lexical ranking only")
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)

    from tests.servers.real_servers import NotInstalled, loopback_pages

    queries = load_queries()
    jobs = JOBS
    if args.quick:
        queries = [q for q in queries if q.split == "dev"]
        jobs = JOBS[:QUICK_JOBS]
    missing: list[str] = []
    semantic = not args.no_semantic and importlib.util.find_spec("wordllama") is not None
    if not semantic:
        missing.append(
            "prixfixe semantic (--no-semantic)" if args.no_semantic
            else "prixfixe semantic (wordllama is not installed)"
        )  # fmt: skip
    fastmcp: Path | None = args.fastmcp_python if args.fastmcp_python.exists() else None
    if fastmcp is None:
        missing.append(f"fastmcp BM25 (no interpreter at {args.fastmcp_python}; see the docstring)")
    try:
        with tempfile.TemporaryDirectory() as tmp, loopback_pages() as pages:
            results = anyio.run(measure, Path(tmp), pages.url, queries, jobs, semantic, fastmcp)
    except NotInstalled as exc:
        raise SystemExit(f"bench_discovery_real: {exc}") from None
    results["missing"] = missing
    results["quick"] = args.quick
    results["versions"] = versions()
    results["machine"] = f"{os.cpu_count()} cores"
    if fastmcp is not None:
        results["fastmcp"] = fastmcp_version(fastmcp)
    markdown = render(results)
    print(markdown)
    if not args.no_write:
        write_json(NAME, results)
        write_section(NAME, markdown)
    return results


if __name__ == "__main__":
    main()
