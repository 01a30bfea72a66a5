"""What an agent's model reads to get real tasks done: prixfixe's discovery beside a full listing.

Scripted tasks an agent really does (reminders, deadlines and countdowns in the store, the
morning routine, reports, step types, and finding and calling unlisted catalogue tools) run as
an agent would through a real in-memory `mcp.Client`, at 19 (zero config), 100 and 1,000
registered tools. Each task is a fresh session: the client reads the server's instructions and
`tools/list`, then makes the task's calls. The model reads

- the instructions and the listing, as a client puts them in context (each tool's wire entry,
  compact JSON), and
- each call's result as the client passes it on: the text of its content blocks (what most
  clients give the model). The `structuredContent` size is recorded beside it, for a client
  that passed structured content instead.

The agent never hard-codes which tools are listed. A listed tool is called directly. For any
other it does what the server's instructions say: `tool_search` with what a user would type;
if the wanted tool is among the results it `tool_describe`s it (once per task) and calls it
with `tool_invoke`; if not, it pays for the search, retries once with a second phrasing, and
then gives the task up (a failure).

The baseline is the same server with every facet listed (`PRIXFIXE_EXPOSE` naming them all):
the agent calls every tool directly and never searches. Both sides make the same underlying
calls with the same arguments on a store seeded the same way (fresh per task), in one run.

Catalogue tools beyond prixfixe's own are real MCP tools from LiveMCPBench (names,
descriptions, input schemas), then the seeded synthetic catalogue of `bench_tools_list.py`.
Their handlers return a small fixed result: a stand-in for the remote services they front.

Run from the repository root as `python benchmarks/bench_agent_tokens.py` or
`python -m benchmarks.bench_agent_tokens` (`--quick` for 19 and 100 tools only).
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

if __package__ in (None, ""):
    # Run as a file: make `benchmarks` and `prixfixe` importable from the checkout.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

import anyio
import mcp_types as types
from mcp import Client
from pydantic import BaseModel, ConfigDict

from benchmarks._common import SHARED_DATA, markdown_table, write_json, write_section
from benchmarks.bench_tools_list import SyntheticTool, input_model, synthetic_catalogue
from prixfixe import Tool, ToolContext, hookimpl
from prixfixe.app import App
from prixfixe.mcp.server import build_server
from prixfixe.tokens import count_tokens

NAME = "agent-tokens"
DEFAULT_SIZES = (19, 100, 1000)
QUICK_SIZES = (19, 100)
LIVEMCP_TOOLS = SHARED_DATA / "toolsearch" / "livemcpbench" / "tools.json"
TRIO = ("tool_search", "tool_describe", "tool_invoke")

# --- the catalogue beyond prixfixe's own tools ----------------------------------------------


@dataclass(frozen=True)
class LiveTool:
    """One real MCP tool from LiveMCPBench, as a server advertised it."""

    name: str
    server: str
    facet: str
    description: str
    schema: dict[str, Any]


def _facet_of(server: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", server.lower()).strip("-")
    slug = re.sub(r"^[^a-z]+", "", slug)[:40].rstrip("-")
    return f"ext-{slug}" if slug else "ext-misc"


def load_livemcp(path: Path = LIVEMCP_TOOLS) -> list[LiveTool]:
    """LiveMCPBench's 527 tools; a name two servers share gets its server's facet as a prefix."""
    out: list[LiveTool] = []
    taken: set[str] = set()
    for server in json.loads(path.read_text(encoding="utf-8")):
        facet = _facet_of(server["name"])
        for group in server["tools"].values():
            for tool in group["tools"]:
                name = tool["name"]
                if name in taken:
                    name = f"{facet.removeprefix('ext-')}_{name}"
                taken.add(name)
                out.append(
                    LiveTool(
                        name=name,
                        server=server["name"],
                        facet=facet,
                        description=(tool.get("description") or "").strip() or name,
                        schema=tool.get("inputSchema") or {"type": "object", "properties": {}},
                    )
                )
    return out


def _title(name: str) -> str:
    words = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").replace("-", " ")
    return words.strip().capitalize()


class Passthrough(BaseModel):
    """Accepts any object and advertises a remote server's own JSON Schema, as a plugin
    fronting a remote MCP server would (the remote side validates)."""

    model_config = ConfigDict(extra="allow")
    advertised: ClassVar[dict[str, Any]] = {}

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return copy.deepcopy(cls.advertised)


def passthrough_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    model_name = re.sub(r"\W", "_", name).title().replace("_", "") + "Input"
    return type(model_name, (Passthrough,), {"advertised": copy.deepcopy(schema)})


def _stand_in(name: str) -> Callable[[ToolContext, BaseModel], str]:
    reply = json.dumps({"ok": True, "tool": name, "result": "done (stand-in for the service)"})

    def handler(ctx: ToolContext, args: BaseModel) -> str:
        return reply

    return handler


def _live_tool(spec: LiveTool) -> Tool:
    return Tool(
        name=spec.name,
        title=_title(spec.name),
        description=spec.description,
        input_model=passthrough_model(spec.name, spec.schema),
        handler=_stand_in(spec.name),
        mutates=False,
        facet=spec.facet,
    )


def _synthetic_tool(spec: SyntheticTool) -> Tool:
    return Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_model=input_model(spec),
        handler=_stand_in(spec.name),
        mutates=spec.mutates,
        facet=spec.facet,
    )


def catalogue(extra: int, wanted: Sequence[str], seed: int = 0) -> list[Tool]:
    """`extra` tools: the ones tasks call first, then the rest of LiveMCPBench (seeded order),
    then the synthetic catalogue."""
    live = {t.name: t for t in load_livemcp()}
    synthetic = {s.name: s for s in synthetic_catalogue(800, seed) if s.name not in live}
    missing = [n for n in wanted if n not in live and n not in synthetic]
    if missing:
        raise SystemExit(f"tasks call tools no catalogue has: {', '.join(missing)}")
    rest_live = [n for n in live if n not in wanted]
    random.Random(seed).shuffle(rest_live)
    order = list(dict.fromkeys([*wanted, *rest_live, *synthetic]))
    if extra > len(order):
        raise SystemExit(f"the catalogue has {len(order)} tools; {extra} were asked for")
    return [
        _live_tool(live[n]) if n in live else _synthetic_tool(synthetic[n]) for n in order[:extra]
    ]


def catalogue_plugin(tools: Sequence[Tool]) -> object:
    class Catalogue:
        __name__ = f"bench_agent_catalogue_{len(tools)}"

        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            for tool in tools:
                register(tool)

    return Catalogue()


# --- tasks ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One call the task needs, and how a user would phrase the search for it."""

    tool: str
    arguments: dict[str, Any]
    query: str
    retry: str


@dataclass(frozen=True)
class Task:
    name: str
    #: What the user asked the agent.
    prompt: str
    calls: tuple[Call, ...]
    #: Calls made before the session (not read by the model), e.g. a routine run to report on.
    setup: tuple[tuple[str, dict[str, Any]], ...] = ()
    #: Calls catalogue tools (so only runs where they are registered).
    catalogue: bool = False


@dataclass(frozen=True)
class Scene:
    """What tasks refer to: today, the user's repository, the seeded records' ids."""

    today: dt.date
    repo: Path
    ids: dict[str, int]

    def day(self, offset: int) -> str:
        return (self.today + dt.timedelta(days=offset)).isoformat()

    def weekday(self, weekday: int) -> str:
        """The next such weekday after today (0 = Monday)."""
        ahead = (weekday - self.today.weekday() - 1) % 7 + 1
        return self.day(ahead)


#: The store every task starts from: (key, kind, record with day offsets from today).
SEED: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("dentist", "reminder", {"text": "Dentist appointment", "due": 3}),
    ("milk", "reminder", {"text": "Buy milk", "due": 1}),
    ("groceries-a", "reminder", {"text": "Order groceries for the week", "due": 0}),
    ("groceries-b", "reminder", {"text": "Groceries: pick up the delivery", "due": 2}),
    ("mum", "reminder", {"text": "Call mum", "due": 5, "recurrence": "weekly"}),
    ("tax", "deadline", {"label": "Tax return", "date": 40, "notes": "Receipts in the blue box"}),
    ("conference", "deadline", {"label": "Conference talk slides", "date": 14}),
    ("notice", "countdown", {"label": "Notice period", "start": -10, "end": 20}),
)
_DATE_FIELDS = ("due", "date", "start", "end")


def seed_store(app: App, today: dt.date) -> dict[str, int]:
    ids: dict[str, int] = {}
    for key, kind, record in SEED:
        values = {
            k: (today + dt.timedelta(days=v)).isoformat() if k in _DATE_FIELDS else v
            for k, v in record.items()
        }
        ids[key] = app.store.put(kind, values).id
    return ids


def c(tool: str, arguments: dict[str, Any], queries: str) -> Call:
    """A call; `queries` is the search a user would type, then the retry, split by ` | `."""
    query, retry = queries.split(" | ")
    return Call(tool, arguments, query, retry)


def t(
    name: str, prompt: str, *calls: Call, setup: tuple[tuple[str, dict[str, Any]], ...] = ()
) -> Task:
    return Task(name, prompt, calls, setup)


def own_tasks(s: Scene) -> list[Task]:
    """Tasks on prixfixe's own tools: the store, routines, reports and step types."""
    repo = [str(s.repo)]
    ids = s.ids

    def put(kind: str, record: dict[str, Any], queries: str, id: int | None = None) -> Call:
        args: dict[str, Any] = {"kind": kind, "record": record}
        return c("store_put", args if id is None else {**args, "id": id}, queries)

    def find(kind: str, text: str, queries: str) -> Call:
        where = {"text" if kind == "reminder" else "label": {"contains": text}}
        return c("store_query", {"kind": kind, "where": where}, queries)

    def close(kind: str, key: str, reason: str, queries: str) -> Call:
        return c("store_close", {"kind": kind, "id": ids[key], "reason": reason}, queries)

    def step(type_: str, params: dict[str, Any], queries: str) -> Call:
        return c("step_run", {"type": type_, "params": params}, queries)

    def query(kind: str, args: dict[str, Any], queries: str) -> Call:
        return c("store_query", {"kind": kind, **args}, queries)

    morning = c(
        "routine_run", {"name": "morning"}, "run my morning routine | daily dashboard report"
    )
    morning_data = c(
        "routine_run",
        {"name": "morning", "format": "data"},
        "show my morning report as data | run the morning routine",
    )
    report_run = (("routine_run", {"name": "morning"}),)
    due_soon = step(
        "reminders", {"days": 3}, "what is due in the next three days | reminders due soon"
    )
    days_left = "how many days until my deadlines | days left to each deadline"
    return [
        t(
            "passport-then-morning-data",
            "Add a reminder to renew my passport this Friday, then show the morning report "
            "as data.",
            put(
                "reminder",
                {"text": "Renew my passport", "due": s.weekday(4)},
                "remind me to renew my passport on friday | add a reminder",
            ),
            morning_data,
        ),
        t(
            "remind-bank-tomorrow",
            "Remind me to call the bank tomorrow.",
            put(
                "reminder",
                {"text": "Call the bank", "due": s.day(1)},
                "remind me to call the bank tomorrow | create a reminder",
            ),
        ),
        t(
            "remind-plants-weekly",
            "Remind me every Monday to water the plants.",
            put(
                "reminder",
                {"text": "Water the plants", "due": s.weekday(0), "recurrence": "weekly"},
                "remind me every week to water the plants | add a recurring reminder",
            ),
        ),
        t(
            "add-vat-deadline",
            "The VAT return is due in three weeks; the accountant needs the invoices first.",
            put(
                "deadline",
                {"label": "VAT return", "date": s.day(21), "notes": "Invoices to accountant"},
                "add a deadline for the vat return | save a deadline",
            ),
        ),
        t(
            "start-countdown",
            "Count down my work days from today to the project handover in 30 days.",
            put(
                "countdown",
                {"label": "Project handover", "start": s.day(0), "end": s.day(30)},
                "count down the work days until my project ends | start a countdown",
            ),
        ),
        t(
            "move-dentist",
            "Move my dentist reminder to next Tuesday.",
            find("reminder", "dentist", "find my dentist reminder | search reminders by text"),
            put(
                "reminder",
                {"due": s.weekday(1)},
                "move a reminder to another day | change a reminder's due date",
                id=ids["dentist"],
            ),
        ),
        t(
            "milk-done",
            "I bought the milk; tick that reminder off.",
            find("reminder", "milk", "find the buy milk reminder | search reminders"),
            close("reminder", "milk", "done", "mark the milk reminder done | complete a reminder"),
        ),
        t(
            "cancel-conference-deadline",
            "I withdrew my conference talk; cancel that deadline.",
            find("deadline", "conference", "find the conference deadline | list deadlines"),
            close(
                "deadline",
                "conference",
                "talk withdrawn",
                "cancel the conference deadline | close a deadline",
            ),
        ),
        t(
            "reminders-due-this-week",
            "Which reminders are due this week?",
            query(
                "reminder",
                {"where": {"due": {"<=": s.day(7)}}, "order_by": "due"},
                "which reminders are due this week | list reminders by due date",
            ),
        ),
        t(
            "open-deadlines",
            "List my open deadlines, soonest first.",
            query(
                "deadline",
                {"order_by": "date"},
                "list my open deadlines | show deadlines sorted by date",
            ),
        ),
        t(
            "all-countdowns",
            "Show all my countdowns, including finished ones.",
            query(
                "countdown",
                {"include_closed": True},
                "show all my countdowns including finished ones | list countdown records",
            ),
        ),
        t(
            "countdown-fields",
            "What fields does a countdown have?",
            c(
                "store_kinds",
                {"kind": "countdown"},
                "what fields does a countdown have | record kinds and their fields",
            ),
        ),
        t(
            "record-kinds",
            "What kinds of records can you keep for me?",
            c("store_kinds", {}, "which kinds of records can I store | list store record types"),
        ),
        t(
            "learn-then-add-deadline",
            "Check what a deadline needs, then add one for the grant application in six weeks.",
            c(
                "store_kinds",
                {"kind": "deadline"},
                "what fields does a deadline need | deadline record schema",
            ),
            put(
                "deadline",
                {"label": "Grant application", "date": s.day(42)},
                "add a deadline for the grant application | save a deadline",
            ),
        ),
        t("morning-markdown", "Run my morning routine.", morning),
        t(
            "morning-data-pinned",
            "Run the morning routine as data; my parser understands report schema 1.",
            c(
                "routine_run",
                {"name": "morning", "format": "data", "schema_major": {"report": 1}},
                "run the morning routine as data | morning report json",
            ),
        ),
        t(
            "last-report",
            "Show me the last morning report again.",
            c("report_get", {}, "show me the last morning report again | latest report"),
            setup=report_run,
        ),
        t(
            "last-report-data",
            "Get the latest report as data.",
            c(
                "report_get",
                {"format": "data"},
                "get the latest report as data | previous report by generation",
            ),
            setup=report_run,
        ),
        t(
            "which-routines",
            "Which routines do I have, and what do they run?",
            c("routine_list", {}, "which routines are there | list configured routines"),
        ),
        t(
            "step-types",
            "Which kinds of steps can a routine run?",
            c("steps_list", {}, "which step types exist | list step types"),
        ),
        t(
            "git-status-schema",
            "What data does the git status step return?",
            c(
                "steps_list",
                {"type": "git-status"},
                "what data does the git status step return | step type data schema",
            ),
        ),
        t(
            "repo-status",
            "Is my repository clean?",
            step(
                "git-status",
                {"repos": repo},
                "check the git status of my repo | is my repository clean",
            ),
        ),
        t(
            "deadline-days",
            "How many days are left until each of my deadlines?",
            step("deadline-calc", {}, days_left),
        ),
        t(
            "countdown-day",
            "Which work day of my notice period is today?",
            step(
                "countdown-calc",
                {},
                "which work day of my countdown is today | work days left in a countdown",
            ),
        ),
        t("due-next-three-days", "What is due in the next three days?", due_soon),
        t(
            "git-and-reminders-together",
            "Check my repo and my reminders for the next three days in one go.",
            c(
                "routine_eval",
                {
                    "steps": [
                        {"type": "git-status", "repos": repo},
                        {"type": "reminders", "days": 3},
                    ]
                },
                "run git status and reminders together | run several steps at once",
            ),
        ),
        t(
            "what-can-you-do",
            "What can this server do?",
            step(
                "capability-index",
                {"variant": "summary"},
                "what can this server do | capability index summary",
            ),
        ),
        t(
            "add-then-upcoming",
            "Remind me to pick up the dry cleaning the day after tomorrow, then show what is "
            "due in the next three days.",
            put(
                "reminder",
                {"text": "Pick up the dry cleaning", "due": s.day(2)},
                "remind me to pick up the dry cleaning | add a reminder",
            ),
            due_soon,
        ),
        t(
            "close-grocery-reminders",
            "The groceries are sorted; close both grocery reminders.",
            find("reminder", "groceries", "find my grocery reminders | search reminders by text"),
            close("reminder", "groceries-a", "done", "mark a reminder done | complete a reminder"),
            close("reminder", "groceries-b", "done", "mark a reminder done | complete a reminder"),
        ),
        t(
            "move-tax-then-recompute",
            "My tax return is due ten days earlier than I thought; fix it and tell me how "
            "many days are left.",
            find("deadline", "tax", "find my tax return deadline | list deadlines"),
            put(
                "deadline",
                {"date": s.day(30)},
                "change the date of a deadline | update a deadline",
                id=ids["tax"],
            ),
            step("deadline-calc", {"within": 60}, days_left),
        ),
        t(
            "deadline-then-morning",
            "Add a deadline for the quarterly report on the 15th of next month, then run my "
            "morning routine.",
            put(
                "deadline",
                {"label": "Quarterly report", "date": _fifteenth_next_month(s.today)},
                "add a deadline for the quarterly report | save a deadline",
            ),
            morning,
        ),
        t(
            "changed-since",
            "Which reminders changed since generation 3?",
            query(
                "reminder",
                {"where": {"gen": {">": 3}}},
                "which reminders changed recently | records changed since a generation",
            ),
        ),
        t(
            "mum-monthly",
            "Make the call-mum reminder monthly instead of weekly.",
            find("reminder", "mum", "find the call mum reminder | search reminders"),
            put(
                "reminder",
                {"recurrence": "monthly"},
                "change how often a reminder repeats | update a reminder",
                id=ids["mum"],
            ),
        ),
    ]


def _fifteenth_next_month(today: dt.date) -> str:
    year, month = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
    return dt.date(year, month, 15).isoformat()


def catalogue_tasks(s: Scene) -> list[Task]:
    """Tasks that find and call catalogue tools (real LiveMCPBench tools, a few synthetic)."""
    tasks = [
        t(
            "stock-price",
            "What's Apple's share price right now?",
            c(
                "get_current_stock_price",
                {"symbol": "AAPL"},
                "what's apple's share price right now | current stock quote for a ticker",
            ),
        ),
        t(
            "npm-vulnerabilities",
            "Does lodash have known security problems?",
            c(
                "npmVulnerabilities",
                {"packages": ["lodash"]},
                "does the lodash package have known security vulnerabilities "
                "| check npm packages for vulnerabilities",
            ),
        ),
        t(
            "geocode",
            "Where exactly is the Eiffel Tower, in coordinates?",
            c(
                "geocode_address",
                {"address": "Eiffel Tower, Paris"},
                "get the coordinates of the eiffel tower "
                "| convert an address to latitude and longitude",
            ),
        ),
        t(
            "ev-charging",
            "Where can I charge my car near the Eiffel Tower?",
            c(
                "find_ev_charging_stations",
                {"latitude": 48.8584, "longitude": 2.2945},
                "where can I charge my electric car nearby | ev charging stations near a place",
            ),
        ),
        t(
            "convert-time",
            "What is 9am Tokyo time in New York?",
            c(
                "convert_time",
                {"source_timezone": "Asia/Tokyo", "time": "09:00", "target_timezone": "UTC"},
                "what is 9am tokyo time in new york | convert a time between time zones",
            ),
        ),
        t(
            "time-in-sydney",
            "What time is it in Sydney?",
            c(
                "get_current_time",
                {"timezone": "Australia/Sydney"},
                "what time is it in sydney now | current time in a timezone",
            ),
        ),
        t(
            "youtube-transcript",
            "Get me the transcript of this YouTube video.",
            c(
                "get_transcript",
                {"url": "https://youtu.be/dQw4w9WgXcQ", "lang": "en"},
                "get the transcript of a youtube video | youtube video subtitles text",
            ),
        ),
        t(
            "exchange-rate",
            "How many Norwegian kroner do I get for a euro?",
            c(
                "exchange_rate",
                {"baseCurrency": "EUR", "targetCurrency": "NOK"},
                "how many norwegian kroner is one euro | currency exchange rate",
            ),
        ),
        t(
            "whois",
            "Who registered example.com?",
            c(
                "whois_domain",
                {"domain": "example.com"},
                "who registered the domain example.com | domain registration lookup",
            ),
        ),
        t(
            "wikipedia-summary",
            "Summarize the Wikipedia article on the Rosetta Stone.",
            c(
                "get_summary",
                {"title": "Rosetta Stone"},
                "summarize the wikipedia article on the rosetta stone | wikipedia summary",
            ),
        ),
        t(
            "percentage",
            "What is 17.5% of 2,340?",
            c(
                "calculate",
                {"expression": "0.175 * 2340"},
                "what is 17.5 percent of 2340 | evaluate a math expression",
            ),
        ),
        t(
            "budget-pie",
            "Make a pie chart of my monthly budget: rent 1200, food 450, transport 150.",
            c(
                "generate_pie_chart",
                {
                    "data": [
                        {"category": "Rent", "value": 1200},
                        {"category": "Food", "value": 450},
                        {"category": "Transport", "value": 150},
                    ]
                },
                "make a pie chart of my monthly budget | chart showing proportions of a whole",
            ),
        ),
        t(
            "lisbon-stay",
            "Find a place to stay in Lisbon for two adults next weekend.",
            c(
                "airbnb_search",
                {"location": "Lisbon", "checkin": s.weekday(4), "checkout": s.weekday(6)},
                "find a place to stay in lisbon for two adults | search holiday rentals",
            ),
        ),
        t(
            "bitcoin",
            "How much is bitcoin worth today?",
            c(
                "get-crypto-price",
                {"symbol": "BTC"},
                "how much is bitcoin worth today | cryptocurrency price",
            ),
        ),
        t(
            "trending-python",
            "Which Python repositories are trending this week?",
            c(
                "get_github_trending_repositories",
                {"language": "python", "since": "weekly"},
                "which python repos are trending this week | trending github repositories",
            ),
        ),
        t(
            "hacker-news",
            "Show the top Hacker News stories, then open the first with its comments.",
            c(
                "getStories",
                {"type": "top", "limit": 5},
                "show the top hacker news stories | hacker news front page",
            ),
            c(
                "getStoryWithComments",
                {"id": 8863},
                "read a hacker news story with its comments | story and its comments",
            ),
        ),
        t(
            "new-deck",
            "Start a new PowerPoint deck with a slide titled 'Q3 results'.",
            c("create_presentation", {}, "create a new powerpoint presentation | new slide deck"),
            c(
                "add_slide",
                {"title": "Q3 results"},
                "add a slide to the presentation | insert a slide with a title",
            ),
        ),
        t(
            "docker-logs",
            "List my Docker containers and show the web container's logs.",
            c("list-containers", {}, "list my docker containers | running containers"),
            c(
                "get-logs",
                {"container_name": "web"},
                "show the logs of the web container | docker container logs",
            ),
        ),
        t(
            "eth-then-remind",
            "What is ether at now? Remind me to check it again on Monday.",
            c("get-crypto-price", {"symbol": "ETH"}, "ethereum price | cryptocurrency price"),
            c(
                "store_put",
                {"kind": "reminder", "record": {"text": "Check ETH", "due": s.weekday(0)}},
                "remind me on monday to check the price again | add a reminder",
            ),
        ),
        t(
            "invoice",
            "Invoice ACME, due at the end of the month.",
            c(
                "billing_create_invoice",
                {"tags": ["acme"], "due_date": s.day(28)},
                "create an invoice for acme due at the end of the month | new invoice",
            ),
        ),
        t(
            "ticket",
            "Open a high-priority ticket about the login bug.",
            c(
                "tickets_create_issue",
                {"tags": ["login"], "priority": "high"},
                "open a high priority ticket about the login bug | create an issue in the tracker",
            ),
        ),
        t(
            "leave",
            "Request leave for me next week.",
            c(
                "hr_create_leave_request",
                {"owner_email": "me@example.com"},
                "request time off next week | submit a leave request",
            ),
        ),
    ]
    return [Task(x.name, x.prompt, x.calls, x.setup, catalogue=True) for x in tasks]


# --- the agent --------------------------------------------------------------------------------


@dataclass
class CallRecord:
    """One `tools/call` as the model sees it."""

    tool: str
    arguments: dict[str, Any]
    #: The tool the call reaches (the invoked tool for tool_invoke; None for search/describe).
    target: str | None
    read: int
    structured: int | None
    written: int
    error: str | None


@dataclass
class TaskRun:
    task: str
    side: str
    instructions: int = 0
    listing: int = 0
    listed: list[str] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    #: Per unlisted call: "first", "retry" or "missed".
    lookups: list[tuple[str, str]] = field(default_factory=list)
    failed: str | None = None

    @property
    def read(self) -> int:
        return self.instructions + self.listing + sum(r.read for r in self.calls)

    @property
    def read_structured(self) -> int:
        """Tokens read if the client passed structuredContent (where present) instead."""
        return (
            self.instructions
            + self.listing
            + sum(r.read if r.structured is None else r.structured for r in self.calls)
        )

    @property
    def written(self) -> int:
        return sum(r.written for r in self.calls)

    @property
    def underlying(self) -> list[tuple[str, str]]:
        """The calls that reach a tool other than the discovery trio, arguments as JSON."""
        return [
            (
                r.target,
                json.dumps(
                    r.arguments if r.tool != "tool_invoke" else r.arguments["arguments"],
                    sort_keys=True,
                ),
            )
            for r in self.calls
            if r.target is not None
        ]

    @property
    def errors(self) -> list[str]:
        return [f"{r.tool}: {r.error}" for r in self.calls if r.error is not None]


_TOKEN_CACHE: dict[str, int] = {}


def tokens(text: str) -> int:
    """cl100k tokens, memoized (the same listing is read at the start of every task)."""
    if text not in _TOKEN_CACHE:
        _TOKEN_CACHE[text] = count_tokens(text, "cl100k_base")
    return _TOKEN_CACHE[text]


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def listing_json(tools: Sequence[types.Tool], drop: Sequence[str] = ()) -> str:
    """The listing as a client puts it in context: each wire entry, compact JSON."""
    dumped = [
        t.model_dump(mode="json", by_alias=True, exclude_none=True)
        for t in tools
        if t.name not in drop
    ]
    return compact(dumped)


def result_text(result: types.CallToolResult) -> str:
    """What a client passes the model: the text of the result's content blocks."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.EmbeddedResource) and isinstance(
            block.resource, types.TextResourceContents
        ):
            parts.append(block.resource.text)
    return "\n".join(parts)


def found_names(result: types.CallToolResult, wanted: Iterable[str]) -> set[str]:
    """Which of the `wanted` tools a search result offers: its structured results when it has
    them, else the names its text mentions (what the model reads)."""
    data = result.structured_content
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        offered = {str(r.get("name")) for r in data["results"] if isinstance(r, dict)}
        return offered & set(wanted)
    text = result_text(result)
    return {n for n in wanted if re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w.-])", text)}


class Agent:
    """Runs one task in one session, the way the server's instructions say to."""

    def __init__(self, client: Client, run: TaskRun, task: Task) -> None:
        self.client = client
        self.run = run
        #: The tools this task needs: a search that offers a later one spares that search.
        self.needs = {c.tool for c in task.calls}
        self.listed: set[str] = set()
        self.seen: set[str] = set()
        self.described: set[str] = set()

    async def start(self) -> None:
        self.run.instructions = tokens(self.client.instructions or "")
        listing = await self.client.list_tools()
        self.listed = {t.name for t in listing.tools}
        self.run.listed = sorted(self.listed)
        self.run.listing = tokens(listing_json(listing.tools))

    async def call(
        self, tool: str, arguments: dict[str, Any], target: str | None
    ) -> types.CallToolResult:
        result = await self.client.call_tool(tool, arguments)
        text = result_text(result)
        structured = (
            None
            if result.structured_content is None
            else tokens(compact(result.structured_content))
        )
        self.run.calls.append(
            CallRecord(
                tool=tool,
                arguments=arguments,
                target=target,
                read=tokens(text),
                structured=structured,
                written=tokens(compact({"name": tool, "arguments": arguments})),
                error=text[:300] if result.is_error else None,
            )
        )
        return result

    def knows(self, name: str) -> bool:
        return name in self.seen

    async def search(self, query: str, wanted: str) -> bool:
        result = await self.call("tool_search", {"query": query}, None)
        self.seen |= found_names(result, self.needs)
        return wanted in self.seen

    async def do(self, call: Call) -> bool:
        """Make one call of the task; False if the tool could not be found."""
        if call.tool in self.listed:
            await self.call(call.tool, call.arguments, call.tool)
            return True
        if not await self.find(call):
            return False
        if call.tool not in self.described:
            await self.call("tool_describe", {"name": call.tool}, None)
            self.described.add(call.tool)
        await self.call("tool_invoke", {"name": call.tool, "arguments": call.arguments}, call.tool)
        return True

    async def find(self, call: Call) -> bool:
        """Search for an unlisted tool (unless an earlier search showed it), retrying once with
        the second phrasing; records how it was found, or the failure."""
        if self.knows(call.tool):
            how = "known"
        elif await self.search(call.query, call.tool):
            how = "first"
        elif await self.search(call.retry, call.tool):
            how = "retry"
        else:
            self.run.lookups.append((call.tool, "missed"))
            self.run.failed = f"{call.tool} not found by {call.query!r} nor {call.retry!r}"
            return False
        self.run.lookups.append((call.tool, how))
        return True


async def run_task(app: App, task: Task, side: str, today: dt.date) -> TaskRun:
    """A fresh store seeded the same way, the task's setup, then one client session."""
    app.close_store()
    shutil.rmtree(app.home, ignore_errors=True)
    seed_store(app, today)
    for name, arguments in task.setup:
        result = await app.call_tool(name, arguments)
        if isinstance(result, types.CallToolResult) and result.is_error:
            raise RuntimeError(f"setup {name} of {task.name} failed: {result_text(result)}")
    run = TaskRun(task=task.name, side=side)
    async with Client(build_server(app), mode="legacy") as client:
        agent = Agent(client, run, task)
        await agent.start()
        for call in task.calls:
            if not await agent.do(call):
                break
    return run


# --- one size, both sides ------------------------------------------------------------------------


def make_repo(path: Path) -> Path:
    """The user's project: a git repository with one commit and one untracked file."""
    path.mkdir(parents=True, exist_ok=True)
    env_args = ["-c", "user.name=Bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / "README.md").write_text("# project\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(path), "add", "README.md"], check=True)
    subprocess.run(
        ["git", "-C", str(path), *env_args, "commit", "-q", "-m", "Start"],
        check=True,
        env={
            "GIT_AUTHOR_DATE": "2026-01-01T09:00:00",
            "GIT_COMMITTER_DATE": "2026-01-01T09:00:00",
            "PATH": "/usr/bin:/bin",
        },
    )
    (path / "notes.txt").write_text("draft\n", encoding="utf-8")
    return path


@dataclass
class Bench:
    """Everything one run shares: the working directory, today, the repository."""

    work: Path
    today: dt.date
    repo: Path
    seed: int = 0

    def app(self, name: str, env: dict[str, str], plugins: Sequence[object]) -> App:
        home = self.work / name
        return App.build(
            env={"PRIXFIXE_HOME": str(home), **env}, cwd=self.repo, extra_plugins=plugins
        )

    def scene(self) -> Scene:
        """The seeded records' ids, learnt on a scratch store seeded as every task's is."""
        shutil.rmtree(self.work / "scratch", ignore_errors=True)
        scratch = self.app("scratch", {}, [])
        try:
            ids = seed_store(scratch, self.today)
        finally:
            scratch.close_store()
        return Scene(today=self.today, repo=self.repo, ids=ids)


def tasks_for(scene: Scene, with_catalogue: bool, only: Sequence[str] | None = None) -> list[Task]:
    tasks = own_tasks(scene) + (catalogue_tasks(scene) if with_catalogue else [])
    if only:
        tasks = [t for t in tasks if t.name in only]
    return tasks


def wanted_tools(tasks: Sequence[Task], own: set[str]) -> list[str]:
    return list(dict.fromkeys(c.tool for t in tasks for c in t.calls if c.tool not in own))


@dataclass
class SizeRun:
    """Both sides' runs of every task at one registry size."""

    size: int
    registered: int
    tasks: list[Task]
    runs: list[dict[str, TaskRun]]
    #: The full listing's tokens without the discovery trio (a server without discovery).
    full_listing_no_trio: int


async def run_size(bench: Bench, size: int, only: Sequence[str] | None = None) -> SizeRun:
    """Every task on both sides at one registry size, interleaved task by task."""
    scene = bench.scene()
    own = {e.name for e in bench.app("base", {}, []).registry}
    extra = size - len(own)
    if extra < 0:
        raise SystemExit(f"prixfixe registers {len(own)} tools itself; size {size} is smaller")
    tasks = tasks_for(scene, with_catalogue=extra > 0, only=only)
    plugins = (
        [catalogue_plugin(catalogue(extra, wanted_tools(tasks, own), bench.seed))] if extra else []
    )
    prixfixe = bench.app(f"prixfixe-{size}", {}, plugins)
    facets = ",".join(sorted(prixfixe.registry.facets()))
    full = bench.app(f"full-{size}", {"PRIXFIXE_EXPOSE": facets}, plugins)
    runs: list[dict[str, TaskRun]] = []
    for task in tasks:
        runs.append(
            {
                "prixfixe": await run_task(prixfixe, task, "prixfixe", bench.today),
                "full": await run_task(full, task, "full", bench.today),
            }
        )
    no_trio = tokens(listing_json(full.list_tools_result().tools, drop=TRIO))
    return SizeRun(size, len(list(prixfixe.registry)), tasks, runs, no_trio)


async def measure_size(
    bench: Bench, size: int, only: Sequence[str] | None = None
) -> dict[str, Any]:
    return summarize(await run_size(bench, size, only))


def summarize(sr: SizeRun) -> dict[str, Any]:
    size, registered, tasks, runs = sr.size, sr.registered, sr.tasks, sr.runs
    full_listing_no_trio = sr.full_listing_no_trio
    px = [r["prixfixe"] for r in runs]
    fl = [r["full"] for r in runs]
    lookups = [how for run in px for _, how in run.lookups]
    completed = [i for i, run in enumerate(px) if run.failed is None]

    def total(rs: Sequence[TaskRun], attr: str, idx: Sequence[int] | None = None) -> int:
        chosen = rs if idx is None else [rs[i] for i in idx]
        return sum(int(getattr(r, attr)) for r in chosen)

    # What the prixfixe side paid, by where the tokens came from.
    breakdown: Counter[str] = Counter()
    for run in px:
        breakdown["instructions"] += run.instructions
        breakdown["tools/list"] += run.listing
        for call in run.calls:
            key = (
                call.tool
                if call.tool in ("tool_search", "tool_describe")
                else f"result: {call.target}"
            )
            breakdown[key] += call.read
    full_listing = fl[0].listing if fl else 0
    no_trio_total = total(fl, "read") - len(fl) * (full_listing - full_listing_no_trio)
    return {
        "size": size,
        "registered": registered,
        "tasks": len(tasks),
        "calls_needed": sum(len(t.calls) for t in tasks),
        "lookups": len(lookups),
        "found_first_try": lookups.count("first"),
        "found_on_retry": lookups.count("retry"),
        "found_earlier_in_task": lookups.count("known"),
        "failures": len(tasks) - len(completed),
        "failed_tasks": {run.task: run.failed for run in px if run.failed},
        "errors": {
            f"{run.side}:{run.task}": run.errors for r in runs for run in r.values() if run.errors
        },
        "prixfixe": {
            "listed": len(px[0].listed) if px else 0,
            "listing": px[0].listing if px else 0,
            "instructions": px[0].instructions if px else 0,
            "read": total(px, "read"),
            "read_structured": total(px, "read_structured"),
            "written": total(px, "written"),
            "calls": sum(len(r.calls) for r in px),
            "read_completed": total(px, "read", completed),
        },
        "full": {
            "listed": len(fl[0].listed) if fl else 0,
            "listing": full_listing,
            "listing_without_trio": full_listing_no_trio,
            "instructions": fl[0].instructions if fl else 0,
            "read": total(fl, "read"),
            "read_structured": total(fl, "read_structured"),
            "written": total(fl, "written"),
            "calls": sum(len(r.calls) for r in fl),
            "read_completed": total(fl, "read", completed),
            "read_without_trio": no_trio_total,
        },
        "breakdown": dict(breakdown.most_common()),
        "per_task": [
            {
                "task": t.name,
                "prompt": t.prompt,
                "prixfixe": _task_json(r["prixfixe"]),
                "full": _task_json(r["full"]),
            }
            for t, r in zip(tasks, runs, strict=True)
        ],
    }


def _task_json(run: TaskRun) -> dict[str, Any]:
    return {
        "read": run.read,
        "read_structured": run.read_structured,
        "written": run.written,
        "listing": run.listing,
        "instructions": run.instructions,
        "lookups": run.lookups,
        "failed": run.failed,
        "calls": [
            {
                "tool": c.tool,
                "target": c.target,
                "read": c.read,
                "structured": c.structured,
                "written": c.written,
                "error": c.error,
            }
            for c in run.calls
        ],
    }


# --- reporting ------------------------------------------------------------------------------


def ratio(a: int, b: int) -> float:
    return a / b if b else float("nan")


TARGETS = {19: 1.0, 100: 0.2, 1000: 0.05}


def render(rows: Sequence[dict[str, Any]]) -> tuple[str, str, list[str]]:
    headers = [
        "registered tools",
        "tasks",
        "listed (prixfixe / full)",
        "unlisted calls: found first try / on retry / missed",
        "failed tasks",
        "tokens read: prixfixe",
        "tokens read: full listing",
        "ratio",
        "target",
        "ratio, completed tasks only",
        "ratio vs full listing without the trio",
        "ratio if clients passed structuredContent",
        "tokens written (prixfixe / full)",
    ]
    table_rows: list[list[Any]] = []
    verdicts: list[str] = []
    for r in rows:
        px, fl = r["prixfixe"], r["full"]
        rat = ratio(px["read"], fl["read"])
        target = TARGETS.get(r["size"])
        missed = (
            r["lookups"] - r["found_first_try"] - r["found_on_retry"] - r["found_earlier_in_task"]
        )
        table_rows.append(
            [
                f"{r['registered']:,}",
                r["tasks"],
                f"{px['listed']} / {fl['listed']:,}",
                f"{r['found_first_try']} / {r['found_on_retry']} / {missed}",
                r["failures"],
                f"{px['read']:,}",
                f"{fl['read']:,}",
                f"{rat:.3f}x",
                "-" if target is None else f"<= {target}x",
                f"{ratio(px['read_completed'], fl['read_completed']):.3f}x",
                f"{ratio(px['read'], fl['read_without_trio']):.3f}x",
                f"{ratio(px['read_structured'], fl['read_structured']):.3f}x",
                f"{px['written']:,} / {fl['written']:,}",
            ]
        )
        if target is not None:
            verdicts.append(
                f"{r['registered']:,} tools: {rat:.3f}x "
                f"({'meets' if rat <= target else 'misses'} <= {target}x)"
            )
    table = markdown_table(headers, table_rows)
    cost_headers = ["registered tools", "where prixfixe's tokens went", "tokens", "share"]
    cost_rows: list[list[Any]] = []
    for r in rows:
        read = r["prixfixe"]["read"]
        for i, (what, n) in enumerate(list(r["breakdown"].items())[:6]):
            cost_rows.append(
                [f"{r['registered']:,}" if i == 0 else "", what, f"{n:,}", f"{n / read:.0%}"]
            )
    return table, markdown_table(cost_headers, cost_rows), verdicts


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--quick", action="store_true", help="only 19 and 100 tools")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--task", action="append", help="run only this task (repeatable)")
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)
    sizes: list[int] = list(QUICK_SIZES) if args.quick else args.sizes

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bench = Bench(
            work=work, today=dt.date.today(), repo=make_repo(work / "project"), seed=args.seed
        )
        for size in sizes:
            rows.append(anyio.run(measure_size, bench, size, args.task))
    table, costs, verdicts = render(rows)
    print(table)
    print()
    print(costs)
    for r in rows:
        for name, why in r["failed_tasks"].items():
            print(f"failed at {r['registered']}: {name}: {why}")
        for name, errs in r["errors"].items():
            print(f"error results at {r['registered']}: {name}: {errs}")
    print("; ".join(verdicts))

    results: dict[str, Any] = {"seed": args.seed, "sizes": sizes, "rows": rows}
    if not args.no_write:
        write_json(NAME, results)
        write_section(NAME, render_doc(rows, table, costs, verdicts))
    return results


def reading(rows: Sequence[dict[str, Any]]) -> str:
    """A short, honest reading of the figures, in sentences built from them."""
    out: list[str] = []
    for r in rows:
        px, fl = r["prixfixe"], r["full"]
        share = px["listing"] * r["tasks"] / px["read"] if px["read"] else 0.0
        discovery = sum(n for k, n in r["breakdown"].items() if k in TRIO)
        missed = ", ".join(
            f"`{task}` ({why.split(' ', 1)[0]})" for task, why in r["failed_tasks"].items()
        )
        out.append(
            f"- **{r['registered']:,} tools**: the listing prixfixe shows ({px['listed']} tools, "
            f"{px['listing']:,} tokens) is read at the start of each of the {r['tasks']} tasks: "
            f"{share:.0%} of all it reads; the full listing is {fl['listing']:,} tokens a task. "
            f"Finding and learning unlisted tools (search + describe) cost {discovery:,} tokens "
            f"in all over {r['lookups']} lookups."
            + (f" Failed: {missed}." if missed else " No task failed.")
        )
    return "\n".join(out)


def render_doc(
    rows: Sequence[dict[str, Any]], table: str, costs: str, verdicts: Sequence[str]
) -> str:
    counts = ", ".join(f"{r['tasks']} at {r['registered']:,}" for r in rows)
    return f"""## Agent tasks: tokens the model reads, discovery against a full listing

Scripted tasks an agent really does
(tasks at each size of registry: {counts}): reminders, deadlines and countdowns in the store,
the morning routine as markdown and as data, kept reports, step types and their data, and,
where more tools are registered, finding and calling catalogue tools by a user's phrasing.
Each task is a fresh session through a real in-memory
`mcp.Client`: the model reads the server's instructions and `tools/list` (compact wire JSON),
then each call's result as a client passes it on (the text of its content blocks). The agent
reads the listing and calls a listed tool directly; any other it finds with `tool_search` (a
user's phrasing, one retry with a second phrasing, else the task fails), `tool_describe`s once
per task and calls with `tool_invoke`. **Full listing** is the same server with every facet
listed: every tool is called directly, no search. Both sides make the same underlying calls on
a store seeded the same way, fresh per task. Catalogue tools are real MCP tools from
LiveMCPBench (name, description, input schema), then the synthetic catalogue of
`bench_tools_list.py`; their handlers return a small fixed result, a stand-in for the remote
services they front, so results are cheap on both sides and the listing dominates. Tokens are
cl100k.

{table}

Result: {"; ".join(verdicts)}.

{reading(rows)}

How to read it: a failed task stops where the search missed, so it costs less than the work it
did not do; "completed tasks only" compares, on both sides, the tasks the prixfixe agent
finished. "Without the trio" takes the discovery tools out of the full listing, as a server
without discovery would list. "Tokens written" counts the model's own call arguments (more on
the prixfixe side: searches, describes and the `tool_invoke` wrapper). A full listing of 1,000
tools (about 150,000 tokens a session) would not fit many models' context at all; it is the
naive cost, not what a careful client would do.

Where the prixfixe side's tokens went (the largest items):

{costs}

Per-task figures: `benchmarks/results/agent-tokens.json`.
Script: `benchmarks/bench_agent_tokens.py`."""


if __name__ == "__main__":
    main()
