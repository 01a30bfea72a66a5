"""One plugin registered into a prixfixe of its own, for its tests: the app (a temporary home,
a real SQLite store, no other third-party plugin), a real MCP client connected to it in
process, what the plugin did while watched, and the contract checks.

The plugin is either an object holding `@hookimpl` functions (a module, an instance), added
as an embedded plugin, or the name of an installed entry point, loaded as the server would
load it (`PRIXFIXE_LOAD_PLUGINS=NAME`): that also tests the package's entry point.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from mcp import Client

from prixfixe.app import App
from prixfixe.errors import PrixfixeError
from prixfixe.mcp.server import build_server
from prixfixe.routines.contract import write_goldens
from prixfixe.system.doctor import plugin_authority, plugin_costs
from prixfixe.testing import checks
from prixfixe.testing.checks import ContractFailure, Declared
from prixfixe.testing.watch import Watch

if TYPE_CHECKING:
    import mcp_types as types

    from prixfixe.core.plugins import PluginInfo
    from prixfixe.core.registry import RegisteredTool
    from prixfixe.declarations.steps import StepType

T = TypeVar("T")

#: The routine the harness configures from its sample `steps`.
CONTRACT_ROUTINE = "contract"
#: How far down `tool_search`'s results a tool must be for its own description.
DEFAULT_SEARCH_TOP = 3
#: Every harness's token cost in this session, for the test run's summary.
COSTS: dict[str, TokenCost] = {}


@dataclass(frozen=True)
class TokenCost:
    """What a plugin costs a model, in cl100k_base tokens: `tools_list`, its tools'
    `tools/list` entries were they all listed; `listed`, those it lists now (its facets in
    `[mcp] expose`); `index_summary` and `index_full`, what it adds to the capability
    index's summary (capped, so often little) and full variants."""

    plugin: str
    tools: int
    tools_list: int
    listed: int
    index_summary: int
    index_full: int

    def show(self) -> str:
        return (
            f"{self.plugin}: {self.tools} tools, {self.tools_list} tokens if listed "
            f"({self.listed} listed now); capability index +{self.index_summary} (summary), "
            f"+{self.index_full} (full)"
        )


def plugin_name(plugin: object) -> str:
    """The name an embedded plugin is registered under (as `build_plugin_manager` names it)."""
    if isinstance(plugin, str):
        return plugin
    return str(getattr(plugin, "__name__", None) or type(plugin).__name__)


def _config_text(config: str, steps: Sequence[Mapping[str, Any]]) -> str:
    """`config` with the sample `steps` as the routine `contract` (a configured routine, so
    the leash grants exactly what they declare, as it would in a user's configuration)."""
    if not steps:
        return config
    import tomlkit

    doc = tomlkit.parse(config)
    if "routines" not in doc:
        doc["routines"] = tomlkit.table(is_super_table=True)
    routines: Any = doc["routines"]
    if CONTRACT_ROUTINE in routines:
        raise ValueError(
            f"the config already has [routines.{CONTRACT_ROUTINE}]; the harness builds that "
            "routine from steps=..."
        )
    table = tomlkit.table()
    table["description"] = "The plugin's sample steps (prixfixe.testing)"
    aot = tomlkit.aot()
    for step in steps:
        item = tomlkit.table()
        item.update(dict(step))
        aot.append(item)
    table["steps"] = aot
    routines[CONTRACT_ROUTINE] = table
    return tomlkit.dumps(doc)


class PluginHarness:
    """A plugin in an app of its own. Build one with `make_harness` (or the
    `prixfixe_plugin` fixture); close it when done."""

    def __init__(
        self,
        app: App,
        name: str,
        base: Path,
        *,
        golden: Path | None,
        calls: Sequence[tuple[str, Mapping[str, Any]]],
        write_golden: bool,
    ) -> None:
        self.app = app
        self.name = name
        self.base = base
        self.golden = golden
        self.calls = list(calls)
        self.write_golden = write_golden
        #: Every spawn and connection made while watched (`watch()`, runs, calls).
        self.seen = Watch()
        #: The reports of the runs made through `run_routine`, as data.
        self.reports: list[dict[str, Any]] = []
        self._ran_samples = False

    # -- what the plugin is -----------------------------------------------------------------

    @property
    def info(self) -> PluginInfo:
        return next(p for p in self.app.plugins if p.name == self.name)

    @property
    def tools(self) -> list[RegisteredTool]:
        return [e for e in self.app.registry if e.tool.owner == self.name]

    @property
    def step_types(self) -> list[StepType]:
        return [t for t in self.app.registry.step_types.values() if t.owner == self.name]

    def authority(self) -> dict[str, Any]:
        """What it declares it may run and reach, as `prixfixe plugins --json` shows it."""
        return plugin_authority(self.app, self.name)

    # -- the protocol -----------------------------------------------------------------------

    def client(self, mode: str = "legacy") -> Client:
        """A real MCP client, in process, on a server over this app (`async with`)."""
        return Client(build_server(self.app), mode=mode)

    def run(self, scenario: Callable[[Client], Awaitable[T]], *, mode: str = "legacy") -> T:
        """Run `scenario(client)` on a fresh event loop, watched; from synchronous tests (an
        async test uses `client()` and `watch()` itself)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError(
                "PluginHarness.run and the checks start an event loop of their own: call them "
                "from a synchronous test, or in an async one use `async with harness.client()` "
                "inside `with harness.watch():`"
            )

        async def main() -> T:
            async with self.client(mode) as client:
                return await scenario(client)

        with self.watch():
            return anyio.run(main)

    @contextmanager
    def watch(self) -> Iterator[Watch]:
        """Record every spawn and connection made inside the block into `seen`."""
        with self.seen:
            yield self.seen

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> types.CallToolResult:
        """Call one tool as an agent would find it, through `tool_invoke`, watched."""

        async def scenario(client: Client) -> types.CallToolResult:
            payload = {"name": tool, "arguments": dict(arguments or {})}
            return await client.call_tool("tool_invoke", payload)

        return self.run(scenario)

    def run_routine(self, routine: str = CONTRACT_ROUTINE) -> dict[str, Any]:
        """Run a configured routine through `routine_run`, watched; its report as data."""
        __tracebackhide__ = True

        async def scenario(client: Client) -> types.CallToolResult:
            return await client.call_tool("routine_run", {"name": routine, "format": "data"})

        result = self.run(scenario)
        if result.is_error or result.structured_content is None:
            text = " ".join(getattr(c, "text", "") for c in result.content)
            raise ContractFailure(self.name, f"running routine {routine!r}", [text])
        report = dict(result.structured_content)
        self.reports.append(report)
        return report

    def run_samples(self) -> None:
        """Make the sample tool calls, then run the sample steps (the `contract` routine),
        once: what the calls change, the steps can report."""
        if self._ran_samples:
            return
        self._ran_samples = True
        for tool, arguments in self.calls:
            self.call(tool, arguments)
        if CONTRACT_ROUTINE in self.app.routines.routines:
            self.run_routine(CONTRACT_ROUTINE)

    # -- the contract -----------------------------------------------------------------------

    def check_golden_schemas(self) -> None:
        """Every step type's data schema equals its golden file in the plugin's golden folder
        (with `write_golden`, the files are written instead and the check passes)."""
        __tracebackhide__ = True  # pytest shows the problems, not the kit's frames
        types_ = self.step_types
        if self.write_golden and self.golden is not None and types_:
            write_goldens(types_, self.golden)
        problems = checks.golden_problems(types_, self.golden)
        if problems:
            raise ContractFailure(self.name, "golden schemas", problems, checks.REGENERATE)

    def declared(
        self, *, allow_programs: Sequence[str] = (), allow_hosts: Sequence[str] = ()
    ) -> Declared:
        authority = self.authority()
        return Declared(
            programs=(*authority["programs"], *allow_programs),
            hosts=(*authority["hosts"], *allow_hosts),
            path=self.app.env.get("PATH"),
        )

    def check_authority(
        self,
        *,
        allow_programs: Sequence[str] = (),
        allow_hosts: Sequence[str] = (),
        run: bool = True,
    ) -> None:
        """Every process started and connection opened while watched stays within what the
        plugin declares (its step types' programs and hosts), and went through the leash's
        gates; no step was refused by the leash. With `run`, the sample steps and calls run
        first. `allow_*` adds what the test itself sets up (a fake server on loopback)."""
        __tracebackhide__ = True
        if run:
            self.run_samples()
        declared = self.declared(allow_programs=allow_programs, allow_hosts=allow_hosts)
        problems = checks.spawn_problems(self.seen.spawns, declared)
        problems += checks.connection_problems(self.seen.connections, declared)
        for report in self.reports:
            problems += checks.refusal_problems(report)
        if problems:
            raise ContractFailure(self.name, "authority", problems, declared.describe())

    def search_ranks(self, top: int = DEFAULT_SEARCH_TOP) -> dict[str, list[str]]:
        """For each of its tools, the names `tool_search` shows for the tool's description."""

        async def scenario(client: Client) -> dict[str, list[str]]:
            found: dict[str, list[str]] = {}
            for entry in self.tools:
                query = entry.tool.description.strip()[:1000]
                result = await client.call_tool("tool_search", {"query": query, "limit": top})
                text = " ".join(getattr(c, "text", "") for c in result.content)
                found[entry.name] = checks.search_names(text)
            return found

        return self.run(scenario)

    def check_discoverable(self, top: int = DEFAULT_SEARCH_TOP) -> None:
        """Each of its tools is among the first `top` results `tool_search` gives for the
        tool's own description, as a model reads them."""
        __tracebackhide__ = True
        problems = [
            f"tool {name!r} is not in tool_search's first {top} results for its own "
            f"description (got: {', '.join(names) or 'nothing'}); make its description, "
            "keywords or examples say what it does in words a user would use"
            for name, names in self.search_ranks(top).items()
            if name not in names[:top]
        ]
        if problems:
            raise ContractFailure(self.name, "discoverability", problems)

    def token_cost(self) -> TokenCost:
        """Its token cost (also kept for the test run's summary)."""
        cost = TokenCost(self.name, **plugin_costs(self.app, [self.name])[self.name])
        COSTS[self.name] = cost
        return cost

    def check_token_cost(
        self,
        *,
        tools_list: int | None = None,
        index_summary: int | None = None,
        index_full: int | None = None,
    ) -> TokenCost:
        """Its token cost, failing when it is over a budget the plugin sets."""
        __tracebackhide__ = True
        cost = self.token_cost()
        budgets = {
            "tools_list": tools_list,
            "index_summary": index_summary,
            "index_full": index_full,
        }
        problems = [
            f"{key} costs {getattr(cost, key)} tokens, over its budget of {limit}"
            for key, limit in budgets.items()
            if limit is not None and getattr(cost, key) > limit
        ]
        if problems:
            raise ContractFailure(self.name, "token cost", problems, cost.show())
        return cost

    def check_all(
        self,
        *,
        top: int = DEFAULT_SEARCH_TOP,
        allow_programs: Sequence[str] = (),
        allow_hosts: Sequence[str] = (),
        tools_list: int | None = None,
        index_summary: int | None = None,
        index_full: int | None = None,
    ) -> TokenCost:
        """Every check, in one call; the token cost is returned."""
        self.check_golden_schemas()
        self.check_authority(allow_programs=allow_programs, allow_hosts=allow_hosts)
        self.check_discoverable(top)
        return self.check_token_cost(
            tools_list=tools_list, index_summary=index_summary, index_full=index_full
        )

    def close(self) -> None:
        self.app.close_store()


def make_harness(
    plugin: object,
    base: Path,
    *,
    golden: Path | str | None = None,
    config: str = "",
    steps: Sequence[Mapping[str, Any]] = (),
    calls: Sequence[tuple[str, Mapping[str, Any]]] = (),
    env: Mapping[str, str] | None = None,
    write_golden: bool | None = None,
) -> PluginHarness:
    """A harness for `plugin` (an object with `@hookimpl` functions, or an installed entry
    point's name) in folder `base`: its config file (`config`, plus `steps` as the routine
    `contract`), its home and store. No other third-party plugin loads; `env` adds to the
    process environment (less its `PRIXFIXE_*` variables). A plugin that fails to load or
    register raises `ContractFailure` with the reason doctor would show."""
    base.mkdir(parents=True, exist_ok=True)
    name = plugin_name(plugin)
    config_path = base / "prixfixe.toml"
    config_path.write_text(_config_text(config, steps), encoding="utf-8")
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("PRIXFIXE_")}
    run_env |= {
        "PRIXFIXE_HOME": str(base / "home"),
        "PRIXFIXE_CONFIG": str(config_path),
        "PRIXFIXE_LOAD_PLUGINS": name if isinstance(plugin, str) else "",
        **(env or {}),
    }
    extra = () if isinstance(plugin, str) else (plugin,)
    try:
        app = App.build(env=run_env, cwd=base, extra_plugins=extra)
    except PrixfixeError as exc:
        raise ContractFailure(name, "loading", [exc.message]) from None
    info = next(p for p in app.plugins if p.name == name)
    if not info.loaded:
        hint = (
            "is its package installed (pip install -e .) with the entry point in group 'prixfixe'?"
            if isinstance(plugin, str)
            else ""
        )
        raise ContractFailure(name, "loading", [info.status], hint)
    if write_golden is None:
        write_golden = checks.write_golden_requested()
    return PluginHarness(
        app,
        name,
        base,
        golden=Path(golden) if golden is not None else None,
        calls=calls,
        write_golden=write_golden,
    )
