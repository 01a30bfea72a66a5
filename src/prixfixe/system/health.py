"""The server's health as one JSON document: `prixfixe://system/health`.

Store reachable (opened and its schema versions read), plugins and their status, uptime.
Anything that is wrong is reported in the document (`status: "degraded"` and the reason),
never raised: a health check that fails to answer tells nobody anything.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

import anyio.to_thread

from prixfixe.errors import PrixfixeError

if TYPE_CHECKING:
    from prixfixe.core.plugins import PluginInfo
    from prixfixe.core.registry import Registry
    from prixfixe.store.api import Store

HEALTH_URI = "prixfixe://system/health"
FORMAT = "prixfixe.system-health/1"


class Patient(Protocol):
    """What the health check reads of the running server (`ctx.app` has it all)."""

    @property
    def store(self) -> Store: ...

    @property
    def registry(self) -> Registry: ...

    @property
    def plugins(self) -> Sequence[PluginInfo]: ...

    @property
    def started_at(self) -> float: ...

    @property
    def started_monotonic(self) -> float: ...


def _store_status(app: Patient) -> dict[str, Any]:
    try:
        store = app.store
        return {
            "reachable": True,
            "location": store.location,
            "generation": store.generation(),
            "schema_versions": store.schema_versions(),
        }
    except (PrixfixeError, sqlite3.Error, OSError) as exc:
        message = exc.message if isinstance(exc, PrixfixeError) else f"{type(exc).__name__}: {exc}"
        return {"reachable": False, "error": message}


async def health(app: Patient) -> dict[str, Any]:
    from prixfixe import __version__

    store = await anyio.to_thread.run_sync(lambda: _store_status(app))
    plugins = [{"name": p.name, "origin": p.origin, "status": p.status} for p in app.plugins]
    problems = [
        f"plugin {p['name']}: {p['status']}" for p in plugins if p["status"].startswith("failed")
    ]
    if not store["reachable"]:
        problems.insert(0, f"store: {store['error']}")
    return {
        "format": FORMAT,
        "status": "degraded" if problems else "ok",
        "problems": problems,
        "version": __version__,
        "started_at": datetime.fromtimestamp(app.started_at, UTC).isoformat(timespec="seconds"),
        "uptime_s": round(time.monotonic() - app.started_monotonic, 3),
        "store": store,
        "plugins": plugins,
        "registry": {
            "version": app.registry.version,
            "tools": len(app.registry),
            "store_kinds": len(app.registry.kinds),
            "resources": len(app.registry.resources),
            "resource_templates": len(app.registry.templates),
            "prompts": len(app.registry.prompts),
        },
    }
