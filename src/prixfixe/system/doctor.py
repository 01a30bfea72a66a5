"""The doctor report: what the server says about its installation (versions, config, facets,
plugins, store, routines, leash, mounted servers, and what the default `tools/list` costs),
as data.
`prixfixe doctor` prints it or, with --json, emits it."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from prixfixe import __version__
from prixfixe.store import STORE_FILENAME
from prixfixe.store.integrity import check_integrity
from prixfixe.tokens import token_counts

if TYPE_CHECKING:
    from prixfixe.config import LoadedConfig
    from prixfixe.core.facets import Exposure
    from prixfixe.core.plugins import PluginInfo
    from prixfixe.core.registry import RegisteredTool, Registry
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
    def routines(self) -> Routines: ...

    @property
    def capability_index(self) -> CapabilityIndex: ...

    def listed_tools(self) -> list[RegisteredTool]: ...

    def list_tools_json(self) -> str: ...


def _dist_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def servers_section(app: DoctorSubject, prixfixe_tokens: int) -> dict[str, Any]:
    """Each mounted server's state, tool count and what its tools would cost a model listed
    directly (cl100k), against what prixfixe's own default listing costs."""
    from prixfixe.servers.status import statuses

    found = statuses(app.config.model.servers, app.home, app.exposure.deny)
    mounted = [s for s in found if s.enabled and not s.denied]
    return {
        "servers": [s.as_dict() for s in found],
        "mounted": len(mounted),
        "tools": sum(s.tools or 0 for s in mounted),
        "direct_tokens": sum(s.listed_tokens or 0 for s in mounted),
        "prixfixe_tokens": prixfixe_tokens,
        "unread": [s.name for s in mounted if s.tools is None],
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
    grant = app.routines.gate.grant
    return {
        "versions": {
            "prixfixe": __version__,
            "python": platform.python_version(),
            "mcp": _dist_version("mcp"),
            "platform": platform.platform(terse=True),
        },
        "config": {
            "file": str(app.config.path) if app.config.path else None,
            "searched": [{"path": str(p), "exists": p.is_file()} for p in app.config.searched],
        },
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
        "plugins": [{"name": p.name, "origin": p.origin, "status": p.status} for p in app.plugins],
        # Where the store is, without opening it: doctor must not create or migrate it.
        "store": {
            "path": str(store_path),
            "exists": store_path.is_file(),
            "kinds": list(app.registry.kinds),
        },
        # A bounded quick_check that only reads the file (see prixfixe.store.integrity).
        "store_integrity": check_integrity(store_path).as_dict(),
        "routines": {
            "names": list(app.routines.routines),
            "step_types": list(app.registry.step_types),
            "exec_grant": sorted(grant.programs),
            "exec_grant_source": grant.source,
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
        "registered_tools": len(app.registry),
        "resources": {
            "resources": len(app.registry.resources),
            "templates": len(app.registry.templates),
            "capability_index_summary_tokens": token_counts(app.capability_index.text("summary")),
        },
    }
