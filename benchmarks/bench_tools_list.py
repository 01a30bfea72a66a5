"""Default `tools/list` size as the registry grows, beside a server that lists every tool.

For 10, 100 and 1,000 registered synthetic tools (seeded, varied names and descriptions,
pydantic input models with 2-5 parameters, spread over non-core facets), the listing is fetched
through a real in-memory `mcp.Client` (`list_tools()`), each returned tool serialized as it
travels (`model_dump(mode="json", by_alias=True, exclude_none=True)`, compact JSON), and
measured in cl100k_base and o200k_base tokens and UTF-8 bytes.

The baseline is the naive listing: the same synthetic tools' wire entries
(`RegisteredTool.wire`, exactly what prixfixe would send for them) served by a bare low-level
SDK server whose `tools/list` returns all of them, fetched through the same client. That is what
a server without progressive disclosure puts in every session's context. It does not include
prixfixe's discovery trio, which such a server would not have.

Run from the repository root as `python benchmarks/bench_tools_list.py` or
`python -m benchmarks.bench_tools_list` (`--quick` for 10 and 100 tools only).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

if __package__ in (None, ""):
    # Run as a file: make `benchmarks` and `prixfixe` importable from the checkout.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

import anyio
import mcp_types as types
from mcp import Client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from pydantic import BaseModel, ConfigDict, Field, create_model

from benchmarks._common import markdown_table, write_json, write_section
from prixfixe import Tool, ToolContext, hookimpl
from prixfixe.app import App
from prixfixe.mcp.server import build_server
from prixfixe.tokens import count_tokens

NAME = "tools-list"
DEFAULT_SIZES = (10, 100, 1000, 10000)
QUICK_SIZES = (10, 100)

#: Find + learn: (what a user asks, the tool an agent should end up calling). The first five are
#: prixfixe's own unlisted tools; the last three are synthetic catalogue tools (1,000 registered).
FIND_LEARN: tuple[tuple[str, str], ...] = (
    ("what fields does a deadline have", "store_kinds"),
    ("show the last morning report again", "report_get"),
    ("which step types exist", "steps_list"),
    ("run git status and reminders together as one routine", "routine_eval"),
    ("which routines are configured", "routine_list"),
)
CATALOGUE_FIND_LEARN: tuple[tuple[str, str], ...] = (
    ("permanently delete an invoice", "billing_delete_invoice"),
    ("export the warehouse stock levels as csv", "inventory_export_stock_level"),
    ("assign an incident to the on-call team", "monitoring_assign_incident"),
)

# --- a seeded catalogue of realistic synthetic tools ------------------------------------------

#: Facet (a product area) -> the things its tools act on. None of these is `core`.
DOMAINS: dict[str, tuple[str, ...]] = {
    "calendar": ("event", "invite", "room", "reminder"),
    "crm": ("contact", "deal", "account", "lead"),
    "billing": ("invoice", "subscription", "refund", "coupon"),
    "git": ("branch", "commit", "pull_request", "tag"),
    "tickets": ("issue", "comment", "sprint", "label"),
    "files": ("file", "folder", "share_link", "version"),
    "mail": ("message", "draft", "thread", "filter"),
    "chat": ("channel", "post", "reaction", "user_group"),
    "analytics": ("report", "dashboard", "metric", "segment"),
    "inventory": ("item", "warehouse", "stock_level", "supplier"),
    "hr": ("employee", "leave_request", "review", "position"),
    "dns": ("record", "zone", "certificate", "redirect"),
    "cloud": ("instance", "volume", "snapshot", "load_balancer"),
    "database": ("table", "index", "backup", "migration"),
    "docs": ("page", "template", "space", "attachment"),
    "payments": ("charge", "payout", "dispute", "customer"),
    "shipping": ("shipment", "label", "pickup", "rate"),
    "monitoring": ("alert", "incident", "check", "on_call_shift"),
    "marketing": ("campaign", "audience", "newsletter", "landing_page"),
    "support": ("conversation", "macro", "article", "satisfaction_survey"),
}

#: Verb -> (does it change state, description opening). `{obj}` is the object in words.
VERBS: dict[str, tuple[bool, str]] = {
    "list": (False, "List {obj}s, newest first, with optional filters."),
    "get": (False, "Fetch one {obj} by its identifier, with every field."),
    "search": (False, "Search {obj}s by free text across titles and bodies."),
    "create": (True, "Create a new {obj}."),
    "update": (True, "Change fields of an existing {obj}; fields left out stay as they are."),
    "delete": (True, "Permanently delete a {obj}."),
    "archive": (True, "Archive a {obj} so it no longer shows in default views."),
    "export": (False, "Export {obj}s as CSV or JSON for use elsewhere."),
    "assign": (True, "Assign a {obj} to a person or team."),
    "summarize": (False, "Summarize recent activity on a {obj} in a few lines."),
}

#: Said of listing verbs only, half the time.
PAGINATED = "Results are paginated; pass the returned cursor to get the next page."
#: Second sentences, mixed in so descriptions are not one template.
DETAILS: tuple[str, ...] = (
    "Requires the {domain} integration to be connected for this workspace.",
    "Times are ISO 8601 in UTC unless a time zone is given.",
    "Use this when the user names a specific {obj} rather than asking in general.",
    "Returns the {obj} as it is after the change, including server-set fields.",
    "Rate limited to 60 calls a minute per workspace.",
    "Soft limits apply: very large {obj}s are truncated with a note saying so.",
    "Mirrors what the {domain} web app does, with the same permissions.",
)

#: Parameter pool: name -> (annotation, default or ... for required, description).
ParamSpec = tuple[Any, Any, str]
PARAMS: dict[str, ParamSpec] = {
    "query": (str, ..., "Free-text search terms."),
    "limit": (int, 20, "Most results to return (1-100)."),
    "cursor": (str | None, None, "Opaque cursor from a previous page."),
    "status": (Literal["open", "pending", "closed"] | None, None, "Only items in this status."),
    "tags": (list[str], [], "Labels to attach or filter by."),
    "since": (str | None, None, "Only items changed after this ISO 8601 time."),
    "dry_run": (bool, False, "Report what would change without changing anything."),
    "note": (str | None, None, "A short note recorded with the change."),
    "priority": (Literal["low", "normal", "high", "urgent"], "normal", "How urgent this is."),
    "owner_email": (str | None, None, "Email of the person responsible."),
    "amount": (float | None, None, "Amount in the currency's major unit, e.g. 12.50."),
    "currency": (Literal["EUR", "USD", "GBP", "JPY"], "EUR", "ISO 4217 currency code."),
    "format": (Literal["csv", "json"], "json", "Output format."),
    "include_archived": (bool, False, "Also include archived items."),
    "title": (str, ..., "A short human-readable title."),
    "body": (str | None, None, "Longer text, markdown allowed."),
    "due_date": (str | None, None, "Due date as YYYY-MM-DD."),
    "notify": (bool, True, "Send the usual notifications to watchers."),
    "team": (str | None, None, "Team name, when assigning to a team rather than a person."),
}

#: Verb -> (takes the object's id, parameters that make sense for it, in display order).
VERB_PARAMS: dict[str, tuple[bool, tuple[str, ...]]] = {
    "list": (False, ("status", "since", "tags", "include_archived", "limit", "cursor")),
    "get": (True, ("include_archived", "format")),
    "search": (False, ("query", "status", "since", "limit", "cursor")),
    "create": (
        False,
        ("title", "body", "tags", "priority", "due_date", "owner_email", "amount", "currency"),
    ),
    "update": (True, ("title", "body", "status", "priority", "tags", "due_date", "note")),
    "delete": (True, ("dry_run", "note")),
    "archive": (True, ("note", "notify")),
    "export": (False, ("format", "since", "status", "include_archived")),
    "assign": (True, ("owner_email", "team", "note", "notify")),
    "summarize": (True, ("since", "limit")),
}


@dataclass(frozen=True)
class SyntheticTool:
    name: str
    facet: str
    title: str
    description: str
    mutates: bool
    #: (name, annotation, default or ..., description), in schema order.
    params: tuple[tuple[str, Any, Any, str], ...]


def synthetic_catalogue(count: int, seed: int = 0) -> list[SyntheticTool]:
    """`count` distinct tools, in a seeded order, so smaller sets are prefixes of larger ones.

    Names are `{facet}_{verb}_{object}`; past the 800 combinations a `_v2`, `_v3` … suffix
    keeps them distinct (a large server really does carry near-duplicate variants).
    """
    rng = random.Random(seed)
    combos = [(d, v, o) for d, objs in DOMAINS.items() for v in VERBS for o in objs]
    rng.shuffle(combos)
    out: list[SyntheticTool] = []
    for i in range(count):
        domain, verb, obj = combos[i % len(combos)]
        suffix = "" if i < len(combos) else f"_v{i // len(combos) + 1}"
        words = obj.replace("_", " ")
        mutates, opening = VERBS[verb]
        plural = verb in ("list", "search", "export")
        sentences = [opening.format(obj=words)]
        if plural and rng.random() < 0.5:
            sentences.append(PAGINATED)
        for detail in rng.sample(DETAILS, rng.randint(0, 2)):
            sentences.append(detail.format(obj=words, domain=domain))
        takes_id, pool = VERB_PARAMS[verb]
        params: list[tuple[str, Any, Any, str]] = []
        if takes_id:
            params.append((f"{obj}_id", str, ..., f"Identifier of the {words}."))
        # 2-5 parameters in all; a sample of the verb's pool, kept in its natural order.
        wanted = min(rng.randint(2, 5) - len(params), len(pool))
        chosen = set(rng.sample(pool, wanted))
        params += [(p, *PARAMS[p]) for p in pool if p in chosen]
        out.append(
            SyntheticTool(
                name=f"{domain}_{verb}_{obj}{suffix}",
                facet=domain,
                title=f"{verb.capitalize()} {words}{'s' if plural else ''}",
                description=" ".join(sentences),
                mutates=mutates,
                params=tuple(params),
            )
        )
    return out


def input_model(spec: SyntheticTool) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for name, annotation, default, description in spec.params:
        if name == "limit":
            fields[name] = (annotation, Field(default, ge=1, le=100, description=description))
        elif default is ...:
            fields[name] = (annotation, Field(description=description))
        else:
            fields[name] = (annotation, Field(default=default, description=description))
    model_name = "".join(part.capitalize() for part in spec.name.split("_")) + "Input"
    return create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)


def _unused_handler(ctx: ToolContext, args: BaseModel) -> str:
    # Listing never calls a handler; this one exists only because every Tool must have one.
    return "ok"


def catalogue_plugin(specs: Sequence[SyntheticTool]) -> object:
    """A plugin registering `specs` as prixfixe tools."""
    tools = [
        Tool(
            name=s.name,
            title=s.title,
            description=s.description,
            input_model=input_model(s),
            handler=_unused_handler,
            mutates=s.mutates,
            facet=s.facet,
        )
        for s in specs
    ]

    class Catalogue:
        __name__ = f"bench_catalogue_{len(tools)}"

        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            for tool in tools:
                register(tool)

    return Catalogue()


# --- measuring ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Listing:
    tools: int
    cl100k: int
    o200k: int
    bytes: int


def naive_server(wire: list[types.Tool]) -> Server[Any]:
    """A server without progressive disclosure: `tools/list` returns every tool it has."""
    listing = types.ListToolsResult(tools=wire)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    return Server("naive", version="0", on_list_tools=list_tools)


async def fetch_listing(server: Server[Any]) -> Listing:
    """`tools/list` through a real client, measured as the JSON that reaches the model."""
    async with Client(server, mode="legacy") as client:
        result = await client.list_tools()
    dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools]
    text = json.dumps(dumped, separators=(",", ":"), ensure_ascii=False)
    return Listing(
        tools=len(result.tools),
        cl100k=_tokens(dumped, "cl100k_base"),
        o200k=_tokens(dumped, "o200k_base"),
        bytes=len(text.encode("utf-8")),
    )


#: Tools a token count takes at once: the offline tokenizer refuses a 10,000-tool listing
#: (millions of characters) in one piece, so a long listing is counted in slices of whole tool
#: entries; a slice boundary can move a count by a token or two, 0.01% of such a listing.
_SLICE = 200


def _tokens(dumped: list[dict[str, Any]], encoding: Literal["cl100k_base", "o200k_base"]) -> int:
    return sum(
        count_tokens(
            json.dumps(dumped[i : i + _SLICE], separators=(",", ":"), ensure_ascii=False),
            encoding,
        )
        for i in range(0, max(len(dumped), 1), _SLICE)
    )


async def measure(size: int, seed: int, cwd: Path) -> tuple[Listing, Listing]:
    specs = synthetic_catalogue(size, seed)
    # env={}: the default exposure (core only), whatever the caller's PRIXFIXE_* variables say.
    app = App.build(env={}, cwd=cwd, extra_plugins=[catalogue_plugin(specs)])
    prixfixe = await fetch_listing(build_server(app))
    names = {s.name for s in specs}
    naive = await fetch_listing(naive_server([e.wire for e in app.registry if e.name in names]))
    return prixfixe, naive


def _text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def find_and_learn(app: App, cases: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """For each (query, tool): the tokens the model reads to find the tool (`tool_search`, as
    text) and learn it (`tool_describe`, as text), its rank, and what the same tool's entry
    costs when it is listed instead (paid on every session, used or not)."""
    rows: list[dict[str, Any]] = []
    async with Client(build_server(app), mode="legacy") as client:
        for query, tool in cases:
            found = await client.call_tool("tool_search", {"query": query})
            described = await client.call_tool("tool_describe", {"name": tool})
            names = [
                line[2:].split(":", 1)[0].split(" (", 1)[0]
                for line in _text(found).splitlines()[1:]
            ]
            entry = app.registry.get(tool).wire.model_dump(
                mode="json", by_alias=True, exclude_none=True
            )
            listed = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
            rows.append(
                {
                    "query": query,
                    "tool": tool,
                    "rank": names.index(tool) + 1 if tool in names else None,
                    "search": count_tokens(_text(found)),
                    "describe": count_tokens(_text(described)),
                    "listed_entry": count_tokens(listed),
                    "wire": count_tokens(found.model_dump_json(by_alias=True, exclude_none=True))
                    + count_tokens(described.model_dump_json(by_alias=True, exclude_none=True)),
                }
            )
    return rows


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES), help="registry sizes"
    )
    parser.add_argument("--quick", action="store_true", help="only 10 and 100 tools")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)
    sizes: list[int] = list(QUICK_SIZES) if args.quick else args.sizes

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            prixfixe, naive = anyio.run(measure, size, args.seed, Path(tmp))
            rows.append({"registered": size, "prixfixe": vars(prixfixe), "naive": vars(naive)})

    flat = len({json.dumps(r["prixfixe"], sort_keys=True) for r in rows}) == 1

    with tempfile.TemporaryDirectory() as tmp:
        own = App.build(env={}, cwd=Path(tmp))
        learn_rows = anyio.run(find_and_learn, own, FIND_LEARN)
        crowded = App.build(
            env={}, cwd=Path(tmp), extra_plugins=[catalogue_plugin(synthetic_catalogue(1000))]
        )
        learn_rows += anyio.run(find_and_learn, crowded, CATALOGUE_FIND_LEARN)
    learn_table = markdown_table(
        [
            "query",
            "tool",
            "rank",
            "search (text)",
            "describe (text)",
            "find + learn",
            "on the wire (both results)",
            "its listing entry, if listed",
        ],
        [
            [
                f"`{r['query']}`",
                f"`{r['tool']}`",
                r["rank"] or "missed",
                r["search"],
                r["describe"],
                r["search"] + r["describe"],
                r["wire"],
                r["listed_entry"],
            ]
            for r in learn_rows
        ],
    )
    worst = max(r["search"] + r["describe"] for r in learn_rows)
    print(learn_table)
    headers = [
        "registered tools",
        "prixfixe: listed",
        "prixfixe: cl100k",
        "prixfixe: o200k",
        "prixfixe: bytes",
        "naive: listed",
        "naive: cl100k",
        "naive: o200k",
        "naive: bytes",
        "naive / prixfixe (cl100k)",
    ]
    table_rows = [
        [
            f"{r['registered']:,}",
            r["prixfixe"]["tools"],
            f"{r['prixfixe']['cl100k']:,}",
            f"{r['prixfixe']['o200k']:,}",
            f"{r['prixfixe']['bytes']:,}",
            f"{r['naive']['tools']:,}",
            f"{r['naive']['cl100k']:,}",
            f"{r['naive']['o200k']:,}",
            f"{r['naive']['bytes']:,}",
            f"{r['naive']['cl100k'] / r['prixfixe']['cl100k']:.1f}x",
        ]
        for r in rows
    ]
    table = markdown_table(headers, table_rows)
    verdict = (
        "flat: the default listing is byte-identical at every size"
        if flat
        else "NOT flat: the default listing changed with the registry size"
    )
    print(table)
    print(verdict)

    results: dict[str, Any] = {
        "seed": args.seed,
        "sizes": sizes,
        "flat": flat,
        "rows": rows,
        "find_learn": learn_rows,
    }
    if not args.no_write:
        markdown = f"""## `tools/list` size as the registry grows

What a client puts into the model's context from the default `tools/list`, with 10 to 1,000
synthetic tools registered in non-core facets (seeded: varied names, one- to three-sentence
descriptions, pydantic input models with 2-5 parameters). Fetched through a real in-memory
`mcp.Client`; each tool serialized as compact wire JSON. **Naive** is the same tools' wire
entries served by a bare SDK server that lists everything (no progressive disclosure, no
discovery trio).

{table}

Result: {verdict}.

### Find + learn one unlisted tool

What the model reads to find a tool it was not shown (`tool_search` with the default five
results, as text) and to learn its arguments (`tool_describe`, as text): the first five rows at
zero config, the last three among 1,000 synthetic catalogue tools. Beside it, the wire size of
both results (JSON-RPC result, what a client receives) and what the same tool's entry costs when
it is listed instead — a cost paid on every session, used or not. Target: ≤ 300 tokens.

{learn_table}

Result: the most any find + learn cost here is {worst} tokens. Script:
`benchmarks/bench_tools_list.py`."""
        write_json(NAME, results)
        write_section(NAME, markdown)
    return results


if __name__ == "__main__":
    main()
