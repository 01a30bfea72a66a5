"""prixfixe's contract kit for plugins: a pytest plugin.

Load it in the plugin's top-level `conftest.py`:

    pytest_plugins = ["prixfixe.testing"]

Then either inherit the whole contract (`PluginContract`: golden schemas, authority,
discoverability, token cost, one test each) or build a harness with the `prixfixe_plugin`
fixture and call its checks where you like:

    def test_the_contract(prixfixe_plugin):
        harness = prixfixe_plugin("weather", golden="golden",
                                  steps=[{"type": "weather-notes", "limit": 3}])
        harness.check_all()

The harness registers the plugin into an app of its own (a temporary home and real SQLite
store, no other third-party plugin) with a real MCP client (`harness.client()`), and watches
every process and connection (`harness.watch()`). Golden files are rewritten, not compared,
with `--prixfixe-write-golden` or `PRIXFIXE_WRITE_GOLDEN=1`. The token cost of every plugin
checked is listed at the end of the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from prixfixe.testing.checks import WRITE_GOLDEN_ENV, WRITE_GOLDEN_OPTION, ContractFailure
from prixfixe.testing.contract import PluginContract, golden_requested, resolve
from prixfixe.testing.harness import (
    CONTRACT_ROUTINE,
    COSTS,
    PluginHarness,
    TokenCost,
    make_harness,
)
from prixfixe.testing.watch import Connection, Spawn, Watch

__all__ = [
    "CONTRACT_ROUTINE",
    "WRITE_GOLDEN_ENV",
    "Connection",
    "ContractFailure",
    "HarnessFactory",
    "PluginContract",
    "PluginHarness",
    "Spawn",
    "TokenCost",
    "Watch",
    "make_harness",
    "prixfixe_plugin",
]

HarnessFactory = Callable[..., PluginHarness]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("prixfixe").addoption(
        WRITE_GOLDEN_OPTION,
        action="store_true",
        default=False,
        help="Write the plugins' golden data schemas instead of comparing with them "
        f"(or set {WRITE_GOLDEN_ENV}=1).",
    )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not COSTS:
        return
    terminalreporter.section("prixfixe plugin token cost (cl100k_base)")
    for cost in COSTS.values():
        terminalreporter.line(cost.show())


@pytest.fixture
def prixfixe_plugin(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[HarnessFactory]:
    """`prixfixe_plugin(plugin, *, golden=None, config="", steps=(), calls=(), env=None)`:
    a `PluginHarness` for `plugin` (an object with `@hookimpl` functions, or an installed
    entry point's name), closed after the test. A relative `golden` folder is relative to
    the test's file."""
    made: list[PluginHarness] = []

    def make(plugin: object, *, golden: Path | str | None = None, **options: Any) -> PluginHarness:
        options.setdefault("write_golden", golden_requested(request.config))
        harness = make_harness(
            plugin,
            tmp_path_factory.mktemp("prixfixe-plugin"),
            golden=resolve(golden, request),
            **options,
        )
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()
