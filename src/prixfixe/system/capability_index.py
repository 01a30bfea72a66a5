"""The capability index: what this server can do, generated from the registry in three sizes.

- `summary` (markdown): a compact map from verbs and topics to the tools, step types and store
  kinds that do them, plus the facets and the mounted MCP servers (one line, capped). Its
  size is bounded (capped terms, capped names per term, capped servers), so it grows far
  slower than the registry: the rest is one `tool_search` away.
- `full` (JSON): every tool, step type, store kind, resource template, prompt and mounted
  server, with descriptions, schemas and relationships.
- `stats` (JSON): bytes, words, lines and real token counts (cl100k_base, o200k_base) of the
  other two.

Nothing is hand-maintained: every entry comes from a *source*, a function from the index's
`Scope` (the registry, the facet policy, the relationships plugins declare) to index entries.
The index is cached per (registry version, facet policy) and rebuilt only when one of them
changes.
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from prixfixe.config import IndexVariant

if TYPE_CHECKING:
    from prixfixe.core.facets import Exposure
    from prixfixe.core.registry import Registry

INDEX_URIS: dict[IndexVariant, str] = {
    "summary": "prixfixe://capability-index/summary",
    "full": "prixfixe://capability-index/full",
    "stats": "prixfixe://capability-index/stats",
}
MIME_TYPES: dict[IndexVariant, str] = {
    "summary": "text/markdown",
    "full": "application/json",
    "stats": "application/json",
}
FORMAT_VERSION = 1


def unadvertised(advertise: Iterable[str]) -> frozenset[str]:
    """The index URIs `resources/list` leaves out (`[resources.capability_index] advertise`);
    they stay readable."""
    shown = set(advertise)
    return frozenset(uri for variant, uri in INDEX_URIS.items() if variant not in shown)


#: Caps that keep the summary's size flat as the registry grows.
MAX_TERMS = 40  # verbs, and topics, each
MAX_NAMES_PER_TERM = 4
MAX_FACETS = 30
MAX_KINDS = 30

EntryKind = Literal["tool", "step_type", "store_kind", "resource_template", "prompt", "server"]
#: Mounted servers, and tool names per server, the summary shows (the rest: full, search).
MAX_SERVERS = 20
MAX_SERVER_TOOLS = 3

#: Words that name an action. A term in this set is a verb in the summary; any other term is
#: a topic. Fixed and small on purpose: the summary must read the same on every run.
_VERB_WORDS = """
    add archive ask book call cancel change check clear close compare complete compute convert
    count create delete describe discover dismiss download edit estimate explain export fetch
    filter find finish forecast generate get import inspect invoke list load lookup mark
    measure merge move notify open plan post publish put query read record refresh remember
    remind remove rename render replace report reschedule reset run save schedule search send
    set share show snooze sort start stop summarize sync tag track translate update upload
    validate view watch write
"""
_STOP_WORDS = """
    the and for with from into that this what which when your you are its can any all one
    tool tools prixfixe via per
"""
VERBS = frozenset(_VERB_WORDS.split())
_STOPWORDS = frozenset(_STOP_WORDS.split())
_WORD = re.compile(r"[a-z][a-z]+")


@dataclass(frozen=True)
class Entry:
    """One capability in the index: what it is, a one-line summary, the terms it answers
    to, and its full description (JSON-ready)."""

    kind: EntryKind
    name: str
    summary: str
    terms: tuple[str, ...]
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scope:
    """What the index is built from: the registry, the facet policy (which tools it shows
    and which are listed), and for a kind of entry the tools that serve every entry of that
    kind (`served_by` of store kinds, `run_by` of step types), as the plugins that define
    those tools declare them."""

    registry: Registry
    exposure: Exposure
    serves: Mapping[EntryKind, tuple[str, ...]] = field(default_factory=dict)
    #: The MCP servers mounted (`[servers]`, enabled), in configuration order.
    servers: tuple[str, ...] = ()
    #: What the person wrote of a server (`[servers.NAME] description`), by name.
    described: Mapping[str, str] = field(default_factory=dict)

    def serving(self, kind: EntryKind) -> list[str]:
        """The registered tools that serve every entry of `kind`."""
        return [name for name in self.serves.get(kind, ()) if name in self.registry]


Source = Callable[[Scope], Iterable[Entry]]


def _terms(*texts: str) -> tuple[str, ...]:
    words: dict[str, None] = {}
    for text in texts:
        for w in _WORD.findall(text.lower().replace("_", " ").replace(".", " ")):
            if len(w) >= 3 and w not in _STOPWORDS:
                words[w] = None
    return tuple(words)


def tool_entries(scope: Scope) -> Iterable[Entry]:
    for e in scope.registry:
        t = e.tool
        if not scope.exposure.reachable(t.facet):
            continue
        yield Entry(
            kind="tool",
            name=t.name,
            summary=t.summary,
            terms=_terms(t.name, t.title, " ".join(t.keywords)),
            detail={
                "name": t.name,
                "title": t.title,
                "description": t.description,
                "facet": t.facet,
                "listed": scope.exposure.listed(t.facet),
                "mutates": t.mutates,
                "plugin": t.owner,
                "annotations": e.annotations.model_dump(
                    mode="json", by_alias=True, exclude_none=True
                ),
                "input_schema": e.input_schema,
                "output_schema": e.output_schema,
                "keywords": list(t.keywords),
                "examples": list(t.examples),
                "usage": t.usage,
            },
        )


def store_kind_entries(scope: Scope) -> Iterable[Entry]:
    from prixfixe.schema import model_schema
    from prixfixe.store.uris import RECORD_TEMPLATE

    served_by = scope.serving("store_kind")
    for k in scope.registry.kinds.values():
        yield Entry(
            kind="store_kind",
            name=k.name,
            summary=k.description,
            terms=_terms(k.name),
            detail={
                "name": k.name,
                "description": k.description,
                "version": k.version,
                "plugin": k.owner,
                "fields": list(k.fields),
                "indexed": list(k.indexed),
                "schema": model_schema(k.model),
                "served_by": served_by,
                "resource": RECORD_TEMPLATE,
            },
        )


def template_entries(scope: Scope) -> Iterable[Entry]:
    for entry in scope.registry.templates.values():
        t = entry.template
        yield Entry(
            kind="resource_template",
            name=t.uri_template,
            summary=t.description or t.title or t.name,
            terms=(),
            detail={
                "uri_template": t.uri_template,
                "name": t.name,
                "title": t.title,
                "description": t.description,
                "mime_type": t.mime_type,
                "variables": entry.parsed.variable_names,
                "completes": sorted(t.completions),
                "plugin": t.owner,
            },
        )


def step_type_entries(scope: Scope) -> Iterable[Entry]:
    from prixfixe.routines.contract import data_schema
    from prixfixe.schema import model_schema

    run_by = scope.serving("step_type")
    for t in scope.registry.step_types.values():
        yield Entry(
            kind="step_type",
            name=t.name,
            summary=t.summary,
            terms=_terms(t.name, t.summary),
            detail={
                "name": t.name,
                "description": t.description,
                "version": t.version,
                "plugin": t.owner,
                "programs": list(t.programs),
                "params_schema": model_schema(t.params_model),
                "data_schema": data_schema(t),
                "run_by": run_by,
            },
        )


def prompt_entries(scope: Scope) -> Iterable[Entry]:
    """One entry per registered prompt: its arguments, and which of them complete."""
    for p in scope.registry.prompts.values():
        yield Entry(
            kind="prompt",
            name=p.name,
            summary=p.description or p.title or p.name,
            terms=_terms(p.name, p.title or ""),
            detail={
                "name": p.name,
                "title": p.title,
                "description": p.description,
                "arguments": [
                    {
                        "name": a.name,
                        "description": a.description,
                        "required": a.required,
                        "completes": a.completer is not None,
                    }
                    for a in p.arguments
                ],
                "plugin": p.owner,
                "how_to_use": "prompts/get",
            },
        )


def server_entries(scope: Scope) -> Iterable[Entry]:
    """One entry per mounted server this connection may reach: its facet (named after it),
    its tools as far as they are known (a lazy server's kept list; none before it first ran)."""
    for name in scope.servers:
        if not scope.exposure.reachable(name):
            continue
        tools = [e.name for e in scope.registry if e.tool.facet == name]
        short = [t.removeprefix(f"{name}.") for t in tools]
        if tools:
            shown = ", ".join(short[:MAX_SERVER_TOOLS])
            more = len(short) - MAX_SERVER_TOOLS
            summary = shown + (f" +{more}" if more > 0 else "")
        else:
            summary = "tools not read yet"
        yield Entry(
            kind="server",
            name=name,
            summary=summary,
            terms=(),
            detail={
                "name": name,
                "description": scope.described.get(name, ""),
                "facet": name,
                "tools": len(tools),
                "read": bool(tools),
                "listed": scope.exposure.listed(name),
                "tool_names": tools,
                "how_to_call": f"tool_search, then tool_invoke('{name}.TOOL', arguments)",
            },
        )


#: Every source of index entries, in output order.
SOURCES: tuple[Source, ...] = (
    tool_entries,
    step_type_entries,
    store_kind_entries,
    template_entries,
    prompt_entries,
    server_entries,
)
_SECTIONS: dict[EntryKind, str] = {
    "tool": "tools",
    "step_type": "step_types",
    "store_kind": "store_kinds",
    "resource_template": "resource_templates",
    "prompt": "prompts",
    "server": "servers",
}


@dataclass(frozen=True)
class Built:
    """One build of the index: the text of every variant."""

    key: tuple[object, ...]
    texts: dict[IndexVariant, str]


class CapabilityIndex:
    """The index of one app, built on first read and again only when its key changes.

    `serves` maps a kind of entry to the tools that serve every entry of it (see `Scope`)."""

    def __init__(
        self,
        registry: Registry,
        exposure: Exposure,
        serves: Mapping[EntryKind, tuple[str, ...]] | None = None,
        servers: Iterable[str] = (),
        described: Mapping[str, str] | None = None,
    ) -> None:
        self.scope = Scope(
            registry, exposure, dict(serves or {}), tuple(servers), dict(described or {})
        )
        self._built: Built | None = None
        self._lock = threading.Lock()
        self.builds = 0  # how many times it was built (tests check caching with it)

    def key(self) -> tuple[object, ...]:
        return (self.scope.registry.version, self.scope.exposure)

    def text(self, variant: IndexVariant) -> str:
        key = self.key()
        with self._lock:
            built = self._built
            if built is None or built.key != key:
                entries = collect_entries(self.scope)
                texts: dict[IndexVariant, str] = {
                    "summary": render_summary(self.scope, entries),
                    "full": render_full(self.scope, entries),
                }
                built = self._built = Built(key, texts)
                self.builds += 1
            if variant not in built.texts:
                # Token counts cost the most; measured only when stats are first asked for.
                built.texts["stats"] = render_stats(
                    self.scope, built.texts["summary"], built.texts["full"]
                )
            return built.texts[variant]


def collect_entries(scope: Scope) -> list[Entry]:
    return [entry for source in SOURCES for entry in source(scope)]


# -- summary ----------------------------------------------------------------------------------


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMES_PER_TERM])
    more = len(names) - MAX_NAMES_PER_TERM
    return f"{shown} +{more}" if more > 0 else shown


def render_summary(scope: Scope, entries: list[Entry]) -> str:
    by_term: dict[str, list[str]] = defaultdict(list)
    for e in entries:
        label = e.name if e.kind == "tool" else f"{e.kind.replace('_', ' ')} {e.name}"
        for term in e.terms:
            by_term[term].append(label)
    ranked = sorted(by_term.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    verbs = [(t, n) for t, n in ranked if t in VERBS][:MAX_TERMS]
    topics = [(t, n) for t, n in ranked if t not in VERBS][:MAX_TERMS]

    facets: dict[str, int] = defaultdict(int)
    for e in entries:
        if e.kind == "tool":
            facets[e.detail["facet"]] += 1
    facet_parts = [
        f"{name} ({count}{', listed' if scope.exposure.listed(name) else ''})"
        for name, count in list(facets.items())[:MAX_FACETS]
    ]
    if len(facets) > MAX_FACETS:
        facet_parts.append(f"+{len(facets) - MAX_FACETS} more")
    kinds = [e.name for e in entries if e.kind == "store_kind"]
    steps = [e.name for e in entries if e.kind == "step_type"]
    servers = [f"{e.name}: {e.summary}" for e in entries if e.kind == "server"]
    tools = sum(1 for e in entries if e.kind == "tool")

    lines = [
        "# prixfixe capabilities (summary)",
        f"{tools} tools; listed ones are called directly, any other with "
        "tool_search(query) -> tool_describe(name) -> tool_invoke(name, arguments).",
        "Facets (tools): " + ", ".join(facet_parts),
    ]
    if kinds:
        shown = ", ".join(kinds[:MAX_KINDS]) + (
            f" +{len(kinds) - MAX_KINDS} more" if len(kinds) > MAX_KINDS else ""
        )
        lines.append(
            f"Store kinds (store_put / store_query / store_close; fields: store_kinds): {shown}"
        )
    if steps:
        lines.append("Step types: " + _names(steps))
    if servers:
        shown = "; ".join(servers[:MAX_SERVERS]) + (
            f"; +{len(servers) - MAX_SERVERS} more" if len(servers) > MAX_SERVERS else ""
        )
        lines.append(f"Mounted MCP servers (a facet each; tools SERVER.tool): {shown}")
    lines.append(f"Everything, with schemas: {INDEX_URIS['full']}")
    if verbs:
        lines += ["", "## Verbs"] + [f"{t}: {_names(n)}" for t, n in verbs]
    if topics:
        lines += ["", "## Topics"] + [f"{t}: {_names(n)}" for t, n in topics]
    return "\n".join(lines) + "\n"


# -- full ---------------------------------------------------------------------------------


def render_full(scope: Scope, entries: list[Entry]) -> str:
    from prixfixe import __version__

    sections: dict[str, list[dict[str, Any]]] = {name: [] for name in _SECTIONS.values()}
    for e in entries:
        sections[_SECTIONS[e.kind]].append(e.detail)
    facets: dict[str, int] = defaultdict(int)
    for tool in sections["tools"]:
        facets[tool["facet"]] += 1
    document = {
        "format": f"prixfixe.capability-index.full/{FORMAT_VERSION}",
        "server": {"name": "prixfixe", "version": __version__},
        "how_to_call": (
            "Listed tools are called directly; any other tool with tool_invoke(name, "
            "arguments) after tool_search / tool_describe. Store kinds are used through "
            "served_by tools; resource templates through resources/read."
        ),
        "facets": [
            {"name": name, "tools": count, "listed": scope.exposure.listed(name)}
            for name, count in facets.items()
        ],
        **sections,
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


# -- stats --------------------------------------------------------------------------------


def measure(text: str) -> dict[str, Any]:
    """Sizes of one text: UTF-8 bytes, whitespace-separated words, lines, and tokens."""
    from prixfixe.tokens import token_counts

    return {
        "bytes": len(text.encode("utf-8")),
        "words": len(text.split()),
        "lines": len(text.splitlines()),
        "tokens": token_counts(text),
    }


def render_stats(scope: Scope, summary: str, full: str) -> str:
    sections = json.loads(full)
    counts = {name: len(sections[name]) for name in _SECTIONS.values()}
    measured: tuple[tuple[IndexVariant, str], ...] = (("summary", summary), ("full", full))
    document = {
        "format": f"prixfixe.capability-index.stats/{FORMAT_VERSION}",
        "registry_version": scope.registry.version,
        "counts": counts,
        "variants": {
            variant: {"uri": INDEX_URIS[variant], "mime_type": MIME_TYPES[variant], **measure(text)}
            for variant, text in measured
        },
    }
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"
