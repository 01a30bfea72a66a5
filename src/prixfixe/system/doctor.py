"""The doctor report: what the server says about its installation (versions, config, facets,
plugins with their authority, store, routines, leash, mounted servers, and what the default
`tools/list` costs), as data.
`prixfixe doctor` prints it or, with --json, emits it; `prixfixe plugins` prints its plugins
part with each plugin's token cost (`plugins_section(app, costs=True)`)."""

from __future__ import annotations

import platform
from collections.abc import Iterable, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from prixfixe import __version__
from prixfixe.leash.policy import root_of
from prixfixe.store import STORE_FILENAME
from prixfixe.store.integrity import check_integrity
from prixfixe.tokens import count_tokens, token_counts

if TYPE_CHECKING:
    from prixfixe.config import LoadedConfig
    from prixfixe.core.facets import Exposure
    from prixfixe.core.plugins import PluginInfo
    from prixfixe.core.registry import RegisteredTool, Registry
    from prixfixe.resources.service import ResourceService
    from prixfixe.routines.service import Routines
    from prixfixe.system.capability_index import CapabilityIndex


class DoctorSubject(Protocol):
    """The parts of an assembled app the report reads (`prixfixe.app.App` has them all)."""

    @property
    def config(self) -> LoadedConfig: ...

    @property
    def exposure(self) -> Exposure: ...

    @property
    def registry(self) -> Registry: ...

    @property
    def plugins(self) -> Sequence[PluginInfo]: ...

    @property
    def home(self) -> Path: ...

    @property
    def env(self) -> Mapping[str, str]: ...

    @property
    def routines(self) -> Routines: ...

    @property
    def capability_index(self) -> CapabilityIndex: ...

    @property
    def resources(self) -> ResourceService: ...

    def listed_tools(self) -> list[RegisteredTool]: ...

    def list_tools_json(self) -> str: ...


def _dist_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def plugin_authority(app: DoctorSubject, owner: str) -> dict[str, Any]:
    """What plugin `owner` declares it may run, reach and read, from its step types (tools
    declare no authority: whatever they run passes the same gates), and the paths and command
    lines the configured steps of its types add through their params."""
    types = [t for t in app.registry.step_types.values() if t.owner == owner]
    steps = [s for r in app.routines.routines.values() for s in r.steps if s.type.owner == owner]
    lines = {c.show(): c.program for t in types for c in t.commands}
    lines |= {c.show(): c.program for s in steps for c in s.commands}
    return {
        "step_types": [t.name for t in types],
        "programs": sorted(set(lines.values())),
        "command_lines": sorted(lines),
        "hosts": sorted({h for t in types for h in t.hosts}),
        "env": sorted({v for t in types for v in t.env}),
        "reads": sorted({str(root_of(p, s.base_dir)) for s in steps for p in s.reads}),
        "writes": sorted({str(root_of(p, s.base_dir)) for s in steps for p in s.writes}),
        # Step types whose params choose more: what a configured step adds is above.
        "params_add_commands": [t.name for t in types if t.commands_from_params is not None],
        "params_add_paths": [t.name for t in types if t.paths_from_params is not None],
    }


def _listed_tokens(tools: Iterable[RegisteredTool]) -> int:
    """Tokens of tools as `tools/list` carries them, counted as every figure of a tool
    listing is (`servers.status.listing_tokens`: the budget page's too)."""
    from prixfixe.servers.status import listing_tokens

    return listing_tokens(e.wire for e in tools)


def plugin_costs(app: DoctorSubject, owners: Iterable[str]) -> dict[str, dict[str, int]]:
    """What each plugin costs a model, in cl100k_base tokens: its tools as `tools/list`
    entries were they all listed (`tools_list`) and as listed now (`listed`), and what its
    entries add to the capability index (`index_summary`, `index_full`: the index with them
    against the index without them). The summary is capped: a plugin can change which terms
    it shows more than its length, so its share there is small, 0, or even below 0."""
    from prixfixe.system.capability_index import collect_entries, render_full, render_summary

    scope = app.capability_index.scope
    entries = collect_entries(scope)
    whole = {
        "summary": count_tokens(render_summary(scope, entries)),
        "full": count_tokens(render_full(scope, entries)),
    }
    costs: dict[str, dict[str, int]] = {}
    for owner in owners:
        tools = [e for e in app.registry if e.tool.owner == owner]
        listed = [e for e in tools if app.exposure.listed(e.tool.facet)]
        rest = [e for e in entries if e.detail.get("plugin") != owner]
        index = {"index_summary": 0, "index_full": 0}
        if len(rest) < len(entries):
            index = {
                "index_summary": whole["summary"] - count_tokens(render_summary(scope, rest)),
                "index_full": whole["full"] - count_tokens(render_full(scope, rest)),
            }
        costs[owner] = {
            "tools": len(tools),
            "tools_list": _listed_tokens(tools),
            "listed": _listed_tokens(listed),
            **index,
        }
    return costs


def plugins_section(app: DoctorSubject, *, costs: bool = False) -> list[dict[str, Any]]:
    """Every plugin found: where it comes from, its status (why it was skipped or failed),
    its declared authority and, with `costs`, its token cost. A plugin that is not loaded
    has neither (`None`): nothing of it was read."""
    loaded = [p.name for p in app.plugins if p.loaded]
    spent = plugin_costs(app, loaded) if costs else {}
    out: list[dict[str, Any]] = []
    for p in app.plugins:
        entry: dict[str, Any] = {
            "name": p.name,
            "origin": p.origin,
            "distribution": p.distribution,
            "version": p.version,
            "module": p.module,
            "status": p.status,
            "authority": plugin_authority(app, p.name) if p.loaded else None,
        }
        if costs:
            entry["tokens"] = spent.get(p.name)
        out.append(entry)
    return out


def servers_section(app: DoctorSubject, prixfixe_tokens: int) -> dict[str, Any]:
    """Each mounted server's state, tool count and what its tools would cost a model listed
    directly (cl100k), against what prixfixe's own default listing costs."""
    from prixfixe.declarations.resource import MOUNT_OWNER_PREFIX
    from prixfixe.servers.status import statuses

    found = statuses(app.config.model.servers, app.home, app.exposure.deny)
    mounted = [s for s in found if s.enabled and not s.denied]
    copies = {
        s.name: [e for e in app.registry if e.tool.owner == MOUNT_OWNER_PREFIX + s.name]
        for s in mounted
    }
    return {
        "servers": [s.as_dict() for s in found],
        "mounted": len(mounted),
        "tools": sum(s.tools or 0 for s in mounted),
        "direct_tokens": sum(s.listed_tokens or 0 for s in mounted),
        # The same tools as prixfixe registers them (`SERVER.tool`, with a title), each server
        # counted as a listing of its own, as the web page's budget rows count them.
        "mounted_tokens": sum(_listed_tokens(tools) for tools in copies.values()),
        "prixfixe_tokens": prixfixe_tokens,
        "unread": [s.name for s in mounted if s.tools is None],
    }


def _records_probe(app: DoctorSubject) -> tuple[str | None, dict[str, Any] | None]:
    """The PostgreSQL store's URL and what a read-only connection finds, when one is set."""
    from prixfixe.config import store_url

    url, password = store_url(app.config.model, app.env)
    if not url:
        return None, None
    try:
        from prixfixe.store.postgres import probe
    except ImportError:
        return url, {"reachable": False, "error": "pip install 'prixfixe[postgres]'"}
    return url, probe(url, password.reveal() if password else None)


def config_section(config: LoadedConfig) -> dict[str, Any]:
    """The file in force, where it came from and why it may load (`trusted`: the person's own,
    by `$PRIXFIXE_CONFIG` or their config folder, or a folder's they trusted), and a folder's
    file that was found but left unread."""
    ignored = config.ignored
    return {
        "file": str(config.path) if config.path else None,
        "origin": config.origin,
        "trusted": config.path is not None,
        "ignored": None
        if ignored is None
        else {"path": str(ignored.path), "reason": ignored.reason, "trust": ignored.trust_command},
        "searched": [{"path": str(p), "exists": p.is_file()} for p in config.searched],
    }


def doctor_report(
    app: DoctorSubject, *, tool_budget: int, token_budget: int = 1200
) -> dict[str, Any]:
    """The report as JSON-ready data; `tool_budget` and `token_budget` are the most tools and
    cl100k tokens a default listing may hold, reported beside the figures so a reader sees
    whether it is over."""
    listing = app.list_tools_json()
    listing_tokens = token_counts(listing)
    store_path = app.home / STORE_FILENAME
    records_url, records_probe = _records_probe(app)
    grant = app.routines.gate.grant
    from prixfixe.programs.sandbox import availability

    programs = availability()  # imports pydantic-monty if installed; starts nothing
    return {
        "versions": {
            "prixfixe": __version__,
            "python": platform.python_version(),
            "mcp": _dist_version("mcp"),
            "platform": platform.platform(terse=True),
        },
        "config": config_section(app.config),
        "facets": [
            {
                "name": name,
                "tools": len(entries),
                "listed": app.exposure.listed(name),
                "denied": name in app.exposure.deny,
            }
            for name, entries in app.registry.facets().items()
        ],
        "exposure": {
            "expose": list(app.exposure.expose),
            "expose_source": app.exposure.expose_source,
            "deny": list(app.exposure.deny),
            "deny_source": app.exposure.deny_source,
        },
        "plugins": plugins_section(app),
        # Where the store is, without opening it: doctor must not create or migrate it.
        "store": {
            "backend": "postgresql" if records_url else "sqlite",
            "path": str(store_path),
            "exists": store_path.is_file(),
            "kinds": list(app.registry.kinds),
            # With a PostgreSQL URL the records are there; the file keeps plugins' own tables.
            "postgresql": records_probe,
        },
        # A bounded quick_check that only reads the file (see prixfixe.store.integrity).
        "store_integrity": check_integrity(store_path).as_dict(),
        "routines": {
            "names": list(app.routines.routines),
            "step_types": list(app.registry.step_types),
            "exec_grant": sorted(grant.programs),
            "exec_grant_source": grant.source,
            # The zone relative dates (`friday`) and "today" are counted in, and where it came from.
            "time_zone": app.routines.clock.describe(),
            "today": app.routines.clock.today().isoformat(),
        },
        "leash": app.routines.leash.summary(),
        "tools_list": {
            "tools": len(app.listed_tools()),
            "budget": tool_budget,
            "token_budget": token_budget,
            "bytes": len(listing.encode()),
            "tokens": listing_tokens,
        },
        # From the configuration and the kept tool lists only: doctor starts no server.
        "servers": servers_section(app, listing_tokens["cl100k_base"]),
        # Whether program_run can run here, and why not (the rest works either way).
        "programs": {
            "available": programs.ok,
            "detail": programs.detail,
            "line": programs.message,
        },
        "registered_tools": len(app.registry),
        "resources": {
            # What `resources/list` shows; the others are served when read but not listed
            # (`[resources.capability_index] advertise` leaves index variants out).
            "resources": len(app.resources.listed_uris()),
            "unlisted": len(app.registry.resources) - len(app.resources.listed_uris()),
            "templates": len(app.registry.templates),
            "capability_index_summary_tokens": token_counts(app.capability_index.text("summary")),
        },
    }
