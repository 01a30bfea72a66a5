"""The token budget as data: what the listed tools cost a model against what every registered
tool would cost listed, per facet and per source (built-in plugin, plugin, mounted server).

Every figure is cl100k_base tokens of compact wire JSON, the serialization `tools/list`
carries and `App.list_tools_json` produces. A row's figure is its tools as a `tools/list`
of their own (`[{...},{...}]`), as `prixfixe plugins` counts a plugin
(`system.doctor.plugin_costs`), so a plugin's row says the same number there and here. The
rows of a table therefore add up to the whole listing only within a few tokens: each row pays
its own brackets, and BPE merges differ at the seams between tools.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from prixfixe.app import DEFAULT_TOKEN_BUDGET
from prixfixe.core.plugins import DEFAULT_PLUGINS
from prixfixe.core.registry import RegisteredTool, Registry
from prixfixe.declarations.resource import MOUNT_OWNER_PREFIX
from prixfixe.servers.status import listing_tokens, statuses
from prixfixe.tokens import EncodingName, count_tokens

if TYPE_CHECKING:
    from prixfixe.app import App
    from prixfixe.core.facets import Exposure

RowKind = Literal["facet", "plugin", "server", "core"]
ENCODING: EncodingName = "cl100k_base"


@dataclass(frozen=True)
class BudgetRow:
    #: The facet's name, the plugin's registered name, or the mounted server's name.
    name: str
    #: "facet"; or, for a source, "core" (a built-in plugin), "plugin" or "server".
    kind: RowKind
    #: Tools registered under it.
    tools: int
    #: Of those, the ones this configuration's `tools/list` lists.
    listed_tools: int
    #: What its listed tools cost in `tools/list`.
    listed_tokens: int
    #: What its tools would cost were every one listed.
    all_tokens: int
    #: A mounted server only: what its tools cost listed by a direct connection to it (its
    #: kept tool list, as the doctor reports it); None for other rows or an unread server.
    direct_tokens: int | None = None


@dataclass(frozen=True)
class Budget:
    #: The whole `tools/list` as a client passes it to a model (`App.list_tools_json`).
    listed_tokens: int
    #: Every registered tool listed, in the same serialization.
    all_listed_tokens: int
    #: The most tokens the default listing may cost.
    token_budget: int
    encoding: str
    facets: tuple[BudgetRow, ...]
    #: Built-in plugins ("core"), other plugins and mounted servers, in registration order.
    sources: tuple[BudgetRow, ...]

    @property
    def servers(self) -> tuple[BudgetRow, ...]:
        return tuple(r for r in self.sources if r.kind == "server")

    @property
    def direct_tokens(self) -> int:
        """The mounted servers' tools listed by direct connections to them: the doctor's
        "Listed directly ... would cost" figure."""
        return sum(r.direct_tokens or 0 for r in self.servers)

    @property
    def mounted_tokens(self) -> int:
        """The same tools as prixfixe's copies (`SERVER.tool`, with a title), were each
        server's listed: the doctor's "as prixfixe's copies" figure."""
        return sum(r.all_tokens for r in self.servers)


_cache: weakref.WeakKeyDictionary[Registry, tuple[tuple[int, Exposure], Budget]] = (
    weakref.WeakKeyDictionary()
)
_cache_lock = threading.Lock()


def token_budget(app: App) -> Budget:
    """The app's token budget, computed once per registry version and exposure (a page
    reload re-counts nothing until a plugin or mounted server changes what is registered).

    Safe to call from worker threads: counting is pure; at worst two threads count once each."""
    key = (app.registry.version, app.exposure)
    with _cache_lock:
        cached = _cache.get(app.registry)
    if cached is not None and cached[0] == key:
        return cached[1]
    budget = _compute(app)
    with _cache_lock:
        _cache[app.registry] = (key, budget)
    return budget


def _tokens(tools: Sequence[RegisteredTool]) -> int:
    """cl100k tokens of `tools` as a `tools/list` of their own; no tools cost nothing."""
    return listing_tokens(e.wire for e in tools)


def _row(
    name: str, kind: RowKind, tools: Sequence[RegisteredTool], exposure: Exposure
) -> BudgetRow:
    listed = [e for e in tools if exposure.listed(e.tool.facet)]
    return BudgetRow(
        name=name,
        kind=kind,
        tools=len(tools),
        listed_tools=len(listed),
        listed_tokens=_tokens(listed),
        all_tokens=_tokens(tools),
    )


def _by_owner(tools: Iterable[RegisteredTool]) -> dict[str, list[RegisteredTool]]:
    out: dict[str, list[RegisteredTool]] = {}
    for entry in tools:
        out.setdefault(entry.tool.owner, []).append(entry)
    return out


def _compute(app: App) -> Budget:
    exposure = app.exposure
    facets = tuple(
        _row(name, "facet", tools, exposure) for name, tools in app.registry.facets().items()
    )
    # What the doctor says a direct connection to each mounted server would cost: read from
    # the kept tool lists, as `prixfixe servers list` reads them (nothing is started).
    direct = {
        s.name: s.listed_tokens for s in statuses(app.config.model.servers, app.home, exposure.deny)
    }
    sources: list[BudgetRow] = []
    for owner, tools in _by_owner(app.registry).items():
        if owner.startswith(MOUNT_OWNER_PREFIX):
            server = owner.removeprefix(MOUNT_OWNER_PREFIX)
            row = _row(server, "server", tools, exposure)
            sources.append(replace(row, direct_tokens=direct.get(server)))
        else:
            kind: RowKind = "core" if owner in DEFAULT_PLUGINS else "plugin"
            sources.append(_row(owner, kind, tools, exposure))
    return Budget(
        listed_tokens=count_tokens(app.list_tools_json(), ENCODING),
        all_listed_tokens=_tokens(list(app.registry)),
        token_budget=DEFAULT_TOKEN_BUDGET,
        encoding=ENCODING,
        facets=facets,
        sources=tuple(sources),
    )
