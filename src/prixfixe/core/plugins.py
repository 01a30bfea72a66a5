"""The plugin manager: built-in default plugins plus third-party ones from entry points.

`PRIXFIXE_LOAD_PLUGINS` is an allowlist of third-party plugin names: unset loads every
installed plugin; set (even empty) loads only those named. Built-in plugins always load.
A third-party plugin that fails to import or to register is reported and skipped, so one
broken package cannot take the server down.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from importlib.metadata import entry_points

import pluggy

from prixfixe.core.registry import Registry
from prixfixe.declarations import hookspecs
from prixfixe.errors import PrixfixeError

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "prixfixe"
LOAD_PLUGINS_ENV = "PRIXFIXE_LOAD_PLUGINS"
#: The built-in plugins, by name. The names are identities, not paths: the store records which
#: plugin owns each kind and table by name, so a built-in keeps its name wherever its module
#: lives.
DEFAULT_PLUGINS: dict[str, str] = {
    "prixfixe.default_plugins.curation": "prixfixe.curation.builtin",
    "prixfixe.default_plugins.discovery": "prixfixe.tools.discovery",
    "prixfixe.default_plugins.inspect": "prixfixe.tools.inspect",
    "prixfixe.default_plugins.store": "prixfixe.store.tools",
    "prixfixe.default_plugins.system": "prixfixe.system.plugin",
    "prixfixe.default_plugins.activity": "prixfixe.system.activity",
    "prixfixe.default_plugins.routines": "prixfixe.routines.tools",
    "prixfixe.default_plugins.git_steps": "prixfixe.routines.builtin.git",
    "prixfixe.default_plugins.calendar_steps": "prixfixe.routines.builtin.calendar",
    "prixfixe.default_plugins.board_steps": "prixfixe.routines.builtin.board",
    "prixfixe.default_plugins.program_steps": "prixfixe.routines.builtin.program",
    "prixfixe.default_plugins.mcp_query_steps": "prixfixe.routines.builtin.mcp_query",
    "prixfixe.default_plugins.knowledge": "prixfixe.knowledge.plugin",
    "prixfixe.default_plugins.knowledge_tools": "prixfixe.knowledge.tools",
    "prixfixe.default_plugins.kb_search_steps": "prixfixe.knowledge.step",
    "prixfixe.default_plugins.programs": "prixfixe.programs.tool",
    "prixfixe.default_plugins.program_run_step": "prixfixe.programs.step",
}


@dataclass(frozen=True)
class PluginInfo:
    name: str
    origin: str  # "built-in", "embedded", or the distribution and version providing it
    status: str  # "loaded", "skipped: ...", "failed: ..."
    #: The distribution that provides it (`prixfixe` for a built-in), and that one's version.
    distribution: str | None = None
    version: str | None = None
    #: The module (or object) holding its hook implementations, as the entry point names it.
    module: str | None = None

    @property
    def loaded(self) -> bool:
        return self.status == "loaded"


def _allowlist(env: Mapping[str, str]) -> set[str] | None:
    value = env.get(LOAD_PLUGINS_ENV)
    if value is None:
        return None
    return {p.strip() for p in value.split(",") if p.strip()}


def _reason(exc: BaseException) -> str:
    """What went wrong, on one line (a status is one line in doctor's table)."""
    text = exc.message if isinstance(exc, PrixfixeError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())


def _register(pm: pluggy.PluginManager, plugin: object, name: str) -> None:
    """Register `plugin`, or leave no part of it behind: pluggy releases before 1.7 added a
    plugin's hook implementations one by one, so one with a wrong signature left the ones
    before it registered, and `collect` would call them (pytest-dev/pluggy#733)."""
    try:
        pm.register(plugin, name=name)
    except BaseException:
        if pm.get_plugin(name) is plugin:
            pm.unregister(plugin, name=name)
        raise


def build_plugin_manager(
    env: Mapping[str, str] | None = None,
    extra_plugins: Sequence[object] = (),
) -> tuple[pluggy.PluginManager, list[PluginInfo]]:
    """Register built-ins, allowed entry-point plugins and `extra_plugins` (for embedding
    and the contract kit, `prixfixe.testing`). Nothing a third-party plugin does while it is
    imported or registered stops this: it is reported in the returned infos."""
    from prixfixe import __version__

    env = os.environ if env is None else env
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    infos: list[PluginInfo] = []
    for name, module_name in DEFAULT_PLUGINS.items():
        pm.register(importlib.import_module(module_name), name=name)
        infos.append(PluginInfo(name, "built-in", "loaded", "prixfixe", __version__, module_name))

    allow = _allowlist(env)
    found: set[str] = set()
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.add(ep.name)
        dist, version = (ep.dist.name, ep.dist.version) if ep.dist else (None, None)
        info = PluginInfo(
            ep.name,
            f"{dist} {version}" if dist else ep.value,
            "loaded",
            distribution=dist,
            version=version,
            module=ep.value,
        )
        if allow is not None and ep.name not in allow:
            infos.append(replace(info, status=f"skipped: not in {LOAD_PLUGINS_ENV}"))
            continue
        if pm.has_plugin(ep.name):
            infos.append(replace(info, status="skipped: a plugin of this name is loaded"))
            continue
        try:
            _register(pm, ep.load(), ep.name)
        # SystemExit too: a plugin that calls sys.exit() while imported is a broken plugin,
        # not a request to stop the server.
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - foreign code, reported
            log.warning("plugin %s (%s) failed to load: %s", ep.name, ep.value, _reason(exc))
            infos.append(replace(info, status=f"failed: {_reason(exc)}"))
            continue
        infos.append(info)
    for name in sorted((allow or set()) - found):
        infos.append(
            PluginInfo(name, "?", f"failed: named in {LOAD_PLUGINS_ENV} but not installed")
        )

    for plugin in extra_plugins:
        name = getattr(plugin, "__name__", None) or type(plugin).__name__
        info = PluginInfo(name, "embedded", "loaded", module=name)
        try:
            _register(pm, plugin, name)
        except Exception as exc:  # noqa: BLE001 - e.g. a hook implementation's wrong signature
            log.warning("plugin %s failed to register: %s", name, _reason(exc))
            info = replace(info, status=f"failed: {_reason(exc)}")
        infos.append(info)
    return pm, infos


def collect(pm: pluggy.PluginManager, infos: list[PluginInfo]) -> Registry:
    """Call every plugin's hooks with a `register` bound to that plugin, so ownership is known.

    The hooks are those of the registry's table of declaration types, in its order.
    Registration is all-or-nothing per plugin: a plugin whose third tool (or any other
    declaration) is invalid adds nothing at all. A built-in plugin's mistake is a bug and
    raises; a third-party one is reported and skipped.
    """
    registry = Registry()
    # A hook no plugin implements and no hookspec declares has no caller; it has nothing to add.
    callers = [
        caller for name in registry.hooks if (caller := getattr(pm.hook, name, None)) is not None
    ]
    # get_hookimpls() is in registration order (built-ins first): that is the listing order.
    owners: list[str] = []
    for caller in callers:
        for impl in caller.get_hookimpls():
            if impl.plugin_name not in owners:
                owners.append(impl.plugin_name)
    for owner in owners:
        declared: dict[str, list[object]] = {}
        try:
            for caller in callers:
                sink = declared.setdefault(caller.name, [])
                for impl in caller.get_hookimpls():
                    if impl.plugin_name == owner:
                        impl.function(register=sink.append)
            registry.add_declared(owner, declared)
        except (Exception, SystemExit) as exc:
            if owner in DEFAULT_PLUGINS:
                raise
            reason = _reason(exc)
            log.warning("plugin %s failed to register: %s", owner, reason)
            infos[:] = [
                replace(i, status=f"failed: {reason}") if i.name == owner else i for i in infos
            ]
    return registry
